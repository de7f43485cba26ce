"""Joint models (RBDA Sec. 4.4, Table 4.1): for each joint type its number of coordinates, its motion subspace and
its transform, ``jcalc`` with the constant tree transform folded in.

A joint has ``nq`` position coordinates and ``nv`` velocity coordinates (``q[idx_q : idx_q + nq]`` and
``v[idx_v : idx_v + nv]``, Pinocchio's ``idx_q / idx_v``). Velocities are the child frame's twist seen in the child
frame, so every ``S`` here is a constant ``6 x nv`` matrix: its columns are the model's *motion columns* (one per
velocity coordinate, and one per mimic joint). The algorithms never look at a joint's type: they call
:func:`X_up` for its pose and read its columns through ``S_times_add`` / ``S_transpose_times_add``
(:mod:`rne_dynamics.model.robot`).

=============  ======  ==  ======================================  ==================================
type           nq      nv  q                                       v (child frame)
=============  ======  ==  ======================================  ==================================
revolute       1       1   angle about ``axis``                    ``[0; axis] qd``
prismatic      1       1   offset along ``axis``                   ``[axis; 0] qd``
floating       7       6   ``x y z qx qy qz qw`` (scalar last)     ``[v; w]`` (free-flyer, as Pinocchio)
planar         3       3   ``x y theta`` in the plane normal to    ``[vx e1 + vy e2; w n]``
                           ``axis`` (``x e1 + y e2``)
spherical      4       3   unit quaternion ``qx qy qz qw``          ``[0; w]``
=============  ======  ==  ======================================  ==================================

A mimic joint is a revolute or prismatic joint with no coordinate of its own: it turns by
``q_mult q[idx_q] + q_offset`` of its source's coordinate and its motion column points at the source's velocity.
"""
import math

import numpy as np

from .._jit import helper
from .spatial import quaternion_rotation

REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2
PLANAR = 3
SPHERICAL = 4
#: A revolute joint about ``±e_k`` of its frame (most URDF joints) has code ``REVOLUTE_UNIT + k``: RNEA keeps a copy
#: of its equations for each axis.
REVOLUTE_UNIT = 5

#: Position and velocity coordinates per joint code.
NQ = (1, 1, 7, 3, 4, 1, 1, 1)
NV = (1, 1, 6, 3, 3, 1, 1, 1)

#: URDF joint type -> joint code; ``fixed`` joints merge bodies and never reach the algorithms. ``spherical`` is not a
#: URDF type: it comes from Python and loop descriptions (and is accepted in URDF text as an extension).
TYPE_CODES = {"revolute": REVOLUTE, "continuous": REVOLUTE, "prismatic": PRISMATIC, "floating": FREE_FLYER,
              "planar": PLANAR, "spherical": SPHERICAL}
#: Joint codes whose coordinates include a unit quaternion, and where it starts in the joint's ``q``.
QUATERNION_START = {FREE_FLYER: 3, SPHERICAL: 0}


@helper
def is_revolute(code):
    """A revolute joint, about any axis or a unit one."""
    return code == REVOLUTE or code >= REVOLUTE_UNIT


def joint_code(kind, axis):
    """The code of a URDF joint type; a revolute joint about a unit axis ``±e_k`` gets ``REVOLUTE_UNIT + k``."""
    code = TYPE_CODES[kind]
    if code == REVOLUTE and np.count_nonzero(axis) == 1:
        return REVOLUTE_UNIT + int(np.flatnonzero(axis)[0])
    return code


def plane_basis(normal):
    """Two unit vectors ``e1, e2`` with ``(e1, e2, normal)`` right-handed: the planar joint's ``x`` and ``y``
    directions (``e_x, e_y`` for the normal ``e_z``)."""
    helper_axis = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e2 = np.cross(normal, helper_axis)
    e2 /= np.linalg.norm(e2)
    return np.cross(e2, normal), e2


def motion_subspace(code, axis):
    """``S`` as ``(nv, 6)`` rows, ``[linear; angular]`` each (RBDA Table 4.1, in the child frame)."""
    S = np.zeros((NV[code], 6))
    if is_revolute(code):
        S[0, 3:] = axis
    elif code == PRISMATIC:
        S[0, :3] = axis
    elif code == FREE_FLYER:
        S[:] = np.eye(6)
    elif code == PLANAR:
        S[0, :3], S[1, :3] = plane_basis(axis)
        S[2, 3:] = axis
    else:  # SPHERICAL
        S[:, 3:] = np.eye(3)
    return S


