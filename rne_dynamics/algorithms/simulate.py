"""Fixed-step simulation: the forward dynamics (:mod:`rne_dynamics.algorithms.aba`) integrated over time, on the
configuration manifold, with the drives' damping and Coulomb friction and the joint stops taken implicitly.

The state is ``(q, v)``: ``q`` (``nq``) on the joints' Lie group, ``v = qd`` (``nv``) the child-frame velocities, and
``dq/dt = q v`` (right-trivialised: ``q(t + dt) ≈ q(t) ⊕ v dt``, see
:func:`~rne_dynamics.model.configuration.integrate`), ``M(q) dv/dt = tau - bias(q, v) - B v - F s(v) + stop
impulses``. Positions advance with the group's exponential, never ``q + dt qd``, so floating bases, planar and
spherical joints stay on their manifolds (quaternions unit). The torque is held over each step.

The motion is split in two (Strang splitting; Hairer, Lubich & Wanner, Geometric Numerical Integration, 2nd ed.,
Sec. II.5):

- ``R``, the conservative rigid-body motion: forward dynamics under ``tau``, gravity, external wrenches, the rotor
  inertia (armature: it is part of ``M``) and the drives' constant ``friction_offset`` (:func:`rigid_rate`);
- ``D(h)``, the dissipative terms and the stops at frozen ``q``, by implicit Euler in the metric of ``M``: the
  proximal step ``v' = argmin 1/2 |v' - v|_M^2 + h (1/2 v'^T B v' + sum_i F_i phi_i(v'_i))`` under the stops'
  bounds on ``v'`` (:func:`drive_step`; Moreau-Jean time stepping, as MuJoCo's ``implicitfast`` integrator treats
  damping and armature implicitly and limits as constraints). ``B`` is the viscous damping, ``F`` the Coulomb
  friction with ``phi_i = |v_i|`` (its ``sign`` law) or ``coulomb_velocity log cosh(v_i / coulomb_velocity)``
  (its ``tanh`` law). The function minimised is convex and least at 0, so ``D`` can only lower the kinetic energy,
  for any damping, rotor and link inertia and step: no stability limit ``dt < 2 I / D``.

Two integrators:

- ``"rk4"``: ``D(dt/2) R(dt) D(dt/2)``, ``R`` by the package's one integrator on the manifold, classical Runge-Kutta
  4 as a Runge-Kutta-Munthe-Kaas method (:mod:`~rne_dynamics.algorithms.integrator`; order 4 on every joint type,
  four forward-dynamics calls). The first ``D`` acts on the rigid motion's mean velocity ``u = v + dt/2 a`` (``a``
  the rigid acceleration) and hands ``R`` the velocity ``D(dt/2)(u) - dt/2 a``: the friction and the stops act on
  the velocity that moves the joint over the step, so a joint that friction holds or a stop blocks does not creep
  by ``dt^2 a / 2`` per step. Without damping, friction and active stops both ``D`` are the identity (not
  computed) and the step is the RKMK4 step of forward dynamics, of order 4; with them it is of order 2 (the
  splitting's), and stable at any step.
- ``"semi_implicit"``: ``v* = v + dt a(q, v)``, ``v' = D(dt)(v*)``, ``q' = q ⊕ dt v'`` (symplectic Euler with
  implicit damping, MuJoCo's ``Euler``), one rigid forward-dynamics call per step (order 1).

Joint stops (the position limits of one-coordinate joints, gripper joints included; a mimic joint's limits bound
its source's coordinate through its multiplier and offset, :func:`stop_limits`) are bounds on the velocity in
``D``: the displacement over the coming step, ``dt u``, may not cross a limit. All the active bounds are solved
together in the ``M`` metric: an inelastic impact that removes the velocity into the stop and passes the momentum
on to the joints that can still move, never adds energy and never moves ``q``. A residual of the rigid motion past
a stop (of order ``dt^3``) is clamped to the limit without a velocity (:func:`clamp_to_stops`); a rigid motion that
ends past a stop by more than the joint's range (:func:`beyond_stops`) is one the step did not resolve, and fails
as a non-finite one does (the stops would otherwise hide it: the velocity bounds cap such a joint at its range per
step while the energy grows without bound). A joint rests on its stop to within ``1e-9`` (measured: ``3e-11`` rad
at 1 kHz). Continuous joints and joints of several coordinates have no stops.
"""
import contextlib
import math
import warnings
from typing import NamedTuple

