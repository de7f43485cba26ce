"""Launch files (where launch_ros imports), the parameter file and the rviz configuration."""
import importlib.util
import os

import pytest
import yaml

# first: it skips the module where rclpy is missing
from ros_harness import Harness

from rne_dynamics.launch_files import SIMULATOR_PARAMETERS
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
    ``/**`` to a file of its own), over real rcl: the forward node simulates with the simulated drives, holding its
    pose until its first command."""
    spec = importlib.util.spec_from_file_location("simulation_launch", os.path.join(LAUNCH_DIR, "simulation.launch.py"))
    source = open(spec.origin, encoding="utf-8").read()
    overrides = SIMULATOR_PARAMETERS
    assert overrides == {"simulate": True, "hold_until_command": True, "armature": [0.1], "viscous_friction": [2.0]}
    assert 'parameters=[LaunchConfiguration("params_file"), SIMULATOR_PARAMETERS]' in source
    dict_file = tmp_path / "launch_params.yaml"
    dict_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": overrides}}))
    harness = Harness(ForwardDynamicsNode, init_args=["--ros-args", "--params-file", CONFIG, "--params-file",
                                                      str(dict_file)])
    try:
        for parameter, value in overrides.items():
            assert harness.node.get_parameter(parameter).value == value, parameter
    finally:
        harness.close()


def test_gough_stewart_launch_runs_the_demo_on_the_node():
    description = launch_description("gough_stewart.launch.py")
    assert {"rviz", "rviz_config"} <= declared_arguments(description)
    assert nodes(description) == [("robot_state_publisher", "robot_state_publisher"),
                                  ("rne_dynamics", "inverse_dynamics_node"), ("rne_dynamics", "gough_stewart_demo"),
                                  ("rviz2", "rviz2")]


#: A stand-in for robot_state_publisher (C++, from a ROS install): what the dynamics node needs from it, its
#: ``robot_description`` parameter on the transient-local ``robot_description`` topic.
STATE_PUBLISHER = '''
import rclpy
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import String

rclpy.init()
node = rclpy.create_node("robot_state_publisher")
latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL, reliability=ReliabilityPolicy.RELIABLE)
node.create_publisher(String, "robot_description", latched).publish(
    String(data=node.declare_parameter("robot_description", "").value))
try:
    rclpy.spin(node)
except Exception:
    pass
'''

LAUNCH = '''
import sys
from launch import LaunchService
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

service = LaunchService()
service.include_launch_description(IncludeLaunchDescription(PythonLaunchDescriptionSource(sys.argv[1])))
sys.exit(service.run())
'''


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def install_prefix(root):
    """An install prefix as colcon makes one (the ament index, ``lib/<package>/<executable>``, ``share/<package>``)
    holding this checkout's nodes and the stand-in robot_state_publisher, for launch_ros to find them."""
    import sys
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    share = root / "share" / "rne_dynamics"
    share.mkdir()
    for folder in ("launch", "config", "urdf"):
        os.symlink(os.path.join(ROOT, folder) if folder != "urdf" else os.path.dirname(
            __import__("rne_dynamics").bundled_robot_path()), share / folder)
    executables = {("rne_dynamics", name): f"from rne_dynamics.nodes.{name} import main\nraise SystemExit(main())\n"
                   for name in ("inverse_dynamics_node", "forward_dynamics_node")}
    executables[("robot_state_publisher", "robot_state_publisher")] = STATE_PUBLISHER
    for (package, name), body in executables.items():
        (index / package).touch()
        script = root / "lib" / package / name
        script.parent.mkdir(parents=True, exist_ok=True)
        script.write_text(f"#!{sys.executable}\n{body}")
        script.chmod(0o755)
    return root


def test_simulation_launch_runs_under_launch_ros(tmp_path):
    """simulation.launch.py through launch's LaunchService (a process of its own, as ``ros2 launch``): the forward
    node simulates with the launch file's parameters winning over the parameter file's, /joint_states flows, and the
    inverse node's torques are the library's for each simulated state. Runs where launch_ros imports (a ROS install;
    or launch and launch_ros installed from their sources, which no registry ships); skipped otherwise."""
    pytest.importorskip("launch_ros", reason="launch_ros is not installed (not on PyPI; it comes with a ROS install)")
    import shutil
    import signal
    import subprocess
    import sys

    import numpy as np
    from rcl_interfaces.srv import GetParameters
    from sensor_msgs.msg import JointState

    import rne_dynamics as rd
    from ros_harness import rclpy

    if shutil.which("xacro") is None and not os.path.exists(os.path.join(os.path.dirname(sys.executable), "xacro")):
        pytest.skip("the launch files run xacro, which is not installed")
    prefix = install_prefix(tmp_path / "install")
    env = dict(os.environ, AMENT_PREFIX_PATH=os.pathsep.join(filter(None, [str(prefix),
                                                                          os.environ.get("AMENT_PREFIX_PATH")])),
               PATH=os.pathsep.join([os.path.dirname(sys.executable), os.environ["PATH"]]),
               PYTHONPATH=os.pathsep.join([ROOT] + sys.path), PYTHONUNBUFFERED="1")
    log = open(tmp_path / "launch.log", "w")
    launch = subprocess.Popen([sys.executable, "-c", LAUNCH, os.path.join(prefix, "share", "rne_dynamics", "launch",
                                                                           "simulation.launch.py")],
                              env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    harness = Harness(lambda **kwargs: rclpy.create_node("launch_test_node", **kwargs))
    try:
        started = harness.spin_until(lambda: harness.probe.count_publishers("/joint_states") > 0, timeout=120)
        assert started, "nobody publishes /joint_states:\n" + open(tmp_path / "launch.log").read()
        states = harness.collect(JointState, "/joint_states")
        torques = harness.collect(JointState, "/inverse_dynamics/torques")
        assert harness.spin_until(lambda: len(torques) >= 5, timeout=120), open(tmp_path / "launch.log").read()

        client = harness.probe.create_client(GetParameters, "/forward_dynamics/get_parameters")
        assert harness.spin_until(client.service_is_ready)
        names = ["simulate", "hold_until_command", "armature", "viscous_friction", "rate_hz"]
        future = client.call_async(GetParameters.Request(names=names))
        assert harness.spin_until(future.done)
        values = dict(zip(names, future.result().values))
        assert values["simulate"].bool_value is True  # the launch file's dict, not the params file's default
        assert values["hold_until_command"].bool_value is True
        assert list(values["armature"].double_array_value) == [0.1]
        assert list(values["viscous_friction"].double_array_value) == [2.0]
        assert values["rate_hz"].double_value == 500.0  # from the parameter file

        robot = rd.load_urdf(rd.bundled_robot_path())
        by_stamp = {(s.header.stamp.sec, s.header.stamp.nanosec): s for s in states}
        matched = 0
        for msg in torques:
            state = by_stamp.get((msg.header.stamp.sec, msg.header.stamp.nanosec))
            if state is None:
                continue
            assert list(msg.name) == list(robot.joint_names) == list(state.name)
            expected = rd.inverse_dynamics(robot, state.position, state.velocity, np.zeros(robot.dof)).torques
            np.testing.assert_allclose(msg.effort, expected, rtol=0, atol=1e-9)
            matched += 1
        assert matched >= 3
        # held at its initial pose (zero, within the limits) until the gravity torques came, then holding it
        assert harness.spin_until(lambda: any(any(s.effort) for s in states), timeout=60)
        start = stamp_ns(states[0])
        assert harness.spin_until(lambda: stamp_ns(states[-1]) - start >= 3_000_000_000, timeout=60)
        assert np.abs([s.position for s in states]).max() < 0.05, np.abs([s.position for s in states]).max()
    finally:
        harness.close()
        os.killpg(launch.pid, signal.SIGINT)
        try:
            launch.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait()
        log.close()
