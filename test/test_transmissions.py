"""Transmissions between motors and joints (the drive layer's ``transmissions``): ros2_control ``<transmission>``
elements read into joint-to-motor matrices ``G`` (simple, differential, four-bar, the ROS 1 ``<type>`` form too),
checked against transmission_interface's formulas written out by hand; rotor inertias and motor friction from
``drive.yaml`` reflected to the joints (``n^2 I_m qdd + n^2 b qd + |n| f_c tanh(qd / (v / |n|))``, against a hand
computation, negative reductions included) through inverse and forward dynamics, the mass matrix and ``loads
--drive``; the joints' own terms kept when the transmissions change; a coupled wrist (one motor turning two joints)
through inverse and forward dynamics, the mass matrix, hybrid dynamics, the torque rate and the derivatives against
a hand computation ``G^T (I_m G qdd + b_m G qd + f_m s(G qd))``, ``M + G^T I_m G``; bad entries refused in one
line."""
import numpy as np
import pytest
import yaml

import rne_dynamics as rd
from rne_dynamics.algorithms import aba, crba, rnea
from test_cli import MOTION_CSV, read_loads, run_cli
from test_identify_links import write_csv
from test_robot_identification import motion
from test_written import assert_equal_to_generic

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


#: A Staubli TX40's wrist: joint 6's motor also turns joint 5 (FIGAROH's TX40 model), in ros2_control's four-bar form
#: ``G = [[a1 j1, 0], [a2, a2 j2]]`` (``a = 32, 24``, ``j = 1, 1.5``) on the arm's last two joints.
G_WRIST = np.array([[32.0, 0.0], [24.0, 24.0 * 1.5]])
#: The wrist motors' terms, motor side (smooth Coulomb law on both: the derivatives are defined everywhere).
WRIST_MOTORS = {"rotor_inertia": [4e-5, 2.5e-5], "damping": [3e-4, 1e-4], "friction": [0.015, 0.02],
                "coulomb_velocity": [0.6, 0.4]}


@pytest.fixture(scope="module")
def wrist():
    """``(rigid, driven)``: the arm, and the arm with the coupled wrist's motors (:data:`WRIST_MOTORS`)."""
    rigid = rd.load_urdf(ARM)
    return rigid, rigid.with_drive(transmissions={"wrist": {"joints": ["wrist_2_joint", "wrist_3_joint"],
                                                            "motors": ["m5", "m6"], "matrix": G_WRIST.tolist(),
                                                            **WRIST_MOTORS}})


def wrist_motor_torques(qd, qdd):
    """The hand computation: ``tau_m = I_m G qdd + b_m G qd + f_m tanh(G qd / v_m)`` of the wrist's motors."""
    theta_d, theta_dd = qd[..., 4:] @ G_WRIST.T, qdd[..., 4:] @ G_WRIST.T
    return (np.multiply(WRIST_MOTORS["rotor_inertia"], theta_dd) + np.multiply(WRIST_MOTORS["damping"], theta_d)
            + np.multiply(WRIST_MOTORS["friction"], np.tanh(theta_d / WRIST_MOTORS["coulomb_velocity"])))


def hand_inverse_dynamics(rigid, q, qd, qdd):
    """``tau_rigid + G^T tau_m`` on the wrist's joints."""
    tau = rd.inverse_dynamics(rigid, q, qd, qdd).torques.copy()
    tau[..., 4:] += wrist_motor_torques(qd, qdd) @ G_WRIST
    return tau


def hand_mass_matrix(rigid, q):
    """``M_rigid + G^T diag(I_m) G`` on the wrist's block: off the diagonal too."""
    M = rd.mass_matrix(rigid, q).copy()
    M[..., 4:, 4:] += G_WRIST.T @ np.diag(WRIST_MOTORS["rotor_inertia"]) @ G_WRIST
    return M


