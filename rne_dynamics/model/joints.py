"""The joint model, the one place that knows joint types (RBDA Sec. 4.4, Table 4.1; spatial_v2's ``jcalc``,
Pinocchio's joint models): for each type its coordinates, its motion subspace ``S``, its transform ``X_J(q)`` with
the constant tree transform folded in (:func:`X_up`), the products with ``S`` and the group its configuration lives
in. Algorithms, readers and writers ask this module; none of them tests a joint code.

A joint has ``nq`` position coordinates and ``nv`` velocity coordinates (``q[idx_q : idx_q + nq]`` and
``v[idx_v : idx_v + nv]``, Pinocchio's ``idx_q / idx_v``). Velocities are the child frame's twist seen in the child
frame, so every ``S`` here is a constant ``6 x nv`` matrix: its columns are the model's *motion columns* (one per
velocity coordinate, and one per mimic joint), read through :func:`S_times_add` / :func:`S_transpose_times_add`.

=============  ======  ==  ======================================  ==================================  =============
type           nq      nv  q                                       v (child frame)                     group
=============  ======  ==  ======================================  ==================================  =============
revolute       1       1   angle about ``axis``                    ``[0; axis] qd``                    real line
prismatic      1       1   offset along ``axis``                   ``[axis; 0] qd``                    real line
screw          1       1   angle about ``axis``; the child also    ``[h axis; axis] qd``,              real line
                           moves ``h q`` along it                  ``h = pitch / (2 pi)``
floating       7       6   ``x y z qx qy qz qw`` (scalar last)     ``[v; w]`` (free-flyer, as Pinocchio) SE(3)
planar         3       3   ``x y theta`` in the plane normal to    ``[vx e1 + vy e2; w n]``            SE(2)
                           ``axis`` (``x e1 + y e2``)
spherical      4       3   unit quaternion ``qx qy qz qw``          ``[0; w]``                          SO(3)
=============  ======  ==  ======================================  ==================================  =============

A revolute joint about ``±e_x``, ``±e_y`` or ``±e_z`` of its frame (most URDF joints) has a code of its own
(:data:`REVOLUTE_X` ...); every algorithm treats it as :data:`REVOLUTE` (:func:`is_revolute`).
A mimic joint is a one-coordinate joint with no coordinate of its own: it moves by ``q_mult q[idx_q] + q_offset`` of
its source's coordinate and its motion column points at the source's velocity.

Every per-code function has one branch per code and an explicit answer for a code it does not know: the Python
side raises :class:`~rne_dynamics.errors.ModelError` (so no model with such a code is ever built), a kernel writes
NaN (the driver then reports a non-finite result) rather than treating it as some other joint. The pose functions
branch on the model's constants only (codes, axes), never on the value of ``q``.
"""
import math
from typing import NamedTuple

import numpy as np

from .._jit import helper, is_unit
from ..errors import ModelError
from .spatial import add_scaled, dot6, quaternion_rotation

# Joint codes: ``m.jtype`` of the kernels' model. Each is one branch of every per-code function below.
REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2
PLANAR = 3
SPHERICAL = 4
REVOLUTE_X = 5  # revolute about ±e_x of its frame
REVOLUTE_Y = 6
REVOLUTE_Z = 7
SCREW = 8

# The group a joint's configuration lives in (Pinocchio's ``LieGroup`` of each joint model): how
# :mod:`~rne_dynamics.model.configuration` integrates it and :mod:`~rne_dynamics.algorithms.configuration` takes
# differences in it.
REAL_LINE = 0  # one coordinate: q + v dt
SE3 = 1        # position and unit quaternion
SO3 = 2        # unit quaternion
SE2 = 3        # x, y, theta
NO_GROUP = -1  # an unknown code

#: The URDF type of the free-flyer (a ``floating`` joint, or the one ``floating_base=True`` adds).
FLOATING = "floating"
#: The URDF type that merges two links into one body; it never reaches the kernels.
FIXED = "fixed"


