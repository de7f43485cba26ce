"""Bad input to running dynamics nodes, one test each (the cases test_node_inverse.py / test_node_forward.py do not
already cover). Each asserts (a) the warning, parameter-set reason or diagnostics names the culprit, (b) the node is
still alive, and (c) the next good message gets exactly the library's numbers, computed with the settings in force
before the bad input: nothing is published for the bad message itself.
"""
import math
import time

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import LATCHED, Harness

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

import rne_dynamics as rd
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.robots import DEFAULT_ROBOT

ARM = rd.load_urdf(DEFAULT_ROBOT)
NAMES = list(ARM.joint_names)
EXACT = dict(rtol=0.0, atol=1e-12)
ARM_TEXT = open(DEFAULT_ROBOT).read()
# rne_arm6 with its last joint welded: still has wrist_3_link (the payload link), but 5 joints and no wrist_3_joint
ARM5_TEXT = ARM_TEXT.replace('name="wrist_3_joint" type="revolute"', 'name="wrist_3_joint" type="fixed"')

# Settings that change the torques, so that "the old value stays in force" is visible in the numbers.
PAYLOAD = dict(link="wrist_3_link", mass=1.5, com=[0.01, 0.02, 0.05], inertia=[0.01, 0.0, 0.001, 0.012, 0.0, 0.008])
GRAVITY = [0.3, -0.2, -9.7]
FRICTION = 0.5
SETTINGS = dict(robot_description=DEFAULT_ROBOT, gravity=GRAVITY, viscous_friction=[FRICTION],
                **{f"payload.{key}": value for key, value in PAYLOAD.items()})


# The same with the robot from the robot_description topic (an explicit parameter would win over its messages).
TOPIC_SETTINGS = {key: value for key, value in SETTINGS.items() if key != "robot_description"} | dict(
    topic_description=ARM_TEXT)


def set_up(robot):
    """``robot`` as a node with SETTINGS models it."""
    return robot.with_payload(**PAYLOAD).with_drive(damping=np.full(robot.dof, FRICTION))


ARM_SET_UP = set_up(ARM)
rng = np.random.default_rng(6)
Q, QD = rng.uniform(-0.5, 0.5, 6), rng.uniform(-0.5, 0.5, 6)  # within the effort limits with SETTINGS (checked below)


def joint_state(names, position, velocity=(), sec=1, nanosec=0):
    msg = JointState(name=list(names), position=[float(x) for x in position], velocity=[float(x) for x in velocity])
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    return msg


def with_value(x, k, value):
    x = np.array(x, float)
    x[k] = value
    return x


class Inverse:
    """An inverse_dynamics node under test, the ~/torques it publishes, and the good-message check."""

    def __init__(self, **parameters):
        self.h = Harness(InverseDynamicsNode, **parameters)
        self.node = self.h.node
        self.torques = self.outputs = self.h.collect(JointState, "/inverse_dynamics/torques")
        self.good_sec = 1000
        self.inputs_sent = 0  # messages the node counts in its statistics (computed or rejected)

    def publish(self, msg):
        self.inputs_sent += 1
        self.h.publish(JointState, "/joint_states", msg)

    def drain(self):
        """Spin until the node has taken every input sent and its outputs are in (streamed ones may be on their way)."""
        stats = self.node.stats
        assert self.h.spin_until(lambda: stats.total_inputs + stats.total_rejected >= self.inputs_sent
                                 and len(self.outputs) >= stats.total_inputs)

    def next_good_message_is_exact(self, robot=ARM_SET_UP, gravity=GRAVITY):
        """Publish a good state; it must be the only new ~/torques message and equal the library's torques."""
        self.good_sec += 1
        seen = len(self.torques)
        q, qd = Q[:robot.dof], QD[:robot.dof]
        self.publish(joint_state(robot.joint_names, q, qd, sec=self.good_sec))
        assert self.h.spin_until(lambda: any(m.header.stamp.sec == self.good_sec for m in self.torques[seen:]))
        assert [m.header.stamp.sec for m in self.torques[seen:]] == [self.good_sec]  # nothing for the bad input
        msg = self.torques[-1]
        assert msg.name == list(robot.joint_names)
        expected = rd.inverse_dynamics(robot, q, qd, np.zeros(robot.dof), gravity=gravity).torques
        np.testing.assert_allclose(msg.effort, expected, **EXACT)


