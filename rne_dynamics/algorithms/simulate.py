"""Fixed-step simulation: the forward dynamics (:mod:`rne_dynamics.aba`) integrated over time.

Two integrators of ``d/dt (q, qd) = (qd, qdd(q, qd, tau))``, the torque held over each step:

- ``"rk4"``: classical fourth-order Runge-Kutta, four forward-dynamics calls per step, error O(dt^4);
- ``"semi_implicit"``: symplectic Euler, ``qd' = qd + dt qdd(q, qd)``, ``q' = q + dt qd'``, one call per step.

Joint limits (``robot.position_limits``) are hard stops: after each step a joint past its limit is put back on it and
its velocity into the limit is zeroed, so it never passes through (an inelastic stop; a velocity away from the limit
is kept). Continuous joints have no limits.
"""
import math
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from .._jit import batch_kernel, batch_range, chunk_count, chunk_rows, kernel
from .aba import accelerations, forward, forward_workspace, singular
from ..errors import StateError
from .inputs import body_wrenches, gravity_vector, states
from ..model.robot import model_view

METHODS = ("rk4", "semi_implicit")


class Trajectory(NamedTuple):
    """A simulated motion, sample ``k`` at time ``t[k] = k dt``: ``t`` ``(T,)``; ``q``, ``qd``, ``qdd``, ``tau``
    ``(T, …, dof)``. ``tau[k]`` is the torque applied from ``t[k]`` to ``t[k + 1]`` and ``qdd[k]`` the forward
    dynamics at sample ``k`` (the free acceleration: a joint held at a limit shows the acceleration the stop
    cancels)."""
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray


def _check_method(method):
    if method not in METHODS:
        raise StateError(f"method must be one of {', '.join(repr(m) for m in METHODS)}, got {method!r}")


def _positive_time(value, name):
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise StateError(f"{name} must be a number of seconds, got {value!r}") from None
    if not (math.isfinite(value) and value > 0.0):
        raise StateError(f"{name} must be finite and > 0 s, got {value}")
    return value


StepWorkspace = namedtuple("StepWorkspace", "forward q_stage qd_stage qdd_stage no_wrenches")


@kernel
def step_workspace(nb, dof):
    """Per-call arrays of a step: forward dynamics' workspace and one Runge-Kutta stage ``(q, qd, qdd)``."""
    return StepWorkspace(forward_workspace(nb, dof), np.empty(dof), np.empty(dof), np.empty(dof), np.empty((0, 6)))


@kernel
def integrate(m, w, q, qd, tau, dt, rk4, gravity, f_ext, limits, q_next, qd_next, qdd):
    """One step from ``(q, qd)`` to ``(q_next, qd_next)``, joint limits applied; ``qdd``: the forward dynamics at
    ``(q, qd)``; ``limits``: ``(2, dof)`` lower and upper positions. Returns ``-1`` or the coordinate of a joint that
    drives no mass (then the outputs are undefined).

    RK4 stage ``s`` evaluates ``(qd_s, qdd_s)`` at ``(q + c_s dt qd_{s-1}, qd + c_s dt qdd_{s-1})``,
    ``c = (0, 1/2, 1/2, 1)``, and the step adds ``dt (k_1 + 2 k_2 + 2 k_3 + k_4) / 6``.
    """
    bad = forward(m, w.forward, q, qd, tau, gravity, f_ext, qdd, w.no_wrenches)
    if bad >= 0:
        return bad
    if rk4:
        q_s, qd_s, qdd_s = w.q_stage, w.qd_stage, w.qdd_stage
        for k in range(m.dof):
            q_next[k] = q[k] + dt / 6.0 * qd[k]
            qd_next[k] = qd[k] + dt / 6.0 * qdd[k]
            q_s[k] = q[k] + 0.5 * dt * qd[k]
            qd_s[k] = qd[k] + 0.5 * dt * qdd[k]
        for c, weight in ((0.5, 1.0 / 3.0), (1.0, 1.0 / 3.0), (0.0, 1.0 / 6.0)):  # stages 2, 3, 4
            bad = forward(m, w.forward, q_s, qd_s, tau, gravity, f_ext, qdd_s, w.no_wrenches)
            if bad >= 0:
                return bad
            for k in range(m.dof):
                q_next[k] += weight * dt * qd_s[k]
                qd_next[k] += weight * dt * qdd_s[k]
                q_s[k] = q[k] + c * dt * qd_s[k]  # the next stage's point (unused after stage 4)
                qd_s[k] = qd[k] + c * dt * qdd_s[k]
    else:  # semi-implicit Euler
        for k in range(m.dof):
            qd_next[k] = qd[k] + dt * qdd[k]
            q_next[k] = q[k] + dt * qd_next[k]
    for k in range(m.dof):  # hard stops
        if q_next[k] <= limits[0, k]:
            q_next[k] = limits[0, k]
            qd_next[k] = max(qd_next[k], 0.0)
        elif q_next[k] >= limits[1, k]:
            q_next[k] = limits[1, k]
            qd_next[k] = min(qd_next[k], 0.0)
    return -1


@kernel
def step_pass(fdata, idata, q, qd, tau, dt, rk4, gravity, f_ext, limits, q_next, qd_next, qdd):
    """:func:`integrate` for one state, with its own workspace."""
    m = model_view(fdata, idata)
    return integrate(m, step_workspace(m.nb, m.dof), q, qd, tau, dt, rk4, gravity, f_ext, limits, q_next, qd_next,
                     qdd)


