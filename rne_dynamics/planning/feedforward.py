"""The exact flexible-joint feedforward of a trajectory given by its points (a ``JointTrajectory``, a plan's
samples): the motor torques that make elastic joints follow the quintic spline through the points."""
import math

import numpy as np

from ..algorithms.flexible import flexible_feedforward
from ..errors import StateError


def flexible_feedforward_through(robot, nanoseconds, q, *, gravity=None):
    """The motor torques of the exact flexible feedforward (:func:`rne_dynamics.flexible_feedforward`) at the points
    of a trajectory, the positions ``q`` ``(N, dof)`` at the times ``nanoseconds`` (integers, as ROS durations
    give them): the positions are interpolated by the quintic B-spline through the points (not-a-knot ends; its 4th
    derivative is continuous), whose derivatives are the velocities up to the snap. Raises StateError for times
    that do not increase or fewer than 6 points.

    With spring damping ``D > 0`` the spring-damper equation is solved along the whole trajectory, which the library
    takes sampled uniformly: the spline is resampled every :func:`damped_sample_step` seconds, on a grid through
    every point, and the motor torques are those of the grid's samples at the points."""
    from scipy.interpolate import make_interp_spline

    nanoseconds = np.asarray(nanoseconds, dtype=np.int64)
    t = 1e-9 * nanoseconds
    if len(t) < 6:
        raise StateError(f"with elastic joints a trajectory needs at least 6 points (a quintic spline through them "
                         f"gives the link snap), got {len(t)}")
    if np.any(np.diff(t) <= 0):
        k = int(np.flatnonzero(np.diff(t) <= 0)[0]) + 1
        raise StateError(f"time_from_start must increase: point {k} is at {t[k]} s, point {k - 1} at {t[k - 1]} s")
    spline = make_interp_spline(t, q, k=5)
    transmission = robot.transmission
    if not ((transmission.spring_damping > 0) & (transmission.stiffness > 0)).any():
        derivatives = [spline(t, nu=n) for n in range(1, 5)]
        return flexible_feedforward(robot, q, *derivatives, gravity=gravity).motor_torques
    step, at_points = damped_sample_step(nanoseconds, transmission)
    grid = t[0] + step * np.arange(at_points[-1] + 1)
    grid[at_points] = t  # the points themselves, not their rounded multiples of the step
    samples = [spline(grid, nu=n) for n in range(5)]
    return flexible_feedforward(robot, *samples, gravity=gravity, dt=step).motor_torques[at_points]


MAX_DAMPED_SAMPLES = 200_000  # a trajectory resampled finer than this is refused (memory, time)


def damped_sample_step(nanoseconds, transmission):
    """The uniform step (s) at which :func:`flexible_feedforward_through` resamples a trajectory for damped springs,
    and the indices of the points (times in integer nanoseconds) on that grid.

    The grid must pass through every point: its step divides the greatest common divisor ``g`` of the points' times
    since the first. It is ``g / m`` with the smallest ``m`` that makes it at most ``min(1 ms, 0.1 min(D / K))``:
    a tenth of the fastest spring-damper time constant ``D / K``. The spring's deflection is solved exactly for the
    torque's cubic Hermite pieces between samples (:func:`rne_dynamics.flexible_feedforward`); the motor
    acceleration carries its error times ``(K / D)^2``, which that step keeps below a hundredth of the error of one
    sample per time constant. Raises StateError when the grid would need more than :data:`MAX_DAMPED_SAMPLES`."""
    damped = (transmission.spring_damping > 0) & (transmission.stiffness > 0)
    time_constant = float(np.min(transmission.spring_damping[damped] / transmission.stiffness[damped]))
    largest = min(1e-3, 0.1 * time_constant)
    since = nanoseconds - nanoseconds[0]
    common = int(np.gcd.reduce(since[1:]))
    subdivisions = math.ceil(1e-9 * common / largest)
    samples = since[-1] // common * subdivisions + 1
    if samples > MAX_DAMPED_SAMPLES:
        raise StateError(f"with spring damping the trajectory is resampled on a uniform grid through its points, at "
                         f"most {largest:.3g} s apart: its points' times (common step {1e-9 * common:.9g} s) would "
                         f"need {samples} samples, more than {MAX_DAMPED_SAMPLES}; give the points on a coarser "
                         "common time grid")
    return 1e-9 * common / subdivisions, since // common * subdivisions
