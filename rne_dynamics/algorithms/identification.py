"""Payload and friction identification from measured joint torques, and exciting trajectories for it.

The measured torque is the model's plus what is unknown, linear in the unknowns (Khalil 2010, sec. 5; Gautier's
inverse dynamic identification model):

    tau = tau_model(q, qd, qdd) + Y_L(q, qd, qdd) phi + diag(qd) f_v + diag(sign(qd)) f_c

``phi`` the payload's 10 inertial parameters in the frame of its link ``L`` (``[m, m c, I_o]``, ``I_o`` about the
link origin, :data:`~rne_dynamics.algorithms.regressor.PARAMETER_NAMES` order), ``Y_L`` the columns of the joint
torque regressor of the body carrying ``L`` moved to ``L``'s frame, and ``f_v``, ``f_c`` the viscous and Coulomb
friction of each joint (which then replace the model's). Stacked over the samples this is ``A x = y``, solved by
weighted least squares, each joint's rows weighted by the inverse of its residual's standard deviation from a first
unweighted fit (Gautier & Poignet 2001); standard deviations from ``cov(x) = (A_w^T A_w)^-1``.

A payload is physically consistent when its pseudo-inertia ``J = [[tr(I_o)/2 1 - I_o, m c], [m c^T, m]]`` is
positive definite (positive mass, inertia about the COM positive definite and satisfying the triangle inequality;
Wensing, Kim & Slotine 2017). When the least-squares payload is not (or a friction coefficient is negative), the
fit is redone with ``J = U U^T`` in Rucker & Wensing's (2022) log-Cholesky parameters, which cover exactly the
consistent payloads, friction bounded at 0.

Exciting trajectories (Swevers, Ganseman, Tukel, De Schutter & Van Brussel, IEEE T-RA 1997): per joint a finite
Fourier series ``q = q0 + sum_l a_l/(l w) sin(l w t) - b_l/(l w) cos(l w t)``, periodic, at rest at ``t = 0`` (the
first harmonic's coefficients set by ``sum_l a_l = 0`` and ``sum_l l b_l = 0``), coefficients chosen to minimise the
condition number of the stacked regressor of what is identified, scaled into the joint position, velocity and
effort limits.
"""
from dataclasses import dataclass, replace

import numpy as np

from ..errors import ModelError, StateError
from .regressor import base_parameters, joint_torque_regressor
from .rnea import inverse_dynamics

#: ``with_payload`` / ``payload.inertia`` order of the 6 inertia entries, as indices into ``phi[4:]``.
INERTIA_ORDER = (0, 1, 3, 2, 4, 5)   # phi[4:] is I_xx I_xy I_yy I_xz I_yz I_zz -> ixx ixy ixz iyy iyz izz


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def inertia_matrix(i):
    """The symmetric matrix of ``phi[4:]`` (``I_xx I_xy I_yy I_xz I_yz I_zz``)."""
    return np.array([[i[0], i[1], i[3]], [i[1], i[2], i[4]], [i[3], i[4], i[5]]])


def inertia_entries(I):
    return np.array([I[0, 0], I[0, 1], I[1, 1], I[0, 2], I[1, 2], I[2, 2]])


def move_parameters(phi, R, p):
    """The parameters ``phi`` of a body given in frame ``L`` expressed in frame ``B`` where ``L`` sits at ``(R, p)``:
    ``m c_B = R m c_L + m p``, ``I_B = R I_L R^T - m [p]x[p]x - [p]x[R h]x - [R h]x[p]x`` (about ``B``'s origin)."""
    m, h = phi[0], R @ phi[1:4]
    I = R @ inertia_matrix(phi[4:]) @ R.T - m * skew(p) @ skew(p) - skew(p) @ skew(h) - skew(h) @ skew(p)
    return np.concatenate([[m], h + m * p, inertia_entries(I)])


