"""The ``inverse_dynamics`` node: joint states in; torques, gravity feedforward, joint wrenches and loads out.

Each output of a ``/joint_states`` message carries its stamp. ``~/torques`` goes out first (what a controller waits
for), then ``~/gravity_torques``, ``~/gravity_command``, ``~/joint_wrenches/<joint>`` and, at most at
``marker_rate_hz``, ``~/load_markers``: these four only while somebody subscribes to them (every publish costs CPU
time at 1 kHz; a new subscriber is noticed within :data:`LISTENERS_REFRESH`). A joint name that is not a valid ROS
name token has its other characters replaced by ``_`` in its wrench topic. ``~/trajectory`` comes back on
``~/trajectory_with_efforts`` with the inverse dynamics torque of every point in ``effort`` (0 for a joint the robot
does not have; missing velocities or accelerations read as zero; the robot's joints it leaves out held at their
latest joint state); with elastic joints (``joint_stiffness``) the motor torques of the exact flexible feedforward
instead (:meth:`~.model.DynamicsModel.trajectory_torques`). ``~/plan`` and ``~/retime`` requests are answered on
``~/planned_trajectory`` and ``~/retimed_trajectory`` from worker threads (:mod:`.planning`, :mod:`.retiming`).
Every request of the three is answered on ``~/request_status`` (:mod:`.trajectory_requests`), refused or not.

A closed-chain robot (parameter ``loops_file``, the loop file of :mod:`rne_dynamics.model.loops`) needs only its
actuated joints in ``/joint_states``: ``~/torques`` then carries every tree joint with its solved position and
velocity and the actuated torques (``closed_loop_inverse_dynamics``; passive joints 0), ``~/joint_wrenches/<joint>``
the whole mechanism's joint wrenches and ``~/loop_wrenches/<loop>`` each cut joint's wrench (on ``link_b`` by
``link_a``, cut frame on ``link_b``; ``frame_id`` ``link_b``). The passive positions of one message start the
Newton solve of the next (the assembly mode is kept).

Parameter ``base`` (``fixed``, ``odometry``, ``free_floating``; :mod:`~rne_dynamics.nodes.base_state`) loads the
robot with a floating base whose state comes from ``~/base_odometry`` and ``~/base_imu``, or is left free; then the
node also publishes ``~/base_wrench`` (``odometry``), ``~/base_acceleration`` (``free_floating``) and
``~/center_of_mass``, and refuses ``~/trajectory`` (its points carry no base motion). Parameter
``external_wrench_topics`` (:mod:`~rne_dynamics.nodes.wrench_inputs`) adds measured external wrenches (force/torque
sensors) to the joint-state outputs.
"""
import math
import re
import time

import numpy as np
from diagnostic_msgs.msg import DiagnosticStatus
from geometry_msgs.msg import AccelStamped, PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.event_handler import SubscriptionEventCallbacks
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory
from visualization_msgs.msg import Marker, MarkerArray

import rne_dynamics as rd

from ..errors import ModelError, StateError
from . import base_state, external_torques, payload_estimates, retiming, wrench_inputs
from .common import DynamicsNode
from .messages import doubles, stamp_seconds
from .parameters import BOOL, DOUBLE, STRING, STRINGS, Spec
from .runner import spin
from .external_torques import ExternalTorques
from .payload_estimates import PayloadEstimates
from .markers import LoadMarkers, deleting_all
from .planning import PlanRequests
from .retiming import RetimeRequests
from .trajectory_requests import RequestJoints, request_status

ACCELERATION_SOURCES = ("zero", "differentiate")
LISTENERS_REFRESH = 0.1  # s: a new subscriber of an optional output gets its first message at most this late

