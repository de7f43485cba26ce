"""The torque acceleration ``d2 tau / dt2`` from ``(q, qd, qdd, qddd, qdddd)``: Newton-Euler extended by two time
derivatives (link snap), one order beyond :mod:`~rne_dynamics.algorithms.torque_rate`.

Guarino Lo Bianco propagates link jerks and force derivatives beside the RNEA quantities to get ``d tau / dt``; the
same rule applied once more gives the second derivative. Frames and conventions are
:mod:`~rne_dynamics.algorithms.torque_rate`'s: body-frame quantities, ``dX_i/dt = -vJ_i x X_i`` so
``d(X_i m)/dt = X_i dm/dt + (X_i m) x vJ_i`` and ``d(X_i^T f)/dt = X_i^T (vJ_i x* f + df/dt)``; ``a_i`` carries
gravity (``a_0 = -g``), ``vd_i``, ``vdd_i`` are the true body acceleration and its rate (``0`` at the base), ``ad_i``,
``add_i`` the first and second derivatives of ``a_i``. With ``vJ, aJ, jJ, sJ = S_i (qd, qdd, qddd, qdddd)_i``,
``A = X_i a_λ``, ``B = X_i ad_λ``, ``V = X_i vd_λ`` (differentiating the torque-rate equations once more):

    v_i   = X_i v_λ + vJ
    vd_i  = V + v_i x vJ + aJ
    vdd_i = X_i vdd_λ + V x vJ + vd_i x vJ + v_i x aJ + jJ
    a_i   = A + aJ + v_i x vJ
    ad_i  = B + A x vJ + jJ + vd_i x vJ + v_i x aJ
    add_i = X_i add_λ + 2 B x vJ + (A x vJ) x vJ + A x aJ + sJ + vdd_i x vJ + 2 vd_i x aJ + v_i x jJ
    f_i   = I_i a_i + v_i x* I_i v_i
    fd_i  = I_i ad_i + vd_i x* I_i v_i + v_i x* I_i vd_i
    fdd_i = I_i add_i + vdd_i x* I_i v_i + 2 vd_i x* I_i vd_i + v_i x* I_i vdd_i
    backwards (f, fd, fdd: the body's totals, its children's shares added):
        taudd_i = S_i^T fdd_i,   G = fd_i + vJ x* f_i,   H = fdd_i + vJ x* G + aJ x* f_i + vJ x* fd_i
        fdd_λ += X_i^T H,   fd_λ += X_i^T G,   f_λ += X_i^T f_i

Mimic bodies and a floating base as in the torque rate; the terms up to ``ad_i``, ``fd_i`` are the torque rate's
(:func:`~rne_dynamics.algorithms.torque_rate.rate_motion`). Drives add ``armature qdddd + damping qddd``
(:func:`~rne_dynamics.model.drive.drive_rates_add`); Coulomb friction is constant wherever ``qd != 0`` and adds
nothing.
"""
from .._jit import arithmetic_kernel
from ..model.memory import memory
from ..model.drive import drive_rates_add
from ..model.joints import S_times_add, S_transpose_times_add
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, force_to_parent_add,
                             inertia_times, motion_to_child)
from .driver import Algorithm
from .torque_rate import rate_forces, rate_motion

#: ``d2 tau / dt2``, then per body the pose ``(R, p)``; per body and a base row last, ``v, vd, vdd, a, ad, add, f,
#: fd, fdd`` (the step sets the base rows); per body the joint rates ``vJ``, ``aJ``; scratch 6-vectors.
acceleration_memory = memory("acceleration_memory", results=dict(tau_acceleration=("nv",)), R=("nb", 3, 3),
                             p=("nb", 3),
                             **{name: ("nb + 1", 6) for name in ("v", "vd", "vdd", "a", "ad", "add", "f", "fd", "fdd")},
                             vJ=("nb", 6), aJ=("nb", 6),
                             **{name: (6,) for name in ("jJ", "Iv", "Ivd", "Ivdd", "A", "B", "T", "G", "H")})


