"""Drive parameters of the nodes from a YAML file (``drive_file``, :func:`rne_dynamics.load_drive`) and per-joint
parameters by joint name (a map in a parameter file, which ROS flattens to ``<name>.<joint>``): the node's model and
torques equal the library's robot built the same way; explicit per-joint values win over the file (values by name
over arrays); a bad file or joint name is refused with a one-line reason and the last good model stays."""
import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy is not installed")
from ros_harness import Harness, harness_fixture, wait_for_count  # noqa: E402

from rclpy.parameter import Parameter  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import rne_dynamics as rd  # noqa: E402
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode  # noqa: E402
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode  # noqa: E402
from rne_dynamics.robots import DEFAULT_ROBOT  # noqa: E402

ARM = rd.load_urdf(DEFAULT_ROBOT)
NAMES = list(ARM.joint_names)
DRIVE = """\
shoulder_lift_joint: {armature: 0.4, damping: 2.0, friction: 1.5}
elbow_joint: {armature: 0.3, damping: 1.0, friction: 0.5}
wrist_1_joint: {friction: 0.25}
"""
Q, QD = np.linspace(-0.6, 0.5, 6), np.linspace(0.8, -0.4, 6)

harness_factory = harness_fixture(InverseDynamicsNode)


@pytest.fixture
def drive_file(tmp_path):
    path = tmp_path / "drive.yaml"
    path.write_text(DRIVE)
    return str(path)


def torques_of(h, sec):
    """The node's torques for the test state (accelerations: the differentiated velocity is zero here)."""
    received = h.collect(JointState, "/inverse_dynamics/torques")
    msg = JointState(name=NAMES, position=Q.tolist(), velocity=QD.tolist())
    msg.header.stamp.sec = sec
    h.publish(JointState, "/joint_states", msg)
    return np.array(wait_for_count(h, received, 1).effort)


def assert_drive_equal(robot, expected):
    for field in ("armature", "damping", "friction"):
        np.testing.assert_array_equal(getattr(robot, field), getattr(expected, field), err_msg=field)


def test_drive_file_with_explicit_values_over_it(harness_factory, drive_file):
    """The file's values, an array over them (viscous_friction, every joint) and a value by name over both
    (armature of elbow_joint); the torques equal the library's for that robot."""
    h = harness_factory(robot_description=DEFAULT_ROBOT, drive_file=drive_file, viscous_friction=[0.7],
                        **{"armature.elbow_joint": 0.05})
    expected = rd.load_drive(ARM, drive_file).with_drive(damping=np.full(6, 0.7)).with_drive(
        armature={"elbow_joint": 0.05})
    assert_drive_equal(h.node.model.robot, expected)
    assert expected.armature[2] == 0.05 and expected.armature[1] == 0.4 and expected.friction[3] == 0.25
    np.testing.assert_allclose(torques_of(h, 3), rd.inverse_dynamics(expected, Q, QD, np.zeros(6)).torques,
                               rtol=0, atol=1e-12)

    # at run time: a value by name changes one joint; the file set empty leaves the URDF's values under the others
    assert h.set_parameters(Parameter("armature.elbow_joint", value=0.2)).successful
    assert h.node.model.robot.armature[2] == 0.2 and h.node.model.robot.armature[1] == 0.4
    assert h.set_parameters(Parameter("drive_file", value="")).successful
    assert_drive_equal(h.node.model.robot, ARM.with_drive(damping=np.full(6, 0.7), armature={"elbow_joint": 0.2}))


def test_a_coupled_wrist_in_the_drive_file(harness_factory, tmp_path):
    """A drive file whose transmission has one motor turning two joints (a coupled wrist, ``G = [[32, 0], [24,
    36]]``): the node's model has the coupled motor and its torques are the library's, ``G^T tau_m`` above the rigid
    arm's on the wrist's joints."""
    path = tmp_path / "drive.yaml"
    path.write_text("transmissions:\n  wrist: {joints: [wrist_2_joint, wrist_3_joint], matrix: [[32.0, 0.0], "
                    "[24.0, 36.0]], rotor_inertia: [4.0e-5, 2.5e-5], damping: [3.0e-4, 1.0e-4], "
                    "friction: [0.015, 0.02], coulomb_velocity: [0.6, 0.4]}\n")
    h = harness_factory(robot_description=DEFAULT_ROBOT, drive_file=str(path))
    expected = rd.load_drive(ARM, str(path))
    assert [m.gears for m in h.node.model.robot.coupled_motors] == [(24.0, 36.0)]
    G = np.array([[32.0, 0.0], [24.0, 36.0]])
    theta_d = G @ QD[4:]
    tau_m = [3.0e-4, 1.0e-4] * theta_d + [0.015, 0.02] * np.tanh(theta_d / [0.6, 0.4])
    rigid = rd.inverse_dynamics(ARM, Q, QD, np.zeros(6)).torques
    np.testing.assert_allclose(rd.inverse_dynamics(expected, Q, QD, np.zeros(6)).torques[4:] - rigid[4:],
                               G.T @ tau_m, rtol=0, atol=1e-12)
    np.testing.assert_allclose(torques_of(h, 3), rd.inverse_dynamics(expected, Q, QD, np.zeros(6)).torques,
                               rtol=0, atol=1e-12)


