"""Clamped B-splines in normalised time, the joint-trajectory parameterisation of Barman (2020) Sec. 4.1.1.

A joint trajectory of duration ``T`` is ``q(t) = sum_i B_i(s) P_i`` with ``s = t / T`` in ``[0, 1]`` (eq. 4.13),
``B_i`` the clamped B-spline basis of degree ``k`` on uniform knots (eq. 4.14 with ``Δs = T / l``: the knots scale
with ``T``, so a basis on ``[0, 1]`` serves every ``T``) and ``P_i`` the control points ``(n, nv)``. By the chain rule
``d/dt = (1/T) d/ds``:

    q = B(s) P,    qd = B'(s) P / T,    qdd = B''(s) P / T^2

so at a fixed ``s`` the derivatives with respect to the design variables are linear maps of the basis values:

    dq/dP_i = B_i(s),   dqd/dP_i = B_i'(s) / T,   dqdd/dP_i = B_i''(s) / T^2
    dq/dT = 0,          dqd/dT = -qd / T,         dqdd/dT = -2 qdd / T

(Barman's eq. 4.15 states the chain rule through ``q, qd, qdd``; these are the inner derivatives it needs.)
Clamping makes the curve start at ``P_0`` and end at ``P_{n-1}``, its ``r``-th derivative at either end depend on the
``r + 1`` control points there only, and (convex hull) keeps ``q`` between the smallest and largest control point;
``dq/ds`` is a B-spline too (control points ``D P``), so bounds on ``D P / T`` bound ``qd`` everywhere.
"""
from functools import cached_property

import numpy as np


class ClampedBasis:
    """The clamped B-spline basis of ``degree`` with ``count`` functions on ``[0, 1]``, uniform interior knots."""

    def __init__(self, count, degree=3):
        if count < degree + 1:
            raise ValueError(f"a degree-{degree} B-spline needs at least {degree + 1} control points, got {count}")
        self.count, self.degree = count, degree
        interior = np.linspace(0.0, 1.0, count - degree + 1)
        self.knots = np.concatenate([np.zeros(degree), interior, np.ones(degree)])
        from scipy.interpolate import BSpline  # imported here: it costs every `import rne_dynamics` a second
        self._splines = [BSpline(self.knots, np.eye(count), degree)]
        for _ in range(2):
            self._splines.append(self._splines[-1].derivative())

    @cached_property
    def breakpoints(self):
        """The distinct knots: ``0 = s_0 < s_1 < ... = 1``, where the ``degree``-th derivative may jump."""
        return np.unique(self.knots)

    @cached_property
    def derivative_matrix(self):
        """``D`` ``(count - 1, count)``: the control points of ``dq/ds``, a clamped B-spline of degree ``k - 1`` on
        the inner knots, are ``D P`` (``V_i = k (P_{i+1} - P_i) / (t_{i+k+1} - t_{i+1})``)."""
        n, k, t = self.count, self.degree, self.knots
        D = np.zeros((n - 1, n))
        for i in range(n - 1):
            D[i, i], D[i, i + 1] = np.array([-1.0, 1.0]) * k / (t[i + k + 1] - t[i + 1])
        return D

    def __call__(self, s, derivative=0):
        """``(len(s), count)``: the ``derivative``-th s-derivative (0, 1 or 2) of every basis function at ``s``."""
        return self._splines[derivative](np.clip(np.asarray(s, float), 0.0, 1.0))


class SplineTrajectory:
    """``q(t) = B(t / duration) P``: control points ``(count, nv)`` on a :class:`ClampedBasis`, for ``0 <= t <= T``."""

    def __init__(self, basis, control_points, duration):
        self.basis, self.control_points, self.duration = basis, np.asarray(control_points, float), float(duration)

    def sample(self, times):
        """``(q, qd, qdd)``, each ``(len(times), nv)``: exact values and time derivatives at ``times`` (s)."""
        s = np.asarray(times, float) / self.duration
        P, T = self.control_points, self.duration
        return self.basis(s) @ P, self.basis(s, 1) @ P / T, self.basis(s, 2) @ P / T ** 2

    def grid(self, period):
        """Times from 0 to ``duration`` both included, evenly spaced at most ``period`` apart."""
        return time_grid(self.duration, period)


def time_grid(duration, period):
    """Times from 0 to ``duration`` both included, evenly spaced at most ``period`` apart."""
    return np.linspace(0.0, duration, max(2, int(np.ceil(duration / period - 1e-9)) + 1))
