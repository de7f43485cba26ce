"""The ``locked_joints`` parameter over real rclpy: Panda's fingers locked, joint states with the arm alone answered
with the library's numbers for the reduced robot; bad entries refused with the reason, the last good model kept."""
import numpy as np

# first: it skips the module where rclpy is missing
from ros_harness import harness_fixture, wait_for_count

from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import oracle
import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

PANDA = oracle.robot_path("panda_description/urdf/panda.urdf")
ARM = [f"panda_joint{k}" for k in range(1, 8)]

harness_factory = harness_fixture(InverseDynamicsNode)


def test_joint_states_without_the_locked_fingers(harness_factory):
    h = harness_factory(robot_description=PANDA, locked_joints=["panda_finger_joint1 = 0.03"])
    robot = oracle.load_quietly(PANDA).with_locked_joints({"panda_finger_joint1": 0.03})
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    rng = np.random.default_rng(4)
    q, qd = rng.uniform(-1.5, 1.5, 7), rng.uniform(-2.0, 2.0, 7)
    h.publish(JointState, "/joint_states", JointState(name=ARM, position=q.tolist(), velocity=qd.tolist()))
    msg = wait_for_count(h, torques, 1)
    assert list(msg.name) == ARM
    expected = rd.inverse_dynamics(robot, q, qd, np.zeros(7)).torques
    np.testing.assert_allclose(msg.effort, expected, rtol=0.0, atol=1e-12)

    for entries, reason in ((["panda_joint1"], "locked_joints entry 'panda_joint1' is not joint=position"),
                            (["panda_joint1=0", "panda_joint1=1"], "locked_joints names joint 'panda_joint1' twice")):
        result = h.node.set_parameters([Parameter("locked_joints", value=entries)])[0]
        assert not result.successful and reason in result.reason, result.reason
    for entries, reason in ((["panda_finger_joint2=0.03"], "a mimic joint moves with its source "  # when built
                                                           "'panda_finger_joint1'; lock 'panda_finger_joint1'"),
                            (["hand=0.1"], "robot 'panda' has no movable joint of that name")):
        h.refused_build("locked_joints", entries, reason)
    h.publish(JointState, "/joint_states", JointState(name=ARM, position=q.tolist(), velocity=qd.tolist()))
    np.testing.assert_allclose(wait_for_count(h, torques, 2).effort, expected, rtol=0.0, atol=1e-12)

    # the whole arm but joint 7 locked too: states with six joints
    locked = ["panda_finger_joint1=0.03", "panda_joint7=0.5"]
    assert h.set_parameters(Parameter("locked_joints", value=locked)).successful
    h.publish(JointState, "/joint_states", JointState(name=ARM[:6], position=q[:6].tolist(),
                                                      velocity=qd[:6].tolist()))
    msg = wait_for_count(h, torques, 3)
    assert list(msg.name) == ARM[:6]
    expected = rd.inverse_dynamics(robot.with_locked_joints({"panda_joint7": 0.5}), q[:6], qd[:6],
                                          np.zeros(6)).torques
    np.testing.assert_allclose(msg.effort, expected, rtol=0.0, atol=1e-12)


def test_per_joint_arrays_count_the_joints_left(harness_factory):
    """With the fingers locked, a per-joint array has one value per arm joint (7, not 8) and is taken as such."""
    armature = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7]
    h = harness_factory(robot_description=PANDA, locked_joints=["panda_finger_joint1=0.03"], armature=armature)
    robot = oracle.load_quietly(PANDA).with_locked_joints({"panda_finger_joint1": 0.03}).with_drive(armature=armature)
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    q = np.linspace(-1.0, 1.0, 7)
    h.publish(JointState, "/joint_states", JointState(name=ARM, position=q.tolist(), velocity=[0.0] * 7))
    h.settle()
    assert h.node.model is not None and list(h.node.model.robot.armature) == armature
    assert not h.node.refusal
    msg = wait_for_count(h, torques, 1)
    np.testing.assert_allclose(msg.effort, rd.inverse_dynamics(robot, q, np.zeros(7), np.zeros(7)).torques,
                               rtol=0.0, atol=1e-12)


def test_locked_joints_that_move_no_mass_are_not_warned_about(harness_factory):
    """Romeo's hand joints move no mass (massless hands): loaded as they are, the node says so; locked (the usual
    remedy for a gripper driven elsewhere), it does not, and the other model warnings stay."""
    romeo = oracle.robot_path("romeo_description/urdf/romeo.urdf")
    locked = harness_factory(robot_description=romeo, locked_joints=["LHand=0", "RHand=0"])  # first: /rosout keeps
    assert locked.node.model is not None and locked.node.model.robot.dof == 31               # the log for later nodes
    locked.spin_for(0.5)
    assert not locked.warnings("moves no mass"), locked.warnings("moves no mass")
    h = harness_factory(robot_description=romeo)
    assert h.wait_for_warning("joint 'LHand' moves no mass") and h.wait_for_warning("joint 'RHand' moves no mass")
    other = {text for text in h.warnings() if "moves no mass" not in text}
    assert set(locked.warnings()) == other  # the other model warnings stay
