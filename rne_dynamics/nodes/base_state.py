"""The moving base of the ``inverse_dynamics`` node (parameter ``base``): where its state comes from and what the
node publishes about it.

- ``fixed`` (default): the root link is fixed to the world, as without this module.
- ``odometry``: a robot on a base whose motion is measured (a mobile manipulator, a legged robot, an arm on a ship).
  The base's pose and twist come from ``~/base_odometry`` (``nav_msgs/Odometry``; its pose is the base frame in
  ``header.frame_id``, its twist in ``child_frame_id``, the base frame: the free-flyer's convention); its
  acceleration from ``~/base_imu`` (``sensor_msgs/Imu`` in the base frame, the accelerometer at the base frame's
  origin, where it measures no centripetal term of the base's rotation: ``linear_acceleration`` is the specific
  force ``a - g``, so ``a = f + R^T g`` with ``R`` the odometry's orientation and ``g`` parameter ``gravity`` in the
  odometry frame; the angular acceleration is the filtered derivative of its ``angular_velocity``) or, with
  ``base_acceleration_source: differentiate``, the filtered derivative of the odometry twist. The joint loads are
  :func:`rne_dynamics.mounted_inverse_dynamics`; ``~/base_wrench`` is its mounting wrench: the wrench the base's
  support (the platform under an arm, the ground contacts of a legged robot) exerts on the base link, base frame.
- ``free_floating``: nothing holds the base (a space robot, a robot in flight): the joint motion moves it.
  :func:`rne_dynamics.free_floating_inverse_dynamics` gives the joint torques and ``~/base_acceleration`` (the time
  derivative of the base twist, base frame, as the library's). The base's pose and twist come from
  ``~/base_odometry`` once it publishes; until then the base is taken at rest at the origin.

Both modes publish ``~/center_of_mass`` (``PointStamped`` in the odometry frame) and ``~/center_of_mass_marker`` (a
sphere there for rviz). Changing ``base`` at run time creates and removes the topics (:class:`BaseTopics`). A joint
state is combined with
the latest base messages only if their stamps are within ``base_stamp_tolerance`` of its own: else nothing is
published and the reason goes to the log and diagnostics (a stale or missing base state). A base message that is
not finite, has a non-unit quaternion or names another frame than the base link is refused with the reason; the last
good one stays in use.
"""

import numpy as np
from geometry_msgs.msg import AccelStamped, PointStamped, WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu
from visualization_msgs.msg import Marker

import rne_dynamics as rd

from ..algorithms.inputs import QUATERNION_TOLERANCE
from ..errors import StateError
from .accelerations import VelocityDerivative
from .messages import set_vectors, stamp_seconds
from .model import AT_REST, NEUTRAL_POSE, BaseMotion
from .parameters import DOUBLE, STRING, Spec

BASE_MODES = ("fixed", "odometry", "free_floating")
ACCELERATION_SOURCES = ("imu", "differentiate")

PARAMETERS = (
    Spec("base", "fixed", STRING, "how the base moves: fixed (the root link is the world's), odometry (base state "
         "from ~/base_odometry and ~/base_imu) or free_floating (the joint motion moves it)",
         constraints="fixed | odometry | free_floating", rebuilds_model=True),
    Spec("base_acceleration_source", "imu", STRING, "base: odometry: the base acceleration from ~/base_imu, or "
         "differentiate (the filtered derivative of the ~/base_odometry twist)", constraints="imu | differentiate"),
    Spec("base_acceleration_cutoff_hz", 20.0, DOUBLE, "cutoff of the base's angular-velocity (or twist) derivative "
         "filter (Hz)", 0.01, 1.0e4),
    Spec("base_stamp_tolerance", 0.02, DOUBLE, "largest stamp difference between a joint state and the base messages "
         "it is combined with (s)", 0.0, 10.0),
)


def check_parameter(name, value):
    """Raise ValueError for a bad value of one of :data:`PARAMETERS`."""
    if name == "base" and value not in BASE_MODES:
        raise ValueError(f"base must be one of {', '.join(BASE_MODES)}, got '{value}'")
    if name == "base_acceleration_source" and value not in ACCELERATION_SOURCES:
        raise ValueError(f"base_acceleration_source must be one of {', '.join(ACCELERATION_SOURCES)}, got '{value}'")


def vector3(v):
    return np.array([v.x, v.y, v.z])


