"""The inverse node's answers to a joint state, each stamped with its stamp.

``~/torques`` goes out first (what a controller waits for; a closed chain's with every tree joint's solved position
and velocity), with a closed chain's ``~/loop_wrenches/<loop>``. Then ``~/gravity_torques``, ``~/gravity_command``,
``~/joint_wrenches/<joint>`` and, at most at ``marker_rate_hz``, ``~/load_markers``: these four only while somebody
subscribes to them (every publish costs CPU time at 1 kHz; a new subscriber is noticed within
:data:`LISTENERS_REFRESH`). A joint or loop name that is not a valid ROS name token has its other characters
replaced by ``_`` in its topic. The messages are built once per model, with the model's publishers, on the model
worker's thread before its swap (:meth:`JointStateOutputs.prepare`; again there when ``publish_wrenches`` is set), and
refilled per input (rclpy serialises on publish).
"""
import math
import re
import time
from functools import partial

import numpy as np
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from visualization_msgs.msg import MarkerArray

from ..errors import ModelError
from .common import Publishers
from .markers import LoadMarkers, deleting_all
from .messages import doubles, set_vectors
from .parameters import BOOL, DOUBLE, STRINGS, Spec

LISTENERS_REFRESH = 0.1  # s: a new subscriber of an optional output gets its first message at most this late

COMMAND_JOINTS = Spec("command_joints", None, STRINGS, "joint order of ~/gravity_command (the effort controller's "
                      "joints); empty: joint_names order", constraints="movable joints of the robot, each at most "
                      "once", rebuilds_model=True)
PUBLISHING = (
    Spec("publish_wrenches", True, BOOL, "publish ~/joint_wrenches/<joint> (WrenchStamped, child link frame)"),
    Spec("publish_markers", True, BOOL, "publish ~/load_markers (MarkerArray)"),
    Spec("marker_rate_hz", 10.0, DOUBLE, "highest rate of ~/load_markers (Hz)", 0.1, 1.0e4),
)


def check_parameter(name, value):
    if name == "command_joints" and len(set(value)) != len(value):
        raise ValueError(f"command_joints names a joint twice: {list(value)}")


def check_names(robot, values):
    unknown = [j for j in values["command_joints"] if j not in robot.joint_names]
    if unknown:
        raise ModelError(f"command_joints: robot '{robot.name}' has no movable joint "
                         f"{', '.join(repr(j) for j in unknown)} (its joints: {', '.join(robot.joint_names)})")


def topic_token(name):
    """``name`` as one ROS topic name token: letters, digits and ``_``, not starting with a digit."""
    token = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + token if not token or token[0].isdigit() else token


def fill_wrench(message, stamp, wrench):
    """Stamp ``message`` (a WrenchStamped) and write ``wrench`` (``[fx, fy, fz, tx, ty, tz]``, floats) into it."""
    message.header.stamp = stamp
    set_vectors(message.wrench.force, message.wrench.torque, wrench)
    return message


class Messages:
    """The output messages of one model, the publishers it holds (``~/joint_wrenches/<joint>`` while
    ``wrenches_on``, ``~/loop_wrenches/<loop>``) and which of the optional outputs have subscribers."""

    def __init__(self, model, wrenches_on, publishers):
        names = model.joint_names
        self.torques = JointState(name=names)
        self.gravity = JointState(name=names)
        self.command = Float64MultiArray()
        command_joints = model.settings["command_joints"]
        self.command_index = (np.array([names.index(j) for j in command_joints], dtype=np.intp)
                              if command_joints else None)
        self.wrenches_on, self.publishers = wrenches_on, publishers
        closures = model.robot.loops.closures if model.robot.loops is not None else ()
        self.topics = ([f"~/joint_wrenches/{topic_token(j)}" for j in names] if wrenches_on else []) + [
            f"~/loop_wrenches/{topic_token(closure.name)}" for closure in closures]
        made = publishers.acquire(self.topics)
        self.wrench_publishers = made[:len(made) - len(closures)]
        self.wrenches = [WrenchStamped() for _ in self.wrench_publishers]
        for joint, wrench in zip(names, self.wrenches):
            wrench.header.frame_id = model.robot.joints[joint].child
        self.loops = [(closure.name, publisher, WrenchStamped())
                      for closure, publisher in zip(closures, made[len(self.wrench_publishers):])]
        for closure, (_, _, message) in zip(closures, self.loops):
            message.header.frame_id = closure.link_b
        self.markers = LoadMarkers(model)
        self.listeners_checked = -math.inf  # see JointStateOutputs.refresh_listeners
        self.to_gravity = self.to_command = self.to_markers = False
        self.wrench_targets = []

    def release(self):
        """Let go of the publishers (the model is out of service)."""
        self.publishers.release(self.topics)


