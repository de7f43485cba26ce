"""Every request of the inverse node answered (real rclpy): ``~/trajectory``, ``~/plan`` and ``~/retime`` requests
that carry only an arm's joints (a MoveIt arm-group plan on a Panda with its hand) are answered with the hand held at
its latest joint state, equal to the library's answer for the whole robot with the hand there; every request, refused
or not, gets its ``~/request_status`` (the request's stamp, OK with the joints held or ERROR with the reason)."""
import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import harness_fixture, wait_for_count

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticStatus
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

import oracle
import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.planning import SplinePath
from test_planning import BARMAN_2R, GOAL, START

PANDA = oracle.robot_path("panda_description/urdf/panda.urdf")
ROBOT = oracle.load_quietly(PANDA)
ARM = [f"panda_joint{k}" for k in range(1, 8)]
FINGER = "panda_finger_joint1"  # panda_finger_joint2 is its mimic: not in q
WIDTH = 0.03  # m: where the gripper driver last put the finger
#: The arm's waypoints (a MoveIt arm-group plan: the arm's 7 joints, no finger).
WAYPOINTS = np.array([[0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8], [0.5, -0.2, -0.3, -1.6, 0.3, 1.8, 0.2],
                      [1.0, 0.3, -0.5, -1.2, 0.5, 2.0, -0.5]])
EXACT = dict(rtol=0, atol=1e-9)
#: BARMAN_2R (a horizontal 2R arm) with a 0.5 kg finger sliding along its last link: a gripper that plans fast.
GRIPPER_2R = BARMAN_2R.replace("</robot>", """<link name="finger"><inertial><origin xyz="0.05 0 0"/><mass value="0.5"/>
  <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="1e-4"/></inertial></link>
<joint name="finger_joint" type="prismatic"><parent link="link2"/><child link="finger"/><origin xyz="0.3 0 0"/>
  <axis xyz="1 0 0"/><limit lower="0" upper="0.1" effort="50" velocity="1"/></joint></robot>""")

harness_factory = harness_fixture(InverseDynamicsNode)


def request(names, positions, sec=0, seconds_apart=2):
    msg = JointTrajectory(joint_names=list(names))
    msg.header.stamp.sec = sec
    for k, q in enumerate(positions):
        msg.points.append(JointTrajectoryPoint(positions=[float(x) for x in q],
                                               time_from_start=Duration(sec=seconds_apart * k)))
    return msg


def arrays(msg):
    return tuple(np.array([getattr(p, field) for p in msg.points])
                 for field in ("positions", "velocities", "accelerations", "effort"))


def status_of(statuses, sec):
    """The request status whose value ``stamp`` is ``sec`` seconds (None until it came)."""
    found = [s for s in statuses if {kv.key: kv.value for kv in s.values}.get("stamp") == f"{sec}.000000000"]
    return found[0] if found else None


def gripper_at(h, width, names=(FINGER, "panda_finger_joint2")):
    """Publish the gripper driver's joint state (the arm's is not needed) and wait until the node took it."""
    h.publish(JointState, "/joint_states", JointState(name=list(names), position=[width] * len(names)))
    states = h.node.joint_states
    assert h.spin_until(lambda: states.q[states.index[names[0]]] == width)


def test_the_arm_joints_of_a_robot_with_a_gripper_are_answered_with_the_gripper_held(harness_factory):
    h = harness_factory(robot_description=PANDA, plan_sample_period=0.002)
    retimed = h.collect(JointTrajectory, "/inverse_dynamics/retimed_trajectory")
    efforts = h.collect(JointTrajectory, "/inverse_dynamics/trajectory_with_efforts")
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    gripper_at(h, WIDTH)

    h.publish(JointTrajectory, "/inverse_dynamics/retime", request(ARM, WAYPOINTS, sec=11))
    assert h.spin_until(lambda: retimed, timeout=120), f"no answer: {h.warnings()}"
    q, qd, qdd, tau = arrays(retimed[0])
    assert list(retimed[0].joint_names) == ARM + [FINGER]
    assert (q[:, 7] == WIDTH).all() and (qd[:, 7] == 0).all() and (qdd[:, 7] == 0).all()  # held exactly
    whole = np.column_stack([WAYPOINTS, np.full(len(WAYPOINTS), WIDTH)])
    expected = rd.retime(ROBOT, SplinePath(whole), check_period=1e-3)
    for ours, theirs in zip((q, qd, qdd, tau), expected.sample_with_torques(expected.grid(0.002))):
        np.testing.assert_allclose(ours, theirs, **EXACT)
    assert h.spin_until(lambda: status_of(statuses, 11))
    status = status_of(statuses, 11)
    assert status.level == DiagnosticStatus.OK and status.name == "/inverse_dynamics/retime"
    assert status.message == f"answered; held at the latest joint state: {FINGER} at {WIDTH:g}"

    points = request(ARM[::-1], WAYPOINTS[:, ::-1], sec=12)  # another order; velocities on the first point only
    points.points[0].velocities = [0.3] * 7
    h.publish(JointTrajectory, "/inverse_dynamics/trajectory", points)
    answer = wait_for_count(h, efforts, 1)
    qd = np.zeros((3, 8))
    qd[0, :7] = 0.3
    expected = rd.inverse_dynamics(ROBOT, whole, qd, np.zeros((3, 8))).torques
    # the efforts of the request's joints, in its order, with the finger held
    np.testing.assert_allclose([p.effort for p in answer.points], expected[:, 6::-1], **EXACT)
    assert h.spin_until(lambda: status_of(statuses, 12))
    assert status_of(statuses, 12).message.endswith(f"{FINGER} at {WIDTH:g}")