class BaseState:
    """The base messages received so far, and the base motion they give a joint state."""

    def __init__(self, mode, acceleration_source, tolerance, cutoff_hz):
        """``cutoff_hz``: of the filters that differentiate the twist and the angular velocity."""
        self.mode, self.source, self.tolerance = mode, acceleration_source, tolerance
        self.odometry = None  # (t, pose (7,), twist (6,), world frame)
        self.imu = None  # (t, specific force (3,))
        self.twist_rate, self.angular_rate = VelocityDerivative(6, cutoff_hz), VelocityDerivative(3, cutoff_hz)
        self.frame = ""  # the odometry frame of the last motion

    # -- messages ----------------------------------------------------------------------------------------------

    @staticmethod
    def check_frame(frame, robot, what):
        if frame and frame != robot.root_link:
            raise StateError(f"{what} '{frame}' is not the base link '{robot.root_link}'")

    def on_odometry(self, msg, robot):
        """Keep a checked odometry message (:class:`StateError` names what is wrong with a refused one)."""
        self.check_frame(msg.child_frame_id, robot, "child_frame_id")
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        pose = np.array([p.x, p.y, p.z, o.x, o.y, o.z, o.w])
        twist = np.concatenate([vector3(msg.twist.twist.linear), vector3(msg.twist.twist.angular)])
        if not (np.isfinite(pose).all() and np.isfinite(twist).all()):
            raise StateError(f"pose or twist is not finite: pose {pose.tolist()}, twist {twist.tolist()}")
        norm = np.linalg.norm(pose[3:])
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise StateError(f"the orientation [x y z w] = {pose[3:].tolist()} has norm {norm:.9g}, not a unit "
                             "quaternion")
        pose[3:] /= norm
        t = stamp_seconds(msg.header.stamp)
        self.odometry = (t, pose, twist, msg.header.frame_id)
        self.twist_rate.update(t, twist)

    def on_imu(self, msg, robot):
        """Keep a checked IMU message (:class:`StateError` names what is wrong with a refused one)."""
        self.check_frame(msg.header.frame_id, robot, "frame_id")
        force, angular = vector3(msg.linear_acceleration), vector3(msg.angular_velocity)
        if not (np.isfinite(force).all() and np.isfinite(angular).all()):
            raise StateError(f"linear_acceleration {force.tolist()} or angular_velocity {angular.tolist()} is not "
                             "finite")
        t = stamp_seconds(msg.header.stamp)
        self.imu = (t, force)
        self.angular_rate.update(t, angular)

    # -- the base for a joint state ----------------------------------------------------------------------------

    def fresh(self, kept, topic, t):
        """``kept`` if it is within the stamp tolerance of the joint state at ``t``, else the reason as an error."""
        if kept is None:
            raise StateError(f"no base state: nothing received on {topic} yet")
        if abs(kept[0] - t) > self.tolerance:
            raise StateError(f"stale base state: the last {topic} is {kept[0] - t:+.3f} s from the joint state "
                             f"(base_stamp_tolerance {self.tolerance:g} s)")
        return kept

    def motion(self, model, t, q):
        """The base's :class:`~.model.BaseMotion` at the joint state at ``t`` (positions ``q``), from messages within
        the stamp tolerance (:class:`StateError` says why there is none); its odometry frame kept in ``frame``.
        Free-floating, before any odometry: at rest at the origin."""
        if self.mode == "free_floating" and self.odometry is None:
            self.frame = ""
            return BaseMotion(NEUTRAL_POSE, AT_REST.twist)
        _, pose, twist, self.frame = self.fresh(self.odometry, "~/base_odometry", t)
        if self.mode == "free_floating":
            return BaseMotion(pose, twist)
        if self.source == "differentiate":
            return BaseMotion(pose, twist, self.twist_rate.qdd)
        _, force = self.fresh(self.imu, "~/base_imu", t)
        robot = model.robot
        R = rd.frame_placement(robot, np.concatenate([pose, q]), robot.root_link)[:3, :3]
        classical = force + R.T @ model.gravity  # the base origin's acceleration, base frame
        linear = classical - np.cross(twist[3:], twist[:3])  # the derivative of the twist's linear part
        return BaseMotion(pose, twist, np.concatenate([linear, self.angular_rate.qdd]))

    def pose(self):
        """The base's last pose (upright at the origin before any odometry): where gravity torques hold the joints."""
        return self.odometry[1] if self.odometry is not None else NEUTRAL_POSE