def test_a_coupled_wrist_motor_couples_its_joints_as_a_hand_computation(wrist):
    """Joint 6's motor turns joint 5 too: inverse dynamics adds ``G^T (I_m G qdd + b_m G qd + f_m tanh(G qd /
    v_m))``, the mass matrix ``G^T I_m G`` (``I_m2 a2^2 j2`` between joints 5 and 6), forward dynamics solves ``M
    qdd = tau - h`` with both (one state and a batch), to 1e-12; ``drive=False`` leaves all of it out."""
    rigid, driven = wrist
    assert [(m.coordinates, m.gears) for m in driven.coupled_motors] == [((4, 5), (24.0, 36.0))]
    np.testing.assert_allclose(driven.armature, [0, 0, 0, 0, 32.0 ** 2 * 4e-5, 0], rtol=1e-15)   # motor 5: one joint
    rng = np.random.default_rng(7)
    q, qd, qdd = rng.uniform(-1.5, 1.5, (3, 6, 6))
    tau = hand_inverse_dynamics(rigid, q, qd, qdd)
    np.testing.assert_allclose(rd.inverse_dynamics(driven, q, qd, qdd).torques, tau, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rd.inverse_dynamics(driven, q[0], qd[0], qdd[0]).torques, tau[0], rtol=0, atol=1e-12)
    M = hand_mass_matrix(rigid, q)
    assert M[0, 4, 5] - rd.mass_matrix(rigid, q[0])[4, 5] == pytest.approx(2.5e-5 * 24.0 * 36.0, rel=1e-12)
    np.testing.assert_allclose(rd.mass_matrix(driven, q), M, rtol=0, atol=1e-12)
    bias = hand_inverse_dynamics(rigid, q, qd, np.zeros_like(qd))
    expected = np.linalg.solve(M, (tau - bias)[..., None])[..., 0]
    np.testing.assert_allclose(expected, qdd, rtol=0, atol=1e-11)   # the hand computation is consistent
    np.testing.assert_allclose(rd.forward_dynamics(driven, q, qd, tau), expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rd.forward_dynamics(driven, q[0], qd[0], tau[0]), expected[0], rtol=0, atol=1e-12)
    rigid_tau = rd.inverse_dynamics(rigid, q, qd, qdd).torques
    np.testing.assert_array_equal(rd.inverse_dynamics(driven, q, qd, qdd, drive=False).torques, rigid_tau)
    np.testing.assert_allclose(rd.forward_dynamics(driven, q, qd, rigid_tau, drive=False), qdd, rtol=0, atol=1e-11)


def test_a_coupled_wrist_in_hybrid_dynamics_torque_rates_and_the_observer(wrist):
    """Hybrid dynamics with the wrist's joint 5 of known torque and joint 6 of known acceleration equals inverse
    dynamics' balance; the torque rate's drive share is ``G^T (I_m G qddd + b_m G qdd)``, the torque acceleration's
    one order up; the momentum observer of a free motion driven by the motors' torques reads no external torque (the
    rigid model's reads the motors' share)."""
    rigid, driven = wrist
    rng = np.random.default_rng(8)
    q, qd, qdd, qddd = rng.uniform(-1, 1, (4, 6))
    tau = hand_inverse_dynamics(rigid, q, qd, qdd)
    known = np.array([True, True, True, True, False, True])
    given = np.where(known, qdd, 0.0), np.where(known, 0.0, tau)
    result = rd.hybrid_dynamics(driven, q, qd, *given, known_acceleration=known)
    np.testing.assert_allclose(result.accelerations, qdd, rtol=0, atol=1e-11)
    np.testing.assert_allclose(result.torques, tau, rtol=0, atol=1e-11)
    rate = rd.torque_rate(driven, q, qd, qdd, qddd) - rd.torque_rate(rigid, q, qd, qdd, qddd)
    expected = np.zeros(6)
    expected[4:] = (np.multiply(WRIST_MOTORS["rotor_inertia"], G_WRIST @ qddd[4:])
                    + np.multiply(WRIST_MOTORS["damping"], G_WRIST @ qdd[4:])) @ G_WRIST
    np.testing.assert_allclose(rate, expected, rtol=0, atol=1e-12)
    qdddd = rng.uniform(-1, 1, 6)
    jerk = (rd.torque_acceleration(driven, q, qd, qdd, qddd, qdddd)
            - rd.torque_acceleration(rigid, q, qd, qdd, qddd, qdddd))
    expected[4:] = (np.multiply(WRIST_MOTORS["rotor_inertia"], G_WRIST @ qdddd[4:])
                    + np.multiply(WRIST_MOTORS["damping"], G_WRIST @ qddd[4:])) @ G_WRIST
    np.testing.assert_allclose(jerk, expected, rtol=0, atol=1e-12)
    t = np.arange(0, 1.0, 1e-3)
    q = 0.5 * np.sin(np.outer(t, [1.0, 1.3, 1.7, 2.1, 2.9, 3.7]))
    qd = 0.5 * np.cos(np.outer(t, [1.0, 1.3, 1.7, 2.1, 2.9, 3.7])) * [1.0, 1.3, 1.7, 2.1, 2.9, 3.7]
    qdd = -q * np.square([1.0, 1.3, 1.7, 2.1, 2.9, 3.7])
    tau = rd.inverse_dynamics(driven, q, qd, qdd).torques
    estimates = {}
    for name, model in (("driven", driven), ("rigid", rigid)):
        observer = rd.MomentumObserver(model, 50.0)
        estimates[name] = np.array([observer.update(*state, 1e-3).copy() for state in zip(q, qd, tau)])
    motors = np.abs(estimates["rigid"][500:, 4:]).max()   # the rigid model reads the motors as external torques
    assert motors > 0.1 and np.abs(estimates["driven"][500:]).max() < 1e-4 * motors