@batch_kernel
def step_pass_batch(fdata, idata, q, qd, tau, dt, rk4, gravity, f_ext, limits, q_next, qd_next, qdd, status):
    """:func:`integrate` for each row of a batch, chunks in parallel, one workspace per chunk."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # made in the parallel body: numba cannot pass this namedtuple into it
        w = step_workspace(m.nb, m.dof)
        for n in chunk_rows(chunk, q.shape[0]):
            status[n] = integrate(m, w, q[n], qd[n], tau[n], dt, rk4, gravity, f_ext[n], limits, q_next[n],
                                  qd_next[n], qdd[n])


def advance(robot, q, qd, tau, dt, method, g, f_ext):
    """One step on checked arrays: ``(q_next, qd_next, qdd)``, ``qdd`` the forward dynamics at ``(q, qd)``."""
    limits = np.ascontiguousarray(robot.position_limits.T)  # a strided view would cost numba microseconds
    q_next, qd_next, qdd = np.empty(q.shape), np.empty(q.shape), np.empty(q.shape)
    rk4 = method == "rk4"
    if q.ndim == 2:
        status = np.empty(len(q), np.int64)
        step_pass_batch(robot.fdata, robot.idata, q, qd, tau, dt, rk4, g,
                        np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]), limits, q_next, qd_next, qdd, status)
        bad = np.flatnonzero(status >= 0)
        if bad.size:
            raise singular(robot, status[bad[0]], f" at state {bad[0]}")
    else:
        bad = step_pass(robot.fdata, robot.idata, q, qd, tau, dt, rk4, g, f_ext[0], limits, q_next, qd_next, qdd)
        if bad >= 0:
            raise singular(robot, bad, "")
    return q_next, qd_next, qdd


def step(robot, q, qd, tau, dt, *, method="rk4", gravity=None, external_wrenches=None):
    """The state ``(q, qd)`` after ``dt`` seconds with torques ``tau`` held constant, joint limits stopping joints.

    ``method``: ``"rk4"`` or ``"semi_implicit"``; ``gravity`` and ``external_wrenches`` as in
    :func:`~rne_dynamics.aba.forward_dynamics`. One state ``(dof,)`` or a batch ``(N, dof)`` (``tau`` the same shape).
    The whole step runs compiled: one call, four forward dynamics (RK4) in one workspace.
    """
    q, qd, tau = states(robot, q=q, qd=qd, tau=tau)
    dt = _positive_time(dt, "dt")
    _check_method(method)
    g = gravity_vector(gravity)
    f_ext = body_wrenches(robot, external_wrenches, q.shape[0] if q.ndim == 2 else 1)
    return advance(robot, q, qd, tau, dt, method, g, f_ext)[:2]


def _torque_input(robot, tau, shape):
    """``tau(t, q, qd)`` for an array or a callable, returning checked arrays of ``shape``."""
    if callable(tau):
        def torque(t, q, qd):
            (value,) = states(robot, tau=tau(t, q, qd))
            if value.shape != shape:
                raise StateError(f"the torque callable returned shape {value.shape} at t = {t} s; expected {shape}")
            return value
        return torque
    (value,) = states(robot, tau=tau)
    try:
        value = np.broadcast_to(value, shape)
    except ValueError:
        raise StateError(f"tau has shape {value.shape}; the state has shape {shape}") from None
    return lambda t, q, qd: value


def simulate(robot, q0, qd0, tau, duration, dt, *, method="rk4", gravity=None):
    """Integrate the motion from ``(q0, qd0)`` for ``duration`` seconds in steps of ``dt`` (``round(duration / dt)``
    steps) and return the :class:`Trajectory`, initial state included.

    ``tau``: an array ``(dof,)`` (or the batch's shape) held throughout, or a callable ``tau(t, q, qd)`` evaluated at
    the start of each step (a controller). One initial state ``(dof,)`` or a batch ``(N, dof)``. Joint limits stop
    joints (module notes); an initial state outside them is an error.
    """
    q, qd = states(robot, q0=q0, qd0=qd0)
    dt = _positive_time(dt, "dt")
    _check_method(method)
    try:
        duration = float(duration)
    except (TypeError, ValueError):
        raise StateError(f"duration must be a number of seconds, got {duration!r}") from None
    if not (math.isfinite(duration) and duration >= 0.0):
        raise StateError(f"duration must be finite and >= 0 s, got {duration}")
    outside = np.argwhere((q < robot.position_limits[:, 0]) | (q > robot.position_limits[:, 1]))
    if outside.size:
        k = outside[0][-1]
        raise StateError(f"q0 of joint '{robot.joint_names[k]}' is {q[tuple(outside[0])]}, outside its limits "
                         f"{robot.position_limits[k].tolist()}")
    g = gravity_vector(gravity)
    f_ext = body_wrenches(robot, None, 1)
    torque = _torque_input(robot, tau, q.shape)
    steps = int(round(duration / dt))
    t = dt * np.arange(steps + 1)
    out = {name: np.empty((steps + 1,) + q.shape) for name in ("q", "qd", "qdd", "tau")}
    for k in range(steps + 1):
        tau_k = torque(t[k], q, qd)
        if k < steps:
            q_next, qd_next, qdd = advance(robot, q, qd, tau_k, dt, method, g, f_ext)
        else:
            qdd = accelerations(robot, q, qd, tau_k, g, f_ext)
        out["q"][k], out["qd"][k], out["qdd"][k], out["tau"][k] = q, qd, qdd, tau_k
        if k < steps:
            q, qd = q_next, qd_next
    return Trajectory(t, **out)
