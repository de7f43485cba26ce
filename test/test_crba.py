"""The joint-space inertia matrix (CRBA) against Pinocchio, a closed form and the properties of an inertia matrix.

The planar two-link arm defined here (``two_link_arm``, ``ARM``) and its closed-form mass matrix are reused by the
Coriolis, forward dynamics and simulation tests.
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
MIMIC_PATHS = [p for p in PATHS if len(oracle.pair(p)[0].bodies) != oracle.pair(p)[0].dof]

#: The planar 2R arm: joints about z, link 1 along x (length l1), centres of mass at lc1, lc2 along each link,
#: rotational inertias I1, I2 about the centres of mass (about z). Gravity (0, -G, 0) acts in the plane.
ARM = dict(m1=1.3, m2=0.7, l1=0.6, lc1=0.25, lc2=0.35, I1=0.04, I2=0.02)
G = 9.81
PLANAR_GRAVITY = (0.0, -G, 0.0)


def two_link_arm(kind="continuous", lower=-3.0, upper=3.0, damping=0.0, friction=0.0, **changes):
    """URDF text of the planar 2R arm with ``ARM``'s parameters (``changes`` override them)."""
    a = {**ARM, **changes}

    def link(name, mass, com, izz):
        return (f'<link name="{name}"><inertial><origin xyz="{com!r} 0 0"/><mass value="{mass!r}"/>'
                f'<inertia ixx="0.03" ixy="0" ixz="0" iyy="0.035" iyz="0" izz="{izz!r}"/></inertial></link>')

    def joint(name, parent, child, x):
        limit = f'<limit lower="{lower!r}" upper="{upper!r}" effort="100" velocity="10"/>'
        return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="{x!r} 0 0"/><axis xyz="0 0 1"/>{limit}'
                f'<dynamics damping="{damping!r}" friction="{friction!r}"/></joint>')

    return ('<robot name="arm2r"><link name="base"/>' + link("link1", a["m1"], a["lc1"], a["I1"])
            + link("link2", a["m2"], a["lc2"], a["I2"]) + joint("joint1", "base", "link1", 0.0)
            + joint("joint2", "link1", "link2", a["l1"]) + "</robot>")


def arm_mass_matrix(q, m1, m2, l1, lc1, lc2, I1, I2):
    """Lagrange: ``T = 1/2 qd^T M qd`` with the centre-of-mass velocities of the two links written out."""
    c2 = np.cos(q[1])
    M11 = I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2)
    M12 = I2 + m2 * (lc2**2 + l1 * lc2 * c2)
    M22 = I2 + m2 * lc2**2
    return np.array([[M11, M12], [M12, M22]])


def pinocchio_mass_matrix(model, data, mapping, q):
    """``pin.crba`` fills the upper triangle only: symmetrise, then reorder to our joints."""
    M = pin.crba(model, data, mapping.q(q))
    return mapping.ours(np.triu(M) + np.triu(M, 1).T)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_matches_pinocchio(path):
    robot, model = oracle.pair(path)
    data, mapping = model.createData(), oracle.Mapping(robot, model)
    q, _, _ = oracle.random_states(robot, 5, seed=3)
    batch = rd.mass_matrix(robot, q)
    assert batch.shape == (5, robot.dof, robot.dof)
    for n in range(5):
        reference = pinocchio_mass_matrix(model, data, mapping, q[n])
        assert oracle.relative_error(batch[n], reference) < TOLERANCE
        assert oracle.relative_error(rd.mass_matrix(robot, q[n]), reference) < TOLERANCE


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_symmetric_positive_definite(path):
    robot, _ = oracle.pair(path)
    q, _, _ = oracle.random_states(robot, 3, seed=4)
    for M in rd.mass_matrix(robot, q):
        assert np.array_equal(M, M.T)
        assert np.linalg.eigvalsh(M).min() > 0.0


@pytest.mark.parametrize("path", MIMIC_PATHS, ids=[oracle.short_name(p) for p in MIMIC_PATHS])
def test_columns_are_inverse_dynamics_of_unit_accelerations(path):
    """Mimic joints included: column k is the torque of ``qdd = e_k`` at rest without gravity (RNEA is linear in
    ``qdd``), an oracle independent of the CRBA recursion."""
    robot, _ = oracle.pair(path)
    robot = robot.with_drive(armature=np.linspace(0.1, 0.5, robot.dof))
    q, _, _ = oracle.random_states(robot, 1, seed=5)
    zero = np.zeros((robot.dof, robot.dof))
    columns = rd.inverse_dynamics(robot, np.repeat(q, robot.dof, 0), zero, np.eye(robot.dof),
                                  gravity=(0, 0, 0)).torques.T
    assert oracle.relative_error(rd.mass_matrix(robot, q[0]), columns) < TOLERANCE


@pytest.mark.parametrize("q2", [0.0, 0.7, -2.1, np.pi / 2])
def test_two_link_arm_closed_form(q2):
    robot = rd.load_urdf(two_link_arm())
    q = np.array([0.4, q2])
    np.testing.assert_allclose(rd.mass_matrix(robot, q), arm_mass_matrix(q, **ARM), rtol=1e-13, atol=1e-14)


def test_armature_adds_to_the_diagonal_and_matches_pinocchio():
    robot, model = oracle.pair(oracle.robot_path("panda_description/urdf/panda.urdf"))
    armature = np.linspace(0.05, 0.4, robot.dof)
    geared = robot.with_drive(armature=armature)
    q, _, _ = oracle.random_states(robot, 2, seed=6)
    np.testing.assert_allclose(rd.mass_matrix(geared, q) - rd.mass_matrix(robot, q),
                               np.broadcast_to(np.diag(armature), (2, robot.dof, robot.dof)), rtol=0, atol=1e-15)
    model = pin.Model(model)
    mapping = oracle.Mapping(robot, model)
    model.armature = mapping.v(armature)
    reference = pinocchio_mass_matrix(model, model.createData(), mapping, q[0])
    assert oracle.relative_error(rd.mass_matrix(geared, q[0]), reference) < TOLERANCE


def test_bad_state_is_a_clear_error():
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="q has shape"):
        rd.mass_matrix(robot, np.zeros(3))
    with pytest.raises(rd.StateError, match="joint2"):
        rd.mass_matrix(robot, [0.0, np.nan])