import numpy as np

from .._jit import OK, OVERFLOW, SINGULAR, arithmetic_kernel, helper
from ..model.memory import memory
from .aba import ACCELERATIONS, cholesky_solve, forward, forward_workspace
from .crba import composite_rigid_body, crba_workspace, mass_matrix
from .driver import Algorithm
from ..errors import ModelError, ModelWarning, SingularMassMatrixError, StateError
from .inputs import gravity_vector, states
from ..model.configuration import integrate_configuration
from .integrator import STAGES, rkmk4_stage, stages_workspace
from ..model.drive import dissipation_per_coordinate, dissipative_torques_add
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


#: Coordinate-descent sweeps between two attempts at the exact solution of a dissipative step, and the attempts.
SWEEPS = 8
ATTEMPTS = 16
#: Newton iterations of that exact solution (one suffices without tanh-shaped Coulomb friction).
NEWTON = 16
#: The optimality conditions of a dissipative step hold to this, relative to its torques' scale.
KKT_TOLERANCE = 1e-9

#: The dissipative step's arrays: the CRBA's, ``A = M + h B`` and its factor ``L``, ``b = M v``, the descent's
#: iterate ``x`` and the exact candidate ``y``, a Newton step, the drives' ``damping``, ``friction`` and ``slip``
#: (``coulomb_velocity``) per coordinate and which coordinates a candidate holds fixed (``held``).
drive_step_workspace = memory("drive_step_workspace", crba=crba_workspace, A=("nv", "nv"), L=("nv", "nv"),
                              b=("nv",), x=("nv",), y=("nv",), step=("nv",), damping=("nv",), friction=("nv",),
                              slip=("nv",), held=("nv",))

#: The next state and the accelerations now, then forward dynamics' workspace, the integrator's stages and a stage's
#: accelerations; the rigid acceleration ``a``, the velocity after the first dissipative half step ``v`` and after
#: the rigid motion ``x``, the stops' velocity bounds, the torque of the rigid motion and the dissipative step's
#: arrays.
step_memory = memory("step_memory", results=dict(q_next=("nq",), qd_next=("nv",), qdd=("nv",)),
                     forward=forward_workspace, stages=stages_workspace.sized(n="nv"), qdd_stage=("nv",),
                     no_wrenches=(0, 6), a=("nv",), v=("nv",), x=("nv",), lower=("nv",), upper=("nv",),
                     tau_rigid=("nv",), drive=drive_step_workspace)


@helper
def stop_bounds(m, limits, q, dt, lower, upper):
    """Bounds on the velocity ``u`` of each one-coordinate joint with limits (``limits``: ``(2, nq)``; a mimic body
    repeats its source's, whose limits include the mimic joint's): its displacement over the next ``dt``, ``dt u``,
    may not cross a limit, nor go further past one (a joint already past it is not pushed back). The other
    coordinates are unbounded."""
    for k in range(m.nv):
        lower[k] = -math.inf
        upper[k] = math.inf
    for i in range(m.nb):
        if has_stops(m.jtype[i]):
            k = m.idx_q[i]
            c = m.col_v[m.col_start[i]]
            lower[c] = min(limits[0, k] - q[k], 0.0) / dt
            upper[c] = max(limits[1, k] - q[k], 0.0) / dt


@helper
def clamp_to_stops(m, limits, q):
    """Each one-coordinate joint's position put within its limits: the rigid motion's residual past a stop (of order
    ``dt^3``: the stop bounds its predicted displacement) removed without a velocity, which would add energy."""
    for i in range(m.nb):
        if has_stops(m.jtype[i]):
            k = m.idx_q[i]
            q[k] = min(max(q[k], limits[0, k]), limits[1, k])


