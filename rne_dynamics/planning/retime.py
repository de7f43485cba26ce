"""Time-optimal retiming of a fixed geometric path under torque and velocity limits, by reachability analysis
(TOPP-RA: Pham & Pham, "A new approach to time-optimal path parameterization based on reachability analysis",
IEEE T-RO 2018).

Along a path ``q(s)``, ``s`` in ``[0, 1]``, with path speed ``sd`` and acceleration ``sdd``, inverse dynamics is
affine in ``u = sdd`` and ``x = sd^2``:

    qd = q' sd,   qdd = q' sdd + q'' sd^2,   tau = a(s) u + b(s) x + c(s)
    a = M q',   b = M q'' + C(q, q') q',   c = g(q) + friction sign(q') (+ damping q' sd, see retime)

(``a``, ``b``, ``c`` are three inverse-dynamics calls over the grid), and the velocity limits bound ``x``:
``x q'_k^2 <= qd_max_k^2``. On a grid ``s_0 < ... < s_N`` with ``x_{i+1} = x_i + 2 Δ_i u_i`` (constant ``u`` per
stage), the backward pass computes the controllable sets ``K_i = [lo_i, hi_i]`` of ``x_i`` from which ``K_N`` can be
reached, the forward pass takes at each stage the largest ``u`` that stays in ``K_{i+1}``: the time-optimal
parameterisation of the discretised problem (constraints at the grid points: toppra's "collocation" scheme).
"""
from dataclasses import dataclass

import numpy as np

from ..algorithms.rnea import inverse_dynamics
from ..errors import ModelError
from .bspline import time_grid
from .limits import Limits


DAMPING_PASSES = 8
CHECK_PASSES = 12  # retimings with lowered limits until the check_period samples are within the limits
CHECK_MARGIN = 1e-4  # a lowered limit goes this fraction below what the excess ratio asks
POSITION_TOLERANCE = 1e-12  # rad or m: a path through a waypoint on a position limit stays within it


