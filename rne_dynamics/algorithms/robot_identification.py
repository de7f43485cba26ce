"""Whole-robot identification: every moving body's 10 inertial parameters and each joint's friction, from recordings
of positions, velocities, accelerations and measured joint torques.

The model (Khalil 2010, sec. 5; Gautier's inverse dynamic identification model) is linear in the unknowns:

    tau = Y_b(q, qd, qdd) beta + diag(qd) f_v + diag(s(qd)) f_c + f_o + diag(qdd) armature + coupled motors

``beta = K pi`` the base parameters (:func:`~rne_dynamics.algorithms.regressor.base_parameters`: the combinations of
the bodies' parameters ``pi`` that the torques see), ``f_v``, ``f_c``, ``f_o`` the viscous, Coulomb and constant
friction of :mod:`~rne_dynamics.model.drive` (``s`` its Coulomb shape, ``tanh(qd / coulomb_velocity)`` or ``sign``),
the armature (rotor inertia reflected to the joint) the model's or, with ``armature=True``, estimated too (beyond
the transmissions' motors the model has, which stay known); and for each motor that turns several joints (a coupled
wrist; ``G_k`` its row of the joint-to-motor matrix) its torque ``G_k^T (I_k G_k qdd + b_k G_k qd + f_k s(G_k qd))``
with its viscous ``b_k`` and Coulomb ``f_k`` friction estimated with ``friction``, its rotor inertia ``I_k`` with
``armature`` (motor side; ``s`` at the motor's own ``coulomb_velocity``). Stacked over the samples, ``A b = y``
with ``b = [beta; f]`` is solved by weighted least squares, each joint's rows weighted by the inverse of its
residual's standard deviation from a first unweighted fit (Gautier & Poignet 2001): the estimate ``b_hat``,
``cov(b_hat) = s^2 (A_w^T A_w)^-1`` and the condition number. A friction column the motion cannot tell from its
joint's others is left out first (:func:`_separable_drive_terms`: the base parameters of the drive terms).

``b_hat`` fixes ``K pi`` only; the rest of ``pi`` (the null space of ``K``) is chosen by the regulariser

    sum_i D(J_i || J_i0),    D(J || J0) = log det J0 - log det J + tr(J0^-1 J) - 4

``J_i`` the pseudo-inertia of body ``i`` (Wensing, Kim & Slotine 2017; positive definite exactly when the body is
physically consistent: mass > 0, inertia about the COM positive definite with the triangle inequality) and ``J_i0``
the URDF's. ``D`` is the Bregman divergence of ``-log det`` on pseudo-inertias, the entropic regulariser of Lee,
Wensing & Park (2020, "Geometric robot dynamic identification: a convex programming approach", IEEE T-RO): convex,
unchanged by a body's scale, infinite on the boundary of consistency. When some consistent ``pi`` has ``K pi =
b_hat`` (always on noise-free data of a real robot), the result is the one nearest the URDF in ``D``, and its base
parameters are exactly ``b_hat``. Otherwise (noise or model errors pushed ``b_hat`` out of the consistent set) the
result minimises

    |R (b - b_hat)|^2 / (N nv) + lambda sum_i D(J_i || J_i0)     (``|R (b - b_hat)|^2 = |A_w b - y_w|^2 - const``)

over consistent ``pi`` and ``f``: the mean weighted squared residual of the ``N nv`` rows, so that lambda's weight
does not shrink as recordings grow (on a real robot the residual is mostly model error, correlated from sample to
sample: its count overstates what it tells; the Gaz et al. 2019 Panda recording gave a 193 kg link with the sum);
``lambda`` default ``1e-3``.
Both are convex in ``pi``; they are solved by damped Newton steps on log-det barriers (feasibility first: ``t`` is
raised until every ``J_i - t J_i0`` is positive definite; for the second, a path of data weights as an
interior-point method follows its barrier). Viscous and Coulomb friction are kept >= 0 (a coefficient the fit makes
negative is fixed at 0 and the rest refitted); the offset has either sign.
"""
from dataclasses import dataclass, replace

import numpy as np

from ..errors import IdentificationError, ModelError, StateError
from ..model.drive import motor_rows
from .identification import (_check_fixed_joints, from_pseudo_inertia, inertia_matrix, pseudo_inertia,
                             raised_second_moments)
from .regressor import base_parameters, inertial_parameters, joint_torque_regressor, parameter_names
from .rnea import inverse_dynamics

FRICTION_TERMS = ("viscous", "coulomb", "offset")   # per joint: the drive's damping, friction, friction_offset
DRIVE_LABELS = ("damping", "friction", "friction_offset")
#: Each drive term's name in the result: the friction terms, and ``armature`` (the joint's rotor inertia).
TERM_NAMES = dict(zip(DRIVE_LABELS, FRICTION_TERMS)) | {"armature": "armature"}
#: Largest condition number of the weighted regressor, columns scaled to unit norm, that is identified from.
MAX_CONDITION = 1e6
#: Least squared relative residual of a drive column off the span of the others that counts as separable, whatever
#: ``max_condition``: below it the Gram matrix's cancellation (``cond eps``) cannot tell it from 0.
SEPARATION_FLOOR = 1e-12
#: The pseudo-inertia basis: ``J(pi) = sum_k pi_k E_k``.
BASIS = np.array([pseudo_inertia(e) for e in np.eye(10)])