@helper
def beyond_stops(m, limits, q):
    """Whether the rigid motion left a one-coordinate joint past a stop by more than the joint's range (at least 1
    rad or m): a residual of a resolved step is of order ``dt^3``; one that large is a motion the step does not
    resolve (a near-singular mass matrix, a light link's fast dynamics), not a joint arriving at its stop."""
    for i in range(m.nb):
        if has_stops(m.jtype[i]):
            k = m.idx_q[i]
            reach = max(limits[1, k] - limits[0, k], 1.0)
            if not limits[0, k] - reach <= q[k] <= limits[1, k] + reach:
                return True
    return False


@helper
def coordinate_minimum(a, r, hf, slip, lower, upper):
    """``argmin a x^2 / 2 - r x + hf phi(x)`` over ``lower <= x <= upper`` (``a > 0``): ``phi(x) = |x|`` (``slip``
    0: Coulomb's ``sign`` law; a soft threshold) or ``slip log cosh(x / slip)`` (its ``tanh`` law: Newton's method on
    ``a x - r + hf tanh(x / slip) = 0``, kept in the bracket ``[(r - hf) / a, (r + hf) / a]`` that holds the root);
    the minimum of a convex function of one variable over an interval is its free minimum clipped."""
    if hf > 0.0 and slip == 0.0:
        x = (r - hf) / a if r > hf else (r + hf) / a if r < -hf else 0.0
    elif hf > 0.0:
        low, high = (r - hf) / a, (r + hf) / a
        x = r / a
        for _ in range(64):
            t = math.tanh(x / slip)
            f = a * x - r + hf * t
            if f == 0.0:
                break
            if f > 0.0:
                high = x
            else:
                low = x
            guess = x - f / (a + hf * (1.0 - t * t) / slip)
            if not low < guess < high:
                guess = 0.5 * (low + high)
            if guess == x:
                break
            x = guess
    else:
        x = r / a
    return min(max(x, lower), upper)


@helper
def descent_sweep(w, h, lower, upper):
    """One sweep of coordinate descent on the dissipative step's problem (:func:`drive_step`), each coordinate set
    to its minimum given the others (:func:`coordinate_minimum`; Gauss-Seidel projected on the bounds). Returns the
    sweep's change ``sum A_ii dx_i^2``."""
    A, x = w.A, w.x
    change = 0.0
    for i in range(x.shape[0]):
        r = w.b[i]
        for j in range(x.shape[0]):
            if j != i:
                r -= A[i, j] * x[j]
        x_i = coordinate_minimum(A[i, i], r, h * w.friction[i], w.slip[i], lower[i], upper[i])
        change += A[i, i] * (x_i - x[i]) * (x_i - x[i])
        x[i] = x_i
    return change


@helper
def friction_slope(w, h, i, y_i):
    """``h friction phi'(y_i)`` and ``h friction phi''(y_i)`` of coordinate ``i`` (:func:`coordinate_minimum`'s
    ``phi``) for a coordinate off zero; ``phi'`` of ``|y|`` is its sign."""
    hf = h * w.friction[i]
    if w.slip[i] > 0.0:
        t = math.tanh(y_i / w.slip[i])
        return hf * t, hf * (1.0 - t * t) / w.slip[i]
    return hf * np.sign(y_i), 0.0


