"""Joint models: ``jcalc`` of RBDA Sec. 4.4 for each joint type, with the constant tree transform folded in.

Every joint type has a code, a number of coordinates (one for the types supported now) and a motion subspace ``S``.
A new type (planar, floating) adds a code here, a branch in :func:`X_up` and its ``S``; the algorithms only call
these.
"""
import numpy as np

from ._jit import kernel
from .spatial import rotation_about_axis

REVOLUTE = 0
PRISMATIC = 1

#: URDF joint type -> joint code; ``fixed`` joints merge bodies and never reach the algorithms.
TYPE_CODES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC}
#: URDF types that are valid URDF but not modelled yet, with the reason given to the user.
UNSUPPORTED_TYPES = ("planar", "floating")


def motion_subspace(code, axis):
    """``S`` in ``[linear; angular]`` order (RBDA Table 4.1): a rotation about, or a translation along, ``axis``."""
    S = np.zeros(6)
    if code == REVOLUTE:
        S[3:] = axis
    else:
        S[:3] = axis
    return S


@kernel
def X_up(code, axis, R_tree, p_tree, q, R, p):
    """Pose ``(R, p)`` of a body in its parent body at joint coordinate ``q``: ``X_up = X_J(q) X_T`` (RBDA eq. 4.4).

    ``R_tree, p_tree`` is the joint frame at ``q = 0`` (the URDF ``<origin>``, fixed joints folded in).
    """
    if code == REVOLUTE:
        J = rotation_about_axis(axis, q)
        for r in range(3):
            p[r] = p_tree[r]
            for c in range(3):
                R[r, c] = R_tree[r, 0] * J[0][c] + R_tree[r, 1] * J[1][c] + R_tree[r, 2] * J[2][c]
    else:
        for r in range(3):
            p[r] = p_tree[r] + q * (R_tree[r, 0] * axis[0] + R_tree[r, 1] * axis[1] + R_tree[r, 2] * axis[2])
            for c in range(3):
                R[r, c] = R_tree[r, c]
