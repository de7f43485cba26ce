"""The motor-link model of robots with elastic transmissions (Spong 1987) and its exact feedforward (De Luca).

Each elastic joint (``stiffness`` ``K > 0``, :mod:`~rne_dynamics.model.drive`) has a motor of position ``theta``
(joint side: the motor angle over the gear ratio ``n``) and inertia ``B = n^2 motor_inertia`` behind a spring::

    link:   M(q) qdd + c(q, qd) + g(q) = tau_s,          tau_s = K (theta - q + q0) + D (thetad - qd)
    motor:  B thetadd + tau_s = tau_m

(``tau_m``: the motor torque times ``n``). Rigid joints take their torque directly. The rigid robot's drive terms
(``armature``, friction) stay on the link side.

Exact feedforward for ``D = 0``: the link torques ``tau_s = tau(q, qd, qdd)`` of the rigid robot must come from the
springs, so ``theta = q - q0 + tau / K`` and, differentiating twice, ``thetadd = qdd + (d2 tau / dt2) / K``:
``tau_m = tau + B (qdd + (d2 tau / dt2) / K)``, with ``d2 tau / dt2`` from :func:`rne_dynamics.torque_acceleration`
(the link trajectory up to its 4th derivative). With ``D > 0`` the spring torque also depends on the motor's
velocity: the deflection follows the spring-damper equation ``D phid + K phi = tau`` along the trajectory, solved
from its samples (:func:`spring_deflection`).
"""
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, StateError
from ..model.drive import elastic_coordinates, elastic_joints, transmission
from .aba import forward_dynamics
from .integrator import rkmk4_step
from .rnea import inverse_dynamics
from .torque_acceleration import torque_acceleration
from .torque_rate import torque_rate


class MotorLinkAccelerations(NamedTuple):
    """``link`` ``(…, nv)``: ``qdd``; ``motor`` ``(…, len(elastic joints))``: ``thetadd``."""
    link: np.ndarray
    motor: np.ndarray


class FlexibleFeedforward(NamedTuple):
    """``motor_torques`` ``(…, nv)``: ``tau_m`` at the elastic joints, the rigid torque at the others;
    ``motor_positions``, ``motor_velocities`` ``(…, len(elastic joints))``: ``theta``, ``thetad`` along the
    trajectory (the consistent initial motor state); ``spring_torques`` ``(…, len(elastic joints))``."""
    motor_torques: np.ndarray
    motor_positions: np.ndarray
    motor_velocities: np.ndarray
    spring_torques: np.ndarray


def _motors(robot, what):
    """Velocity and position coordinates of the elastic joints and their ``K, D, q0, B``; refuses a robot without
    elastic joints or with an elastic joint without motor inertia."""
    joints = elastic_joints(robot)
    if not joints.size:
        raise ModelError(f"{what}: robot '{robot.name}' has no elastic joint; give some a stiffness with "
                         "robot.with_drive(stiffness={joint: K}, motor_inertia=..., gear_ratio=...)")
    drive = transmission(robot)
    B = drive.reflected_motor_inertia[joints]
    if np.any(B <= 0):
        name = robot.joint_names[joints[np.flatnonzero(B <= 0)[0]]]
        raise ModelError(f"{what}: elastic joint '{name}' has no motor inertia; the motor-link model needs "
                         "robot.with_drive(motor_inertia={...})")
    q_index = np.array([robot.bodies[robot.joint_bodies[j]].idx_q for j in joints], dtype=np.int64)
    return (elastic_coordinates(robot), q_index, drive.stiffness[joints], drive.spring_damping[joints],
            drive.rest_offset[joints], B)


def _motor_state(x, name, count, batch):
    x = np.asarray(x, dtype=float)
    if x.shape != batch + (count,) or not np.all(np.isfinite(x)):
        raise StateError(f"{name} must be {batch + (count,)} finite numbers (one per elastic joint), got shape "
                         f"{x.shape}" + ("" if x.shape != batch + (count,) else " with a value not finite"))
    return x


