"""The planning interface of the ``inverse_dynamics`` node: a ``trajectory_msgs/JointTrajectory`` request on
``~/plan`` is answered on ``~/planned_trajectory``.

Request: the first point's positions are the start, the last point's the goal, any points between are via points
(passed at their ``time_from_start`` when the last point has one, else where the retimed straight line passes them);
velocities of the first and last point, when given, are the end velocities (default: at rest). The last point's
``time_from_start`` zero asks for the minimum time; otherwise that duration, spent with the least effort
(``int tau^2 dt``). Answer: points every ``plan_sample_period`` seconds with positions, velocities, accelerations
(the planned spline's exact derivatives) and efforts (its inverse dynamics), the request's header, the robot's
joints. Joints the request leaves out are held where the latest joint state has them (their position limits pinned
there). Planning runs on a worker thread, so joint states keep flowing; a request that fails (bad names, a point
outside the limits, no motion within the limits, no convergence) publishes no trajectory and is reported on
``~/request_status``, in the log and in ``/diagnostics`` with the reason (:mod:`.trajectory_requests`).
"""
import numpy as np

import rne_dynamics as rd

from ..errors import StateError
from .trajectory_requests import RequestJoints, TrajectoryRequests


class PlanRequests(TrajectoryRequests):
    """Subscribes ``~/plan`` on ``node``, solves each request on one worker thread, publishes the answers."""

    def __init__(self, node):
        super().__init__(node, "~/plan", "~/planned_trajectory")

    def on_request(self, msg):
        model = self.node.model
        try:
            if model is None:
                raise StateError("no robot model yet")
            if len(msg.points) < 2:
                raise StateError(f"a plan request needs a start and a goal point, got {len(msg.points)} points")
            points = msg.points
            joints = RequestJoints(self.node, model, msg.joint_names)
            q = np.array([joints.positions_of(p.positions, f"point {k} position") for k, p in enumerate(points)])
            ends = [joints.rates_of(p.velocities, f"point {k} velocity").copy()
                    for k, p in ((0, points[0]), (len(points) - 1, points[-1]))]
        except StateError as exc:
            return self.fail(msg.header, exc)
        times = np.array([p.time_from_start.sec + 1e-9 * p.time_from_start.nanosec for p in points])
        duration = times[-1] if times[-1] > 0 else None
        via_times = times[1:-1] / duration if duration is not None and len(points) > 2 else None
        self.worker.submit(self.solve, model, msg.header, q, ends, duration, via_times, joints)

    def solve(self, model, header, q, ends, duration, via_times, joints):
        """On the worker thread: plan (the held joints' position limits pinned at their position), sample, publish
        (or report why not)."""
        held = {joint: (position, position) for joint, position in joints.held_positions().items()}
        try:
            planned = rd.plan(model.robot, q[0], q[-1], via=q[1:-1], via_times=via_times,
                              start_velocity=ends[0], goal_velocity=ends[1], duration=duration,
                              objective="time" if duration is None else "effort", gravity=model.gravity,
                              position_limits=held or None)
        except ValueError as exc:  # PlanningError, StateError, ModelError; the path's own (points that do not move)
            return self.fail(header, exc)
        period = self.node.get_parameter("plan_sample_period").value
        times = planned.grid(period)
        values = planned.sample(times)
        self.node.get_logger().info(f"~/plan: {planned.duration:.4f} s motion, {len(times)} points, "
                                    f"{planned.solve_time:.2f} s to plan")
        self.answer(header, model.joint_names, times, values, joints)

    def diagnostic_values(self):
        return {"plans": self.answered, "failed plans": self.failed, "last failed plan": self.last_failure}