#: The topics of a moving base: which ``base`` modes and ``base_acceleration_source`` values use each.
TOPICS = {
    "~/base_odometry": (("odometry", "free_floating"), ACCELERATION_SOURCES),
    "~/base_imu": (("odometry",), ("imu",)),
    "~/base_wrench": (("odometry",), ACCELERATION_SOURCES),
    "~/base_acceleration": (("free_floating",), ACCELERATION_SOURCES),
    "~/center_of_mass": (("odometry", "free_floating"), ACCELERATION_SOURCES),
    "~/center_of_mass_marker": (("odometry", "free_floating"), ACCELERATION_SOURCES),
}
OUTPUTS = {"~/base_wrench": WrenchStamped, "~/base_acceleration": AccelStamped, "~/center_of_mass": PointStamped,
           "~/center_of_mass_marker": Marker}
INPUTS = {"~/base_odometry": (Odometry, "on_odometry"), "~/base_imu": (Imu, "on_imu")}


def center_of_mass_marker(point):
    """A 5 cm sphere at the centre of mass ``point`` (a PointStamped) for rviz."""
    marker = Marker(ns="center_of_mass", id=0, type=Marker.SPHERE, action=Marker.ADD, header=point.header)
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = point.point.x, point.point.y, point.point.z
    marker.pose.orientation.w = 1.0
    marker.scale.x = marker.scale.y = marker.scale.z = 0.05
    marker.color.r, marker.color.g, marker.color.b, marker.color.a = 1.0, 0.8, 0.0, 0.9
    return marker


class BaseTopics:
    """The base state of ``node``'s parameter ``base`` (``state``: a :class:`BaseState`, None for a fixed base) and
    the topics it reads and writes (:data:`TOPICS`)."""

    def __init__(self, node):
        self.node, self.state, self.handles = node, None, {}
        self.configure()

    def configure(self):
        """The base state and topics of the parameters as they are now (the last ones dropped)."""
        parameter = self.node.get_parameter
        mode, source = parameter("base").value, parameter("base_acceleration_source").value
        self.state = None if mode == "fixed" else BaseState(mode, source, parameter("base_stamp_tolerance").value,
                                                            parameter("base_acceleration_cutoff_hz").value)
        wanted = {topic for topic, (modes, sources) in TOPICS.items() if mode in modes and source in sources}
        for topic in set(self.handles) - wanted:
            handle = self.handles.pop(topic)
            (self.node.destroy_publisher if topic in OUTPUTS else self.node.destroy_subscription)(handle)
        for topic in wanted - set(self.handles):
            self.handles[topic] = (self.node.create_output(OUTPUTS[topic], topic) if topic in OUTPUTS else
                                   self.node.create_subscription(INPUTS[topic][0], topic,
                                                                 getattr(self, INPUTS[topic][1]), 10))

    def on_odometry(self, msg):
        self.take(msg, "~/base_odometry", "on_odometry")

    def on_imu(self, msg):
        self.take(msg, "~/base_imu", "on_imu")

    def take(self, msg, topic, method):
        model = self.node.model
        if self.state is None or model is None:
            return  # base: fixed, or no robot yet (the base link's name is not known)
        try:
            getattr(self.state, method)(msg, model.robot)
        except StateError as exc:
            self.node.reject_input(topic, exc)

    def publish(self, stamp, result, base_frame):
        """The base outputs of a joint state's :class:`~.model.Loads` ``result``: ``~/base_wrench`` (odometry) or
        ``~/base_acceleration`` (free-floating), both in the base frame ``base_frame``, and ``~/center_of_mass`` in
        the odometry frame."""
        if result.mounting_wrench is not None:
            msg = WrenchStamped()
            msg.header.stamp, msg.header.frame_id = stamp, base_frame
            set_vectors(msg.wrench.force, msg.wrench.torque, result.mounting_wrench.tolist())
            self.handles["~/base_wrench"].publish(msg)
        if result.base_acceleration is not None:
            msg = AccelStamped()
            msg.header.stamp, msg.header.frame_id = stamp, base_frame
            set_vectors(msg.accel.linear, msg.accel.angular, result.base_acceleration.tolist())
            self.handles["~/base_acceleration"].publish(msg)
        msg = PointStamped()
        msg.header.stamp, msg.header.frame_id = stamp, self.state.frame
        msg.point.x, msg.point.y, msg.point.z = result.center_of_mass.tolist()
        self.handles["~/center_of_mass"].publish(msg)
        self.handles["~/center_of_mass_marker"].publish(center_of_mass_marker(msg))
