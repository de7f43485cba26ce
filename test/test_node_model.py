"""The nodes' model object (no rclpy): one call per callback whatever the robot's kind, equal to the library's, in
the model's Data (a second call reuses the first one's memory: nothing allocated per message)."""
import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.nodes.model import AT_REST, BaseMotion, DynamicsModel
from rne_dynamics.nodes.parameters import COMMON_PARAMETERS
from rne_dynamics.robots import DEFAULT_ROBOT

EXACT = dict(rtol=0.0, atol=1e-12)
SPACE = rd.bundled_robot_path("rne_space_robot")
GRAVITY = [0.3, -0.2, -9.7]


def model(robot, base="fixed"):
    values = {spec.name: [] if spec.default is None else spec.default for spec in COMMON_PARAMETERS}
    return DynamicsModel.build(robot, values | {"gravity": GRAVITY, "base": base}).prepare()


def same_memory(a, b):
    return a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


def state(n, seed):
    rng = np.random.default_rng(seed)
    return (rng.uniform(-0.5, 0.5, n) for _ in range(3))


def test_fixed_base_is_the_library_inverse_dynamics_in_the_models_data():
    robot = rd.load_urdf(DEFAULT_ROBOT)
    m = model(robot)
    m.warm_up()
    q, qd, qdd = state(6, 1)
    first = m.inverse_dynamics(q, qd, qdd)
    expected = rd.inverse_dynamics(robot, q, qd, qdd, gravity=GRAVITY)
    np.testing.assert_allclose(first.torques, expected.torques, **EXACT)
    np.testing.assert_allclose(first.joint_wrenches, expected.joint_wrenches, **EXACT)
    assert first.q is None and first.center_of_mass is None
    second = m.inverse_dynamics(*state(6, 2))
    assert same_memory(first.torques, second.torques)
    np.testing.assert_allclose(m.gravity_torques(q), rd.gravity_torques(robot, q, gravity=GRAVITY), **EXACT)


@pytest.mark.parametrize("base", ["odometry", "free_floating"])
def test_a_moving_base_is_the_library_call_of_its_mode(base):
    robot = rd.load_urdf(SPACE, floating_base=True)
    m = model(robot, base)
    m.warm_up()
    q, qd, qdd = state(7, 3)
    pose = np.array([0.1, -0.2, 0.3, 0.0, 0.0, np.sin(0.2), np.cos(0.2)])
    twist, acceleration = np.array([0.1, 0.0, -0.1, 0.02, 0.01, -0.03]), np.array([0.2, 0.1, 0.0, 0.0, 0.05, 0.1])
    loads = m.inverse_dynamics(q, qd, qdd, BaseMotion(pose, twist, acceleration))
    full = np.concatenate([pose, q])
    np.testing.assert_allclose(loads.center_of_mass, rd.center_of_mass(robot, full), **EXACT)
    if base == "odometry":
        expected = rd.mounted_inverse_dynamics(robot, pose, twist, acceleration, q, qd, qdd, gravity=GRAVITY)
        np.testing.assert_allclose(loads.mounting_wrench, expected.mounting_wrench, **EXACT)
        assert loads.base_acceleration is None
    else:  # the base's acceleration follows from the joints': the given one is not used
        expected = rd.free_floating_inverse_dynamics(robot, full, np.concatenate([twist, qd]), qdd, gravity=GRAVITY)
        np.testing.assert_allclose(loads.base_acceleration, expected.base_acceleration, **EXACT)
        assert loads.mounting_wrench is None
    np.testing.assert_allclose(loads.torques, expected.torques, **EXACT)
    again = m.inverse_dynamics(q, qd, qdd, AT_REST)
    assert same_memory(loads.torques, again.torques)
    zero = np.zeros(6)
    np.testing.assert_allclose(m.gravity_torques(q, pose), rd.mounted_inverse_dynamics(
        robot, pose, zero, zero, q, np.zeros(7), np.zeros(7), gravity=GRAVITY).torques, **EXACT)
