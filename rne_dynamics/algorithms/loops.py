"""Closed kinematic loops on the open tree's public kinematics and dynamics (Khalil 2010, Secs. 2.2, 4 and 5).

Each loop is cut at one joint (:mod:`~rne_dynamics.model.loops`); the tree's coordinates ``q`` then obey the loop
constraints ``phi(q) = 0`` (Khalil eq. 3), their velocity form ``J qd = 0`` (eq. 4) and ``J qdd = gamma`` with
``gamma = -Jdot qd``. ``J`` stacks, per closure, the selected rows ``K^T`` of the relative twist of the cut frame on
``link_a`` with respect to the material point of ``link_b`` under it, in the cut frame on ``link_b``. Its columns
split into the actuated ``J_a`` and the passive ``J_p``; the passive coordinates follow from the actuated ones
(``qd_p = -J_p^+ J_a qd_a``), which gives ``G = d q_tree / d q_a`` (eq. 56). Redundant constraints (a planar linkage
closed by a spatial cut) leave ``J_p`` of full column rank but not of full row rank: every solve here is a
rank-revealing least-squares one (SVD), and the cut wrenches are the minimum-norm solution.

The equations are kernel steps (:mod:`~rne_dynamics.algorithms.loop_kinematics`): this module's Python solver calls
them (one compiled call per evaluation of the constraints), and a robot whose passive Jacobian is square (no
redundant constraint) gets the whole warm-started inverse dynamics of a state as one call of its written machine code
(:data:`~rne_dynamics.algorithms.loop_kinematics.CLOSED_LOOP`) once that code is built, in the background; a state
that call hands back (a cold start, a singular pose) takes the Python solver.

Sign of the cut wrench ``w`` (on ``link_b`` by ``link_a``, cut frame on ``link_b``, about its origin): with
``w = K lambda``, the tree's equations of motion read ``M qdd + h = E_a tau_a - J^T lambda``.
"""
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, StateError
from ..model.loops import LoopClosure, Loops
from .configuration import integrate, neutral
from .crba import mass_matrix
from .._jit import GUARD, OK
from .inputs import gravity_vector, one_state_arrays
from .integrator import rkmk4_step
from .._trace import traceable
from ..model.buffers import model_view
from .kinematics import center_of_mass, frame_acceleration
from .loop_kinematics import (AXIS, CLOSED_LOOP, CLOSURE_TOLERANCE, CONSTRAINTS, CUT, KIND, KINDS, RANK_TOLERANCE,
                              SELECT, SIDE_A, SIDE_B, cut_loads, far_from_rank_loss, passive_lu)
from .rnea import bias_torques, inverse_dynamics
from . import written
from .driver import PAST_GUARD

MAX_NEWTON_STEPS = 60


def _loops(robot):
    if robot.loops is None:
        raise ModelError(f"robot '{robot.name}' has no loop closures; load it with load_urdf(..., loops=...)")
    return robot.loops


class Cuts(NamedTuple):
    """Closures as the kernels read them (made once per robot for its loops, :func:`_cuts`): ``table`` ``(nc,
    CUT)`` (:mod:`~rne_dynamics.algorithms.loop_kinematics`: each side's body, ``-1`` the fixed base, and cut frame
    in it, the kind, the axis, ``K^T`` padded to 6 rows); ``rows``: the flat indices of the real constraint rows
    (6 per closure); ``slices``: each closure's rows among the real ones; ``m``: the model as the kernels' Python
    reads it."""
    closures: tuple
    table: np.ndarray
    rows: np.ndarray
    slices: dict
    m: object


def _robot_cuts(robot):
    """The :class:`Cuts` of the robot's loops (made once per robot: ``robot.engines.derived``)."""
    return _cuts(robot, _loops(robot).closures)


def _cuts(robot, closures=None):
    """The :class:`Cuts` of ``closures`` (default: the robot's loops, :func:`_robot_cuts`)."""
    if closures is None:
        return robot.engines.derived(_robot_cuts, robot)
    m = traceable(model_view)(robot.fdata, robot.idata)
    if len(closures) > m.nl:
        raise ModelError(f"robot '{robot.name}' has {len(closures)} loop closures, more than its {m.nl} links")
    table = np.zeros((len(closures), CUT))
    rows, slices, start = [], {}, 0
    for k, c in enumerate(closures):
        for side, link, R, p in ((SIDE_A, c.link_a, c.R_a, c.p_a), (SIDE_B, c.link_b, c.R_b, c.p_b)):
            body, R_l, p_l = robot.link_frames[link]
            table[k, side] = body
            table[k, side + 1:side + 10] = (R_l @ R).ravel()
            table[k, side + 10:side + 13] = p_l + R_l @ p
        table[k, KIND] = KINDS[c.kind]
        table[k, AXIS:AXIS + 3] = 0.0 if c.axis is None else c.axis
        select = np.zeros((6, 6))
        select[:c.size] = c.selection.T
        table[k, SELECT:SELECT + 36] = select.ravel()
        rows += range(6 * k, 6 * k + c.size)
        slices[c.name] = slice(start, start + c.size)
        start += c.size
    return Cuts(tuple(closures), table, np.array(rows), slices, m)


