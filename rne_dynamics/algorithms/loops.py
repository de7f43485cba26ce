"""Closed kinematic loops on the open tree's public kinematics and dynamics (Khalil 2010, Secs. 2.2, 4 and 5).

Each loop is cut at one joint (:mod:`~rne_dynamics.model.loops`); the tree's coordinates ``q`` then obey the loop
constraints ``phi(q) = 0`` (Khalil eq. 3), their velocity form ``J qd = 0`` (eq. 4) and ``J qdd = gamma`` with
``gamma = -Jdot qd``. ``J`` stacks, per closure, the selected rows ``K^T`` of the relative twist of the cut frame on
``link_a`` with respect to the material point of ``link_b`` under it, in the cut frame on ``link_b``. Its columns
split into the actuated ``J_a`` and the passive ``J_p``; the passive coordinates follow from the actuated ones
(``qd_p = -J_p^+ J_a qd_a``), which gives ``G = d q_tree / d q_a`` (eq. 56). Redundant constraints (a planar linkage
closed by a spatial cut) leave ``J_p`` of full column rank but not of full row rank: every solve here is a
rank-revealing least-squares one (SVD), and the cut wrenches are the minimum-norm solution.

Sign of the cut wrench ``w`` (on ``link_b`` by ``link_a``, cut frame on ``link_b``, about its origin): with
``w = K lambda``, the tree's equations of motion read ``M qdd + h = E_a tau_a - J^T lambda``.
"""
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, StateError
from ..model.loops import LoopClosure, Loops
from .configuration import integrate, neutral
from .crba import mass_matrix
from .integrator import rkmk4_step
from .kinematics import center_of_mass, frame_acceleration, frame_jacobian, frame_placement
from .rnea import bias_torques, inverse_dynamics

#: Relative singular value below which a direction of the constraint Jacobian counts as lost (rank-revealing).
RANK_TOLERANCE = 1e-9
#: Loops close to this (m, rad) or better; the contract asks for 1e-10.
CLOSURE_TOLERANCE = 1e-12
MAX_NEWTON_STEPS = 60


def _loops(robot):
    if robot.loops is None:
        raise ModelError(f"robot '{robot.name}' has no loop closures; load it with load_urdf(..., loops=...)")
    return robot.loops


def _cross(a, b):
    """``a x b`` of two 3-vectors (``np.cross`` costs ten times more on one pair)."""
    return np.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]])


def _skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def _log(R):
    """Rotation vector of ``R`` (the inverse of Rodrigues' formula)."""
    cos = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    angle = np.arccos(cos)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2.0
    if angle < 1e-6:
        return w
    if angle > np.pi - 1e-6:  # axis from the symmetric part
        axis = np.sqrt(np.maximum((np.diag(R) + 1.0) / 2.0, 0.0))
        k = np.argmax(axis)
        axis = (R[:, k] + np.eye(3)[k]) / np.sqrt(2.0 * (1.0 + R[k, k]))
        return angle * axis
    return angle / np.sin(angle) * w


class _Side(NamedTuple):
    """A cut frame's link: its origin ``o`` and rotation ``R_link``, the cut frame ``R``, ``p`` in the world, the
    link's Jacobian ``J`` (local world aligned) and, with a velocity, ``v``, ``w`` (origin velocity, angular) and
    ``a``, ``alpha`` (classical acceleration at zero ``qdd``)."""
    o: np.ndarray
    R_link: np.ndarray
    R: np.ndarray
    p: np.ndarray
    J: np.ndarray
    v: np.ndarray
    w: np.ndarray
    a: np.ndarray
    alpha: np.ndarray


def _links(robot, q, qd, names, known=None):
    """``{link: (T, J, acceleration)}`` for ``names`` at ``q``: pose, Jacobian (local world aligned) and, with a
    velocity, the classical acceleration at zero ``qdd``; computed once per link (several cuts share a platform),
    poses and Jacobians taken from ``known`` where it has them."""
    out = {}
    for link in names:
        if link in out:
            continue
        T, J, acc = known[link] if known and link in known else (
            frame_placement(robot, q, link).copy(), frame_jacobian(robot, q, link).copy(), None)
        if qd is not None and acc is None:
            acc = frame_acceleration(robot, q, qd, np.zeros(robot.nv), link).copy()
        out[link] = (T, J, acc)
    return out


