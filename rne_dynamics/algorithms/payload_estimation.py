"""Online payload estimation: the payload on a link, from joint states and measured joint torques as they come.

The torques the model does not explain are the payload's, linear in its 10 inertial parameters ``phi`` (the frame
of ``link``, inertia about its origin; :func:`~rne_dynamics.algorithms.identification.payload_regressor`):

    y_k = tau_k - tau_model(q_k, qd_k, qdd_k) = Y_L(q_k, qd_k, qdd_k) phi + e_k

Recursive least squares with exponential forgetting in information form (Ljung & Soderstrom 1983; the normal
equations decayed by ``lambda`` per sample):

    H_k = lambda H_{k-1} + Y_k^T Y_k,    g_k = lambda g_{k-1} + Y_k^T y_k,    phi_k = H_k^+ g_k

over the directions the motion excited (eigenvectors of ``H`` with its columns scaled to unit diagonal, within a
condition number of :data:`MAX_CONDITION`); the others are unobservable and reported so: on a still robot only
gravity acts, so the mass and the first moments across gravity are seen, the COM's component along gravity and the
inertia are not. ``cov(phi) = s^2 H^+`` with ``s^2`` the residual variance (the decayed sum of squared residuals
over the effective number of rows). An estimate is physically consistent when its mass is positive and, where the
inertia is observable, its pseudo-inertia positive definite (Wensing, Kim & Slotine 2017): an estimate without a
positive mass is refused; an inertia that is not consistent (a small payload's inertia is the least excited of its
parameters) is replaced by the nearest that is, and how far it moved is reported.
"""
from dataclasses import dataclass

import numpy as np

from ..errors import ModelError, StateError
from .identification import (PayloadEstimate, _check_fixed_joints, _payload_estimate, payload_regressor,
                             pseudo_inertia, raised_second_moments)
from .rnea import inverse_dynamics

#: Largest condition number (of the information matrix with unit-diagonal scaling, square-rooted: that of the
#: stacked regressor) within which a direction counts as excited.
MAX_CONDITION = 1e4
#: Largest share a parameter may have in an unexcited direction (unit eigenvector, scaled coordinates) and still be
#: observable.
OBSERVED = 1e-3
#: The quantities reported and the parameters (``phi`` indices) each needs.
NEEDS = {"mass": (0,), "com": (0, 1, 2, 3), "inertia": tuple(range(10))}


@dataclass(frozen=True)
class OnlinePayload(PayloadEstimate):
    """:meth:`PayloadEstimator.estimate`'s result: a :class:`~rne_dynamics.algorithms.identification.PayloadEstimate`
    (``mass``, ``com``, ``inertia`` about the COM in link axes, as :meth:`Robot.with_payload` takes them, and their
    standard deviations ``*_std``; ``com`` and ``inertia`` None where not ``observable``; ``constrained``: the
    least-squares inertia was not consistent and the nearest that is replaced it, ``inertia_moved`` standard
    deviations away) with ``observable`` (``{mass, com, inertia}: bool``), ``condition_number`` of the excitation
    (``inf`` when a parameter was never excited), ``samples`` the updates taken and ``effective`` their
    forgetting-weighted count, ``reason`` why it cannot be applied (not observable, no positive mass; None when it
    can) and ``applicable``."""
    observable: dict
    condition_number: float
    samples: int
    effective: float
    applicable: bool
    reason: str
    inertia_moved: float

    def apply(self, robot):
        """``robot`` carrying this payload (:meth:`Robot.with_payload`; an unobservable inertia as 0): refused
        with :class:`ModelError` giving the reason when it cannot be."""
        if self.reason is not None:
            raise ModelError(f"payload estimate on '{self.link}' not applied: {self.reason}")
        return robot.with_payload(self.link, self.mass, self.com,
                                  self.inertia if self.inertia is not None else np.zeros(6))