class LoopConstraints(NamedTuple):
    """The stacked loop constraints at a state: ``residual`` ``phi(q)`` ``(m,)``, ``jacobian`` ``(m, nv)``,
    ``gamma`` ``= -Jdot qd`` ``(m,)`` (``None`` without ``qd``); ``rows`` maps each closure's name to its slice;
    ``frames``: the kernel's arrays they come from (``p_a``, ``p_b`` ``(nc, 3)`` the cut frames' origins and
    ``R_b`` ``(nc, 3, 3)`` frame ``b``'s axes in the world, ``d`` frame ``a``'s origin from ``b``'s in ``b`` axes,
    ``oR``, ``op`` the bodies' world poses; :data:`~rne_dynamics.algorithms.loop_kinematics.constraints_memory`)."""
    residual: np.ndarray
    jacobian: np.ndarray
    gamma: np.ndarray
    rows: dict
    frames: tuple


def loop_constraints(robot, q, qd=None):
    """The loop constraints of ``robot`` at ``q`` (and ``qd``): ``phi(q)``, its Jacobian ``J`` and ``gamma =
    -Jdot qd`` (Khalil eqs. 3 and 4; ``J qdd = gamma`` along any motion that keeps the loops closed). One state."""
    return _constraints(robot, _cuts(robot), _q(robot, q), None if qd is None else _v(robot, qd, "qd"))


def _constraints(robot, cuts, q, qd=None):
    """The constraints of the closures ``cuts`` at ``q`` (and ``qd``): one compiled call
    (:data:`~rne_dynamics.algorithms.loop_kinematics.CONSTRAINTS`), its real rows. The robot's own loops run its
    written code; other closures (a platform held at a pose, new numbers at each call) the generic kernel, which a
    written code per pose would cost a trace each."""
    state = (q, np.zeros(robot.nv) if qd is None else qd)
    if cuts is robot.engines.made.get(_robot_cuts):
        c = CONSTRAINTS.run(robot, None, state, extras=(cuts.table,))
    else:
        _, _, size, make = CONSTRAINTS.slots(robot)
        block = np.empty(size)
        status = CONSTRAINTS.generic(robot.fdata, robot.idata, block, *state, cuts.table)
        if status != OK:
            raise CONSTRAINTS.error(robot, status, state, "")
        c = make(block)
    rows = cuts.rows
    return LoopConstraints(c.phi[rows], c.J[rows], None if qd is None else c.gamma[rows], cuts.slices, c)


def _q(robot, q):
    q = np.asarray(q, float)
    if q.shape != (robot.nq,) or not np.all(np.isfinite(q)):
        raise StateError(f"q must be {robot.nq} finite numbers ({', '.join(robot.q_names)}), got shape {q.shape}")
    return q


def _v(robot, v, label):
    v = np.asarray(v, float)
    if v.shape != (robot.nv,) or not np.all(np.isfinite(v)):
        raise StateError(f"{label} must be {robot.nv} finite numbers, got shape {v.shape}")
    return v


class Coordinates(NamedTuple):
    """``actuated`` and ``passive`` index arrays into ``v``; ``actuated_q`` the actuated ones' indices into ``q``."""
    actuated: np.ndarray
    passive: np.ndarray
    actuated_q: np.ndarray


def coordinates(robot):
    """``(actuated, passive, actuated_q)``: index arrays into ``v`` (and ``q`` for the one-coordinate actuated
    joints), made once per robot."""
    return robot.engines.derived(_coordinates, robot)


def _coordinates(robot):
    loops = _loops(robot)
    actuated = np.array([robot.idx_v[n] for n in loops.actuated], dtype=np.int64)
    return Coordinates(actuated, np.setdiff1d(np.arange(robot.nv), actuated),
                       np.array([robot.idx_q[n] for n in loops.actuated], dtype=np.int64))


def _pinv(A):
    """Rank-revealing pseudo-inverse, rank and singular values (those below ``RANK_TOLERANCE`` times the largest count
    as lost). A square matrix whose 1-norm condition number proves it far from that (:func:`far_from_rank_loss`) is
    inverted directly: the same matrix in a third of an SVD's time (its singular values then ``None``)."""
    n = A.shape[0]
    if A.shape[1] == n:
        try:
            inverse = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            pass
        else:
            if traceable(far_from_rank_loss)(n, np.abs(A).sum(axis=0).max(), np.abs(inverse).sum(axis=0).max()):
                return inverse, n, None
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > RANK_TOLERANCE * (s[0] if s.size else 0.0)
    return (Vt[keep].T / s[keep]) @ U[:, keep].T, int(keep.sum()), s


