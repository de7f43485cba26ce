"""External joint torques in the inverse dynamics node: :class:`rne_dynamics.MomentumObserver` on ``/joint_states``.

While ``observer_gain > 0``, each joint state's measured ``effort`` (the joint torques) with its positions and
velocities advances the observer by the difference of the stamps (with ``observer_effort_topic`` set, the latest
``JointState`` efforts on that topic instead: a controller's command, a torque sensor's). ``~/external_torques``
(``JointState``, stamp of the input) carries the estimate, and ``~/estimated_wrench`` (``WrenchStamped``) the
least-squares contact wrench ``w`` with ``J^T w`` nearest the estimate (``J`` the ``local`` Jacobian of
``observer_wrench_link``, in that link's frame) when that parameter names a link. Without efforts nothing is
published and diagnostics say why; a stamp that does not increase restarts the observer. An estimate above
``observer_thresholds`` is a collision: a diagnostics WARN naming the joints.
"""
import math

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.exceptions import NameValidationException
from rclpy.validate_topic_name import validate_topic_name
from sensor_msgs.msg import JointState

import rne_dynamics as rd

from ..errors import ModelError, StateError
from .messages import doubles, stamp_seconds
from .outputs import fill_wrench
from .parameters import DOUBLE, DOUBLES, PER_JOINT, STRING, Spec, joint_array, named_link, per_joint

PARAMETERS = (
    Spec("observer_gain", 0.0, DOUBLE, "momentum observer gain (1/s): external joint torques from the measured "
         "effort of /joint_states on ~/external_torques; 0: off", 0.0, 1.0e4, rebuilds_model=True),
    Spec("observer_thresholds", None, DOUBLES, "|external torque| per joint above which a collision is reported "
         "(diagnostics WARN); empty: never", constraints=PER_JOINT + "; >= 0", rebuilds_model=True, per_joint=True),
    Spec("observer_wrench_link", "", STRING, "link whose contact wrench is estimated on ~/estimated_wrench; "
         "empty: none", rebuilds_model=True),
    Spec("observer_effort_topic", "", STRING, "JointState topic whose latest efforts are the observer's joint "
         "torques; empty: the effort of /joint_states", rebuilds_model=True),
)


def check_parameter(name, value):
    if name == "observer_gain" and not (math.isfinite(value) and value >= 0.0):
        raise ValueError(f"observer_gain must be finite and >= 0 (1/s; 0: off), got {value}")
    if name == "observer_thresholds" and not all(math.isfinite(x) and x >= 0 for x in value):
        raise ValueError(f"observer_thresholds must be finite and >= 0, got {list(value)}")
    if name == "observer_effort_topic" and value:
        try:
            validate_topic_name(value)
        except NameValidationException as exc:
            raise ValueError(f"observer_effort_topic: {' '.join(str(exc).split())}") from None


def check_names(robot, values):
    per_joint("observer_thresholds", values["observer_thresholds"], robot)
    named_link("observer_wrench_link", values, robot)
    if values["base"] != "fixed" and values["observer_gain"] > 0:
        raise ModelError("observer_gain: the momentum observer takes a fixed base (its state has no base "
                         f"motion); set observer_gain to 0 or base to fixed (base is '{values['base']}')")


class ExternalTorques:
    """The observer of one model and its outputs (module docstring)."""

    def __init__(self, node):
        self.node = node
        self.torques_publisher = node.create_output(JointState, "~/external_torques")
        self.wrench_publisher = node.create_output(WrenchStamped, "~/estimated_wrench")
        self.observer = None
        self.problem = ""        # why nothing is published, for diagnostics
        self.colliding = set()   # joints over their threshold since the last diagnostics
        self.collisions = 0
        self.effort_topic, self.effort_subscription, self.latest_effort = "", None, None

    @staticmethod
    def prepare(model):
        """The observer of ``model`` from its parameter values (None when ``observer_gain`` is 0), its first update
        made (its code loaded) beside the data path."""
        settings = model.settings
        if settings["observer_gain"] <= 0.0:
            return None
        thresholds = joint_array("observer_thresholds", settings, model.robot, math.inf)
        observer = rd.MomentumObserver(model.robot, settings["observer_gain"], thresholds=thresholds,
                                       gravity=model.gravity)
        observer.update(model.zeros, model.zeros, model.zeros, 0.0)
        observer.reset()
        return observer

    def configure(self, model, observer):
        """Serve ``model`` with its prepared ``observer``."""
        settings = model.settings
        self.observer = observer
        self.problem = ""
        self.message = JointState(name=model.joint_names)
        self.link = settings["observer_wrench_link"]
        self.wrench = WrenchStamped()
        self.wrench.header.frame_id = self.link
        self.stamp = None
        topic = settings["observer_effort_topic"] if self.observer is not None else ""
        if topic != self.effort_topic:
            if self.effort_subscription is not None:
                self.node.destroy_subscription(self.effort_subscription)
            self.effort_subscription = (self.node.create_subscription(JointState, topic, self.on_effort, 10)
                                        if topic else None)
            self.effort_topic, self.latest_effort = topic, None

    def on_effort(self, msg):
        self.latest_effort = msg

    def reset(self):
        if self.observer is not None:
            self.observer.reset()
        self.stamp = None
        self.collisions = 0

    def update(self, model, msg, q, qd):
        """Advance by one joint state and publish; a reason to warn about, or None."""
        source = self.latest_effort if self.effort_topic else msg
        if source is None or len(source.effort) == 0:
            where = f"no effort on {self.effort_topic} yet" if self.effort_topic else "/joint_states carry no effort"
            self.problem = f"observer on but {where}: no ~/external_torques"
            self.reset()
            return self.problem
        try:
            tau = model.gather(source.name, source.effort, "effort")
        except StateError as exc:
            self.reset()
            return f"observer: {exc}"
        stamp = stamp_seconds(msg.header.stamp)
        if self.stamp is not None and not stamp > self.stamp:
            self.reset()
            return "observer: joint state stamps do not increase; the observer restarts"
        first = self.stamp is None
        estimate = self.observer.update(q, qd, tau, 0.0 if first else stamp - self.stamp)
        self.stamp = stamp
        self.problem = ""
        if first:  # the momentum is recorded, no estimate yet
            return None
        self.message.header.stamp = msg.header.stamp
        self.message.effort = doubles(estimate)
        self.torques_publisher.publish(self.message)
        if self.link:
            J = rd.frame_jacobian(model.robot, q, self.link, reference="local")
            w = np.linalg.lstsq(J.T, estimate, rcond=None)[0]
            self.wrench_publisher.publish(fill_wrench(self.wrench, msg.header.stamp, w.tolist()))
        if self.observer.in_collision:
            self.collisions += 1
            self.colliding.update(name for name, hit in zip(model.joint_names, self.observer.collision) if hit)
        return None

    def diagnostic_problems(self):
        """Problems for the diagnostics status (the collision set starts again with each status)."""
        problems = [self.problem] if self.problem else []
        if self.colliding:
            problems.append("collision: external torque above observer_thresholds on " +
                            ", ".join(sorted(self.colliding)))
            self.colliding = set()
        return problems

    def diagnostic_values(self):
        return {"observer gain [1/s]": 0.0 if self.observer is None else float(self.observer.gain[0]),
                "collisions": self.collisions}