def payload_parameters(mass, com, inertia):
    """``phi`` ``[m, m c, I_o]`` (inertia about the link origin, ``I_xx I_xy I_yy I_xz I_yz I_zz``) of a payload
    given as :meth:`Robot.with_payload` takes it: ``I_o = I_c + m (|c|^2 1 - c c^T)``."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    c = np.asarray(com, dtype=float)
    I_o = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]]) + mass * (c @ c * np.eye(3) - np.outer(c, c))
    return np.concatenate([[mass], mass * c, I_o[[0, 0, 1, 0, 1, 2], [0, 1, 1, 2, 2, 2]]])


def nearest_consistent_inertia(inertia):
    """The inertia about the COM ``(ixx, ixy, ixz, iyy, iyz, izz)`` nearest ``inertia`` that a body has: its second
    moments raised to 1% of their largest (:func:`~rne_dynamics.algorithms.identification.raised_second_moments`)."""
    ixx, ixy, ixz, iyy, iyz, izz = inertia
    I_c = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    Sigma = raised_second_moments(0.5 * np.trace(I_c) * np.eye(3) - I_c)
    I_c = np.trace(Sigma) * np.eye(3) - Sigma
    return I_c[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]


class PayloadEstimator:
    """Estimates the payload on ``link`` of ``robot`` from the samples given to :meth:`update` (module docstring):
    what the torques show beyond ``robot`` (every term of it known, its drive terms included), added to
    ``carried`` ``(mass, com, inertia)``, the payload ``robot`` already carries on ``link`` (as
    :meth:`Robot.with_payload` took it; default none): the estimate is the whole payload. ``forgetting``:
    ``lambda`` per sample (1: none; ``exp(-dt / T)`` forgets with time constant ``T``)."""

    def __init__(self, robot, link, *, carried=None, forgetting=1.0, gravity=None):
        _check_fixed_joints(robot, "PayloadEstimator")
        if not 0.0 < forgetting <= 1.0:
            raise StateError(f"PayloadEstimator: forgetting must be in (0, 1], got {forgetting}")
        payload_regressor(robot, link, np.zeros(robot.nv), np.zeros(robot.nv), np.zeros(robot.nv))  # checks link
        self.robot, self.link, self.forgetting, self.gravity = robot, link, float(forgetting), gravity
        self.carried = np.zeros(10) if carried is None else payload_parameters(*carried)
        self.information = np.zeros((10, 10))
        self.gradient = np.zeros(10)
        self.squares = 0.0
        self.rows = 0.0
        self.samples = 0

    def update(self, q, qd, qdd, tau):
        """Take one sample (``(nv,)`` each) or a batch (``(N, nv)``, oldest first) of joint states and measured
        torques."""
        q, qd, qdd, tau = (np.atleast_2d(np.asarray(x, dtype=float)) for x in (q, qd, qdd, tau))
        for name, x in zip(("q", "qd", "qdd", "tau"), (q, qd, qdd, tau)):
            if x.shape != q.shape or x.shape[1] != self.robot.nv or not np.all(np.isfinite(x)):
                raise StateError(f"PayloadEstimator.update: {name} must be finite (N, {self.robot.nv}) like q, got "
                                 f"{x.shape}")
        Y = payload_regressor(self.robot, self.link, q, qd, qdd, gravity=self.gravity)
        y = tau - inverse_dynamics(self.robot, q, qd, qdd, gravity=self.gravity).torques
        n = len(q)
        weights = self.forgetting ** np.arange(n - 1, -1, -1)            # the newest sample weighs 1
        decay = self.forgetting ** n
        with np.errstate(over="ignore", invalid="ignore"):
            terms = (np.einsum("n,nji,njk->ik", weights, Y, Y), np.einsum("n,nji,nj->i", weights, Y, y),
                     weights @ np.sum(y ** 2, axis=1))
        if not all(np.isfinite(term).all() for term in terms):  # a corrupt reading (1e300 N m): the sums stay clean
            raise StateError(f"PayloadEstimator.update: the samples overflow the estimate (|tau| up to "
                             f"{np.abs(tau).max():.3g}); not taken")
        self.information = decay * self.information + terms[0]
        self.gradient = decay * self.gradient + terms[1]
        self.squares = decay * self.squares + terms[2]
        self.rows = decay * self.rows + weights.sum() * self.robot.nv
        self.samples += n

    def estimate(self):
        """The current :class:`OnlinePayload`."""
        H = self.information
        seen = np.diag(H) > 0
        scale = np.zeros(10)
        scale[seen] = 1.0 / np.sqrt(np.diag(H)[seen])
        w, V = np.linalg.eigh(H * np.outer(scale, scale))
        excited = w > max(w.max(), 1e-300) / MAX_CONDITION ** 2
        condition = float(np.sqrt(w.max() / w.min())) if w.min() > 0 and seen.all() else float("inf")
        # phi = D V_e diag(1 / w_e) V_e^T D g over the excited directions (D = diag(scale))
        inverse = scale[:, None] * (V[:, excited] / w[excited]) @ V[:, excited].T * scale[None, :]
        extra = inverse @ self.gradient
        residual = max(self.squares - extra @ self.gradient, 0.0)
        phi = self.carried + extra
        s2 = residual / max(self.rows - excited.sum(), 1.0)
        covariance = s2 * inverse
        weak = V[:, ~excited]   # unexcited directions (scaled coordinates): a parameter with a share in one is not seen

        def observed(indices):
            return bool(seen[list(indices)].all() and np.all(np.abs(weak[list(indices)]) < OBSERVED))
        observable = {name: observed(indices) for name, indices in NEEDS.items()}
        reason = None
        mass, com, inertia, inertia_moved = float(phi[0]), None, None, 0.0
        mass_std, com_std, inertia_std = float(np.sqrt(max(covariance[0, 0], 0.0))), None, None
        if not observable["mass"]:
            reason = "the motion has not excited the mass yet"
        elif mass <= 0:
            reason = f"mass {mass:.4g} kg is not positive (no payload, or a model error)"
        elif not observable["com"]:
            reason = "the COM is not observable yet (a still robot sees it across gravity only: move the link)"
        if observable["com"] and mass > 0:
            full = _payload_estimate(self.link, phi, covariance, False)
            com, com_std = full.com, full.com_std
            mass_std = full.mass_std
            if observable["inertia"]:
                inertia, inertia_std = full.inertia, full.inertia_std
                if np.linalg.eigvalsh(pseudo_inertia(phi)).min() <= 0:
                    inertia = nearest_consistent_inertia(full.inertia)
                    inertia_moved = float(np.max(np.abs(inertia - full.inertia) / np.maximum(inertia_std, 1e-300)))
        return OnlinePayload(self.link, mass, com, inertia, mass_std, com_std, inertia_std, inertia_moved > 0,
                             observable, condition, self.samples, float(self.rows / self.robot.nv), reason is None,
                             reason, inertia_moved)