def test_a_coupled_wrist_derivatives_equal_finite_differences(wrist):
    """``d tau / d qd`` (with ``G^T (b_m + f_m s'(G qd)) G``) and ``d tau / d qdd`` (the mass matrix) of the driven
    robot against central differences of its inverse dynamics; forward dynamics' ``d qdd / d tau = M^-1``."""
    _, driven = wrist
    rng = np.random.default_rng(9)
    q, qd, qdd = rng.uniform(-1, 1, (3, 6))
    _, dtau_dqd, dtau_dqdd = rd.inverse_dynamics_derivatives(driven, q, qd, qdd)
    h, eye = 1e-6, np.eye(6)
    numeric = [(rd.inverse_dynamics(driven, q, qd + h * e, qdd).torques
                - rd.inverse_dynamics(driven, q, qd - h * e, qdd).torques) / (2 * h) for e in eye]
    np.testing.assert_allclose(dtau_dqd, np.array(numeric).T, rtol=0, atol=1e-7)
    assert dtau_dqd[4, 5] != pytest.approx(rd.inverse_dynamics_derivatives(driven, q, qd, qdd, drive=False)[1][4, 5])
    numeric = [(rd.inverse_dynamics(driven, q, qd, qdd + h * e).torques
                - rd.inverse_dynamics(driven, q, qd, qdd - h * e).torques) / (2 * h) for e in eye]
    np.testing.assert_allclose(dtau_dqdd, np.array(numeric).T, rtol=0, atol=1e-8)
    tau = rd.inverse_dynamics(driven, q, qd, qdd).torques
    np.testing.assert_allclose(rd.forward_dynamics_derivatives(driven, q, qd, tau)[2],
                               np.linalg.inv(rd.mass_matrix(driven, q)), rtol=1e-10, atol=1e-12)