class PlanningError(ValueError):
    """No motion satisfies the request (infeasible limits, no convergence); the message gives the reason.
    ``result``, when not ``None``, holds the best motion found (it violates a limit or is not optimal)."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class Polyline:
    """The straight segments through ``waypoints`` ``(K, nq)``, ``s`` proportional to length along it; the robot
    must stop at the interior waypoints (``stops``), where the direction jumps."""

    def __init__(self, waypoints):
        self.waypoints = np.atleast_2d(np.asarray(waypoints, float))
        lengths = np.linalg.norm(np.diff(self.waypoints, axis=0), axis=1)
        if len(self.waypoints) < 2 or (lengths == 0).any():
            raise ValueError("a path needs at least two waypoints, each different from the one before")
        self.breaks = np.concatenate([[0.0], np.cumsum(lengths) / lengths.sum()])
        self.breaks[-1] = 1.0
        self.stops = self.breaks[1:-1]

    def __call__(self, s):
        """``(q, dq/ds, d2q/ds2)`` at ``s`` ``(N,)``, each ``(N, nq)``; at a waypoint, the segment leaving it."""
        s = np.asarray(s, float)
        segment = np.clip(np.searchsorted(self.breaks, s, side="right") - 1, 0, len(self.breaks) - 2)
        tangent = np.diff(self.waypoints, axis=0) / np.diff(self.breaks)[:, None]
        dq = tangent[segment]
        return self.waypoints[segment] + dq * (s - self.breaks[segment])[:, None], dq, np.zeros_like(dq)


class SplinePath:
    """The cubic spline through ``waypoints`` ``(K, nq)`` (not-a-knot ends; a parabola for three waypoints, the
    straight line for two), ``s`` at the waypoints proportional to the chord length: a path through every waypoint
    without stopping there (toppra's ``SplineInterpolator`` over chord length). Repeated waypoints count once."""

    def __init__(self, waypoints):
        from scipy.interpolate import CubicSpline

        points = np.atleast_2d(np.asarray(waypoints, float))
        moved = np.ones(len(points), bool)  # the first waypoint (if any), then each that differs from the one before
        moved[1:] = (np.diff(points, axis=0) != 0).any(axis=1)
        points = points[moved]
        if len(points) < 2 or not np.isfinite(points).all():
            raise ValueError("a path needs at least two different waypoints, all finite")
        lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
        self.waypoints = points
        self.breaks = np.concatenate([[0.0], np.cumsum(lengths) / lengths.sum()])
        self.breaks[-1] = 1.0
        self.spline = CubicSpline(self.breaks, points, bc_type="not-a-knot")

    def __call__(self, s):
        """``(q, dq/ds, d2q/ds2)`` at ``s`` ``(N,)``, each ``(N, nq)``."""
        s = np.asarray(s, float)
        return self.spline(s), self.spline(s, 1), self.spline(s, 2)


@dataclass(frozen=True)
class RetimedPath:
    """A path with its time-optimal timing: grid ``s`` ``(N + 1,)``, squared path speeds ``x = sd^2`` there, path
    accelerations ``u`` ``(N,)`` per stage and the times ``t`` ``(N + 1,)`` at the grid points; the ``robot`` and
    ``gravity`` it was timed for."""
    path: object
    s: np.ndarray
    x: np.ndarray
    u: np.ndarray
    t: np.ndarray
    robot: object = None
    gravity: tuple = (0.0, 0.0, -9.81)

    @property
    def duration(self):
        return float(self.t[-1])

    def grid(self, period):
        """Times from 0 to the duration both included, evenly spaced at most ``period`` apart."""
        return time_grid(self.duration, period)

    def sample_with_torques(self, times):
        """``(q, qd, qdd, tau)`` at ``times``: :meth:`sample` and its inverse dynamics (drive terms included)."""
        q, qd, qdd = self.sample(times)
        return q, qd, qdd, inverse_dynamics(self.robot, q, qd, qdd, gravity=self.gravity).torques

    def sample(self, times):
        """``(q, qd, qdd)`` at ``times`` (s), each ``(len(times), nq)``: within a stage ``u`` is constant, so ``s``
        is quadratic in time and the values are exact for the discretised timing."""
        times = np.clip(np.asarray(times, float), 0.0, self.duration)
        i = np.clip(np.searchsorted(self.t, times, side="right") - 1, 0, len(self.u) - 1)
        dt = times - self.t[i]
        sd0 = np.sqrt(self.x[i])
        s = np.minimum(self.s[i] + sd0 * dt + 0.5 * self.u[i] * dt ** 2, self.s[i + 1])
        sd, sdd = sd0 + self.u[i] * dt, self.u[i]
        q, dq, ddq = self.path(s)
        return q, dq * sd[:, None], dq * sdd[:, None] + ddq * (sd ** 2)[:, None]


def retime(robot, path, *, stages=1000, velocity_limits=None, effort_limits=None, acceleration_limits=None,
           gravity=(0.0, 0.0, -9.81), start_speed=0.0, end_speed=0.0, check_period=None):
    """Time-optimal timing of a fixed geometric ``path`` under the effort, velocity and acceleration limits (TOPP-RA,
    module docstring), as a :class:`RetimedPath`.

    ``path``: waypoints ``(K, nq)`` (the straight segments through them, stopping at interior waypoints:
    :class:`Polyline`; :class:`SplinePath` passes them without stopping), or a callable ``s -> (q, dq/ds, d2q/ds2)``
    on ``s`` in ``[0, 1]`` (batch ``(N,)`` to ``(N, nq)`` each). ``stages``: grid intervals (uniform in ``s``;
    interior waypoints are grid points). Limits default to the URDF's (``robot.velocity_limits``,
    ``robot.effort_limits``; none on accelerations; a mapping ``{joint: value}`` changes the joints it names). A
    joint acceleration ``qdd = q' u + q'' x`` is affine in ``(u, x)`` as the torque is, so its limits are rows of the
    same kind. ``start_speed``, ``end_speed``: ``ds/dt`` at the ends. Raises :class:`PlanningError` when no timing
    meets the limits (e.g. gravity alone exceeds an effort limit along the path), naming where.
    Viscous drive damping (``robot.damping``, torque ``damping q' sd``, not affine in ``x``) enters ``c`` at the
    speeds of the previous pass, until they repeat (a fixed point, at most :data:`DAMPING_PASSES` passes).

    The limits hold at the grid points (collocation); between them the constant ``u`` of a stage can exceed them
    slightly (0.6% of a UR5's effort limit at 1000 stages). With ``check_period`` (s) the motion is sampled that
    often: a joint whose velocity, acceleration or torque exceeds its limit there has that limit lowered by the
    excess ratio and the path is retimed, until every sample is within the limits (at most :data:`CHECK_PASSES`);
    a sample outside the position limits (a spline through waypoints overshoots) raises :class:`PlanningError`.
    """
    if robot.nq != robot.nv:
        raise ModelError(f"retime: robot '{robot.name}' has joints of several coordinates (nq {robot.nq} != nv "
                         f"{robot.nv}); paths are in joint space of one coordinate per joint")
    limits = Limits.of(robot, velocity=velocity_limits, effort=effort_limits, acceleration=acceleration_limits)
    path = path if callable(path) else Polyline(path)
    stops = getattr(path, "stops", ())
    s = _grid(stops, stages)
    q, dq, ddq = path(s)
    a, b, c = _path_dynamics(robot, q, dq, ddq, gravity)
    # the torque rows, then the acceleration rows qdd = dq u + ddq x
    rows = np.hstack([a, dq]), np.hstack([b, ddq]), np.hstack([c, np.zeros_like(c)])
    damping = np.hstack([robot.damping * dq, np.zeros_like(dq)])  # viscous drive torque per unit sd
    bounds = np.stack([limits.velocity, limits.effort, limits.acceleration])
    for _ in range(CHECK_PASSES):
        x, u = _timing(s, q, dq, rows, damping, bounds, stops, start_speed, end_speed)
        root = np.sqrt(x)
        if ((root[:-1] + root[1:]) == 0).any():
            raise PlanningError("retime: the path speed stays zero over a stage: the effort limits cannot move "
                                "the robot")
        t = np.concatenate([[0.0], np.cumsum(2.0 * np.diff(s) / (root[:-1] + root[1:]))])
        retimed = RetimedPath(path, s, x, u, t, robot, tuple(gravity))
        if check_period is None:
            return retimed
        times = retimed.grid(check_period)
        q, qd, qdd, tau = retimed.sample_with_torques(times)
        outside = np.maximum(limits.position[:, 0] - q, q - limits.position[:, 1])
        if outside.max() > POSITION_TOLERANCE:  # the path's, whatever the timing
            k, j = np.unravel_index(np.argmax(outside), outside.shape)
            raise PlanningError(f"retime: the path leaves the position limits of '{robot.joint_names[j]}' by "
                                f"{outside[k, j]:.3g} at t = {times[k]:.4f} s")
        peaks = np.stack([np.abs(v).max(axis=0) for v in (qd, tau, qdd)])
        ratio = np.where(np.isfinite(bounds), peaks / np.stack([limits.velocity, limits.effort,
                                                                 limits.acceleration]), 0.0)
        if ratio.max() <= 1.0:
            return retimed
        bounds = np.where(ratio > 1.0, bounds / np.maximum(ratio, 1.0) * (1.0 - CHECK_MARGIN), bounds)  # 0: unmoved
    raise PlanningError(f"retime: between the grid points a limit is still exceeded by {100 * (ratio.max() - 1):.3g}%"
                        f" after {CHECK_PASSES} passes; more stages may help")


def _timing(s, q, dq, rows, damping, bounds, stops, start_speed, end_speed):
    """``(x, u)`` of the time-optimal parameterisation on grid ``s`` under ``bounds`` (velocity, effort,
    acceleration per joint), damping by the fixed point of :func:`retime`."""
    velocity, row_bounds = bounds[0], np.concatenate(bounds[1:])
    with np.errstate(divide="ignore"):
        x_max = np.min(np.where(dq != 0, (velocity / np.abs(dq)) ** 2, np.inf), axis=1)
    x_max[np.isin(s, stops)] = 0.0
    x_max[0], x_max[-1] = min(x_max[0], start_speed ** 2), min(x_max[-1], end_speed ** 2)
    x_min = np.zeros_like(x_max)
    x_min[0], x_min[-1] = start_speed ** 2, end_speed ** 2
    if x_min[-1] > x_max[-1]:
        raise PlanningError(f"retime: the end speed {end_speed} exceeds the velocity limits at the end of the path")
    a, b, c = rows
    x, u = _time_optimal(s, q, a, b, c, row_bounds, x_min, x_max)
    for _ in range(DAMPING_PASSES if damping.any() else 0):
        previous = x
        x, u = _time_optimal(s, q, a, b, c + damping * np.sqrt(x)[:, None], row_bounds, x_min, x_max)
        if np.max(np.abs(np.sqrt(x) - np.sqrt(previous))) <= 1e-9 * np.sqrt(x.max()):
            break
    return x, u


def _time_optimal(s, q, a, b, c, effort, x_min, x_max):
    """``(x, u)``: the TOPP-RA backward pass (controllable sets) and forward pass (module docstring)."""
    steps = 2.0 * np.diff(s)
    bounds = [_torque_bounds(a[i], b[i], c[i], effort) for i in range(len(s))]
    K = np.empty((len(s), 2))
    K[-1] = x_min[-1], x_max[-1]
    for i in range(len(s) - 2, -1, -1):
        K[i] = _controllable(bounds[i], K[i + 1], steps[i], x_min[i], x_max[i])
        if K[i, 0] > K[i, 1]:
            q_text = ", ".join(f"{v:.3f}" for v in q[i])
            raise PlanningError(f"retime: no speed along the path at s = {s[i]:.4f} (q = [{q_text}]) meets the "
                                f"effort limits (the limits cannot hold the robot there)")
    x = np.empty(len(s))
    x[0] = x_min[0]
    u = np.empty(len(s) - 1)
    for i in range(len(s) - 1):
        lower, upper = _u_range(bounds[i], K[i + 1], steps[i], x[i])
        x[i + 1] = min(max(x[i] + steps[i] * max(upper, lower), K[i + 1, 0], 0.0), K[i + 1, 1])
        u[i] = (x[i + 1] - x[i]) / steps[i]
    return x, u


def _grid(stops, stages):
    """``stages`` intervals uniform in ``s`` on ``[0, 1]``, each stop a grid point."""
    edges = np.concatenate([[0.0], np.sort(stops), [1.0]])
    pieces = [np.linspace(lo, hi, max(1, round(stages * (hi - lo))) + 1)[:-1] for lo, hi in zip(edges, edges[1:])]
    return np.concatenate(pieces + [[1.0]])


def _path_dynamics(robot, q, dq, ddq, gravity):
    """``(a, b, c)`` of ``tau = a u + b x + c`` per grid point (module docstring), by inverse dynamics of the robot
    without drive friction and damping; Coulomb friction is added to ``c`` (its sign is the direction of travel,
    ``sd >= 0``), damping by :func:`retime`."""
    none = np.zeros(len(robot.joint_names))
    rigid = robot.with_drive(damping=none, friction=none)
    zero, no_gravity = np.zeros_like(dq), (0.0, 0.0, 0.0)
    a = inverse_dynamics(rigid, q, zero, dq, gravity=no_gravity).torques
    b = inverse_dynamics(rigid, q, dq, ddq, gravity=no_gravity).torques
    c = inverse_dynamics(rigid, q, zero, zero, gravity=gravity).torques + robot.friction * np.sign(dq)
    return a, b, c


def _torque_bounds(a, b, c, effort):
    """The limits ``-effort <= a u + b x + c <= effort`` of one grid point as lower and upper bounds on ``u``,
    each ``alpha + beta x`` (rows ``(alpha, beta)``), and as bounds on ``x`` alone where ``a`` vanishes."""
    finite = np.isfinite(effort)
    moving = finite & (np.abs(a) > 1e-12 * max(1.0, np.abs(a).max()))
    sign = np.sign(a[moving])
    lo = np.column_stack([(-sign * effort[moving] - c[moving]) / a[moving], -b[moving] / a[moving]])
    hi = np.column_stack([(sign * effort[moving] - c[moving]) / a[moving], -b[moving] / a[moving]])
    still = finite & ~moving  # -effort <= b x + c <= effort
    return lo, hi, b[still], c[still], effort[still]


def _u_bounds(bounds, K_next, step):
    """The lower and upper bounds on ``u`` of a stage, with ``x + step u`` in the next controllable set added."""
    lo, hi = bounds[:2]
    lo = np.vstack([lo, [K_next[0] / step, -1.0 / step]])
    hi = np.vstack([hi, [K_next[1] / step, -1.0 / step]])
    return lo, hi


def _controllable(bounds, K_next, step, x_min, x_max):
    """``[lo, hi]`` of the ``x`` in ``[x_min, x_max]`` for which some ``u`` meets the bounds and reaches ``K_next``:
    every lower bound on ``u`` below every upper bound, ``(beta_l - beta_h) x <= alpha_h - alpha_l`` for each pair."""
    lo, hi = _u_bounds(bounds, K_next, step)
    slope = (lo[:, None, 1] - hi[None, :, 1]).ravel()
    room = (hi[None, :, 0] - lo[:, None, 0]).ravel()
    b, c, effort = bounds[2:]
    slope, room = np.concatenate([slope, b, -b]), np.concatenate([room, effort - c, effort + c])
    with np.errstate(divide="ignore", invalid="ignore"):
        upper = np.min(np.where(slope > 0, room / slope, np.inf), initial=x_max)
        lower = np.max(np.where(slope < 0, room / slope, -np.inf), initial=x_min)
    tolerance = 1e-9 * (1.0 + abs(upper))
    if (room[slope == 0] < -tolerance).any() or lower > upper + tolerance:
        return np.array([1.0, 0.0])  # empty
    return np.array([min(lower, upper), upper])


def _u_range(bounds, K_next, step, x):
    """The largest lower bound and the smallest upper bound on ``u`` at ``x``."""
    lo, hi = _u_bounds(bounds, K_next, step)
    return np.max(lo[:, 0] + lo[:, 1] * x), np.min(hi[:, 0] + hi[:, 1] * x)
