"""Locked joints (``robot.with_locked_joints``, ``load_urdf(..., locked_joints=)``) against Pinocchio's
``buildReducedModel`` on example-robot-data robots, and against our own full model.

Pinocchio: the same URDF loaded with mimic joints, reduced with the ids of our ``locked_joints`` (mimic joints
included: Pinocchio refuses to lock a mimic's source without it) at the reference configuration holding the locked
values. RNEA (URDF damping and friction added back, as in ``test_floating_base``), CRBA and ABA agree to 1e-12.

Our own full model: the reduced robot's torques are the full robot's at the same coordinates with the locked joints
at their positions and at rest; its mass matrix is the full one's block of the remaining coordinates.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-12
TALOS = "talos_data/robots/talos_reduced.urdf"
CASES = {
    "panda-fingers": ("panda_description/urdf/panda.urdf", False, {"panda_finger_joint1": 0.03}),
    "talos-grippers-head-arm": (TALOS, False, {"gripper_left_joint": -0.5, "gripper_right_joint": 0.2,
                                               "head_1_joint": 0.3, "head_2_joint": -0.2, "arm_left_4_joint": -1.1}),
    "talos-floating-legs": (TALOS, True, {f"leg_{side}_{k}_joint": 0.1 * k for side in ("left", "right")
                                          for k in range(1, 7)}),
    "solo12-base-and-a-knee": ("solo_description/robots/solo12.urdf", True,
                               {"root_joint": [0.1, -0.2, 0.4, 0.2, -0.1, 0.3, np.sqrt(1 - 0.14)],
                                "FL_KFE": -1.2}),
}


def reference_q(robot, locked):
    """The full robot's neutral configuration with the locked values."""
    q = rd.neutral(robot)
    for name, value in locked.items():
        q[robot.idx_q[name]:robot.idx_q[name] + np.size(value)] = value
    return q


@pytest.mark.parametrize("case", CASES)
def test_equals_pinocchio_reduced_model(case):
    path, floating, locked = CASES[case]
    full, model = oracle.floating_pair(oracle.robot_path(path)) if floating else oracle.pair(oracle.robot_path(path))
    robot = full.with_locked_joints(locked)
    assert robot.nv == full.nv - sum(full.bodies[full.body_joint_names.index(n)].nv for n in locked)
    reference = oracle.FloatingMapping(full, model).q(reference_q(full, locked))
    reduced = pin.buildReducedModel(model, [model.getJointId(n) for n in robot.locked_joints], reference)
    assert not oracle.has_mimic_joints(reduced)
    data, mapping = reduced.createData(), oracle.FloatingMapping(robot, reduced)
    assert mapping.floating == robot.has_floating_base
    gravity = np.array([1.7, -2.3, -9.1])
    reduced.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    for q, v, a in zip(*oracle.random_floating_states(robot, 3, seed=len(case))):
        Q, V, A = mapping.q(q), mapping.v(v), mapping.v(a)
        tau = rd.inverse_dynamics(robot, q, v, a, gravity=gravity).torques
        assert oracle.relative_error(tau, mapping.ours(pin.rnea(reduced, data, Q, V, A))
                                     + mapping.drive_torques(v)) < TOLERANCE
        M = np.triu(pin.crba(reduced, data, Q))
        assert oracle.relative_error(rd.mass_matrix(robot, q), mapping.ours(M + np.triu(M, 1).T)) < TOLERANCE
        qdd = rd.forward_dynamics(robot, q, v, tau, gravity=gravity)
        expected = mapping.ours(pin.aba(reduced, data, Q, V, mapping.v(tau - mapping.drive_torques(v))))
        assert oracle.relative_error(qdd, expected) < TOLERANCE
        assert oracle.relative_error(qdd, a) < TOLERANCE  # the round trip through our own inverse dynamics


#: Talos with its grippers' 12 mimic joints (Pinocchio 4.1 refuses this file with mimic joints on): locking a
#: gripper's source joint locks its mimics.
OWN_CASES = {**CASES, "talos-full-left-gripper": ("talos_data/robots/talos_full_v2.urdf", True,
                                                 {"gripper_left_joint": -0.4, "arm_right_2_joint": -0.3})}