def _side(links, qd, link, R_c, p_c):
    T, J, acc = links[link]
    R_link, o = T[:3, :3], T[:3, 3]
    v = w = a = alpha = None
    if qd is not None:
        twist = J @ qd
        v, w, a, alpha = twist[:3], twist[3:], acc[:3], acc[3:]
    return _Side(o, R_link, R_link @ R_c, o + R_link @ p_c, J, v, w, a, alpha)


class ClosureTerms(NamedTuple):
    """One closure's terms at a state: residual ``phi`` ``(m,)``, Jacobian ``J`` ``(m, nv)``, ``gamma`` ``(m,)``
    (``None`` without velocity), the relative point offset ``d`` (cut frame ``a``'s origin from ``b``'s, ``b`` axes)
    and the frame ``b``'s rotation ``R_b`` in the world."""
    phi: np.ndarray
    J: np.ndarray
    gamma: np.ndarray
    d: np.ndarray
    R_b: np.ndarray


def closure_terms(robot, closure: LoopClosure, q, qd=None, links=None):
    """``phi``, ``J`` and ``gamma = -Jdot qd`` of one closure (Khalil eqs. 3, 4).

    ``phi``: the origin of frame ``a`` from frame ``b``'s, in ``b`` axes (the components ``K`` selects), then the
    orientation error: ``log(R_b^T R_a)`` (weld, prismatic) or, for a revolute cut, ``K^T (axis x R_b^T R_a axis)``,
    whose derivative at closure is the relative angular velocity normal to the axis, the Jacobian's row."""
    if links is None:
        links = _links(robot, q, qd, (closure.link_a, closure.link_b))
    A = _side(links, qd, closure.link_a, closure.R_a, closure.p_a)
    B = _side(links, qd, closure.link_b, closure.R_b, closure.p_b)
    K = closure.selection
    RbT = B.R.T
    d_world = A.p - B.p
    R_rel = RbT @ A.R
    if closure.kind == "revolute":
        rotation = _cross(closure.axis, R_rel @ closure.axis)
    elif closure.kind == "point":
        rotation = np.zeros(3)
    else:
        rotation = _log(R_rel)
    phi = K.T @ np.concatenate([RbT @ d_world, rotation])
    rA, rB = A.p - A.o, A.p - B.o  # the cut point from each link's origin
    J_A = np.vstack([A.J[:3] - _skew(rA) @ A.J[3:], A.J[3:]])
    J_B = np.vstack([B.J[:3] - _skew(rB) @ B.J[3:], B.J[3:]])
    J = K.T @ np.vstack([RbT @ (J_A[:3] - J_B[:3]), RbT @ (J_A[3:] - J_B[3:])])
    gamma = None
    if qd is not None:
        v_A = A.v + _cross(A.w, rA)
        a_A = A.a + _cross(A.alpha, rA) + _cross(A.w, _cross(A.w, rA))
        rel_v = v_A - (B.v + _cross(B.w, rB))
        rel_w = A.w - B.w
        rel_a = a_A - (B.a + _cross(B.alpha, rB) + _cross(B.w, v_A - B.v))
        rel_alpha = A.alpha - B.alpha
        gamma = -K.T @ np.concatenate([RbT @ (rel_a - _cross(B.w, rel_v)),
                                       RbT @ (rel_alpha - _cross(B.w, rel_w))])
    return ClosureTerms(phi, J, gamma, RbT @ d_world, B.R)


class LoopConstraints(NamedTuple):
    """The stacked loop constraints at a state: ``residual`` ``phi(q)`` ``(m,)``, ``jacobian`` ``(m, nv)``,
    ``gamma`` ``= -Jdot qd`` ``(m,)`` (``None`` without ``qd``); ``rows`` maps each closure's name to its slice;
    ``links``: the cut links' poses, Jacobians and accelerations (:func:`_links`)."""
    residual: np.ndarray
    jacobian: np.ndarray
    gamma: np.ndarray
    rows: dict
    terms: tuple
    links: dict


def loop_constraints(robot, q, qd=None):
    """The loop constraints of ``robot`` at ``q`` (and ``qd``): ``phi(q)``, its Jacobian ``J`` and ``gamma =
    -Jdot qd`` (Khalil eqs. 3 and 4; ``J qdd = gamma`` along any motion that keeps the loops closed). One state."""
    return _constraints(robot, _loops(robot).closures, _q(robot, q), None if qd is None else _v(robot, qd, "qd"))


