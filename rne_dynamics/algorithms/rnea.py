"""Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone, RBDA Table 5.1), in body coordinates.

Gravity enters as a fictitious acceleration of the fixed base, ``a_0 = -g`` (RBDA Sec. 5.3). The forward pass
propagates velocities ``v`` and accelerations ``a``; the backward pass accumulates the joint wrenches ``f``, each
the wrench exerted on a body by its parent across its joint, in the body (joint) frame about the joint origin.
"""
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .inputs import all_finite, body_wrenches, gravity_vector, not_finite, states
from ..model.joints import X_up, X_up_about_axis, joint_coordinate, revolute_axis
from ..model.robot import model_view_inline
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, dot6, force_to_parent_add,
                      inertia_times, motion_to_child, set_at_rest)


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


@helper
def revolute_motion(m, i, k, q, qd, qdd, R, p, v, a):
    """:func:`body_motion` for a revolute joint about ``σ e_k`` (``σ = ±1``; ``k`` a constant where inlined):
    ``S qd = [0; σ qd e_k]`` and ``v x S qd = σ qd [v x e_k; w x e_k]``, where ``u x e_k`` is ``u_k2`` in entry ``k1``
    and ``-u_k1`` in entry ``k2``."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    λ = m.parent[i]
    σ = m.S[i, 3 + k]
    qd_i = σ * joint_coordinate(m, i, qd)
    X_up_about_axis(m, i, k, q, R[i], p[i])
    motion_to_child(R[i], p[i], v[λ], v[i])
    v[i, 3 + k] += qd_i
    motion_to_child(R[i], p[i], a[λ], a[i])
    a[i, 3 + k] += σ * joint_coordinate(m, i, qdd)
    a[i, k1] += qd_i * v[i, k2]
    a[i, k2] -= qd_i * v[i, k1]
    a[i, 3 + k1] += qd_i * v[i, 3 + k2]
    a[i, 3 + k2] -= qd_i * v[i, 3 + k1]


@arithmetic_kernel
def drive_torques_add(m, qd, qdd, tau):
    """Rotor inertia and friction of each drive: ``armature qdd + damping qd + friction sign(qd)``."""
    for k in range(m.dof):
        tau[k] += m.armature[k] * qdd[k] + m.damping[k] * qd[k] + m.friction[k] * np.sign(qd[k])


RneaWorkspace = namedtuple("RneaWorkspace", "R p v a Iv f")


@helper
def rnea_views(block):
    """The arrays of RNEA as views of one ``(nb + 1, 6, 6)`` block (one allocation): per body, the pose ``X_up`` as
    ``R`` (rows 0-2, columns 0:3) and ``p`` (row 0, columns 3:6), and ``v``, ``a``, ``f`` (rows 3, 4, 5), whose
    last row is the fixed base's (``v = a = 0`` there); ``I v`` in the base's row 0."""
    nb = block.shape[0] - 1
    w = RneaWorkspace(block[:nb, 0:3, 0:3], block[:nb, 0, 3:6], block[:, 3], block[:, 4], block[nb, 0], block[:, 5])
    set_at_rest(w.v[nb], w.a[nb])
    return w


@helper
def rnea_block(nb):
    """The memory of an RNEA workspace (:func:`rnea_views`)."""
    return np.empty((nb + 1, 6, 6))


@arithmetic_kernel
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
    base_acceleration(gravity, a[-1])
    f[-1] = 0.0
    for i in range(m.nb):
        k = revolute_axis(m, i)  # most joints turn about ±x, ±y or ±z: a copy of the equations for each axis
        if k == 0:
            revolute_motion(m, i, 0, q, qd, qdd, R, p, v, a)
        elif k == 1:
            revolute_motion(m, i, 1, q, qd, qdd, R, p, v, a)
        elif k == 2:
            revolute_motion(m, i, 2, q, qd, qdd, R, p, v, a)
        else:
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


@arithmetic_kernel
def joint_loads(m, f, wrench, base):
    """The joint wrenches of the coordinates' own joints, ``(dof, 6)``, and the base's share ``f[-1]``."""
    for k in range(m.dof):
        for c in range(6):
            wrench[k, c] = f[m.dof_body[k], c]
    for c in range(6):
        base[c] = f[-1, c]


@arithmetic_kernel
def rnea_state(fdata, idata, block, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`newton_euler` for one state in the workspace ``block``, plus the drive torques if ``drives``, and the
    joint loads."""
    m = model_view_inline(fdata, idata)
    w = rnea_views(block)
    newton_euler(m, w, q, qd, qdd, gravity, f_ext, tau, w.f)
    if drives:
        drive_torques_add(m, qd, qdd, tau)
    joint_loads(m, w.f, wrench, base)


@kernel
def rnea(fdata, idata, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`rnea_state` with its own workspace; False if an input or a torque is not finite."""
    rnea_state(fdata, idata, rnea_block(idata[0]), q, qd, qdd, gravity, f_ext, drives, tau, wrench, base)
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(tau)


@arithmetic_kernel
def rnea_rows(fdata, idata, block, rows, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`rnea_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    m = model_view_inline(fdata, idata)
    w = rnea_views(block)
    for n in rows:
        newton_euler(m, w, q[n], qd[n], qdd[n], gravity, f_ext[n], tau[n], w.f)
        if drives:
            drive_torques_add(m, qd[n], qdd[n], tau[n])
        joint_loads(m, w.f, wrench[n], base[n])


@batch_kernel
def rnea_batch(fdata, idata, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`newton_euler` for each row of a batch (``f_ext`` has one row of body wrenches per state); chunks of
    states run in parallel, each with one workspace. Returns what :func:`rnea` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        rnea_rows(fdata, idata, rnea_block(idata[0]), chunk_rows(chunk, q.shape[0]), q, qd, qdd, gravity, f_ext,
                  drives, tau, wrench, base)
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
