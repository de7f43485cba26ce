"""Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone, RBDA Table 5.1), in body coordinates.

Gravity enters as a fictitious acceleration of the fixed base, ``a_0 = -g`` (RBDA Sec. 5.3). The forward pass
propagates velocities ``v`` and accelerations ``a``; the backward pass accumulates the joint wrenches ``f``, each
the wrench exerted on a body by its parent across its joint, in the body (joint) frame about the joint origin.
"""
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from ._jit import batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .inputs import all_finite, body_wrenches, gravity_vector, not_finite, states
from .joints import X_up, joint_coordinate
from .model import model_view
from .spatial import (add_scaled, cross_force_add, cross_motion_add, dot6, force_to_parent_add, inertia_times,
                      motion_to_child)


@helper
def body_motion(m, i, q, qd, qdd, R, p, v, a):
    """Pose ``X_i``, velocity and acceleration of body ``i`` from its parent's (RBDA eq. 5.7-5.8):
        v_i = X_i v_λ + S_i qd_i,   a_i = X_i a_λ + S_i qdd_i + v_i x S_i qd_i
    """
    λ = m.parent[i]
    qd_i = joint_coordinate(m, i, qd)
    X_up(m, i, q, R[i], p[i])
    motion_to_child(R[i], p[i], v[λ], v[i])
    add_scaled(v[i], qd_i, m.S[i])
    motion_to_child(R[i], p[i], a[λ], a[i])
    add_scaled(a[i], joint_coordinate(m, i, qdd), m.S[i])
    cross_motion_add(v[i], m.S[i], qd_i, a[i])


@kernel
def drive_torques_add(m, qd, qdd, tau):
    """Rotor inertia and friction of each drive: ``armature qdd + damping qd + friction sign(qd)``."""
    for k in range(m.dof):
        tau[k] += m.armature[k] * qdd[k] + m.damping[k] * qd[k] + m.friction[k] * np.sign(qd[k])


RneaWorkspace = namedtuple("RneaWorkspace", "R p v a Iv")


@kernel
def rnea_workspace(nb):
    """Per-call arrays of RNEA: body poses ``X_up`` as ``(R, p)``, ``v`` and ``a`` with a base row, ``I v``."""
    return RneaWorkspace(np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)),
                         np.empty(6))


@kernel
def newton_euler(m, w, q, qd, qdd, gravity, f_ext, tau, f):
    """RNEA (RBDA Table 5.1) for one state; writes the rigid-body torques ``tau`` (dof) and ``f`` (nb + 1, 6).
    Callers that model the drives add :func:`drive_torques_add`.

    Row ``-1`` of ``v``, ``a`` and ``f`` is the fixed base, so a parent index of -1 needs no special case:
        v_i = X_i v_λ + S_i qd_i
        a_i = X_i a_λ + S_i qdd_i + v_i x S_i qd_i          (a_base = -g: gravity as a base acceleration)
        f_i = I_i a_i + v_i x* I_i v_i - f_ext_i
        tau_i = S_i^T f_i,   f_λ += X_i^T f_i
    """
    R, p, v, a = w.R, w.p, w.v, w.a
    a[-1, 0:3] = -gravity
    f[-1] = 0.0
    for i in range(m.nb):
        body_motion(m, i, q, qd, qdd, R, p, v, a)
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], v[i], w.Iv)
        cross_force_add(v[i], w.Iv, f[i])
        if f_ext.shape[0] > 0:  # external wrenches given
            add_scaled(f[i], -1.0, f_ext[i])
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        tau[m.q_index[i]] += m.q_mult[i] * dot6(m.S[i], f[i])  # a mimic's load reaches its source by virtual work
        force_to_parent_add(R[i], p[i], f[i], f[m.parent[i]])


@kernel
def joint_loads(m, f, wrench, base):
    """The joint wrenches of the coordinates' own joints, ``(dof, 6)``, and the base's share ``f[-1]``."""
    for k in range(m.dof):
        wrench[k] = f[m.dof_body[k]]
    base[:] = f[-1]


@kernel
def rnea(fdata, idata, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`newton_euler` for one state, with its own workspace, plus the drive torques if ``drives``; False if an
    input or a torque is not finite."""
    m = model_view(fdata, idata)
    f = np.empty((m.nb + 1, 6))
    newton_euler(m, rnea_workspace(m.nb), q, qd, qdd, gravity, f_ext, tau, f)
    if drives:
        drive_torques_add(m, qd, qdd, tau)
    joint_loads(m, f, wrench, base)
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(tau)


@batch_kernel
def rnea_batch(fdata, idata, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`newton_euler` for each row of a batch (``f_ext`` has one row of body wrenches per state); chunks of
    states run in parallel, each with one workspace. Returns what :func:`rnea` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # per chunk: numba's parallel loops cannot take a named tuple from outside
        w = rnea_workspace(m.nb)
        f = np.empty((m.nb + 1, 6))
        for n in chunk_rows(chunk, q.shape[0]):
            newton_euler(m, w, q[n], qd[n], qdd[n], gravity, f_ext[n], tau[n], f)
            if drives:
                drive_torques_add(m, qd[n], qdd[n], tau[n])
            joint_loads(m, f, wrench[n], base[n])
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(tau)


class InverseDynamicsResult(NamedTuple):
    """``torques`` ``(…, dof)``: the joint torques (N·m) or forces (N) that produce the motion.

    ``joint_wrenches`` ``(…, dof, 6)``: per movable joint, ``[f; tau]`` exerted on its child link by its parent link,
    child-link frame, about the joint origin. ``base_wrench`` ``(…, 6)``: the wrench the fixed base (root link and the
    links fixed to it) exerts on the moving bodies, in the root frame.
    """
    torques: np.ndarray
    joint_wrenches: np.ndarray
    base_wrench: np.ndarray


def inverse_dynamics(robot, q, qd, qdd, *, gravity=None, external_wrenches=None):
    """Joint torques and joint reaction wrenches for positions ``q``, velocities ``qd``, accelerations ``qdd``.

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. ``external_wrenches``:
    ``{link: [fx, fy, fz, tx, ty, tz]}`` applied on the link by the environment, link frame, about its origin.
    One state ``(dof,)`` or a batch ``(N, dof)``.
    """
    q, qd, qdd = states(robot, finite=False, q=q, qd=qd, qdd=qdd)
    g = gravity_vector(gravity)
    f_ext = body_wrenches(robot, external_wrenches, len(q) if q.ndim == 2 else 1)
    tau, wrench, base = np.empty(q.shape), np.empty(q.shape + (6,)), np.empty(q.shape[:-1] + (6,))
    if q.ndim == 2:
        finite = rnea_batch(robot.fdata, robot.idata, q, qd, qdd, g,
                            np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]), True, tau, wrench, base)
    else:
        finite = rnea(robot.fdata, robot.idata, q, qd, qdd, g, f_ext[0], True, tau, wrench, base)
    if not finite:
        raise not_finite(robot, "the torques", q=q, qd=qd, qdd=qdd)
    return InverseDynamicsResult(tau, wrench, base)
