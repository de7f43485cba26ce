"""Fixed-step simulation: the forward dynamics (:mod:`rne_dynamics.algorithms.aba`) integrated over time, on the
configuration manifold.

The state is ``(q, v)``: ``q`` (``nq``) on the joints' Lie group, ``v = qd`` (``nv``) the child-frame velocities, and
``dq/dt = q v`` (right-trivialised: ``q(t + dt) ≈ q(t) ⊕ v dt``, see
:func:`~rne_dynamics.model.configuration.integrate`), ``dv/dt = qdd(q, v, tau)``. Positions advance with the
group's exponential, never ``q + dt qd``, so floating bases, planar and spherical joints stay on their manifolds
(quaternions unit). Two integrators, the torque held over each step:

- ``"rk4"``: the package's one integrator on the manifold, classical Runge-Kutta 4 as a Runge-Kutta-Munthe-Kaas
  method (:mod:`~rne_dynamics.algorithms.integrator`; order 4 on every joint type). Four forward-dynamics calls per
  step.
- ``"semi_implicit"``: symplectic Euler, ``v' = v + dt qdd(q, v)``, ``q' = q ⊕ dt v'``, one call per step (order 1).

Joint limits (``robot.position_limits``, of one-coordinate joints) are hard stops: after each step a joint past its
limit is put back on it and its velocity into the limit is zeroed, so it never passes through (an inelastic stop; a
velocity away from the limit is kept). Continuous joints and joints of several coordinates have no limits.
"""
import math
from typing import NamedTuple

import numpy as np

from .._jit import helper, memory
from .aba import ACCELERATIONS, forward, forward_workspace
from .driver import OK, Algorithm
from ..errors import StateError
from .inputs import gravity_vector, states
from ..model.configuration import integrate_configuration
from .integrator import STAGES, rkmk4_stage, stages_workspace
from ..model.joints import has_stops

METHODS = ("rk4", "semi_implicit")


class Trajectory(NamedTuple):
    """A simulated motion, sample ``k`` at time ``t[k] = k dt``: ``t`` ``(T,)``; ``q`` ``(T, …, nq)``; ``qd``,
    ``qdd``, ``tau`` ``(T, …, nv)``. ``tau[k]`` is the torque applied from ``t[k]`` to ``t[k + 1]`` and ``qdd[k]``
    the forward dynamics at sample ``k`` (the free acceleration: a joint held at a limit shows the acceleration the
    stop cancels)."""
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


#: The next state and the accelerations now, then forward dynamics' workspace, the integrator's stages and a stage's
#: accelerations.
step_memory = memory("step_memory", results=dict(q_next=("nq",), qd_next=("nv",), qdd=("nv",)),
                     forward=forward_workspace, stages=stages_workspace.sized(n="nv"), qdd_stage=("nv",),
                     no_wrenches=(0, 6))


@helper
def joint_stops(m, limits, q_next, qd_next):
    """Hard stops of the one-coordinate joints: a coordinate at or past a limit is put on it and its velocity into
    the limit zeroed (a mimic body repeats its source's stop: the same result)."""
    for i in range(m.nb):
        if has_stops(m.jtype[i]):
            k = m.idx_q[i]
            c = m.col_v[m.col_start[i]]
            if q_next[k] <= limits[0, k]:
                q_next[k] = limits[0, k]
                qd_next[c] = max(qd_next[c], 0.0)
            elif q_next[k] >= limits[1, k]:
                q_next[k] = limits[1, k]
                qd_next[c] = min(qd_next[c], 0.0)