def _least_squares(A, b):
    """The minimum-norm least-squares solution of ``A x = b`` (:func:`_pinv`): by an LU solve where ``A`` is square
    and the solve succeeds with a finite result (a Newton step; the line search and the rank check of
    :func:`_actuation` catch a pose near rank loss)."""
    if A.shape[0] == A.shape[1]:
        try:
            x = np.linalg.solve(A, b)
        except np.linalg.LinAlgError:
            pass
        else:
            if np.all(np.isfinite(x)):
                return x
    return _pinv(A)[0] @ b


def _closure_distances(robot, cuts, q):
    """``[(name, distance in m, angle in rad)]`` of each closure at ``q``."""
    out = []
    residual = _constraints(robot, cuts, q).residual
    for c in cuts.closures:
        phi = residual[cuts.slices[c.name]]
        n_lin = int(np.count_nonzero(c.selection[:3].any(axis=0)))
        out.append((c.name, float(np.linalg.norm(phi[:n_lin])), float(np.linalg.norm(phi[n_lin:]))))
    return out


def _newton(robot, cuts, q, free, what):
    """Gauss-Newton on the coordinates ``free`` (velocity indices) until every closure closes to
    ``CLOSURE_TOLERANCE``: least-squares steps (redundant constraints), halved until the residual decreases.
    Returns ``q`` and the constraints there. ``what()``: the state, in words, for the error."""
    c = _constraints(robot, cuts, q)
    additive = robot.nq == robot.nv  # every coordinate on the real line: integrate adds
    for _ in range(MAX_NEWTON_STEPS):
        if np.abs(c.residual).max() < CLOSURE_TOLERANCE:
            return q, c
        dv = np.zeros(robot.nv)
        dv[free] = -_least_squares(c.jacobian[:, free], c.residual)
        for _ in range(20):
            trial = q + dv if additive else integrate(robot, q, dv, 1.0)
            trial_c = _constraints(robot, cuts, trial)
            if np.linalg.norm(trial_c.residual) < np.linalg.norm(c.residual):
                break
            dv /= 2.0
        else:
            break  # a least-squares minimum that does not close: the loop cannot close
        q, c = trial, trial_c
    name, distance, angle = max(_closure_distances(robot, cuts, q), key=lambda x: x[1] + x[2])
    raise ModelError(f"loop '{name}' of '{robot.name}' cannot close {what()}: after {MAX_NEWTON_STEPS} Newton steps "
                     f"its cut frames are still {distance:.3g} m and {angle:.3g} rad apart (links too short or too "
                     "long, or a guess in another assembly mode)")


def _for(robot, qa):
    """``what`` for :func:`_newton`: the actuated state, in words."""
    return lambda: f"for {dict(zip(robot.loops.actuated, np.round(qa, 6).tolist()))}"


def close_loops(robot, qa, *, q_guess=None):
    """Tree coordinates ``q`` ``(nq,)`` closing every loop for the actuated coordinates ``qa`` (in
    ``robot.actuated_joint_names`` order), by Newton's method on the passive ones from ``q_guess`` (default: the
    neutral configuration), which picks the assembly mode. :class:`ModelError` naming the loop that cannot close
    and how far apart its cut frames stay. One state."""
    return _newton(robot, _cuts(robot), _start(robot, q_guess, qa), coordinates(robot).passive, _for(robot, qa))[0]


def _start(robot, q_guess, qa):
    q = neutral(robot).copy() if q_guess is None else _q(robot, q_guess).copy()
    q[coordinates(robot).actuated_q] = _actuated(robot, qa, "qa")
    return q


def actuation_jacobian(robot, q, constraints=None):
    """``G = d q_tree / d q_a`` ``(nv, N)`` at a closed configuration (Khalil eq. 56): identity on the actuated rows,
    ``-J_p^+ J_a`` on the passive ones. :class:`ModelError` when the actuated coordinates do not determine the
    passive ones (a singular pose, or an actuated set too small), naming the loops involved."""
    c = constraints if constraints is not None else loop_constraints(robot, q)
    return _actuation(robot, c)[0]