@pytest.fixture
def factory():
    made = []

    def make(node_class=Inverse, **parameters):
        made.append(node_class(**parameters))
        return made[-1]
    yield make
    for made_node in made:
        made_node.h.close()


def test_the_good_state_is_within_the_effort_limits():
    """The good messages below must not raise effort-limit warnings of their own (diagnostics would be WARN)."""
    tau = rd.inverse_dynamics(ARM_SET_UP, Q, QD, np.zeros(6), gravity=GRAVITY).torques
    assert (np.abs(tau) < 0.8 * ARM.effort_limits).all()
    assert not np.allclose(tau, rd.inverse_dynamics(ARM, Q, QD, np.zeros(6)).torques)  # the settings matter


# -- /joint_states into the inverse node ------------------------------------------------------------------------

BAD_JOINT_STATES = {
    "inf position": (joint_state(NAMES, with_value(Q, 4, math.inf), QD), "position of joint 'wrist_2_joint' is inf"),
    "-inf position": (joint_state(NAMES, with_value(Q, 0, -math.inf), QD),
                      "position of joint 'shoulder_pan_joint' is -inf"),
    "nan velocity": (joint_state(NAMES, Q, with_value(QD, 5, math.nan)), "velocity of joint 'wrist_3_joint' is nan"),
    "more positions than names": (joint_state(NAMES, list(Q) + [0.0], QD), "6 joint names but 7 position values"),
    "names without positions": (joint_state(NAMES, [], QD), "6 joint names but 0 position values"),
    "positions without names": (joint_state([], [0.1, 0.2]), "0 joint names but 2 position values"),
    "one joint missing, an unknown one instead": (joint_state(NAMES[:5] + ["gripper_finger_joint"], Q, QD),
                                                  "missing joints wrist_3_joint"),
    "an unknown joint named twice": (joint_state(NAMES + ["gripper", "gripper"], list(Q) + [0.0, 0.0]),
                                     "joint 'gripper' is named twice"),
}


@pytest.mark.parametrize("case", BAD_JOINT_STATES)
def test_bad_joint_state_is_ignored_with_a_warning(factory, case):
    msg, warning = BAD_JOINT_STATES[case]
    node = factory(**SETTINGS)
    node.publish(msg)
    assert node.h.wait_for_warning(warning), node.h.warnings()
    assert node.node.stats.total_rejected == 1
    node.next_good_message_is_exact()


def test_joint_states_before_any_model_are_ignored_until_one_arrives(factory):
    node = factory(diagnostics_rate_hz=20.0)
    diagnostics = node.h.collect(DiagnosticArray, "/diagnostics")
    node.publish(joint_state(NAMES, Q, QD, sec=5))
    assert node.h.wait_for_warning("/joint_states: no robot model yet")
    assert node.h.spin_until(lambda: diagnostics and diagnostics[-1].status[0].level == DiagnosticStatus.ERROR)
    node.h.publish(String, "/robot_description", String(data=ARM_TEXT), qos=LATCHED)
    assert node.h.spin_until(lambda: node.node.model is not None)
    node.next_good_message_is_exact(robot=ARM, gravity=[0.0, 0.0, -9.81])
    assert node.h.spin_until(lambda: diagnostics[-1].status[0].level == DiagnosticStatus.OK)


def test_a_non_finite_value_of_a_joint_the_robot_lacks_is_not_its_business(factory):
    node = factory(**SETTINGS)
    node.publish(joint_state(NAMES + ["conveyor"], list(Q) + [math.nan], list(QD) + [math.inf], sec=3))
    assert node.h.spin_until(lambda: node.torques)
    np.testing.assert_allclose(node.torques[0].effort, rd.inverse_dynamics(ARM_SET_UP, Q, QD, np.zeros(6),
                                                                           gravity=GRAVITY).torques, **EXACT)
    assert not node.h.warnings() and node.node.stats.total_rejected == 0
    node.next_good_message_is_exact()


