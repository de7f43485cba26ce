"""What the inverse node refuses, and how it says so: URDF text given with ``-p`` ends the executable with one line
(no traceback); a model without a movable joint (an empty robot, an unexpanded xacro read without xacro) and non-XML
text on the description topic are refused and the good model kept; a refused input stays in diagnostics until a good
one of its kind arrives."""
import os
import subprocess
import sys

import pytest

# first: it skips the module where rclpy is missing
from ros_harness import LATCHED, Harness

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

ROBOT = rd.load_urdf(rd.bundled_robot_path())
EMPTY = '<robot name="empty"><link name="base"/></robot>'


def test_urdf_text_with_dash_p_is_one_line():
    with open(rd.bundled_robot_path(), encoding="utf-8") as stream:
        text = stream.read()
    run = subprocess.run([sys.executable, "-m", "rne_dynamics.nodes.inverse_dynamics_node", "--ros-args", "-p",
                          f"robot_description:={text}"], capture_output=True, text=True, timeout=60,
                         env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    ours = [line for line in run.stderr.splitlines() if line.startswith("inverse_dynamics_node: error:")]
    assert len(ours) == 1 and "-p robot_description:=/path/robot.urdf" in ours[0]


@pytest.fixture
def node():
    h = Harness(InverseDynamicsNode, robot_description=rd.bundled_robot_path(), diagnostics_rate_hz=20.0)
    yield h
    h.close()


def test_no_movable_joint_and_non_xml_are_refused(node):
    node.refused_build("robot_description", EMPTY, "robot 'empty' has no movable joint")
    assert node.set_parameters(Parameter("robot_description", value="")).successful  # follow the topic
    model = node.node.model
    node.publish(String, "/robot_description", String(data=EMPTY), qos=LATCHED)
    assert node.wait_for_warning("has no movable joint")
    node.publish(String, "/robot_description", String(data=rd.bundled_robot_path()), qos=LATCHED)
    assert node.wait_for_warning("not URDF XML (it starts '/")
    assert node.node.model is model


def test_a_refused_input_stays_in_diagnostics_until_a_good_one(node):
    diagnostics = node.collect(DiagnosticArray, "/diagnostics")
    bad = JointState(name=list(ROBOT.joint_names), position=[0.0] * 5)
    node.publish(JointState, "/joint_states", bad)

    def messages():
        return [(d.status[0].level, d.status[0].message) for d in diagnostics]
    assert node.spin_until(lambda: any("none good since: /joint_states: 6 joint names but 5 position values" in m
                                       for level, m in messages() if level == DiagnosticStatus.WARN))
    start = len(diagnostics)
    node.spin_for(0.3)  # several statuses later, nothing new arrived: still there
    assert len(diagnostics) - start >= 3
    assert all(level == DiagnosticStatus.WARN and "none good since" in m for level, m in messages()[start:])
    node.publish(JointState, "/joint_states", JointState(name=list(ROBOT.joint_names), position=[0.0] * 6))
    assert node.spin_until(lambda: messages()[-1] == (DiagnosticStatus.OK, "robot 'rne_arm6' OK"))
