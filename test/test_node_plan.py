"""The inverse_dynamics node's planning interface over real rclpy: ~/plan -> ~/planned_trajectory equals the library,
joint states keep flowing while it plans, infeasible requests give a reason and no output."""
import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import harness_fixture, pendulum_urdf, wait_for_count

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from test_planning import BARMAN_2R, GOAL, START

ARM = rd.load_urdf(BARMAN_2R)


harness_factory = harness_fixture(InverseDynamicsNode)


def request(names, *positions, duration=0.0):
    msg = JointTrajectory(joint_names=list(names))
    for k, q in enumerate(positions):
        t = duration * k / max(1, len(positions) - 1)
        msg.points.append(JointTrajectoryPoint(positions=[float(x) for x in q],
                                               time_from_start=Duration(sec=int(t), nanosec=int((t % 1) * 1e9))))
    msg.header.frame_id = "request"
    return msg


def test_plan_equals_the_library_while_joint_states_flow(harness_factory):
    h = harness_factory(robot_description=BARMAN_2R, plan_sample_period=0.002)
    planned = h.collect(JointTrajectory, "/inverse_dynamics/planned_trajectory")
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(["joint2", "joint1"], START[::-1], GOAL[::-1]))
    state = JointState(name=["joint1", "joint2"], position=[0.1, 0.2], velocity=[0.0, 0.0])
    for _ in range(2000):  # joint states at about 200 Hz until the answer comes
        if planned:
            break
        torques_before_answer = len(torques)
        h.publish(JointState, "/joint_states", state)
        h.spin_for(0.005)
    assert h.spin_until(lambda: planned), "no plan"
    assert torques_before_answer >= 3, "no torques while planning"  # the executor kept serving joint states
    msg = planned[0]
    assert msg.header.frame_id == "request" and list(msg.joint_names) == ["joint1", "joint2"]
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    q, qd, qdd, effort = (np.array([getattr(p, field) for p in msg.points])
                          for field in ("positions", "velocities", "accelerations", "effort"))
    assert 0.390 <= t[-1] <= 0.395 and np.diff(t).max() <= 0.002 + 1e-9
    np.testing.assert_allclose(q[[0, -1]], [START, GOAL], atol=1e-12)
    np.testing.assert_allclose(effort, rd.inverse_dynamics(ARM, q, qd, qdd).torques, rtol=0, atol=1e-9)
    assert np.abs(effort).max() <= 10.0


def test_fixed_duration_via_point_and_infeasible_requests(harness_factory):
    h = harness_factory(robot_description=BARMAN_2R)
    planned = h.collect(JointTrajectory, "/inverse_dynamics/planned_trajectory")
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    names = ["joint1", "joint2"]
    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(names, START, [0.5, -1.8], GOAL, duration=0.8))
    msg = wait_for_count(h, planned, 1)
    t = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in msg.points])
    q = np.array([p.positions for p in msg.points])
    assert t[-1] == pytest.approx(0.8, abs=1e-9)
    np.testing.assert_allclose(q[np.argmin(np.abs(t - 0.4))], [0.5, -1.8], atol=1e-9)  # the via point at 0.4 s

    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(names, START, [4.0, -1.0]))
    assert h.wait_for_warning("~/plan: goal: joint 'joint1' at 4 is outside its limits")
    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(names, START, GOAL, duration=0.05))
    assert h.wait_for_warning("~/plan: no motion found within the limits")
    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(["joint1"], START))
    assert h.wait_for_warning("~/plan: a plan request needs a start and a goal point, got 1 points")

    def failures():
        values = [{kv.key: kv.value for kv in status.values} for d in diagnostics for status in d.status]
        return [v for v in values if v.get("failed plans") == "3"]
    assert h.spin_until(failures)
    assert "point 1" not in failures()[-1]["last failed plan"] and failures()[-1]["plans"] == "1"
    h.spin_for(0.3)
    assert len(planned) == 1  # nothing published for the failures


def test_gravity_that_the_motor_cannot_hold(harness_factory):
    h = harness_factory(robot_description=pendulum_urdf("weak", -3, 3, 1.0))
    planned = h.collect(JointTrajectory, "/inverse_dynamics/planned_trajectory")
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    msg = request(["hinge"], [0.5], [1.0])
    msg.header.stamp.sec, msg.header.stamp.nanosec = 7, 5
    h.publish(JointTrajectory, "/inverse_dynamics/plan", msg)
    assert h.wait_for_warning("cannot hold the start against gravity")
    assert not planned
    # the refusal, found on the worker thread, is answered to the requester
    assert h.spin_until(lambda: statuses)
    [status] = statuses
    assert status.level == DiagnosticStatus.ERROR and status.name == "/inverse_dynamics/plan"
    assert "cannot hold the start against gravity" in status.message
    assert [(kv.key, kv.value) for kv in status.values][0] == ("stamp", "7.000000005")
