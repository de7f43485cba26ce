"""Launch files (where launch_ros imports), the parameter file and the rviz configuration."""
import importlib.util
import os

import pytest
import yaml

# first: it skips the module where rclpy is missing
from ros_harness import Harness

from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAUNCH_DIR = os.path.join(ROOT, "launch")
CONFIG = os.path.join(ROOT, "config", "rne_dynamics.yaml")
RVIZ = os.path.join(ROOT, "config", "rne_dynamics.rviz")


def launch_description(name):
    # launch_ros first: with no ROS 2 'launch' installed, the sources' launch/ folder imports as a namespace package
    pytest.importorskip("launch_ros", reason="launch_ros is not installed (not on PyPI; it comes with a ROS install)")
    spec = importlib.util.spec_from_file_location(name.replace(".", "_"), os.path.join(LAUNCH_DIR, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate_launch_description()


def declared_arguments(description):
    from launch.actions import DeclareLaunchArgument
    return {e.name for e in description.entities if isinstance(e, DeclareLaunchArgument)}


def nodes(description):
    from launch_ros.actions import Node
    return [(e.node_package, e.node_executable) for e in description.entities if isinstance(e, Node)]


def test_dynamics_launch_declares_its_arguments_and_nodes():
    description = launch_description("dynamics.launch.py")
    assert {"robot", "xacro_args", "params_file", "rviz", "rviz_config"} <= declared_arguments(description)
    assert nodes(description) == [("robot_state_publisher", "robot_state_publisher"),
                                  ("rne_dynamics", "inverse_dynamics_node"), ("rviz2", "rviz2")]


def test_simulation_launch_adds_the_simulator():
    description = launch_description("simulation.launch.py")
    assert {"robot", "params_file", "rviz", "gravity_compensation"} <= declared_arguments(description)
    assert nodes(description)[:3] == nodes(launch_description("dynamics.launch.py"))
    assert nodes(description)[3:] == [("rne_dynamics", "forward_dynamics_node")] * 2  # one per gravity_compensation


def test_parameter_file_loads_into_both_nodes():
    with open(CONFIG) as stream:
        config = yaml.safe_load(stream)
    for node_class, name in ((InverseDynamicsNode, "inverse_dynamics"), (ForwardDynamicsNode, "forward_dynamics")):
        expected = config["/**"]["ros__parameters"] | config[name]["ros__parameters"]
        harness = Harness(node_class, init_args=["--ros-args", "--params-file", CONFIG])
        try:
            for parameter, value in expected.items():
                assert harness.node.get_parameter(parameter).value == value, parameter
            assert harness.node.model is None  # no description in the file: the node waits for the topic
        finally:
            harness.close()


def test_rviz_config_shows_the_bundled_robot_outputs():
    import rne_dynamics as rd
    from rne_dynamics.robots import DEFAULT_ROBOT

    with open(RVIZ) as stream:
        displays = yaml.safe_load(stream)["Visualization Manager"]["Displays"]
    by_class = {}
    for display in displays:
        for inner in display.get("Displays", [display]):
            by_class.setdefault(inner["Class"], []).append(inner)
    wrench_topics = [d["Topic"]["Value"] for d in by_class["rviz_default_plugins/Wrench"]]
    assert wrench_topics == [f"/inverse_dynamics/joint_wrenches/{j}" for j in rd.load_urdf(DEFAULT_ROBOT).joint_names]
    markers = by_class["rviz_default_plugins/MarkerArray"]
    assert [d["Topic"]["Value"] for d in markers] == ["/inverse_dynamics/load_markers"]
    robot_model = by_class["rviz_default_plugins/RobotModel"][0]["Description Topic"]
    assert robot_model["Value"] == "/robot_description" and robot_model["Durability Policy"] == "Transient Local"
    assert "rviz_default_plugins/TF" in by_class


def test_launch_file_overrides_win_over_the_parameter_file(tmp_path):
    """What launch_ros does with simulation.launch.py's parameters (the params file, then the dict written under
    ``/**`` to a file of its own), over real rcl: the forward node simulates with the simulated drives."""
    spec = importlib.util.spec_from_file_location("simulation_launch", os.path.join(LAUNCH_DIR, "simulation.launch.py"))
    source = open(spec.origin, encoding="utf-8").read()
    overrides = {"simulate": True, "armature": [0.1], "viscous_friction": [2.0]}
    assert 'SIMULATED_DRIVES = {"armature": [0.1], "viscous_friction": [2.0]}' in source
    assert '{"simulate": True, **SIMULATED_DRIVES}' in source
    dict_file = tmp_path / "launch_params.yaml"
    dict_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": overrides}}))
    harness = Harness(ForwardDynamicsNode, init_args=["--ros-args", "--params-file", CONFIG, "--params-file",
                                                      str(dict_file)])
    try:
        for parameter, value in overrides.items():
            assert harness.node.get_parameter(parameter).value == value, parameter
    finally:
        harness.close()