def payload_regressor(robot, link, q, qd, qdd, *, gravity=None):
    """``Y_L`` ``(…, nv, 10)``: the torques of a payload of parameters ``phi`` (frame of ``link``, inertia about its
    origin) are ``Y_L @ phi``. A link carried by the fixed base moves no joint: :class:`ModelError`."""
    if link not in robot.link_frames:
        raise ModelError(f"payload: robot '{robot.name}' has no link '{link}' (its links: "
                         f"{', '.join(robot.link_names)})")
    body, R, p = robot.link_frames[link]
    if body < 0:
        raise ModelError(f"payload: link '{link}' is fixed to the base of robot '{robot.name}'; no joint feels it")
    move = np.column_stack([move_parameters(e, R, p) for e in np.eye(10)])
    Y = joint_torque_regressor(robot, q, qd, qdd, gravity=gravity)
    return Y[..., 10 * body:10 * body + 10] @ move


def pseudo_inertia(phi):
    """``J = [[tr(I_o)/2 1 - I_o, h], [h^T, m]]`` (Wensing, Kim & Slotine 2017, eq. 8)."""
    I = inertia_matrix(phi[4:])
    J = np.empty((4, 4))
    J[:3, :3] = 0.5 * np.trace(I) * np.eye(3) - I
    J[:3, 3] = J[3, :3] = phi[1:4]
    J[3, 3] = phi[0]
    return J


def from_pseudo_inertia(J):
    Sigma = J[:3, :3]
    return np.concatenate([[J[3, 3]], J[:3, 3], inertia_entries(np.trace(Sigma) * np.eye(3) - Sigma)])


def raised_second_moments(Sigma, margin=0.01):
    """The second moments about the COM ``Sigma`` (``tr(I_c)/2 1 - I_c``, 3x3) with their eigenvalues raised to
    ``margin`` of the largest: the nearest in the Frobenius norm with that margin; positive definite exactly when the
    body is physically consistent (Wensing, Kim & Slotine 2017: a plate of some thickness, not a sheet)."""
    w, V = np.linalg.eigh(Sigma)
    return (V * np.maximum(w, margin * max(w.max(), 1e-300))) @ V.T


def log_cholesky_to_parameters(theta):
    """``phi`` of ``J = U U^T``, ``U = e^alpha [[e^d1, s12, s13, t1], [0, e^d2, s23, t2], [0, 0, e^d3, t3],
    [0, 0, 0, 1]]`` (Rucker & Wensing 2022, eq. 11): every ``theta`` gives a consistent payload."""
    alpha, d1, d2, d3, s12, s23, s13, t1, t2, t3 = theta
    U = np.exp(alpha) * np.array([[np.exp(d1), s12, s13, t1], [0.0, np.exp(d2), s23, t2],
                                  [0.0, 0.0, np.exp(d3), t3], [0.0, 0.0, 0.0, 1.0]])
    return from_pseudo_inertia(U @ U.T)


def parameters_to_log_cholesky(phi, floor=1e-9):
    """``theta`` of the consistent payload nearest ``phi`` (``J``'s eigenvalues raised to ``floor`` times its
    largest): the start of the constrained fit."""
    w, V = np.linalg.eigh(pseudo_inertia(phi))
    J = (V * np.maximum(w, floor * max(w.max(), 1e-12))) @ V.T
    flip = np.eye(4)[::-1]  # J = U U^T with U upper triangular: the Cholesky factor of the reversed matrix
    U = flip @ np.linalg.cholesky(flip @ J @ flip) @ flip
    alpha = np.log(U[3, 3])
    U = U / U[3, 3]
    return np.array([alpha, np.log(U[0, 0]), np.log(U[1, 1]), np.log(U[2, 2]), U[0, 1], U[1, 2], U[0, 2],
                     U[0, 3], U[1, 3], U[2, 3]])


