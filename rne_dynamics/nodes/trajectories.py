"""``~/trajectory`` -> ``~/trajectory_with_efforts`` of the inverse node: a ``trajectory_msgs/JointTrajectory`` comes
back with the inverse dynamics torque of every point in ``effort`` (0 for a joint the robot does not have; missing
velocities or accelerations read as zero; the robot's joints it leaves out held at their latest joint state:
:class:`~.trajectory_requests.RequestJoints`); with elastic joints (``joint_stiffness``) the motor torques of the
exact flexible feedforward instead (:meth:`~.model.DynamicsModel.trajectory_torques`). Solved on the executor's
thread (one batched call), answered on ``~/request_status`` too. Refused on a moving base: its points carry no base
motion.
"""
import numpy as np
from rclpy.event_handler import SubscriptionEventCallbacks
from trajectory_msgs.msg import JointTrajectory

from ..errors import StateError
from .messages import doubles
from .trajectory_requests import RequestJoints

TOPIC = "~/trajectory"


class TrajectoryEfforts:
    """Subscribes ``~/trajectory`` on ``node`` and publishes each request with its efforts."""

    def __init__(self, node):
        self.node = node
        self.publisher = node.create_output(JointTrajectory, "~/trajectory_with_efforts")
        node.create_subscription(JointTrajectory, TOPIC, self.on_request, 10,  # see DynamicsNode.create_output
                                 event_callbacks=SubscriptionEventCallbacks(use_default_callbacks=False))
        self.reset()

    def reset(self):
        self.answered = self.violations = 0

    def on_request(self, msg):
        node, model, report = self.node, self.node.model, self.node.request_status.report
        base = node.base.state
        try:
            if model is None:
                raise StateError("no robot model yet")
            if base is not None:
                raise StateError(f"base is '{base.mode}': trajectory points carry no base motion; use "
                                 "rd.mounted_inverse_dynamics or rd.free_floating_inverse_dynamics")
            names, points = msg.joint_names, msg.points
            joints = RequestJoints(node, model, names)
            q = np.empty((len(points), len(model.input_names)))  # a closed chain's: its actuated joints
            qd, qdd = np.zeros_like(q), np.zeros_like(q)
            for k, point in enumerate(points):  # one message per point: no way around a loop here
                q[k] = joints.positions_of(point.positions, f"point {k} position")
                qd[k] = joints.rates_of(point.velocities, f"point {k} velocity")
                qdd[k] = joints.rates_of(point.accelerations, f"point {k} acceleration")
        except StateError as exc:
            report(TOPIC, msg.header.stamp, refusal=exc)
            return
        efforts = np.zeros((len(points), len(names)))
        if points:
            nanoseconds = [p.time_from_start.sec * 1_000_000_000 + p.time_from_start.nanosec for p in points]
            try:
                inputs, tau = model.trajectory_torques(nanoseconds, q, qd, qdd)
            except ValueError as exc:  # a point the loops cannot reach, a singular pose; times that do not
                report(TOPIC, msg.header.stamp, refusal=exc)  # increase, too few points, a drive it cannot invert
                return
            columns = model.columns(names)
            efforts[:, columns.given] = inputs[:, columns.joints]
            self.violations += node.check_limits(model, tau, TOPIC)
        for point, row in zip(points, efforts):
            point.effort = doubles(row)
        self.answered += 1
        self.publisher.publish(msg)
        report(TOPIC, msg.header.stamp, held=joints.held_positions())

    def diagnostic_values(self):
        return {"trajectories": self.answered, "trajectory points over effort limits": self.violations}