def test_a_bad_drive_file_is_refused_with_a_one_line_reason(harness_factory, drive_file, tmp_path):
    h = harness_factory(robot_description=DEFAULT_ROBOT, drive_file=drive_file)
    model = h.node.model
    bad = {"missing.yaml": (None, "No such file"),
           "not_a_map.yaml": ("[1, 2]\n", "expected a mapping joint -> {parameter: value}"),
           "unknown_parameter.yaml": ("elbow_joint: {stiffnes: 10.0}\n", "unknown parameter 'stiffnes'"),
           "unknown_joint.yaml": ("gripper_joint: {armature: 0.1}\n", "no movable joint 'gripper_joint'"),
           "negative.yaml": ("elbow_joint: {armature: -0.1}\n", "armature"),
           "broken.yaml": ("elbow_joint: {armature: 0.1\n", "drive file")}
    for name, (text, reason) in bad.items():
        path = tmp_path / name
        if text is not None:
            path.write_text(text)
        result = h.node.set_parameters([Parameter("drive_file", value=str(path))])[0]
        assert not result.successful and reason in result.reason and "\n" not in result.reason.strip(), result.reason
        assert h.node.get_parameter("drive_file").value == drive_file and h.node.model is model
    assert h.node.builds_pending == 0


def test_per_joint_maps_by_name_in_a_parameter_file_equal_the_arrays(tmp_path):
    """``armature: {joint: value}`` in a parameter file (flattened by ROS to armature.<joint>) gives the model that
    the arrays in joint_names order give; values by name are checked like the arrays."""
    maps = tmp_path / "maps.yaml"
    maps.write_text(f"""inverse_dynamics:
  ros__parameters:
    robot_description: {DEFAULT_ROBOT}
    armature: {{shoulder_pan_joint: 0.2, wrist_1_joint: 0.1}}
    viscous_friction: {{elbow_joint: 0.7}}
    coulomb_friction: [0.3]
""")
    arrays = tmp_path / "arrays.yaml"
    arrays.write_text(f"""inverse_dynamics:
  ros__parameters:
    robot_description: {DEFAULT_ROBOT}
    armature: [0.2, 0.0, 0.0, 0.1, 0.0, 0.0]
    viscous_friction: [0.0, 0.0, 0.7, 0.0, 0.0, 0.0]
    coulomb_friction: [0.3]
""")
    expected = ARM.with_drive(armature={"shoulder_pan_joint": 0.2, "wrist_1_joint": 0.1},
                              damping={"elbow_joint": 0.7}, friction=np.full(6, 0.3))
    results = []
    for path in (maps, arrays):
        h = Harness(InverseDynamicsNode, init_args=["--ros-args", "--params-file", str(path)])
        try:
            assert_drive_equal(h.node.model.robot, expected)
            results.append(torques_of(h, 4))
            if path is maps:
                assert h.node.get_parameter("armature.wrist_1_joint").value == 0.1
                assert list(h.node.get_parameter("armature").value) == []
                result = h.node.set_parameters([Parameter("armature.wrist_1_joint", value=-1.0)])[0]
                assert not result.successful and "armature must be finite and >= 0" in result.reason
                assert h.set_parameters(Parameter("armature.wrist_1_joint", value=0.4)).successful
                assert h.node.model.robot.armature[3] == 0.4
        finally:
            h.close()
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0], rd.inverse_dynamics(expected, Q, QD, np.zeros(6)).torques, rtol=0,
                               atol=1e-12)


def test_a_value_by_name_of_a_joint_the_robot_lacks_is_refused():
    h = Harness(InverseDynamicsNode, robot_description=DEFAULT_ROBOT, **{"armature.gripper_joint": 0.1})
    try:
        assert h.node.model is None
        assert "armature.gripper_joint: robot 'rne_arm6' has no movable joint 'gripper_joint'" in h.node.refusal
    finally:
        h.close()


def test_initial_positions_by_name():
    h = Harness(ForwardDynamicsNode, robot_description=DEFAULT_ROBOT, **{"initial_positions.elbow_joint": 1.0})
    try:
        q0 = h.node.state[0]
        assert q0[2] == 1.0 and np.count_nonzero(q0) == 1
        result = h.node.set_parameters([Parameter("initial_positions.elbow_joint", value=9.0)])[0]
        assert not result.successful and "elbow_joint = 9.0 is outside its limits" in result.reason
    finally:
        h.close()


def test_the_maps_of_the_parameter_file_load(tmp_path):
    """config/rne_dynamics.yaml's commented per-joint maps (rne_arm6's joints), uncommented, give both nodes a model
    with those values."""
    import os
    import re
    config = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "rne_dynamics.yaml")
    text, count = re.subn(r"(?m)^    # (\w+: \{.*)$", r"    \1", open(config).read())
    assert count == 9
    path = tmp_path / "config.yaml"
    path.write_text(text)
    for node_class in (InverseDynamicsNode, ForwardDynamicsNode):
        h = Harness(node_class, init_args=["--ros-args", "--params-file", str(path)],
                    robot_description=DEFAULT_ROBOT)
        try:
            robot = h.node.model.robot
            assert robot.armature[1:3].tolist() == [0.5, 0.3] and robot.damping[1] == 2.0
            assert robot.elastic_joints == ("shoulder_lift_joint", "elbow_joint")
        finally:
            h.close()
