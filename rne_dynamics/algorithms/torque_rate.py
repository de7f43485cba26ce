"""The torque rate ``d tau / dt`` from ``(q, qd, qdd, qddd)``: Newton-Euler extended by one time derivative.

The idea is Guarino Lo Bianco's (link jerks and force derivatives propagated alongside the RNEA quantities); the
equations are derived here from RBDA Table 5.1. Every joint's motion columns ``S_i`` are constant in its child frame
and its velocity ``vJ_i = S_i qd_i`` is the child's twist relative to the parent (for a free-flyer or a spherical
joint, ``qd_i`` is that twist itself and ``qdd_i``, ``qddd_i`` its time derivatives), so ``X_i`` turns at that rate:
``dX_i/dt = -vJ_i x X_i``, and ``d(X_i^T f)/dt = X_i^T (vJ_i x* f + df/dt)``. ``a_i`` carries gravity as a base
acceleration (``a_0 = -g``), so the true body acceleration ``vd_i = dv_i/dt`` is propagated apart (``vd_0 = 0``);
``ad_i = da_i/dt`` (the jerk, gravity being constant, ``ad_0 = 0``). With ``X_i v_λ x vJ_i = v_i x vJ_i``:

    vJ_i = S_i qd_i,   aJ_i = S_i qdd_i,   jJ_i = S_i qddd_i
    v_i  = X_i v_λ + vJ_i
    vd_i = X_i vd_λ + v_i x vJ_i + aJ_i
    a_i  = X_i a_λ + aJ_i + v_i x vJ_i
    ad_i = X_i ad_λ + (X_i a_λ) x vJ_i + jJ_i + vd_i x vJ_i + v_i x aJ_i
    f_i  = I_i a_i + v_i x* I_i v_i
    fd_i = I_i ad_i + vd_i x* I_i v_i + v_i x* I_i vd_i
    backwards:  taud_i = S_i^T fd_i,   fd_λ += X_i^T (fd_i + vJ_i x* f_i),   f_λ += X_i^T f_i

A mimic body moves at ``q_mult`` times its source's rates and its load reaches the source scaled by ``q_mult``, as
in :func:`~rne_dynamics.algorithms.rnea.newton_euler` (``S_times_add``, ``S_transpose_times_add``). Drives add
``armature qddd + damping qdd`` (:func:`~rne_dynamics.model.drive.drive_rates_add`); Coulomb friction ``sign(qd)``
is constant wherever ``qd != 0`` and adds nothing.
"""
from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from ..model.drive import drive_rates_add
from ..model.joints import S_times_add, S_transpose_times_add, X_up
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, force_to_parent_add,
                             inertia_times, motion_to_child)
from .driver import Algorithm

#: ``d tau / dt``, then per body the pose ``(R, p)``; per body and a base row last, ``v, vd, a, ad, f, fd`` (the
#: step sets the base rows: at rest, gravity in ``a``); per body the joint velocity ``vJ``; scratch ``aJ, Iv, Ivd,
#: Sf`` and :func:`rate_motion`'s ``A, V, B``.
rate_memory = memory("rate_memory", results=dict(tau_rate=("nv",)), R=("nb", 3, 3), p=("nb", 3),
                     **{name: ("nb + 1", 6) for name in ("v", "vd", "a", "ad", "f", "fd")}, vJ=("nb", 6),
                     **{name: (6,) for name in ("aJ", "Iv", "Ivd", "Sf", "A", "V", "B")})


