"""What the inverse node's requests (``~/trajectory``, ``~/plan``, ``~/retime``) share.

A request is a ``trajectory_msgs/JointTrajectory``. The joints of the model it leaves out (a MoveIt arm-group plan
carries the arm's joints, not the gripper's) are held at their latest ``/joint_states`` position, at rest
(:class:`RequestJoints`); a request that names none of the model's joints, or leaves out one never heard, is
refused. Every request is answered on ``~/request_status`` (:func:`request_status`: accepted with the joints held,
or refused with the reason), and a refusal is also in the log and ``/diagnostics``. ``~/plan`` and ``~/retime`` are
solved on one worker thread each (joint states keep flowing) and answered on another topic
(:class:`TrajectoryRequests`); a request that fails publishes no trajectory.
"""
from concurrent.futures import ThreadPoolExecutor

from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..errors import StateError, one_line
from .joint_states import LOCK_REMEDY
from .messages import doubles
from .parameters import DOUBLE, Spec

SAMPLE_PERIOD = Spec("plan_sample_period", 0.01, DOUBLE, "time between the points of ~/planned_trajectory and "
                     "~/retimed_trajectory (s)", 1.0e-4, 10.0)


class RequestJoints:
    """The model's input joints of a request naming joints ``names``: those it leaves out (``held``, names) are
    held at the latest joint state of ``node`` (position; velocity and acceleration zero). Raises
    :class:`StateError` when it names none of the model's joints, names one twice, or leaves out one never heard
    on ``/joint_states``."""

    def __init__(self, node, model, names):
        self.model, self.names = model, names
        columns = model.columns(names)
        if not len(columns.joints):
            named = f"none of its joints ({', '.join(names)}) is one" if names else "it names no joint"
            raise StateError(f"{named} of robot '{model.robot.name}' (its joints: {', '.join(model.input_names)})")
        self.held, self.positions, self.rates = columns.left_out, None, None  # None: every joint given
        if self.held:
            states = node.joint_states
            unheard = states.unheard(self.held)
            if unheard:
                raise StateError(f"it leaves out joints {', '.join(unheard)}, not yet heard on /joint_states (nothing "
                                 f"to hold them at): name them in the request, or {LOCK_REMEDY}")
            self.positions, self.rates = states.q.copy(), model.input_zeros

    def positions_of(self, values, what):
        """A point's positions over the input joints, the held joints' filled in."""
        return self.model.gather(self.names, values, what, held=self.positions)

    def rates_of(self, values, what):
        """A point's velocities or accelerations over the input joints (empty: zero), the held joints' zero."""
        return self.model.gather(self.names, values, what, optional=True, held=self.rates)

    def held_positions(self):
        """``{joint: position}`` of the held joints."""
        return {name: float(self.positions[self.model.input_names.index(name)]) for name in self.held}


class RequestStatus:
    """``node``'s ``~/request_status``: :meth:`report` answers each request (from any thread)."""

    def __init__(self, node):
        self.node = node
        self.publisher = node.create_output(DiagnosticStatus, "~/request_status")

    def report(self, topic, stamp, refusal=None, held=None):
        """Answer a request on ``topic`` (``~/trajectory``, ``~/plan``, ``~/retime``) with header stamp ``stamp``:
        accepted with the joints ``held``, or refused (also in the log and diagnostics)."""
        self.publisher.publish(request_status(self.node.resolve_topic_name(topic), stamp, refusal, held))
        if refusal is not None:
            self.node.reject_input(topic, refusal)
        else:
            self.node.stats.accepted(topic)


def request_status(topic, stamp, refusal=None, held=None):
    """The ``~/request_status`` of a request on ``topic`` (resolved name) with header stamp ``stamp``: ERROR with
    the reason of its ``refusal``, or OK naming the joints ``held`` (``{joint: position}``) at their latest joint
    state; the value ``stamp`` (``sec.nanosec``) says which request it answers."""
    values = [KeyValue(key="stamp", value=f"{stamp.sec}.{stamp.nanosec:09d}")]
    if refusal is not None:
        return DiagnosticStatus(level=DiagnosticStatus.ERROR, name=topic, message=f"refused: {one_line(refusal)}",
                                values=values)
    held = held or {}
    message = ("answered; held at the latest joint state: " + ", ".join(f"{joint} at {position:.6g}"
                                                                       for joint, position in held.items())
               if held else "answered; every joint of the robot given")
    values.append(KeyValue(key="held joints", value=", ".join(held)))
    return DiagnosticStatus(level=DiagnosticStatus.OK, name=topic, message=message, values=values)


def trajectory_message(header, joint_names, times, values):
    """A ``JointTrajectory`` of the points at ``times`` with positions, velocities, accelerations and efforts
    ``values`` (four ``(len(times), n)`` arrays)."""
    message = JointTrajectory(header=header, joint_names=list(joint_names))
    for k, t in enumerate(times):
        seconds = int(t)
        message.points.append(JointTrajectoryPoint(
            positions=doubles(values[0][k]), velocities=doubles(values[1][k]),
            accelerations=doubles(values[2][k]), effort=doubles(values[3][k]),
            time_from_start=Duration(sec=seconds, nanosec=int(round((t - seconds) * 1e9)))))
    return message


class TrajectoryRequests:
    """Subscribes ``request_topic`` on ``node`` (to :meth:`on_request`, which a subclass defines: checks on the
    executor's thread, then ``self.worker.submit``), answers on ``answer_topic`` with :meth:`answer`, reports
    failures with :meth:`fail`; both answer ``~/request_status`` too."""

    def __init__(self, node, request_topic, answer_topic):
        self.node, self.topic = node, request_topic
        self.publisher = node.create_output(JointTrajectory, answer_topic)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=request_topic.lstrip("~/"))
        self.answered = self.failed = 0
        self.last_failure = "none"
        node.create_subscription(JointTrajectory, request_topic, self.on_request, 10)

    def close(self):
        self.worker.shutdown(wait=False, cancel_futures=True)

    def answer(self, header, joint_names, times, values, joints):
        """Publish the answer to a request with ``header`` whose input joints were ``joints``
        (:class:`RequestJoints`)."""
        self.answered += 1
        self.publisher.publish(trajectory_message(header, joint_names, times, values))
        self.node.request_status.report(self.topic, header.stamp, held=joints.held_positions())

    def fail(self, header, reason):
        self.failed += 1
        self.last_failure = str(reason)
        self.node.request_status.report(self.topic, header.stamp, refusal=reason)
