"""The inverse-dynamics node on a closed chain (parameter ``loops_file``), over real rclpy: actuated joints in,
every tree joint out on ``~/torques`` (solved positions and velocities, actuated torques, passive 0), the cut
wrenches on ``~/loop_wrenches/<loop>`` equal to the library's; a bad loop file is refused with the model kept; a
pose the loop cannot reach is rejected and the node goes on."""
import warnings

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from rclpy.parameter import Parameter
from ros_harness import Harness, wait_for_count
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.nodes.markers import FORCE_SCALE

FIVE_BAR = rd.five_bar()


@pytest.fixture
def node(tmp_path):
    urdf, loops = tmp_path / "five_bar.urdf", tmp_path / "five_bar.yaml"
    urdf.write_text(FIVE_BAR.urdf)
    loops.write_text(FIVE_BAR.loops_yaml())
    harness = Harness(InverseDynamicsNode, robot_description=str(urdf), loops_file=str(loops), marker_rate_hz=1000.0)
    yield harness, tmp_path
    harness.close()


def message(names, position, velocity, sec):
    msg = JointState(name=list(names), position=[float(x) for x in position], velocity=[float(x) for x in velocity])
    msg.header.stamp.sec = sec
    return msg


def test_closed_chain_outputs_equal_the_library(node):
    h, tmp_path = node
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = FIVE_BAR.load()
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    tip = h.collect(WrenchStamped, "/inverse_dynamics/loop_wrenches/tip")
    markers = h.collect(MarkerArray, "/inverse_dynamics/load_markers")
    qa, qda = np.array([0.1, -0.05]), np.array([0.5, -0.3])
    h.publish(JointState, "/joint_states", message(["motor_right", "motor_left"], qa[::-1], qda[::-1], sec=7))
    msg = wait_for_count(h, torques, 1)
    wrench = wait_for_count(h, tip, 1)
    expected = rd.closed_loop_inverse_dynamics(robot, qa, qda, np.zeros(2))
    assert list(msg.name) == list(robot.joint_names) and msg.header.stamp.sec == 7
    np.testing.assert_allclose(msg.position, expected.q, atol=1e-10)
    np.testing.assert_allclose(msg.velocity, expected.qd, atol=1e-10)
    effort = np.zeros(4)
    effort[[robot.joint_names.index(j) for j in robot.actuated_joint_names]] = expected.torques
    np.testing.assert_allclose(msg.effort, effort, atol=1e-9)
    assert wrench.header.frame_id == "distal_right" and wrench.header.stamp.sec == 7
    w = wrench.wrench
    np.testing.assert_allclose([w.force.x, w.force.y], expected.loop_wrenches["tip"][:2], atol=1e-9)
    np.testing.assert_allclose(w.torque.z, expected.loop_wrenches["tip"][5], atol=1e-9)
    (arrow,) = [m for m in wait_for_count(h, markers, 1).markers if m.ns == "loop_force"]
    start, end = ([p.x, p.y, p.z] for p in arrow.points)
    closure = robot.loops.closure("tip")
    assert arrow.header.frame_id == "distal_right"
    np.testing.assert_allclose(start, closure.p_b, atol=1e-12)
    np.testing.assert_allclose(np.subtract(end, start), FORCE_SCALE * closure.R_b @ expected.loop_wrenches["tip"][:3],
                               atol=1e-9)

    # a trajectory of the actuated joints gets their closed-loop efforts
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    answers = h.collect(JointTrajectory, "/inverse_dynamics/trajectory_with_efforts")
    points = [JointTrajectoryPoint(positions=[0.1, -0.05], velocities=[0.5, -0.3], accelerations=[1.0, 2.0]),
              JointTrajectoryPoint(positions=[0.0, 0.0])]
    h.publish(JointTrajectory, "/inverse_dynamics/trajectory",
              JointTrajectory(joint_names=["motor_left", "motor_right"], points=points))
    answer = wait_for_count(h, answers, 1)
    for point, (qa_k, qda_k, qdda_k) in zip(answer.points, [(qa, qda, [1.0, 2.0]), ([0, 0], [0, 0], [0, 0])]):
        np.testing.assert_allclose(point.effort, rd.closed_loop_inverse_dynamics(robot, qa_k, qda_k, qdda_k).torques,
                                   atol=1e-9)
    # a bad loop file is refused, the model kept
    model = h.node.model
    bad = tmp_path / "bad.yaml"
    bad.write_text("actuated: [motor_left, motor_right]\nloops:\n  - {name: tip, kind: point, link_a: nowhere, "
                   "link_b: distal_right}\n")
    h.refused_build("loops_file", str(bad), "loop 'tip': link_a 'nowhere' is not a link")
    assert h.node.model is model
    # a pose the loop cannot reach is rejected; the next good message is computed
    h.publish(JointState, "/joint_states", message(["motor_left", "motor_right"], [1.5, -1.5], [0, 0], sec=8))
    assert h.wait_for_warning("loop 'tip' of 'five_bar' cannot close")
    h.publish(JointState, "/joint_states", message(["motor_left", "motor_right"], qa, qda, sec=9))
    h.spin_until(lambda: len(torques) >= 2)
    assert [m.header.stamp.sec for m in torques] == [7, 9]
    np.testing.assert_allclose(torques[1].effort, effort, atol=1e-9)


def test_gough_stewart_demo_drives_the_inverse_dynamics_node():
    """The demo moves the bundled platform's legs; the node solves the passive joints (the platform lands on the
    demo's pose) and publishes the library's leg forces."""
    from rne_dynamics.nodes.gough_stewart_demo import GoughStewartDemo
    from rne_dynamics.robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS
    robot = rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)
    h = Harness(InverseDynamicsNode, robot_description=GOUGH_STEWART, loops_file=GOUGH_STEWART_LOOPS)
    try:
        demo = GoughStewartDemo(context=h.context, parameter_overrides=[Parameter("rate_hz", value=20.0),
                                                                        Parameter("amplitude", value=0.08)])
        h.executor.add_node(demo)
        legs = h.collect(JointState, "/joint_states")
        torques = h.collect(JointState, "/inverse_dynamics/torques")
        wait_for_count(h, torques, 5)
        msg = torques[-1]
        (source,) = [m for m in legs if m.header.stamp == msg.header.stamp]
        t = (msg.header.stamp.sec * 10 ** 9 + msg.header.stamp.nanosec - demo.start.nanoseconds) * 1e-9
        q = np.array(msg.position)
        R, p = demo.motion.pose(t)
        T = rd.frame_placement(robot, q, "platform")
        np.testing.assert_allclose(T[:3, 3], p, atol=1e-9)
        np.testing.assert_allclose(T[:3, :3], R, atol=1e-9)
        expected = rd.closed_loop_inverse_dynamics(robot, source.position, source.velocity, np.zeros(6), q_guess=q)
        actuated = [robot.joint_names.index(j) for j in robot.actuated_joint_names]
        np.testing.assert_allclose(np.array(msg.effort)[actuated], expected.torques, rtol=1e-9)
        assert np.abs(expected.torques).min() > 1.0  # the legs carry the platform
        h.executor.remove_node(demo)
        demo.destroy_node()
    finally:
        h.close()
