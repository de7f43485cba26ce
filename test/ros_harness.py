"""A node under test with a probe node beside it, in a context and executor of their own (real rclpy, no mocks).

Waits are event based: spin until a condition holds or a timeout passes (the timeout only bounds a failing test).
"""
import time

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy is not installed")
from rcl_interfaces.msg import Log  # noqa: E402
from rclpy.context import Context  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402

TIMEOUT = 30.0  # s; a passing test waits for events, never this long (a model of new numbers: its C build)


def pendulum_urdf(name, lower, upper, effort):
    """A 2 kg bob 0.5 m below a hinge about y, with the given limits: a robot whose numbers are easy to check."""
    return f"""<robot name="{name}">
  <link name="base"/>
  <link name="bob"><inertial><origin xyz="0 0 -0.5"/><mass value="2.0"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="bob"/><axis xyz="0 1 0"/>
    <limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="10"/></joint>
</robot>"""
LATCHED = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)


class Harness:
    """``node_class(**parameters)`` plus a probe that publishes inputs, collects outputs and the node's log."""

    def __init__(self, node_class, init_args=None, node_args=None, topic_description=None, **parameters):
        self.context = Context()
        rclpy.init(context=self.context, args=init_args)
        overrides = [Parameter(name, value=value) for name, value in parameters.items()]
        self.node = node_class(context=self.context, parameter_overrides=overrides, cli_args=node_args)
        self.probe = rclpy.create_node("probe", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.executor.add_node(self.probe)
        self.publishers = {}
        self.log = []
        # transient local, as rcl's rosout publisher: a log written before the two are matched still arrives
        self.probe.create_subscription(Log, "/rosout", self._on_log, QoSProfile(
            depth=1000, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE))
        if topic_description is not None:  # the robot from the robot_description topic (no parameter)
            self.publish(String, "/robot_description", String(data=topic_description), qos=LATCHED)
            assert self.spin_until(lambda: self.node.model is not None), "no model from the topic"

    def _on_log(self, msg):
        if msg.name == self.node.get_name():
            self.log.append(msg)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.probe.destroy_node()
        rclpy.shutdown(context=self.context)

    def spin_until(self, condition, timeout=TIMEOUT):
        """Spin until ``condition()`` is true; False if the timeout passed first."""
        end = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > end:
                return False
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def spin_until_count(self, messages, count, stall=30.0):
        """Spin until the collected ``messages`` are ``count``; False if none came for ``stall`` s first (a loaded
        machine slows a stream, a broken node stops it)."""
        while len(messages) < count:
            seen = len(messages)
            if not self.spin_until(lambda: len(messages) > seen, timeout=stall):
                return False
        return True

    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=0.01)

    def set_parameters(self, *parameters):
        """Set ``parameters`` at once and spin until the model they change is swapped in or refused (the node
        builds it after answering); the set's result."""
        result = self.node.set_parameters_atomically(list(parameters))
        self.settle()
        return result

    def settle(self):
        """Spin until the models the node was asked for are swapped in or refused."""
        assert self.spin_until(lambda: self.node.builds_pending == 0), "the model build did not finish"

    def refused_build(self, name, value, reason):
        """Set parameter ``name`` to ``value``: it passes the set's own checks, its model is refused for ``reason``
        (kept in diagnostics), and the parameter and the model stay as they were."""
        before, model = self.node.get_parameter(name).value, self.node.model
        assert self.set_parameters(Parameter(name, value=value)).successful
        assert reason in self.node.refusal, self.node.refusal
        assert self.node.get_parameter(name).value == before and self.node.model is model

    def collect(self, msg_type, topic, qos=10):
        """A list that fills with the messages on ``topic``, once the node's publisher is matched."""
        received = []
        self.probe.create_subscription(msg_type, topic, received.append, qos)
        assert self.spin_until(lambda: self.probe.count_publishers(topic) > 0), f"nobody publishes {topic}"
        return received

    def publish(self, msg_type, topic, msg, qos=10):
        """Publish ``msg`` once a subscriber of the node is matched."""
        if topic not in self.publishers:
            publisher = self.probe.create_publisher(msg_type, topic, qos)
            assert self.spin_until(lambda: publisher.get_subscription_count() > 0), f"nobody subscribes {topic}"
            self.publishers[topic] = publisher
        self.publishers[topic].publish(msg)

    def call(self, srv_type, name, request=None):
        client = self.probe.create_client(srv_type, name)
        assert self.spin_until(client.service_is_ready), f"service {name} not available"
        future = client.call_async(request or srv_type.Request())
        assert self.spin_until(future.done)
        return future.result()

    def warnings(self, text=""):
        """Texts of the node's warnings and errors that contain ``text``."""
        return [m.msg for m in self.log if m.level >= Log.WARN and text in m.msg]

    def wait_for_warning(self, text):
        return self.spin_until(lambda: self.warnings(text))


def harness_fixture(node_class):
    """A pytest fixture ``harness_factory``: ``harness_factory(**parameters)`` makes a :class:`Harness` of
    ``node_class``; each is closed after the test."""
    @pytest.fixture
    def harness_factory():
        made = []

        def make(**parameters):
            made.append(Harness(node_class, **parameters))
            return made[-1]
        yield make
        for harness in made:
            harness.close()
    return harness_factory


def wait_for_count(harness, received, count):
    assert harness.spin_until(lambda: len(received) >= count), f"got {len(received)} messages, expected {count}"
    return received[count - 1]