@dataclass(frozen=True)
class RobotIdentification:
    """:func:`identify_robot`'s result.

    ``robot``: the identified robot (inertials, and with ``friction`` its drive's damping, friction,
    friction_offset and coulomb_velocity). ``parameters`` ``(10 nb,)`` the bodies' identified parameters
    (:func:`~rne_dynamics.algorithms.regressor.inertial_parameters` layout, names in ``parameter_names``).
    ``base``: the :class:`~rne_dynamics.algorithms.regressor.BaseParameters` of the given robot;
    ``base_values`` (of the identified parameters), ``base_least_squares`` and ``base_std`` the weighted
    least-squares estimate and its standard deviations. ``friction``: ``{joint: {viscous, coulomb, offset,
    viscous_std, coulomb_std, offset_std}}`` (with ``armature``: also ``armature``, ``armature_std``, the joint's
    own rotor inertia) or None; ``coulomb_velocity`` (rad/s, 0: sign) per joint.
    ``condition_number``: of the weighted regressor with unit-norm columns. ``rmse`` and ``rmse_given`` per
    joint: the identified and the given model's torque RMSE on the fitted samples; ``holdout_rmse`` and
    ``holdout_rmse_given`` on the held-out ones (None without). ``fitted`` and ``held_out``: per recording
    ``(index, measured, identified, given)`` torque arrays for figures (``index`` into the recording's samples).
    ``samples`` and ``holdout_samples``: counts; ``regularisation``: lambda. ``repaired``: the links whose URDF
    inertials were not physically consistent, replaced by the nearest consistent ones as the fit's prior
    (:func:`_prior`). ``not_separable``: the friction terms (``joint.term``) the motion cannot tell from that joint's
    others (:func:`_separable_drive_terms`): 0, std NaN, their share in the kept terms. ``motors``: ``{"transmission.
    motor": {viscous, coulomb, rotor_inertia, and their _std}}`` of each motor that turns several joints
    (:func:`coupled_motor_terms`; motor side, N m s/rad, N m, kg m^2; viscous and Coulomb with ``friction``, the
    rotor inertia with ``armature``; empty without such motors). ``holdout_still``: the share of the held-out samples
    where the robot stands still (every joint below :data:`STILL` of its recording's top speed): there a Coulomb
    law's ``s(qd)`` is the sign of the encoders' noise, a torque the stiction holding the robot does not make, and
    every model with friction pays for it (:func:`recording_equations`)."""
    robot: object
    parameters: np.ndarray
    parameter_names: tuple
    base: object
    base_values: np.ndarray
    base_least_squares: np.ndarray
    base_std: np.ndarray
    friction: dict
    coulomb_velocity: np.ndarray
    condition_number: float
    rmse: np.ndarray
    rmse_given: np.ndarray
    holdout_rmse: np.ndarray
    holdout_rmse_given: np.ndarray
    fitted: tuple
    held_out: tuple
    samples: int
    holdout_samples: int
    regularisation: float
    repaired: tuple = ()
    not_separable: tuple = ()
    motors: dict = None
    holdout_still: float = 0.0

    def as_dict(self):
        """The ``identified.yaml`` layout: ``links: {<joint moving the body>: {mass, com, inertia (ixx ixy ixz iyy
        iyz izz about the COM, body axes)}}``, ``friction: {<joint>: {...}}``, ``base_parameters: [{name, value,
        least_squares, std}]``, ``condition_number``, ``rmse`` / ``rmse_given`` (and holdout) per joint,
        ``holdout_still``."""
        joints = self.robot.joint_names
        out = {"links": {}, "friction": None, "motors": self.motors,
               "base_parameters": [], "condition_number": float(self.condition_number),
               "samples": self.samples, "holdout_samples": self.holdout_samples,
               "regularisation": float(self.regularisation), "repaired_urdf_links": list(self.repaired),
               "not_separable": list(self.not_separable), "holdout_still": float(self.holdout_still)}
        for body in self.robot.bodies:
            mass, com, inertia = body_quantities(body)
            out["links"][body.joint] = {"mass": float(mass), "com": com.tolist(), "inertia": inertia.tolist()}
        if self.friction is not None:
            out["friction"] = {joint: {key: float(value) for key, value in terms.items()} | {
                "coulomb_velocity": float(self.coulomb_velocity[j])} for j, (joint, terms) in
                enumerate(self.friction.items())}
        out["base_parameters"] = [{"name": name, "value": float(v), "least_squares": float(ls), "std": float(s)}
                                  for name, v, ls, s in zip(self.base.names, self.base_values,
                                                            self.base_least_squares, self.base_std)]
        for key in ("rmse", "rmse_given", "holdout_rmse", "holdout_rmse_given"):
            value = getattr(self, key)
            out[key] = None if value is None else dict(zip(joints, map(float, value)))
        return out


def body_quantities(body):
    """``(mass, com, inertia about the COM as (ixx, ixy, ixz, iyy, iyz, izz))`` of a body, in its frame."""
    com = body.h / body.mass
    I_c = body.I - body.mass * (com @ com * np.eye(3) - np.outer(com, com))
    return body.mass, com, I_c[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]


def body_name(robot, index):
    """``link 'L' (joint 'J')``: the link that body ``index`` starts at and the joint that moves it."""
    joint = robot.bodies[index].joint
    return f"link '{robot.joints[joint].child}' (joint '{joint}')"


def with_inertial_parameters(robot, parameters):
    """``robot`` with its bodies' parameters replaced by ``parameters`` ``(10 nb,)``
    (:func:`~rne_dynamics.algorithms.regressor.inertial_parameters` layout)."""
    phi = np.asarray(parameters, dtype=float).reshape(-1, 10)
    bodies = tuple(replace(b, mass=float(p[0]), h=p[1:4].copy(), I=inertia_matrix(p[4:]))
                   for b, p in zip(robot.bodies, phi))
    return replace(robot, bodies=bodies)


