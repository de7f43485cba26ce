"""Joint models: ``jcalc`` of RBDA Sec. 4.4 for each joint type, with the constant tree transform folded in.

Every joint type has a code, a number of coordinates (one for the types supported now) and a motion subspace ``S``.
A new type (planar, floating) adds a code here, a branch in :func:`X_up` and its ``S``; the algorithms only call
these.
"""
import math

import numpy as np

from .._jit import helper

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


def rotation_terms(code, axis, R_tree):
    """``(R_sin, R_versine)`` with ``R_tree R_J(q) = R_tree + sin(q) R_sin + (1 - cos(q)) R_versine`` (Rodrigues:
    ``R_J = 1 + sin q [u]x + (1 - cos q) [u]x^2``); zero for a prismatic joint."""
    if code != REVOLUTE:
        return np.zeros((3, 3)), np.zeros((3, 3))
    ux = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return R_tree @ ux, R_tree @ ux @ ux


@helper
def joint_coordinate(m, i, x):
    """Body ``i``'s joint velocity or acceleration from the independent ones, ``q_mult x[q_index]`` (a mimic joint
    follows its source); its position adds ``q_offset``."""
    return m.q_mult[i] * x[m.q_index[i]]


@helper
def revolute_axis(m, i):
    """``k`` when body ``i`` turns about ``±e_k`` of its frame (``S = [0; ±e_k]``, most URDF joints), else -1."""
    if m.jtype[i] != REVOLUTE:
        return -1
    x, y, z = m.S[i, 3], m.S[i, 4], m.S[i, 5]
    if y == 0.0 and z == 0.0:
        return 0
    if x == 0.0 and z == 0.0:
        return 1
    if x == 0.0 and y == 0.0:
        return 2
    return -1


@helper
def X_up_about_axis(m, i, k, q, R, p):
    """:func:`X_up` of a revolute body ``i`` whose axis is ``±e_k`` (``k`` a constant where inlined): ``R_J`` turns
    the plane of the two other axes ``k1, k2`` by ``q_i`` (by ``-q_i`` about ``-e_k``), so ``R = R_tree R_J`` mixes
    two columns of ``R_tree`` and keeps the third."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    q_i = joint_coordinate(m, i, q) + m.q_offset[i]
    s = m.S[i, 3 + k] * math.sin(q_i)
    c = math.cos(q_i)
    for r in range(3):
        p[r] = m.p_tree[i, r]
        R[r, k] = m.R_tree[i, r, k]
        R[r, k1] = c * m.R_tree[i, r, k1] + s * m.R_tree[i, r, k2]
        R[r, k2] = c * m.R_tree[i, r, k2] - s * m.R_tree[i, r, k1]


@helper
def X_up(m, i, q, R, p):
    """Pose ``(R, p)`` of body ``i`` in its parent body at coordinates ``q``: ``X_up = X_J(q_i) X_T`` (RBDA
    eq. 4.4), with ``q_i = q_mult q[q_index] + q_offset`` (a mimic joint follows its source).

    ``X_T`` (``R_tree, p_tree``) is the joint frame at ``q_i = 0``: the URDF ``<origin>``, fixed joints folded in.
    """
    q_i = joint_coordinate(m, i, q) + m.q_offset[i]
    if m.jtype[i] == REVOLUTE:
        s = math.sin(q_i)
        versine = 1.0 - math.cos(q_i)
        for r in range(3):
            p[r] = m.p_tree[i, r]
            for c in range(3):
                R[r, c] = m.R_tree[i, r, c] + s * m.R_sin[i, r, c] + versine * m.R_versine[i, r, c]
    else:
        for r in range(3):
            p[r] = m.p_tree[i, r] + q_i * (m.R_tree[i, r, 0] * m.axis[i, 0] + m.R_tree[i, r, 1] * m.axis[i, 1]
                                           + m.R_tree[i, r, 2] * m.axis[i, 2])
            for c in range(3):
                R[r, c] = m.R_tree[i, r, c]
