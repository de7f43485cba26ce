"""Force/torque sensors on the inverse_dynamics node (parameter ``external_wrench_topics``) over real rclpy: a sensor's
wrench changes the torques exactly as the library's ``external_wrenches`` (its ``frame_id`` honoured through the
kinematics), a silent sensor is dropped after the timeout and named in diagnostics, bad messages and parameters are
refused with a reason."""
import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import Harness, wait_for_count

from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import WrenchStamped
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

ARM_PATH = rd.bundled_robot_path()
ARM = rd.load_urdf(ARM_PATH)
NAMES = list(ARM.joint_names)
EXACT = dict(rtol=0.0, atol=1e-12)


@pytest.fixture
def harness():
    h = Harness(InverseDynamicsNode, robot_description=ARM_PATH, external_wrench_timeout=0.4,
                external_wrench_topics=["tool_flange=/wrist_ft", "upper_arm_link = /arm_ft"])
    yield h
    h.close()


def joint_state(q, qd, sec):
    msg = JointState(name=NAMES, position=[float(x) for x in q], velocity=[float(x) for x in qd])
    msg.header.stamp.sec = sec
    return msg


def wrench_message(wrench, frame=""):
    msg = WrenchStamped()
    msg.header.frame_id = frame
    f, t = msg.wrench.force, msg.wrench.torque
    f.x, f.y, f.z, t.x, t.y, t.z = (float(x) for x in wrench)
    return msg


def in_link(q, link, frame, wrench):
    """The wrench written in ``frame`` moved to ``link``'s frame, from the two frames' placements."""
    T = np.linalg.inv(rd.frame_placement(ARM, q, link)) @ rd.frame_placement(ARM, q, frame)
    R, p = T[:3, :3], T[:3, 3]
    return np.concatenate([R @ wrench[:3], R @ wrench[3:] + np.cross(p, R @ wrench[:3])])


def test_sensors_change_the_torques_as_the_library(harness):
    h = harness
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    rng = np.random.default_rng(61)
    q, qd = rng.uniform(-1.5, 1.5, (2, 6))
    wrist, arm = rng.uniform(-20, 20, 6), rng.uniform(-20, 20, 6)
    h.publish(WrenchStamped, "/wrist_ft", wrench_message(wrist))
    h.publish(WrenchStamped, "/arm_ft", wrench_message(arm, frame="forearm_link"))  # written in another link's frame
    sensors = h.node.sensors.inputs.sensors
    assert h.spin_until(lambda: all(s.wrench is not None for s in sensors))
    h.publish(JointState, "/joint_states", joint_state(q, qd, 1))
    wait_for_count(h, torques, 1)
    external = {"tool_flange": wrist, "upper_arm_link": in_link(q, "upper_arm_link", "forearm_link", arm)}
    expected = rd.inverse_dynamics(ARM, q, qd, np.zeros(6), external_wrenches=external).torques
    np.testing.assert_allclose(torques[0].effort, expected, **EXACT)
    assert np.abs(expected - rd.inverse_dynamics(ARM, q, qd, np.zeros(6)).torques).max() > 1.0
    # silent sensors drop out after the timeout; the wrist sensor speaks again
    h.spin_for(0.5)
    h.publish(WrenchStamped, "/wrist_ft", wrench_message(wrist))
    assert h.spin_until(lambda: h.node.sensors.inputs.sensors[0].received > sensors[1].received + 0.45)
    h.publish(JointState, "/joint_states", joint_state(q, qd, 2))
    wait_for_count(h, torques, 2)
    expected = rd.inverse_dynamics(ARM, q, qd, np.zeros(6), external_wrenches={"tool_flange": wrist}).torques
    np.testing.assert_allclose(torques[1].effort, expected, **EXACT)
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    assert h.spin_until(lambda: any(v.key == "silent wrench sensors" and v.value == "/arm_ft"
                                    for d in diagnostics for s in d.status for v in s.values))


def test_bad_sensor_messages_and_parameters_are_refused(harness):
    h = harness
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    good = np.array([1.0, -2.0, 3.0, 0.1, 0.2, 0.3])
    h.publish(WrenchStamped, "/wrist_ft", wrench_message(good))
    assert h.spin_until(lambda: h.node.sensors.inputs.sensors[0].wrench is not None)
    for msg, reason in [(wrench_message(good, frame="camera_optical"), "frame_id 'camera_optical' is not a link"),
                        (wrench_message([0.0, np.nan, 0.0, 0.0, 0.0, 0.0]), "is not finite")]:
        h.publish(WrenchStamped, "/wrist_ft", msg)
        assert h.wait_for_warning(reason), h.warnings()
    q, qd = np.full(6, 0.3), np.zeros(6)
    h.publish(JointState, "/joint_states", joint_state(q, qd, 3))
    wait_for_count(h, torques, 1)
    expected = rd.inverse_dynamics(ARM, q, qd, np.zeros(6), external_wrenches={"tool_flange": good}).torques
    np.testing.assert_allclose(torques[0].effort, expected, **EXACT)

    def set_topics(value):
        request = SetParameters.Request(parameters=[Parameter("external_wrench_topics", value=value)
                                                    .to_parameter_msg()])
        result = h.call(SetParameters, "/inverse_dynamics/set_parameters", request).results[0]
        h.settle()
        return result

    result = set_topics(["gripper=/ft"])
    assert not result.successful and "robot 'rne_arm6' has no link 'gripper'" in result.reason
    result = set_topics(["tool_flange"])
    assert not result.successful and "entry 'tool_flange' is not link=topic" in result.reason
    assert set_topics(["wrist_3_link=/other_ft"]).successful
    assert [s.topic for s in h.node.sensors.inputs.sensors] == ["/other_ft"]