PARAMETERS = (
    Spec("command_joints", None, STRINGS, "joint order of ~/gravity_command (the effort controller's joints); "
         "empty: joint_names order", constraints="movable joints of the robot, each at most once",
         rebuilds_model=True),
    Spec("acceleration_source", "zero", STRING, "joint accelerations: zero, or differentiate (the low-pass "
         "filtered derivative of the measured velocity)", constraints="zero | differentiate"),
    Spec("acceleration_cutoff_hz", 20.0, DOUBLE, "cutoff frequency of the velocity-derivative filter (Hz)",
         0.01, 1.0e4),
    Spec("publish_wrenches", True, BOOL, "publish ~/joint_wrenches/<joint> (WrenchStamped, child link frame)"),
    Spec("publish_markers", True, BOOL, "publish ~/load_markers (MarkerArray)"),
    Spec("marker_rate_hz", 10.0, DOUBLE, "highest rate of ~/load_markers (Hz)", 0.1, 1.0e4),
    Spec("plan_sample_period", 0.01, DOUBLE, "time between the points of ~/planned_trajectory and "
         "~/retimed_trajectory (s)", 1.0e-4, 10.0),
    Spec("loops_file", "", STRING, "loop file (YAML: actuated joints and loop closures) of a closed-chain robot; "
         "empty: the URDF is an open tree", rebuilds_model=True),
) + base_state.PARAMETERS + wrench_inputs.PARAMETERS + external_torques.PARAMETERS + retiming.PARAMETERS \
    + payload_estimates.PARAMETERS


#: The topics of a moving base: which ``base`` modes and ``base_acceleration_source`` values use each.
BASE_TOPICS = {
    "~/base_odometry": (("odometry", "free_floating"), base_state.ACCELERATION_SOURCES),
    "~/base_imu": (("odometry",), ("imu",)),
    "~/base_wrench": (("odometry",), base_state.ACCELERATION_SOURCES),
    "~/base_acceleration": (("free_floating",), base_state.ACCELERATION_SOURCES),
    "~/center_of_mass": (("odometry", "free_floating"), base_state.ACCELERATION_SOURCES),
    "~/center_of_mass_marker": (("odometry", "free_floating"), base_state.ACCELERATION_SOURCES),
}
BASE_OUTPUTS = {"~/base_wrench": WrenchStamped, "~/base_acceleration": AccelStamped,
                "~/center_of_mass": PointStamped, "~/center_of_mass_marker": Marker}
BASE_INPUTS = {"~/base_odometry": (Odometry, "on_base_odometry"), "~/base_imu": (Imu, "on_base_imu")}


def topic_token(name):
    """``name`` as one ROS topic name token: letters, digits and ``_``, not starting with a digit."""
    token = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + token if not token or token[0].isdigit() else token


class VelocityDerivative:
    """Joint accelerations as the low-pass filtered derivative of the measured joint velocity.

    Per message, with ``dt`` the difference of the stamps and ``T = 1 / (2 pi cutoff)``:
    ``qdd <- qdd + dt / (dt + T) * ((qd - qd_prev) / dt - qdd)`` (a first-order filter, backward Euler).
    The estimate starts at zero; a message that is not newer than the last, or whose derivative overflows, leaves
    it unchanged.
    """

    def __init__(self, dof, cutoff_hz):
        self.time_constant = 1.0 / (2.0 * math.pi * cutoff_hz)
        self.qdd, self.qd = np.zeros(dof), np.zeros(dof)
        self.t = None

    def update(self, t, qd):
        """Take a measurement at ``t`` (s); the reason it was not used, or None."""
        if self.t is not None:
            dt = t - self.t
            if dt <= 0.0:
                return "needs increasing stamps"
            with np.errstate(over="ignore", invalid="ignore"):  # checked on the next line
                qdd = self.qdd + dt / (dt + self.time_constant) * ((qd - self.qd) / dt - self.qdd)
            if not np.isfinite(qdd).all():
                return "the derivative of the velocity is not finite"
            self.qdd = qdd
        self.t = t
        np.copyto(self.qd, qd)  # qd is the merged joint state, which the next message overwrites
        return None