#: The motor terms of a coupled motor that identification estimates, in the order their columns are kept, and
#: their names in the result.
MOTOR_TERM_NAMES = {"damping": "viscous", "friction": "coulomb", "rotor_inertia": "rotor_inertia"}


def coupled_motor_terms(robot, terms):
    """``(transmission name, motor index, term)`` of each term of :data:`MOTOR_TERM_NAMES` in ``terms`` of each motor
    of ``robot.transmissions`` that turns several joints (a coupled wrist's): its torque ``G_k^T tau_m`` spans
    several joints, a column of its own per term."""
    return tuple((t.name, m, term) for t, m, moved in motor_rows(robot, robot.transmissions) if len(moved) > 1
                 for term in MOTOR_TERM_NAMES if term in terms)


def with_motor_terms(robot, motor_terms, values):
    """``robot`` with each of ``motor_terms`` (:func:`coupled_motor_terms`) set to its value of ``values``."""
    if not motor_terms:
        return robot
    given = {t.name: {term: getattr(t, term).copy() for term in MOTOR_TERM_NAMES} for t in robot.transmissions}
    for (name, m, term), value in zip(motor_terms, values):
        given[name][term][m] = value
    return robot.with_drive(transmissions={name: {term: given[name][term].tolist() for term in MOTOR_TERM_NAMES}
                                           for name, _, _ in motor_terms})


def drive_regressor(robot, q, qd, qdd, *, gravity=None, labels=DRIVE_LABELS, motors=()):
    """``(known, columns)``: the drive torques of ``robot`` with the joints' own terms of ``labels`` and the coupled
    motors' terms ``motors`` (:func:`coupled_motor_terms`) taken out (what remains: the other terms, the
    transmissions' other motors), and their columns ``(…, nv, len(labels) nv + len(motors))`` (one diagonal block
    per label: viscous, Coulomb, offset, armature; then a column per motor term, e.g. ``G_k^T G_k qdd``) in the
    drive's own law
    (:func:`~rne_dynamics.model.drive.drive_torques_add`): read off inverse dynamics of the robot without inertia,
    one term set to 1 at a time."""
    nv = robot.nv
    ghost = with_inertial_parameters(robot, np.zeros(10 * len(robot.bodies)))
    bare = with_motor_terms(ghost.with_drive(**{label: np.zeros(nv) for label in labels}), motors,
                            np.zeros(len(motors)))
    known = inverse_dynamics(bare, q, qd, qdd, gravity=gravity).torques
    blocks = []
    for label in labels:
        unit = inverse_dynamics(bare.with_drive(**{label: np.ones(nv)}), q, qd, qdd, gravity=gravity).torques - known
        blocks.append(np.einsum("...j,jk->...jk", unit, np.eye(nv)))
    for k in range(len(motors)):
        unit = inverse_dynamics(with_motor_terms(bare, motors[k:k + 1], [1.0]), q, qd, qdd, gravity=gravity)
        blocks.append((unit.torques - known)[..., None])
    return known, np.concatenate(blocks, axis=-1)


#: Samples per block of the regressor (its memory: CHUNK nv 10 nb doubles, 45 MB for a 7-joint arm).
CHUNK = 10_000
#: A sample where every joint is below this share of its recording's top speed has the robot still (FIGAROH's TX40
#: example leaves out samples below 1% of each joint's rated speed).
STILL = 0.01


@dataclass(frozen=True)
class NormalEquations:
    """One recording's share of the fit: per joint ``A_j^T A_j`` (``grams`` ``(nv, p, p)``), ``A_j^T y_j``
    (``cross`` ``(nv, p)``) and ``y_j^T y_j`` (``squares`` ``(nv,)``) over its fitted ``samples``, and its
    ``held`` (held-out) sample count, ``held_still`` of them with the robot still."""
    grams: np.ndarray
    cross: np.ndarray
    squares: np.ndarray
    samples: int
    held: int
    held_still: int = 0


def _arrays(recording, k, nv):
    """A recording as checked ``(q, qd, qdd, tau)`` arrays ``(N, nv)``."""
    if isinstance(recording, tuple):
        arrays = recording
    else:
        if getattr(recording, "effort", None) is None:
            raise StateError(f"identify_robot: recording {k} has no measured effort")
        arrays = (recording.q, recording.qd, recording.qdd, recording.effort)
    arrays = [np.asarray(a, dtype=float) for a in arrays]
    n = len(arrays[0])
    if n == 0:
        raise StateError(f"identify_robot: recording {k} has no sample")
    for name, a in zip(("q", "qd", "qdd", "tau"), arrays):
        if a.shape != (n, nv):
            raise StateError(f"identify_robot: recording {k}: {name} must be ({n}, {nv}), got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise StateError(f"identify_robot: recording {k}: {name} is not finite at sample "
                             f"{np.flatnonzero(~np.isfinite(a).all(axis=1))[0]}")
    return arrays


def _cut(n, holdout):
    """The first held-out sample of a recording of ``n``."""
    return n - int(round(holdout * n))


def _design(robot, model, base, q, qd, qdd, terms, gravity, motors=()):
    """``(A, known)``: the columns ``[Y_b, F]`` ``(N, nv, p)`` that multiply the unknowns (``F``: the drive
    ``terms`` and the coupled motors' terms ``motors`` estimated, :func:`drive_regressor`), and the torques that do not
    depend on them (the other drive terms of the robot)."""
    Y = base.regressor(joint_torque_regressor(robot, q, qd, qdd, gravity=gravity))
    if not terms and not motors:
        ghost = with_inertial_parameters(robot, np.zeros(10 * len(robot.bodies)))
        return Y, inverse_dynamics(ghost, q, qd, qdd, gravity=gravity).torques
    known, F = drive_regressor(model, q, qd, qdd, gravity=gravity, labels=terms, motors=motors)
    return np.concatenate([Y, F], axis=2), known


