"""``/joint_states`` from two drivers (real rclpy): an arm driver and a gripper driver, as on a Panda with its hand.
The inverse node merges them as robot_state_publisher does: every arm message is answered (once the fingers were
heard) with the library's torques at the merged state; another robot's messages are counted, not warned about;
``joint_state_timeout`` names a joint whose driver went quiet."""
import numpy as np

# first: it skips the module where rclpy is missing
from ros_harness import harness_fixture

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import oracle
import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

PANDA = oracle.robot_path("panda_description/urdf/panda.urdf")
ROBOT = oracle.load_quietly(PANDA)
ARM = [f"panda_joint{k}" for k in range(1, 8)]
FINGERS = ["panda_finger_joint1", "panda_finger_joint2"]  # the second is a mimic joint: not in q
ARM_MESSAGES, GRIPPER_EVERY = 60, 4

harness_factory = harness_fixture(InverseDynamicsNode)


def state(names, q, qd, sec):
    msg = JointState(name=names, position=[float(x) for x in q], velocity=[float(x) for x in qd])
    msg.header.stamp.sec = sec
    return msg


def test_arm_and_gripper_drivers(harness_factory):
    assert list(ROBOT.joint_names) == ARM + FINGERS[:1]
    h = harness_factory(robot_description=PANDA, diagnostics_rate_hz=20.0)
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    rng = np.random.default_rng(7)
    merged_q, merged_qd = np.zeros(8), np.zeros(8)
    expected = {}  # stamp -> torques at the merged state
    arm_stamps = []
    sec = 0
    for k in range(ARM_MESSAGES):
        if k % GRIPPER_EVERY == 1:  # the gripper driver: both fingers (the mimic one too), its own stamps
            sec += 1
            width, speed = rng.uniform(0.0, 0.04), rng.uniform(-0.05, 0.05)
            merged_q[7], merged_qd[7] = width, speed
            h.publish(JointState, "/joint_states", state(FINGERS, [width, width], [speed, speed], sec))
            expected[sec] = rd.inverse_dynamics(ROBOT, merged_q, merged_qd, np.zeros(8)).torques
            assert h.spin_until(lambda: sec in {m.header.stamp.sec for m in torques})
        sec += 1
        q, qd = rng.uniform(-1.0, 1.0, 7), rng.uniform(-0.5, 0.5, 7)
        merged_q[:7], merged_qd[:7] = q, qd
        h.publish(JointState, "/joint_states", state(ARM, q, qd, sec))
        arm_stamps.append(sec)
        if k > 0:  # the first arm message comes before any finger: not answered
            expected[sec] = rd.inverse_dynamics(ROBOT, merged_q, merged_qd, np.zeros(8)).torques
            assert h.spin_until(lambda: sec in {m.header.stamp.sec for m in torques})
        if k == ARM_MESSAGES // 2:  # another robot's joints on the same topic
            h.publish(JointState, "/joint_states", state(["pan", "tilt"], [0.1, 0.2], [0.0, 0.0], 10_000))

    answered = {m.header.stamp.sec: m for m in torques}
    arm_answered = [s for s in arm_stamps if s in answered]
    assert len(answered) == len(expected) and len(arm_answered) >= 0.95 * ARM_MESSAGES
    for stamp, tau in expected.items():
        assert list(answered[stamp].name) == ARM + FINGERS[:1]
        np.testing.assert_allclose(answered[stamp].effort, tau, rtol=0.0, atol=1e-12)
    assert h.node.joint_states.foreign == 1
    assert not h.warnings("tilt")  # counted, not warned about
    assert len(h.warnings("missing joints panda_finger_joint1")) == 1  # the first arm message only

    # a diagnostics window of merged traffic: OK
    count = len(diagnostics)
    for k in range(5):
        sec += 1
        h.publish(JointState, "/joint_states", state(ARM, np.zeros(7), np.zeros(7), sec))
        h.spin_for(0.05)
    h.spin_until(lambda: len(diagnostics) > count + 2)
    status = diagnostics[-2].status[0]
    assert status.level == DiagnosticStatus.OK, status.message
    values = {v.key: v.value for v in status.values}
    assert values["joint states without model joints"] == "1"

    # the gripper driver stops: with joint_state_timeout its joint is named
    assert h.set_parameters(Parameter("joint_state_timeout", value=0.3)).successful
    h.spin_for(0.5)
    sec += 1
    h.publish(JointState, "/joint_states", state(ARM, np.zeros(7), np.zeros(7), sec))
    assert h.wait_for_warning("no value for over 0.3 s of joints panda_finger_joint1"), h.warnings()
    assert not h.warnings("panda_joint1 ")
    assert h.spin_until(lambda: diagnostics[-1].status[0].level == DiagnosticStatus.WARN
                        and "panda_finger_joint1" in diagnostics[-1].status[0].message)