@helper
def integrate(m, w, q, qd, tau, f_ext, gravity, dt, rk4, limits):
    """One step from ``(q, qd)`` to ``(q_next, qd_next)``, joint limits applied; ``qdd``: the forward dynamics at
    ``(q, qd)``; ``limits``: ``(2, nq)`` lower and upper positions. Returns ``OK``, or ``SINGULAR`` plus the
    coordinate of a joint that drives no mass (then the outputs are undefined). RK4: the integrator's stages
    (:func:`~rne_dynamics.algorithms.integrator.rkmk4_stage`), each rate the forward dynamics at the stage's point.
    """
    q_next, qd_next, qdd = w.q_next, w.qd_next, w.qdd
    bad = forward(m, w.forward, q, qd, tau, gravity, f_ext, qdd, w.no_wrenches)
    if bad != OK:
        return bad
    if rk4:
        rkmk4_stage(m, q, qd, 0, dt, qdd, w.stages, q_next, qd_next)
        for s in range(1, STAGES):
            bad = forward(m, w.forward, w.stages.q, w.stages.x, tau, gravity, f_ext, w.qdd_stage, w.no_wrenches)
            if bad != OK:
                return bad
            rkmk4_stage(m, q, qd, s, dt, w.qdd_stage, w.stages, q_next, qd_next)
    else:  # semi-implicit Euler
        for k in range(m.nv):
            qd_next[k] = qd[k] + dt * qdd[k]
        integrate_configuration(m, q, qd_next, dt, q_next)
    joint_stops(m, limits, q_next, qd_next)
    return OK


STEP = Algorithm(integrate, step_memory, ("q", "qd", "tau"), "the next state", lambda *state: state, gravity=True,
                 wrenches=True, extras=("dt", "rk4", "limits"))


def advance(robot, q, qd, tau, dt, method, gravity, external_wrenches):
    """One step: ``(q_next, qd_next, qdd)``, ``qdd`` the forward dynamics at ``(q, qd)``."""
    return STEP.run(robot, None, (q, qd, tau), gravity, external_wrenches,
                extras=(dt, method == "rk4", np.ascontiguousarray(robot.position_limits.T)))


def step(robot, q, qd, tau, dt, *, method="rk4", gravity=None, external_wrenches=None):
    """The state ``(q, qd)`` after ``dt`` seconds with torques ``tau`` held constant, joint limits stopping joints.

    ``method``: ``"rk4"`` or ``"semi_implicit"``; ``gravity`` and ``external_wrenches`` as in
    :func:`~rne_dynamics.algorithms.aba.forward_dynamics`. One state (``q`` ``(nq,)``, ``qd`` and ``tau`` ``(nv,)``)
    or a batch ``(N, nq)``, ``(N, nv)``. Returns ``(q, qd)``, ``q`` with unit quaternions. The whole step runs
    compiled: one call, four forward dynamics (RK4) in one workspace.
    """
    q, qd, tau = states(robot, q=q, qd=qd, tau=tau)
    dt = _positive_time(dt, "dt")
    _check_method(method)
    return advance(robot, q, qd, tau, dt, method, gravity, external_wrenches)[:2]


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

    ``tau``: an array ``(nv,)`` (or the batch's shape) held throughout, or a callable ``tau(t, q, qd)`` evaluated at
    the start of each step (a controller). One initial state (``q0`` ``(nq,)``, ``qd0`` ``(nv,)``) or a batch
    ``(N, nq)``, ``(N, nv)``. Joint limits stop joints (module notes); an initial state outside them is an error.
    """
    q, qd = states(robot, q=q0, qd=qd0)
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
        raise StateError(f"q0 of joint '{robot.q_names[k]}' is {q[tuple(outside[0])]}, outside its limits "
                         f"{robot.position_limits[k].tolist()}")
    g = gravity_vector(gravity)
    torque = _torque_input(robot, tau, qd.shape)
    steps = int(round(duration / dt))
    t = dt * np.arange(steps + 1)
    out = {name: np.empty((steps + 1,) + (q if name == "q" else qd).shape) for name in ("q", "qd", "qdd", "tau")}
    for k in range(steps + 1):
        tau_k = torque(t[k], q, qd)
        if k < steps:
            q_next, qd_next, qdd = advance(robot, q, qd, tau_k, dt, method, g, None)
        else:
            qdd = ACCELERATIONS.run(robot, None, (q, qd, tau_k), g)
        out["q"][k], out["qd"][k], out["qdd"][k], out["tau"][k] = q, qd, qdd, tau_k
        if k < steps:
            q, qd = q_next, qd_next
    return Trajectory(t, **out)
