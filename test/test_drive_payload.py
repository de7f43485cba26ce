"""Payloads, rotor inertia (armature) and friction through every dynamics function: a payload equals the URDF with
the payload merged by hand (parallel axes written out here) and Pinocchio with the payload added to the body
inertia; armature and friction agree with Pinocchio and close the round trips between forward and inverse
dynamics."""
import re

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.robots import default_robot_path

TOLERANCE = 1e-9
PAYLOAD_MASS = 1.5
PAYLOAD_COM = np.array([0.05, -0.02, 0.1])
PAYLOAD_INERTIA = np.array([[0.004, 0.0003, -0.0002], [0.0003, 0.005, 0.0001], [-0.0002, 0.0001, 0.003]])
PAYLOAD_SIX = PAYLOAD_INERTIA[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]  # ixx ixy ixz iyy iyz izz


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def about_com(mass, offset):
    """Parallel-axis term ``mass (|d|^2 1 - d d^T)`` for a body whose centre of mass is ``offset`` away."""
    return mass * (offset @ offset * np.eye(3) - np.outer(offset, offset))


def inertial_xml(mass, com, inertia):
    x, y, z = (repr(float(v)) for v in com)
    ixx, ixy, ixz, iyy, iyz, izz = (repr(float(v)) for v in inertia[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]])
    return (f'<inertial><origin xyz="{x} {y} {z}" rpy="0 0 0"/><mass value="{float(mass)!r}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial>')


def arm_text():
    with open(default_robot_path()) as source:
        return source.read()


def forearm_merged_by_hand():
    """rne_arm6 with the payload lumped into forearm_link's inertial: its URDF inertial is 2.3 kg at (0, 0, 0.196),
    principal inertias (0.0308898, 0.0308898, 0.002875) in a frame rotated by rpy (0.3, 0, 0)."""
    m1, c1 = 2.3, np.array([0.0, 0.0, 0.196])
    I1 = rot_x(0.3) @ np.diag([0.0308898, 0.0308898, 0.002875]) @ rot_x(0.3).T
    mass = m1 + PAYLOAD_MASS
    com = (m1 * c1 + PAYLOAD_MASS * PAYLOAD_COM) / mass
    inertia = I1 + about_com(m1, c1 - com) + PAYLOAD_INERTIA + about_com(PAYLOAD_MASS, PAYLOAD_COM - com)
    text, count = re.subn(r'(<link name="forearm_link">\s*)<inertial>.*?</inertial>',
                          lambda match: match.group(1) + inertial_xml(mass, com, inertia), arm_text(), flags=re.S)
    assert count == 1
    return text


def flange_with_payload_link():
    """rne_arm6 with a link holding the payload fixed to tool_flange (the loader lumps it into wrist_3's body)."""
    payload = ('<link name="payload">' + inertial_xml(PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_INERTIA) + '</link>'
               '<joint name="payload_joint" type="fixed"><parent link="tool_flange"/><child link="payload"/>'
               '<origin xyz="0 0 0" rpy="0 0 0"/></joint>')
    return arm_text().replace("</robot>", payload + "</robot>")


def assert_same_dynamics(robot, reference, seed=0):
    """Every dynamics function of ``robot`` equals that of ``reference`` on a batch of states."""
    q, qd, qdd = oracle.random_states(robot, 4, seed=seed, scale=2.0)
    def results(r):
        return (rd.mass_matrix(r, q), rd.gravity_torques(r, q), rd.bias_torques(r, q, qd), rd.coriolis_matrix(r, q, qd),
                rd.forward_dynamics(r, q, qd, qdd), rd.inverse_dynamics(r, q, qd, qdd).joint_wrenches)

    for ours, expected in zip(results(robot), results(reference)):
        assert oracle.relative_error(ours, expected) < TOLERANCE


@pytest.mark.parametrize("link, urdf", [("forearm_link", forearm_merged_by_hand),
                                        ("tool_flange", flange_with_payload_link)])
def test_payload_equals_the_urdf_with_it_merged_by_hand(link, urdf):
    robot = rd.load_urdf(default_robot_path())
    loaded = robot.with_payload(link, PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_SIX)
    assert_same_dynamics(loaded, rd.load_urdf(urdf()))
    q, _, _ = oracle.random_states(robot, 1, seed=1)
    assert oracle.relative_error(rd.gravity_torques(loaded, q), rd.gravity_torques(robot, q)) > 1e-3
    assert loaded.total_mass == pytest.approx(robot.total_mass + PAYLOAD_MASS)


def test_payload_and_drives_do_not_change_the_loaded_robot():
    robot = rd.load_urdf(default_robot_path())
    q, qd, qdd = oracle.random_states(robot, 2, seed=2)
    before = rd.inverse_dynamics(robot, q, qd, qdd).torques
    robot.with_payload("wrist_3_link", 3.0, (0.0, 0.0, 0.1)).with_drive(armature=np.ones(6), damping=np.ones(6))
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, qd, qdd).torques, before)


