"""The inverse_dynamics node with a moving base (parameter ``base``) over real rclpy: odometry + IMU + joint states
in, torques, base wrench and centre of mass out equal the library's; a stale or missing base state publishes
nothing and warns; bad base messages are refused with a reason and the last good one kept; free-floating mode
publishes the base acceleration; switching ``base`` at run time reloads the robot with a floating base."""
import math

import numpy as np

# first: it skips the module where rclpy is missing
from ros_harness import Harness, harness_fixture, wait_for_count

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import AccelStamped, PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from visualization_msgs.msg import Marker
from sensor_msgs.msg import Imu, JointState

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

MOBILE, SPACE = rd.bundled_robot_path("rne_mobile_manipulator"), rd.bundled_robot_path("rne_space_robot")
ROBOT = rd.load_urdf(MOBILE, floating_base=True)
NAMES = list(ROBOT.joint_names)
EXACT = dict(rtol=0.0, atol=1e-12)
GRAVITY = np.array([0.0, 0.0, -9.81])


harness_factory = harness_fixture(InverseDynamicsNode)


def stamped(msg, t):
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(t), round(t % 1 * 1e9)
    return msg


def seconds(t):
    """``t`` as the node reads it back from a stamp."""
    return int(t) + 1e-9 * round(t % 1 * 1e9)


def filtered_derivative(cutoff, t0, x0, t1, x1):
    """The node's filtered derivative after two measurements (it starts at 0)."""
    dt, T = seconds(t1) - seconds(t0), 1.0 / (2.0 * math.pi * cutoff)
    return 0.0 + dt / (dt + T) * ((x1 - x0) / dt - 0.0)


def joint_state(names, q, qd, t):
    return stamped(JointState(name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in qd]), t)


def odometry(pose, twist, t, child="base_link"):
    msg = Odometry(child_frame_id=child)
    msg.header.frame_id = "odom"
    p, o = msg.pose.pose.position, msg.pose.pose.orientation
    p.x, p.y, p.z, o.x, o.y, o.z, o.w = (float(x) for x in pose)
    v, w = msg.twist.twist.linear, msg.twist.twist.angular
    v.x, v.y, v.z, w.x, w.y, w.z = (float(x) for x in twist)
    return stamped(msg, t)


def imu(force, angular, t, frame="base_link"):
    msg = Imu()
    msg.header.frame_id = frame
    msg.linear_acceleration.x, msg.linear_acceleration.y, msg.linear_acceleration.z = (float(x) for x in force)
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (float(x) for x in angular)
    return stamped(msg, t)


def wrench_of(msg):
    w = msg.wrench
    return [w.force.x, w.force.y, w.force.z, w.torque.x, w.torque.y, w.torque.z]


def rotation(quaternion):
    return rd.frame_placement(ROBOT, np.concatenate([[0.0, 0.0, 0.0], quaternion, np.zeros(6)]), "base_link")[:3, :3]


def base_scene(seed):
    rng = np.random.default_rng(seed)
    quaternion = rng.normal(size=4)
    pose = np.concatenate([rng.uniform(-2, 2, 3), quaternion / np.linalg.norm(quaternion)])
    return pose, rng.uniform(-1, 1, 6), rng.uniform(-3, 3, 3), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2, 6))


