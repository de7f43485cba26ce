"""Fixed-step simulation: energy conservation and convergence order of the integrators on the frictionless planar
double pendulum (the 2R arm of test_crba), joint limits as hard stops, torque inputs (array, callable), batches,
external wrenches and argument errors."""
import numpy as np
import pytest

import rne_dynamics as rd
from test_crba import ARM, G, PLANAR_GRAVITY, arm_mass_matrix, two_link_arm

SWING = (np.array([0.5, -0.3]), np.array([1.0, -2.0]))   # a fast, chaotic motion (up to 29 rad/s)
GENTLE = (np.array([-1.2, 0.4]), np.zeros(2))             # released from rest, swings below 2 rad/s


def energy(q, qd, m1, m2, l1, lc1, lc2, **_):
    """``1/2 qd^T M qd + V`` of the 2R arm, ``V`` the height of each centre of mass along +y times its weight."""
    kinetic = np.array([0.5 * v @ arm_mass_matrix(x, **ARM) @ v for x, v in zip(q, qd)])
    height = m1 * lc1 * np.sin(q[:, 0]) + m2 * (l1 * np.sin(q[:, 0]) + lc2 * np.sin(q[:, 0] + q[:, 1]))
    return kinetic + G * height


def test_rk4_conserves_energy_of_the_frictionless_double_pendulum():
    """Drift bound: |E(t) - E(0)| <= 1e-6 J over 5 s at dt = 1 ms (E(0) = 4.08 J, measured 1.9e-7 J) while the
    links travel 21 and 37 rad at up to 29 rad/s; at dt = 10 ms RK4 drifts more than that, so the bound is not
    loose."""
    robot = rd.load_urdf(two_link_arm())
    trajectory = rd.simulate(robot, *SWING, np.zeros(2), 5.0, 1e-3, gravity=PLANAR_GRAVITY)
    E = energy(trajectory.q, trajectory.qd, **ARM)
    assert np.abs(np.diff(trajectory.q, axis=0)).sum(axis=0).min() > 20.0  # a demanding motion
    assert np.abs(E - E[0]).max() <= 1e-6
    coarse = rd.simulate(robot, *SWING, np.zeros(2), 5.0, 1e-2, gravity=PLANAR_GRAVITY)
    assert np.abs(energy(coarse.q, coarse.qd, **ARM) - E[0]).max() > 1e-6


@pytest.mark.parametrize("method, order, dts", [("rk4", 4, (4e-3, 2e-3)), ("semi_implicit", 1, (2e-3, 1e-3))])
def test_convergence_order(method, order, dts):
    """Halving ``dt`` divides the error at t = 1 s by about ``2^order`` (reference: RK4 at dt / 16)."""
    robot = rd.load_urdf(two_link_arm())
    reference = rd.simulate(robot, *GENTLE, np.zeros(2), 1.0, dts[1] / 16, gravity=PLANAR_GRAVITY).q[-1]
    errors = [np.abs(rd.simulate(robot, *GENTLE, np.zeros(2), 1.0, dt, method=method,
                                 gravity=PLANAR_GRAVITY).q[-1] - reference).max() for dt in dts]
    assert 0.75 * 2**order < errors[0] / errors[1] < 1.25 * 2**order


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_joints_stop_at_their_limits(method):
    """Released level, the arm falls onto its lower stops (both joints) and stays there: never past them, at rest on
    them (within 1e-9 rad and 1e-6 rad/s; measured: on the limit to 3e-11 rad, 3e-8 rad/s)."""
    robot = rd.load_urdf(two_link_arm(kind="revolute", lower=-0.5, upper=0.5))
    trajectory = rd.simulate(robot, np.zeros(2), np.zeros(2), np.zeros(2), 2.0, 1e-3, method=method,
                             gravity=PLANAR_GRAVITY)
    assert trajectory.q.min() >= -0.5 and trajectory.q.max() <= 0.5
    np.testing.assert_allclose(trajectory.q[-1], -0.5, rtol=0, atol=1e-9)
    np.testing.assert_allclose(trajectory.qd[-1], 0.0, rtol=0, atol=1e-6)
    assert trajectory.qdd[-1, 0] < 0.0  # gravity still pushes into the stop: the stop, not the dynamics, holds it


def test_a_joint_on_its_stop_may_leave_it():
    robot = rd.load_urdf(two_link_arm(kind="revolute", lower=-0.5, upper=0.5))
    q, qd = rd.step(robot, [-0.5, 0.0], [2.0, 0.0], np.zeros(2), 1e-3, gravity=PLANAR_GRAVITY)
    assert q[0] > -0.5 and qd[0] > 0.0
    q, qd = rd.step(robot, [-0.5, 0.0], [-2.0, 0.0], np.zeros(2), 1e-3, gravity=PLANAR_GRAVITY)
    assert q[0] == -0.5 and qd[0] == 0.0
    assert qd[1] < -4.0  # the impact stops joint 1 in the mass matrix's metric: link 2 swings on (momentum)


def test_gravity_torques_hold_the_arm_still():
    robot = rd.load_urdf(two_link_arm())
    q0 = GENTLE[0]
    trajectory = rd.simulate(robot, q0, np.zeros(2), rd.gravity_torques(robot, q0, gravity=PLANAR_GRAVITY), 1.0,
                             1e-2, gravity=PLANAR_GRAVITY)
    np.testing.assert_allclose(trajectory.q, np.broadcast_to(q0, trajectory.q.shape), rtol=0, atol=1e-12)