def test_huge_finite_positions_give_the_library_torques(factory):
    """Positions enter only through sines and cosines: 1e300 rad is a valid (if silly) angle."""
    node = factory(**SETTINGS)
    q = np.full(6, 1e300)
    node.publish(joint_state(NAMES, q, QD, sec=3))
    assert node.h.spin_until(lambda: node.torques)
    expected = rd.inverse_dynamics(ARM_SET_UP, q, QD, np.zeros(6), gravity=GRAVITY).torques
    assert np.isfinite(expected).all()
    np.testing.assert_allclose(node.torques[0].effort, expected, **EXACT)
    node.next_good_message_is_exact()


def test_stamps_going_backwards_are_computed_with_their_own_stamps(factory):
    """acceleration_source 'zero' does not look at time: each message is answered as it comes, stamp kept."""
    node = factory(**SETTINGS)
    stamps = [(50, 0), (49, 999_999_999), (10, 0), (0, 0), (50, 0)]
    for k, (sec, nanosec) in enumerate(stamps):
        node.publish(joint_state(NAMES, Q + 0.01 * k, QD, sec=sec, nanosec=nanosec))
        assert node.h.spin_until(lambda: len(node.torques) == k + 1)
    for k, ((sec, nanosec), msg) in enumerate(zip(stamps, node.torques)):
        assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (sec, nanosec)
        np.testing.assert_allclose(msg.effort, rd.inverse_dynamics(ARM_SET_UP, Q + 0.01 * k, QD, np.zeros(6),
                                                                   gravity=GRAVITY).torques, **EXACT)
    assert not node.h.warnings()
    node.next_good_message_is_exact()


def test_stamps_going_backwards_keep_the_acceleration_estimate(factory):
    """acceleration_source 'differentiate': a message older than the last leaves the filter as it was (warning);
    the next newer message differentiates against the last accepted one, not the stale one."""
    cutoff = 5.0
    node = factory(**SETTINGS, acceleration_source="differentiate", acceleration_cutoff_hz=cutoff)
    times = [3.0, 3.01, 2.5, 3.02]  # the third goes back in time
    states = [(Q + 0.02 * k, QD + (0.3, -0.2, 0.1, 0.4, -0.5, 0.2)[k % 6] * k) for k in range(len(times))]
    for k, (t, (q, qd)) in enumerate(zip(times, states)):
        node.publish(joint_state(NAMES, q, qd, sec=int(t), nanosec=round(t % 1 * 1e9)))
        assert node.h.spin_until(lambda: len(node.torques) == k + 1)
    assert node.h.wait_for_warning("needs increasing stamps")
    T = 1.0 / (2.0 * math.pi * cutoff)
    qdd, last = np.zeros(6), None
    for t, (q, qd), msg in zip(times, states, node.torques):
        if last is None or t > last[0]:
            if last is not None:
                dt = t - last[0]
                qdd = qdd + dt / (dt + T) * ((qd - last[1]) / dt - qdd)
            last = (t, qd)
        expected = rd.inverse_dynamics(ARM_SET_UP, q, qd, qdd, gravity=GRAVITY).torques
        np.testing.assert_allclose(msg.effort, expected, rtol=0.0, atol=1e-9)  # the filter's rounding, not ours


def test_velocities_whose_torques_overflow_are_rejected_not_published_as_nan(factory):
    node = factory(**SETTINGS)
    node.publish(joint_state(NAMES, Q, np.full(6, 1e200), sec=3))
    assert node.h.spin_until(lambda: node.torques or node.node.stats.total_rejected)
    assert all(np.isfinite(m.effort).all() for m in node.torques), [list(m.effort) for m in node.torques]
    assert node.h.wait_for_warning("message ignored")
    node.next_good_message_is_exact()


