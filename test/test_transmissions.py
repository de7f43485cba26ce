"""Transmissions between motors and joints (the drive layer's ``transmissions``): ros2_control ``<transmission>``
elements read into joint-to-motor matrices ``G`` (simple, differential, four-bar, the ROS 1 ``<type>`` form too),
checked against transmission_interface's formulas written out by hand; rotor inertias and motor friction from
``drive.yaml`` reflected to the joints (``n^2 I_m qdd + n^2 b qd + |n| f_c tanh(qd / (v / |n|))``, against a hand
computation, negative reductions included) through inverse and forward dynamics, the mass matrix and ``loads
--drive``; the joints' own terms kept when the transmissions change; a coupled motor with inertia refused naming
it; bad entries refused in one line."""
import numpy as np
import pytest
import yaml

import rne_dynamics as rd
from rne_dynamics.model import drive
from test_cli import read_loads, run_cli

ARM = rd.bundled_robot_path()
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
TRANSMISSIONS = """
  <ros2_control name="arm" type="system">
    <transmission name="lift">
      <plugin>transmission_interface/SimpleTransmission</plugin>
      <actuator name="lift_motor" role="actuator1"/>
      <joint name="shoulder_lift_joint" role="joint1"><mechanical_reduction>-80.0</mechanical_reduction></joint>
    </transmission>
    <transmission name="wrist">
      <plugin>transmission_interface/DifferentialTransmission</plugin>
      <actuator name="m5" role="actuator1"><mechanical_reduction>20.0</mechanical_reduction></actuator>
      <actuator name="m6" role="actuator2"><mechanical_reduction>30.0</mechanical_reduction></actuator>
      <joint name="wrist_1_joint" role="joint1"><mechanical_reduction>2.0</mechanical_reduction></joint>
      <joint name="wrist_2_joint" role="joint2"><mechanical_reduction>1.5</mechanical_reduction></joint>
    </transmission>
    <transmission name="elbow_and_wrist_3">
      <plugin>transmission_interface/FourBarLinkageTransmission</plugin>
      <actuator name="a2" role="actuator2"><mechanical_reduction>40.0</mechanical_reduction></actuator>
      <actuator name="a1" role="actuator1"><mechanical_reduction>50.0</mechanical_reduction></actuator>
      <joint name="elbow_joint" role="joint1"><mechanical_reduction>3.0</mechanical_reduction></joint>
      <joint name="wrist_3_joint" role="joint2"><mechanical_reduction>0.5</mechanical_reduction></joint>
    </transmission>
    <transmission name="gripper"><plugin>acme/GripperReducer</plugin></transmission>
  </ros2_control>
  <transmission name="pan">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="shoulder_pan_joint"><hardwareInterface>EffortJointInterface</hardwareInterface></joint>
    <actuator name="pan_motor"><mechanicalReduction>100</mechanicalReduction></actuator>
  </transmission>
"""


def arm_with(extra):
    with open(ARM) as stream:
        text = stream.read()
    return text.replace("</robot>", extra + "</robot>")


@pytest.fixture(scope="module")
def robot():
    return rd.load_urdf(arm_with(TRANSMISSIONS))


def test_urdf_transmissions_read_as_ros2_control_defines_them(robot):
    """Motor velocities as transmission_interface's joint-to-actuator velocity maps: simple ``n``; differential
    ``a1 (j1 qd1 + j2 qd2)``, ``a2 (j1 qd1 - j2 qd2)``; four-bar ``a1 j1 qd1``, ``a2 (qd1 + j2 qd2)`` (actuators
    ordered by role); the ROS 1 form's reduction in ``<actuator>``; another plugin not read."""
    got = {t.name: t for t in robot.transmissions}
    assert sorted(got) == ["elbow_and_wrist_3", "lift", "pan", "wrist"]
    np.testing.assert_array_equal(got["lift"].matrix, [[-80.0]])
    np.testing.assert_array_equal(got["pan"].matrix, [[100.0]])
    assert got["wrist"].joints == ("wrist_1_joint", "wrist_2_joint") and got["wrist"].motors == ("m5", "m6")
    np.testing.assert_array_equal(got["wrist"].matrix, [[20 * 2, 20 * 1.5], [30 * 2, -30 * 1.5]])
    assert got["elbow_and_wrist_3"].motors == ("a1", "a2")
    np.testing.assert_array_equal(got["elbow_and_wrist_3"].matrix, [[50 * 3, 0], [40, 40 * 0.5]])
    assert not robot.armature.any() and not robot.damping.any()   # a URDF gives no rotor inertia