def _actuation(robot, c):
    """``(G, J_p^+)`` from the constraints ``c``."""
    actuated, passive, _ = coordinates(robot)
    pinv_p, rank, s = _pinv(c.jacobian[:, passive])
    if rank < passive.size:
        motion = np.linalg.svd(c.jacobian[:, passive])[2][-1]  # a passive motion the constraints allow
        moving = passive[np.abs(motion) > 1e-6]
        loops = [name for name, rows in c.rows.items() if np.abs(c.jacobian[rows][:, moving]).max() > 1e-12]
        smallest = s[passive.size - 1] / s[0] if s.size >= passive.size else 0.0
        raise ModelError(f"'{robot.name}': the actuated joints ({', '.join(robot.loops.actuated)}) do not determine "
                         f"the passive ones at this configuration (a singular pose, or too few actuated joints): "
                         f"{', '.join(robot.v_names[k] for k in moving)} can move with them locked, in loop(s) "
                         f"{', '.join(loops) or 'none'} (relative singular value {smallest:.2g})")
    G = np.zeros((robot.nv, actuated.size))
    G[actuated, np.arange(actuated.size)] = 1.0
    G[passive] = -pinv_p @ c.jacobian[:, actuated]
    return G, pinv_p


class ClosedLoopState(NamedTuple):
    """A closed-loop robot's tree state from its actuated one: ``q``, ``qd``, ``qdd`` over the whole tree, ``G``
    ``(nv, N)`` and the loop constraints at ``(q, qd)``."""
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    G: np.ndarray
    constraints: LoopConstraints


def closed_loop_state(robot, qa, qda, qdda=None, *, q_guess=None):
    """The tree's ``q`` (loops closed by :func:`close_loops`), ``qd = G qd_a`` and ``qdd`` (actuated entries
    ``qdda``, passive ones from ``J qdd = gamma``) for one actuated state; ``qdda=None``: zero."""
    return _closed_state(robot, qa, qda, qdda, q_guess)[0]


def _closed_state(robot, qa, qda, qdda, q_guess):
    """:func:`closed_loop_state` and ``J_p^+`` there (the passive columns' pseudo-inverse)."""
    actuated, passive, _ = coordinates(robot)
    cuts = _cuts(robot)
    q, c = _newton(robot, cuts, _start(robot, q_guess, qa), passive, _for(robot, qa))
    G, pinv_p = _actuation(robot, c)
    qd = G @ _actuated(robot, qda, "qda")
    c = _constraints(robot, cuts, q, qd)
    qdd = np.zeros(robot.nv)
    qdd[actuated] = 0.0 if qdda is None else _actuated(robot, qdda, "qdda")
    qdd[passive] = pinv_p @ (c.gamma - c.jacobian[:, actuated] @ qdd[actuated])
    return ClosedLoopState(q, qd, qdd, G, c), pinv_p


def _actuated(robot, x, label):
    x = np.asarray(x, float)
    n = len(robot.loops.actuated)
    if x.shape != (n,) or not np.all(np.isfinite(x)):
        raise StateError(f"{label} must be {n} finite numbers ({', '.join(robot.loops.actuated)}), got shape "
                         f"{x.shape}")
    return x


class ClosedLoopInverseDynamicsResult(NamedTuple):
    """Khalil eqs. 55-57 for one state or a batch: ``torques`` (actuated, ``actuated_joint_names`` order); ``q``,
    ``qd``, ``qdd`` and ``joint_wrenches`` over the tree (``joint_names``), the latter the whole mechanism's (tree
    joint wrenches with the cut wrenches applied); ``loop_wrenches`` ``{loop: (…, 6)}`` (on ``link_b`` by
    ``link_a``, cut frame on ``link_b``, about its origin; minimum norm where constraints are redundant);
    ``tree_torques``: the open tree's inverse dynamics ``Gamma_tree`` at that motion."""
    torques: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    joint_wrenches: np.ndarray
    loop_wrenches: dict
    tree_torques: np.ndarray


def closed_loop_inverse_dynamics(robot, qa, qda, qdda, *, q_guess=None, gravity=None, external_wrenches=None):
    """Actuated torques of a closed-loop robot ``Gamma_a = G^T Gamma_tree(q, qd, qdd)`` (Khalil eqs. 55-57), its
    cut-joint wrenches and the joint wrenches of the whole mechanism, from the actuated coordinates ``qa``, ``qda``,
    ``qdda`` (``actuated_joint_names`` order; one state ``(N,)`` or a batch ``(B, N)``). ``q_guess``: tree
    coordinates whose passive entries pick the assembly mode (default the neutral configuration; one for all states
    of a batch); a controller passes the last state's ``.q`` (Newton then takes a step or two). ``external_wrenches``
    as :func:`inverse_dynamics` (single state)."""
    return _batched((qa, qda, qdda), lambda a, b, c: _inverse_one(robot, a, b, c, q_guess, gravity, external_wrenches))


def _batched(arrays, one):
    """``one(*arrays)`` for one state, or per state of a batch with its results stacked (a dict's per key)."""
    first = np.asarray(arrays[0], float)
    if first.ndim == 2:
        results = [one(*[np.asarray(x, float)[k] for x in arrays]) for k in range(first.shape[0])]
        return type(results[0])(*[
            {name: np.array([r[i][name] for r in results]) for name in results[0][i]} if isinstance(results[0][i], dict)
            else np.array([r[i] for r in results]) for i in range(len(results[0]))])
    return one(*arrays)