def test_a_velocity_jump_that_overflows_the_derivative_does_not_kill_the_node(factory):
    node = factory(**SETTINGS, acceleration_source="differentiate")
    node.publish(joint_state(NAMES, Q, QD, sec=3))
    assert node.h.spin_until(lambda: len(node.torques) == 1)
    node.publish(joint_state(NAMES, Q, np.full(6, 1e300), sec=3, nanosec=1))
    assert node.h.spin_until(lambda: len(node.torques) == 2 or node.node.stats.total_rejected)
    assert all(np.isfinite(m.effort).all() for m in node.torques)  # rejected, or answered with a finite estimate
    assert node.h.call(Trigger, "/inverse_dynamics/reset").success  # a fresh estimate: zero at the next message
    node.next_good_message_is_exact()


# -- parameters -------------------------------------------------------------------------------------------------

NOT_POSITIVE = [-0.01, 0.0, 0.0, 0.01, 0.0, 0.01]  # a negative principal moment
BAD_PARAMETERS = {  # name, value, what the refusal reason says
    "payload.mass as text": ("payload.mass", "heavy", "Wrong parameter type"),
    "payload.link as an integer": ("payload.link", 3, "Wrong parameter type"),
    "armature as text": ("armature", "x", "Wrong parameter type"),
    "publish_wrenches as text": ("publish_wrenches", "yes", "Wrong parameter type"),
    "acceleration_source as a number": ("acceleration_source", 1.0, "Wrong parameter type"),
    "command_joints as integers": ("command_joints", [1, 2], "Wrong parameter type"),
    "gravity as integers": ("gravity", [0, 0, -10], "Wrong parameter type"),
    "marker_rate_hz as an integer": ("marker_rate_hz", 5, "Wrong parameter type"),
    "gravity unset": ("gravity", None, "cannot be undeclared"),
    "payload.mass above its range": ("payload.mass", 2.0e4, "payload.mass out of range"),
    "payload.mass nan": ("payload.mass", math.nan, "payload.mass out of range"),
    "payload.mass inf": ("payload.mass", math.inf, "payload.mass out of range"),
    "marker_rate_hz zero": ("marker_rate_hz", 0.0, "marker_rate_hz out of range"),
    "diagnostics_rate_hz above its range": ("diagnostics_rate_hz", 1000.0, "diagnostics_rate_hz out of range"),
    "acceleration_cutoff_hz above its range": ("acceleration_cutoff_hz", 1.0e5, "acceleration_cutoff_hz out of range"),
    "payload.inertia with 5 values": ("payload.inertia", [0.01] * 5, "payload.inertia needs 6 values, got 5"),
    "payload.inertia nan": ("payload.inertia", [0.01, 0.0, 0.0, 0.01, 0.0, math.nan], "payload.inertia must be finite"),
    "payload.com nan": ("payload.com", [0.0, math.nan, 0.0], "payload.com must be finite"),
    "gravity inf": ("gravity", [0.0, 0.0, -math.inf], "gravity must be finite"),
    "gravity with 4 values": ("gravity", [0.0, 0.0, -9.81, 0.0], "gravity needs 3 values, got 4"),
    "gravity empty": ("gravity", [], "gravity needs 3 values, got 0"),
    "armature negative": ("armature", [-0.1], "armature must be finite and >= 0"),
    "armature nan": ("armature", [math.nan], "armature must be finite and >= 0"),
    "armature with 7 values": ("armature", [0.1] * 7, "armature has 7 values; robot 'rne_arm6' has 6 joints"),
    "viscous_friction with 2 values": ("viscous_friction", [0.1, 0.2], "viscous_friction has 2 values"),
}
REFUSED_WHEN_BUILT = {  # name, value, what the refusal reason says: they pass the set's checks, the model fails
    "payload.inertia indefinite": ("payload.inertia", NOT_POSITIVE,
                                   "payload on 'wrist_3_link': inertia is not positive semi-definite"),
    "robot_description a missing file": ("robot_description", "/no/such/robot.urdf",
                                         "/no/such/robot.urdf: cannot read the URDF"),
}


def parameter(name, value):
    if value is None:
        return Parameter(name)  # NOT_SET: an undeclare request
    if isinstance(value, list) and not value:
        return Parameter(name, Parameter.Type.DOUBLE_ARRAY, [])
    return Parameter(name, value=value)


