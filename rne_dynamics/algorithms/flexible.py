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
velocity; the feedforward then needs the spring-damper ODE integrated along the trajectory, which this function does
not do: it refuses ``D > 0``.
"""
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, StateError
from ..model.drive import elastic_coordinates, elastic_joints, transmission
from .aba import forward_dynamics
from .configuration import integrate
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


def flexible_feedforward(robot, q, qd, qdd, qddd, qdddd, *, gravity=None):
    """The exact feedforward of the motor-link model (De Luca; module docstring) for a link trajectory given to
    its 4th derivative: motor torques, motor positions and velocities, spring torques, as a
    :class:`FlexibleFeedforward`. Needs ``D = 0`` at the elastic joints. One state or a batch."""
    v, iq, K, D, q0, B = _motors(robot, "flexible_feedforward")
    if np.any(D > 0):
        raise ModelError("flexible_feedforward: the exact feedforward is for D = 0; elastic joint "
                         f"'{robot.v_names[v[np.flatnonzero(D > 0)[0]]]}' has spring_damping "
                         f"{D[np.flatnonzero(D > 0)[0]]}")
    tau = inverse_dynamics(robot, q, qd, qdd, gravity=gravity).torques.copy()
    tau_rate = torque_rate(robot, q, qd, qdd, qddd, gravity=gravity)
    tau_acceleration = torque_acceleration(robot, q, qd, qdd, qddd, qdddd, gravity=gravity)
    q, qd, qdd = (np.asarray(x, dtype=float) for x in (q, qd, qdd))
    spring = tau[..., v]
    theta = q[..., iq] - q0 + spring / K
    thetad = qd[..., v] + tau_rate[..., v] / K
    tau[..., v] = spring + B * (qdd[..., v] + tau_acceleration[..., v] / K)
    return FlexibleFeedforward(tau, theta, thetad, spring)


class MotorLinkTrajectory(NamedTuple):
    """A simulation of the motor-link model: ``t`` ``(steps + 1,)``, ``q``, ``qd``, ``theta``, ``thetad``, one row
    per time, the initial state first."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    theta: np.ndarray
    thetad: np.ndarray


def flexible_simulate(robot, q0, qd0, theta0, thetad0, tau, duration, dt, *, gravity=None):
    """Integrate the motor-link model by RK4 from ``(q0, qd0, theta0, thetad0)`` for ``duration`` s in steps of
    ``dt``; ``tau``: an array ``(nv,)`` held throughout, or a callable ``tau(t)`` (evaluated at the RK4 stages, so
    a smooth feedforward keeps the method's 4th order). Returns a :class:`MotorLinkTrajectory`. One state; no joint
    limits."""
    torque = tau if callable(tau) else (lambda t, held=np.asarray(tau, dtype=float): held)
    if not (np.isfinite(dt) and dt > 0 and np.isfinite(duration) and duration >= 0):
        raise StateError(f"dt must be > 0 and duration >= 0 (finite seconds), got dt={dt}, duration={duration}")

    def rates(t, q, qd, theta, thetad):
        link, motor = flexible_forward_dynamics(robot, q, qd, theta, thetad, torque(t), gravity=gravity)
        return qd, link, thetad, motor

    steps = int(round(duration / dt))
    state = [np.array(x, dtype=float) for x in (q0, qd0, theta0, thetad0)]
    out = [np.empty((steps + 1,) + x.shape) for x in state]
    for k in range(steps + 1):
        for o, x in zip(out, state):
            o[k] = x
        if k == steps:
            break
        t = k * dt
        k1 = rates(t, *state)
        k2 = rates(t + dt / 2, *_advance(robot, state, k1, dt / 2))
        k3 = rates(t + dt / 2, *_advance(robot, state, k2, dt / 2))
        k4 = rates(t + dt, *_advance(robot, state, k3, dt))
        slope = [(a + 2 * b + 2 * c + d) / 6 for a, b, c, d in zip(k1, k2, k3, k4)]
        state = _advance(robot, state, slope, dt)
    return MotorLinkTrajectory(dt * np.arange(steps + 1), *out)


def _advance(robot, state, slope, h):
    """The state moved by ``h`` along ``slope`` (the configuration on the robot's manifold)."""
    q, qd, theta, thetad = state
    return [integrate(robot, q, slope[0], h), qd + h * slope[1], theta + h * slope[2], thetad + h * slope[3]]
