"""Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone, RBDA Table 5.1), in body coordinates.

Gravity enters as a fictitious acceleration of the fixed base, ``a_0 = -g`` (RBDA Sec. 5.3). The forward pass
propagates velocities ``v`` and accelerations ``a``; the backward pass accumulates the joint wrenches ``f``, each
the wrench exerted on a body by its parent across its joint, in the body (joint) frame about the joint origin.
"""
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from ..model.data import packaged, results, workspace
from .inputs import all_finite, body_wrenches, gravity_vector, not_finite, states
from ..model.joints import REVOLUTE_UNIT, X_up, X_up_about_axis
from ..model.robot import S_times_add, S_transpose_times_add, model_view_inline
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, force_to_parent_add,
                      inertia_times, motion_to_child, set_at_rest)


@helper
def body_motion(m, i, q, qd, qdd, R, p, v, a, vJ):
    """Pose ``X_i``, velocity and acceleration of body ``i`` from its parent's (RBDA eq. 5.7-5.8), with ``vJ`` the
    joint's velocity:
        vJ = S_i qd_i,   v_i = X_i v_λ + vJ,   a_i = X_i a_λ + S_i qdd_i + v_i x vJ
    """
    λ = m.parent[i]
    X_up(m, i, q, R[i], p[i])
    vJ[:] = 0.0
    S_times_add(m, i, qd, 1.0, vJ)
    motion_to_child(R[i], p[i], v[λ], v[i])
    add_scaled(v[i], 1.0, vJ)
    motion_to_child(R[i], p[i], a[λ], a[i])
    S_times_add(m, i, qdd, 1.0, a[i])
    cross_motion_add(v[i], vJ, 1.0, a[i])


@helper
def revolute_motion(m, i, k, q, qd, qdd, R, p, v, a):
    """:func:`body_motion` for a revolute joint about ``σ e_k`` (``σ = ±1``; ``k`` a constant where inlined):
    ``S qd = [0; σ qd e_k]`` and ``v x S qd = σ qd [v x e_k; w x e_k]``, where ``u x e_k`` is ``u_k2`` in entry ``k1``
    and ``-u_k1`` in entry ``k2``."""
    k1, k2 = (k + 1) % 3, (k + 2) % 3
    λ = m.parent[i]
    c = m.col_start[i]
    σ = m.axis[i, k] * m.col_mult[c]
    qd_i = σ * qd[m.col_v[c]]
    X_up_about_axis(m, i, k, q, R[i], p[i])
    motion_to_child(R[i], p[i], v[λ], v[i])
    v[i, 3 + k] += qd_i
    motion_to_child(R[i], p[i], a[λ], a[i])
    a[i, 3 + k] += σ * qdd[m.col_v[c]]
    a[i, k1] += qd_i * v[i, k2]
    a[i, k2] -= qd_i * v[i, k1]
    a[i, 3 + k1] += qd_i * v[i, 3 + k2]
    a[i, 3 + k2] -= qd_i * v[i, 3 + k1]


@arithmetic_kernel
def drive_torques_add(m, qd, qdd, tau):
    """Rotor inertia and friction of each drive: ``armature qdd + damping qd + friction sign(qd)`` (zero on the
    base's and mimic columns)."""
    for c in range(m.col_start[m.nb]):
        k = m.col_v[c]
        tau[k] += m.armature[c] * qdd[k] + m.damping[c] * qd[k] + m.friction[c] * np.sign(qd[k])


RneaWorkspace = namedtuple("RneaWorkspace", "R p v a Iv vJ f")


@helper
def rnea_views(block):
    """The arrays of RNEA as views of one ``(nb + 1, 6, 6)`` block (one allocation): per body, the pose ``X_up`` as
    ``R`` (rows 0-2, columns 0:3) and ``p`` (row 0, columns 3:6), and ``v``, ``a``, ``f`` (rows 3, 4, 5), whose
    last row is the fixed base's (``v = a = 0`` there); ``I v`` and the joint velocity ``vJ`` in the base's rows 0
    and 1."""
    nb = block.shape[0] - 1
    w = RneaWorkspace(block[:nb, 0:3, 0:3], block[:nb, 0, 3:6], block[:, 3], block[:, 4], block[nb, 0], block[nb, 1],
                      block[:, 5])
    set_at_rest(w.v[nb], w.a[nb])
    return w


@helper
def rnea_shape(nb):
    """The shape of an RNEA workspace (:func:`rnea_views`)."""
    return (nb + 1, 6, 6)


