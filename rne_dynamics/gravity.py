"""Gravity torques ``g(q)`` and bias torques ``C(q, qd) qd + g(q)`` (Featherstone, RBDA Sec. 5.3 and 9.2).

``gravity_torques`` is the static Newton-Euler pass: with ``qd = qdd = 0`` every velocity and velocity product
vanishes, so the forward pass only carries the fictitious base acceleration ``a_0 = -g`` out to each body
(``a_i = X_i a_λ``) and the backward pass sums ``f_i = I_i a_i``.

Drive friction (URDF ``<dynamics damping friction>``, :meth:`Robot.with_drive`) is not part of ``C qd + g``: the
full joint torque is ``tau = M(q) qdd + bias_torques(q, qd) + damping qd + friction sign(qd)``, with the rotor
inertia (armature) inside ``M``; this is what :func:`rne_dynamics.inverse_dynamics` returns.
"""
from collections import namedtuple

import numpy as np

from ._jit import batch_kernel, batch_range, chunk_count, chunk_rows, kernel
from .inputs import NO_WRENCHES, all_finite, gravity_vector, not_finite, states
from .joints import X_up
from .model import model_view
from .rnea import rnea, rnea_batch
from .spatial import dot6, force_to_parent_add, inertia_times, motion_to_child


GravityWorkspace = namedtuple("GravityWorkspace", "R p a f")


@kernel
def gravity_workspace(nb):
    """Per-call arrays of the static pass: body poses ``(R, p)``, ``a`` and ``f`` with a base row."""
    return GravityWorkspace(np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)))


@kernel
def static_newton_euler(m, w, q, gravity, tau):
    """Static RNEA for one state: ``a_i = X_i a_λ`` (``a_0 = [-g; 0]``), ``f_i = I_i a_i``,
    ``tau_i = S_i^T f_i``, ``f_λ += X_i^T f_i`` (RBDA Table 5.1 with ``qd = qdd = 0``)."""
    R, p, a, f = w.R, w.p, w.a, w.f
    a[-1, 0:3] = -gravity
    f[-1] = 0.0
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])
        motion_to_child(R[i], p[i], a[m.parent[i]], a[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        tau[m.q_index[i]] += m.q_mult[i] * dot6(m.S[i], f[i])  # a mimic's load reaches its source by virtual work
        force_to_parent_add(R[i], p[i], f[i], f[m.parent[i]])


@kernel
def gravity_pass(fdata, idata, q, gravity, tau):
    """:func:`static_newton_euler` for one state, with its own workspace; False if ``q`` or a torque is not
    finite."""
    m = model_view(fdata, idata)
    static_newton_euler(m, gravity_workspace(m.nb), q, gravity, tau)
    return all_finite(q) and all_finite(tau)


@batch_kernel
def gravity_pass_batch(fdata, idata, q, gravity, tau):
    """:func:`static_newton_euler` for each row of a batch, chunks in parallel, one workspace per chunk; returns
    what :func:`gravity_pass` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # made in the parallel body: numba cannot pass this namedtuple into it
        w = gravity_workspace(m.nb)
        for n in chunk_rows(chunk, q.shape[0]):
            static_newton_euler(m, w, q[n], gravity, tau[n])
    return all_finite(q) and all_finite(tau)


def gravity_torques(robot, q, *, gravity=None):
    """``g(q)``: the joint torques that hold the robot still at ``q`` (``inverse_dynamics(q, 0, 0).torques``).

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. One state ``(dof,)`` or a batch
    ``(N, dof)``.
    """
    (q,) = states(robot, finite=False, q=q)
    g = gravity_vector(gravity)
    tau = np.empty(q.shape)
    if not (gravity_pass_batch if q.ndim == 2 else gravity_pass)(robot.fdata, robot.idata, q, g, tau):
        raise not_finite(robot, "the torques", q=q)
    return tau


def bias_torques(robot, q, qd, *, gravity=None):
    """``C(q, qd) qd + g(q)``: the torques at zero acceleration, without drive friction (see the module notes).

    Computed by RNEA with ``qdd = 0`` (RBDA Sec. 9.2), rigid-body terms only.
    One state ``(dof,)`` or a batch ``(N, dof)``.
    """
    q, qd = states(robot, finite=False, q=q, qd=qd)
    g = gravity_vector(gravity)
    tau, wrench, base = np.empty(q.shape), np.empty(q.shape + (6,)), np.empty(q.shape[:-1] + (6,))
    qdd = np.zeros(q.shape)
    if q.ndim == 2:
        finite = rnea_batch(robot.fdata, robot.idata, q, qd, qdd, g, np.broadcast_to(NO_WRENCHES, (len(q), 0, 6)),
                            False, tau, wrench, base)
    else:
        finite = rnea(robot.fdata, robot.idata, q, qd, qdd, g, NO_WRENCHES[0], False, tau, wrench, base)
    if not finite:
        raise not_finite(robot, "the torques", q=q, qd=qd)
    return tau