def _constraints(robot, closures, q, qd, known=None):
    links = _links(robot, q, qd, [name for c in closures for name in (c.link_a, c.link_b)], known)
    terms = [closure_terms(robot, c, q, qd, links) for c in closures]
    rows, start = {}, 0
    for c in closures:
        rows[c.name] = slice(start, start + c.size)
        start += c.size
    gamma = None if qd is None else np.concatenate([t.gamma for t in terms])
    return LoopConstraints(np.concatenate([t.phi for t in terms]), np.vstack([t.J for t in terms]), gamma, rows,
                           tuple(terms), links)


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


def coordinates(robot):
    """``(actuated, passive)`` index arrays into ``v`` (and ``q`` for the one-coordinate actuated joints)."""
    loops = _loops(robot)
    actuated = np.array([robot.idx_v[n] for n in loops.actuated], dtype=np.int64)
    passive = np.setdiff1d(np.arange(robot.nv), actuated)
    return actuated, passive


def _pinv(A):
    """Rank-revealing pseudo-inverse and rank (singular values below ``RANK_TOLERANCE`` times the largest)."""
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > RANK_TOLERANCE * (s[0] if s.size else 0.0)
    return (Vt[keep].T / s[keep]) @ U[:, keep].T, int(keep.sum()), s


def _closure_distances(robot, closures, q):
    """``[(name, distance in m, angle in rad)]`` of each closure at ``q``."""
    out = []
    for c, t in zip(closures, _constraints(robot, closures, q, None).terms):
        n_lin = int(np.count_nonzero(c.selection[:3].any(axis=0)))
        out.append((c.name, float(np.linalg.norm(t.phi[:n_lin])), float(np.linalg.norm(t.phi[n_lin:]))))
    return out


def _newton(robot, closures, q, free, what):
    """Gauss-Newton on the coordinates ``free`` (velocity indices) until every closure closes to
    ``CLOSURE_TOLERANCE``: least-squares steps (redundant constraints), halved until the residual decreases.
    Returns ``q`` and the constraints there."""
    c = _constraints(robot, closures, q, None)
    for _ in range(MAX_NEWTON_STEPS):
        if np.abs(c.residual).max() < CLOSURE_TOLERANCE:
            return q, c
        pinv, _, _ = _pinv(c.jacobian[:, free])
        dv = np.zeros(robot.nv)
        dv[free] = -pinv @ c.residual
        for _ in range(20):
            trial = integrate(robot, q, dv, 1.0)
            trial_c = _constraints(robot, closures, trial, None)
            if np.linalg.norm(trial_c.residual) < np.linalg.norm(c.residual):
                break
            dv /= 2.0
        else:
            break  # a least-squares minimum that does not close: the loop cannot close
        q, c = trial, trial_c
    name, distance, angle = max(_closure_distances(robot, closures, q), key=lambda x: x[1] + x[2])
    raise ModelError(f"loop '{name}' of '{robot.name}' cannot close {what}: after {MAX_NEWTON_STEPS} Newton steps its "
                     f"cut frames are still {distance:.3g} m and {angle:.3g} rad apart (links too short or too long, "
                     "or a guess in another assembly mode)")


def close_loops(robot, qa, *, q_guess=None):
    """Tree coordinates ``q`` ``(nq,)`` closing every loop for the actuated coordinates ``qa`` (in
    ``robot.actuated_joint_names`` order), by Newton's method on the passive ones from ``q_guess`` (default: the
    neutral configuration), which picks the assembly mode. :class:`ModelError` naming the loop that cannot close
    and how far apart its cut frames stay. One state."""
    loops = _loops(robot)
    actuated, passive = coordinates(robot)
    q = _start(robot, q_guess, qa, actuated)
    return _newton(robot, loops.closures, q, passive,
                   f"for {dict(zip(loops.actuated, np.round(qa, 6).tolist()))}")[0]


def _start(robot, q_guess, qa, actuated):
    q = neutral(robot).copy() if q_guess is None else _q(robot, q_guess).copy()
    qa = np.asarray(qa, float)
    if qa.shape != (len(actuated),) or not np.all(np.isfinite(qa)):
        raise StateError(f"qa must be {len(actuated)} finite numbers ({', '.join(robot.loops.actuated)}), "
                         f"got shape {qa.shape}")
    for name, value in zip(robot.loops.actuated, qa):
        q[robot.idx_q[name]] = value
    return q


