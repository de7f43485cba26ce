"""A xacro robot on the nodes (real rclpy): ``robot_description`` a ``.xacro`` path, expanded with the parameters
``xacro_args`` (``NAME:=VALUE``) and ``package_paths`` (``NAME=DIR``) as ``load_urdf`` expands it; a package it
cannot find is refused with the remedy the node accepts (its parameter, not the command line's flag), and setting
that parameter loads the robot; bad entries are refused at the set, naming them."""
import os

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import Harness, harness_fixture, wait_for_count

from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import rne_dynamics as rd
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

pytest.importorskip("xacro", reason="the xacro package (requirements-test.txt) expands the xacro robots")

PACKAGE = os.path.join(os.path.dirname(__file__), "data", "arm_description")
ARM = os.path.join(PACKAGE, "urdf", "arm.urdf.xacro")
EXACT = dict(rtol=0, atol=1e-9)

harness_factory = harness_fixture(InverseDynamicsNode)


@pytest.fixture(autouse=True)
def no_ament_index(monkeypatch):
    """arm_description is found through package_paths only (the builder process inherits the environment)."""
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)


def test_a_xacro_path_with_arguments_and_package_paths(harness_factory):
    h = harness_factory(robot_description=ARM, xacro_args=["link_mass:=4", "tool:=false"],
                        package_paths=[f"arm_description={PACKAGE}"])
    expected = rd.load_urdf(ARM, xacro_args={"link_mass": "4", "tool": "false"},
                            package_paths={"arm_description": PACKAGE})
    assert h.node.model is not None, h.warnings()
    torques = h.collect(JointState, "/inverse_dynamics/torques")
    q, qd = np.array([0.3, -0.7, 1.1]), np.array([0.5, -0.2, 0.1])
    h.publish(JointState, "/joint_states", JointState(name=list(expected.joint_names), position=q.tolist(),
                                                      velocity=qd.tolist()))
    msg = wait_for_count(h, torques, 1)
    np.testing.assert_allclose(msg.effort, rd.inverse_dynamics(expected, q, qd, np.zeros(3)).torques, **EXACT)
    # a new argument rebuilds the model from the same file
    assert h.set_parameters(Parameter("xacro_args", value=["link_mass:=2", "tool:=false"])).successful
    lighter = rd.load_urdf(ARM, xacro_args={"link_mass": "2", "tool": "false"},
                           package_paths={"arm_description": PACKAGE})
    np.testing.assert_allclose(rd.inertial_parameters(h.node.model.robot), rd.inertial_parameters(lighter), **EXACT)
    assert not np.allclose(rd.inertial_parameters(lighter), rd.inertial_parameters(expected))


def test_a_package_it_cannot_find_names_the_parameter_that_gives_it(harness_factory):
    h = harness_factory(robot_description=ARM)
    assert h.node.model is None
    assert "package 'arm_description' not found" in h.node.refusal
    assert "parameter package_paths (an entry arm_description=DIR)" in h.node.refusal, h.node.refusal
    assert "--package-path" not in h.node.refusal
    assert h.set_parameters(Parameter("package_paths", value=[f"arm_description={PACKAGE}"])).successful
    assert h.node.model is not None and h.node.model.robot.name == "xacro_arm", h.node.refusal
    # bad entries: refused at the set, the parameters unchanged
    for name, value, reason in (("xacro_args", ["link_mass=4"], "xacro_args: 'link_mass=4' is not name:=value"),
                                ("package_paths", ["arm_description"], "'arm_description' is not NAME=DIR"),
                                ("package_paths", ["arm_description=/no/such/dir"], "is not a directory"),
                                ("xacro_args", ["a:=1", "a:=2"], "xacro_args names 'a' twice")):
        result = h.set_parameters(Parameter(name, value=value))
        assert not result.successful and reason in result.reason, result.reason
    assert h.node.get_parameter("package_paths").value == [f"arm_description={PACKAGE}"]


def test_the_forward_node_reads_the_same_parameters():
    h = Harness(ForwardDynamicsNode, robot_description=ARM, xacro_args=["link_mass:=4"],
                package_paths=[f"arm_description={PACKAGE}"])
    try:
        expected = rd.load_urdf(ARM, xacro_args={"link_mass": "4"}, package_paths={"arm_description": PACKAGE})
        assert h.node.model is not None, h.node.refusal
        np.testing.assert_allclose(rd.inertial_parameters(h.node.model.robot), rd.inertial_parameters(expected),
                                   **EXACT)
    finally:
        h.close()