@helper
def exact_on_active_set(w, h, lower, upper):
    """The dissipative step's exact solution on the active set of the iterate ``x``: the coordinates ``x`` has at a
    bound, and those Coulomb's ``sign`` law holds at zero, stay there (``held``); Newton's method solves the
    others' optimality conditions (``A y - b + h friction phi'(y) = 0``: one linear solve, by Cholesky, unless a
    ``tanh`` law is among them). Writes ``y``; returns ``(status, accepted)``, ``status`` ``SINGULAR + k`` when
    ``A`` is not positive definite, ``accepted`` whether ``y`` meets the optimality conditions of the whole problem
    (Karush-Kuhn-Tucker, to :data:`KKT_TOLERANCE`: every coordinate within its bounds, its gradient zero for some
    subgradient of its friction, or pushing into the bound it is at; Newton's iterate that has not converged, or
    a Coulomb friction whose sign was wrongly assumed, fails them)."""
    A, L, b, x, y, step, held = w.A, w.L, w.b, w.x, w.y, w.step, w.held
    n = x.shape[0]
    scale = 0.0
    for i in range(n):
        y[i] = x[i]
        sticks = w.friction[i] > 0.0 and w.slip[i] == 0.0 and x[i] == 0.0
        held[i] = 1.0 if x[i] <= lower[i] or x[i] >= upper[i] or sticks else 0.0
        scale = max(scale, abs(b[i]) + h * w.friction[i] + A[i, i] * abs(x[i]))
    for _ in range(NEWTON):
        smooth = False
        for i in range(n):
            step[i] = 0.0
            for j in range(n):
                L[i, j] = 0.0 if held[i] != 0.0 or held[j] != 0.0 else A[i, j]
            if held[i] != 0.0:
                L[i, i] = 1.0
                continue
            for j in range(n):
                step[i] -= A[i, j] * y[j]
            step[i] += b[i]
            if w.friction[i] > 0.0:
                torque, slope = friction_slope(w, h, i, y[i])
                step[i] -= torque
                L[i, i] += slope
                smooth = smooth or w.slip[i] > 0.0
        bad = cholesky_solve(L, step)
        if bad >= 0:
            return SINGULAR + bad, False
        size = 0.0
        for i in range(n):
            y[i] += step[i]
            size = max(size, abs(step[i]) * A[i, i])
        if not smooth or not size > 1e-15 * scale:
            break
    tolerance = KKT_TOLERANCE * scale
    for i in range(n):
        if held[i] == 0.0:
            if not lower[i] - tolerance / A[i, i] <= y[i] <= upper[i] + tolerance / A[i, i]:
                return OK, False
            y[i] = min(max(y[i], lower[i]), upper[i])
    for i in range(n):  # the gradient's range over phi's subgradient, which a bound's force may only push from
        g = -b[i]
        for j in range(n):
            g += A[i, j] * y[j]
        hf = h * w.friction[i]
        if w.slip[i] > 0.0:
            g_low = g_high = g + friction_slope(w, h, i, y[i])[0]
        else:  # the subgradient of hf |y| at y: hf sign(y), or [-hf, hf] at 0
            g_low = g + (hf if y[i] > 0.0 else -hf)
            g_high = g + (-hf if y[i] < 0.0 else hf)
        at_lower, at_upper = y[i] <= lower[i], y[i] >= upper[i]
        if not ((at_lower and g_high >= -tolerance) or (at_upper and g_low <= tolerance)
                or (g_low <= tolerance and g_high >= -tolerance)):
            return OK, False
    return OK, True


@helper
def drive_step(m, w, q, v, h, lower, upper, v_next):
    """The dissipative half of a step, ``D(h)``, at the frozen configuration ``q``: the velocity after ``h``
    seconds of the drives' damping and Coulomb friction and the stops' velocity bounds, by implicit Euler in the
    metric of the mass matrix ``M(q)`` (rotor inertia included), i.e. the proximal step
        v' = argmin_{lower <= v' <= upper}  1/2 |v' - v|_M^2 + h (1/2 v'^T B v' + sum_i friction_i phi_i(v'_i))
    (``B = diag(damping)``; ``phi_i = |v_i|`` or ``slip_i log cosh(v_i / slip_i)``, whose derivatives are
    Coulomb's ``sign`` and ``tanh`` laws; Moreau's time stepping, the bounds' multipliers the stops' impulses). Its
    optimality conditions are the implicit Euler step ``M (v' - v) = -h (B v' + friction phi'(v')) + impulses``.
    With ``0`` within the bounds the function minimised is convex and least at 0, so the step is non-expansive
    in the ``M`` norm: it can only lower the kinetic energy, for any damping, inertia and ``h``.

    Solved exactly on an active set: first the one of ``v`` itself (no bound active, each Coulomb friction of
    ``v``'s sign: one Cholesky solve when nothing sticks or stops), else of projected Gauss-Seidel's iterate
    (coordinate descent, :func:`descent_sweep`) after :data:`SWEEPS` sweeps at a time, accepted when the KKT
    conditions hold (:func:`exact_on_active_set`); after :data:`ATTEMPTS`, the descent's iterate. Without a drive
    term and with ``v`` within the bounds it is ``v``, not computed. Returns ``OK`` or ``SINGULAR + k``."""
    n = m.nv
    dissipative = dissipation_per_coordinate(m, w.damping, w.friction, w.slip)
    within = True
    for k in range(n):
        v_next[k] = v[k]
        w.x[k] = min(max(v[k], lower[k]), upper[k])
        within = within and w.x[k] == v[k]
    if within and not dissipative:
        return OK
    composite_rigid_body(m, w.crba, q, w.A)
    kinetic = 0.0  # twice the kinetic energy, the descent's scale
    for i in range(n):
        w.b[i] = 0.0
        for j in range(n):
            w.b[i] += w.A[i, j] * v[j]
        kinetic += w.b[i] * v[i]
    for i in range(n):
        w.A[i, i] += h * w.damping[i]
    for _ in range(ATTEMPTS):
        status, accepted = exact_on_active_set(w, h, lower, upper)
        if status != OK:
            return status
        if accepted:
            for k in range(n):
                v_next[k] = w.y[k]
            return OK
        for _ in range(SWEEPS):
            if not descent_sweep(w, h, lower, upper) > 1e-24 * kinetic:
                break
    for k in range(n):
        v_next[k] = w.x[k]
    return OK


