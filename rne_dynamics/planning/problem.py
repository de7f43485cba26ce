"""Dynamic motion planning by B-spline trajectory optimisation (Barman 2020, Sec. 4.1), with analytic gradients.

Design variables: the free control points ``P`` of a clamped B-spline in joint space and, unless fixed, the duration
``T`` (:mod:`.bspline`). Boundary conditions fix the control points at the ends: at ``s = 0``, ``B(0) P = q_0``,
``B'(0) P = T v_0`` and (when given) ``B''(0) P = T^2 a_0`` involve only ``P_0, P_1, P_2``, so those are
``P_F = R_F^-1 r(T)``, quadratic in ``T``; the same at ``s = 1``. Objectives (Barman eq. 4.16, 4.18):

    time:   T
    effort: E = int_0^T |tau|^2 dt = T sum_j w_j |tau(s_j)|^2        (Simpson weights w_j on the nodes s_j)
    mixed:  (1 - u) T + u E

Constraints: ``|tau_k| <= (1 - margin) tau_max_k`` at the collocation nodes ``s_j`` (uniform, ``collocation`` per
knot span, plus nodes added where the fine-grid check found an excess), scaled by the limit. Velocity and position
limits hold on the whole curve by the convex hull property (:mod:`.bspline`): ``|D P| <= qd_max T`` (linear in
``P, T``) and the control points within the position limits (bounds). Via points are equalities
``B(s_v) P = q_v`` at fixed normalised times ``s_v``.

Gradients (the chain rule of Barman eq. 4.15, with the B-spline's inner derivatives of :mod:`.bspline`): for each
node, with ``D_q, D_qd, D_qdd`` from :func:`~rne_dynamics.inverse_dynamics_derivatives`,

    dtau/dP_i = D_q B_i + D_qd B_i' / T + D_qdd B_i'' / T^2
    dtau/dT   = -(D_qd qd + 2 D_qdd qdd) / T + sum_{i in F} dtau/dP_i dP_i/dT

(``dP_F/dT = R_F^-1 dr/dT``); the objective's follow by the product rule. All nodes go through one batch call.
(Derived here, not copied: Barman's printed sensitivity equations have errors.)
"""
import time
from dataclasses import dataclass, field

import numpy as np

from ..algorithms.derivatives import inverse_dynamics_derivatives
from ..algorithms.gravity import gravity_torques
from ..algorithms.rnea import inverse_dynamics
from ..errors import ModelError, StateError
from .bspline import ClampedBasis, SplineTrajectory
from .limits import Limits, check_limits
from .retime import PlanningError, Polyline, retime

OBJECTIVES = ("time", "effort", "mixed")
REFINEMENT = (16, 32, 64)  # control points tried in turn by plan() for minimum time
GRADIENTS = ("analytic", "finite-difference")


@dataclass(frozen=True)
class Iterate:
    """One solver iteration: its number (from 1 in each :meth:`TrajectoryProblem.solve`), the duration ``T`` (s),
    the objective and the largest constraint violation at the collocation nodes (a fraction of the limit); which
    solve it belongs to: the spline's ``control_points`` (:func:`plan` refines 16, 32, 64) and the ``check_round``
    (0, then 1, 2 ... after nodes were added where the check between nodes found an excess)."""
    iteration: int
    duration: float
    objective: float
    violation: float
    control_points: int = 0
    check_round: int = 0