class Outputs:
    """The output messages of one model, built once and refilled per input (rclpy serialises on publish)."""

    def __init__(self, model, wrench_publishers):
        names = model.joint_names
        self.torques = JointState(name=names)
        self.gravity = JointState(name=names)
        self.command = Float64MultiArray()
        command_joints = model.settings["command_joints"]
        self.command_index = (np.array([names.index(j) for j in command_joints], dtype=np.intp)
                              if command_joints else None)
        self.wrench_publishers = [wrench_publishers[j] for j in names] if wrench_publishers else []
        self.wrenches = [WrenchStamped() for _ in self.wrench_publishers]
        for joint, wrench in zip(names, self.wrenches):
            wrench.header.frame_id = model.robot.joints[joint].child
        self.markers = LoadMarkers(model)
        self.listeners_checked = -math.inf  # see InverseDynamicsNode.refresh_listeners
        self.to_gravity = self.to_command = self.to_markers = False
        self.wrench_targets = []



def center_of_mass_marker(point):
    """A 5 cm sphere at the centre of mass ``point`` (a PointStamped) for rviz."""
    marker = Marker(ns="center_of_mass", id=0, type=Marker.SPHERE, action=Marker.ADD, header=point.header)
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = point.point.x, point.point.y, point.point.z
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = 0.05
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.8, 0.0, 0.9
    return marker