@helper
def rigid_rate(m, w, q, v, tau, gravity, f_ext, dissipative, out):
    """The acceleration of the conservative motion: forward dynamics under ``tau``, gravity, the external wrenches
    and the drives' rotor inertia and ``friction_offset``, without their damping and Coulomb friction (added to
    ``tau``, they cancel forward dynamics' own; a model without them takes ``tau`` as it is)."""
    if not dissipative:
        return forward(m, w.forward, q, v, tau, gravity, f_ext, out, w.no_wrenches)
    for k in range(m.nv):
        w.tau_rigid[k] = tau[k]
    dissipative_torques_add(m, v, w.tau_rigid)
    return forward(m, w.forward, q, v, w.tau_rigid, gravity, f_ext, out, w.no_wrenches)


@helper
def rate_unless_known(m, w, q, v, tau, gravity, f_ext, dissipative, known, rate, out):
    """``out``: the :func:`rigid_rate` at ``(q, v)``, or the ``rate`` already ``known`` there."""
    if known:
        for k in range(m.nv):
            out[k] = rate[k]
        return OK
    return rigid_rate(m, w, q, v, tau, gravity, f_ext, dissipative, out)


@helper
def dissipative_step(m, w, q, qd, shift, h, dt, limits, out):
    """``out = D(h)(u)`` of ``u = qd + shift a`` (into ``w.x``; ``a`` the rigid acceleration, ``w.a``) under the
    stops' bounds for a motion of ``dt`` from ``q``: :func:`drive_step`."""
    for k in range(m.nv):
        w.x[k] = qd[k] + shift * w.a[k]
    stop_bounds(m, limits, q, dt, w.lower, w.upper)
    return drive_step(m, w.drive, q, w.x, h, w.lower, w.upper, out)