def _inverse_one(robot, qa, qda, qdda, q_guess, gravity, external_wrenches):
    # one machine-code call, once the robot has it; else (None, or a state's status) the Python solver
    result = None if external_wrenches else _one_call(robot, qa, qda, qdda, q_guess, gravity)
    if result.__class__ is ClosedLoopInverseDynamicsResult:
        return result
    state, pinv_p = _closed_state(robot, qa, qda, qdda, q_guess)
    tree = inverse_dynamics(robot, state.q, state.qd, state.qdd, gravity=gravity, external_wrenches=external_wrenches)
    torques = state.G.T @ tree.torques  # Khalil eq. 55
    if result == GUARD:  # (counted as the driver counts its own: once computed)
        CLOSED_LOOP.generic_ran(1, PAST_GUARD)  # (its reference path: the Python solver)
    return _with_loads(robot, state, pinv_p, torques, tree, ClosedLoopInverseDynamicsResult)


class OneCall(NamedTuple):
    """A robot's one-call closed-loop inverse dynamics: its written ``code`` (a
    :class:`~rne_dynamics.algorithms.written.Written`: machine code once built), the actuated indices into ``q`` and
    ``v``, the closures' names."""
    code: object
    actuated_q: np.ndarray
    actuated: np.ndarray
    names: tuple


def prepare_closed_loop(robot):
    """Build (or load from the cache) ``robot``'s one-call :func:`closed_loop_inverse_dynamics` now and wait for it
    (a first call traces it and starts its build; the Python solver serves until it is in); whether it serves: a
    robot without redundant constraints, whose coordinates add (no quaternion), with a C compiler."""
    one = _one_call_of(robot)
    return one is not None and one.code.wait()


def _one_call_of(robot):
    """``robot``'s :class:`OneCall` (made on first use: traced, its build started), or None where it serves none."""
    return robot.engines.derived(_make_one_call, robot)


def _one_call(robot, qa, qda, qdda, q_guess, gravity):
    """The result of :data:`~rne_dynamics.algorithms.loop_kinematics.CLOSED_LOOP` for one state as one call of the
    robot's written machine code; None: a robot it does not serve (redundant constraints, a floating base), its
    machine code not built yet, arguments that are not one state's float64 arrays of their sizes (the Python path
    converts and explains them); or the status of a state it hands back (a guard's, a value the Python path
    explains)."""
    one = _one_call_of(robot) if robot.loops is not None else None  # (no loops: the Python solver says so)
    if one is None or one.code.single is None:
        return None
    guess = () if q_guess is None else (q_guess,)
    if not (one_state_arrays((qa, qda, qdda, *guess)) and qa.size == one.actuated_q.size
            and qda.size == qdda.size == one.actuated.size and all(g.size == robot.nq for g in guess)):
        return None
    q = neutral(robot).copy() if q_guess is None else q_guess.copy()
    qd, qdd = np.zeros(robot.nv), np.zeros(robot.nv)
    q[one.actuated_q], qd[one.actuated], qdd[one.actuated] = qa, qda, qdda
    result = one.code.fresh(tuple, q, qd, qdd, gravity_vector(gravity))
    if result.__class__ is int:  # a status: a state handed back, or a value the Python path explains
        return result
    torques, q, qd, qdd, joint_wrenches, loop_wrenches, tree_torques = result
    return ClosedLoopInverseDynamicsResult(torques[:one.actuated.size], q, qd, qdd, joint_wrenches,
                                           dict(zip(one.names, loop_wrenches)), tree_torques)


def _make_one_call(robot):
    """Trace the robot's one-call solve and start building its machine code (or load it from the cache): for a
    robot whose passive Jacobian is square (every constraint independent) and whose coordinates add, else None. Its
    constraint rows go in the order partial pivoting takes them at the traced state."""
    _loops(robot)
    actuated, passive, actuated_q = coordinates(robot)
    cuts = _cuts(robot)
    if cuts.rows.size != passive.size or robot.nq != robot.nv or written.MODE == "0":
        return None
    try:
        J = CONSTRAINTS.run(robot, None, (_one_call_sample(robot)[0], np.zeros(robot.nv)), extras=(cuts.table,)).J
    except ModelError:  # loops that do not close near the neutral configuration
        return None
    rows, n = cuts.rows.astype(float), passive.size
    order = np.empty(n)
    if traceable(passive_lu)(J, rows, passive.astype(float), np.empty((n, n)), order, 1.0) != OK:
        return None
    extras = (cuts.table, np.concatenate([[actuated.size], actuated, passive, order]).astype(float))
    written.written(CLOSED_LOOP, robot, True, extras)
    code = robot.engines.written.get((CLOSED_LOOP, True, *written.extras_key(extras)))
    return None if code is None else OneCall(code, actuated_q, actuated, tuple(c.name for c in cuts.closures))