@pytest.mark.parametrize("case", OWN_CASES)
def test_equals_the_full_model_at_rest_in_the_locked_joints(case):
    """Torques of the remaining coordinates are the full model's with the locked joints at their positions, zero
    velocity and acceleration; rotor inertias (random, set before locking) included."""
    path, floating, locked = OWN_CASES[case]
    full = oracle.load_quietly(oracle.robot_path(path), floating_base=floating)
    full = oracle.with_armature(full, seed=3)
    robot = full.with_locked_joints(locked)
    mimics = {"panda-fingers": 1, "talos-full-left-gripper": 6}.get(case, 0)  # locked with their source
    assert len(robot.locked_joints) == len(locked) + mimics
    assert robot.has_mimic == (case == "talos-full-left-gripper")  # the right gripper still moves
    keep_q = [full.q_names.index(n) for n in robot.q_names]
    keep_v = [full.v_names.index(n) for n in robot.v_names]
    np.testing.assert_array_equal(robot.armature, [full.armature[full.joint_index(n)] for n in robot.joint_names])
    q_full = reference_q(full, locked)
    for q, v, a in zip(*oracle.random_floating_states(robot, 2, seed=7)):
        Q, V, A = q_full.copy(), np.zeros(full.nv), np.zeros(full.nv)
        Q[keep_q], V[keep_v], A[keep_v] = q, v, a
        expected = rd.inverse_dynamics(full, Q, V, A).torques[keep_v]
        assert np.abs(rd.inverse_dynamics(robot, q, v, a).torques - expected).max() < TOLERANCE * max(
            1.0, np.abs(expected).max())
        M = rd.mass_matrix(full, Q)[np.ix_(keep_v, keep_v)]
        assert np.abs(rd.mass_matrix(robot, q) - M).max() < TOLERANCE * max(1.0, np.abs(M).max())


SPHERICAL_PLANAR = """<robot name="mixed">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0.02 -0.03" rpy="0.3 0.2 0.1"/><mass value="2"/>
    <inertia ixx="0.03" ixy="0.001" ixz="0" iyy="0.04" iyz="0.002" izz="0.05"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.1 0.05"/><mass value="1.5"/>
    <inertia ixx="0.02" ixy="0" ixz="0.001" iyy="0.03" iyz="0" izz="0.025"/></inertial></link>
  <link name="c"><inertial><origin xyz="0.05 0 0.1"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.008"/></inertial></link>
  <link name="d"><inertial><origin xyz="0 0 0.2"/><mass value="0.5"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.001"/></inertial></link>
  <joint name="slide" type="planar"><parent link="base"/><child link="a"/><origin xyz="0 0 0.1" rpy="0.1 0 0"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="ball" type="spherical"><parent link="a"/><child link="b"/><origin xyz="0.3 0 0" rpy="0 0.4 0"/></joint>
  <joint name="elbow" type="revolute"><parent link="b"/><child link="c"/><origin xyz="0 0.3 0"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-2" upper="2" effort="10" velocity="2"/>
    <dynamics damping="0.3" friction="0.2"/></joint>
  <joint name="wrist" type="prismatic"><parent link="c"/><child link="d"/><origin xyz="0 0 0.2"/>
    <axis xyz="0 0 1"/><limit lower="-0.1" upper="0.1" effort="10" velocity="1"/></joint>
</robot>"""


@pytest.mark.parametrize("locked", [{"slide": [0.2, -0.1, 0.7]}, {"ball": [0.1, 0.2, -0.3, np.sqrt(0.86)]},
                                    {"slide": [0.2, -0.1, 0.7], "elbow": 0.4}, {"root_joint": [0, 0, 1, 0, 0, 0, 1]}])
def test_joints_of_several_coordinates(locked):
    """A planar joint (x y theta), a spherical one (a quaternion) and a floating base (7 numbers) locked; the
    remaining joints keep their URDF damping and friction."""
    full = rd.load_urdf(SPHERICAL_PLANAR, floating_base=True)
    robot = full.with_locked_joints(locked)
    assert robot.has_floating_base == ("root_joint" not in locked)
    assert robot.damping.tolist() == [0.3 if n == "elbow" else 0.0 for n in robot.joint_names]
    keep_q = [full.q_names.index(n) for n in robot.q_names]
    keep_v = [full.v_names.index(n) for n in robot.v_names]
    q_full = reference_q(full, locked)
    for q, v, a in zip(*oracle.random_floating_states(robot, 3, seed=1)):
        Q, V, A = q_full.copy(), np.zeros(full.nv), np.zeros(full.nv)
        Q[keep_q], V[keep_v], A[keep_v] = q, v, a
        expected = rd.inverse_dynamics(full, Q, V, A).torques[keep_v]
        assert np.abs(rd.inverse_dynamics(robot, q, v, a).torques - expected).max() < 1e-12
        for link in ("a", "b", "c", "d"):  # every link where the full model puts it
            np.testing.assert_allclose(rd.frame_placement(robot, q, link), rd.frame_placement(full, Q, link),
                                       atol=1e-14)