@helper
def rate_motion(m, i, q, qd, qdd, qddd, R, p, v, vd, a, ad, vJ, aJ, A, V, B):
    """Body ``i``'s pose ``(R, p)`` in its parent, joint rates ``vJ = S_i qd_i``, ``aJ = S_i qdd_i``, and ``v_i,
    vd_i, a_i, ad_i`` from its parent's (module docstring); leaves ``A = X_i a_λ``, ``V = X_i vd_λ`` and ``B = X_i
    ad_λ`` for the next order (:mod:`~rne_dynamics.algorithms.torque_acceleration`)."""
    λ = m.parent[i]
    X_up(m, i, q, R, p)
    vJ[:] = 0.0
    S_times_add(m, i, qd, 1.0, vJ)
    aJ[:] = 0.0
    S_times_add(m, i, qdd, 1.0, aJ)
    motion_to_child(R, p, v[λ], v[i])
    add_scaled(v[i], 1.0, vJ)
    motion_to_child(R, p, vd[λ], V)
    vd[i] = 0.0  # (rows are copied by adding: a slice copy would need reference counting)
    add_scaled(vd[i], 1.0, V)
    cross_motion_add(v[i], vJ, 1.0, vd[i])
    add_scaled(vd[i], 1.0, aJ)
    motion_to_child(R, p, a[λ], A)
    motion_to_child(R, p, ad[λ], B)
    ad[i] = 0.0
    add_scaled(ad[i], 1.0, B)
    cross_motion_add(A, vJ, 1.0, ad[i])
    S_times_add(m, i, qddd, 1.0, ad[i])
    cross_motion_add(vd[i], vJ, 1.0, ad[i])
    cross_motion_add(v[i], aJ, 1.0, ad[i])
    a[i] = 0.0
    add_scaled(a[i], 1.0, A)
    add_scaled(a[i], 1.0, aJ)
    cross_motion_add(v[i], vJ, 1.0, a[i])


@helper
def rate_forces(m, i, v, vd, a, ad, Iv, Ivd, f, fd):
    """``f_i = I_i a_i + v_i x* I_i v_i`` and ``fd_i = I_i ad_i + vd_i x* I_i v_i + v_i x* I_i vd_i``, leaving
    ``Iv = I_i v_i`` and ``Ivd = I_i vd_i``."""
    inertia_times(m.mass[i], m.h[i], m.I[i], v[i], Iv)
    inertia_times(m.mass[i], m.h[i], m.I[i], vd[i], Ivd)
    inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
    cross_force_add(v[i], Iv, f[i])
    inertia_times(m.mass[i], m.h[i], m.I[i], ad[i], fd[i])
    cross_force_add(vd[i], Iv, fd[i])
    cross_force_add(v[i], Ivd, fd[i])


@arithmetic_kernel
def newton_euler_rate(m, w, q, qd, qdd, qddd, gravity):
    """``d tau / dt`` for one state (module docstring)."""
    tau_rate, R, p, v, vd, a, ad, f, fd = w.tau_rate, w.R, w.p, w.v, w.vd, w.a, w.ad, w.f, w.fd
    vJ, aJ, Iv, Ivd, Sf, A, V, B = w.vJ, w.aJ, w.Iv, w.Ivd, w.Sf, w.A, w.V, w.B
    v[-1] = 0.0
    vd[-1] = 0.0
    a[-1] = 0.0
    ad[-1] = 0.0
    f[-1] = 0.0
    fd[-1] = 0.0
    base_acceleration(gravity, a[-1])
    for i in range(m.nb):
        rate_motion(m, i, q, qd, qdd, qddd, R[i], p[i], v, vd, a, ad, vJ[i], aJ, A, V, B)
        rate_forces(m, i, v, vd, a, ad, Iv, Ivd, f, fd)
    tau_rate[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        λ = m.parent[i]
        S_transpose_times_add(m, i, fd[i], tau_rate)
        Sf[:] = 0.0
        cross_force_add(vJ[i], f[i], Sf)
        add_scaled(fd[i], 1.0, Sf)
        force_to_parent_add(R[i], p[i], fd[i], fd[λ])
        force_to_parent_add(R[i], p[i], f[i], f[λ])
    drive_rates_add(m, qdd, qddd, tau_rate)


TORQUE_RATE = Algorithm(newton_euler_rate, rate_memory, ("q", "qd", "qdd", "qddd"), "the torque rates", gravity=True)


def torque_rate(robot, q, qd, qdd, qddd, *, gravity=None, data=None, drive=True):
    """``d tau / dt`` ``(…, nv)`` (N·m/s or N/s) along a motion through ``(q, qd, qdd)`` with jerk ``qddd``: the
    time derivative of :func:`~rne_dynamics.inverse_dynamics`'s torques, drive terms included (module docstring).
    With a floating base, ``qd[:6]`` is the base's twist in its own frame and ``qdd[:6]``, ``qddd[:6]`` are the time
    derivatives of those components.

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. One state (``q`` ``(nq,)``, the others
    ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``. ``data``: a ``robot.data()`` to compute in.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    return TORQUE_RATE.run(robot, data, (q, qd, qdd, qddd), gravity, drive=drive)