def test_odometry_and_imu_give_the_library_numbers(harness_factory):
    """Two IMU messages (the angular acceleration is their filtered difference), odometry, joint states: torques,
    base (mounting) wrench, centre of mass and the joint wrenches are the library's for that base motion."""
    cutoff, gravity = 15.0, np.array([0.2, -0.1, -9.8])
    h = harness_factory(robot_description=MOBILE, base="odometry", base_acceleration_cutoff_hz=cutoff,
                        gravity=gravity.tolist(), base_stamp_tolerance=0.01)
    assert h.node.model.robot.has_floating_base
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    base_wrench = h.collect(WrenchStamped, "/inverse_dynamics/base_wrench")
    com = h.collect(PointStamped, "/inverse_dynamics/center_of_mass")
    com_marker = h.collect(Marker, "/inverse_dynamics/center_of_mass_marker")
    elbow = h.collect(WrenchStamped, "/inverse_dynamics/joint_wrenches/elbow_joint")
    pose, twist, force, angular, (q, qd) = base_scene(51)
    h.publish(Imu, "/inverse_dynamics/base_imu", imu(force, angular[0], 5.0))
    h.publish(Odometry, "/inverse_dynamics/base_odometry", odometry(pose, twist, 5.01))
    h.publish(Imu, "/inverse_dynamics/base_imu", imu(force, angular[1], 5.012))
    h.spin_until(lambda: h.node.base.state.imu is not None and h.node.base.state.imu[0] > 5.011)
    h.publish(JointState, "/joint_states", joint_state(NAMES, q, qd, 5.015))
    for received in (torques, base_wrench, com, com_marker, elbow):
        wait_for_count(h, received, 1)
    angular_acceleration = filtered_derivative(cutoff, 5.0, angular[0], 5.012, angular[1])
    linear = force + rotation(pose[3:]).T @ gravity - np.cross(twist[3:], twist[:3])
    acceleration = np.concatenate([linear, angular_acceleration])
    expected = rd.mounted_inverse_dynamics(ROBOT, pose, twist, acceleration, q, qd, np.zeros(6), gravity=gravity)
    assert torques[0].name == NAMES and torques[0].header.stamp.sec == 5
    np.testing.assert_allclose(torques[0].effort, expected.torques, **EXACT)
    assert base_wrench[0].header.frame_id == "base_link"
    np.testing.assert_allclose(wrench_of(base_wrench[0]), expected.mounting_wrench, **EXACT)
    np.testing.assert_allclose(wrench_of(elbow[0]), expected.joint_wrenches[2], **EXACT)
    assert com[0].header.frame_id == "odom"
    np.testing.assert_allclose([com[0].point.x, com[0].point.y, com[0].point.z],
                               rd.center_of_mass(ROBOT, np.concatenate([pose, q])), **EXACT)
    marker = com_marker[0]
    assert marker.header.frame_id == "odom" and marker.type == Marker.SPHERE
    assert [marker.pose.position.x, marker.pose.position.y, marker.pose.position.z] == [com[0].point.x, com[0].point.y,
                                                                                         com[0].point.z]
    assert np.abs(expected.torques - rd.mounted_inverse_dynamics(ROBOT, pose, np.zeros(6), np.zeros(6), q, qd,
                                                                 np.zeros(6), gravity=gravity).torques).max() > 0.1


def test_differentiated_odometry_and_stale_base_state(harness_factory):
    """``base_acceleration_source: differentiate``: the filtered derivative of the odometry twist; a joint state
    too far from the last odometry, or before any, publishes nothing and diagnostics warn with the reason."""
    h = harness_factory(robot_description=MOBILE, base="odometry", base_acceleration_source="differentiate",
                        base_acceleration_cutoff_hz=10.0, base_stamp_tolerance=0.05)
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    pose, twist, _, _, (q, qd) = base_scene(52)
    h.publish(JointState, "/joint_states", joint_state(NAMES, q, qd, 7.0))
    assert h.wait_for_warning("no base state: nothing received on ~/base_odometry yet")
    h.publish(Odometry, "/inverse_dynamics/base_odometry", odometry(pose, twist, 7.0))
    later = twist + np.array([0.3, -0.2, 0.1, 0.05, -0.04, 0.2])
    h.publish(Odometry, "/inverse_dynamics/base_odometry", odometry(pose, later, 7.02))
    h.spin_until(lambda: h.node.base.state.odometry is not None and h.node.base.state.odometry[0] > 7.01)
    h.publish(JointState, "/joint_states", joint_state(NAMES, q, qd, 7.5))  # 0.48 s after: stale
    assert h.wait_for_warning("stale base state: the last ~/base_odometry is -0.480 s from the joint state")
    h.publish(JointState, "/joint_states", joint_state(NAMES, q, qd, 7.03))
    wait_for_count(h, torques, 1)
    h.spin_for(0.1)
    assert len(torques) == 1 and torques[0].header.stamp.nanosec == round(0.03 * 1e9)
    acceleration = filtered_derivative(10.0, 7.0, twist, 7.02, later)
    expected = rd.mounted_inverse_dynamics(ROBOT, pose, later, acceleration, q, qd, np.zeros(6))
    np.testing.assert_allclose(torques[0].effort, expected.torques, **EXACT)
    assert h.spin_until(lambda: any(s.level == DiagnosticStatus.WARN and "stale base state" in s.message
                                    for d in diagnostics for s in d.status))


