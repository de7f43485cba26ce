"""The nodes without a ROS install (real processes, real rclpy): the command docs/nodes.md gives for the venv,
``.venv/bin/inverse_dynamics_node --ros-args -p robot_description:=FILE``, run as written (the venv's console
script, FILE the bundled arm) answers a joint state with the library's torques and exits 0 on Ctrl-C."""
import os
import re
import shlex
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import TIMEOUT, rclpy

from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from sensor_msgs.msg import JointState

import rne_dynamics as rd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VENV_BIN = os.path.dirname(sys.executable)  # the venv's bin: its console scripts beside its python
#: ROS domains of the node and its probe: not conftest's (40-89), where another inverse node of the run (a harness
#: not yet destroyed, another checkout's tests) would answer the joint state first
ISOLATED_DOMAINS = (150, 230)


def documented_command(executable):
    """The first command of docs/nodes.md's section on the venv that runs ``.venv/bin/<executable>``, as words."""
    with open(os.path.join(ROOT, "docs", "nodes.md"), encoding="utf-8") as stream:
        text = stream.read()
    section = text[text.index("Without a ROS install"):]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1).replace("\\\n", " ")
    return next(shlex.split(line) for line in block.splitlines() if line.startswith(f".venv/bin/{executable} "))


def test_the_inverse_node_runs_from_the_venv_as_the_docs_say():
    command = documented_command("inverse_dynamics_node")
    assert command[1:] == ["--ros-args", "-p", "robot_description:=/path/to/robot.urdf"]
    script = os.path.join(VENV_BIN, "inverse_dynamics_node")
    if not os.path.exists(script):
        pytest.skip(f"no console script {script} (not a venv install)")
    robot = rd.load_urdf(rd.bundled_robot_path())
    command = [script] + [word.replace("/path/to/robot.urdf", rd.bundled_robot_path()) for word in command[1:]]
    domain = ISOLATED_DOMAINS[0] + os.getpid() % (ISOLATED_DOMAINS[1] - ISOLATED_DOMAINS[0])
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), ROS_DOMAIN_ID=str(domain))
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    context = Context()
    rclpy.init(context=context, domain_id=domain)
    probe = rclpy.create_node("venv_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(probe)
    try:
        torques = []
        probe.create_subscription(JointState, "/inverse_dynamics/torques", torques.append, 10)
        states = probe.create_publisher(JointState, "/joint_states", 10)
        q = np.linspace(-0.5, 0.5, robot.dof)
        end = time.monotonic() + TIMEOUT
        while not torques:
            assert process.poll() is None, f"the node ended: {process.stderr.read()}"
            assert time.monotonic() < end, "no torques from the node"
            states.publish(JointState(name=list(robot.joint_names), position=q.tolist()))
            executor.spin_once(timeout_sec=0.05)
        np.testing.assert_allclose(torques[0].effort, rd.gravity_torques(robot, q), rtol=0, atol=1e-9)
    finally:
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)
        executor.shutdown()
        probe.destroy_node()
        rclpy.shutdown(context=context)
    assert process.returncode == 0 and "Traceback" not in stderr, stderr
