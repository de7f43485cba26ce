"""The torque rate ``d tau / dt`` against central differences of ``rd.inverse_dynamics`` along polynomial
trajectories (every example-robot-data robot, with mimic joints, URDF friction and added armature), against the
chain rule through the analytic derivatives, and against the closed form of a planar two-link arm."""
import numpy as np
import pytest

import oracle
import rne_dynamics as rd
from oracle import random_states, with_armature
from test_derivatives import PLANAR_GRAVITY, TILTED_GRAVITY, TwoLinkArm

PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
FD_TOLERANCE = 1e-6
STEP = 1e-5


class Polynomial:
    """``q(t) = sum_k c_k t^k`` per joint (degree 5) and its first three time derivatives."""

    def __init__(self, coefficients):
        self.c = np.asarray(coefficients)  # (degree + 1, dof)

    def derivative(self, t, order):
        """``d^order q / dt^order`` at the times ``t`` (scalar or ``(N,)``), shape ``(…, dof)``."""
        t = np.asarray(t, float)[..., None]
        out = 0.0
        for k in range(order, len(self.c)):
            falling = np.prod(np.arange(k - order + 1, k + 1))  # k! / (k - order)!
            out = out + falling * self.c[k] * t ** (k - order)
        return out

    def state(self, t):
        return [self.derivative(t, order) for order in range(4)]


def trajectory(robot, seed):
    """A random quintic through a random state in the limits at ``t = 0``, velocities well away from 0 over
    ``[-STEP, STEP]`` (Coulomb friction switches at 0) ."""
    rng = np.random.default_rng(seed)
    q0, qd0, qdd0 = (x[0] for x in random_states(robot, 1, seed=seed, scale=2.0))
    qd0 = np.where(np.abs(qd0) < 0.1, 0.5, qd0)
    return Polynomial(np.vstack([q0, qd0, qdd0 / 2, rng.normal(size=(3, robot.dof))]))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_matches_finite_differences_along_a_polynomial(path):
    robot = with_armature(oracle.pair(path)[0], seed=11)
    motion = trajectory(robot, seed=11)
    times = np.array([STEP, -STEP])
    q, qd, qdd, _ = motion.state(times)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY).torques
    expected = (tau[0] - tau[1]) / (2 * STEP)
    ours = rd.torque_rate(robot, *motion.state(0.0), gravity=TILTED_GRAVITY)
    error = oracle.relative_error(ours, expected)
    assert error < FD_TOLERANCE, f"relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_is_the_chain_rule_through_the_derivatives(path):
    """``d tau/dt = dtau/dq qd + dtau/dqd qdd + M qddd``: two independent derivations agree to rounding."""
    robot = with_armature(oracle.pair(path)[0], seed=12)
    rng = np.random.default_rng(12)
    q, qd, qdd = random_states(robot, 3, seed=12, scale=2.0)
    qddd = rng.normal(size=q.shape)
    dtau_dq, dtau_dqd, M = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    chain = (np.einsum("nij,nj->ni", dtau_dq, qd) + np.einsum("nij,nj->ni", dtau_dqd, qdd)
             + np.einsum("nij,nj->ni", M, qddd))
    error = oracle.relative_error(rd.torque_rate(robot, q, qd, qdd, qddd), chain)
    assert error < 1e-10, f"relative error {error:.3g}"


@pytest.mark.parametrize("t", [0.0, 0.4, -0.7])
def test_two_link_arm_closed_form(t):
    """The arm's Lagrange torques differentiated by hand (``TwoLinkArm.torque_derivatives``) along a motion."""
    arm = TwoLinkArm()
    motion = Polynomial([[0.3, -1.1], [0.8, -1.7], [1.0, 0.25], [-0.6, 0.9], [0.2, -0.4], [0.05, 0.1]])
    q, qd, qdd, qddd = motion.state(t)
    dtau_dq, dtau_dqd, M = arm.torque_derivatives(q, qd, qdd)
    expected = dtau_dq @ qd + dtau_dqd @ qdd + M @ qddd
    ours = rd.torque_rate(arm.robot(), q, qd, qdd, qddd, gravity=PLANAR_GRAVITY)
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=1e-12)


def test_at_rest_it_is_the_mass_matrix_times_the_jerk():
    robot, _ = oracle.pair(oracle.robot_path("ur_description/urdf/ur5_robot.urdf"))
    q = np.array([0.1, -1.2, 1.5, -0.4, 0.8, 0.3])
    qddd = np.array([1.0, -2.0, 0.5, 3.0, -1.0, 2.0])
    zero = np.zeros(6)
    np.testing.assert_allclose(rd.torque_rate(robot, q, zero, zero, qddd), rd.mass_matrix(robot, q) @ qddd,
                               rtol=1e-12, atol=1e-12)
    assert np.all(rd.torque_rate(robot, q, zero, zero, zero) == 0.0)  # holding still under gravity: constant


def test_batch_matches_one_state_at_a_time():
    robot, _ = oracle.pair(oracle.robot_path("pr2_description/urdf/pr2.urdf"))
    motion = trajectory(robot, seed=13)
    states = motion.state(np.linspace(-0.5, 0.5, 7))
    batched = rd.torque_rate(robot, *states)
    assert batched.shape == (7, robot.dof)
    for n in range(7):
        np.testing.assert_allclose(batched[n], rd.torque_rate(robot, *(x[n] for x in states)), rtol=0, atol=1e-12)


def test_bad_arguments_are_named():
    robot, _ = oracle.pair(oracle.robot_path("ur_description/urdf/ur5_robot.urdf"))
    zero = np.zeros(6)
    with pytest.raises(rd.StateError, match="qddd"):
        rd.torque_rate(robot, zero, zero, zero, np.zeros((2, 6)))
    with pytest.raises(rd.StateError, match="gravity"):
        rd.torque_rate(robot, zero, zero, zero, zero, gravity="down")