@pytest.mark.parametrize("case", BAD_PARAMETERS)
def test_bad_parameter_is_refused_and_the_old_value_stays_in_force(factory, case):
    name, value, reason = BAD_PARAMETERS[case]
    node = factory(**SETTINGS)
    before, model = node.node.get_parameter(name).value, node.node.model
    result = node.node.set_parameters([parameter(name, value)])[0]
    assert not result.successful and reason in result.reason, result.reason
    assert node.node.get_parameter(name).value == before and node.node.model is model
    node.next_good_message_is_exact()


@pytest.mark.parametrize("case", REFUSED_WHEN_BUILT)
def test_bad_parameter_is_refused_when_built_and_the_old_value_stays_in_force(factory, case):
    node = factory(**SETTINGS)
    node.h.refused_build(*REFUSED_WHEN_BUILT[case])
    node.next_good_message_is_exact()


def test_payload_on_a_missing_link_is_refused_as_a_whole(factory):
    """Link, mass and inertia set together: the whole set is refused, the old payload stays."""
    node = factory(**SETTINGS)
    result = node.node.set_parameters_atomically([Parameter("payload.link", value="gripper_link"),
                                                  Parameter("payload.mass", value=3.0)])
    assert not result.successful and "no link 'gripper_link'" in result.reason, result.reason
    assert node.node.get_parameter("payload.link").value == "wrist_3_link"
    assert node.node.get_parameter("payload.mass").value == PAYLOAD["mass"]
    node.next_good_message_is_exact()


# -- robot descriptions -----------------------------------------------------------------------------------------

BAD_DESCRIPTIONS = {  # text, extra node parameters, what the refusal says
    "empty": ("", {}, "the URDF is empty"),
    "a path (a message carries the text)": ("/no/such/robot.urdf", {}, "not URDF XML (it starts '/no/such"),
    "a robot without the payload link": (ARM_TEXT.replace("wrist_3_link", "hand_link"), {},
                                         "no link 'wrist_3_link'"),
    "fewer joints than armature values": (ARM5_TEXT, {"armature": [0.1] * 6}, "armature has 6 values"),
    "a command joint it lacks": (ARM5_TEXT, {"command_joints": ["elbow_joint", "wrist_3_joint"]},
                                 "no movable joint 'wrist_3_joint'"),
}


@pytest.mark.parametrize("case", BAD_DESCRIPTIONS)
def test_bad_description_keeps_the_old_model(factory, case):
    text, extra, reason = BAD_DESCRIPTIONS[case]
    node = factory(**TOPIC_SETTINGS | extra)
    model = node.node.model
    node.h.publish(String, "/robot_description", String(data=text), qos=LATCHED)
    assert node.h.wait_for_warning(reason), node.h.warnings()
    assert "keeping robot 'rne_arm6'" in node.h.warnings(reason)[-1] and node.node.model is model
    node.next_good_message_is_exact()


def test_bad_description_after_a_swap_keeps_the_current_robot_not_the_first(factory):
    node = factory(**TOPIC_SETTINGS)
    arm5 = set_up(rd.load_urdf(ARM5_TEXT))
    node.h.publish(String, "/robot_description", String(data=ARM5_TEXT), qos=LATCHED)
    assert node.h.spin_until(lambda: node.node.model.robot.dof == 5)
    model = node.node.model
    node.next_good_message_is_exact(robot=arm5)
    node.h.publish(String, "/robot_description", String(data="<robot name='x'>"), qos=LATCHED)
    assert node.h.wait_for_warning("not well-formed")
    assert node.node.model is model
    node.next_good_message_is_exact(robot=arm5)


# -- the forward node -------------------------------------------------------------------------------------------