def test_rotor_inertia_and_motor_friction_reflected_equal_a_hand_computation(robot, tmp_path):
    """drive.yaml's terms on the URDF's simple transmissions (a negative reduction too): inverse dynamics adds
    ``n^2 I_m qdd + n^2 b qd + |n| f_c tanh(n qd / v) sign(n)``, the motor torque ``tau_m = I_m thetadd + b thetad +
    f_c tanh(thetad / v)`` at ``thetad = n qd`` seen at the joint as ``n tau_m``; the mass matrix ``n^2 I_m`` on
    the diagonal; forward dynamics inverts it; ``loads --drive`` equals the library."""
    path = tmp_path / "drive.yaml"
    path.write_text(yaml.safe_dump({
        "elbow_joint": {"damping": 0.3},
        "transmissions": {"lift": {"rotor_inertia": [3e-5], "damping": [2e-4], "friction": [0.02],
                                   "coulomb_velocity": [0.8]},
                          "pan": {"rotor_inertia": 5e-5}}}))
    driven = rd.load_drive(robot, path)
    rng = np.random.default_rng(3)
    q, qd, qdd = rng.uniform(-1, 1, (3, 5, 6))
    extra = rd.inverse_dynamics(driven, q, qd, qdd).torques - rd.inverse_dynamics(robot, q, qd, qdd).torques
    theta_d, theta_dd = -80.0 * qd[:, 1], -80.0 * qdd[:, 1]
    lift = -80.0 * (3e-5 * theta_dd + 2e-4 * theta_d + 0.02 * np.tanh(theta_d / 0.8))
    expected = np.zeros_like(extra)
    expected[:, 0] = 100.0 * (5e-5 * 100.0 * qdd[:, 0])
    expected[:, 1] = lift
    expected[:, 2] = 0.3 * qd[:, 2]
    np.testing.assert_allclose(extra, expected, rtol=1e-12, atol=1e-12)
    M = rd.mass_matrix(driven, q[0]) - rd.mass_matrix(robot, q[0])
    np.testing.assert_allclose(M, np.diag([100.0 ** 2 * 5e-5, 80.0 ** 2 * 3e-5, 0, 0, 0, 0]), atol=1e-12)
    tau = rd.inverse_dynamics(driven, q, qd, qdd).torques
    np.testing.assert_allclose(rd.forward_dynamics(driven, q, qd, tau), qdd, atol=1e-9)
    motion = tmp_path / "motion.csv"
    t = np.linspace(0, 2, 201)
    positions = 0.3 * np.sin(np.outer(t, np.arange(1, 7)))
    np.savetxt(motion, np.column_stack([t, positions]), delimiter=",", comments="",
               header=",".join(["time"] + [f"{j}.position" for j in JOINTS]))
    urdf = tmp_path / "arm.urdf"
    urdf.write_text(arm_with(TRANSMISSIONS))
    code, _, err = run_cli("loads", urdf, motion, "--drive", path, "-o", tmp_path / "with")
    assert code == 0, err
    code, _, err = run_cli("loads", urdf, motion, "-o", tmp_path / "without")
    with_drive, without = read_loads(tmp_path / "with"), read_loads(tmp_path / "without")
    difference = with_drive["shoulder_pan_joint.torque"] - without["shoulder_pan_joint.torque"]
    np.testing.assert_allclose(difference, 100.0 ** 2 * 5e-5 * with_drive["shoulder_pan_joint.acceleration"],
                               atol=1e-9)