class JointType(NamedTuple):
    """What the model builders, readers and writers know of a joint type (the kernels branch on the code)."""
    code: int              # the joint code; -1 for ``fixed``
    nq: int
    nv: int
    group: int             # REAL_LINE, SE3, SO3 or SE2
    axis: str = ""         # what URDF's <axis> gives ("" : the type takes no axis)
    bounded: bool = False  # <limit lower upper> bounds its coordinate
    linear: bool = False   # its one coordinate is a length (m; its effort a force, N), not an angle (rad; N m)
    q_names: tuple = ()    # names of its entries of q when it has several
    v_names: tuple = ()
    angles: tuple = ()     # which entries of its q are angles (the others: lengths, or a quaternion's)
    quaternion: int = -1   # where its unit quaternion starts in its q; -1: none
    pitched: bool = False  # it has a pitch (a screw: travel per revolution along its axis)


_REVOLUTE = JointType(REVOLUTE, 1, 1, REAL_LINE, "the joint axis", True, angles=(0,))
#: Every URDF joint type (``spherical`` is not a URDF type: it comes from Python and loop descriptions and is accepted
#: in URDF text as an extension; ``screw`` is Drake's extension, its pitch given by ``<drake:screw_thread_pitch>``).
TYPES = {
    "revolute": _REVOLUTE,
    "continuous": _REVOLUTE._replace(bounded=False),
    "prismatic": JointType(PRISMATIC, 1, 1, REAL_LINE, "the joint axis", True, linear=True),
    "screw": JointType(SCREW, 1, 1, REAL_LINE, "the screw axis", True, angles=(0,), pitched=True),
    FLOATING: JointType(FREE_FLYER, 7, 6, SE3, q_names=("x", "y", "z", "qx", "qy", "qz", "qw"),
                        v_names=("vx", "vy", "vz", "wx", "wy", "wz"), quaternion=3),
    "planar": JointType(PLANAR, 3, 3, SE2, "the plane's normal", q_names=("x", "y", "theta"),
                        v_names=("vx", "vy", "wz"), angles=(2,)),
    "spherical": JointType(SPHERICAL, 4, 3, SO3, q_names=("qx", "qy", "qz", "qw"), v_names=("wx", "wy", "wz"),
                           quaternion=0),
    FIXED: JointType(-1, 0, 0, NO_GROUP),
}
#: Per code, the facts of its type that do not depend on the URDF name (revolute and continuous share a code).
_BY_CODE = {t.code: t for t in TYPES.values() if t.code >= 0}
_BY_CODE.update({code: _REVOLUTE for code in (REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)})


def joint_type(kind):
    """The :class:`JointType` of a URDF type name; :class:`ModelError` for a name no joint type has."""
    try:
        return TYPES[kind]
    except (KeyError, TypeError):
        raise ModelError(f"unknown joint type {kind!r} (known: {', '.join(TYPES)})") from None


def type_of_code(code):
    """The :class:`JointType` of a joint code; :class:`ModelError` for a code no joint type has."""
    try:
        return _BY_CODE[int(code)]
    except KeyError:
        raise ModelError(f"unknown joint code {code}") from None


def is_fixed(kind):
    """A URDF ``fixed`` joint: its links are one rigid body."""
    return joint_type(kind) is TYPES[FIXED]


def is_floating(kind):
    """A URDF type that is the free-flyer (only a root link's child may have one)."""
    return joint_type(kind).code == FREE_FLYER


def one_coordinate(kind):
    """A type with one coordinate of position and velocity: it may be a mimic joint or a mimic's source."""
    t = joint_type(kind)
    return t.nq == 1 and t.nv == 1


def position_unit(kind):
    """Unit of a one-coordinate joint's position: ``m`` for a length, ``rad`` for an angle."""
    return "m" if joint_type(kind).linear else "rad"


def effort_unit(kind):
    """Unit of a one-coordinate joint's effort: ``N`` along a length, ``N m`` about an angle (a screw's ``S^T f``
    counts its force times the lead, so it is a torque)."""
    return "N" if joint_type(kind).linear else "N m"


def joint_code(kind, axis):
    """The code of a URDF joint type; a revolute joint about a unit axis ``±e_k`` gets its axis' code."""
    code = joint_type(kind).code
    if code < 0:
        raise ModelError(f"a {kind} joint has no joint code: its links are one body")
    if code == REVOLUTE and np.count_nonzero(axis) == 1:
        return (REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z)[int(np.flatnonzero(axis)[0])]
    return code