class JointStateOutputs:
    """The publishers of ``node``'s answers to joint states (module docstring) and the messages of its model."""

    def __init__(self, node, depth):
        self.node = node
        self.torques_publisher = node.create_output(JointState, "~/torques", depth)  # a backlog goes out whole
        self.gravity_publisher = node.create_output(JointState, "~/gravity_torques")
        self.command_publisher = node.create_output(Float64MultiArray, "~/gravity_command")
        self.markers_publisher = node.create_output(MarkerArray, "~/load_markers")
        self.publishers = Publishers(node, WrenchStamped)  # ~/joint_wrenches/<joint>, ~/loop_wrenches/<loop>
        self.messages = None
        self.read_marker_parameters()

    def prepare(self, model):
        """The :class:`Messages` of ``model`` and its publishers, made beside the data path (any thread)."""
        return Messages(model, self.node.get_parameter("publish_wrenches").value, self.publishers)

    def configure(self, model, previous, messages):
        """Serve ``model``, which replaces ``previous`` (None at first), with its prepared ``messages``."""
        if previous is not None and previous.joint_names != model.joint_names:
            self.markers_publisher.publish(deleting_all())
        old, self.messages = self.messages, messages
        if old is not None:
            self.node.beside(old.release)
        if messages.wrenches_on != self.node.get_parameter("publish_wrenches").value:  # set while it was prepared
            self.parameters_changed({"publish_wrenches"}, model)

    def parameters_changed(self, names, model):
        if "publish_wrenches" in names and model is not None:  # its publishers made off the executor
            self.node.beside_then(partial(self.prepare, model), partial(self.rewire, model))
        if names & {"publish_markers", "marker_rate_hz"}:
            self.read_marker_parameters()

    def rewire(self, model, messages):
        """Serve ``model`` with the ``messages`` prepared for a new ``publish_wrenches``, if it is still in service
        (else the model that replaced it came with messages of its own)."""
        if self.node.model is model:
            self.configure(model, model, messages)
        else:
            self.node.beside(messages.release)

    def read_marker_parameters(self):
        self.publish_markers = self.node.get_parameter("publish_markers").value
        self.marker_period = 1.0 / self.node.get_parameter("marker_rate_hz").value
        self.last_markers = -math.inf
        if self.messages is not None:
            self.messages.listeners_checked = -math.inf

    def publish_torques(self, stamp, result):
        """``~/torques`` of the :class:`~.model.Loads` ``result``, and a closed chain's loop wrenches."""
        torques = self.messages.torques
        torques.header.stamp = stamp
        torques.effort = doubles(result.torques)
        if result.q is not None:  # a closed chain's solved tree state
            torques.position, torques.velocity = doubles(result.q), doubles(result.qd)
        self.torques_publisher.publish(torques)
        if result.loop_wrenches is not None:
            for name, publisher, message in self.messages.loops:
                publisher.publish(fill_wrench(message, stamp, result.loop_wrenches[name].tolist()))

    def publish_listened(self, model, stamp, q, result, base_pose):
        """The outputs beside ``~/torques``, to the topics somebody listens to (each publish costs tens of
        microseconds); gravity torques with a moving base at ``base_pose`` (None: fixed)."""
        out = self.messages
        now = time.monotonic()
        if now - out.listeners_checked > LISTENERS_REFRESH:
            self.refresh_listeners(out, now)
        if out.to_gravity or out.to_command:
            gravity = model.gravity_torques(q, base_pose)
            if out.to_gravity:
                out.gravity.header.stamp = stamp
                out.gravity.effort = doubles(gravity)
                self.gravity_publisher.publish(out.gravity)
            if out.to_command:
                out.command.data = doubles(gravity if out.command_index is None else gravity[out.command_index])
                self.command_publisher.publish(out.command)
        if out.wrench_targets:
            joint_wrenches = result.joint_wrenches.tolist()
            for k, publisher, message in out.wrench_targets:
                publisher.publish(fill_wrench(message, stamp, joint_wrenches[k]))
        if out.to_markers and now - self.last_markers >= self.marker_period:
            self.last_markers = now
            self.markers_publisher.publish(out.markers.update(stamp, result.torques, result.loop_wrenches))

    def refresh_listeners(self, out, now):
        """Note which optional outputs have subscribers (asking costs microseconds: not for every message)."""
        out.to_gravity = self.gravity_publisher.get_subscription_count() > 0
        out.to_command = self.command_publisher.get_subscription_count() > 0
        out.to_markers = self.publish_markers and self.markers_publisher.get_subscription_count() > 0
        out.wrench_targets = [(k, publisher, message) for k, (publisher, message)
                              in enumerate(zip(out.wrench_publishers, out.wrenches))
                              if publisher.get_subscription_count() > 0]
        out.listeners_checked = now

    def reset(self):
        self.last_markers = -math.inf
