"""A robot pickles after the algorithms have run on it (the nodes build their models in another process), without
its caches, and computes the same numbers after the trip."""
import pickle

import numpy as np

import oracle
import rne_dynamics as rd


def test_a_used_robot_pickles_and_computes_the_same():
    robot = oracle.load_quietly(oracle.robot_path("panda_description/urdf/panda.urdf")).with_locked_joints(
        {"panda_finger_joint1": 0.03})  # locking runs the kinematics on the robot
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, robot.dof) for _ in range(3))
    expected = rd.inverse_dynamics(robot, q, qd, qdd).torques
    assert robot.workspace_shapes  # the algorithms' caches are filled
    copy = pickle.loads(pickle.dumps(robot))
    assert "workspace_shapes" not in vars(copy)
    np.testing.assert_array_equal(rd.inverse_dynamics(copy, q, qd, qdd).torques, expected)
    assert copy.joint_names == robot.joint_names and copy.locked_joints == robot.locked_joints
