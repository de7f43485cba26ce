"""External joint torques from the generalised momentum (De Luca & Mattone, ICRA 2003; Haddadin, De Luca &
Albu-Schaeffer, IEEE T-RO 2017, eq. 27).

With the drive model of :func:`rne_dynamics.inverse_dynamics` (rotor inertia inside ``M``, friction
``tau_f = damping qd + friction sign(qd)``), ``M qdd + C qd + g + tau_f = tau + tau_ext``, and since
``dM/dt = C + C^T`` the momentum ``p = M qd`` obeys

    dp/dt = tau + tau_ext + beta,      beta = C^T qd - g - tau_f.

The residual ``r = K (p - p(0) - int (tau + beta + r) dt)`` then follows ``dr/dt = K (tau_ext - r)``: a first-order
filter of ``tau_ext``, gain ``K`` in 1/s per coordinate, with no acceleration measured and no matrix inverted.
Here ``beta`` is ``(C + C^T) qd - n(q, qd)`` with ``n = inverse_dynamics(q, qd, 0) = C qd + g + tau_f``, which is the
drive friction exactly as the model has it. Sampled signals are integrated by the trapezoidal rule and the filter by
its bilinear (Tustin) form, stable for every ``K dt``::

    e_k (1 + K dt/2) = e_{k-1} + p_k - p_{k-1} - dt/2 (tau_{k-1} + beta_{k-1} + tau_k + beta_k + r_{k-1}),
    r_k = K e_k.

A Coulomb step inside a sample period (``qd`` changing sign) is seen on the sample grid only, for the model's
friction as for a measured ``tau`` that compensates it: a crossing can move ``r`` by up to ``K friction dt / 2``,
which then decays at the rate ``K``.
"""
import numpy as np

from ..errors import StateError
from .coriolis import coriolis_matrix
from .crba import mass_matrix
from .rnea import inverse_dynamics


def _per_coordinate(robot, value, label, positive):
    """``value`` (one number or ``nv``) as an ``(nv,)`` array, every entry finite and above (or from) zero."""
    array = np.array(value, dtype=float) if np.ndim(value) else np.full(robot.nv, float(value))
    if array.shape != (robot.nv,):
        raise StateError(f"observer {label}: one value or {robot.nv} (one per coordinate of v: "
                         f"{', '.join(robot.v_names)}), got shape {array.shape}")
    bad = ~np.isfinite(array) | ((array <= 0) if positive else (array < 0))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        need = "> 0" if positive else ">= 0"
        raise StateError(f"observer {label} of '{robot.v_names[k]}' must be finite and {need}, got {array[k]}")
    return array


class MomentumObserver:
    """Estimates the external joint torques ``tau_ext`` (module docstring) from ``q``, ``qd`` and the joint torques.

    ``gain``: ``K`` in 1/s, one number or one per coordinate of ``v``; the estimate reaches ``1 - e^-K t`` of a step
    of ``tau_ext`` after ``t``. ``thresholds``: ``|r|`` above which a coordinate is in collision (one number or one
    per coordinate; ``None``: never). ``gravity`` as in :func:`rne_dynamics.inverse_dynamics`. A floating base is
    allowed: its 6 coordinates' ``tau`` is 0 (unactuated) and their estimate the external wrench on the base.
    """

    def __init__(self, robot, gain, *, thresholds=None, gravity=None):
        self.robot = robot
        self.gain = _per_coordinate(robot, gain, "gain (1/s)", positive=True)
        self.thresholds = None if thresholds is None else _per_coordinate(robot, thresholds, "thresholds",
                                                                           positive=False)
        self.gravity = gravity
        self._data = robot.data()
        self._zero = np.zeros(robot.nv)
        self.estimate = np.zeros(robot.nv)
        self._error = np.zeros(robot.nv)       # e = r / K
        self._momentum = np.zeros(robot.nv)    # p at the last update
        self._rate = np.zeros(robot.nv)        # tau + beta at the last update
        self._started = False

    def reset(self):
        """Forget the motion: the next :meth:`update` starts the observer again (estimate 0)."""
        self._started = False
        self.estimate[:] = 0.0

    def update(self, q, qd, tau, dt):
        """Advance by ``dt`` seconds to the state ``(q, qd)`` with measured (or commanded) joint torques ``tau``
        ``(nv,)``; returns the estimate of ``tau_ext`` ``(nv,)`` (an array the next update overwrites). The first
        update after construction or :meth:`reset` only records the momentum (estimate 0, ``dt`` ignored)."""
        tau = np.asarray(tau, dtype=float)
        if tau.shape != (self.robot.nv,) or not np.all(np.isfinite(tau)):
            raise StateError(f"observer: tau must be {self.robot.nv} finite numbers, got "
                             f"{tau.tolist() if tau.size <= 12 else tau.shape}")
        if self._started and not (np.isfinite(dt) and dt > 0):
            raise StateError(f"observer: dt must be finite and > 0 s, got {dt}")
        qd = np.asarray(qd, dtype=float)
        momentum = mass_matrix(self.robot, q, data=self._data) @ qd
        C = coriolis_matrix(self.robot, q, qd, data=self._data)
        both_ways = C @ qd + C.T @ qd
        n = inverse_dynamics(self.robot, q, qd, self._zero, gravity=self.gravity, data=self._data).torques
        rate = tau + both_ways - n                              # tau + beta
        if self._started:
            K = self.gain
            self._error += momentum - self._momentum - 0.5 * dt * (self._rate + rate + self.estimate)
            self._error /= 1.0 + 0.5 * dt * K
            np.multiply(K, self._error, out=self.estimate)
        else:
            self._error[:] = 0.0
            self.estimate[:] = 0.0
            self._started = True
        self._momentum[:] = momentum
        self._rate[:] = rate
        return self.estimate

    @property
    def collision(self):
        """Per coordinate of ``v``: ``|estimate| > thresholds`` (all False without thresholds)."""
        if self.thresholds is None:
            return np.zeros(self.robot.nv, dtype=bool)
        return np.abs(self.estimate) > self.thresholds

    @property
    def in_collision(self):
        """Whether any coordinate's estimate is above its threshold."""
        return bool(self.collision.any())