def plane_basis(normal):
    """Two unit vectors ``e1, e2`` with ``(e1, e2, normal)`` right-handed: the planar joint's ``x`` and ``y``
    directions (``e_x, e_y`` for the normal ``e_z``)."""
    helper_axis = np.array([1.0, 0.0, 0.0]) if abs(normal[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e2 = np.cross(normal, helper_axis)
    e2 /= np.linalg.norm(e2)
    return np.cross(e2, normal), e2


def motion_subspace(code, axis, pitch=0.0):
    """``S`` as ``(nv, 6)`` rows, ``[linear; angular]`` each (RBDA Table 4.1, in the child frame); ``pitch``: a
    screw's travel per revolution (m), its column ``[pitch / (2 pi) axis; axis]`` (Pinocchio's helical joint with
    pitch ``pitch / (2 pi)``)."""
    S = np.zeros((type_of_code(code).nv, 6))
    if code in (REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z):
        S[0, 3:] = axis
    elif code == PRISMATIC:
        S[0, :3] = axis
    elif code == SCREW:
        S[0, :3] = pitch / (2.0 * math.pi) * np.asarray(axis, float)
        S[0, 3:] = axis
    elif code == FREE_FLYER:
        S[:] = np.eye(6)
    elif code == PLANAR:
        S[0, :3], S[1, :3] = plane_basis(axis)
        S[2, 3:] = axis
    elif code == SPHERICAL:
        S[:, 3:] = np.eye(3)
    return S


def rotation_terms(code, axis, R_tree):
    """``(R_sin, R_versine)`` with ``R_tree R_J(theta) = R_tree + sin(theta) R_sin + (1 - cos(theta)) R_versine``
    for a joint turning about ``axis`` (revolute, screw, planar; Rodrigues: ``R_J = 1 + sin [u]x + (1 - cos)
    [u]x^2``); zero for the others."""
    type_of_code(code)  # an unknown code raises
    if code in (REVOLUTE, REVOLUTE_X, REVOLUTE_Y, REVOLUTE_Z, SCREW, PLANAR):
        ux = np.array([[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]])
        return R_tree @ ux, R_tree @ ux @ ux
    return np.zeros((3, 3)), np.zeros((3, 3))


# ------------------------------------------------------------------------------------------------ in the kernels

@helper
def is_revolute(code):
    """A revolute joint, about any axis or a unit one."""
    return code == REVOLUTE or code == REVOLUTE_X or code == REVOLUTE_Y or code == REVOLUTE_Z


@helper
def configuration_group(code):
    """The group of a joint's configuration: :data:`REAL_LINE`, :data:`SE3`, :data:`SO3`, :data:`SE2`, or
    :data:`NO_GROUP` for an unknown code (as :attr:`JointType.group`)."""
    if is_revolute(code) or code == PRISMATIC or code == SCREW:
        return REAL_LINE
    if code == FREE_FLYER:
        return SE3
    if code == SPHERICAL:
        return SO3
    if code == PLANAR:
        return SE2
    return NO_GROUP


@helper
def has_stops(code):
    """A one-coordinate joint: its position limits are hard stops (the others have no limits)."""
    return configuration_group(code) == REAL_LINE


@helper
def quaternion_start(code):
    """Where the unit quaternion starts in a joint's ``q`` (as :attr:`JointType.quaternion`); -1: none."""
    if code == FREE_FLYER:
        return 3
    if code == SPHERICAL:
        return 0
    return -1


@helper
def joint_position(m, i, q):
    """The one coordinate of body ``i``'s joint: ``q[idx_q]``, or ``q_mult q[idx_q] + q_offset`` for a mimic."""
    return m.q_mult[i] * q[m.idx_q[i]] + m.q_offset[i]


@helper
def turn_about_axis(m, i, angle, R):
    """``R = R_tree R_J(angle)`` for a rotation about body ``i``'s axis, by the precomputed Rodrigues terms."""
    s = math.sin(angle)
    versine = 1.0 - math.cos(angle)
    for r in range(3):
        for c in range(3):
            R[r, c] = m.R_tree[i, r, c] + s * m.R_sin[i, r, c] + versine * m.R_versine[i, r, c]


@helper
def offset_origin(m, i, x, y, z, p):
    """``p = p_tree + R_tree p_J`` for the joint's displacement ``p_J = (x, y, z)`` in its frame."""
    for r in range(3):
        p[r] = m.p_tree[i, r] + m.R_tree[i, r, 0] * x + m.R_tree[i, r, 1] * y + m.R_tree[i, r, 2] * z


@helper
def X_up(m, i, q, R, p):
    """Pose ``(R, p)`` of body ``i`` in its parent body at configuration ``q``: ``X_up = X_J(q_i) X_T`` (RBDA
    eq. 4.4), ``q_i = q[idx_q : idx_q + nq]`` (a mimic joint: ``q_mult q[idx_q] + q_offset``).

    ``X_T`` (``R_tree, p_tree``) is the joint frame at the zero configuration: the URDF ``<origin>``, fixed joints
    folded in. ``R = R_tree R_J`` and ``p = p_tree + R_tree p_J``. A one-coordinate joint moves along its screw
    ``S = [h u; u]`` (revolute ``h = 0``) or ``[u; 0]`` (prismatic): ``R_J`` turns by ``q_i`` about ``u`` and
    ``p_J = q_i S_linear``. An unknown code gives NaN.
    """
    code = m.jtype[i]
    k = m.idx_q[i]
    if is_revolute(code):
        turn_about_axis(m, i, joint_position(m, i, q), R)
        offset_origin(m, i, 0.0, 0.0, 0.0, p)
    elif code == PRISMATIC or code == SCREW:
        d = joint_position(m, i, q)
        if code == SCREW:
            turn_about_axis(m, i, d, R)
        else:
            for r in range(3):
                for c in range(3):
                    R[r, c] = m.R_tree[i, r, c]
        S = m.S[m.col_start[i]]
        offset_origin(m, i, d * S[0], d * S[1], d * S[2], p)
    elif code == PLANAR:
        turn_about_axis(m, i, q[k + 2], R)
        e1, e2 = m.S[m.col_start[i]], m.S[m.col_start[i] + 1]
        offset_origin(m, i, q[k] * e1[0] + q[k + 1] * e2[0], q[k] * e1[1] + q[k + 1] * e2[1],
                      q[k] * e1[2] + q[k + 1] * e2[2], p)
    elif code == FREE_FLYER or code == SPHERICAL:  # a unit quaternion, scalar last
        s = k + quaternion_start(code)
        R_J = quaternion_rotation(q[s], q[s + 1], q[s + 2], q[s + 3])
        for r in range(3):
            for c in range(3):
                R[r, c] = (m.R_tree[i, r, 0] * R_J[0][c] + m.R_tree[i, r, 1] * R_J[1][c]
                           + m.R_tree[i, r, 2] * R_J[2][c])
        if code == FREE_FLYER:
            offset_origin(m, i, q[k], q[k + 1], q[k + 2], p)
        else:
            offset_origin(m, i, 0.0, 0.0, 0.0, p)
    else:  # no joint type has this code: no pose
        for r in range(3):
            p[r] = math.nan
            for c in range(3):
                R[r, c] = math.nan


@helper
def S_times_add(m, i, x, scale, out):
    """``out += scale S_i x_i``: body ``i``'s joint motion for the velocity-space vector ``x`` (``qd``, ``qdd``),
    ``x_i`` its joint's entries (a mimic column reads its source's, times ``q_mult``)."""
    for c in range(m.col_start[i], m.col_start[i + 1]):
        add_scaled(out, scale * m.col_mult[c] * x[m.col_v[c]], m.S[c])


@helper
def S_transpose_times_add(m, i, f, tau):
    """``tau_i += S_i^T f``: the generalised forces of body ``i``'s joint for the wrench ``f`` across it (a mimic's
    reach its source by virtual work, ``q_mult S^T f``)."""
    for c in range(m.col_start[i], m.col_start[i + 1]):
        tau[m.col_v[c]] += m.col_mult[c] * dot6(m.S[c], f)


@helper
def unit_quaternions(m, q, tolerance):
    """Every quaternion of configuration ``q`` (free-flyer and spherical joints) has a norm within ``tolerance``
    of 1."""
    for i in range(m.nb):
        start = quaternion_start(m.jtype[i])
        if start >= 0:
            s = m.idx_q[i] + start
            if not is_unit(q[s], q[s + 1], q[s + 2], q[s + 3], tolerance):
                return False
    return True
