"""The ``gough_stewart_demo`` node: moves the bundled Gough-Stewart platform's legs for the inverse dynamics node.

The platform sways (a slow circle of ``amplitude`` m in x, y, a heave and a small roll, pitch and yaw at
``frequency`` Hz); its six leg extensions follow in closed form, ``l_i = |p + R P_i - B_i| - L0_i`` (their rates
by a central difference), published on ``/joint_states`` (the actuated joints only) at ``rate_hz``.
The ``inverse_dynamics`` node with ``loops_file`` solves the passive joints and publishes the leg forces; its
``~/torques`` carries every joint's position, what ``robot_state_publisher`` needs to draw the platform
(``gough_stewart.launch.py``).
"""
import math

import numpy as np
from rclpy.node import Node
from sensor_msgs.msg import JointState

from ..algorithms.kinematics import frame_placement
from ..model.spatial import rpy_to_matrix
from ..model.urdf import load_urdf
from ..robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS
from .runner import spin


def anchors(robot):
    """``(B, P_local, L0)``: base anchors in the world, platform anchors in the platform frame, and the leg lengths
    at ``q = 0`` (the robot's reference pose), legs in ``actuated_joint_names`` order."""
    q = np.zeros(robot.nq)
    T = frame_placement(robot, q, "platform")
    base = np.array([frame_placement(robot, q, f"cardan_{k}")[:3, 3] for k in range(1, 7)])
    ball = frame_placement(robot, q, "platform_ball")[:3, 3]
    local = [T[:3, :3].T @ (ball - T[:3, 3])] + [c.p_b for c in robot.loops.closures]
    local = np.array(local)
    return base, local, np.linalg.norm(T[:3, 3] + local @ T[:3, :3].T - base, axis=1), T


class PlatformMotion:
    """The demo's platform motion and the leg extensions and rates that produce it."""

    def __init__(self, robot, amplitude=0.05, frequency=0.2):
        self.base, self.local, self.rest, reference = anchors(robot)
        self.p0, self.R0 = reference[:3, 3], reference[:3, :3]
        self.amplitude, self.omega = amplitude, 2 * math.pi * frequency

    def pose(self, t):
        """Platform pose ``(R, p)`` at ``t``."""
        a, w = self.amplitude, self.omega
        p = self.p0 + a * np.array([math.cos(w * t) - 1.0, math.sin(w * t), 0.5 * math.sin(2 * w * t)])
        return self.R0 @ rpy_to_matrix(a * math.sin(w * t), a * math.cos(w * t) - a, 2 * a * math.sin(w * t)), p

    def legs(self, t, h=1e-6):
        """Leg extensions and their rates at ``t`` (rates by a central difference of the closed-form lengths)."""
        return self.extension(t), (self.extension(t + h) - self.extension(t - h)) / (2 * h)

    def extension(self, t):
        R, p = self.pose(t)
        return np.linalg.norm(p + self.local @ R.T - self.base, axis=1) - self.rest


class GoughStewartDemo(Node):
    def __init__(self, **kwargs):
        super().__init__("gough_stewart_demo", **kwargs)
        rate = self.declare_parameter("rate_hz", 50.0).value
        amplitude = self.declare_parameter("amplitude", 0.05).value
        frequency = self.declare_parameter("frequency", 0.2).value
        robot = load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)
        self.motion = PlatformMotion(robot, amplitude, frequency)
        self.message = JointState(name=list(robot.actuated_joint_names))
        self.publisher = self.create_publisher(JointState, "/joint_states", 10)
        self.start = self.get_clock().now()
        self.create_timer(1.0 / rate, self.tick)

    def tick(self):
        now = self.get_clock().now()
        t = (now - self.start).nanoseconds * 1e-9
        position, velocity = self.motion.legs(t)
        self.message.header.stamp = now.to_msg()
        self.message.position, self.message.velocity = position.tolist(), velocity.tolist()
        self.publisher.publish(self.message)


def main(args=None):
    return spin(GoughStewartDemo, args)


if __name__ == "__main__":
    raise SystemExit(main())