def _one_call_sample(robot):
    """The sample state the one-call solve is traced at: a closed configuration near the neutral one but of no
    symmetry (where entries of ``J_p`` that vanish would decide the pivots), velocities and accelerations, standard
    gravity (made once per robot)."""
    return robot.engines.derived(_sample, robot)


def _sample(robot):
    rng = np.random.default_rng(7)
    actuated_q = coordinates(robot).actuated_q
    q = close_loops(robot, neutral(robot)[actuated_q] + rng.uniform(-0.02, 0.02, actuated_q.size))
    return [q, rng.uniform(-1.0, 1.0, robot.nv), rng.uniform(-1.0, 1.0, robot.nv), gravity_vector(None)]


CLOSED_LOOP.sample = _one_call_sample


def _with_loads(robot, state, pinv_p, torques, tree, result_type):
    """The result ``result_type(torques, q, qd, qdd, joint_wrenches, loop_wrenches, tree torques)`` of the tree's
    inverse dynamics ``tree`` at the state's motion, with the cut wrenches from ``J^T lambda = E_a tau_a -
    Gamma_tree`` and the mechanism's joint wrenches (the tree's, loaded by the cut wrenches).

    The passive rows read ``J_p^T lambda = -Gamma_tree,p``, whose minimum-norm solution ``-(J_p^+)^T
    Gamma_tree,p`` also satisfies the actuated rows (there ``tau_a = G^T Gamma_tree`` with ``G_p = -J_p^+ J_a``)
    and so is the minimum-norm solution of the whole system: ``J_p^+`` of the state (``pinv_p``) serves."""
    _, passive, _ = coordinates(robot)
    cuts = _cuts(robot)
    loop_wrenches, joint_wrenches = _loads(cuts, state.constraints.frames, -pinv_p.T @ tree.torques[passive],
                                           tree.joint_wrenches.copy())
    return result_type(torques, state.q, state.qd, state.qdd, joint_wrenches,
                       {c.name: loop_wrenches[k] for k, c in enumerate(cuts.closures)}, tree.torques.copy())


def _loads(cuts, frames, lam, joint_wrenches):
    """``(w, joint_wrenches)``: the cut wrenches ``(nc, 6)`` of the multipliers ``lam`` (the real constraint rows)
    and ``joint_wrenches`` ``(nj, 6)`` with the loads they put on the joints added
    (:func:`~rne_dynamics.algorithms.loop_kinematics.cut_loads`)."""
    padded = np.zeros(6 * len(cuts.closures))
    padded[cuts.rows] = lam
    w = np.empty((len(cuts.closures), 6))
    traceable(cut_loads)(cuts.m, cuts.table, frames, padded, w, joint_wrenches, np.empty((cuts.m.nb + 1, 6)))
    return w, joint_wrenches


class ClosedLoopForwardDynamicsResult(NamedTuple):
    """Khalil eq. 58 for one state or a batch: ``qdda`` (actuated accelerations), the tree's ``q``, ``qd``,
    ``qdd``, the mechanism's ``joint_wrenches`` and the cut ``loop_wrenches`` (as
    :class:`ClosedLoopInverseDynamicsResult`), ``tree_torques``."""
    qdda: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    joint_wrenches: np.ndarray
    loop_wrenches: dict
    tree_torques: np.ndarray


def closed_loop_forward_dynamics(robot, qa, qda, tau_a, *, q_guess=None, gravity=None):
    """Actuated accelerations of a closed-loop robot from its actuated torques ``tau_a``: ``Gamma_a = A_c qdd_a +
    H_c`` (Khalil eq. 58) with ``A_c = G^T M G`` and ``H_c = G^T (M qdd_0 + C qd + g)``, ``qdd_0`` the tree
    acceleration at ``qdd_a = 0``; with the cut wrenches and joint wrenches of the motion. One state or a batch."""
    return _batched((qa, qda, tau_a), lambda a, b, c: _forward_one(robot, a, b, c, q_guess, gravity))


def _forward_one(robot, qa, qda, tau_a, q_guess, gravity):
    state, pinv_p = _closed_state(robot, qa, qda, None, q_guess)
    G = state.G
    M = mass_matrix(robot, state.q)
    H_c = G.T @ (M @ state.qdd + bias_torques(robot, state.q, state.qd, gravity=gravity))
    qdda = np.linalg.solve(G.T @ M @ G, _actuated(robot, tau_a, "tau_a") - H_c)
    state = state._replace(qdd=state.qdd + G @ qdda)
    tree = inverse_dynamics(robot, state.q, state.qd, state.qdd, gravity=gravity)
    result = _with_loads(robot, state, pinv_p, _actuated(robot, tau_a, "tau_a"), tree,
                         ClosedLoopForwardDynamicsResult)
    return result._replace(qdda=qdda)


