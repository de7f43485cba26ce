"""The inverse_dynamics node's momentum observer over real rclpy: ``~/external_torques`` equals the library's
``MomentumObserver`` fed the same joint states (1e-9), ``~/estimated_wrench`` finds the wrench on the tool, a
collision is a diagnostics WARN, joint states without effort publish nothing and say why, bad settings are
refused and the last good ones kept."""
import numpy as np
import pytest
import yaml

# first: it skips the module where rclpy is missing
from ros_harness import Harness, wait_for_count

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.tools.identify import node_parameters

ROBOT = rd.load_urdf(rd.bundled_robot_path())
NAMES = list(ROBOT.joint_names)
LINK = "tool_flange"
WRENCH = np.array([15.0, -8.0, 25.0, 1.2, -0.7, 0.9])
GAIN, DT = 60.0, 2e-3


def motion(n):
    """``n`` joint states every ``DT`` s along a smooth motion, the measured efforts those of the arm pushed by
    ``WRENCH`` on the tool from the 20th sample on: ``(stamps in ns, q, qd, tau)``."""
    t = np.arange(n) * DT
    w = 2 * np.pi * np.array([0.5, 0.4, 0.6, 0.7, 0.8, 0.9])
    home = np.array([0.2, -1.1, 1.2, -1.3, -1.4, 0.3])
    q = home + 0.3 * np.sin(np.outer(t, w))
    qd, qdd = 0.3 * w * np.cos(np.outer(t, w)), -0.3 * w * w * np.sin(np.outer(t, w))
    tau = rd.inverse_dynamics(ROBOT, q, qd, qdd).torques
    pushed = rd.inverse_dynamics(ROBOT, q, qd, qdd, external_wrenches={LINK: WRENCH}).torques
    tau[20:] = pushed[20:]
    return 5_000_000_000 + np.arange(n) * int(DT * 1e9), q, qd, tau


def joint_state(stamp, q, qd, tau=None):
    msg = JointState(name=NAMES, position=q.tolist(), velocity=qd.tolist(), effort=[] if tau is None else tau.tolist())
    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(int(stamp), 1_000_000_000)
    return msg


@pytest.fixture
def harness():
    made = []

    def make(**parameters):
        made.append(Harness(InverseDynamicsNode, robot_description=rd.bundled_robot_path(), **parameters))
        return made[-1]
    yield make
    for h in made:
        h.close()


def test_external_torques_equal_the_library(harness):
    h = harness(observer_gain=GAIN, observer_wrench_link=LINK)
    torques = h.collect(JointState, "/inverse_dynamics/external_torques")
    wrenches = h.collect(WrenchStamped, "/inverse_dynamics/estimated_wrench")
    stamps, q, qd, tau = motion(150)
    observer = rd.MomentumObserver(ROBOT, GAIN)
    expected = []
    for k in range(len(stamps)):
        estimate = observer.update(q[k], qd[k], tau[k], (stamps[k] - stamps[k - 1]) * 1e-9 if k else 0.0).copy()
        h.publish(JointState, "/joint_states", joint_state(stamps[k], q[k], qd[k], tau[k]))
        if k:  # the first joint state only starts the observer
            expected.append(estimate)
            wait_for_count(h, torques, k)
    assert len(torques) == len(expected) == 149
    for msg, stamp, value in zip(torques, stamps[1:], expected):
        assert msg.name == NAMES and msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec == stamp
        np.testing.assert_allclose(msg.effort, value, rtol=0, atol=1e-9)
    assert np.abs(expected[15]).max() < 1e-3      # before the push
    true = rd.inverse_dynamics(ROBOT, q[-1], qd[-1], np.zeros(6)).torques - rd.inverse_dynamics(
        ROBOT, q[-1], qd[-1], np.zeros(6), external_wrenches={LINK: WRENCH}).torques
    np.testing.assert_allclose(expected[-1], true, atol=0.02 * np.abs(true).max())  # 130 samples = 15.6/GAIN
    wait_for_count(h, wrenches, 149)
    w = wrenches[-1].wrench
    assert wrenches[-1].header.frame_id == LINK
    np.testing.assert_allclose([w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z], WRENCH,
                               atol=0.03 * np.abs(WRENCH).max())


def statuses(h):
    return h.collect(DiagnosticArray, "/diagnostics")