def _blocks(start, stop):
    """Slices of at most :data:`CHUNK` samples over ``start:stop``."""
    return [slice(k, min(k + CHUNK, stop)) for k in range(start, stop, CHUNK)]


def recording_equations(recording, k, *, robot, model, base, holdout=0.0, terms=DRIVE_LABELS, gravity=None,
                        motors=()):
    """:class:`NormalEquations` of recording ``k`` (:func:`identify_robot`'s, in blocks of :data:`CHUNK` samples):
    the part of the fit that runs where the recording is, one task per recording on a Dask cluster."""
    q, qd, qdd, tau = _arrays(recording, k, robot.nv)
    cut = _cut(len(q), holdout)
    grams = cross = squares = 0.0
    for part in _blocks(0, cut):
        A, known = _design(robot, model, base, q[part], qd[part], qdd[part], terms, gravity, motors)
        A = np.ascontiguousarray(A.transpose(1, 0, 2))                   # (nv, N, p): per joint BLAS products
        y = (tau[part] - known).T[:, :, None]
        grams = grams + A.transpose(0, 2, 1) @ A
        cross = cross + (A.transpose(0, 2, 1) @ y)[..., 0]
        squares = squares + np.sum(y[..., 0] ** 2, axis=1)
    still = np.all(np.abs(qd[cut:]) <= STILL * np.abs(qd).max(axis=0), axis=1)
    return NormalEquations(grams, cross, squares, cut, len(q) - cut, int(still.sum()))


def recording_torques(recording, k, *, robot, model, base, solution, holdout=0.0, terms=DRIVE_LABELS,
                      gravity=None, motors=()):
    """Recording ``k``'s fitted and held-out parts as ``(k, index, measured, identified, given)`` torques (None for
    an empty part). The identified model's are ``A b + known`` with ``b`` the ``solution`` (base parameters and
    friction): the identified robot's torques, by the given robot's regressor, whose code is written already
    (the identified robot's own would be written and built first)."""
    q, qd, qdd, tau = _arrays(recording, k, robot.nv)
    cut = _cut(len(q), holdout)
    parts = []
    for start, stop in ((0, cut), (cut, len(q))):
        identified, given = [], []
        for part in _blocks(start, stop):
            A, known = _design(robot, model, base, q[part], qd[part], qdd[part], terms, gravity, motors)
            identified.append(A @ solution + known)
            given.append(inverse_dynamics(robot, q[part], qd[part], qdd[part], gravity=gravity).torques)
        parts.append((k, np.arange(start, stop), tau[start:stop], np.concatenate(identified),
                      np.concatenate(given)) if stop > start else None)
    return parts


def shared(client, **arguments):
    """``arguments`` for the tasks of a Dask ``client``: each object (a robot, an array) sent to every worker once
    (``scatter``; its future in its place) rather than once per task; numbers and tuples (of names: ``terms``,
    ``motors``, which ``scatter`` would split, and cannot take empty) as they are."""
    return {key: value if value is None or np.isscalar(value) or isinstance(value, tuple)
            else client.scatter(value, broadcast=True) for key, value in arguments.items()}


def _map(client, function, recordings, **kwargs):
    """``function(recording, k, **kwargs)`` of every recording, in order: here, or as tasks of the Dask ``client``
    (its results gathered)."""
    if client is None:
        return [function(recording, k, **kwargs) for k, recording in enumerate(recordings)]
    return client.gather(client.map(function, recordings, range(len(recordings)), pure=False,
                                    **shared(client, **kwargs)))


#: A URDF body that is not physically consistent is given, about its COM, second moments of at least this share of
#: its largest (a plate of some thickness, not a sheet): the nearest consistent body with room for the barrier.
REPAIR_MARGIN = 1e-2


def _prior(robot):
    """``(J0, repaired)``: the URDF's pseudo-inertias made positive definite, and the indices of the bodies that were
    not physically consistent. Such a body (CAD inertials breaking the triangle inequality: a second moment about
    the COM ``Sigma_c = tr(I_c)/2 1 - I_c`` below 0, Wensing, Kim & Slotine 2017) keeps its mass and COM and has the
    eigenvalues of ``Sigma_c`` raised to :data:`REPAIR_MARGIN` of its largest (the nearest such ``Sigma_c`` in the
    Frobenius norm); then every eigenvalue of every ``J`` is raised to ``1e-6`` of the largest body's (a point
    mass, a massless body: the regulariser needs a positive definite anchor)."""
    J0 = np.einsum("bk,kij->bij", inertial_parameters(robot).reshape(-1, 10), BASIS)
    repaired = []
    for i, J in enumerate(J0):
        m = J[3, 3]
        if m <= 0 or np.linalg.eigvalsh(J).min() > 0:
            continue
        c = J[:3, 3] / m
        Sigma = J[:3, :3] - m * np.outer(c, c)
        if np.linalg.eigvalsh(Sigma).max() > 0:
            J[:3, :3] = raised_second_moments(Sigma, REPAIR_MARGIN) + m * np.outer(c, c)
            repaired.append(i)
    w, V = np.linalg.eigh(J0)
    floor = 1e-6 * max(w.max(), 1e-12)
    return np.einsum("bij,bj,bkj->bik", V, np.maximum(w, floor), V), tuple(repaired)