@dataclass(frozen=True)
class PayloadEstimate:
    """The identified payload on ``link``: ``mass`` (kg), ``com`` (m, link frame), ``inertia`` ``(ixx, ixy, ixz,
    iyy, iyz, izz)`` about the COM in link axes (kg m^2), as :meth:`Robot.with_payload` takes them; ``*_std`` their
    standard deviations; ``constrained``: the least-squares payload was not physically consistent, this is the
    consistent fit (its standard deviations linearised at it)."""
    link: str
    mass: float
    com: np.ndarray
    inertia: np.ndarray
    mass_std: float
    com_std: np.ndarray
    inertia_std: np.ndarray
    constrained: bool


@dataclass(frozen=True)
class FrictionEstimate:
    """A joint's viscous (N m s/rad or N s/m) and Coulomb (N m or N) friction and their standard deviations."""
    viscous: float
    coulomb: float
    viscous_std: float
    coulomb_std: float


@dataclass(frozen=True)
class Identification:
    """:func:`identify`'s result: ``payload`` (or None), ``friction`` ``{joint: FrictionEstimate}`` (or None),
    ``robot`` with both applied, ``torques`` ``(N, nv)`` its inverse dynamics along the motion and ``residuals`` the
    measured minus those; ``rms_before`` and ``rms_after`` per joint, the residual RMS of the given model and of
    the identified one."""
    payload: PayloadEstimate
    friction: dict
    robot: object
    torques: np.ndarray
    residuals: np.ndarray
    rms_before: np.ndarray
    rms_after: np.ndarray

    def as_dict(self):
        """The ``identified.yaml`` layout: ``payload: {link, mass: {value, std}, com: {value, std}, inertia:
        {value, std}}`` and ``friction: {<joint>: {viscous, coulomb}}``."""
        out = {}
        if self.payload is not None:
            p = self.payload
            out["payload"] = {"link": p.link, "mass": {"value": float(p.mass), "std": float(p.mass_std)},
                              "com": {"value": p.com.tolist(), "std": p.com_std.tolist()},
                              "inertia": {"value": p.inertia.tolist(), "std": p.inertia_std.tolist()}}
        if self.friction is not None:
            out["friction"] = {joint: {"viscous": float(f.viscous), "coulomb": float(f.coulomb)}
                               for joint, f in self.friction.items()}
        return out


def _check_fixed_joints(robot, what):
    if robot.nq != robot.nv or robot.nv != len(robot.joint_names):
        raise ModelError(f"{what} takes a fixed-base robot whose joints have one coordinate each; robot "
                         f"'{robot.name}' has nq={robot.nq}, nv={robot.nv}")