def test_collision_warns_and_missing_effort_is_said(harness):
    h = harness(observer_gain=GAIN, observer_thresholds=[5.0], diagnostics_rate_hz=20.0)
    diagnostics = statuses(h)
    torques = h.collect(JointState, "/inverse_dynamics/external_torques")
    stamps, q, qd, tau = motion(80)
    for k in range(len(stamps)):
        h.publish(JointState, "/joint_states", joint_state(stamps[k], q[k], qd[k], tau[k]))
        if k:
            wait_for_count(h, torques, k)
    assert np.abs(torques[-1].effort).max() > 5.0

    def warned(text):
        return any(s.level == DiagnosticStatus.WARN and text in s.message for a in diagnostics for s in a.status)
    assert h.spin_until(lambda: warned("collision: external torque above observer_thresholds on"))
    count = len(torques)
    h.publish(JointState, "/joint_states", joint_state(stamps[-1] + 10**7, q[-1], qd[-1]))
    assert h.spin_until(lambda: warned("/joint_states carry no effort"))
    assert h.wait_for_warning("carry no effort")
    h.spin_for(0.2)
    assert len(torques) == count


def test_bad_observer_settings_are_refused(harness):
    h = harness(observer_gain=GAIN)
    for name, value, reason in (("observer_gain", -1.0, ""), ("observer_gain", float("nan"), ""),
                                ("observer_thresholds", [1.0, 2.0], "observer_thresholds has 2 values"),
                                ("observer_thresholds", [-1.0], "observer_thresholds must be finite and >= 0"),
                                ("observer_wrench_link", "nowhere", "has no link 'nowhere'")):
        result = h.node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful and reason in result.reason, (name, result.reason)
    assert h.node.get_parameter("observer_gain").value == GAIN
    assert h.node.external.observer is not None and h.node.external.observer.gain[0] == GAIN
    assert h.set_parameters(Parameter("observer_gain", value=0.0)).successful
    assert h.node.external.observer is None


def test_identified_parameters_file_loads_into_the_node(tmp_path):
    """``identify``'s parameters.yaml, given with --params-file, sets the payload and friction of the node's model."""
    payload = rd.PayloadEstimate(LINK, 1.7, np.array([0.01, 0.0, 0.04]), np.array([0.003, 0, 0, 0.004, 0, 0.002]),
                                 0.01, np.zeros(3), np.zeros(6), False)
    friction = {j: rd.FrictionEstimate(0.1 * k + 0.2, 0.3 * k + 0.5, 0.0, 0.0) for k, j in enumerate(NAMES)}
    result = rd.Identification(payload, friction, None, None, None, None, None)
    path = tmp_path / "parameters.yaml"
    path.write_text(yaml.safe_dump(node_parameters(ROBOT, result)))
    h = Harness(InverseDynamicsNode, init_args=["--ros-args", "--params-file", str(path)],
                robot_description=rd.bundled_robot_path())
    try:
        expected = ROBOT.with_payload(LINK, 1.7, payload.com, payload.inertia).with_drive(
            damping=[f.viscous for f in friction.values()], friction=[f.coulomb for f in friction.values()])
        robot = h.node.model.robot
        np.testing.assert_allclose(rd.inertial_parameters(robot), rd.inertial_parameters(expected), atol=1e-15)
        np.testing.assert_allclose(robot.damping, expected.damping, atol=0)
        np.testing.assert_allclose(robot.friction, expected.friction, atol=0)
        assert not np.allclose(rd.inertial_parameters(robot), rd.inertial_parameters(ROBOT))
    finally:
        h.close()


def test_efforts_from_a_separate_topic(harness):
    """``observer_effort_topic``: the latest efforts on that topic with each joint state (here sent just before it);
    the same numbers as the library. A bad topic name is refused."""
    h = harness(observer_gain=GAIN, observer_effort_topic="/arm/commanded_effort")
    torques = h.collect(JointState, "/inverse_dynamics/external_torques")
    stamps, q, qd, tau = motion(40)
    observer = rd.MomentumObserver(ROBOT, GAIN)
    for k in range(len(stamps)):
        expected = observer.update(q[k], qd[k], tau[k], (stamps[k] - stamps[k - 1]) * 1e-9 if k else 0.0)
        h.publish(JointState, "/arm/commanded_effort", JointState(name=NAMES[::-1], effort=tau[k][::-1].tolist()))
        assert h.spin_until(lambda: h.node.external.latest_effort is not None
                            and list(h.node.external.latest_effort.effort) == tau[k][::-1].tolist())
        h.publish(JointState, "/joint_states", joint_state(stamps[k], q[k], qd[k]))  # no effort of its own
        if k:
            np.testing.assert_allclose(wait_for_count(h, torques, k).effort, expected, rtol=0, atol=1e-9)
    result = h.node.set_parameters([Parameter("observer_effort_topic", value="not a topic")])[0]
    assert not result.successful and "observer_effort_topic" in result.reason