def _matrices(v, G0, M):
    """``G_i = G0_i + sum_k v_k M_ik``."""
    return G0 + np.einsum("k,bkij->bij", v, M)


def _log_det_barrier(v, G0, M, C, linear, Q=None, centre=None, value_only=False):
    """``f(v) = sum_i -log det G_i + tr(C_i G_i) + linear . v [+ (v - centre)^T Q (v - centre)]`` with
    ``G_i = G0_i + sum_k v_k M_ik``, its gradient and Hessian (``d2 = sum_i tr(G_i^-1 M_ik G_i^-1 M_il) [+ 2 Q]``),
    or None where a ``G_i`` is not positive definite; ``value_only``: ``(f,)``."""
    G = _matrices(v, G0, M)
    if not np.all(np.isfinite(G)):
        return None
    try:
        L = np.linalg.cholesky(G)
        G_inverse = np.linalg.inv(G)
    except np.linalg.LinAlgError:
        return None
    value = np.sum(np.einsum("bij,bji->b", C, G) - 2 * np.log(np.diagonal(L, axis1=1, axis2=2)).sum(axis=1))
    value += linear @ v
    if Q is not None:
        e = v - centre
        value += e @ Q @ e
    if value_only:
        return (value,)
    gradient = np.einsum("bij,bkji->k", C - G_inverse, M) + linear
    P = np.einsum("bij,bkjl->bkil", G_inverse, M)
    hessian = np.einsum("bkij,blji->kl", P, P)
    if Q is not None:
        gradient, hessian = gradient + 2 * Q @ e, hessian + 2 * Q
    return value, gradient, hessian


class SolverFailure(ArithmeticError):
    """The consistent fit failed on ``body`` (an index into the robot's bodies): ``what`` says why.
    :func:`identify_robot` turns it into one :class:`~rne_dynamics.errors.IdentificationError` line naming the link."""

    def __init__(self, body, what):
        super().__init__(body, what)
        self.body, self.what = body, what


def _weakest_body(G):
    """The index of the ``G_i`` furthest from positive definite: the first that is not finite, else the one of least
    smallest-to-largest eigenvalue ratio."""
    finite = np.isfinite(G).all(axis=(1, 2))
    if not finite.all():
        return int(np.flatnonzero(~finite)[0])
    w = np.linalg.eigvalsh(G)
    return int(np.argmin(w[:, 0] / np.maximum(np.abs(w[:, -1]), 1e-300)))


def _newton(v, G0, M, C, linear, Q=None, centre=None, free=None, stop=None, tolerance=1e-20, iterations=200):
    """Minimise :func:`_log_det_barrier` from the feasible ``v`` by damped Newton steps (backtracking keeps every
    ``G_i`` positive definite; the function is self-concordant, Nesterov & Nemirovskii) over the ``free`` entries
    (default all), until the Newton decrement is below ``tolerance``; ``stop(v)``: done early. Each step is the
    least-squares solution of the Newton system (its pseudo-inverse's): near the edge of consistency a body's
    ``G_i^-1`` is all in one direction, the Hessian singular to working precision, and the step leaves alone the
    directions the barrier cannot see there (a point-mass link of a URDF, pushed there by data no consistent robot
    explains, made ``solve`` fail)."""
    current = _log_det_barrier(v, G0, M, C, linear, Q, centre)
    if current is None:
        raise SolverFailure(_weakest_body(_matrices(v, G0, M)),
                            "its start is not physically consistent (pseudo-inertia not positive definite)")
    free = np.ones(len(v), bool) if free is None else free
    for _ in range(iterations):
        value, gradient, hessian = current
        gradient, hessian = np.where(free, gradient, 0.0), hessian[np.ix_(free, free)]
        scale = 1.0 / np.sqrt(np.maximum(np.diag(hessian), 1e-300))
        step = np.zeros(len(v))
        try:
            step[free] = -scale * np.linalg.lstsq(hessian * np.outer(scale, scale), gradient[free] * scale,
                                                  rcond=None)[0]
        except np.linalg.LinAlgError:   # the SVD of a Hessian that is not finite
            raise SolverFailure(_weakest_body(_matrices(v, G0, M)),
                                "its Newton system is not finite (its pseudo-inertia is at the edge of consistency)") \
                from None
        decrement = -gradient @ step
        if not decrement > tolerance or (stop is not None and stop(v)):
            break
        t = 1.0
        while t > 1e-12:
            candidate = _log_det_barrier(v + t * step, G0, M, C, linear, Q, centre, value_only=True)
            if candidate is not None and candidate[0] <= value - 0.25 * t * decrement:
                break
            t *= 0.5
        else:
            break
        v = v + t * step
        current = _log_det_barrier(v, G0, M, C, linear, Q, centre)
    return v