class Forward(Inverse):
    """A forward_dynamics node reading /joint_states; the good message is an effort command at the measured state."""

    def __init__(self, **parameters):
        self.h = Harness(ForwardDynamicsNode, **parameters)
        self.node = self.h.node
        self.accelerations = self.outputs = self.h.collect(JointTrajectory, "/forward_dynamics/accelerations")
        self.good_sec, self.inputs_sent = 1000, 0
        self.publish(joint_state(NAMES, Q, QD))
        assert self.h.spin_until(lambda: self.node.measured is not None)
        self.inputs_sent = 0  # a good /joint_states is not in the statistics; bad ones and commands are

    def command(self, msg):
        self.inputs_sent += 1
        self.h.publish(JointState, "/forward_dynamics/effort_command", msg)

    def next_good_message_is_exact(self, q=Q, qd=QD):
        """An effort command (joints reversed); the only new ~/accelerations equal the library's at (q, qd)."""
        self.good_sec += 1
        seen = len(self.accelerations)
        tau = np.linspace(-5.0, 5.0, 6)
        command = JointState(name=NAMES[::-1], effort=list(tau[::-1]))
        command.header.stamp.sec = self.good_sec
        self.command(command)
        assert self.h.spin_until(lambda: any(m.header.stamp.sec == self.good_sec for m in self.accelerations[seen:]))
        assert [m.header.stamp.sec for m in self.accelerations[seen:]] == [self.good_sec]
        point = self.accelerations[-1].points[0]
        np.testing.assert_allclose(point.positions, q, **EXACT)
        expected = rd.forward_dynamics(ARM_SET_UP, q, qd, tau, gravity=GRAVITY)
        np.testing.assert_allclose(point.accelerations, expected, **EXACT)


BAD_EFFORT_COMMANDS = {
    "nan effort": (JointState(name=NAMES, effort=list(with_value(np.ones(6), 2, math.nan))),
                   "effort of joint 'elbow_joint' is nan"),
    "empty": (JointState(), "no joint names"),
    "unknown names only": (JointState(name=["gripper"], effort=[1.0]), "missing joints shoulder_pan_joint"),
    "a joint named twice": (JointState(name=NAMES + ["wrist_1_joint"], effort=[1.0] * 7),
                            "joint 'wrist_1_joint' is named twice"),
    "positions instead of efforts": (JointState(name=NAMES, position=list(Q)), "6 joint names but 0 effort values"),
}


@pytest.mark.parametrize("case", BAD_EFFORT_COMMANDS)
def test_bad_effort_command_is_ignored_with_a_warning(factory, case):
    msg, warning = BAD_EFFORT_COMMANDS[case]
    node = factory(Forward, **SETTINGS)
    node.command(msg)
    assert node.h.wait_for_warning(f"~/effort_command: {warning}"), node.h.warnings()
    node.next_good_message_is_exact()


BAD_MEASURED_STATES = {
    "nan position": (joint_state(NAMES, with_value(Q, 1, math.nan), QD), "position of joint 'shoulder_lift_joint'"),
    "velocities of the wrong length": (joint_state(NAMES, Q, QD[:3]), "6 joint names but 3 velocity values"),
}


@pytest.mark.parametrize("case", BAD_MEASURED_STATES)
def test_bad_measured_state_keeps_the_last_good_one(factory, case):
    msg, warning = BAD_MEASURED_STATES[case]
    node = factory(Forward, **SETTINGS)
    node.publish(msg)
    assert node.h.wait_for_warning(f"/joint_states: {warning}"), node.h.warnings()
    node.next_good_message_is_exact(Q, QD)  # accelerations at the state before the bad message


def test_effort_commands_with_stamps_going_backwards_keep_their_stamps(factory):
    node = factory(Forward, **SETTINGS)
    for k, sec in enumerate((9, 3, 0)):
        msg = JointState(name=NAMES, effort=[float(k)] * 6)
        msg.header.stamp.sec = sec
        node.command(msg)
        assert node.h.spin_until(lambda: len(node.accelerations) == k + 1)
    assert [m.header.stamp.sec for m in node.accelerations] == [9, 3, 0]
    for k, msg in enumerate(node.accelerations):
        np.testing.assert_allclose(msg.points[0].accelerations, rd.forward_dynamics(
            ARM_SET_UP, Q, QD, np.full(6, float(k)), gravity=GRAVITY), **EXACT)
    node.next_good_message_is_exact()


def test_efforts_whose_accelerations_overflow_are_rejected_not_published_as_nan(factory):
    node = factory(Forward, **SETTINGS)
    node.command(JointState(name=NAMES, effort=[1e308] * 6))
    assert node.h.spin_until(lambda: node.accelerations or node.node.stats.total_rejected)
    assert all(np.isfinite(m.points[0].accelerations).all() for m in node.accelerations)
    assert node.h.wait_for_warning("message ignored")
    node.next_good_message_is_exact()


