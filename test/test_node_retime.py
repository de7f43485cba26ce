"""The inverse_dynamics node's retiming interface over real rclpy: ~/retime -> ~/retimed_trajectory on a UR5 path
equals rd.retime of the spline through the request's points and keeps every limit on a 1 ms grid; a path the
limits cannot follow gets a one-line reason and no answer."""
import numpy as np

# first: it skips the module where rclpy is missing
from ros_harness import harness_fixture, pendulum_urdf

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticStatus
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import rne_dynamics as rd
from oracle import load_quietly, robot_path
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.planning import SplinePath

UR5_PATH = robot_path("ur_description/urdf/ur5_robot.urdf")
#: A MoveIt-like path: joint positions only, the times those of a slow, wrong timing the node must replace.
WAYPOINTS = np.array([[0.0, -1.5, 1.5, -1.0, 1.2, 0.0], [0.5, -1.2, 1.2, -0.5, 1.0, 0.3],
                      [1.0, -1.0, 0.8, -0.2, 0.6, 0.8], [1.5, -0.8, 0.5, 0.0, 0.3, 1.0]])
ACCELERATION = 12.0  # rad/s^2, every joint
LIMIT_TOLERANCE = 1e-9  # relative: the samples are within the limits up to rounding

harness_factory = harness_fixture(InverseDynamicsNode)


def request(names, positions, order):
    msg = JointTrajectory(joint_names=[names[j] for j in order])
    msg.header.frame_id = "moveit"
    for k, q in enumerate(positions):
        msg.points.append(JointTrajectoryPoint(positions=[float(q[j]) for j in order],
                                               time_from_start=Duration(sec=3 * k)))
    return msg


def arrays(msg):
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    return (t, *(np.array([getattr(p, field) for p in msg.points])
                 for field in ("positions", "velocities", "accelerations", "effort")))


def test_retime_of_a_ur5_path_equals_the_library_and_keeps_the_limits(harness_factory):
    ur5 = load_quietly(UR5_PATH)
    h = harness_factory(robot_description=UR5_PATH, plan_sample_period=0.001,
                        retime_acceleration_limits=[ACCELERATION])
    answers = h.collect(JointTrajectory, "/inverse_dynamics/retimed_trajectory")
    order = [3, 0, 5, 1, 4, 2]  # the request's joints in another order than the robot's
    h.publish(JointTrajectory, "/inverse_dynamics/retime", request(ur5.joint_names, WAYPOINTS, order))
    assert h.spin_until(lambda: answers, timeout=120), f"no answer: {h.warnings()}"
    msg = answers[0]
    assert msg.header.frame_id == "moveit" and list(msg.joint_names) == list(ur5.joint_names)
    t, q, qd, qdd, effort = arrays(msg)

    expected = rd.retime(ur5, SplinePath(WAYPOINTS), acceleration_limits=np.full(6, ACCELERATION),
                         check_period=1e-3)
    grid = expected.grid(1e-3)
    np.testing.assert_allclose(t, grid, rtol=0, atol=1e-9)  # stamps in whole nanoseconds
    assert np.diff(t).max() <= 1e-3 + 1e-9 and t[-1] < 1.5  # retimed, not the request's 9 s
    for ours, theirs in zip((q, qd, qdd, effort), expected.sample_with_torques(grid)):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-9)
    # the same path: it starts and ends at rest at the ends and passes the interior points
    np.testing.assert_allclose(q[[0, -1]], WAYPOINTS[[0, -1]], atol=1e-12)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)
    for point in WAYPOINTS[1:-1]:
        assert np.linalg.norm(q - point, axis=1).min() < 1e-3 * 3.2 * np.sqrt(6)
    # every limit on the 1 ms grid, efforts a fresh inverse dynamics
    np.testing.assert_allclose(effort, rd.inverse_dynamics(ur5, q, qd, qdd).torques, rtol=0, atol=1e-9)
    assert (np.abs(effort) <= ur5.effort_limits * (1 + LIMIT_TOLERANCE)).all()
    assert (np.abs(qd) <= ur5.velocity_limits * (1 + LIMIT_TOLERANCE)).all()
    assert (np.abs(qdd) <= ACCELERATION * (1 + LIMIT_TOLERANCE)).all()
    # time optimal: some limit is active (within 1%)
    assert max((np.abs(effort) / ur5.effort_limits).max(), (np.abs(qd) / ur5.velocity_limits).max(),
               np.abs(qdd).max() / ACCELERATION) > 0.99


def test_a_path_the_limits_cannot_follow_gets_a_reason_and_no_answer(harness_factory):
    h = harness_factory(robot_description=pendulum_urdf("weak", -3, 3, 1.0))  # 1 N m cannot hold 2 kg at 0.5 m
    answers = h.collect(JointTrajectory, "/inverse_dynamics/retimed_trajectory")
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    h.publish(JointTrajectory, "/inverse_dynamics/retime", request(["hinge"], [[0.5], [1.0]], [0]))
    assert h.wait_for_warning("~/retime: retime: no speed along the path at s = ")
    [reason] = h.warnings("~/retime")
    assert "\n" not in reason and "meets the effort limits" in reason
    h.publish(JointTrajectory, "/inverse_dynamics/retime", request(["hinge"], [[0.5]], [0]))
    assert h.wait_for_warning("~/retime: a path needs at least two different waypoints")
    h.publish(JointTrajectory, "/inverse_dynamics/retime", request(["elbow"], [[0.5], [1.0]], [0]))
    assert h.wait_for_warning("~/retime: none of its joints (elbow) is one of robot 'weak' (its joints: hinge)")
    # each refusal answered on ~/request_status, the one found on the worker thread too, in order
    assert h.spin_until(lambda: len(statuses) == 3)
    assert [s.level for s in statuses] == [DiagnosticStatus.ERROR] * 3
    assert [s.message for s in statuses] == ["refused: " + w.split("~/retime: ", 1)[1].removesuffix(
        "; message ignored") for w in h.warnings("~/retime")]  # the reasons of the log
    h.spin_for(0.3)
    assert not answers