def flexible_forward_dynamics(robot, q, qd, theta, thetad, tau, *, gravity=None, external_wrenches=None):
    """Link and motor accelerations of the motor-link model (module docstring): ``q``, ``qd`` the links' state,
    ``theta``, ``thetad`` the motors' (one per elastic joint, joint side), ``tau`` ``(nv,)``: the motor torques at
    the elastic joints (joint side), the joint torques elsewhere. Returns :class:`MotorLinkAccelerations`. One state
    or a batch."""
    v, iq, K, D, q0, B = _motors(robot, "flexible_forward_dynamics")
    q, qd = np.asarray(q, dtype=float), np.asarray(qd, dtype=float)
    batch = qd.shape[:-1]
    theta = _motor_state(theta, "theta", len(v), batch)
    thetad = _motor_state(thetad, "thetad", len(v), batch)
    tau = np.array(tau, dtype=float)
    spring = K * (theta - q[..., iq] + q0) + D * (thetad - qd[..., v])
    motor = (tau[..., v] - spring) / B
    tau[..., v] = spring
    link = forward_dynamics(robot, q, qd, tau, gravity=gravity, external_wrenches=external_wrenches)
    return MotorLinkAccelerations(link, motor)


def flexible_feedforward(robot, q, qd, qdd, qddd, qdddd, *, gravity=None, dt=None):
    """The exact feedforward of the motor-link model (De Luca; module docstring) for a link trajectory given to
    its 4th derivative: motor torques, motor positions and velocities, spring torques, as a
    :class:`FlexibleFeedforward`. One state or a batch.

    Elastic joints with spring damping ``D > 0`` need the batch to be the trajectory sampled every ``dt`` seconds:
    their spring deflection ``phi = theta - q + q0`` obeys ``D phid + K phi = tau`` along it, solved exactly for the
    torques interpolated by cubic Hermite pieces between samples (``tau`` and ``d tau / dt`` at each), from the
    quasi-static start ``phi(0) = tau / K - D (d tau / dt) / K^2``; then ``theta = q - q0 + phi``,
    ``thetadd = qdd + (d tau / dt - K phid) / D`` and ``tau_m = tau + B thetadd`` (:func:`spring_deflection`).
    ``thetadd`` carries the deflection's error times ``(K / D)^2``: light damping needs fine samples (Panda, K 3000,
    samples every 0.25 ms: 2.6e-7 rad of tracking error over 2 s at D = 20, 1.4e-4 rad at D = 2).
    """
    v, iq, K, D, q0, B = _motors(robot, "flexible_feedforward")
    tau = inverse_dynamics(robot, q, qd, qdd, gravity=gravity).torques.copy()
    tau_rate = torque_rate(robot, q, qd, qdd, qddd, gravity=gravity)
    tau_acceleration = torque_acceleration(robot, q, qd, qdd, qddd, qdddd, gravity=gravity)
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    spring, spring_rate = tau[..., v], tau_rate[..., v]
    phi, phid, phidd = spring / K, spring_rate / K, tau_acceleration[..., v] / K
    damped = D > 0
    if np.any(damped):
        if dt is None or q.ndim != 2:
            name = robot.v_names[v[np.flatnonzero(damped)[0]]]
            raise ModelError(f"flexible_feedforward: elastic joint '{name}' has spring_damping {D[damped][0]}: give "
                             "the trajectory as a batch sampled every dt seconds and dt, so that the spring-damper "
                             "equation can be solved along it")
        phi[:, damped] = spring_deflection(spring[:, damped], spring_rate[:, damped], K[damped], D[damped], dt)
        phid[:, damped] = (spring[:, damped] - K[damped] * phi[:, damped]) / D[damped]
        phidd[:, damped] = (spring_rate[:, damped] - K[damped] * phid[:, damped]) / D[damped]
    theta = q[..., iq] - q0 + phi
    thetad = qd[..., v] + phid
    tau[..., v] = spring + B * (qdd[..., v] + phidd)
    return FlexibleFeedforward(tau, theta, thetad, spring)