def _nearest_consistent(base, b, start, prior):
    """The physically consistent ``pi`` with ``K pi = b`` (the base parameters ``b``) that minimises
    ``sum_i D(J_i || J_i0)``, or None when no consistent ``pi`` has those base parameters. ``pi = T_b b + T_z z``
    with ``z`` the dependent parameters: phase 1 finds a ``z`` with every ``J_i - t J_i0`` positive definite for
    ``t > 0`` (``-w t`` added to ``D``'s terms, ``w`` raised tenfold until ``t > 0``), phase 2 minimises ``D``
    over ``z`` from it."""
    r = len(base.indices)
    n_pi = base.combination.shape[1]
    nb = n_pi // 10
    dependent = np.setdiff1d(np.arange(n_pi), base.indices)
    T_z = np.zeros((n_pi, len(dependent)))                              # pi = T_b b + T_z z
    T_z[dependent, np.arange(len(dependent))] = 1.0
    T_z[base.indices] = -base.combination[:, dependent]
    fixed = np.zeros(n_pi)
    fixed[base.indices] = b[:r]
    G0 = np.einsum("bk,kij->bij", fixed.reshape(nb, 10), BASIS)
    M = np.einsum("bkz,kij->bzij", T_z.reshape(nb, 10, -1), BASIS)      # d J_i / d z
    z = start[dependent]
    # phase 1: v = (z, t), G_i = J_i(z) - t J_i0; t starts below every J_i's smallest relative eigenvalue
    whiten = np.linalg.inv(np.linalg.cholesky(prior))                  # J_i0 = L L^T: eig(L^-1 J_i L^-T)
    J = _matrices(z, G0, M)
    relative = np.linalg.eigvalsh(whiten @ J @ whiten.transpose(0, 2, 1)).min()
    v = np.concatenate([z, [relative - 1.0]])
    M1 = np.concatenate([M, -prior[:, None]], axis=1)
    C = np.linalg.inv(prior)  # tr(J0^-1 G) keeps the barrier bounded below
    for weight in 10.0 ** np.arange(0, 13):
        linear = np.zeros(len(v))
        linear[-1] = -weight
        previous = v[-1]
        v = _newton(v, G0, M1, C, linear, stop=lambda v: v[-1] > 0, tolerance=1e-6)
        if v[-1] > 0:
            break
        if v[-1] - previous < 1e-3 * abs(v[-1]):  # t has settled below 0: no z makes every body consistent
            return None
    else:
        return None
    z = _newton(v[:-1], G0, M, C, np.zeros(len(z)))   # phase 2
    return fixed + T_z @ z


def _regularised_fit(base, R, b, frozen, start, prior, regularisation):
    """``(pi, b)`` minimising ``|R (b' - b)|^2 + lambda sum_i D(J_i || J_i0)`` (``R`` scaled by the caller) over
    consistent ``pi`` and the friction (``frozen`` entries of ``b`` kept as they are): the base parameters that no
    consistent robot has moved to the nearest that one has. Newton steps in ``u = (b', z)`` along a path of data
    weights from where the regulariser dominates up to ``1 / lambda`` (the objective divided by lambda), as an
    interior-point method follows its barrier; from the consistent ``start``."""
    r, m = len(base.indices), len(b)
    n_pi = base.combination.shape[1]
    nb = n_pi // 10
    dependent = np.setdiff1d(np.arange(n_pi), base.indices)
    T = np.zeros((n_pi, m + len(dependent)))                            # pi = T u
    T[base.indices, np.arange(r)] = 1.0
    T[dependent, m + np.arange(len(dependent))] = 1.0
    T[base.indices, m:] = -base.combination[:, dependent]
    M = np.einsum("bku,kij->buij", T.reshape(nb, 10, -1), BASIS)
    Q = np.zeros((len(T[0]),) * 2)
    Q[:m, :m] = R.T @ R
    centre = np.concatenate([b, np.zeros(len(dependent))])
    u = np.concatenate([base.combination @ start, b[r:], start[dependent]])
    free = np.concatenate([~frozen, np.ones(len(dependent), bool)])
    C = np.linalg.inv(prior)
    G0 = np.zeros_like(prior)
    e = R @ (u[:m] - b)
    weight = 1.0 / max(e @ e, 1e-300)
    while True:
        weight = min(weight * 10.0, 1.0 / regularisation)
        last = weight == 1.0 / regularisation
        u = _newton(u, G0, M, C, np.zeros(len(u)), weight * Q, centre, free, tolerance=1e-20 if last else 1e-6)
        if last:
            return T @ u, u[:m]


def _separable_drive_terms(grams, r, nv, max_condition, terms):
    """The columns kept ``(p,)``: every base parameter, and of each joint's drive columns (offset, viscous, Coulomb,
    armature: the order they are kept in, of those in ``terms``), then of the coupled motors' columns (the last
    ones), those whose squared residual off the span of the base parameters' and of the drive columns kept
    before them exceeds ``1 / max_condition^2`` of their squared norm (and :data:`SEPARATION_FLOOR`): the base
    parameters of the drive terms. A joint that never changes direction has a constant ``sign(qd)``: its Coulomb
    friction is lumped into its offset (``f_o + s f_c``); one at a constant speed has its viscous friction lumped
    there too; the first joint's rotor inertia (about a vertical axis) is lumped into its body's inertia about that
    axis."""
    G = grams.sum(axis=0)
    keep = np.ones(len(G), bool)
    order = [terms.index(t) for t in ("friction_offset", "damping", "friction", "armature") if t in terms]
    kept = list(range(r))
    columns = [r + nv * k + j for j in range(nv) for k in order] + list(range(r + len(terms) * nv, len(G)))
    for column in columns:
        own = G[column, column]
        left = own - G[column, kept] @ np.linalg.lstsq(G[np.ix_(kept, kept)], G[kept, column], rcond=None)[0]
        if own > 0 and left > own * max(max_condition ** -2, SEPARATION_FLOOR):
            kept.append(column)
        else:
            keep[column] = False
    return keep