def rotation_terms(code, axis, R_tree):
    """``(R_sin, R_versine)`` with ``R_tree R_J(theta) = R_tree + sin(theta) R_sin + (1 - cos(theta)) R_versine``
    for a joint turning about ``axis`` (revolute, planar; Rodrigues: ``R_J = 1 + sin [u]x + (1 - cos) [u]x^2``);
    zero for the others."""
    if not (is_revolute(code) or code == PLANAR):
        return np.zeros((3, 3)), np.zeros((3, 3))
    ux = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
    return R_tree @ ux, R_tree @ ux @ ux


@helper
def X_up_about_axis(m, i, k, q, R, p):
    """:func:`X_up` of a revolute body ``i`` whose axis is ``±e_k`` (``k`` a constant where inlined): ``R_J`` turns
    the plane of the two other axes ``k1, k2`` by ``q_i`` (by ``-q_i`` about ``-e_k``), so ``R = R_tree R_J`` mixes
    two columns of ``R_tree`` and keeps the third."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    q_i = m.q_mult[i] * q[m.idx_q[i]] + m.q_offset[i]
    s = m.axis[i, k] * math.sin(q_i)
    c = math.cos(q_i)
    for r in range(3):
        p[r] = m.p_tree[i, r]
        R[r, k] = m.R_tree[i, r, k]
        R[r, k1] = c * m.R_tree[i, r, k1] + s * m.R_tree[i, r, k2]
        R[r, k2] = c * m.R_tree[i, r, k2] - s * m.R_tree[i, r, k1]


@helper
def turn_about_axis(m, i, angle, R):
    """``R = R_tree R_J(angle)`` for a rotation about body ``i``'s axis, by the precomputed Rodrigues terms."""
    s = math.sin(angle)
    versine = 1.0 - math.cos(angle)
    for r in range(3):
        for c in range(3):
            R[r, c] = m.R_tree[i, r, c] + s * m.R_sin[i, r, c] + versine * m.R_versine[i, r, c]


@helper
def X_up(m, i, q, R, p):
    """Pose ``(R, p)`` of body ``i`` in its parent body at configuration ``q``: ``X_up = X_J(q_i) X_T`` (RBDA
    eq. 4.4), ``q_i = q[idx_q : idx_q + nq]`` (a mimic joint: ``q_mult q[idx_q] + q_offset``).

    ``X_T`` (``R_tree, p_tree``) is the joint frame at the zero configuration: the URDF ``<origin>``, fixed joints
    folded in. ``R = R_tree R_J`` and ``p = p_tree + R_tree p_J``.
    """
    code = m.jtype[i]
    k = m.idx_q[i]
    if is_revolute(code):
        turn_about_axis(m, i, m.q_mult[i] * q[k] + m.q_offset[i], R)
        for r in range(3):
            p[r] = m.p_tree[i, r]
        return
    if code == PRISMATIC:
        d = m.q_mult[i] * q[k] + m.q_offset[i]
        p_J = (d * m.axis[i, 0], d * m.axis[i, 1], d * m.axis[i, 2])
        for r in range(3):
            for c in range(3):
                R[r, c] = m.R_tree[i, r, c]
    elif code == PLANAR:
        turn_about_axis(m, i, q[k + 2], R)
        e1, e2 = m.S[m.col_start[i]], m.S[m.col_start[i] + 1]
        p_J = (q[k] * e1[0] + q[k + 1] * e2[0], q[k] * e1[1] + q[k + 1] * e2[1], q[k] * e1[2] + q[k + 1] * e2[2])
    else:  # FREE_FLYER, SPHERICAL: a unit quaternion, scalar last
        qs = k + 3 if code == FREE_FLYER else k
        p_J = (q[k], q[k + 1], q[k + 2]) if code == FREE_FLYER else (0.0, 0.0, 0.0)
        R_J = quaternion_rotation(q[qs], q[qs + 1], q[qs + 2], q[qs + 3])
        for r in range(3):
            for c in range(3):
                R[r, c] = (m.R_tree[i, r, 0] * R_J[0][c] + m.R_tree[i, r, 1] * R_J[1][c]
                           + m.R_tree[i, r, 2] * R_J[2][c])
    for r in range(3):
        p[r] = m.p_tree[i, r] + m.R_tree[i, r, 0] * p_J[0] + m.R_tree[i, r, 1] * p_J[1] + m.R_tree[i, r, 2] * p_J[2]



@helper
def unit_quaternions(m, q, tolerance):
    """Every quaternion of configuration ``q`` (free-flyer and spherical joints) has a norm within ``tolerance``
    of 1."""
    for i in range(m.nb):
        code = m.jtype[i]
        if code == FREE_FLYER or code == SPHERICAL:
            s = m.idx_q[i] + (3 if code == FREE_FLYER else 0)
            norm = math.sqrt(q[s] * q[s] + q[s + 1] * q[s + 1] + q[s + 2] * q[s + 2] + q[s + 3] * q[s + 3])
            if not abs(norm - 1.0) <= tolerance:
                return False
    return True