def test_changing_transmissions_keeps_the_joints_own_terms(robot):
    """``with_drive(armature=...)`` sets the joint's own term, the motors' added on top; replacing a transmission's
    rotor inertia replaces its share only."""
    geared = robot.with_drive(transmissions={"lift": {"rotor_inertia": [1e-4]}})
    assert geared.armature[1] == pytest.approx(80.0 ** 2 * 1e-4)
    own = geared.with_drive(armature={"shoulder_lift_joint": 0.05})
    assert own.armature[1] == pytest.approx(0.05 + 80.0 ** 2 * 1e-4)
    lighter = own.with_drive(transmissions={"lift": {"rotor_inertia": [2e-5]}})
    assert lighter.armature[1] == pytest.approx(0.05 + 80.0 ** 2 * 2e-5)
    assert lighter.with_drive(transmissions={"lift": {"rotor_inertia": [0.0]}}).armature[1] == pytest.approx(0.05)
    locked = lighter.with_locked_joints({"shoulder_pan_joint": 0.0})
    assert locked.armature[0] == pytest.approx(0.05 + 80.0 ** 2 * 2e-5)


def test_a_coupled_motor_with_inertia_is_refused_naming_it(robot):
    """The differential wrist's motors each turn two joints: their rotor inertia couples the joints (``G^T
    diag(I_m) G`` is not diagonal), which the per-joint drive terms cannot hold; without terms it loads."""
    np.testing.assert_allclose(drive.reflected_terms(robot, robot.transmissions)["armature"], 0.0)
    with pytest.raises(rd.ModelError, match=r"transmission 'wrist': motor 'm5' turns joints wrist_1_joint, "
                                            r"wrist_2_joint at once"):
        robot.with_drive(transmissions={"wrist": {"rotor_inertia": [1e-5, 0.0]}})


@pytest.mark.parametrize("entry, message", [
    ({"nothing": {"rotor_inertia": [1.0]}}, "'nothing': not a transmission of the URDF: give its joints and matrix"),
    ({"lift": {"rotor_inertia": [-1.0]}}, r"'lift': rotor_inertia must be 1 finite values >= 0 \(one per motor\)"),
    ({"x": {"joints": ["elbow_joint"], "matrix": [[1.0, 2.0]]}}, r"'x': matrix must be finite, one row per motor "
                                                                  r"and one column per joint \(1\)"),
    ({"x": {"joints": ["nope"], "matrix": [[1.0]]}}, "'x': robot 'rne_arm6' has no movable joint 'nope'"),
    ({"lift": {"inertia": [1.0]}}, "'lift': unknown field 'inertia'"),
    ([1, 2], "transmissions must map a name to"),
])
def test_bad_transmission_entries_refused_in_one_line(robot, tmp_path, entry, message):
    path = tmp_path / "drive.yaml"
    path.write_text(yaml.safe_dump({"transmissions": entry}))
    with pytest.raises(rd.ModelError, match=f"^drive file {path}: .*{message}"):
        rd.load_drive(robot, path)


def test_a_urdf_transmission_the_model_cannot_take_is_left_out_with_a_warning():
    bad = TRANSMISSIONS.replace("<mechanical_reduction>-80.0</mechanical_reduction>",
                                "<mechanical_reduction>fast</mechanical_reduction>")
    with pytest.warns(rd.ModelWarning, match="transmission 'lift' left out: <joint name='shoulder_lift_joint'>: "
                                             "mechanical reduction 'fast' is not a finite non-zero number"):
        robot = rd.load_urdf(arm_with(bad))
    assert "lift" not in [t.name for t in robot.transmissions]