def test_a_coupled_wrists_machine_code_equals_the_generic_kernels(wrist, monkeypatch, tmp_path):
    """The coupled motor's terms written out with the model's numbers (inverse dynamics, the mass matrix, forward
    dynamics by the mass-matrix solve) and built as C equal the generic kernels, which equal the hand computation
    above."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    assert_equal_to_generic(wrist[1], [rnea.INVERSE_DYNAMICS, crba.MASS_MATRIX, aba.ACCELERATIONS], native=True,
                            states=1)


def test_locking_a_coupled_joint_leaves_a_single_joint_motor(wrist):
    """With joint 6 locked, its motor turns joint 5 alone: ``a2^2 I_m2``, ``a2^2 b_m2`` and ``a2 f_m2`` join joint
    5's terms, no coupled motor. With both motors' Coulomb friction on joint 5 at different velocity scales (one
    joint has one Coulomb law) the second motor is carried whole, its torque ``a2 tau_m2(a2 qd5, a2 qdd5)`` as a
    hand computation."""
    rigid, driven = wrist
    locked = driven.with_drive(transmissions={"wrist": {"friction": [0.0, 0.02]}}).with_locked_joints(
        {"wrist_3_joint": 0.3})
    assert locked.coupled_motors == ()
    assert locked.armature[4] == pytest.approx(32.0 ** 2 * 4e-5 + 24.0 ** 2 * 2.5e-5, rel=1e-14)
    assert locked.damping[4] == pytest.approx(32.0 ** 2 * 3e-4 + 24.0 ** 2 * 1e-4, rel=1e-14)
    assert (locked.friction[4], locked.coulomb_velocity[4]) == pytest.approx((24.0 * 0.02, 0.4 / 24.0), rel=1e-14)
    locked = driven.with_locked_joints({"wrist_3_joint": 0.3})
    assert [(m.coordinates, m.gears) for m in locked.coupled_motors] == [((4,), (24.0,))]
    assert (locked.friction[4], locked.coulomb_velocity[4]) == pytest.approx((32.0 * 0.015, 0.6 / 32.0), rel=1e-14)
    rng = np.random.default_rng(10)
    q, qd, qdd = rng.uniform(-1, 1, (3, 4, 5))
    theta_d, theta_dd = (np.array([32.0, 24.0]) * x[:, 4:] for x in (qd, qdd))
    motors = (np.multiply(WRIST_MOTORS["rotor_inertia"], theta_dd) + np.multiply(WRIST_MOTORS["damping"], theta_d)
              + np.multiply(WRIST_MOTORS["friction"], np.tanh(theta_d / WRIST_MOTORS["coulomb_velocity"])))
    expected = rd.inverse_dynamics(rigid.with_locked_joints({"wrist_3_joint": 0.3}), q, qd, qdd).torques
    expected[:, 4] += motors @ [32.0, 24.0]
    tau = rd.inverse_dynamics(locked, q, qd, qdd).torques
    np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-12)
    np.testing.assert_allclose(rd.forward_dynamics(locked, q, qd, tau), qdd, rtol=0, atol=1e-10)


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
    assert any("transmission 'lift' left out" in message for message in robot.warnings)


def test_a_transmission_left_out_is_said_by_the_command_line(tmp_path):
    """The commands show ``robot.warnings`` (they silence Python's): a transmission left out was only a Python
    warning, so inspect said 'warnings (0)' and identify --links fitted without it, silently."""
    path = tmp_path / "arm.urdf"
    path.write_text(arm_with(TRANSMISSIONS.replace("<mechanical_reduction>-80.0</mechanical_reduction>",
                                                   "<mechanical_reduction>0</mechanical_reduction>")))
    code, out, err = run_cli("inspect", path)
    assert code == 0 and "warnings (1)" in out and "transmission 'lift' left out: <joint name='shoulder_lift_joint'>: " \
        "mechanical reduction '0' is not a finite non-zero number" in out, out
    code, _, err = run_cli("loads", path, MOTION_CSV, "-o", tmp_path)
    assert code == 0 and "loads: warning: transmission 'lift' left out" in err, err
    with pytest.warns(rd.ModelWarning, match="transmission 'lift' left out"):
        robot = rd.load_urdf(str(path))
    q, qd, qdd = (np.tile(x, (2, 1)) for x in motion(robot, 300))
    recording = tmp_path / "recording.csv"
    write_csv(recording, robot, np.arange(600) * 0.02, q, rd.inverse_dynamics(robot, q, qd, qdd).torques, qd, qdd)
    for options in (["--links"], ["--friction"]):
        code, _, err = run_cli("identify", path, recording, *options, "-o", tmp_path / "identified")
        assert code == 0 and "identify: warning: transmission 'lift' left out" in err, err
