"""The retiming interface of the ``inverse_dynamics`` node: a ``trajectory_msgs/JointTrajectory`` on ``~/retime``
(a MoveIt plan, say) comes back on ``~/retimed_trajectory`` along the same path in the least time the limits allow.

The path is the cubic spline through the request's positions (:class:`rne_dynamics.planning.SplinePath`: it passes
every point without stopping; the request's times, velocities and accelerations are not used). Its timing is
:func:`rne_dynamics.retime` (TOPP-RA, at rest at both ends) under the URDF's effort and velocity limits and the
acceleration limits of parameter ``retime_acceleration_limits``, verified on a grid of 1 ms (``plan_sample_period``
when finer). Answer: points every ``plan_sample_period`` seconds with positions, velocities, accelerations and
efforts (the motion's inverse dynamics), the request's header, the robot's joints; joints the request leaves out
are held where the latest joint state has them (the spline through constant positions is constant). Retiming runs
on a worker thread, so joint states keep flowing; a request that cannot be retimed (bad names, fewer than two
different points, a path the limits cannot follow) publishes no trajectory and is reported on ``~/request_status``
and in the log in one line (:mod:`.trajectory_requests`).
"""
import numpy as np

import rne_dynamics as rd
from rne_dynamics.planning import SplinePath

from ..errors import StateError
from .parameters import DOUBLES, Spec, per_joint
from .trajectory_requests import RequestJoints, TrajectoryRequests

CHECK_PERIOD = 1e-3  # s: the retimed motion is within its limits at least on this grid

PARAMETERS = (
    Spec("retime_acceleration_limits", None, DOUBLES, "joint acceleration limits of ~/retime (rad/s^2 or m/s^2); "
         "a URDF gives none", constraints="empty: none; one value: every joint; else one value per joint in "
         "joint_names order; each > 0"),
)


class RetimeRequests(TrajectoryRequests):
    """Subscribes ``~/retime`` on ``node``, retimes each request on one worker thread, publishes the answers."""

    def __init__(self, node):
        super().__init__(node, "~/retime", "~/retimed_trajectory")

    def on_request(self, msg):
        model = self.node.model
        try:
            if model is None:
                raise StateError("no robot model yet")
            if model.robot.loops is not None:
                raise StateError("a robot with closed loops cannot be retimed (its path is not in its actuated "
                                 "coordinates alone)")
            joints = RequestJoints(self.node, model, msg.joint_names)
            q = np.array([joints.positions_of(p.positions, f"point {k} position")
                          for k, p in enumerate(msg.points)]).reshape(len(msg.points), len(model.input_names))
            path = SplinePath(q)
            acceleration = per_joint("retime_acceleration_limits",
                                     self.node.get_parameter("retime_acceleration_limits").value, model.robot)
        except ValueError as exc:  # StateError, ModelError; the path's own (points that do not move)
            return self.fail(msg.header, exc)
        self.worker.submit(self.solve, model, msg.header, path, acceleration, joints)

    def solve(self, model, header, path, acceleration, joints):
        """On the worker thread: retime, sample, publish (or report why not)."""
        period = self.node.get_parameter("plan_sample_period").value
        try:
            retimed = rd.retime(model.robot, path, acceleration_limits=acceleration, gravity=model.gravity,
                                check_period=min(period, CHECK_PERIOD))
        except ValueError as exc:  # PlanningError, StateError, ModelError: no timing within the limits
            return self.fail(header, exc)
        times = retimed.grid(period)
        self.node.get_logger().info(f"~/retime: {retimed.duration:.4f} s motion, {len(times)} points")
        self.answer(header, model.joint_names, times, retimed.sample_with_torques(times), joints)

    def diagnostic_values(self):
        return {"retimed trajectories": self.answered, "failed retimings": self.failed,
                "last failed retiming": self.last_failure}
