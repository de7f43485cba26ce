"""Gravity torques ``g(q)`` and bias torques ``C(q, qd) qd + g(q)`` (Featherstone, RBDA Sec. 5.3 and 9.2).

``gravity_torques`` is the static Newton-Euler pass: with ``qd = qdd = 0`` every velocity and velocity product
vanishes, so the forward pass only carries the fictitious base acceleration ``a_0 = -g`` out to each body
(``a_i = X_i a_λ``, a linear acceleration) and the backward pass sums the forces ``f_i = I_i a_i`` of each subtree
through its mass and first moment, the only parts of its composite inertia that a linear acceleration meets.

Drive friction (URDF ``<dynamics damping friction>``, :meth:`Robot.with_drive`) is not part of ``C qd + g``: the
full joint torque is ``tau = M(q) qdd + bias_torques(q, qd) + damping qd + friction sign(qd)``, with the rotor
inertia (armature) inside ``M``; this is what :func:`rne_dynamics.inverse_dynamics` returns.
"""
from .._jit import arithmetic_kernel
from ..model.memory import memory
from ..model.joints import S_transpose_times_add, X_up
from ..model.spatial import base_acceleration, cross
from .driver import Algorithm


#: The gravity torques, then the static pass's arrays: per body its pose ``(R, p)``, and the linear acceleration
#: ``a``, the subtree's mass ``mass_c`` and first moment ``h_c``, whose last row is the fixed base's; the force ``f``
#: of the body at hand.
gravity_memory = memory("gravity_memory", results=dict(torques=("nv",)), R=("nb", 3, 3), p=("nb", 3),
                        a=("nb + 1", 3), mass_c=("nb + 1",), h_c=("nb + 1", 3), f=(6,))


@arithmetic_kernel
def static_newton_euler(m, w, q, gravity):
    """Static RNEA for one state (RBDA Table 5.1 with ``qd = qdd = 0``).

    Every acceleration stays linear: ``a_0 = [-g; 0]`` and ``X_i [a; 0] = [R_i^T a; 0]``. A subtree's forces
    ``f_i = I_i a_i + sum_children X_c^T f_c`` then sum to its composite inertia times ``a_i`` (RBDA Sec. 6.2), of
    which only the mass and first moment act on a linear acceleration:
        a_i = R_i^T a_λ,   f_i = I^c_i [a_i; 0] = [mass^c_i a_i; h^c_i x a_i],   tau_i = S_i^T f_i,
        mass^c_λ += mass^c_i,   h^c_λ += R_i h^c_i + mass^c_i p_i   (RBDA eq. 2.66)
    """
    R, p, a, mass_c, h_c, f, tau = w.R, w.p, w.a, w.mass_c, w.h_c, w.f, w.torques
    base_acceleration(gravity, a[-1])
    mass_c[-1] = 0.0
    h_c[-1] = 0.0
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])
        λ = m.parent[i]
        for k in range(3):
            a[i, k] = R[i, 0, k] * a[λ, 0] + R[i, 1, k] * a[λ, 1] + R[i, 2, k] * a[λ, 2]
            h_c[i, k] = m.h[i, k]
        mass_c[i] = m.mass[i]
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        λ = m.parent[i]
        a0, a1, a2 = a[i, 0], a[i, 1], a[i, 2]
        f[0], f[1], f[2] = mass_c[i] * a0, mass_c[i] * a1, mass_c[i] * a2
        f[3], f[4], f[5] = cross(h_c[i, 0], h_c[i, 1], h_c[i, 2], a0, a1, a2)
        S_transpose_times_add(m, i, f, tau)
        mass_c[λ] += mass_c[i]
        for k in range(3):
            h_c[λ, k] += R[i, k, 0] * h_c[i, 0] + R[i, k, 1] * h_c[i, 1] + R[i, k, 2] * h_c[i, 2] + mass_c[i] * p[i, k]


GRAVITY = Algorithm(static_newton_euler, gravity_memory, ("q",), "the torques", gravity=True)


def gravity_torques(robot, q, *, gravity=None, data=None):
    """``g(q)``: the joint torques that hold the robot still at ``q`` (``inverse_dynamics(q, 0, 0).torques``, with
    or without the drives: at rest they add nothing).

    ``gravity``: 3-vector in the world (root-link) frame, default ``(0, 0, -9.81)``. One state or a batch (``q``
    ``(…, nq)``); ``data``: a ``robot.data()`` to compute in.
    """
    return GRAVITY.run(robot, data, (q,), gravity)
