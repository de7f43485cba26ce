"""The model packed flat for the kernels: two buffers, ``fdata`` (floats) and ``idata`` (integers), written by
:func:`pack` and read through :func:`model_view`'s named views. numba dispatches two arrays far faster than a
dozen; the kernels read the model only through these views.
"""
from collections import namedtuple

import numpy as np

from .._jit import helper, kernel
from . import drive
from .joints import rotation_terms

#: Fields of the model seen by the kernels; per body unless noted.
ModelView = namedtuple("ModelView", [
    "nb",         # number of bodies (movable joints, mimic included)
    "nv",         # number of velocity coordinates (the length of v, qd, qdd, tau)
    "nq",         # number of position coordinates (the length of q)
    "nj",         # number of named joints with a joint wrench (robot.joint_names)
    "ncol",       # number of motion columns (nv, plus one per mimic joint)
    "parent",     # parent body index, -1 for the fixed base (the world)
    "jtype",      # joint code (joints.REVOLUTE, ...)
    "idx_q",      # first position coordinate of the body's joint (a mimic: its source's)
    "col_start",  # (nb + 1,): body i's motion columns are col_start[i] : col_start[i + 1]
    "col_v",      # per column: its velocity coordinate
    "joint_body",  # per named joint: its body
    "axis",       # joint axis or plane normal, unit, (nb, 3)
    "R_tree",     # joint frame at q = 0 in the parent body frame, (nb, 3, 3) and (nb, 3)
    "p_tree",
    "mass",       # body mass
    "h",          # first moment of mass, mass * com, body frame, (nb, 3)
    "I",          # rotational inertia about the body frame origin, (nb, 3, 3)
    "q_mult",     # mimic joints: q_body = q_mult * q[idx_q] + q_offset (1 and 0 for the others)
    "q_offset",
    "R_sin",      # joints turning about axis: R_tree R_J(q) = R_tree + sin(q) R_sin + (1 - cos(q)) R_versine
    "R_versine",
    "S",          # per column: the motion subspace column, (ncol, 6)
    "col_mult",   # per column: q_mult of its body (the column moves with col_mult * v[col_v])
    "armature",   # per column: rotor inertia reflected to the joint (0 on mimic columns)
    "damping",    # per column: viscous friction coefficient
    "friction",   # per column: Coulomb friction
    "friction_offset",   # per column: constant friction torque
    "coulomb_velocity",  # per column: velocity scale of the smooth Coulomb law (0: sign)
    "nl",         # number of links (robot.link_names)
    "link_body",  # per link: its body (-1: the fixed base)
    "link_R",     # per link: its pose in its body, (nl, 3, 3) and (nl, 3)
    "link_p",
    "nm",         # number of coupled motors (a motor with rotor inertia or friction turning several joints)
    "motor_start",  # (nm + 1,): coupled motor k's entries are motor_start[k] : motor_start[k + 1]
    "motor_v",    # per entry: a velocity coordinate the motor turns
    "motor_gear",  # per entry: its reduction, the entry of the joint-to-motor matrix G (motor velocity G qd)
    "rotor_inertia",  # per coupled motor, motor side: rotor inertia, viscous and Coulomb friction, and the
    "motor_damping",  # velocity scale of its smooth Coulomb law (0: sign)
    "motor_friction",
    "motor_coulomb_velocity",
])


#: A body's block in ``fdata`` (row: columns 0:3 | 3:6): 0: axis | p_tree; 1: h | mass, q_mult, q_offset;
#: 2-4: R_tree | I; 5-7: R_sin | R_versine. Motion column ``c`` is block ``nb + c``: row 0: S; row 1: col_mult,
#: armature, damping, friction, friction_offset, coulomb_velocity. Link ``l`` is block ``nb + ncol + l``: rows
#: 0-2: R, row 3: p (columns 0:3). Coupled motor ``k`` is block ``nb + ncol + nl + k``: row 0: rotor_inertia,
#: motor_damping, motor_friction, motor_coulomb_velocity; its entry ``e`` is block ``nb + ncol + nl + nm + e``: row 0,
#: column 0: motor_gear.
BLOCK = (8, 6)


@kernel
def model_view(fdata, idata):
    """Named views into the model buffers: ``fdata`` ``(nb + ncol, 8, 6)`` and ``idata``. Slices only (a reshape
    costs as much as the arithmetic of a small robot's gravity pass)."""
    return model_view_inline(fdata, idata)