@pytest.mark.parametrize("name, value, reason", [
    ("rate_hz", 0.0, "rate_hz out of range"),
    ("simulate", "yes", "Wrong parameter type"),
    ("initial_positions", [0.0, 0.0, 4.0, 0.0, 0.0, 0.0], "elbow_joint = 4.0 is outside its limits"),
    ("initial_positions", [0.0, 0.0, math.nan, 0.0, 0.0, 0.0], "initial_positions: elbow_joint = nan is not"),
])
def test_bad_forward_parameter_is_refused(factory, name, value, reason):
    node = factory(Forward, **SETTINGS)
    before, model = node.node.get_parameter(name).value, node.node.model
    result = node.node.set_parameters([Parameter(name, value=value)])[0]
    assert not result.successful and reason in result.reason, result.reason
    assert node.node.get_parameter(name).value == before and node.node.model is model
    node.next_good_message_is_exact()


# -- diagnostics ------------------------------------------------------------------------------------------------

def stream_until(node, send, condition, timeout=10.0):
    """Keep sending (``send()`` every few milliseconds) until ``condition()`` holds."""
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "condition not reached while streaming"
        send()
        node.h.spin_until(condition, timeout=0.005)


def statuses(diagnostics, start=0):
    return [(d.status[0].level, d.status[0].message) for d in diagnostics[start:]]


def warn_then_ok(node, diagnostics, send_bad, reason, send_good, ok_message="robot 'rne_arm6' OK"):
    """While ``send_bad`` streams, two statuses in a row are WARN naming ``reason``; once ``send_good`` streams
    instead, the status returns to OK."""
    start = len(diagnostics)

    def warned_twice():
        found = statuses(diagnostics, start)
        return len(found) >= 2 and all(level == DiagnosticStatus.WARN and reason in message
                                       for level, message in found[-2:])
    stream_until(node, send_bad, warned_twice)
    start = len(diagnostics)
    stream_until(node, send_good, lambda: (DiagnosticStatus.OK, ok_message) in statuses(diagnostics, start))
    node.drain()
    assert all(level != DiagnosticStatus.ERROR for level, _ in statuses(diagnostics))


def test_diagnostics_warn_while_joint_states_are_bad_and_recover(factory):
    node = factory(**SETTINGS, diagnostics_rate_hz=20.0)
    diagnostics = node.h.collect(DiagnosticArray, "/diagnostics")
    bad, good = BAD_JOINT_STATES["nan velocity"][0], joint_state(NAMES, Q, QD)
    warn_then_ok(node, diagnostics, lambda: node.publish(bad), "inputs rejected, last: /joint_states: velocity of "
                 "joint 'wrist_3_joint' is nan", lambda: node.publish(good))
    node.next_good_message_is_exact()


def test_diagnostics_warn_after_a_refused_description_until_a_good_one(factory):
    node = factory(**TOPIC_SETTINGS, diagnostics_rate_hz=20.0)
    diagnostics = node.h.collect(DiagnosticArray, "/diagnostics")

    def description(text):
        return lambda: node.h.publish(String, "/robot_description", String(data=text), qos=LATCHED)
    warn_then_ok(node, diagnostics, description(BAD_DESCRIPTIONS["a robot without the payload link"][0]),
                 "kept robot 'rne_arm6', refused the robot description from /robot_description topic: payload",
                 description(ARM_TEXT))
    node.next_good_message_is_exact()


def test_diagnostics_of_the_forward_node_warn_while_commands_are_bad_and_recover(factory):
    node = factory(Forward, **SETTINGS, diagnostics_rate_hz=20.0)
    diagnostics = node.h.collect(DiagnosticArray, "/diagnostics")
    bad, good = BAD_EFFORT_COMMANDS["nan effort"][0], JointState(name=NAMES, effort=[1.0] * 6)
    warn_then_ok(node, diagnostics, lambda: node.command(bad), "last: ~/effort_command: effort of joint "
                 "'elbow_joint' is nan", lambda: node.command(good))
    node.next_good_message_is_exact()
