"""External wrenches measured at run time for the ``inverse_dynamics`` node (parameter ``external_wrench_topics``): a
wrist or foot force/torque sensor publishing ``geometry_msgs/WrenchStamped``.

Each entry ``link=topic`` subscribes ``topic``; its latest wrench acts ON ``link`` BY the environment (the
library's ``external_wrenches`` convention). The message's ``frame_id`` says in which link's frame the wrench is
written, torque about that frame's origin (empty: ``link``'s own); it is moved to ``link``'s frame by the
kinematics at the joint state's configuration. A sensor silent for ``external_wrench_timeout`` seconds is dropped
from the sum (and named in diagnostics) until it publishes again. A message that is not finite or whose
``frame_id`` is not a link of the robot is refused with the reason; the sensor's last good wrench is kept.
"""
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped

import rne_dynamics as rd

from ..errors import ModelError, StateError
from .parameters import DOUBLE, STRINGS, Spec

PARAMETERS = (
    Spec("external_wrench_topics", None, STRINGS, "measured external wrenches: entries link=topic "
         "(geometry_msgs/WrenchStamped ON link BY the environment, in frame_id's frame; empty frame_id: link's)",
         constraints="link=topic, each link a link of the robot, each at most once", rebuilds_model=True),
    Spec("external_wrench_timeout", 0.5, DOUBLE, "a sensor silent this long (s) is dropped from the sum",
         0.001, 3600.0),
)


def parse(entries):
    """``{link: topic}`` from ``link=topic`` entries; ValueError naming a bad one."""
    out = {}
    for entry in entries:
        link, sep, topic = entry.partition("=")
        link, topic = link.strip(), topic.strip()
        if not sep or not link or not topic:
            raise ValueError(f"external_wrench_topics entry '{entry}' is not link=topic")
        if link in out:
            raise ValueError(f"external_wrench_topics names link '{link}' twice")
        out[link] = topic
    return out


def check_links(robot, entries):
    """ModelError for a link the robot does not have."""
    unknown = [link for link in parse(entries) if link not in robot.link_frames]
    if unknown:
        raise ModelError(f"external_wrench_topics: robot '{robot.name}' has no link "
                         f"{', '.join(repr(link) for link in unknown)}")


class Sensor:
    """One topic's latest good wrench: ``(frame, [f; tau])`` and when it arrived (monotonic seconds)."""

    def __init__(self, link, topic):
        self.link, self.topic = link, topic
        self.frame, self.wrench, self.received = link, None, -np.inf

    def take(self, msg, robot):
        """Keep a checked message (:class:`StateError` says why one is refused)."""
        frame = msg.header.frame_id or self.link
        if frame not in robot.link_frames:
            raise StateError(f"frame_id '{frame}' is not a link of robot '{robot.name}'")
        f, t = msg.wrench.force, msg.wrench.torque
        wrench = np.array([f.x, f.y, f.z, t.x, t.y, t.z])
        if not np.isfinite(wrench).all():
            raise StateError(f"the wrench {wrench.tolist()} is not finite")
        self.frame, self.wrench, self.received = frame, wrench, time.monotonic()


def wrench_in_link(robot, q, link, frame, wrench):
    """``wrench`` (``[f; tau]`` in ``frame``'s axes about its origin) written in ``link``'s frame about its origin:
    with ``(R, p)`` the pose of ``frame`` in ``link``, ``[R f; R tau + p x R f]``."""
    if frame == link:
        return wrench
    T = np.linalg.solve(rd.frame_placement(robot, q, link), rd.frame_placement(robot, q, frame))
    R, p = T[:3, :3], T[:3, 3]
    f = R @ wrench[:3]
    return np.concatenate([f, R @ wrench[3:] + np.cross(p, f)])


class ExternalWrenches:
    """The sensors of one ``external_wrench_topics`` value."""

    def __init__(self, entries, timeout):
        self.sensors = [Sensor(link, topic) for link, topic in parse(entries).items()]
        self.timeout = timeout
        self.silent = []  # sensors dropped from the last sum

    def wrenches(self, robot, q):
        """``{link: wrench}`` of the sensors heard within the timeout, in their links' frames (``q``: the robot's
        full configuration, for the frames), or None when there are none."""
        now, out, self.silent = time.monotonic(), {}, []
        for sensor in self.sensors:
            if sensor.wrench is None or now - sensor.received > self.timeout:
                self.silent.append(sensor.topic)
                continue
            wrench = wrench_in_link(robot, q, sensor.link, sensor.frame, sensor.wrench)
            out[sensor.link] = out[sensor.link] + wrench if sensor.link in out else wrench
        return out or None


class SensorTopics:
    """The subscriptions of ``node``'s parameter ``external_wrench_topics`` and their sensors (``inputs``: an
    :class:`ExternalWrenches`, or None when the parameter is empty)."""

    def __init__(self, node):
        self.node, self.inputs, self.subscriptions = node, None, []
        self.configure()

    def configure(self):
        """Subscribe the topics of the parameters as they are now (and drop the previous ones)."""
        for subscription in self.subscriptions:
            self.node.destroy_subscription(subscription)
        entries = self.node.get_parameter("external_wrench_topics").value
        self.inputs = (ExternalWrenches(entries, self.node.get_parameter("external_wrench_timeout").value)
                       if entries else None)
        self.subscriptions = [
            self.node.create_subscription(WrenchStamped, sensor.topic, lambda msg, s=sensor: self.on_sensor(s, msg),
                                          10) for sensor in (self.inputs.sensors if self.inputs else [])]

    def on_sensor(self, sensor, msg):
        model = self.node.model
        if model is None or self.inputs is None or sensor not in self.inputs.sensors:
            return
        try:
            sensor.take(msg, model.robot)
        except StateError as exc:
            self.node.reject_input(sensor.topic, exc)

    def wrenches(self, model, q):
        """The external wrenches of the sensors heard lately at the joint positions ``q`` (``{link: wrench}`` in
        link frames), or None."""
        if self.inputs is None:
            return None
        robot = model.robot
        full = np.concatenate([rd.neutral(robot)[:7], q]) if robot.has_floating_base else q
        return self.inputs.wrenches(robot, full)

    def silent(self):
        return ", ".join(self.inputs.silent) if self.inputs else "none"