def identify(robot, q, qd, qdd, tau, *, payload=None, friction=False, gravity=None):
    """Identify a payload on link ``payload`` and/or (``friction=True``) each joint's viscous and Coulomb friction
    from a motion ``q, qd, qdd`` ``(N, nv)`` and the measured joint torques ``tau`` ``(N, nv)`` (module docstring).
    The rest of the model (``robot``'s inertias, armature, and its friction unless identified) is taken as known.
    Returns an :class:`Identification`. Raises :class:`ModelError` when the motion does not excite what is asked."""
    import scipy.optimize

    _check_fixed_joints(robot, "identify")
    if payload is None and not friction:
        raise ModelError("nothing to identify: name a payload link and/or ask for friction")
    tau = np.asarray(tau, dtype=float)
    q = np.asarray(q, dtype=float)
    if q.ndim != 2 or tau.shape != q.shape or q.shape[1] != robot.nv:
        raise StateError(f"identify: q, qd, qdd and tau are (N, {robot.nv}) arrays, got q {q.shape}, tau {tau.shape}")
    if not np.all(np.isfinite(tau)):
        raise StateError("identify: tau is not finite")
    n, nv = q.shape
    known = robot.with_drive(damping=np.zeros(nv), friction=np.zeros(nv)) if friction else robot
    y = (tau - inverse_dynamics(known, q, qd, qdd, gravity=gravity).torques)
    blocks = []
    if payload is not None:
        blocks.append(payload_regressor(robot, payload, q, qd, qdd, gravity=gravity))
    if friction:
        qd = np.asarray(qd, dtype=float)
        blocks.append(np.einsum("nj,jk->njk", qd, np.eye(nv)))
        blocks.append(np.einsum("nj,jk->njk", np.sign(qd), np.eye(nv)))
    A = np.concatenate(blocks, axis=2)                         # (N, nv, p)
    p = A.shape[2]
    if n * nv <= p:
        raise ModelError(f"identify: {n} samples of {nv} joints for {p} unknowns; record a longer motion")
    x = np.linalg.lstsq(A.reshape(-1, p), y.ravel(), rcond=None)[0]
    sigma = np.sqrt(np.mean((y - A @ x) ** 2, axis=0)) + 1e-12 * (np.abs(y).max() + 1.0)
    Aw, yw = (A / sigma[:, None]).reshape(-1, p), (y / sigma).ravel()
    singular = np.linalg.svd(Aw, compute_uv=False)
    if not singular[-1] > 1e-9 * singular[0]:  # not <: a robot standing still has friction columns of zeros only
        with np.errstate(over="ignore"):
            condition = singular[0] / singular[-1] if singular[-1] > 0 else np.inf
        raise ModelError(f"identify: the motion does not excite every unknown (condition number {condition:.2g}); "
                         "record a richer motion (rne-dynamics excite) or identify less")
    x = np.linalg.lstsq(Aw, yw, rcond=None)[0]
    covariance = np.linalg.inv(Aw.T @ Aw) * np.sum((yw - Aw @ x) ** 2) / (Aw.shape[0] - p)
    k = 10 if payload is not None else 0
    consistent = payload is None or np.linalg.eigvalsh(pseudo_inertia(x[:10])).min() > 0
    if not consistent or (friction and np.any(x[k:] < 0)):
        R, Qty = _reduced(Aw, yw)

        def residual(z):  # |R x - Q^T y| = |A x - y| up to a constant: p rows instead of N nv
            return R @ np.concatenate([log_cholesky_to_parameters(z[:k]) if k else [], z[k:]]) - Qty
        start = np.concatenate([parameters_to_log_cholesky(x[:k]) if k else [], np.maximum(x[k:], 0.0)])
        logs = np.r_[np.full(4, 30.0), np.full(6, np.inf)][:k]  # alpha, d1..d3 are logarithms: keep exp finite
        bounds = (np.r_[-logs, np.zeros(p - k)], np.r_[logs, np.full(p - k, np.inf)])
        z = scipy.optimize.least_squares(residual, start, bounds=bounds, x_scale="jac").x
        x = np.concatenate([log_cholesky_to_parameters(z[:k]) if k else [], z[k:]])
    payload_estimate = _payload_estimate(payload, x[:10], covariance[:10, :10], not consistent) if k else None
    friction_estimate = None
    result = robot
    if payload_estimate is not None:
        e = payload_estimate
        result = result.with_payload(payload, e.mass, e.com, e.inertia)
    if friction:
        std = np.sqrt(np.diag(covariance))[k:]
        friction_estimate = {joint: FrictionEstimate(x[k + j], x[k + nv + j], std[j], std[nv + j])
                             for j, joint in enumerate(robot.joint_names)}
        result = result.with_drive(damping=x[k:k + nv], friction=x[k + nv:])
    torques = inverse_dynamics(result, q, qd, qdd, gravity=gravity).torques
    residuals = tau - torques
    rms_before = np.sqrt(np.mean((tau - inverse_dynamics(robot, q, qd, qdd, gravity=gravity).torques) ** 2, axis=0))
    return Identification(payload_estimate, friction_estimate, result, torques, residuals, rms_before,
                          np.sqrt(np.mean(residuals ** 2, axis=0)))