def test_bad_base_messages_are_refused_and_the_last_good_kept(harness_factory):
    h = harness_factory(robot_description=MOBILE, base="odometry", base_stamp_tolerance=1.0)
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    pose, twist, force, _, (q, qd) = base_scene(53)
    h.publish(Odometry, "/inverse_dynamics/base_odometry", odometry(pose, twist, 3.0))
    h.publish(Imu, "/inverse_dynamics/base_imu", imu(force, np.zeros(3), 3.0))
    h.spin_until(lambda: h.node.base.state.imu is not None)
    bad_pose = pose.copy()
    bad_pose[3:] *= 1.01
    for topic, msg_type, msg, reason in [
            ("base_odometry", Odometry, odometry(bad_pose, twist, 3.1), "has norm 1.01, not a unit quaternion"),
            ("base_odometry", Odometry, odometry(pose, twist, 3.1, child="arm_base_link"),
             "child_frame_id 'arm_base_link' is not the base link 'base_link'"),
            ("base_imu", Imu, imu([0.0, np.nan, 9.8], np.zeros(3), 3.1), "is not finite"),
            ("base_imu", Imu, imu(force, np.zeros(3), 3.1, frame="elbow"), "frame_id 'elbow' is not the base link")]:
        h.publish(msg_type, f"/inverse_dynamics/{topic}", msg)
        assert h.wait_for_warning(reason), h.warnings()
    h.publish(JointState, "/joint_states", joint_state(NAMES, q, qd, 3.2))
    wait_for_count(h, torques, 1)
    linear = force + rotation(pose[3:]).T @ GRAVITY - np.cross(twist[3:], twist[:3])
    expected = rd.mounted_inverse_dynamics(ROBOT, pose, twist, np.concatenate([linear, np.zeros(3)]), q, qd,
                                           np.zeros(6))
    np.testing.assert_allclose(torques[0].effort, expected.torques, **EXACT)
    assert h.node.stats.total_rejected == 4