def test_callable_torque_is_a_controller():
    """A PD controller with gravity compensation, evaluated at the start of each step, brings the arm to its target;
    the trajectory records the torque it returned."""
    robot = rd.load_urdf(two_link_arm())
    target = np.array([0.8, -0.6])

    def controller(t, q, qd):
        return rd.gravity_torques(robot, q, gravity=PLANAR_GRAVITY) + 60.0 * (target - q) - 12.0 * qd

    trajectory = rd.simulate(robot, *GENTLE, controller, 4.0, 2e-3, gravity=PLANAR_GRAVITY)
    np.testing.assert_allclose(trajectory.q[-1], target, atol=1e-6)
    k = 123
    np.testing.assert_array_equal(trajectory.tau[k], controller(trajectory.t[k], trajectory.q[k], trajectory.qd[k]))
    np.testing.assert_allclose(trajectory.t[[0, 1, -1]], [0.0, 2e-3, 4.0])


def test_trajectory_samples_are_consistent_with_step_and_forward_dynamics():
    robot = rd.load_urdf(two_link_arm(damping=0.3, friction=0.2))
    tau = np.array([0.4, -0.2])
    trajectory = rd.simulate(robot, *SWING, tau, 0.05, 1e-2, method="semi_implicit", gravity=PLANAR_GRAVITY)
    assert trajectory.q.shape == trajectory.qd.shape == trajectory.qdd.shape == trajectory.tau.shape == (6, 2)
    for k in range(5):
        q, qd = rd.step(robot, trajectory.q[k], trajectory.qd[k], tau, 1e-2, method="semi_implicit",
                        gravity=PLANAR_GRAVITY)
        np.testing.assert_array_equal(q, trajectory.q[k + 1])
        np.testing.assert_array_equal(qd, trajectory.qd[k + 1])
    np.testing.assert_array_equal(trajectory.qdd, rd.forward_dynamics(robot, trajectory.q, trajectory.qd,
                                                                      trajectory.tau, gravity=PLANAR_GRAVITY))


def test_batch_equals_one_by_one():
    robot = rd.load_urdf(two_link_arm(kind="revolute", lower=-1.0, upper=1.0))
    q0 = np.array([[0.1, 0.2], [-0.9, 0.5], [0.7, -0.95]])
    qd0 = np.array([[1.0, 0.0], [-3.0, 1.0], [0.5, -2.0]])
    batch = rd.simulate(robot, q0, qd0, np.array([0.3, 0.1]), 0.5, 5e-3, gravity=PLANAR_GRAVITY)
    assert batch.q.shape == (101, 3, 2)
    for n in range(3):
        one = rd.simulate(robot, q0[n], qd0[n], np.array([0.3, 0.1]), 0.5, 5e-3, gravity=PLANAR_GRAVITY)
        np.testing.assert_allclose(batch.q[:, n], one.q, rtol=0, atol=1e-13)
        np.testing.assert_allclose(batch.qd[:, n], one.qd, rtol=0, atol=1e-12)


def test_external_wrenches_that_cancel_gravity_keep_the_arm_still():
    """On each link, the force ``m g`` upwards at its centre of mass, in the link frame (link angle ``theta``):
    ``[m G sin theta, m G cos theta, 0, 0, 0, lc m G cos theta]``."""
    robot = rd.load_urdf(two_link_arm())
    q = np.array([0.4, -1.1])
    wrenches = {}
    for link, mass, lc, theta in (("link1", ARM["m1"], ARM["lc1"], q[0]), ("link2", ARM["m2"], ARM["lc2"], q.sum())):
        w = mass * G
        wrenches[link] = [w * np.sin(theta), w * np.cos(theta), 0.0, 0.0, 0.0, lc * w * np.cos(theta)]
    held = rd.step(robot, q, np.zeros(2), np.zeros(2), 1e-2, gravity=PLANAR_GRAVITY, external_wrenches=wrenches)
    np.testing.assert_allclose(held[0], q, rtol=0, atol=1e-14)
    np.testing.assert_allclose(held[1], 0.0, rtol=0, atol=1e-12)
    falling = rd.step(robot, q, np.zeros(2), np.zeros(2), 1e-2, gravity=PLANAR_GRAVITY)
    assert np.abs(falling[1]).max() > 1e-2


def test_bad_arguments_are_clear_errors():
    robot = rd.load_urdf(two_link_arm(kind="revolute", lower=-1.0, upper=1.0))
    zero = np.zeros(2)
    with pytest.raises(rd.StateError, match="method must be one of 'rk4', 'semi_implicit'"):
        rd.step(robot, zero, zero, zero, 1e-3, method="euler")
    with pytest.raises(rd.StateError, match="dt must be finite and > 0"):
        rd.step(robot, zero, zero, zero, 0.0)
    with pytest.raises(rd.StateError, match="duration must be finite and >= 0"):
        rd.simulate(robot, zero, zero, zero, -1.0, 1e-3)
    with pytest.raises(rd.StateError, match="q0 of joint 'joint2' is 1.5, outside its limits"):
        rd.simulate(robot, [0.0, 1.5], zero, zero, 1.0, 1e-3)
    with pytest.raises(rd.StateError, match="torque callable returned shape"):
        rd.simulate(robot, zero, zero, lambda t, q, qd: np.zeros((2, 2)), 1.0, 1e-3)
    with pytest.raises(rd.StateError, match="tau has shape"):
        rd.simulate(robot, zero, zero, np.zeros(3), 1.0, 1e-3)
