"""``rne_dynamics.planning.flexible_feedforward_through``: the exact flexible feedforward at a trajectory's points
(the library behind the inverse node's ``~/trajectory`` with elastic joints)."""
import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.planning import flexible_feedforward_through
from rne_dynamics.planning.feedforward import damped_sample_step

LINK = """<robot name="link"><link name="base"/>
  <link name="arm"><inertial><origin xyz="0.4 0 0"/><mass value="3.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.05" iyz="0" izz="0.05"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="100" velocity="5"/></joint></robot>"""
K, J, N = 400.0, 2e-4, 50.0


def quintic(t):
    """A quintic polynomial and its derivatives up to the snap: the spline through its samples is itself."""
    c = np.array([0.1, 0.3, -0.2, 0.5, -0.4, 0.25])
    powers = [np.polynomial.polynomial.polyder(c, n) if n else c for n in range(5)]
    return [np.polynomial.polynomial.polyval(t, p)[:, None] for p in powers]


def test_undamped_equals_the_feedforward_at_the_exact_derivatives():
    """Horizontal plane (no gravity load): the motor torque is N (K delta) + N^2 J theta'' with the closed-form
    deflection; at points of a quintic the spline is the quintic, so the torques are the library's at its exact
    derivatives."""
    robot = rd.load_urdf(LINK).with_drive(stiffness=[K], motor_inertia=[J], gear_ratio=[N])
    nanoseconds = np.arange(0, 1_000_000_001, 100_000_000)
    t = 1e-9 * nanoseconds
    q, *derivatives = quintic(t)
    tau = flexible_feedforward_through(robot, nanoseconds, q)
    expected = rd.flexible_feedforward(robot, q, *derivatives).motor_torques
    np.testing.assert_allclose(tau, expected, rtol=1e-9, atol=1e-9)
    assert np.abs(tau).max() > 1.0


def test_damped_grid_passes_through_the_points():
    """Spring damping 2 N m s/rad: a tenth of the time constant D / K = 5 ms is 0.5 ms, below the 1 ms the grid
    takes at most: 600 samples (D = 0.2 took 6,000, three batches waiting for their machine code)."""
    damping = 2.0
    robot = rd.load_urdf(LINK).with_drive(stiffness=[K], motor_inertia=[J], gear_ratio=[N], spring_damping=[damping])
    nanoseconds = np.array([0, 30_000_000, 90_000_000, 120_000_000, 210_000_000, 300_000_000])
    step, at_points = damped_sample_step(nanoseconds, robot.transmission)
    assert step <= min(1e-3, 0.1 * damping / K) + 1e-15  # a tenth of the spring-damper time constant
    assert step < 1e-3 - 1e-15  # (the time constant decides)
    np.testing.assert_allclose(at_points * step, 1e-9 * nanoseconds, rtol=0, atol=1e-12)
    q, *_ = quintic(1e-9 * nanoseconds)
    assert np.isfinite(flexible_feedforward_through(robot, nanoseconds, q)).all()


@pytest.mark.parametrize("nanoseconds, reason", [
    ([0, 1, 2, 3, 4], "at least 6 points"),
    ([0, 1, 2, 2, 4, 5], "time_from_start must increase: point 3"),
])
def test_bad_trajectories_are_refused_with_the_reason(nanoseconds, reason):
    robot = rd.load_urdf(LINK).with_drive(stiffness=[K], motor_inertia=[J], gear_ratio=[N])
    with pytest.raises(ValueError, match=reason):
        flexible_feedforward_through(robot, nanoseconds, np.zeros((len(nanoseconds), 1)))