class InverseDynamicsNode(DynamicsNode):
    """Subscribes ``/joint_states`` and ``~/trajectory``; publishes the inverse dynamics of each (see module doc)."""

    def __init__(self, **kwargs):
        super().__init__("inverse_dynamics", PARAMETERS, **kwargs)
        depth = self.get_parameter("joint_states_depth").value  # a backlog caught up goes out whole
        self.torques_publisher = self.create_output(JointState, "~/torques", depth)
        self.gravity_publisher = self.create_output(JointState, "~/gravity_torques")
        self.command_publisher = self.create_output(Float64MultiArray, "~/gravity_command")
        self.markers_publisher = self.create_output(MarkerArray, "~/load_markers")
        self.trajectory_publisher = self.create_output(JointTrajectory, "~/trajectory_with_efforts")
        self.request_status_publisher = self.create_output(DiagnosticStatus, "~/request_status")
        self.base, self.base_topics = None, {}
        self.reset_base()
        self.wrench_inputs, self.wrench_subscriptions = None, []
        self.reset_wrench_inputs()
        self.wrench_publishers = {}  # joint name -> publisher of ~/joint_wrenches/<joint>
        self.loop_publishers = {}  # loop name -> publisher of ~/loop_wrenches/<loop>
        self.outputs = self.derivative = None
        self.read_marker_parameters()
        self.trajectories = self.trajectory_violations = 0
        self.external = ExternalTorques(self)
        self.payloads = PayloadEstimates(self)
        self.joint_states_subscription = self.create_subscription(JointState, "/joint_states", self.on_joint_states,
                                                                  depth)
        self.create_subscription(JointTrajectory, "~/trajectory", self.on_trajectory, 10,  # see create_output
                                 event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False))
        self.plans = PlanRequests(self)
        self.retimes = RetimeRequests(self)
        self.start()

    def destroy_node(self):
        self.plans.close()
        self.retimes.close()
        super().destroy_node()

    # -- joint states ------------------------------------------------------------------------------------------

    def on_joint_states(self, msg):
        """Answer a joint state, then those queued behind it (a backlog: the node was held), each without the
        executor's pass over its wait set, which costs as much as the answer: a backlog is caught up twice as fast.
        At most a queue's depth at a time: the other callbacks (a swap, services, timers) come between."""
        self.answer_joint_states(msg)
        subscription = self.joint_states_subscription
        with subscription.handle:
            for _ in range(subscription.qos_profile.depth):
                taken = subscription.handle.take_message(JointState, False)
                if taken is None:
                    return
                self.answer_joint_states(taken[0])

    def answer_joint_states(self, msg):
        start = time.perf_counter()
        if not self.take_joint_states(msg):
            return
        model, out, stamp = self.model, self.outputs, msg.header.stamp
        q, qd = self.joint_states.q, self.joint_states.qd
        try:
            base = self.base.motion(model, stamp_seconds(stamp), q) if self.base is not None else None
            result = model.inverse_dynamics(q, qd, self.acceleration(stamp, qd, model), base,
                                            self.measured_wrenches(model, q))
        except ValueError as exc:  # the torques overflow; a loop that cannot close; a stale or missing base state
            self.reject_input("/joint_states", exc)
            return
        out.torques.header.stamp = stamp
        out.torques.effort = doubles(result.torques)
        if result.q is not None:  # a closed chain's solved tree state
            out.torques.position, out.torques.velocity = doubles(result.q), doubles(result.qd)
        self.torques_publisher.publish(out.torques)
        if result.loop_wrenches is not None:
            self.publish_loop_wrenches(stamp, result.loop_wrenches)
        if base is not None:
            self.publish_base(stamp, result, self.base.frame)
        if self.external.observer is not None:
            problem = self.external.update(model, msg, q, qd)
            if problem:
                self.warn_throttled(problem)
        problem = self.payloads.update(model, msg, q, qd)
        if problem:
            self.warn_throttled(problem)
        self.publish_listened(model, out, stamp, q, result)
        self.check_limits(model, result.torques, "/joint_states")
        self.stats.computed(time.perf_counter() - start)
        self.stats.accepted("/joint_states")

    def acceleration(self, stamp, qd, model):
        """The joint accelerations of parameter ``acceleration_source``: zero, or the filtered derivative of qd."""
        if self.derivative is None:
            return model.input_zeros
        unused = self.derivative.update(stamp_seconds(stamp), qd)
        if unused:
            self.warn_throttled(f"/joint_states: acceleration_source 'differentiate' {unused}; keeping the last "
                                "acceleration estimate")
        return self.derivative.qdd

    def publish_listened(self, model, out, stamp, q, result):
        """The outputs beside ``~/torques``, to the topics somebody listens to (each publish costs tens of
        microseconds), and the effort-limit check."""
        now = time.monotonic()
        if now - out.listeners_checked > LISTENERS_REFRESH:
            self.refresh_listeners(out, now)
        if out.to_gravity or out.to_command:
            gravity = model.gravity_torques(q, self.base.pose() if self.base is not None else None)
            if out.to_gravity:
                out.gravity.header.stamp = stamp
                out.gravity.effort = doubles(gravity)
                self.gravity_publisher.publish(out.gravity)
            if out.to_command:
                out.command.data = doubles(gravity if out.command_index is None else gravity[out.command_index])
                self.command_publisher.publish(out.command)
        if out.wrench_targets:
            self.publish_wrenches(out.wrench_targets, stamp, result.joint_wrenches.tolist())
        if out.to_markers and now - self.last_markers >= self.marker_period:
            self.last_markers = now
            self.markers_publisher.publish(out.markers.update(stamp, result.torques,
                                                              getattr(result, "loop_wrenches", None)))

    def publish_loop_wrenches(self, stamp, loop_wrenches):
        for name, (publisher, message) in self.loop_publishers.items():
            fx, fy, fz, tx, ty, tz = loop_wrenches[name].tolist()
            message.header.stamp = stamp
            force, torque = message.wrench.force, message.wrench.torque
            force.x, force.y, force.z = fx, fy, fz
            torque.x, torque.y, torque.z = tx, ty, tz
            publisher.publish(message)

    def publish_base(self, stamp, result, world_frame):
        """The base outputs of a joint state: ``~/base_wrench`` (odometry) or ``~/base_acceleration``
        (free-floating), both in the base frame, and ``~/center_of_mass`` in the odometry frame."""
        base_frame = self.model.robot.root_link
        if result.mounting_wrench is not None:
            msg = WrenchStamped()
            msg.header.stamp, msg.header.frame_id = stamp, base_frame
            force, torque = msg.wrench.force, msg.wrench.torque
            force.x, force.y, force.z, torque.x, torque.y, torque.z = result.mounting_wrench.tolist()
            self.base_topics["~/base_wrench"].publish(msg)
        if result.base_acceleration is not None:
            msg = AccelStamped()
            msg.header.stamp, msg.header.frame_id = stamp, base_frame
            linear, angular = msg.accel.linear, msg.accel.angular
            linear.x, linear.y, linear.z, angular.x, angular.y, angular.z = result.base_acceleration.tolist()
            self.base_topics["~/base_acceleration"].publish(msg)
        msg = PointStamped()
        msg.header.stamp, msg.header.frame_id = stamp, world_frame
        msg.point.x, msg.point.y, msg.point.z = result.center_of_mass.tolist()
        self.base_topics["~/center_of_mass"].publish(msg)
        self.base_topics["~/center_of_mass_marker"].publish(center_of_mass_marker(msg))

    def on_base_odometry(self, msg):
        self.take_base_message(msg, "~/base_odometry", "on_odometry")

    def on_base_imu(self, msg):
        self.take_base_message(msg, "~/base_imu", "on_imu")

    def take_base_message(self, msg, topic, method):
        if self.base is None or self.model is None:
            return  # base: fixed, or no robot yet (the base link's name is not known)
        try:
            getattr(self.base, method)(msg, self.model.robot)
        except StateError as exc:
            self.reject_input(topic, exc)

    def measured_wrenches(self, model, q):
        """The external wrenches of the sensors heard lately (``{link: wrench}`` in link frames), or None."""
        if self.wrench_inputs is None:
            return None
        robot = model.robot
        full = np.concatenate([rd.neutral(robot)[:7], q]) if robot.has_floating_base else q
        return self.wrench_inputs.wrenches(robot, full)

    def reset_wrench_inputs(self):
        """Subscribe the topics of ``external_wrench_topics`` (and drop the previous ones)."""
        for subscription in self.wrench_subscriptions:
            self.destroy_subscription(subscription)
        entries = self.get_parameter("external_wrench_topics").value
        self.wrench_inputs = (wrench_inputs.ExternalWrenches(entries, self.get_parameter("external_wrench_timeout")
                                                             .value) if entries else None)
        self.wrench_subscriptions = [
            self.create_subscription(WrenchStamped, sensor.topic, lambda msg, s=sensor: self.on_sensor(s, msg), 10)
            for sensor in (self.wrench_inputs.sensors if self.wrench_inputs else [])]

    def on_sensor(self, sensor, msg):
        if self.model is None or self.wrench_inputs is None or sensor not in self.wrench_inputs.sensors:
            return
        try:
            sensor.take(msg, self.model.robot)
        except StateError as exc:
            self.reject_input(sensor.topic, exc)

    def reset_base(self):
        """The base state of parameter ``base`` and its topics: none for a fixed base (see :data:`BASE_TOPICS`)."""
        mode = self.get_parameter("base").value
        source = self.get_parameter("base_acceleration_source").value
        cutoff = self.get_parameter("base_acceleration_cutoff_hz").value
        self.base = None if mode == "fixed" else base_state.BaseState(
            mode, source, self.get_parameter("base_stamp_tolerance").value, lambda n: VelocityDerivative(n, cutoff))
        wanted = {topic for topic, (modes, sources) in BASE_TOPICS.items() if mode in modes and source in sources}
        for topic in set(self.base_topics) - wanted:
            handle = self.base_topics.pop(topic)
            (self.destroy_publisher if topic in BASE_OUTPUTS else self.destroy_subscription)(handle)
        for topic in wanted - set(self.base_topics):
            self.base_topics[topic] = (self.create_output(BASE_OUTPUTS[topic], topic) if topic in BASE_OUTPUTS else
                                       self.create_subscription(BASE_INPUTS[topic][0], topic,
                                                                getattr(self, BASE_INPUTS[topic][1]), 10))

    def refresh_listeners(self, out, now):
        """Note which optional outputs have subscribers (asking costs microseconds: not for every message)."""
        out.to_gravity = self.gravity_publisher.get_subscription_count() > 0
        out.to_command = self.command_publisher.get_subscription_count() > 0
        out.to_markers = self.publish_markers and self.markers_publisher.get_subscription_count() > 0
        out.wrench_targets = [(k, publisher, message) for k, (publisher, message)
                              in enumerate(zip(out.wrench_publishers, out.wrenches))
                              if publisher.get_subscription_count() > 0]
        out.listeners_checked = now

    @staticmethod
    def publish_wrenches(targets, stamp, joint_wrenches):
        for k, publisher, message in targets:
            fx, fy, fz, tx, ty, tz = joint_wrenches[k]
            message.header.stamp = stamp
            force, torque = message.wrench.force, message.wrench.torque
            force.x, force.y, force.z = fx, fy, fz
            torque.x, torque.y, torque.z = tx, ty, tz
            publisher.publish(message)

    # -- trajectories ------------------------------------------------------------------------------------------

    def on_trajectory(self, msg):
        model = self.model
        try:
            if model is None:
                raise StateError("no robot model yet")
            if self.base is not None:
                raise StateError(f"base is '{self.base.mode}': trajectory points carry no base motion; use "
                                 "rd.mounted_inverse_dynamics or rd.free_floating_inverse_dynamics")
            names, points = msg.joint_names, msg.points
            joints = RequestJoints(self, model, names)
            q = np.empty((len(points), len(model.input_names)))  # a closed chain's: its actuated joints
            qd, qdd = np.zeros_like(q), np.zeros_like(q)
            for k, point in enumerate(points):  # one message per point: no way around a loop here
                q[k] = joints.positions_of(point.positions, f"point {k} position")
                qd[k] = joints.rates_of(point.velocities, f"point {k} velocity")
                qdd[k] = joints.rates_of(point.accelerations, f"point {k} acceleration")
        except StateError as exc:
            self.report_request("~/trajectory", msg.header.stamp, refusal=exc)
            return
        efforts = np.zeros((len(points), len(names)))
        if points:
            nanoseconds = [p.time_from_start.sec * 1_000_000_000 + p.time_from_start.nanosec for p in points]
            try:
                inputs, tau = model.trajectory_torques(nanoseconds, q, qd, qdd)
            except ValueError as exc:  # a point the loops cannot reach, a singular pose; times that do not
                self.report_request("~/trajectory", msg.header.stamp, refusal=exc)  # increase, too few points,
                return  # a drive it cannot invert
            columns = model.columns(names)
            efforts[:, columns.given] = inputs[:, columns.joints]
            self.trajectory_violations += self.check_limits(model, tau, "~/trajectory")
        for point, row in zip(points, efforts):
            point.effort = doubles(row)
        self.trajectories += 1
        self.trajectory_publisher.publish(msg)
        self.report_request("~/trajectory", msg.header.stamp, held=joints.held_positions())

    def report_request(self, topic, stamp, refusal=None, held=None):
        """Answer a request on ``topic`` (``~/trajectory``, ``~/plan``, ``~/retime``) with header stamp ``stamp`` on
        ``~/request_status``: accepted with the joints ``held``, or refused (also in the log and diagnostics)."""
        self.request_status_publisher.publish(request_status(self.resolve_topic_name(topic), stamp, refusal, held))
        if refusal is not None:
            self.reject_input(topic, refusal)
        else:
            self.stats.accepted(topic)

    # -- model, parameters, services ---------------------------------------------------------------------------

    def check_parameter(self, name, value):
        if name == "acceleration_source" and value not in ACCELERATION_SOURCES:
            raise ValueError(f"acceleration_source must be one of {', '.join(ACCELERATION_SOURCES)}, got '{value}'")
        if name == "command_joints" and len(set(value)) != len(value):
            raise ValueError(f"command_joints names a joint twice: {list(value)}")
        if name == "external_wrench_topics":
            wrench_inputs.parse(value)
        base_state.check_parameter(name, value)
        external_torques.check_parameter(name, value)

    @staticmethod
    def floating_base(values):
        return values["base"] != "fixed"

    @staticmethod
    def check_names(robot, values):
        unknown = [j for j in values["command_joints"] if j not in robot.joint_names]
        if unknown:
            raise ModelError(f"command_joints: robot '{robot.name}' has no movable joint "
                             f"{', '.join(repr(j) for j in unknown)} (its joints: {', '.join(robot.joint_names)})")
        wrench_inputs.check_links(robot, values["external_wrench_topics"])
        external_torques.check_names(robot, values)
        payload_estimates.check_names(robot, values)
        if values["base"] != "fixed" and values["observer_gain"] > 0:
            raise ModelError("observer_gain: the momentum observer takes a fixed base (its state has no base "
                             f"motion); set observer_gain to 0 or base to fixed (base is '{values['base']}')")

    @staticmethod
    def check_model(model, values):
        model.warm_up()

    def model_changed(self, model, previous):
        self.sync_wrench_publishers(model)
        self.sync_loop_publishers(model)
        if previous is not None and previous.joint_names != model.joint_names:
            self.markers_publisher.publish(deleting_all())
        self.outputs = Outputs(model, self.wrench_publishers)
        if previous is None or previous.joint_names != model.joint_names:
            self.reset_derivative(model)
        self.external.configure(model)
        self.payloads.configure(model)

    def sync_loop_publishers(self, model):
        """One ``~/loop_wrenches/<loop>`` publisher per loop closure of ``model``; the Newton guess restarts."""
        closures = {c.name: c for c in model.robot.loops.closures} if model.robot.loops is not None else {}
        for name in list(self.loop_publishers):
            self.destroy_publisher(self.loop_publishers.pop(name)[0])
        for name, closure in closures.items():
            message = WrenchStamped()
            message.header.frame_id = closure.link_b
            self.loop_publishers[name] = (self.create_output(WrenchStamped, f"~/loop_wrenches/{topic_token(name)}"),
                                          message)

    def sync_wrench_publishers(self, model):
        """One publisher per joint of ``model`` while ``publish_wrenches`` is on, none otherwise."""
        wanted = model.joint_names if model is not None and self.get_parameter("publish_wrenches").value else []
        for joint in set(self.wrench_publishers) - set(wanted):
            self.destroy_publisher(self.wrench_publishers.pop(joint))
        for joint in wanted:
            if joint not in self.wrench_publishers:
                self.wrench_publishers[joint] = self.create_output(WrenchStamped,
                                                                   f"~/joint_wrenches/{topic_token(joint)}")

    def reset_derivative(self, model):
        differentiate = self.get_parameter("acceleration_source").value == "differentiate"
        cutoff = self.get_parameter("acceleration_cutoff_hz").value
        self.derivative = (VelocityDerivative(len(model.input_names), cutoff)
                           if differentiate and model is not None else None)

    def parameters_changed(self, names):
        model = self.model
        if names & {"acceleration_source", "acceleration_cutoff_hz"}:
            self.reset_derivative(model)
        if "publish_wrenches" in names and model is not None:
            self.sync_wrench_publishers(model)
            self.outputs = Outputs(model, self.wrench_publishers)
        if names & {"publish_markers", "marker_rate_hz"}:
            self.read_marker_parameters()
        if names & {p.name for p in base_state.PARAMETERS}:
            self.reset_base()
        if names & {p.name for p in wrench_inputs.PARAMETERS}:
            self.reset_wrench_inputs()

    def read_marker_parameters(self):
        self.publish_markers = self.get_parameter("publish_markers").value
        self.marker_period = 1.0 / self.get_parameter("marker_rate_hz").value
        self.last_markers = -math.inf
        if self.outputs is not None:
            self.outputs.listeners_checked = -math.inf

    def reset(self):
        self.reset_derivative(self.model)
        if self.model is not None:
            self.model.loop_guess = None
        self.last_markers = -math.inf
        self.trajectories = self.trajectory_violations = 0
        self.external.reset()
        if self.model is not None:
            self.payloads.configure(self.model)
        return "statistics, the acceleration filter, the observer and the payload estimate reset"

    def diagnostic_values(self):
        return {"acceleration source": self.get_parameter("acceleration_source").value,
                "base": self.get_parameter("base").value,
                "silent wrench sensors": ", ".join(self.wrench_inputs.silent) if self.wrench_inputs else "none",
                "trajectories": self.trajectories,
                "trajectory points over effort limits": self.trajectory_violations} | self.plans.diagnostic_values() \
            | self.retimes.diagnostic_values() \
            | self.external.diagnostic_values() | self.payloads.diagnostic_values()

    def diagnostic_problems(self):
        return self.external.diagnostic_problems() + self.payloads.diagnostic_problems()


def main(args=None):
    return spin(InverseDynamicsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