def test_a_plan_of_the_arm_joints_holds_the_finger_where_it_is(harness_factory):
    robot = rd.load_urdf(GRIPPER_2R)
    h = harness_factory(robot_description=GRIPPER_2R, plan_sample_period=0.002)
    planned = h.collect(JointTrajectory, "/inverse_dynamics/planned_trajectory")
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    gripper_at(h, 0.07, names=("finger_joint",))
    h.publish(JointTrajectory, "/inverse_dynamics/plan", request(["joint2", "joint1"], [START[::-1], GOAL[::-1]],
                                                                  sec=21))  # in 2 s, least effort
    assert h.spin_until(lambda: planned, timeout=120), f"no answer: {h.warnings()}"
    q, qd, qdd, tau = arrays(planned[0])
    np.testing.assert_allclose(q[:, 2], 0.07, rtol=0, atol=1e-15)  # held (a spline of equal control points),
    np.testing.assert_allclose(qd[:, 2], 0.0, rtol=0, atol=1e-13)  # not moved to help the arm
    expected = rd.plan(robot, np.append(START, 0.07), np.append(GOAL, 0.07),
                       duration=2.0, objective="effort", position_limits={"finger_joint": (0.07, 0.07)})
    for ours, theirs in zip((q, qd, qdd, tau), expected.sample(expected.grid(0.002))):
        np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)
    assert h.spin_until(lambda: status_of(statuses, 21))
    assert status_of(statuses, 21).message == "answered; held at the latest joint state: finger_joint at 0.07"


@pytest.mark.parametrize("topic", ["trajectory", "plan", "retime"])
def test_every_refused_request_is_answered_with_its_reason(harness_factory, topic):
    h = harness_factory(robot_description=PANDA)
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    refusals = {
        31: (request(["pan", "tilt"], [[0.1, 0.2], [0.3, 0.4]], sec=31),
             "none of its joints (pan, tilt) is one of robot 'panda'"),
        32: (request(ARM, WAYPOINTS, sec=32), f"it leaves out joints {FINGER}, not yet heard on /joint_states"),
        33: (request(ARM + [FINGER, FINGER], np.zeros((2, 9)), sec=33), f"joint '{FINGER}' is named twice"),
    }
    for sec, (msg, reason) in refusals.items():
        h.publish(JointTrajectory, f"/inverse_dynamics/{topic}", msg)
        assert h.spin_until(lambda: status_of(statuses, sec)), f"request {sec} not answered"
        status = status_of(statuses, sec)
        assert status.level == DiagnosticStatus.ERROR and status.name == f"/inverse_dynamics/{topic}"
        assert status.message.startswith("refused: ") and reason in status.message, status.message
        assert "\n" not in status.message


def test_a_trajectory_of_one_point_is_answered(harness_factory):
    """A one-point ``~/trajectory`` (a 'go to' request) is answered with its point's efforts: the inverse dynamics of a
    batch of one came back as one state's once the robot's written code was in (the node's warm-up makes it), and
    the callback's IndexError ended the node's spin."""
    h = harness_factory(robot_description=rd.bundled_robot_path())
    robot = rd.load_urdf(rd.bundled_robot_path())
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    answers = h.collect(JointTrajectory, "/inverse_dynamics/trajectory_with_efforts")
    q = np.array([0.1, -1.0, 0.8, -1.2, -1.5, 0.3])
    h.publish(JointTrajectory, "/inverse_dynamics/trajectory", request(robot.joint_names, [q], sec=41))
    assert h.spin_until(lambda: status_of(statuses, 41))
    assert status_of(statuses, 41).level == DiagnosticStatus.OK, status_of(statuses, 41).message
    effort = arrays(wait_for_count(h, answers, 1))[3]
    np.testing.assert_allclose(effort, [rd.gravity_torques(robot, q)], **EXACT)


@pytest.mark.parametrize("topic, points, reason", [
    ("plan", [[0.1] * 6] * 3, "a path needs at least two waypoints, each different from the one before"),
    ("retime", [], "a path needs at least two different waypoints, all finite")])
def test_a_request_whose_points_make_no_path_is_refused_with_the_paths_reason(harness_factory, topic, points, reason):
    """A plan whose points do not move was never answered (the path's ValueError was not among the errors the
    planning worker reported: it ended the worker's task silently); a retime of no points was refused as 'cannot
    reshape array of size 0'."""
    h = harness_factory(robot_description=rd.bundled_robot_path())
    statuses = h.collect(DiagnosticStatus, "/inverse_dynamics/request_status")
    names = rd.load_urdf(rd.bundled_robot_path()).joint_names
    h.publish(JointTrajectory, f"/inverse_dynamics/{topic}", request(names, points, sec=51))
    assert h.spin_until(lambda: status_of(statuses, 51), timeout=60), "not answered"
    assert status_of(statuses, 51).message == f"refused: {reason}"