def test_payload_on_the_fixed_base_changes_no_joint_load():
    robot = rd.load_urdf(default_robot_path())
    assert_same_dynamics(robot.with_payload("base_link", 10.0, (0.1, 0.0, 0.0)), robot)


@pytest.mark.parametrize("name", ["ur_description/urdf/ur5_robot.urdf", "talos_data/robots/talos_left_arm.urdf"])
def test_payload_armature_and_friction_match_pinocchio(name):
    """Pinocchio with the payload added to the inertia of the joint carrying the link, ``model.armature`` set and
    the drive friction subtracted from its torques (its algorithms leave friction out)."""
    robot, model = oracle.pair(oracle.robot_path(name))
    link = next(link for link in reversed(robot.link_names) if robot.link_frames[link][0] >= 0)
    armature = np.linspace(0.02, 0.2, robot.dof)
    ours = robot.with_payload(link, PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_SIX).with_drive(
        armature=armature, damping=np.full(robot.dof, 0.3), friction=np.full(robot.dof, 0.6))
    model = pin.Model(model)
    mapping = oracle.Mapping(ours, model)
    body, R, p = robot.link_frames[link]
    joint = model.getJointId(robot.bodies[body].joint)
    model.inertias[joint] = model.inertias[joint] + pin.SE3(R, p).act(
        pin.Inertia(PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_INERTIA))
    model.armature = mapping.v(armature)
    data = model.createData()
    q, qd, tau = oracle.random_states(robot, 3, seed=3, scale=2.0)
    qdd = rd.forward_dynamics(ours, q, qd, tau)
    M = rd.mass_matrix(ours, q)
    for n in range(3):
        Q, V = mapping.q(q[n]), mapping.v(qd[n])
        friction = ours.damping * qd[n] + ours.friction * np.sign(qd[n])
        reference = mapping.ours(pin.aba(model, data, Q, V, mapping.v(tau[n] - friction)))
        assert oracle.relative_error(qdd[n], reference) < TOLERANCE
        M_ref = pin.crba(model, data, Q)
        assert oracle.relative_error(M[n], mapping.ours(np.triu(M_ref) + np.triu(M_ref, 1).T)) < TOLERANCE


def test_round_trips_with_everything_on():
    """forward(inverse(qdd)) == qdd and inverse(forward(tau)) == tau with a payload, armature, viscous and Coulomb
    friction; and ``tau = M qdd + bias + damping qd + friction sign(qd)``."""
    robot = rd.load_urdf(default_robot_path()).with_payload("tool_flange", PAYLOAD_MASS, PAYLOAD_COM, PAYLOAD_SIX)
    robot = robot.with_drive(armature=[0.4, 0.4, 0.3, 0.1, 0.1, 0.05], damping=np.full(6, 0.8),
                             friction={"elbow_joint": 2.0, "wrist_1_joint": 0.5})
    q, qd, qdd = oracle.random_states(robot, 5, seed=4, scale=2.0)
    tau = rd.inverse_dynamics(robot, q, qd, qdd).torques
    assert oracle.relative_error(rd.forward_dynamics(robot, q, qd, tau), qdd) < TOLERANCE
    assert oracle.relative_error(rd.inverse_dynamics(robot, q, qd, rd.forward_dynamics(robot, q, qd, qdd)).torques,
                                 qdd) < TOLERANCE
    friction = robot.damping * qd + robot.friction * np.sign(qd)
    composed = np.einsum("nij,nj->ni", rd.mass_matrix(robot, q), qdd) + rd.bias_torques(robot, q, qd) + friction
    assert oracle.relative_error(composed, tau) < TOLERANCE


def test_coulomb_friction_is_zero_at_rest_and_opposes_motion():
    robot = rd.load_urdf(default_robot_path())
    rough = robot.with_drive(friction=np.full(6, 3.0))
    q, qd, tau = oracle.random_states(robot, 1, seed=5)
    np.testing.assert_array_equal(rd.forward_dynamics(rough, q, np.zeros_like(q), tau),
                                  rd.forward_dynamics(robot, q, np.zeros_like(q), tau))
    M = rd.mass_matrix(robot, q[0])
    slowed = rd.forward_dynamics(rough, q, qd, tau) - rd.forward_dynamics(robot, q, qd, tau)
    np.testing.assert_allclose(M @ slowed[0], -3.0 * np.sign(qd[0]), rtol=1e-9, atol=1e-9)


def test_drive_overrides_by_joint_name():
    robot = rd.load_urdf(default_robot_path())
    geared = robot.with_drive(armature={"elbow_joint": 0.7})
    expected = np.zeros(6)
    expected[robot.joint_index("elbow_joint")] = 0.7
    np.testing.assert_array_equal(geared.armature, expected)
    q, _, _ = oracle.random_states(robot, 1, seed=6)
    np.testing.assert_allclose(rd.mass_matrix(geared, q) - rd.mass_matrix(robot, q), np.diag(expected)[None],
                               rtol=0, atol=1e-15)
