"""The torque rate ``d tau / dt`` from ``(q, qd, qdd, qddd)``: Newton-Euler extended by one time derivative.

The idea is Guarino Lo Bianco's (link jerks and force derivatives propagated alongside the RNEA quantities); the
equations are derived here from RBDA Table 5.1. ``X_i`` turns at the joint rate: ``dX_i/dt = -qd_i S_i x X_i``, and
``d(X_i^T f)/dt = X_i^T (qd_i S_i x* f + df/dt)``. ``a_i`` carries gravity as a base acceleration (``a_0 = -g``),
so the true body acceleration ``vd_i = dv_i/dt`` is propagated apart (``vd_0 = 0``); ``ad_i = da_i/dt`` (the jerk,
gravity being constant, ``ad_0 = 0``). With ``X_i v_λ x S_i = v_i x S_i``:

    v_i  = X_i v_λ + S_i qd_i
    vd_i = X_i vd_λ + v_i x S_i qd_i + S_i qdd_i
    a_i  = X_i a_λ + S_i qdd_i + v_i x S_i qd_i
    ad_i = X_i ad_λ + (X_i a_λ) x S_i qd_i + S_i qddd_i + vd_i x S_i qd_i + v_i x S_i qdd_i
    f_i  = I_i a_i + v_i x* I_i v_i
    fd_i = I_i ad_i + vd_i x* I_i v_i + v_i x* I_i vd_i
    backwards:  taud_i = S_i^T fd_i,   fd_λ += X_i^T (fd_i + qd_i S_i x* f_i),   f_λ += X_i^T f_i

A mimic body moves at ``q_mult`` times its source's rates and its load reaches the source scaled by ``q_mult``, as
in :func:`~rne_dynamics.rnea.rnea`. Drives add ``armature qddd + damping qdd``; Coulomb friction ``sign(qd)`` is
constant wherever ``qd != 0`` and adds nothing.
"""
from collections import namedtuple

import numpy as np

from .._jit import batch_kernel, batch_range, chunk_count, chunk_rows, kernel
from .inputs import gravity_vector, states
from ..model.joints import X_up, joint_coordinate
from ..model.robot import model_view
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, dot6, force_to_parent_add,
                      inertia_times, motion_to_child)

RateWorkspace = namedtuple("RateWorkspace", "R p v vd a ad f fd Iv Ivd Sf")


@kernel
def rate_workspace(nb):
    """Per-call arrays: body poses, ``v, vd, a, ad, f, fd`` with a base row, and three 6-vectors."""
    return RateWorkspace(np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)),
                         np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)),
                         np.empty(6), np.empty(6), np.empty(6))


@kernel
def newton_euler_rate(m, w, q, qd, qdd, qddd, gravity, tau_rate):
    """``d tau / dt`` for one state (module docstring); writes ``tau_rate`` (dof)."""
    R, p, v, vd, a, ad, f, fd, Iv, Ivd, Sf = w
    v[-1] = 0.0
    vd[-1] = 0.0
    a[-1] = 0.0
    ad[-1] = 0.0
    f[-1] = 0.0
    fd[-1] = 0.0
    base_acceleration(gravity, a[-1])
    for i in range(m.nb):
        λ = m.parent[i]
        qd_i = joint_coordinate(m, i, qd)
        qdd_i = joint_coordinate(m, i, qdd)
        X_up(m, i, q, R[i], p[i])
        motion_to_child(R[i], p[i], v[λ], v[i])
        add_scaled(v[i], qd_i, m.S[i])
        motion_to_child(R[i], p[i], vd[λ], vd[i])
        cross_motion_add(v[i], m.S[i], qd_i, vd[i])
        add_scaled(vd[i], qdd_i, m.S[i])
        motion_to_child(R[i], p[i], a[λ], a[i])  # X_i a_λ, completed below once ad_i has used it
        motion_to_child(R[i], p[i], ad[λ], ad[i])
        cross_motion_add(a[i], m.S[i], qd_i, ad[i])
        add_scaled(ad[i], joint_coordinate(m, i, qddd), m.S[i])
        cross_motion_add(vd[i], m.S[i], qd_i, ad[i])
        cross_motion_add(v[i], m.S[i], qdd_i, ad[i])
        add_scaled(a[i], qdd_i, m.S[i])
        cross_motion_add(v[i], m.S[i], qd_i, a[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], v[i], Iv)
        inertia_times(m.mass[i], m.h[i], m.I[i], vd[i], Ivd)
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
        cross_force_add(v[i], Iv, f[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], ad[i], fd[i])
        cross_force_add(vd[i], Iv, fd[i])
        cross_force_add(v[i], Ivd, fd[i])
    tau_rate[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        λ = m.parent[i]
        tau_rate[m.q_index[i]] += m.q_mult[i] * dot6(m.S[i], fd[i])
        Sf[:] = 0.0
        cross_force_add(m.S[i], f[i], Sf)
        add_scaled(fd[i], joint_coordinate(m, i, qd), Sf)
        force_to_parent_add(R[i], p[i], fd[i], fd[λ])
        force_to_parent_add(R[i], p[i], f[i], f[λ])
    for k in range(m.dof):
        tau_rate[k] += m.armature[k] * qddd[k] + m.damping[k] * qdd[k]


@kernel
def rnea_rate(fdata, idata, q, qd, qdd, qddd, gravity, tau_rate):
    """:func:`newton_euler_rate` for one state, with its own workspace."""
    m = model_view(fdata, idata)
    newton_euler_rate(m, rate_workspace(m.nb), q, qd, qdd, qddd, gravity, tau_rate)


@batch_kernel
def rnea_rate_batch(fdata, idata, q, qd, qdd, qddd, gravity, tau_rate):
    """:func:`newton_euler_rate` for each row of a batch; chunks of states in parallel, one workspace each."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # per chunk: numba's parallel loops cannot take a named tuple from outside
        w = rate_workspace(m.nb)
        for n in chunk_rows(chunk, q.shape[0]):
            newton_euler_rate(m, w, q[n], qd[n], qdd[n], qddd[n], gravity, tau_rate[n])


def torque_rate(robot, q, qd, qdd, qddd, *, gravity=None):
    """``d tau / dt`` ``(…, dof)`` (N·m/s or N/s) along a motion through ``(q, qd, qdd)`` with jerk ``qddd``: the
    time derivative of :func:`~rne_dynamics.inverse_dynamics`'s torques, drive terms included (module docstring).

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. One state ``(dof,)`` or a batch
    ``(N, dof)``.
    """
    q, qd, qdd, qddd = states(robot, q=q, qd=qd, qdd=qdd, qddd=qddd)
    g = gravity_vector(gravity)
    out = np.empty(q.shape)
    if q.ndim == 2:
        rnea_rate_batch(robot.fdata, robot.idata, q, qd, qdd, qddd, g, out)
    else:
        rnea_rate(robot.fdata, robot.idata, q, qd, qdd, qddd, g, out)
    return out