@dataclass
class PlannedTrajectory:
    """A planned motion: the B-spline ``spline`` (:class:`~rne_dynamics.planning.bspline.SplineTrajectory`) of
    ``duration`` seconds, its ``check`` against the limits on a grid of ``check_period`` seconds
    (:class:`~rne_dynamics.planning.limits.LimitCheck`), ``effort`` (``int |tau|^2 dt``, N^2 m^2 s), the solver's
    ``history`` (:class:`Iterate` per iteration), ``solve_time`` (s, warm start included), ``message``, and
    ``time_gap``: when :func:`plan` refined the spline, the estimated distance to the minimum time (relative)."""
    robot: object
    spline: SplineTrajectory
    limits: Limits
    gravity: tuple
    check: object = None
    effort: float = float("nan")
    history: list = field(default_factory=list)
    solve_time: float = 0.0
    evaluations: int = 0
    message: str = ""
    time_gap: float = float("nan")

    @property
    def duration(self):
        return self.spline.duration

    def sample(self, times):
        """``(q, qd, qdd, tau)`` at ``times`` (s): the spline's exact values and derivatives, ``tau`` its inverse
        dynamics."""
        q, qd, qdd = self.spline.sample(times)
        return q, qd, qdd, inverse_dynamics(self.robot, q, qd, qdd, gravity=self.gravity).torques

    def grid(self, period=1e-3):
        """Sample times from 0 to the duration, at most ``period`` apart."""
        return self.spline.grid(period)


