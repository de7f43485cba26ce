"""What the inverse node's ``~/plan`` and ``~/retime`` share: ``trajectory_msgs/JointTrajectory`` requests on one
topic, solved on one worker thread (joint states keep flowing), answered on another topic; a request that fails
publishes nothing and is reported in the log and ``/diagnostics`` with its reason."""
from concurrent.futures import ThreadPoolExecutor

from builtin_interfaces.msg import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .messages import doubles


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
    failures with :meth:`fail`."""

    def __init__(self, node, request_topic, answer_topic):
        self.node, self.topic = node, request_topic
        self.publisher = node.create_output(JointTrajectory, answer_topic)
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix=request_topic.lstrip("~/"))
        self.answered = self.failed = 0
        self.last_failure = "none"
        node.create_subscription(JointTrajectory, request_topic, self.on_request, 10)

    def close(self):
        self.worker.shutdown(wait=False, cancel_futures=True)

    def answer(self, header, joint_names, times, values):
        self.answered += 1
        self.publisher.publish(trajectory_message(header, joint_names, times, values))

    def fail(self, reason):
        self.failed += 1
        self.last_failure = str(reason)
        self.node.reject_input(self.topic, reason)