def actuation_jacobian(robot, q, constraints=None):
    """``G = d q_tree / d q_a`` ``(nv, N)`` at a closed configuration (Khalil eq. 56): identity on the actuated rows,
    ``-J_p^+ J_a`` on the passive ones. :class:`ModelError` when the actuated coordinates do not determine the
    passive ones (a singular pose, or an actuated set too small), naming the loops involved."""
    c = constraints if constraints is not None else loop_constraints(robot, q)
    return _actuation(robot, c)[0]


def _actuation(robot, c):
    """``(G, J_p^+)`` from the constraints ``c``."""
    actuated, passive = coordinates(robot)
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
    ``(nv, N)`` and the loop constraints at ``q``."""
    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    G: np.ndarray
    constraints: LoopConstraints


def closed_loop_state(robot, qa, qda, qdda=None, *, q_guess=None):
    """The tree's ``q`` (loops closed by :func:`close_loops`), ``qd = G qd_a`` and ``qdd`` (actuated entries
    ``qdda``, passive ones from ``J qdd = gamma``) for one actuated state; ``qdda=None``: zero."""
    loops = _loops(robot)
    actuated, passive = coordinates(robot)
    q, c = _newton(robot, loops.closures, _start(robot, q_guess, qa, actuated), passive,
                   f"for {dict(zip(loops.actuated, np.round(qa, 6).tolist()))}")
    G, pinv_p = _actuation(robot, c)
    qd = G @ _actuated(robot, qda, "qda")
    c = _constraints(robot, loops.closures, q, qd, c.links)
    qdd = np.zeros(robot.nv)
    qdd[actuated] = 0.0 if qdda is None else _actuated(robot, qdda, "qdda")
    qdd[passive] = pinv_p @ (c.gamma - c.jacobian[:, actuated] @ qdd[actuated])
    return ClosedLoopState(q, qd, qdd, G, c)


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
    of a batch). ``external_wrenches`` as :func:`inverse_dynamics` (single state)."""
    return _batched(robot, (qa, qda, qdda), lambda a, b, c: _inverse_one(robot, a, b, c, q_guess, gravity,
                                                                        external_wrenches))


def _batched(robot, arrays, one):
    first = np.asarray(arrays[0], float)
    if first.ndim == 2:
        results = [one(*[np.asarray(x, float)[k] for x in arrays]) for k in range(first.shape[0])]
        return type(results[0])(*[
            {name: np.array([r[i][name] for r in results]) for name in results[0][i]} if isinstance(results[0][i], dict)
            else np.array([r[i] for r in results]) for i in range(len(results[0]))])
    return one(*arrays)


def _inverse_one(robot, qa, qda, qdda, q_guess, gravity, external_wrenches):
    state = closed_loop_state(robot, qa, qda, qdda, q_guess=q_guess)
    tree = inverse_dynamics(robot, state.q, state.qd, state.qdd, gravity=gravity,
                            external_wrenches=external_wrenches).torques.copy()
    torques = state.G.T @ tree  # Khalil eq. 55
    return _with_loads(robot, state, torques, tree, gravity, external_wrenches, ClosedLoopInverseDynamicsResult)


def _with_loads(robot, state, torques, tree, gravity, external_wrenches, result_type):
    """The result ``result_type(torques, q, qd, qdd, joint_wrenches, loop_wrenches, tree)`` with the cut wrenches
    from ``J^T lambda = E_a tau_a - Gamma_tree`` (minimum norm) and the mechanism's joint wrenches."""
    actuated, _ = coordinates(robot)
    driven = np.zeros(robot.nv)
    driven[actuated] = torques
    pinv_T, _, _ = _pinv(state.constraints.jacobian.T)
    lam = pinv_T @ (driven - tree)
    loop_wrenches, link_wrenches = _cut_wrenches(robot, state, lam)
    wrenches = dict(external_wrenches or {})
    for link, w in link_wrenches.items():
        wrenches[link] = np.asarray(wrenches.get(link, np.zeros(6)), float) + w
    joint_wrenches = inverse_dynamics(robot, state.q, state.qd, state.qdd, gravity=gravity,
                                      external_wrenches=wrenches).joint_wrenches.copy()
    return result_type(torques, state.q, state.qd, state.qdd, joint_wrenches, loop_wrenches, tree)