def _reduced(A, y):
    """``(R, Q^T y)`` of ``A = Q R``: ``|A x - y|^2 = |R x - Q^T y|^2 + |y|^2 - |Q^T y|^2``."""
    Q, R = np.linalg.qr(A)
    return R, Q.T @ y


def _payload_quantities(phi):
    """``(mass, com, inertia about the COM in with_payload order)`` of ``phi``: ``I_c = I_o + [h]x[h]x / m``."""
    m, h = phi[0], phi[1:4]
    I_c = inertia_matrix(phi[4:]) + skew(h) @ skew(h) / m
    return np.concatenate([[m], h / m, inertia_entries(I_c)[list(INERTIA_ORDER)]])


def _payload_estimate(link, phi, covariance, constrained):
    """Mass, COM and inertia about the COM with standard deviations by the delta method (a central-difference
    Jacobian of :func:`_payload_quantities`)."""
    values = _payload_quantities(phi)
    step = 1e-6 * np.maximum(np.abs(phi), 1e-3)
    jacobian = np.column_stack([(_payload_quantities(phi + s * e) - _payload_quantities(phi - s * e)) / (2 * s)
                                for s, e in zip(step, np.eye(10))])
    std = np.sqrt(np.maximum(np.diag(jacobian @ covariance @ jacobian.T), 0.0))
    return PayloadEstimate(link, float(values[0]), values[1:4], values[4:], float(std[0]), std[1:4], std[4:],
                           bool(constrained))