class TrajectoryProblem:
    """A point-to-point motion of ``robot`` from ``start`` to ``goal`` (through ``via`` points) as a nonlinear
    program over a clamped B-spline (module docstring). Use :meth:`solve` (or :func:`plan`); the functions of the
    program (:meth:`objective`, :meth:`constraints`, their gradients) are public for other solvers and for checks.

    ``start``, ``goal``: configurations ``(nq,)``; ``via``: ``(K, nq)`` configurations passed at the normalised
    times ``via_times`` (in ``(0, 1)``; default: where the straight-line, time-optimally retimed path passes them).
    ``start_velocity``, ``goal_velocity``: default zero; ``start_acceleration``, ``goal_acceleration``: default
    free. ``duration``: ``None`` (free) or fixed seconds. ``objective``: ``"time"``, ``"effort"`` (needs a
    duration) or ``"mixed"`` (``(1 - effort_weight) T + effort_weight E``, Barman eq. 4.18). Limits: the URDF's,
    replaced by ``position_limits`` ``(nq, 2)``, ``velocity_limits``, ``effort_limits`` ``(nv,)`` or
    ``{joint: value}`` mappings. ``control_points`` per joint (default 20), spline ``degree`` (3 or 5),
    ``collocation`` nodes per knot span (even; Simpson's rule for the effort). ``margin``: the nodes hold the
    torques within ``(1 - margin)`` of the effort limits, so that between them they stay within the limits.
    """

    def __init__(self, robot, start, goal, *, via=(), via_times=None, start_velocity=None, goal_velocity=None,
                 start_acceleration=None, goal_acceleration=None, duration=None, objective="time",
                 effort_weight=0.5, position_limits=None, velocity_limits=None, effort_limits=None,
                 gravity=(0.0, 0.0, -9.81), control_points=20, degree=3, collocation=4, margin=1e-4):
        if robot.nq != robot.nv:
            raise ModelError(f"plan: robot '{robot.name}' has joints of several coordinates (nq {robot.nq} != nv "
                             f"{robot.nv}); planning is in the joint space of one-coordinate joints")
        self.robot, self.gravity = robot, tuple(float(g) for g in gravity)
        self.limits = Limits.of(robot, position_limits, velocity_limits, effort_limits)
        nv = robot.nv
        via = np.zeros((0, nv)) if len(via) == 0 else _vectors(robot, "via", via, 2)
        self.waypoints = np.vstack([_vectors(robot, "start", start), via, _vectors(robot, "goal", goal)])
        for label, q in zip(["start"] + [f"via point {k + 1}" for k in range(len(via))] + ["goal"], self.waypoints):
            _inside(robot, self.limits, label, q)
        self.velocities = [_vectors(robot, name, np.zeros(nv) if v is None else v)
                           for name, v in (("start_velocity", start_velocity), ("goal_velocity", goal_velocity))]
        self.accelerations = [None if a is None else _vectors(robot, name, a)
                              for name, a in (("start_acceleration", start_acceleration),
                                              ("goal_acceleration", goal_acceleration))]
        if objective not in OBJECTIVES:
            raise StateError(f"objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
        if objective != "time" and duration is None and (objective == "effort" or effort_weight == 1):
            raise StateError(f"objective {objective!r} needs a duration (effort alone falls as the motion slows)")
        if duration is not None and not (np.isfinite(duration) and duration > 0):
            raise StateError(f"duration must be a positive number of seconds, got {duration}")
        if not 0 <= effort_weight <= 1:
            raise StateError(f"effort_weight must be in [0, 1], got {effort_weight}")
        if degree not in (3, 5) or collocation < 2 or collocation % 2:
            raise StateError(f"degree must be 3 or 5 and collocation even, got {degree} and {collocation}")
        self.objective_name, self.effort_weight, self.fixed_duration = objective, float(effort_weight), duration
        self.margin = float(margin)
        self.basis = ClampedBasis(int(control_points), degree)
        self._boundary()
        if self.free.size < 1 + len(via):
            raise StateError(f"control_points: {control_points} leave too few free control points")
        spans = len(self.basis.breakpoints) - 1
        self.nodes = np.linspace(0.0, 1.0, spans * collocation + 1)
        self.weights = np.full(len(self.nodes), 2.0)  # composite Simpson on each span
        self.weights[1::2] = 4.0
        self.weights[[0, -1]] = 1.0
        self.weights /= 3.0 * (len(self.nodes) - 1)
        self.via_times = None if via_times is None else np.asarray(via_times, float)
        if self.via_times is not None and (self.via_times.shape != (len(via),) or np.any(self.via_times <= 0)
                                           or np.any(self.via_times >= 1) or np.any(np.diff(self.via_times) <= 0)):
            raise StateError(f"via_times: {len(via)} increasing numbers in (0, 1) expected, got {via_times}")
        self.scale = (1.0, 1.0)  # duration and objective of the warm start: the program sees x_T = T / T_ref
        self._set_nodes(self.nodes)
        self._cache = (None, None)
        self.evaluations = 0

    # ---- the design vector ---------------------------------------------------------------------------------------

    def _boundary(self):
        """The end control points ``F`` fixed by the boundary conditions, as ``P_F = R_F^-1 r(T)``."""
        n, B = self.basis.count, self.basis
        rows, fixed, self._rhs = [], [], []
        for end, s, q, v, a in ((0, 0.0, self.waypoints[0], self.velocities[0], self.accelerations[0]),
                                (1, 1.0, self.waypoints[-1], self.velocities[1], self.accelerations[1])):
            for order, value in enumerate((q, v, a)):
                if value is not None:
                    rows.append(B([s], order)[0])
                    fixed.append(order if end == 0 else n - 1 - order)
                    self._rhs.append((order, value))
        self.fixed = np.array(fixed)
        self.free = np.setdiff1d(np.arange(n), self.fixed)
        self._R_inv = np.linalg.inv(np.array(rows)[:, self.fixed])

    def _fixed_points(self, T):
        """``P_F`` and ``dP_F/dT``, each ``(len(F), nv)``: right-hand sides ``T^order * value``."""
        r = np.array([T ** order * value for order, value in self._rhs])
        dr = np.array([order * T ** (order - 1) * value if order else 0 * value for order, value in self._rhs])
        return self._R_inv @ r, self._R_inv @ dr

    @property
    def size(self):
        """Length of the design vector: free control points (row-major ``(len(free), nv)``), then ``T / T_ref``."""
        return self.free.size * self.robot.nv + (self.fixed_duration is None)

    def unpack(self, x):
        """``(P, T)``: all control points ``(count, nv)`` and the duration of design vector ``x``."""
        T = self.fixed_duration if self.fixed_duration is not None else x[-1] * self.scale[0]
        P = np.empty((self.basis.count, self.robot.nv))
        P[self.free] = x[:self.free.size * self.robot.nv].reshape(-1, self.robot.nv)
        P[self.fixed] = self._fixed_points(T)[0]
        return P, T

    def pack(self, P, T):
        """The design vector of control points ``P`` (the free ones are taken) and duration ``T``."""
        x = P[self.free].ravel()
        return x if self.fixed_duration is not None else np.append(x, T / self.scale[0])

    def trajectory(self, x):
        """The :class:`~rne_dynamics.planning.bspline.SplineTrajectory` of design vector ``x``."""
        return SplineTrajectory(self.basis, *self.unpack(x))

    def bounds(self):
        """Per design variable ``(lower, upper)``: the position limits on control points, ``T > 0``."""
        lower = np.tile(self.limits.position[:, 0], self.free.size)
        upper = np.tile(self.limits.position[:, 1], self.free.size)
        if self.fixed_duration is None:
            lower, upper = np.append(lower, 1e-3), np.append(upper, np.inf)
        return list(zip(np.where(np.isfinite(lower), lower, None), np.where(np.isfinite(upper), upper, None)))

    def _set_nodes(self, nodes):
        """Collocation at ``nodes`` (the Simpson nodes first, then added ones, weight 0)."""
        self.all_nodes = np.asarray(nodes, float)
        self.all_weights = np.concatenate([self.weights, np.zeros(len(self.all_nodes) - len(self.weights))])
        self._B = [self.basis(self.all_nodes, order) for order in range(3)]

    def add_nodes(self, s):
        """Collocate also at normalised times ``s`` (where a check between nodes found an excess)."""
        self._set_nodes(np.concatenate([self.all_nodes, np.setdiff1d(s, self.all_nodes)]))
        self._cache = (None, None)

    # ---- evaluation ----------------------------------------------------------------------------------------------

    def _evaluate(self, x, derivatives):
        """States, torques and (with ``derivatives``) their derivatives at every node, cached for the last ``x``."""
        key = x.tobytes()
        cached_key, e = self._cache
        if cached_key == key and (e["dtau_dx"] is not None or not derivatives):
            return e
        self.evaluations += 1
        P, T = self.unpack(x)
        B0, B1, B2 = self._B
        q, qd, qdd = B0 @ P, B1 @ P / T, B2 @ P / T ** 2
        tau = inverse_dynamics(self.robot, q, qd, qdd, gravity=self.gravity).torques
        e = {"P": P, "T": T, "q": q, "qd": qd, "qdd": qdd, "tau": tau, "dtau_dx": None}
        if derivatives:
            e["dtau_dx"] = self._derivatives(e)
        self._cache = (key, e)
        return e

    def _derivatives(self, e):
        """``dtau/dx`` ``(nodes, nv, size)`` (module docstring)."""
        T, nv = e["T"], self.robot.nv
        B0, B1, B2 = self._B
        D_q, D_qd, D_qdd = inverse_dynamics_derivatives(self.robot, e["q"], e["qd"], e["qdd"], gravity=self.gravity)
        dtau_dP = (np.einsum("jab,ji->jaib", D_q, B0) + np.einsum("jab,ji->jaib", D_qd, B1) / T
                   + np.einsum("jab,ji->jaib", D_qdd, B2) / T ** 2)               # (nodes, nv, count, nv)
        dtau_dx = dtau_dP[:, :, self.free].reshape(len(B0), nv, -1)
        if self.fixed_duration is None:
            dtau_dT = (-(np.einsum("jab,jb->ja", D_qd, e["qd"]) + 2 * np.einsum("jab,jb->ja", D_qdd, e["qdd"])) / T
                       + np.einsum("jaib,ib->ja", dtau_dP[:, :, self.fixed], self._fixed_points(T)[1]))
            dtau_dx = np.concatenate([dtau_dx, dtau_dT[..., None] * self.scale[0]], axis=2)
        return dtau_dx

    def _dT_dx(self):
        g = np.zeros(self.size)
        if self.fixed_duration is None:
            g[-1] = self.scale[0]
        return g

    def effort(self, x):
        """``int_0^T |tau|^2 dt`` by Simpson's rule on the nodes."""
        e = self._evaluate(x, False)
        return e["T"] * float(self.all_weights @ np.sum(e["tau"] ** 2, axis=1))

    def objective(self, x):
        """The objective (module docstring) divided by the warm start's."""
        e = self._evaluate(x, False)
        u = {"time": 0.0, "effort": 1.0, "mixed": self.effort_weight}[self.objective_name]
        value = (1 - u) * e["T"] + (u * self.effort(x) if u else 0.0)
        return value / self.scale[1]

    def objective_gradient(self, x):
        """``d objective / dx``."""
        e = self._evaluate(x, True)
        u = {"time": 0.0, "effort": 1.0, "mixed": self.effort_weight}[self.objective_name]
        gradient = (1 - u) * self._dT_dx()
        if u:
            tau_w = e["tau"] * self.all_weights[:, None]
            gradient = gradient + u * (2 * e["T"] * np.einsum("ja,jax->x", tau_w, e["dtau_dx"])
                                       + self._dT_dx() * float(np.sum(tau_w * e["tau"])))
        return gradient / self.scale[1]

    def _limited(self):
        """Masks of the joints with a finite effort and velocity limit."""
        return np.isfinite(self.limits.effort), np.isfinite(self.limits.velocity)

    def _effort_bound(self, mask):
        return self.limits.effort[mask] * (1 - self.margin)

    def constraints(self, x):
        """Inequalities ``c(x) >= 0``: ``1 -+ tau_k / ((1 - margin) tau_max_k)`` at every node, then
        ``(T -+ V_k / qd_max_k) / T_ref`` for every velocity control point ``V = D P``; joints without a finite limit
        are left out."""
        e = self._evaluate(x, False)
        effort, velocity = self._limited()
        tau = e["tau"][:, effort] / self._effort_bound(effort)
        V = (self.basis.derivative_matrix @ e["P"])[:, velocity] / self.limits.velocity[velocity]
        return np.concatenate([(1 - tau).ravel(), (1 + tau).ravel(),
                               ((e["T"] - V) / self.scale[0]).ravel(), ((e["T"] + V) / self.scale[0]).ravel()])

    def constraints_jacobian(self, x):
        """``dc/dx`` ``(len(c), size)``."""
        e = self._evaluate(x, True)
        effort, velocity = self._limited()
        dtau = (e["dtau_dx"][:, effort] / self._effort_bound(effort)[:, None]).reshape(-1, self.size)
        D, nv = self.basis.derivative_matrix, self.robot.nv
        dV = np.einsum("ri,ab->raib", D[:, self.free], np.eye(nv)).reshape(len(D), nv, -1)
        if self.fixed_duration is None:
            dV_dT = D[:, self.fixed] @ self._fixed_points(e["T"])[1]
            dV = np.concatenate([dV, dV_dT[..., None] * self.scale[0]], axis=2)
        dV = (dV[:, velocity] / self.limits.velocity[velocity][:, None]).reshape(-1, self.size)
        dT = np.broadcast_to(self._dT_dx(), dV.shape)
        return np.vstack([-dtau, dtau, (dT - dV) / self.scale[0], (dT + dV) / self.scale[0]])

    def equalities(self, x):
        """Via points: ``B(s_v) P - q_v`` ``(K * nv,)``."""
        P, _ = self.unpack(x)
        return (self.basis(self.via_times) @ P - self.waypoints[1:-1]).ravel()

    def equalities_jacobian(self, x):
        P, T = self.unpack(x)
        B = self.basis(self.via_times)
        nv = self.robot.nv
        jacobian = [np.einsum("ki,ab->kaib", B[:, self.free], np.eye(nv)).reshape(len(B) * nv, -1)]
        if self.fixed_duration is None:
            jacobian.append((B[:, self.fixed] @ self._fixed_points(T)[1]).reshape(-1, 1) * self.scale[0])
        return np.hstack(jacobian)

    def violation(self, x):
        """The largest constraint violation at the nodes (a fraction of the limit; 0 when all hold)."""
        c = self.constraints(x)
        worst = max(0.0, -float(c.min())) if c.size else 0.0
        if len(self.waypoints) > 2:
            worst = max(worst, float(np.abs(self.equalities(x)).max()))
        return worst

    # ---- warm start and solution ---------------------------------------------------------------------------------

    def initial_guess(self, start=None):
        """The straight segments through the waypoints, time-optimally retimed under the limits (:func:`retime`),
        fitted by the spline (least squares on the free control points); also sets the via times when not given and
        the scales ``T_ref`` (the retimed duration) and of the objective. Without a feasible retiming (e.g. gravity
        exceeds a limit on the straight line), a smooth-step timing at the velocity limits. ``start``: a
        :class:`PlannedTrajectory` to fit instead (a solution with fewer control points)."""
        line = Polyline(self.waypoints)
        if start is not None:
            T0, stops = start.duration, self.via_times

            def positions(sigma):
                return start.spline.sample(sigma * T0)[0]
        else:
            T0, stops, positions = self._retimed_line(line)
        if self.via_times is None:
            self.via_times = stops
        T = self.fixed_duration if self.fixed_duration is not None else T0
        sigma = np.linspace(0.0, 1.0, 8 * self.basis.count)
        B = self.basis(sigma)
        P = np.empty((self.basis.count, self.robot.nv))
        P[self.fixed] = self._fixed_points(T)[0]
        P[self.free] = np.linalg.lstsq(B[:, self.free], positions(sigma) - B[:, self.fixed] @ P[self.fixed],
                                       rcond=None)[0]
        P[self.free] = np.clip(P[self.free], *self.limits.position.T)
        self.scale = (T, 1.0)
        x = self.pack(P, T)
        self.scale = (T, max(self.objective(x), 1e-12))
        return x

    def _retimed_line(self, line):
        """``(T, via times, positions(sigma))`` of the retimed straight segments."""
        try:
            timed = retime(self.robot, line, stages=400, velocity_limits=self.limits.velocity,
                           effort_limits=self.limits.effort, gravity=self.gravity)
            T0 = timed.duration
            stops = timed.t[np.isin(timed.s, line.stops)] / T0

            def positions(sigma):
                return timed.sample(sigma * T0)[0]
        except PlanningError:
            steps = np.abs(np.diff(self.waypoints, axis=0)) / self.limits.velocity
            T0 = float(np.clip(2.0 * np.sum(np.max(np.where(np.isfinite(steps), steps, 0), axis=1)), 0.5, 10))
            stops = line.stops

            def positions(sigma):
                return line(3 * sigma ** 2 - 2 * sigma ** 3)[0]
        return T0, stops, positions

    def solve(self, *, method="SLSQP", gradients="analytic", max_iterations=500, tolerance=1e-9,
              check_period=1e-3, refinements=4, progress=None, start=None):
        """The optimal motion as a :class:`PlannedTrajectory`, its limits verified on a grid of ``check_period``
        seconds: where a limit is exceeded there by more than ``tolerance`` (a fraction of the limit; rad or m for
        positions) the excess points join the collocation nodes and the program is solved again, up to
        ``refinements`` times. ``method``: ``"SLSQP"`` or ``"trust-constr"`` (scipy.optimize); ``gradients``:
        ``"analytic"`` or ``"finite-difference"`` (scipy's, for comparison). ``progress(Iterate)`` is called after
        each iteration. ``start``: warm start from this :class:`PlannedTrajectory` (else :meth:`initial_guess`).
        Raises :class:`PlanningError` (with ``.result``) when the solver fails or a limit stays exceeded."""
        if gradients not in GRADIENTS:
            raise StateError(f"gradients must be one of {', '.join(GRADIENTS)}, got {gradients!r}")
        started = time.perf_counter()
        x = self.initial_guess(start)
        history, check_round = [], 0

        def record(intermediate_result):
            xk = getattr(intermediate_result, "x", intermediate_result)
            item = Iterate(len(history) + 1, self.unpack(xk)[1], self.objective(xk) * self.scale[1],
                           self.violation(xk), self.basis.count, check_round)
            history.append(item)
            if progress is not None:
                progress(item)

        analytic = gradients == "analytic"
        for check_round in range(refinements + 1):
            solution = self._minimize(x, method, analytic, max_iterations, record)
            x = solution.x
            result = self.result(x, check_period, history, solution.message, tolerance)
            if not result.check.violated:
                break
            if check_round < refinements:
                self.add_nodes(self._excess_nodes(result, tolerance, check_period))
        result.solve_time = time.perf_counter() - started
        result.evaluations = self.evaluations
        if result.check.violated:
            raise PlanningError(f"no motion found within the limits{self._held_against_gravity()}: {result.check} "
                                f"after {len(history)} iterations (solver: {solution.message})", result)
        if not solution.success and not _converged_enough(history):
            raise PlanningError(f"the solver did not converge: {solution.message}", result)
        return result

    def _held_against_gravity(self):
        """A reason when the effort limits cannot hold the start or the goal still against gravity, else ''."""
        for label, q in (("start", self.waypoints[0]), ("goal", self.waypoints[-1])):
            tau = gravity_torques(self.robot, q, gravity=self.gravity)
            over = np.flatnonzero(np.abs(tau) > self.limits.effort)
            if over.size:
                k = over[0]
                return (f" (the {self.limits.effort[k]:g} effort limit of '{self.robot.joint_names[k]}' cannot hold "
                        f"the {label} against gravity, {abs(tau[k]):.3g} needed)")
        return ""

    def _minimize(self, x, method, analytic, max_iterations, record):
        jac = (lambda f: f) if analytic else (lambda f: None)
        constraints = [{"type": "ineq", "fun": self.constraints, "jac": jac(self.constraints_jacobian)}]
        if len(self.waypoints) > 2:
            constraints.append({"type": "eq", "fun": self.equalities, "jac": jac(self.equalities_jacobian)})
        options = {"maxiter": max_iterations}
        if method == "SLSQP":
            options["ftol"] = 1e-10
        elif method == "trust-constr":
            options.update(gtol=1e-8, xtol=1e-10)
        else:
            raise StateError(f"method must be 'SLSQP' or 'trust-constr', got {method!r}")
        from scipy.optimize import minimize  # imported here: it costs every `import rne_dynamics` a second
        return minimize(self.objective, x, jac=jac(self.objective_gradient), bounds=self.bounds(),
                        constraints=constraints, method=method, options=options, callback=record)

    def result(self, x, check_period=1e-3, history=(), message="", tolerance=0.0):
        """The :class:`PlannedTrajectory` of design vector ``x``, checked every ``check_period`` seconds (an excess
        up to ``tolerance``, a fraction of the limit, is rounding)."""
        planned = PlannedTrajectory(self.robot, self.trajectory(x), self.limits, self.gravity,
                                    history=list(history), message=str(message))
        times = planned.grid(check_period)
        q, qd, _, tau = planned.sample(times)
        planned.check = check_limits(self.robot, self.limits, times, q, qd, tau, tolerance)
        planned.effort = float(np.trapezoid(np.sum(tau ** 2, axis=1), times))
        return planned

    def _excess_nodes(self, result, tolerance, period):
        """Normalised times of the local maxima of the excess over the limits on the check grid."""
        times = result.grid(period)
        tau = result.sample(times)[3]
        excess = np.max(np.abs(tau) / self.limits.effort - 1, axis=1)  # against the limits themselves
        peak = (excess > tolerance) & (excess >= np.roll(excess, 1)) & (excess >= np.roll(excess, -1))
        return times[peak] / result.duration


def plan(robot, start, goal, *, control_points=None, accuracy=0.01, method="SLSQP", gradients="analytic",
         max_iterations=500, tolerance=1e-9, check_period=1e-3, progress=None, **problem):
    """The time-optimal (or effort-optimal) motion of ``robot`` from ``start`` to ``goal`` under its joint limits,
    a :class:`PlannedTrajectory` whose limits hold on a ``check_period`` grid to ``tolerance``; raises
    :class:`PlanningError` when none is found. ``problem``: the keywords of :class:`TrajectoryProblem`; the solver
    keywords are :meth:`TrajectoryProblem.solve`'s.

    Minimum time (free duration) without ``control_points``: solved with 16, 32, then 64 control points, each warm
    started from the last, until the estimated distance to the minimum time (``result.time_gap``, relative) is below
    ``accuracy``. A uniform B-spline approaches a bang-bang optimum as ``T(h) = T* + C h^p`` in the knot span ``h``:
    the estimate takes ``p = 1`` from two solutions, and fits ``p`` (Richardson) from three. Otherwise one solve with
    ``control_points`` (default 20)."""
    options = dict(method=method, gradients=gradients, max_iterations=max_iterations, tolerance=tolerance,
                   check_period=check_period, progress=progress)
    refine = control_points is None and problem.get("objective", "time") == "time" and \
        problem.get("duration") is None
    if not refine:
        return TrajectoryProblem(robot, start, goal, control_points=control_points or 20, **problem).solve(**options)
    previous, spent, via_times, spans, durations = None, 0.0, problem.pop("via_times", None), [], []
    for count in REFINEMENT:
        solver = TrajectoryProblem(robot, start, goal, control_points=count, via_times=via_times, **problem)
        result = solver.solve(start=previous, **options)
        via_times = solver.via_times
        spent += result.solve_time
        spans.append(1.0 / (len(solver.basis.breakpoints) - 1))
        durations.append(result.duration)
        if previous is not None:
            result.history = previous.history + result.history
            result.time_gap = _remaining_gap(spans, durations)
            if result.time_gap < accuracy:
                break
        previous = result
    result.solve_time = spent
    return result


def _remaining_gap(h, T):
    """``(T_last - T*) / T_last`` for durations ``T`` at knot spans ``h`` fitted by ``T* + C h^p`` (module of
    :func:`plan`): ``p = 1`` from two, the ``p`` in ``[1, 4]`` that fits the last three otherwise."""
    fall = T[-2] - T[-1]
    p = 1.0
    if len(T) >= 3 and fall > 0 and T[-3] - T[-2] > 0:
        ratio = (T[-3] - T[-2]) / fall

        def mismatch(p):
            return (h[-3] ** p - h[-2] ** p) / (h[-2] ** p - h[-1] ** p) - ratio
        from scipy.optimize import brentq
        p = brentq(mismatch, 1.0, 4.0) if mismatch(1.0) * mismatch(4.0) < 0 else (1.0 if mismatch(1.0) > 0 else 4.0)
    return max(fall, 0.0) * h[-1] ** p / (h[-2] ** p - h[-1] ** p) / T[-1]


def _converged_enough(history):
    """SLSQP may stop on a failed line search at the optimum (numerical noise): accept when the last iterations
    changed the objective by less than 1e-6 relative and the constraints hold."""
    if len(history) < 3:
        return False
    last = [h.objective for h in history[-3:]]
    return history[-1].violation < 1e-6 and np.ptp(last) <= 1e-6 * abs(last[-1])


def _vectors(robot, name, value, ndim=1):
    """``value`` as a finite float array of ``nq`` entries (``ndim`` 2: rows of them)."""
    try:
        x = np.array(value, float)
    except (TypeError, ValueError):
        raise StateError(f"{name}: not an array of numbers: {value!r}") from None
    if ndim == 2:
        x = np.atleast_2d(x)
    if x.ndim != ndim or x.shape[-1] != robot.nq:
        raise StateError(f"{name}: expected {robot.nq} values (one per joint: {', '.join(robot.joint_names)}), "
                         f"got shape {x.shape}")
    if not np.isfinite(x).all():
        raise StateError(f"{name}: values must be finite, got {x.tolist()}")
    return x


def _inside(robot, limits, label, q):
    lower, upper = limits.position.T
    bad = np.flatnonzero((q < lower) | (q > upper))
    if bad.size:
        k = bad[0]
        raise StateError(f"{label}: joint '{robot.joint_names[k]}' at {q[k]:.6g} is outside its limits "
                         f"[{lower[k]:.6g}, {upper[k]:.6g}]")