def _constrained_friction(R, b_hat, r, nonnegative, fixed=None):
    """``(b, fixed)``: ``b`` minimising ``|R (b - b_hat)|`` with the ``fixed`` entries (default none) at 0 and the
    ``nonnegative`` friction entries >= 0 (an entry the fit makes negative is fixed at 0 and the others refitted,
    until none is)."""
    H = R.T @ R
    fixed = np.zeros(len(b_hat), bool) if fixed is None else fixed.copy()
    while True:
        free = ~fixed
        b = np.zeros(len(b_hat))
        b[free] = b_hat[free] + np.linalg.solve(H[np.ix_(free, free)], H[np.ix_(free, fixed)] @ b_hat[fixed])
        negative = np.zeros(len(b), bool)
        negative[r:] = nonnegative & (b[r:] < 0)
        if not negative.any():
            return b, fixed
        fixed |= negative


def identify_robot(robot, recordings, *, friction=True, holdout=0.0, coulomb_velocity=0.0, regularisation=1e-3,
                   gravity=None, max_condition=MAX_CONDITION, client=None, armature=False):
    """Identify every moving body's inertial parameters (physically consistent) and, with ``friction``, each
    joint's viscous, Coulomb and constant friction, with ``armature`` its rotor inertia (the joint's own, beyond the
    transmissions' motors the robot has), from ``recordings`` (module docstring); a motor that turns several joints
    (a coupled wrist) has its viscous and Coulomb friction (``friction``) and rotor inertia (``armature``)
    estimated whole, motor side (the result's ``motors``).

    ``recordings``: one ``(q, qd, qdd, tau)`` tuple of ``(N, nv)`` arrays, or a sequence of such tuples or of
    objects with ``q``, ``qd``, ``qdd``, ``effort`` (a ``loads`` motion), joined. ``holdout``: the fraction of each
    recording's last samples kept out of the fit and used to validate. ``coulomb_velocity``: the smooth Coulomb
    law's velocity (rad/s, scalar or per joint; 0: ``sign``). ``regularisation``: lambda. Without ``friction`` the
    robot's drive terms are taken as known. ``client``: a ``dask.distributed.Client``: each recording's normal
    equations and torques are computed by a task of its cluster (the recordings may then be its futures), the
    sums and the solution here; the numbers are those of a run without it. Returns a :class:`RobotIdentification`.
    Raises :class:`ModelError` when the motion does not excite the base parameters (condition number above
    ``max_condition``, naming the parameters the data cannot tell apart)."""
    import scipy.linalg

    _check_fixed_joints(robot, "identify_robot")
    if isinstance(recordings, tuple) and len(recordings) == 4 and np.ndim(recordings[0]) == 2:
        recordings = [recordings]
    recordings = list(recordings)
    if not recordings:
        raise StateError("identify_robot: no recording given")
    if not 0.0 <= holdout < 1.0:
        raise StateError(f"identify_robot: holdout is a fraction in [0, 1), got {holdout}")
    if not (regularisation > 0 and np.isfinite(regularisation)):
        raise StateError(f"identify_robot: regularisation is a weight > 0, got {regularisation}")
    if not max_condition > 1:
        raise StateError(f"identify_robot: max_condition is a condition number > 1, got {max_condition}")
    nv = robot.nv
    velocity = np.asarray(coulomb_velocity, dtype=float)
    if velocity.shape not in ((), (nv,)):
        raise StateError(f"identify_robot: coulomb_velocity is one number or one per joint ({nv}), got "
                         f"{velocity.tolist()}")
    velocity = np.broadcast_to(velocity, (nv,)).copy()
    model = robot.with_drive(coulomb_velocity=velocity) if friction else robot
    terms = (DRIVE_LABELS if friction else ()) + (("armature",) if armature else ())
    motors = coupled_motor_terms(robot, (("damping", "friction") if friction else ()) + (("rotor_inertia",) if armature
                                                                                       else ()))
    base = base_parameters(robot, gravity=gravity)
    transmissions = {t.name: t for t in robot.transmissions}
    motor_names = [f"{name}.{transmissions[name].motors[m]}" for name, m, _ in motors]
    names = (base.names + tuple(f"{j}.{TERM_NAMES[t]}" for t in terms for j in robot.joint_names)
             + tuple(f"{motor}.{MOTOR_TERM_NAMES[term]}" for motor, (_, _, term) in zip(motor_names, motors)))
    shares = _map(client, recording_equations, recordings, robot=robot, model=model, base=base, holdout=holdout,
                  terms=terms, gravity=gravity, motors=motors)
    # per joint A_j^T A_j, A_j^T y_j: both fits' normal equations from one pass over the samples (the columns are
    # scaled to unit norm before any factorisation, so cond(A)^2 stays far from 1/eps)
    grams, cross, squares = (sum(getattr(e, key) for e in shares) for key in ("grams", "cross", "squares"))
    n, p = sum(e.samples for e in shares), len(names)
    if n * nv <= p:
        raise ModelError(f"identify_robot: {n} samples of {nv} joints for {p} unknowns; record a longer motion")
    moved = np.einsum("jkk->k", grams)
    if np.any(moved == 0):
        raise ModelError(f"identify_robot: the recordings never move {names[int(np.argmin(moved))]}: "
                         "nothing to identify it from")
    r = len(base.indices)
    keep = _separable_drive_terms(grams, r, nv, max_condition, terms)
    grams, cross, moved = grams[:, keep][:, :, keep], cross[:, keep], moved[keep]
    kept_names = [name for name, k in zip(names, keep) if k]
    scale = 1.0 / np.sqrt(moved)
    b = scale * np.linalg.lstsq(grams.sum(axis=0) * np.outer(scale, scale), cross.sum(axis=0) * scale,
                                rcond=None)[0]  # unweighted, for each joint's residual
    # |y_j - A_j b|^2 from the sums (the residual of an unweighted fit only sets the weights)
    residual = squares - 2 * cross @ b + np.einsum("k,jkl,l->j", b, grams, b)
    sigma = np.sqrt(np.maximum(residual, 0.0) / n)
    sigma = np.maximum(sigma, 1e-9 * np.sqrt(squares / n) + 1e-300)
    weights = 1.0 / sigma ** 2
    G, c = np.einsum("j,jkl->kl", weights, grams), weights @ cross
    scale = 1.0 / np.sqrt(np.diag(G))
    eigenvalues, vectors = np.linalg.eigh(G * np.outer(scale, scale))
    condition = np.sqrt(eigenvalues[-1] / max(eigenvalues[0], 1e-300))
    if condition > max_condition:
        weak = [kept_names[int(np.argmax(np.abs(v)))] for v, e in zip(vectors.T, eigenvalues)
                if e * max_condition ** 2 < eigenvalues[-1]]
        raise ModelError(f"identify_robot: too little excitation: condition number {condition:.3g} (> "
                         f"{max_condition:.3g}); not identifiable: {', '.join(dict.fromkeys(weak))}; record a "
                         "richer motion (rne-dynamics excite ROBOT --links)")
    R = np.linalg.cholesky(G * np.outer(scale, scale)).T / scale        # G = R^T R: A_w = Q R
    Qty = scipy.linalg.solve_triangular(R, c, trans="T")
    b_hat = scipy.linalg.solve_triangular(R, Qty)
    dof_left = max(n * nv - len(kept_names), 1)
    s2 = max(weights @ squares - Qty @ Qty, 0.0) / dof_left
    R_inverse = np.linalg.inv(R)
    std = np.sqrt(s2 * np.sum(R_inverse ** 2, axis=1))
    nonnegative = np.concatenate([np.repeat(np.array([t != "friction_offset" for t in terms], bool), nv),
                                  np.ones(len(motors), bool)])[keep[r:]]  # the offset has either sign
    b_final, frozen = _constrained_friction(R, b_hat, r, nonnegative)
    prior, repaired = _prior(robot)
    start = np.concatenate([from_pseudo_inertia(J) for J in prior])   # the URDF's parameters, made consistent
    try:
        parameters = _nearest_consistent(base, b_final, start, prior)
        while parameters is None:
            parameters, b_fit = _regularised_fit(base, R / np.sqrt(n * nv), b_final, frozen, start, prior,
                                                 regularisation)
            negative = np.concatenate([np.zeros(r, bool), nonnegative & (b_fit[r:] < 0)])
            if negative.any():  # the consistent bodies moved a viscous or Coulomb coefficient below 0: held at 0
                b_final, frozen = _constrained_friction(R, b_hat, r, nonnegative, frozen | negative)
                parameters = None
            else:
                b_final = b_fit
    except SolverFailure as failure:
        raise IdentificationError(f"identify_robot: {body_name(robot, failure.body)}: {failure.what}") from None
    identified = with_inertial_parameters(robot, parameters)
    friction_estimate = None
    drive_values, drive_std = np.zeros(p - r), np.full(p - r, np.nan)   # a term not separable: 0, no std
    drive_values[keep[r:]], drive_std[keep[r:]] = b_final[r:], std[r:]
    joint_terms = len(terms) * nv
    identified = with_motor_terms(identified, motors, drive_values[joint_terms:])
    motor_estimate = {}
    for motor, (_, _, term), value, deviation in zip(motor_names, motors, drive_values[joint_terms:],
                                                     drive_std[joint_terms:]):
        motor_estimate.setdefault(motor, {}).update({MOTOR_TERM_NAMES[term]: float(value),
                                                     f"{MOTOR_TERM_NAMES[term]}_std": float(deviation)})
    if terms:
        values = drive_values[:joint_terms].reshape(len(terms), nv)
        stds = drive_std[:joint_terms].reshape(len(terms), nv)
        identified = identified.with_drive(**({"coulomb_velocity": velocity} if friction else {}),
                                           **dict(zip(terms, values)))
        friction_estimate = {joint: {**{TERM_NAMES[t]: float(values[k, j]) for k, t in enumerate(terms)},
                                     **{f"{TERM_NAMES[t]}_std": float(stds[k, j]) for k, t in enumerate(terms)}}
                             for j, joint in enumerate(robot.joint_names)}
    solution = np.concatenate([base.combination @ parameters, drive_values])
    parts = _map(client, recording_torques, recordings, robot=robot, model=model, base=base, solution=solution,
                 holdout=holdout, terms=terms, gravity=gravity, motors=motors)
    fitted_out, held_out = (tuple(part[i] for part in parts if part[i] is not None) for i in (0, 1))

    def rms(parts, model):
        errors = [measured - torques[model] for _, _, measured, *torques in parts]
        return np.sqrt(np.mean(np.concatenate(errors) ** 2, axis=0)) if errors else None
    return RobotIdentification(identified, parameters, parameter_names(robot), base,
                               base.combination @ parameters, b_hat[:r], std[:r], friction_estimate,
                               velocity if friction else robot.coulomb_velocity.copy(), float(condition),
                               rms(fitted_out, 0), rms(fitted_out, 1), rms(held_out, 0), rms(held_out, 1),
                               fitted_out, held_out, int(n), int(sum(e.held for e in shares)), float(regularisation),
                               tuple(robot.joints[robot.bodies[i].joint].child for i in repaired),
                               tuple(name for name, k in zip(names, keep) if not k), motor_estimate,
                               sum(e.held_still for e in shares) / max(sum(e.held for e in shares), 1))