@arithmetic_kernel
def newton_euler_acceleration(m, w, q, qd, qdd, qddd, qdddd, gravity):
    """``d2 tau / dt2`` for one state (module docstring)."""
    taudd, R, p, vJ, aJ = w.tau_acceleration, w.R, w.p, w.vJ, w.aJ
    v, vd, vdd, a, ad, add, f, fd, fdd = w.v, w.vd, w.vdd, w.a, w.ad, w.add, w.f, w.fd, w.fdd
    jJ, Iv, Ivd, Ivdd, A, B, T, G, H = w.jJ, w.Iv, w.Ivd, w.Ivdd, w.A, w.B, w.T, w.G, w.H
    for rows in (v, vd, vdd, a, ad, add, f, fd, fdd):
        rows[-1] = 0.0
    base_acceleration(gravity, a[-1])
    for i in range(m.nb):
        λ = m.parent[i]
        rate_motion(m, i, q, qd, qdd, qddd, R[i], p[i], v, vd, a, ad, vJ[i], aJ[i], A, T, B)  # T = V
        jJ[:] = 0.0
        S_times_add(m, i, qddd, 1.0, jJ)
        motion_to_child(R[i], p[i], vdd[λ], vdd[i])
        cross_motion_add(T, vJ[i], 1.0, vdd[i])
        cross_motion_add(vd[i], vJ[i], 1.0, vdd[i])
        cross_motion_add(v[i], aJ[i], 1.0, vdd[i])
        add_scaled(vdd[i], 1.0, jJ)
        motion_to_child(R[i], p[i], add[λ], add[i])
        cross_motion_add(B, vJ[i], 2.0, add[i])
        T[:] = 0.0
        cross_motion_add(A, vJ[i], 1.0, T)
        cross_motion_add(T, vJ[i], 1.0, add[i])
        cross_motion_add(A, aJ[i], 1.0, add[i])
        S_times_add(m, i, qdddd, 1.0, add[i])
        cross_motion_add(vdd[i], vJ[i], 1.0, add[i])
        cross_motion_add(vd[i], aJ[i], 2.0, add[i])
        cross_motion_add(v[i], jJ, 1.0, add[i])
        rate_forces(m, i, v, vd, a, ad, Iv, Ivd, f, fd)
        inertia_times(m.mass[i], m.h[i], m.I[i], vdd[i], Ivdd)
        inertia_times(m.mass[i], m.h[i], m.I[i], add[i], fdd[i])
        cross_force_add(vdd[i], Iv, fdd[i])
        cross_force_add(vd[i], Ivd, fdd[i])
        cross_force_add(vd[i], Ivd, fdd[i])
        cross_force_add(v[i], Ivdd, fdd[i])
    taudd[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        λ = m.parent[i]
        S_transpose_times_add(m, i, fdd[i], taudd)
        G[:] = 0.0
        add_scaled(G, 1.0, fd[i])
        cross_force_add(vJ[i], f[i], G)
        H[:] = 0.0
        add_scaled(H, 1.0, fdd[i])
        cross_force_add(vJ[i], G, H)
        cross_force_add(aJ[i], f[i], H)
        cross_force_add(vJ[i], fd[i], H)
        force_to_parent_add(R[i], p[i], H, fdd[λ])
        force_to_parent_add(R[i], p[i], G, fd[λ])
        force_to_parent_add(R[i], p[i], f[i], f[λ])
    drive_rates_add(m, qddd, qdddd, taudd)


TORQUE_ACCELERATION = Algorithm(newton_euler_acceleration, acceleration_memory, ("q", "qd", "qdd", "qddd", "qdddd"),
                                "the torque accelerations", gravity=True)


def torque_acceleration(robot, q, qd, qdd, qddd, qdddd, *, gravity=None, data=None, drive=True):
    """``d2 tau / dt2`` ``(…, nv)`` (N·m/s² or N/s²) along a motion through ``(q, qd, qdd, qddd)`` with snap
    ``qdddd``: the second time derivative of :func:`~rne_dynamics.inverse_dynamics`'s torques, drive terms included
    (module docstring). With a floating base, ``qd[:6]`` is the base's twist in its own frame and ``qdd[:6]`` ..
    ``qdddd[:6]`` the time derivatives of those components.

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. One state (``q`` ``(nq,)``, the others
    ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``. ``data``: a ``robot.data()`` to compute in.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    return TORQUE_ACCELERATION.run(robot, data, (q, qd, qdd, qddd, qdddd), gravity, drive=drive)
