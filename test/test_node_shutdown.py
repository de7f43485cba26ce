"""Shutdowns while joint states flow at 1 kHz (real processes, real rclpy): SIGINT (Ctrl-C), SIGTERM, launch's
escalation (SIGINT, then SIGTERM during the clean-up) and a context shut down by another thread of the process all
end the node with exit status 0 and nothing on stderr that resembles a traceback."""
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

# first: it skips the module where rclpy is missing
from ros_harness import LATCHED, rclpy

from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState
from std_msgs.msg import String

import rne_dynamics as rd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ARM6 = os.path.join(ROOT, "rne_dynamics", "data", "rne_arm6.urdf")
NAMES = list(rd.load_urdf(ARM6).joint_names)
TRACEBACK_SIGNS = ("Traceback", "Error", "Exception", "exception")


class JointStateTraffic:
    """Joint states at 1 kHz on ``/joint_states`` from a thread of this process; counts ``~/torques`` received."""

    def __init__(self):
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node("traffic", context=self.context)
        self.publisher = self.node.create_publisher(JointState, "/joint_states", 10)
        # for the nodes started without the parameter: their model is built in their builder process
        self.description = self.node.create_publisher(String, "/robot_description", LATCHED)
        self.description.publish(String(data=open(ARM6).read()))
        self.answers = 0
        self.node.create_subscription(JointState, "/inverse_dynamics/torques", self._count, 10)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.running = True
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _count(self, msg):
        self.answers += 1

    def _run(self):
        msg = JointState(name=NAMES, position=[0.1] * len(NAMES), velocity=[0.2] * len(NAMES))
        period, next_time = 1e-3, time.monotonic()
        while self.running:
            msg.header.stamp = self.node.get_clock().now().to_msg()
            self.publisher.publish(msg)
            self.executor.spin_once(timeout_sec=0.0)
            next_time += period
            time.sleep(max(0.0, next_time - time.monotonic()))

    def close(self):
        self.running = False
        self.thread.join()
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture(scope="module")
def traffic():
    flow = JointStateTraffic()
    yield flow
    flow.close()


def start_node(code=None, from_topic=False, stdin=None):
    """The inverse node as its own process (``code``: a Python program in place of the executable); its robot from
    the parameter, or ``from_topic`` (then built in its builder process, which must end with it, quietly)."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    command = [sys.executable, "-c", code] if code else [sys.executable, "-m",
                                                         "rne_dynamics.nodes.inverse_dynamics_node"]
    parameters = [] if from_topic else ["-p", f"robot_description:={ARM6}"]
    return subprocess.Popen(command + ["--ros-args", *parameters, "--log-level", "warn"],
                            env=env, stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def wait_for_answers(traffic, process, timeout=60.0):
    """Until the node answers joint states (it then runs its callbacks at full load)."""
    start, end = traffic.answers, time.monotonic() + timeout
    while traffic.answers < start + 5:
        assert process.poll() is None, f"the node ended early: {process.stderr.read()}"
        assert time.monotonic() < end, "the node never answered"
        time.sleep(0.01)


def assert_clean_exit(process, what):
    try:
        _, stderr = process.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    assert process.returncode == 0, f"{what}: exit status {process.returncode}; stderr:\n{stderr}"
    assert not any(sign in stderr for sign in TRACEBACK_SIGNS), f"{what}: stderr:\n{stderr}"


#: The signals a start gets (the second while the node cleans up after the first): Ctrl-C, SIGTERM, launch's
#: escalation, and (reached with ``--long``) a second SIGTERM.
SIGNALS = [(signal.SIGINT,), (signal.SIGTERM,), (signal.SIGINT, signal.SIGTERM), (signal.SIGTERM, signal.SIGTERM)]


@pytest.mark.parametrize("starts", [6, pytest.param(20, marks=pytest.mark.long)])
def test_signals_while_joint_states_flow(traffic, starts):
    """6 starts (20 with ``--long``): each of SIGINT, SIGTERM and launch's escalation (SIGINT, then SIGTERM while
    the node cleans up) to a node whose robot came from its parameter and to one that took it from the
    /robot_description topic (built in the node's builder process; a node run with ``python -m``); with ``--long``
    also SIGTERM twice, and each case again with the signal at other moments of the 1 kHz traffic."""
    for start in range(starts):
        process = start_node(from_topic=start % 2 == 1)
        wait_for_answers(traffic, process)
        time.sleep(0.013 * start)
        first, *then = SIGNALS[start // 2 % len(SIGNALS)]
        process.send_signal(first)
        for later in then:
            time.sleep(0.002)
            process.send_signal(later)
        what = " then ".join(signal.Signals(number).name for number in (first, *then))
        assert_clean_exit(process, f"start {start}, {what}")


def test_context_shut_down_elsewhere(traffic):
    """Another thread of the process shuts the context down (as a launch of composed nodes or a test does), while
    the node answers joint states."""
    code = ("import sys, threading, rclpy\n"
            "from rne_dynamics.nodes.inverse_dynamics_node import main\n"
            "def stop():\n"
            "    sys.stdin.readline()  # the test's word: the node answers\n"
            "    rclpy.shutdown()\n"
            "threading.Thread(target=stop, daemon=True).start()\n"
            "sys.exit(main(sys.argv[1:]))\n")
    for start in range(3):
        process = start_node(code, stdin=subprocess.PIPE)
        wait_for_answers(traffic, process)
        time.sleep(0.013 * start)
        process.stdin.write("\n")
        process.stdin.flush()
        assert_clean_exit(process, f"context shut down, start {start}")