@helper
def model_view_inline(fdata, idata):
    """:func:`model_view` inlined into its caller: in a kernel compiled without reference counting
    (``_jit.arithmetic_kernel``) its views then cost nothing."""
    nb, nv, nq, nj, ncol, nl, nm, ne = idata[0], idata[1], idata[2], idata[3], idata[4], idata[5], idata[6], idata[7]
    o = 8
    parent = idata[o:o + nb]
    jtype = idata[o + nb:o + 2 * nb]
    idx_q = idata[o + 2 * nb:o + 3 * nb]
    col_start = idata[o + 3 * nb:o + 4 * nb + 1]
    o += 4 * nb + 1
    col_v = idata[o:o + ncol]
    joint_body = idata[o + ncol:o + ncol + nj]
    link_body = idata[o + ncol + nj:o + ncol + nj + nl]
    o += ncol + nj + nl
    motor_start = idata[o:o + nm + 1]
    motor_v = idata[o + nm + 1:o + nm + 1 + ne]
    b = fdata[:nb]
    c = fdata[nb:nb + ncol]
    links = fdata[nb + ncol:nb + ncol + nl]
    motors = fdata[nb + ncol + nl:nb + ncol + nl + nm]
    entries = fdata[nb + ncol + nl + nm:]
    return ModelView(nb, nv, nq, nj, ncol, parent, jtype, idx_q, col_start, col_v, joint_body, b[:, 0, 0:3],
                     b[:, 2:5, 0:3], b[:, 0, 3:6], b[:, 1, 3], b[:, 1, 0:3], b[:, 2:5, 3:6], b[:, 1, 4], b[:, 1, 5],
                     b[:, 5:8, 0:3], b[:, 5:8, 3:6], c[:, 0], c[:, 1, 0], c[:, 1, 1], c[:, 1, 2], c[:, 1, 3],
                     c[:, 1, 4], c[:, 1, 5], nl,
                     link_body, links[:, 0:3, 0:3], links[:, 3, 0:3], nm, motor_start, motor_v, entries[:, 0, 0],
                     motors[:, 0, 0], motors[:, 0, 1], motors[:, 0, 2], motors[:, 0, 3])


def pack(bodies, joint_bodies, links, drive_terms, motors=()):
    """The ``(fdata, idata)`` buffers from a list of :class:`Body`, in the layout :func:`model_view` reads.
    ``links``: ``(body, R, p)`` per link; ``drive_terms`` ``(nv, 5)``: per velocity coordinate the values of
    :data:`drive.RIGID <rne_dynamics.model.drive.RIGID>`; ``motors``: the
    :class:`~rne_dynamics.model.drive.CoupledMotor` s (their terms zero for a model without drives)."""
    nb = len(bodies)
    col_start = np.cumsum([0] + [len(b.S) for b in bodies])
    col_v = [b.idx_v + k for b in bodies for k in range(len(b.S))]
    nv = max([b.idx_v + b.nv for b in bodies if not b.mimic], default=0)
    nq = max([b.idx_q + b.nq for b in bodies if not b.mimic], default=0)
    motor_start = np.cumsum([0] + [len(motor.gears) for motor in motors])
    idata = np.concatenate([[nb, nv, nq, len(joint_bodies), len(col_v), len(links), len(motors), motor_start[-1]],
                            [b.parent for b in bodies], [b.code for b in bodies], [b.idx_q for b in bodies],
                            col_start, col_v, joint_bodies, [body for body, _, _ in links], motor_start,
                            [k for motor in motors for k in motor.coordinates]]).astype(np.int64)
    first_motor = nb + len(col_v) + len(links)
    fdata = np.zeros((first_motor + len(motors) + motor_start[-1],) + BLOCK)
    for k, motor in enumerate(motors):
        fdata[first_motor + k, 0, 0:4] = [getattr(motor, term) for term in drive.MOTOR_TERMS]
    fdata[first_motor + len(motors):, 0, 0] = [n for motor in motors for n in motor.gears]
    for k, (_, R, p) in enumerate(links):
        fdata[nb + len(col_v) + k, 0:3, 0:3] = R
        fdata[nb + len(col_v) + k, 3, 0:3] = p
    for i, b in enumerate(bodies):
        R_sin, R_versine = rotation_terms(b.code, b.axis, b.R_tree)
        fdata[i, 0] = np.concatenate([b.axis, b.p_tree])
        fdata[i, 1] = np.concatenate([b.h, [b.mass, b.q_mult, b.q_offset]])
        fdata[i, 2:5] = np.hstack([b.R_tree, b.I])
        fdata[i, 5:8] = np.hstack([R_sin, R_versine])
        for k, column in enumerate(b.S):
            block = fdata[nb + col_start[i] + k]
            block[0] = column
            block[1, 0] = b.q_mult
            if not b.mimic:
                block[1, 1:6] = drive_terms[b.idx_v + k]
    return fdata, idata