@dataclass(frozen=True)
class FourierTrajectory:
    """Per joint ``q = q0 + sum_l a_l/(l w) sin(l w t) - b_l/(l w) cos(l w t)`` (Swevers 1997, eq. 3), ``w = 2 pi /
    period``; ``a``, ``b`` ``(nv, harmonics)``. Periodic, at rest at ``t = 0`` (and every period)."""
    joint_names: tuple
    period: float
    q0: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def sample(self, t):
        """``(q, qd, qdd)`` ``(len(t), nv)`` at the times ``t`` (s), exact derivatives."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        w = 2 * np.pi / self.period
        l = np.arange(1, self.a.shape[1] + 1)
        s, c = np.sin(np.multiply.outer(t, l * w)), np.cos(np.multiply.outer(t, l * w))  # (T, L)
        q = self.q0 + s @ (self.a / (l * w)).T - c @ (self.b / (l * w)).T
        qd = c @ self.a.T + s @ self.b.T
        qdd = -s @ (self.a * l * w).T + c @ (self.b * l * w).T
        return q, qd, qdd

    def scaled(self, factor):
        """The same motion with every amplitude times ``factor`` (positions about ``q0``)."""
        return FourierTrajectory(self.joint_names, self.period, self.q0, self.a * factor, self.b * factor)


def _coefficients(free, nv, harmonics):
    """``a``, ``b`` from the free coefficients (harmonics 2..L): the first set so the motion starts at rest."""
    free = free.reshape(2, nv, harmonics - 1)
    l = np.arange(2, harmonics + 1)
    a = np.concatenate([-free[0].sum(axis=1, keepdims=True), free[0]], axis=1)
    b = np.concatenate([-(free[1] * l).sum(axis=1, keepdims=True), free[1]], axis=1)
    return a, b


def excitation_regressor(robot, *, payload=None, friction=True, gravity=None):
    """A function ``(q, qd, qdd) -> (N nv, p)``: the stacked regressor whose condition number
    :func:`exciting_trajectory` minimises: the payload columns (``payload`` a link) or else the base parameters' of
    the whole robot, and with ``friction`` the viscous and Coulomb columns of every joint (``sign(qd)`` smoothed to
    ``tanh(qd / 0.01 rad/s)`` so that the search has gradients)."""
    base = None if payload is not None else base_parameters(robot, gravity=gravity)
    eye = np.eye(robot.nv)

    def stacked(q, qd, qdd):
        if payload is not None:
            blocks = [payload_regressor(robot, payload, q, qd, qdd, gravity=gravity)]
        else:
            blocks = [base.regressor(joint_torque_regressor(robot, q, qd, qdd, gravity=gravity))]
        if friction:
            blocks += [np.einsum("nj,jk->njk", qd, eye), np.einsum("nj,jk->njk", np.tanh(qd / 0.01), eye)]
        A = np.concatenate(blocks, axis=2)
        return A.reshape(-1, A.shape[2])
    return stacked


def _acceleration_limits(robot, acceleration_limits):
    """``(nv,)`` acceleration limits: ``inf`` (none) by default, one value for every joint or one per joint."""
    if acceleration_limits is None:
        return np.full(robot.nv, np.inf)
    limits = np.broadcast_to(np.asarray(acceleration_limits, dtype=float), (robot.nv,)) \
        if np.size(acceleration_limits) in (1, robot.nv) else None
    if limits is None or not np.all(limits > 0):
        raise StateError(f"acceleration limits: one positive value, or one per joint ({robot.nv}), got "
                         f"{np.ravel(acceleration_limits).tolist()}")
    return limits.copy()


def limit_usage(robot, trajectory, times, *, gravity=None, margin=0.9, acceleration_limits=None):
    """The largest share of ``margin`` times a position (from ``q0`` to the nearer limit), velocity, acceleration
    (``acceleration_limits``, default none) or effort limit that ``trajectory`` uses at ``times``: the motion keeps
    within ``margin`` of every limit when it is <= 1."""
    q, qd, qdd = trajectory.sample(times)
    limits = robot.position_limits
    room = np.minimum(trajectory.q0 - limits[:, 0], limits[:, 1] - trajectory.q0)
    usage = [np.abs(q - trajectory.q0).max(axis=0) / (margin * room)]
    usage.append(np.abs(qd).max(axis=0) / (margin * robot.velocity_limits))
    usage.append(np.abs(qdd).max(axis=0) / (margin * _acceleration_limits(robot, acceleration_limits)))
    tau = inverse_dynamics(robot, q, qd, qdd, gravity=gravity).torques
    usage.append(np.abs(tau).max(axis=0) / (margin * robot.effort_limits))
    return float(np.max(usage))


@dataclass(frozen=True)
class SearchProgress:
    """Where :func:`exciting_trajectory` is: ``stage`` ``"search"`` (``iteration`` L-BFGS iterations done,
    ``evaluations`` of the cost made: a finite-difference gradient costs one per coefficient; ``condition`` the least
    condition number found) or ``"effort limits"`` (``step`` of the 30 bisection steps, ``amplitude`` the share of
    the searched motion's amplitude known to keep within them)."""
    stage: str = "search"
    iteration: int = 0
    evaluations: int = 0
    condition: float = np.inf
    step: int = 0
    amplitude: float = 1.0


def exciting_trajectory(robot, *, period=10.0, harmonics=5, payload=None, friction=True, q0=None, samples=60,
                        seed=0, gravity=None, margin=0.9, iterations=20, acceleration_limits=None, progress=None):
    """A :class:`FourierTrajectory` that minimises the condition number of :func:`excitation_regressor` over
    ``samples`` points of a period (Swevers 1997), within ``margin`` of every position, velocity, acceleration
    (``acceleration_limits``: one value or one per joint; default none, the URDF has none) and effort limit on a
    1 ms grid (and finer where the period is short). ``q0``: the centre of the motion (default the middle of each
    joint's range, 0 where unbounded). The search starts from seeded random coefficients (``seed``) and runs
    ``iterations`` L-BFGS steps; each candidate is scaled onto the position, velocity and acceleration limits, and
    the result shrunk onto the effort limits (all limits checked again on the grid). ``progress``, if given, is
    called with a :class:`SearchProgress` after every evaluation of the cost and every step of the shrinking."""
    import scipy.optimize

    _check_fixed_joints(robot, "exciting_trajectory")
    if not (np.isfinite(period) and period > 0):
        raise StateError(f"exciting_trajectory: period must be > 0 s, got {period}")
    if harmonics < 2:
        raise StateError(f"exciting_trajectory: harmonics must be at least 2, got {harmonics}")
    nv = robot.nv
    limits = robot.position_limits
    if q0 is None:
        q0 = np.where(np.isfinite(limits).all(axis=1), limits.mean(axis=1), 0.0)
    q0 = np.asarray(q0, dtype=float)
    room = np.minimum(q0 - limits[:, 0], limits[:, 1] - q0)
    if np.any(room <= 0):
        raise StateError(f"exciting_trajectory: q0 {q0.tolist()} is not inside the joint limits")
    times = np.linspace(0.0, period, samples, endpoint=False)
    velocity = np.minimum(margin * robot.velocity_limits, 1e3)
    position = np.minimum(margin * room, 1e3)
    acceleration = margin * _acceleration_limits(robot, acceleration_limits)

    def fitted(free):
        """The trajectory of the free coefficients, scaled so its positions, velocities and accelerations reach
        the limits (the nearest of them)."""
        a, b = _coefficients(free, nv, harmonics)
        candidate = FourierTrajectory(robot.joint_names, period, q0, a, b)
        q, qd, qdd = candidate.sample(times)
        usage = max(np.max(np.abs(q - q0).max(axis=0) / position), np.max(np.abs(qd).max(axis=0) / velocity),
                    np.max(np.abs(qdd).max(axis=0) / acceleration))
        return candidate.scaled(1.0 / usage)

    regressor = excitation_regressor(robot, payload=payload, friction=friction, gravity=gravity)

    search = SearchProgress()

    def report(**changes):
        nonlocal search
        search = replace(search, **changes)
        if progress is not None:
            progress(search)

    def condition(free):
        singular = np.linalg.svd(regressor(*fitted(free).sample(times)), compute_uv=False)
        cost = singular[0] / max(singular[-1], 1e-300)
        report(evaluations=search.evaluations + 1, condition=min(search.condition, cost))
        return np.log(cost)

    def iterated(_):
        nonlocal search
        search = replace(search, iteration=search.iteration + 1)

    rng = np.random.default_rng(seed)
    start = rng.normal(size=2 * nv * (harmonics - 1))
    best = scipy.optimize.minimize(condition, start, method="L-BFGS-B", options={"maxiter": iterations},
                                   callback=iterated).x
    trajectory = fitted(best)
    grid = np.arange(0.0, period, min(1e-3, period / 1000))
    low, high = 0.0, 1.0
    bounds = {"gravity": gravity, "margin": margin, "acceleration_limits": acceleration_limits}
    if limit_usage(robot, trajectory, grid, **bounds) > 1.0:
        for step in range(30):  # effort limits: the largest amplitude that keeps within them, by bisection
            middle = 0.5 * (low + high)
            if limit_usage(robot, trajectory.scaled(middle), grid, **bounds) <= 1.0:
                low = middle
            else:
                high = middle
            report(stage="effort limits", step=step + 1, amplitude=low)
        if low == 0.0:
            raise ModelError(f"exciting_trajectory: robot '{robot.name}' needs more than {margin:g} of an effort "
                             "limit to hold still at q0")
        trajectory = trajectory.scaled(low)
    return trajectory


def condition_number(robot, trajectory, *, samples=60, payload=None, friction=True, gravity=None):
    """The condition number of :func:`excitation_regressor` along ``trajectory`` at ``samples`` points of a
    period: what :func:`exciting_trajectory` minimises."""
    times = np.linspace(0.0, trajectory.period, samples, endpoint=False)
    regressor = excitation_regressor(robot, payload=payload, friction=friction, gravity=gravity)
    singular = np.linalg.svd(regressor(*trajectory.sample(times)), compute_uv=False)
    return float(singular[0] / max(singular[-1], 1e-300))