def test_free_floating_publishes_the_base_acceleration(harness_factory):
    """The space robot in zero gravity: at rest at the origin until odometry arrives, then from its state."""
    robot = rd.load_urdf(SPACE, floating_base=True)
    names = list(robot.joint_names)
    h = harness_factory(robot_description=SPACE, base="free_floating", gravity=[0.0, 0.0, 0.0],
                        acceleration_source="differentiate", acceleration_cutoff_hz=5.0)
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    accelerations = h.collect(AccelStamped, "/inverse_dynamics/base_acceleration")
    com = h.collect(PointStamped, "/inverse_dynamics/center_of_mass")
    rng = np.random.default_rng(54)
    q, qd0, qd1 = rng.uniform(-1, 1, (3, 7))
    h.publish(JointState, "/joint_states", joint_state(names, q, qd0, 9.0))
    h.publish(JointState, "/joint_states", joint_state(names, q, qd1, 9.1))
    wait_for_count(h, accelerations, 2)
    wait_for_count(h, com, 2)
    qdd = filtered_derivative(5.0, 9.0, qd0, 9.1, qd1)
    at_rest = np.concatenate([[0, 0, 0, 0, 0, 0, 1.0], q])
    expected = rd.free_floating_inverse_dynamics(robot, at_rest, np.concatenate([np.zeros(6), qd1]), qdd,
                                                 gravity=np.zeros(3))
    np.testing.assert_allclose(torques[1].effort, expected.torques, **EXACT)
    a = accelerations[1].accel
    np.testing.assert_allclose([a.linear.x, a.linear.y, a.linear.z, a.angular.x, a.angular.y, a.angular.z],
                               expected.base_acceleration, **EXACT)
    assert accelerations[1].header.frame_id == "satellite" and np.abs(expected.base_acceleration).max() > 1e-3
    pose, twist = np.array([1.0, 2.0, 3.0, 0.0, 0.6, 0.0, 0.8]), rng.uniform(-0.2, 0.2, 6)
    h.publish(Odometry, "/inverse_dynamics/base_odometry", odometry(pose, twist, 9.2, child="satellite"))
    h.spin_until(lambda: h.node.base.state.odometry is not None)
    h.publish(JointState, "/joint_states", joint_state(names, q, qd1, 9.2))
    wait_for_count(h, accelerations, 3)
    wait_for_count(h, com, 3)
    expected = rd.free_floating_inverse_dynamics(robot, np.concatenate([pose, q]), np.concatenate([twist, qd1]),
                                                 h.node.accelerations.derivative.qdd, gravity=np.zeros(3))
    np.testing.assert_allclose(torques[2].effort, expected.torques, **EXACT)
    np.testing.assert_allclose([com[2].point.x, com[2].point.y, com[2].point.z],
                               rd.center_of_mass(robot, np.concatenate([pose, q])), **EXACT)


def test_base_parameter_at_run_time(harness_factory):
    """Fixed -> odometry reloads the robot with a floating base; a bad mode is refused with the reason; a floating
    robot with base fixed is refused as before; trajectories are refused with a moving base."""
    h = harness_factory(robot_description=MOBILE)
    assert not h.node.model.robot.has_floating_base
    client = "/inverse_dynamics/set_parameters"

    def set_parameter(name, value):
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        result = h.call(SetParameters, client, request).results[0]
        h.settle()
        return result

    result = set_parameter("base", "wheeled")
    assert not result.successful and "base must be one of fixed, odometry, free_floating" in result.reason
    assert set_parameter("base", "odometry").successful
    assert h.node.model.robot.has_floating_base and h.node.model.robot.nv == 12
    assert h.node.base.state is not None and h.node.base.state.mode == "odometry"
    from trajectory_msgs.msg import JointTrajectory
    h.publish(JointTrajectory, "/inverse_dynamics/trajectory", JointTrajectory(joint_names=NAMES))
    assert h.wait_for_warning("trajectory points carry no base motion")
    assert set_parameter("base", "fixed").successful
    assert not h.node.model.robot.has_floating_base and h.node.base.state is None
    free_joint = ('<robot name="drifter"><link name="world"/><link name="body"><inertial><mass value="1"/><inertia '
                  'ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link><joint name="free" '
                  'type="floating"><parent link="world"/><child link="body"/></joint></robot>')
    assert set_parameter("robot_description", free_joint).successful  # refused when built:
    assert "has a floating joint 'free'" in h.node.refusal
    assert "a floating base only when parameter 'base' says how it moves" in h.node.refusal
    assert h.node.get_parameter("robot_description").value == MOBILE
    assert h.node.model.robot.name == "rne_mobile_manipulator"