@arithmetic_kernel
def integrate(m, w, q, qd, tau, f_ext, gravity, dt, rk4, limits):
    """One step from ``(q, qd)`` to ``(q_next, qd_next)`` (module notes); ``qdd``: the forward dynamics at ``(q,
    qd)``, drive terms included; ``limits``: ``(2, nq)`` lower and upper positions. Returns ``OK``, ``SINGULAR``
    plus the coordinate of a joint that drives no mass, or ``OVERFLOW`` for a rigid motion the step did not resolve
    (:func:`beyond_stops`; then the outputs are undefined).

    RK4: ``D(dt/2) R(dt) D(dt/2)``, ``R`` the integrator's stages
    (:func:`~rne_dynamics.algorithms.integrator.rkmk4_stage`) on :func:`rigid_rate`, ``D`` :func:`drive_step` (the
    first on the mean velocity ``qd + dt/2 a``), each under the stops' bounds. Semi-implicit Euler: ``v* = qd + dt
    a``, ``qd_next = D(dt)(v*)``, ``q_next = q ⊕ dt qd_next``.
    """
    q_next, qd_next, qdd, a, v, x = w.q_next, w.qd_next, w.qdd, w.a, w.v, w.x
    bad = forward(m, w.forward, q, qd, tau, gravity, f_ext, qdd, w.no_wrenches)
    if bad != OK:
        return bad
    dissipative = dissipation_per_coordinate(m, w.drive.damping, w.drive.friction, w.drive.slip)
    bad = rate_unless_known(m, w, q, qd, tau, gravity, f_ext, dissipative, not dissipative, qdd, a)
    if bad != OK:
        return bad
    if not rk4:  # semi-implicit Euler
        bad = dissipative_step(m, w, q, qd, dt, dt, dt, limits, qd_next)
        if bad != OK:
            return bad
        integrate_configuration(m, q, qd_next, dt, q_next)
        clamp_to_stops(m, limits, q_next)
        return OK
    h = 0.5 * dt
    bad = dissipative_step(m, w, q, qd, h, h, dt, limits, v)  # D(h) of the rigid motion's mean velocity
    if bad != OK:
        return bad
    moved = False
    for k in range(m.nv):
        moved = moved or v[k] != x[k]
    for k in range(m.nv):  # the velocity R starts from: D(h)(u) - h a (qd itself where D did nothing)
        v[k] = v[k] - h * a[k] if moved else qd[k]
    bad = rate_unless_known(m, w, q, v, tau, gravity, f_ext, dissipative, not moved, a, a)
    if bad != OK:
        return bad
    rkmk4_stage(m, q, v, 0, dt, a, w.stages, q_next, x)
    for s in range(1, STAGES):
        bad = rigid_rate(m, w, w.stages.q, w.stages.x, tau, gravity, f_ext, dissipative, w.qdd_stage)
        if bad != OK:
            return bad
        rkmk4_stage(m, q, v, s, dt, w.qdd_stage, w.stages, q_next, x)
    if beyond_stops(m, limits, q_next):
        return OVERFLOW
    clamp_to_stops(m, limits, q_next)
    stop_bounds(m, limits, q_next, dt, w.lower, w.upper)
    return drive_step(m, w.drive, q_next, x, h, w.lower, w.upper, qd_next)


#: Its compiled entry only: a written code would trace and build a program per robot and ``dt`` whose guards (the
#: stops, friction's active set, the solver's iterations) hand many states back, and it is no faster (iiwa 14 at
#: 1 kHz, 20 against 21 us a step).
STEP = Algorithm(integrate, step_memory, ("q", "qd", "tau"), "the next state", lambda *state: state, gravity=True,
                 wrenches=True, extras=("dt", "rk4", "limits"), writable=False)


def stop_limits(robot):
    """``(2, nq)``: the lower and upper positions of each coordinate's stops, ``robot.position_limits`` narrowed by
    the limits of the mimic joints that follow it (``q_mimic = multiplier q + offset`` within the mimic joint's
    limits), computed once per robot. Limits that leave a joint no position are a
    :class:`~rne_dynamics.errors.ModelError`; a single position, a :class:`~rne_dynamics.errors.ModelWarning` (the
    stops hold the joint there: example-robot-data's PR2 grippers, a mimic joint of multiplier -1 and limits 0 to
    0.548 on a source of the same limits)."""
    return robot.engines.derived(_stop_limits, robot)


def _stop_limits(robot):
    lower, upper = robot.position_limits.T.copy()
    for b in robot.bodies:
        if b.mimic and b.nq == 1 and b.q_mult != 0.0:
            joint, k = robot.joints[b.joint], b.idx_q
            ends = sorted(((joint.lower - b.q_offset) / b.q_mult, (joint.upper - b.q_offset) / b.q_mult))
            lower[k], upper[k] = max(lower[k], ends[0]), min(upper[k], ends[1])
            if lower[k] >= upper[k]:
                source = robot.q_names[k]
                what = (f"robot '{robot.name}': the limits of joint '{source}' {robot.position_limits[k].tolist()} "
                        f"and of its mimic joint '{b.joint}' [{joint.lower:g}, {joint.upper:g}] (at {b.q_mult:g} "
                        f"x '{source}' + {b.q_offset:g})")
                if lower[k] > upper[k]:
                    raise ModelError(f"{what} admit no position of '{source}': the stops cannot hold both")
                warnings.warn(f"{what} leave '{source}' one position, {lower[k]:g}: the simulator's stops hold it "
                              "there", ModelWarning, stacklevel=2)
    return np.ascontiguousarray([lower, upper])