@arithmetic_kernel
def newton_euler(m, w, q, qd, qdd, gravity, f_ext, tau, f):
    """RNEA (RBDA Table 5.1) for one state; writes the rigid-body torques ``tau`` (nv) and ``f`` (nb + 1, 6).
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
        k = m.jtype[i] - REVOLUTE_UNIT  # most joints turn about ±x, ±y or ±z: a copy of the equations for each axis
        if k == 0:
            revolute_motion(m, i, 0, q, qd, qdd, R, p, v, a)
        elif k == 1:
            revolute_motion(m, i, 1, q, qd, qdd, R, p, v, a)
        elif k == 2:
            revolute_motion(m, i, 2, q, qd, qdd, R, p, v, a)
        else:
            body_motion(m, i, q, qd, qdd, R, p, v, a, w.vJ)
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], v[i], w.Iv)
        cross_force_add(v[i], w.Iv, f[i])
        if f_ext.shape[0] > 0:  # external wrenches given
            add_scaled(f[i], -1.0, f_ext[i])
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        S_transpose_times_add(m, i, f[i], tau)
        force_to_parent_add(R[i], p[i], f[i], f[m.parent[i]])


@arithmetic_kernel
def joint_loads(m, f, wrench, base):
    """The joint wrenches of the named joints, ``(nj, 6)``, and the base's share ``f[-1]``."""
    for j in range(m.nj):
        for c in range(6):
            wrench[j, c] = f[m.joint_body[j], c]
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
def rnea(fdata, idata, block, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """:func:`rnea_state`; False if an input or a torque is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(rnea_shape(idata[0]))
    rnea_state(fdata, idata, block, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base)
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
        block = np.empty(rnea_shape(idata[0]))
        rnea_rows(fdata, idata, block, chunk_rows(chunk, q.shape[0]), q, qd, qdd, gravity, f_ext,
                  drives, tau, wrench, base)
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(tau)


class InverseDynamicsResult(NamedTuple):
    """``torques`` ``(…, nv)``: the joint torques (N·m) or forces (N) that produce the motion; with a floating base
    the first 6 are the wrench ``[f; tau]`` the world would have to exert on the base, in the base frame.

    ``joint_wrenches`` ``(…, len(joint_names), 6)``: per movable joint, ``[f; tau]`` exerted on its child link by its
    parent link, child-link frame, about the joint origin. ``base_wrench`` ``(…, 6)``: the wrench the fixed base
    (root link and the links fixed to it; the world, for a floating base) exerts on the moving bodies, in the
    world (root) frame.
    """
    torques: np.ndarray
    joint_wrenches: np.ndarray
    base_wrench: np.ndarray


def inverse_dynamics(robot, q, qd, qdd, *, gravity=None, external_wrenches=None, data=None):
    """Joint torques and joint reaction wrenches for positions ``q``, velocities ``qd``, accelerations ``qdd``.

    ``gravity``: 3-vector in the world (root-link) frame, default ``(0, 0, -9.81)``. ``external_wrenches``:
    ``{link: [fx, fy, fz, tx, ty, tz]}`` applied on the link by the environment, link frame, about its origin.
    One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``. ``data``: a
    ``robot.data()`` to compute in (the result's arrays are then views of it).
    """
    q, qd, qdd = states(robot, finite=False, q=q, qd=qd, qdd=qdd)
    tau, wrench, base = results(robot, data, "inverse_dynamics", q, (robot.nv,), (len(robot.joint_names), 6), (6,))
    if not newton_euler_call(robot, data, q, qd, qdd, gravity, external_wrenches, True, tau, wrench, base):
        raise not_finite(robot, "the torques", q=q, qd=qd, qdd=qdd)
    return packaged(data, "inverse_dynamics", InverseDynamicsResult, tau, wrench, base)


def newton_euler_call(robot, data, q, qd, qdd, gravity, external_wrenches, drives, tau, wrench, base):
    """Run the RNEA kernel for one state or a batch of checked arrays; False if a value is not finite."""
    g = gravity_vector(gravity)
    f_ext = body_wrenches(robot, external_wrenches, len(q) if q.ndim == 2 else 1, data)
    if q.ndim == 2:
        return rnea_batch(robot.fdata, robot.idata, q, qd, qdd, g, np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]),
                          drives, tau, wrench, base)
    return rnea(robot.fdata, robot.idata, workspace(robot, data, "rnea", rnea_shape, robot.nb), q, qd, qdd, g, f_ext[0],
                drives, tau, wrench, base)