def test_forward_node_simulates_a_free_floating_space_robot():
    """``base: free_floating`` with ``simulate``: constant joint efforts in zero gravity turn and move the satellite
    (its state on ``~/base_odometry``), while the momentum of the published states stays 0 (RK4 at 500 Hz)."""
    from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
    robot = rd.load_urdf(SPACE, floating_base=True)
    h = Harness(ForwardDynamicsNode, robot_description=SPACE, base="free_floating", simulate=True, rate_hz=500.0,
                gravity=[0.0, 0.0, 0.0], initial_positions=[0.0, 0.8, 0.0, 1.2, 0.5, 0.0, 0.0])
    try:
        states = h.collect(JointState, "/joint_states")
        bases = h.collect(Odometry, "/forward_dynamics/base_odometry")
        efforts = [4.0, -15.0, 1.0, 8.0, -0.5, 0.1, 0.02]  # the joints stay far from their limits (stops)
        h.publish(JointState, "/forward_dynamics/effort_command", JointState(name=list(robot.joint_names),
                                                                             effort=efforts))
        assert h.spin_until(lambda: len(states) > 5 and states[-1].effort.tolist() == efforts)
        first = len(states)
        # long in plain Python or on a loaded machine with empty caches (CI at load 10: over 90 s): a step of this
        # robot's generic kernel's Python costs tens of ms until its written code's machine code is built
        assert h.spin_until_count(states, first + 201)
        by_stamp = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in bases}
        momentum, arm = [], []
        for msg in states[first:]:
            base = by_stamp.get((msg.header.stamp.sec, msg.header.stamp.nanosec))
            if base is None:
                continue
            p, o = base.pose.pose.position, base.pose.pose.orientation
            v, w = base.twist.twist.linear, base.twist.twist.angular
            q = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w] + list(msg.position))
            qd = np.array([v.x, v.y, v.z, w.x, w.y, w.z] + list(msg.velocity))
            momentum.append(rd.centroidal_momentum(robot, q, qd))
            arm.append(rd.centroidal_momentum_matrix(robot, q)[:, 6:] @ qd[6:])
        assert len(momentum) > 150 and np.abs(q[7:]).max() < 3.0
        scale = np.abs(arm).max()
        assert scale > 1.0  # the arm's own momentum, which the base's cancels
        assert np.abs(momentum).max() < 1e-9 * scale
        turn = 2 * np.degrees(np.arccos(min(1.0, abs(q[6]))))
        assert turn > 0.1 and np.linalg.norm(q[:3]) > 1e-4  # the satellite turned and moved
    finally:
        h.close()


BASE_TOPIC_NAMES = ("base_odometry", "base_imu", "base_wrench", "base_acceleration", "center_of_mass",
                    "center_of_mass_marker")


def base_topics(h):
    """``(subscribed, published)``: the node's base topics as the ROS graph lists them."""
    def names(listing):
        return {name.rsplit("/", 1)[1] for name, _ in listing if name.rsplit("/", 1)[1] in BASE_TOPIC_NAMES}
    return (names(h.probe.get_subscriber_names_and_types_by_node("inverse_dynamics", "/")),
            names(h.probe.get_publisher_names_and_types_by_node("inverse_dynamics", "/")))


def test_only_the_base_topics_the_configuration_uses(harness_factory):
    h = harness_factory(robot_description=MOBILE)
    expected = {
        ("fixed", "imu"): (set(), set()),
        ("odometry", "imu"): ({"base_odometry", "base_imu"}, {"base_wrench", "center_of_mass",
                                                             "center_of_mass_marker"}),
        ("odometry", "differentiate"): ({"base_odometry"}, {"base_wrench", "center_of_mass",
                                                            "center_of_mass_marker"}),
        ("free_floating", "differentiate"): ({"base_odometry"}, {"base_acceleration", "center_of_mass",
                                                                 "center_of_mass_marker"}),
    }
    for (mode, source), topics in list(expected.items()) + [(("fixed", "imu"), (set(), set()))]:
        assert h.set_parameters(Parameter("base", value=mode),
                                Parameter("base_acceleration_source", value=source)).successful
        assert h.spin_until(lambda: base_topics(h) == topics), (mode, source, base_topics(h))