class ConstrainedDynamicsResult(NamedTuple):
    """``qdd`` ``(nv,)`` of the tree under its loop constraints and the cut ``loop_wrenches`` ``{loop: (6,)}``."""
    qdd: np.ndarray
    loop_wrenches: dict


def constrained_forward_dynamics(robot, q, qd, tau, *, gravity=None, baumgarte=(0.0, 0.0)):
    """Tree accelerations under the loop constraints for tree torques ``tau`` ``(nv,)``, from the KKT system
    ``[[M, J^T], [J, 0]] [qdd; lambda] = [tau - C qd - g; gamma]`` with the constraint rows reduced to their range
    (SVD) so that redundant constraints give the minimum-norm ``lambda``. ``baumgarte=(alpha, beta)`` adds
    ``-2 alpha J qd - beta^2 phi`` to ``gamma`` (drift control in simulation). One state."""
    q, qd, tau = _q(robot, q), _v(robot, qd, "qd"), _v(robot, tau, "tau")
    c = loop_constraints(robot, q, qd)
    alpha, beta = baumgarte
    gamma = c.gamma - 2.0 * alpha * c.jacobian @ qd - beta ** 2 * c.residual
    U, s, Vt = np.linalg.svd(c.jacobian, full_matrices=False)
    keep = s > RANK_TOLERANCE * s[0]
    J_r = s[keep, None] * Vt[keep]
    M = mass_matrix(robot, q)
    n, m = robot.nv, int(keep.sum())
    kkt = np.block([[M, J_r.T], [J_r, np.zeros((m, m))]])
    rhs = np.concatenate([tau - bias_torques(robot, q, qd, gravity=gravity), U[:, keep].T @ gamma])
    solution = np.linalg.solve(kkt, rhs)
    lam = U[:, keep] @ solution[n:]
    cuts = _cuts(robot)
    w, _ = _loads(cuts, c.frames, lam, np.zeros((cuts.m.nj, 6)))
    return ConstrainedDynamicsResult(solution[:n], {closure.name: w[k] for k, closure in enumerate(cuts.closures)})


class ClosedLoopTrajectory(NamedTuple):
    """A simulated motion: ``time`` ``(T,)``, ``q`` ``(T, nq)``, ``qd`` ``(T, nv)``; ``drift``: the largest loop
    residual ``|phi|`` met at each sample (m, rad); ``energy``: kinetic plus gravitational potential (J)."""
    time: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    drift: np.ndarray
    energy: np.ndarray


def simulate_closed_loop(robot, q0, qd0, duration, dt, *, tau=None, gravity=None, baumgarte=(0.0, 0.0),
                         project=True):
    """Simulate a closed-loop robot from a closed state ``(q0, qd0)``: Runge-Kutta 4 on the tree state's manifold
    (:mod:`~rne_dynamics.algorithms.integrator`) with :func:`constrained_forward_dynamics` (optional Baumgarte
    terms), then, with ``project``, the positions projected back on ``phi = 0`` (minimum-norm Gauss-Newton) and the
    velocities on ``J qd = 0`` after each step.
    ``tau``: tree torques ``(nv,)`` or ``tau(t, q, qd)``, default zero."""
    cuts = _cuts(robot)
    g = np.array([0.0, 0.0, -9.81]) if gravity is None else np.asarray(gravity, float)
    torque = tau if callable(tau) else (lambda t, q, qd, value=np.zeros(robot.nv) if tau is None else
                                        _v(robot, tau, "tau"): value)
    everything = np.arange(robot.nv)

    def acceleration(t, q, qd):
        return constrained_forward_dynamics(robot, q, qd, torque(t, q, qd), gravity=g, baumgarte=baumgarte).qdd

    def energy(q, qd):
        return 0.5 * qd @ mass_matrix(robot, q) @ qd - robot.total_mass * g @ center_of_mass(robot, q)

    q, qd = _q(robot, q0).copy(), _v(robot, qd0, "qd0").copy()
    steps = int(round(duration / dt))
    out_q, out_qd = [q], [qd]
    drift = [np.abs(loop_constraints(robot, q).residual).max()]
    for k in range(steps):
        t = k * dt
        q, qd = rkmk4_step(robot, q, qd, acceleration, t, dt)
        drift_now = np.abs(loop_constraints(robot, q).residual).max()
        if project:
            q, c = _newton(robot, cuts, q, everything, lambda: f"at t = {t + dt:.4g} s")
            pinv, _, _ = _pinv(c.jacobian)
            qd = qd - pinv @ (c.jacobian @ qd)
        drift.append(drift_now)
        out_q.append(q)
        out_qd.append(qd)
    q_all, qd_all = np.array(out_q), np.array(out_qd)
    return ClosedLoopTrajectory(np.arange(steps + 1) * dt, q_all, qd_all, np.array(drift),
                                np.array([energy(a, b) for a, b in zip(q_all, qd_all)]))