def advance(robot, q, qd, tau, dt, method, gravity, external_wrenches):
    """One step: ``(q_next, qd_next, qdd)``, ``qdd`` the forward dynamics at ``(q, qd)``. A step from a state that
    forward dynamics takes but whose result is not finite raises the :class:`StateError` of :func:`diverged`."""
    extras = (dt, method == "rk4", stop_limits(robot))
    # the kernels' Python warns of a diverging state's numbers, which says so once, below (numba's machine code warns
    # of nothing: a step enters no context)
    quiet = contextlib.nullcontext() if STEP.ready and hasattr(STEP.single, "py_func") else np.errstate(all="ignore")
    try:
        with quiet:
            return STEP.run(robot, None, (q, qd, tau), gravity, external_wrenches, extras=extras)
    except (StateError, SingularMassMatrixError):
        with np.errstate(all="ignore"):
            qdd = ACCELERATIONS.run(robot, None, (q, qd, tau), gravity_vector(gravity))  # the state's own error, if any
    raise diverged(robot, q, qd, qdd, dt)


#: A mass matrix whose condition number passes this is named as a likely cause of a step that diverged.
ILL_CONDITIONED = 1e10


def diverged(robot, q, qd, qdd, dt):
    """The error for a step of ``dt`` from a finite state (one state or a batch: ``q``, velocities ``qd``,
    accelerations ``qdd``) that the step does not resolve (a result that is not finite, or a joint thrown past its
    stop: :func:`beyond_stops`), naming the fastest and the most accelerated coordinates, and the mass matrix's
    condition number where it is nearly singular there."""
    def where(x):
        at = np.unravel_index(np.argmax(np.abs(x)), x.shape)
        return at, f"'{robot.v_names[at[-1]]}'" + (f" (state {at[0]})" if x.ndim == 2 else "")
    (fast, fastest), (pushed, most) = where(qd), where(qdd)
    eigenvalues = np.linalg.eigvalsh(mass_matrix(robot, q[pushed[:-1]]))
    condition = eigenvalues[-1] / eigenvalues[0] if eigenvalues[0] > 0 else np.inf
    singular = (f"; the mass matrix there is nearly singular (condition number {condition:.2g}: links without "
                "rotational inertia?)" if condition > ILL_CONDITIONED else "")
    return StateError(f"the simulation diverged: a step of {dt:g} s from this state does not resolve the motion (its "
                      f"result is not finite, or a joint ends past its stop by more than its range); its fastest "
                      f"coordinate, {fastest}, moves at {qd[fast]:.3g}, and {most} accelerates at {qdd[pushed]:.3g}"
                      f"{singular}: the torques, velocities or accelerations are beyond what a step of {dt:g} s "
                      "resolves")


def step(robot, q, qd, tau, dt, *, method="rk4", gravity=None, external_wrenches=None):
    """The state ``(q, qd)`` after ``dt`` seconds with torques ``tau`` held constant, the drives' damping and
    Coulomb friction taken implicitly and joint limits stopping joints (module notes: stable at any ``dt``, energy
    never added by them).

    ``method``: ``"rk4"`` or ``"semi_implicit"``; ``gravity`` and ``external_wrenches`` as in
    :func:`~rne_dynamics.algorithms.aba.forward_dynamics`. One state (``q`` ``(nq,)``, ``qd`` and ``tau`` ``(nv,)``)
    or a batch ``(N, nq)``, ``(N, nv)``. Returns ``(q, qd)``, ``q`` with unit quaternions. The whole step runs
    compiled: one call, four rigid forward dynamics (RK4) and the dissipative half steps in one workspace. A step
    whose result is not finite raises :class:`~rne_dynamics.errors.StateError` naming the fastest coordinate.
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
    limits = stop_limits(robot)
    outside = np.argwhere((q < limits[0]) | (q > limits[1]))
    if outside.size:
        k = outside[0][-1]
        raise StateError(f"q0 of joint '{robot.q_names[k]}' is {q[tuple(outside[0])]}, outside its limits "
                         f"{limits[:, k].tolist()}")
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