def spring_deflection(tau, tau_rate, K, D, dt):
    """The deflection ``phi`` ``(N, n)`` of damped springs with ``D phid + K phi = tau(t)`` at the samples of
    ``tau`` (every ``dt`` s), from ``phi(0) = tau / K - D (d tau / dt) / K^2``: per interval, with ``a = K / D`` and
    ``p = tau / D`` the cubic Hermite piece through the samples' ``tau`` and ``d tau / dt``, exactly
    ``phi(h) = exp(-a h) phi(0) + sum_n (-1)^n (p^(n)(h) - exp(-a h) p^(n)(0)) / a^(n + 1)``, ``n = 0 .. 3``."""
    a, h = K / D, float(dt)
    decay = np.exp(-a * h)
    phi = np.empty_like(tau)
    phi[0] = tau[0] / K - D * tau_rate[0] / K ** 2
    for k in range(len(tau) - 1):
        y0, y1, m0, m1 = tau[k] / D, tau[k + 1] / D, tau_rate[k] / D, tau_rate[k + 1] / D
        c2 = (3 * (y1 - y0) / h - 2 * m0 - m1) / h
        c3 = (2 * (y0 - y1) / h + m0 + m1) / h ** 2
        start = (y0, m0, 2 * c2, 6 * c3)
        end = (y1, m1, 2 * c2 + 6 * c3 * h, 6 * c3)
        phi[k + 1] = decay * phi[k] + sum((-1) ** n * (end[n] - decay * start[n]) / a ** (n + 1) for n in range(4))
    return phi


class MotorLinkTrajectory(NamedTuple):
    """A simulation of the motor-link model: ``t`` ``(steps + 1,)``, ``q``, ``qd``, ``theta``, ``thetad``, one row
    per time, the initial state first."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray


def flexible_simulate(robot, q0, qd0, theta0, thetad0, tau, duration, dt, *, gravity=None):
    """Integrate the motor-link model by RK4 on the joints' manifold (:mod:`~rne_dynamics.algorithms.integrator`)
    from ``(q0, qd0, theta0, thetad0)`` for ``duration`` s in steps of ``dt``; ``tau``: an array ``(nv,)`` held
    throughout, or a callable ``tau(t)`` (evaluated at the RK4 stages, so a smooth feedforward keeps the method's 4th
    order). Returns a :class:`MotorLinkTrajectory`. One state; no joint limits."""
    torque = tau if callable(tau) else (lambda t, held=np.asarray(tau, dtype=float): held)
    if not (np.isfinite(dt) and dt > 0 and np.isfinite(duration) and duration >= 0):
        raise StateError(f"dt must be > 0 and duration >= 0 (finite seconds), got dt={dt}, duration={duration}")
    q = np.array(q0, dtype=float)
    motors = len(np.atleast_1d(theta0))
    parts = np.cumsum([robot.nv, motors])  # x = [qd; theta; thetad]

    def rate(t, q, x):
        qd, theta, thetad = np.split(x, parts)
        link, motor = flexible_forward_dynamics(robot, q, qd, theta, thetad, torque(t), gravity=gravity)
        return np.concatenate([link, thetad, motor])

    steps = int(round(duration / dt))
    x = np.concatenate([np.asarray(v, dtype=float).ravel() for v in (qd0, theta0, thetad0)])
    qs, xs = np.empty((steps + 1,) + q.shape), np.empty((steps + 1,) + x.shape)
    qs[0], xs[0] = q, x
    for k in range(steps):
        qs[k + 1], xs[k + 1] = rkmk4_step(robot, qs[k], xs[k], rate, k * dt, dt)
    return MotorLinkTrajectory(dt * np.arange(steps + 1), qs, *np.split(xs, parts, axis=1))