def _world_weld(robot, link, pose):
    """A weld closure holding ``link``'s frame at ``pose`` (4x4, world) on the fixed base."""
    T = np.asarray(pose, float)
    if T.shape != (4, 4) or not np.all(np.isfinite(T)):
        raise StateError(f"pose must be a finite 4x4 homogeneous matrix, got shape {T.shape}")
    robot.link_frame(link)
    return LoopClosure("platform pose", "weld", link, np.eye(3), np.zeros(3), robot.root_link, T[:3, :3].copy(),
                       T[:3, 3].copy())


def platform_inverse_dynamics(robot, link, pose, twist, acceleration, *, q_guess=None, gravity=None):
    """Inverse dynamics of a parallel robot from its platform's motion (Khalil Sec. 5): ``link``'s ``pose``
    (4x4 in the world), ``twist`` (origin velocity and angular velocity, world axes) and ``acceleration`` (classical
    acceleration of the origin and angular acceleration, world axes). Every tree coordinate is solved from the loops
    and the platform pose (weld to the world), the velocities and accelerations from the same constraints; then the
    actuated forces as :func:`closed_loop_inverse_dynamics` (``G^T Gamma_tree``, the projection that Khalil's
    eq. 66 evaluates leg by leg). One state."""
    loops = _loops(robot)
    weld = _world_weld(robot, link, pose)
    cuts = _cuts(robot, loops.closures + (weld,))
    q = neutral(robot).copy() if q_guess is None else _q(robot, q_guess).copy()
    everything = np.arange(robot.nv)
    q, c = _newton(robot, cuts, q, everything, lambda: "with the platform at the given pose")
    pinv, rank, _ = _pinv(c.jacobian)
    if rank < robot.nv:
        raise ModelError(f"'{robot.name}': the platform pose and the loops do not determine every joint (rank {rank} "
                         f"of {robot.nv}): a singular pose")
    R = weld.R_b
    target = np.zeros(c.jacobian.shape[0])
    target[-6:] = np.concatenate([R.T @ np.asarray(twist, float)[:3], R.T @ np.asarray(twist, float)[3:]])
    qd = pinv @ target
    c = _constraints(robot, cuts, q, qd)
    target[-6:] = np.concatenate([R.T @ np.asarray(acceleration, float)[:3],
                                  R.T @ np.asarray(acceleration, float)[3:]])
    qdd = pinv @ (c.gamma + target)
    actuated, _, actuated_q = coordinates(robot)
    return closed_loop_inverse_dynamics(robot, q[actuated_q], qd[actuated], qdd[actuated], q_guess=q, gravity=gravity)


def platform_forward_dynamics(robot, link, qa, qda, tau_a, *, q_guess=None, gravity=None):
    """The platform's acceleration ``(6,)`` (classical acceleration of ``link``'s origin and angular acceleration,
    world axes) from the actuated state and actuator forces ``tau_a`` (Khalil eq. 58 then the platform's
    kinematics). One state."""
    result = closed_loop_forward_dynamics(robot, qa, qda, tau_a, q_guess=q_guess, gravity=gravity)
    return frame_acceleration(robot, result.q, result.qd, result.qdd, link).copy()


def mobility(robot, q=None):
    """``(grubler, rank_mobility, rank)``: the Grübler-Kutzbach count ``nv - m`` (every constraint counted), the
    mobility ``nv - rank J`` from the constraint Jacobian at ``q`` (default: the loops closed from the neutral
    configuration's actuated coordinates) and that rank; they differ when constraints are redundant."""
    loops = _loops(robot)
    if q is None:
        actuated_q = coordinates(robot).actuated_q
        q = close_loops(robot, neutral(robot)[actuated_q]) if actuated_q.size \
            else _newton(robot, _cuts(robot), neutral(robot).copy(), np.arange(robot.nv), lambda: "from neutral")[0]
    _, rank, _ = _pinv(loop_constraints(robot, q).jacobian)
    return robot.nv - loops.size, robot.nv - rank, rank


__all__ = ["Loops", "LoopClosure", "loop_constraints", "close_loops", "actuation_jacobian", "closed_loop_state",
           "closed_loop_inverse_dynamics", "closed_loop_forward_dynamics", "constrained_forward_dynamics",
           "simulate_closed_loop", "platform_inverse_dynamics", "platform_forward_dynamics", "mobility",
           "prepare_closed_loop"]