def _cut_wrenches(robot, state, lam):
    """``({loop: w in the cut frame on link_b, about its origin}, {link: wrench on it, link frame})`` from the
    multipliers ``lam``; links of the fixed base get none (no joint feels them)."""
    loop_wrenches, on_links = {}, {}
    for closure, terms in zip(robot.loops.closures, state.constraints.terms):
        w = closure.selection @ lam[state.constraints.rows[closure.name]]  # about the cut point of frame a
        w[3:] += _cross(terms.d, w[:3])                                  # about frame b's origin
        loop_wrenches[closure.name] = w
        f_world, m_world = terms.R_b @ w[:3], terms.R_b @ w[3:]
        T_b = state.constraints.links[closure.link_b][0]
        p_b = T_b[:3, 3] + T_b[:3, :3] @ closure.p_b
        for link, sign in ((closure.link_b, 1.0), (closure.link_a, -1.0)):
            if robot.link_frames[link][0] < 0:
                continue
            T = state.constraints.links[link][0]
            R, o = T[:3, :3], T[:3, 3]
            f = sign * R.T @ f_world
            m = sign * R.T @ m_world + _cross(R.T @ (p_b - o), f)
            on_links[link] = on_links.get(link, np.zeros(6)) + np.concatenate([f, m])
    return loop_wrenches, on_links


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
    return _batched(robot, (qa, qda, tau_a), lambda a, b, c: _forward_one(robot, a, b, c, q_guess, gravity))


def _forward_one(robot, qa, qda, tau_a, q_guess, gravity):
    state = closed_loop_state(robot, qa, qda, None, q_guess=q_guess)
    G = state.G
    M = mass_matrix(robot, state.q)
    H_c = G.T @ (M @ state.qdd + bias_torques(robot, state.q, state.qd, gravity=gravity))
    qdda = np.linalg.solve(G.T @ M @ G, _actuated(robot, tau_a, "tau_a") - H_c)
    state = state._replace(qdd=state.qdd + G @ qdda)
    tree = inverse_dynamics(robot, state.q, state.qd, state.qdd, gravity=gravity).torques.copy()
    result = _with_loads(robot, state, _actuated(robot, tau_a, "tau_a"), tree, gravity, None,
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
    state = ClosedLoopState(q, qd, solution[:n], None, c)
    loop_wrenches, _ = _cut_wrenches(robot, state, lam)
    return ConstrainedDynamicsResult(solution[:n], loop_wrenches)


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
    loops = _loops(robot)
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
            q, c = _newton(robot, loops.closures, q, everything, f"at t = {t + dt:.4g} s")
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
    closures = loops.closures + (weld,)
    q = neutral(robot).copy() if q_guess is None else _q(robot, q_guess).copy()
    everything = np.arange(robot.nv)
    q, c = _newton(robot, closures, q, everything, "with the platform at the given pose")
    pinv, rank, _ = _pinv(c.jacobian)
    if rank < robot.nv:
        raise ModelError(f"'{robot.name}': the platform pose and the loops do not determine every joint (rank {rank} "
                         f"of {robot.nv}): a singular pose")
    R = weld.R_b
    target = np.zeros(c.jacobian.shape[0])
    target[-6:] = np.concatenate([R.T @ np.asarray(twist, float)[:3], R.T @ np.asarray(twist, float)[3:]])
    qd = pinv @ target
    c = _constraints(robot, closures, q, qd, c.links)
    target[-6:] = np.concatenate([R.T @ np.asarray(acceleration, float)[:3],
                                  R.T @ np.asarray(acceleration, float)[3:]])
    qdd = pinv @ (c.gamma + target)
    actuated, _ = coordinates(robot)
    return closed_loop_inverse_dynamics(robot, q[[robot.idx_q[n] for n in loops.actuated]], qd[actuated],
                                        qdd[actuated], q_guess=q, gravity=gravity)


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
        actuated, _ = coordinates(robot)
        q = close_loops(robot, neutral(robot)[[robot.idx_q[n] for n in loops.actuated]]) if actuated.size \
            else _newton(robot, loops.closures, neutral(robot).copy(), np.arange(robot.nv), "from neutral")[0]
    _, rank, _ = _pinv(loop_constraints(robot, q).jacobian)
    return robot.nv - loops.size, robot.nv - rank, rank


__all__ = ["Loops", "LoopClosure", "loop_constraints", "close_loops", "actuation_jacobian", "closed_loop_state",
           "closed_loop_inverse_dynamics", "closed_loop_forward_dynamics", "constrained_forward_dynamics",
           "simulate_closed_loop", "platform_inverse_dynamics", "platform_forward_dynamics", "mobility"]