def test_load_urdf_keyword_and_locking_twice():
    path = oracle.robot_path("panda_description/urdf/panda.urdf")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loaded = rd.load_urdf(path, locked_joints={"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.03})
    twice = oracle.load_quietly(path).with_locked_joints({"panda_joint7": 0.5}).with_locked_joints(
        {"panda_finger_joint1": 0.03})
    assert loaded.joint_names == tuple(f"panda_joint{k}" for k in range(1, 8))
    assert loaded.locked_joints == {"panda_finger_joint1": (0.03,), "panda_finger_joint2": (0.03,)}
    assert twice.locked_joints == {"panda_joint7": (0.5,), "panda_finger_joint1": (0.03,),
                                   "panda_finger_joint2": (0.03,)}
    q = np.linspace(-1, 1, 6)
    expected = rd.inverse_dynamics(loaded.with_locked_joints({"panda_joint7": 0.5}), q, q, q).torques
    assert np.abs(rd.inverse_dynamics(twice, q, q, q).torques - expected).max() < 1e-12


def test_drive_values_of_the_remaining_joints_are_kept():
    robot = rd.load_urdf(rd.bundled_robot_path())
    names = robot.joint_names
    values = {label: {n: 0.1 + k for k, n in enumerate(names)} for label in ("armature", "damping", "friction",
                                                                           "stiffness", "motor_inertia")}
    driven = robot.with_drive(**values)
    locked = driven.with_locked_joints({names[1]: 0.4})
    for label, given in values.items():
        current = getattr(locked, label) if label in ("armature", "damping", "friction") else getattr(
            locked.transmission, label)
        assert current.tolist() == [given[n] for n in locked.joint_names]
    assert locked.elastic_joints == tuple(n for n in names if n != names[1])


def test_a_five_bar_with_a_motor_locked_is_a_four_bar():
    """The loop closures stay (they name links); a locked motor leaves ``actuated``. The other motor's torque
    equals the full five-bar's when the locked one is at rest."""
    robot = rd.five_bar().load()
    locked = robot.with_locked_joints({"motor_left": 0.0})
    assert locked.loops.actuated == ("motor_right",)
    assert [c.name for c in locked.loops.closures] == ["tip"]
    np.testing.assert_allclose(rd.close_loops(locked, [0.0]), np.zeros(3), atol=1e-10)
    four_bar = rd.closed_loop_inverse_dynamics(locked, [0.1], [0.5], [-0.3])
    five_bar = rd.closed_loop_inverse_dynamics(robot, [0.0, 0.1], [0.0, 0.5], [0.0, -0.3])
    assert abs(four_bar.torques[0] - five_bar.torques[1]) < 1e-9 * max(1.0, abs(five_bar.torques[1]))
    every_joint = {name: 0.0 for name in robot.joint_names}  # both sides of the cut on the world: no loop left
    with pytest.raises(rd.ModelError, match="loop 'tip': link_a 'distal_left' and link_b 'distal_right' become one "
                                            "rigid body"):
        robot.with_locked_joints(every_joint)


@pytest.mark.parametrize("locked, message", [
    ({"nope": 0.0}, "locked joint 'nope': robot 'panda' has no movable joint of that name; its movable joints are "
                    "panda_joint1"),
    ({"panda_joint8": 0.0}, "('panda_joint8' is a fixed joint)"),
    ({"panda_finger_joint2": 0.03}, "a mimic joint moves with its source 'panda_finger_joint1'; lock "
                                    "'panda_finger_joint1'"),
    ({"panda_finger_joint1": 0.03, "panda_finger_joint2": 0.02}, "held at 0.03 by it, not 0.02"),
    ({"panda_joint1": [0.1, 0.2]}, "locked joint 'panda_joint1': expected 1 finite number(s), got [0.1, 0.2]"),
    ({"panda_joint1": float("nan")}, "expected 1 finite number(s), got [nan]"),
    ({"panda_joint1": "up"}, "locked joint 'panda_joint1': position 'up' is not a number"),
    (["panda_joint1"], "locked joints are a mapping {joint: position}, not list"),
])
def test_bad_locks_are_refused_with_the_reason(locked, message):
    robot = oracle.load_quietly(oracle.robot_path("panda_description/urdf/panda.urdf"))
    with pytest.raises(rd.ModelError) as error:
        robot.with_locked_joints(locked)
    assert message in str(error.value)


def test_bad_base_positions_are_refused():
    robot = rd.load_urdf(SPHERICAL_PLANAR, floating_base=True)
    with pytest.raises(rd.ModelError, match=r"expected 7 finite number\(s\) \(x y z qx qy qz qw\), got \[0.0\]"):
        robot.with_locked_joints({"root_joint": 0.0})
    with pytest.raises(rd.ModelError, match="quaternion of .* is not of unit norm"):
        robot.with_locked_joints({"ball": [0, 0, 0, 2]})
    with pytest.raises(rd.ModelError, match="'ball' is locked"):
        robot.with_locked_joints({"ball": [0, 0, 0, 1]}).with_drive(damping={"ball": 1.0})
    with pytest.raises(rd.ModelError, match=r"no movable joint of that name \(it is locked already\)"):
        robot.with_locked_joints({"ball": [0, 0, 0, 1]}).with_locked_joints({"ball": [0, 0, 0, 1]})
