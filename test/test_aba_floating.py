"""Forward dynamics through the ABA with joints of several coordinates: a floating base (a free-flyer from the world,
RBDA Sec. 9.2) on every example-robot-data robot against Pinocchio, planar and spherical joints against the
mass-matrix solve, joint wrenches and drives against inverse dynamics, batches, and a free body that has no mass.

Pinocchio's ``aba`` leaves out the URDF damping/friction (it gets ``tau - drive_torques(qd)``) and refuses mimic
joints: robots with them are compared with ``solve(crba, tau - rnea(q, qd, 0))`` computed by Pinocchio.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9


PATHS = {oracle.short_name(path): path for path in oracle.floating_comparable_paths()}
NAMES = sorted(PATHS)


def pinocchio_forward_dynamics(robot, model, data, mapping, q, qd, tau):
    Q, V = mapping.q(q), mapping.v(qd)
    T = mapping.v(tau - oracle.drive_torques(robot, qd))
    if not robot.has_mimic:
        return mapping.ours(pin.aba(model, data, Q, V, T))
    M = pin.crba(model, data, Q)
    M = np.triu(M) + np.triu(M, 1).T
    return mapping.ours(np.linalg.solve(M, T - pin.rnea(model, data, Q, V, np.zeros(model.nv))))


@pytest.mark.parametrize("name", NAMES)
def test_floating_base_matches_pinocchio(name):
    robot, model = oracle.floating_pair(PATHS[name])
    assert robot.has_floating_base and robot.idx_v[robot.base_joint] == 0
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    q, qd, tau = oracle.random_states(robot, 3, seed=11, scale=2.0)
    for n in range(3):
        reference = pinocchio_forward_dynamics(robot, model, data, mapping, q[n], qd[n], tau[n])
        assert oracle.relative_error(rd.forward_dynamics(robot, q[n], qd[n], tau[n]), reference) < TOLERANCE


ROBOTS = ["talos_data/robots/talos_reduced.urdf", "anymal_b_simple_description/robots/anymal.urdf",
          "ur_description/urdf/ur5_robot.urdf", "icub_description/robots/icub_reduced.urdf",
          "panda_description/urdf/panda.urdf"]


def floating_robot(fragment):
    return oracle.load_quietly(oracle.robot_path(fragment), floating_base=True)


@pytest.mark.parametrize("fragment", ROBOTS)
def test_joint_wrenches_are_inverse_dynamics(fragment):
    """With rotor inertia, friction and a wrench on every link, inverse dynamics at the solved ``qdd`` gives back
    ``tau`` (the base's 6 included) and the same joint and base wrenches."""
    robot = floating_robot(fragment)
    k = len(robot.joint_names)
    robot = robot.with_drive(armature=np.linspace(0.01, 0.1, k), damping=robot.damping + 0.2,
                             friction=robot.friction + 0.3)
    rng = np.random.default_rng(12)
    wrenches = {link: rng.normal(scale=5.0, size=(3, 6)) for link in robot.link_names}
    q, qd, tau = oracle.random_states(robot, 3, seed=12, scale=2.0)
    result = rd.forward_dynamics(robot, q, qd, tau, external_wrenches=wrenches, joint_wrenches=True)
    inverse = rd.inverse_dynamics(robot, q, qd, result.accelerations, external_wrenches=wrenches)
    assert oracle.relative_error(inverse.torques, tau) < TOLERANCE
    assert oracle.relative_error(result.joint_wrenches, inverse.joint_wrenches) < TOLERANCE
    assert oracle.relative_error(result.base_wrench, inverse.base_wrench) < TOLERANCE


@pytest.mark.parametrize("fragment", ROBOTS)
def test_batch_is_state_by_state(fragment):
    robot = floating_robot(fragment)
    q, qd, tau = oracle.random_states(robot, 70, seed=13, scale=2.0)  # more than one chunk of a batch
    batch = rd.forward_dynamics(robot, q, qd, tau, joint_wrenches=True)
    for n in (0, 1, 64, 69):
        one = rd.forward_dynamics(robot, q[n], qd[n], tau[n], joint_wrenches=True)
        for ours, reference in zip(one, batch):
            assert oracle.relative_error(ours, reference[n]) < 1e-13


def link(name, mass, inertia=0.01, com="0.05 -0.02 0.1"):
    if not mass:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{inertia!r}" ixy="0" ixz="0" iyy="{1.5 * inertia!r}" iyz="0" izz="{0.7 * inertia!r}"/>'
            f'</inertial></link>')


def joint(name, kind, parent, child, axis="0 0 1", xyz="0.2 0.1 0", rpy="0.3 -0.2 0.5"):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/><limit lower="-2" upper="2" effort="1" '
            f'velocity="1"/></joint>')


MIXED = ('<robot name="mixed">' + link("base", 3.0) + link("sled", 2.0) + link("ball", 1.0) + link("arm", 0.5)
         + link("tip", 0.3) + joint("plane", "planar", "base", "sled", axis="0.3 0.4 0.866")
         + joint("shoulder", "spherical", "sled", "ball") + joint("elbow", "revolute", "ball", "arm", axis="0 1 0")
         + joint("wrist", "spherical", "arm", "tip") + "</robot>")


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints(floating):
    """Joints of 3 coordinates: ``qdd = M^-1 (tau - rnea(q, qd, 0))`` with ``M`` from the CRBA, and with rotor
    inertia and friction on every coordinate, inverse dynamics gives back ``tau``."""
    robot = rd.load_urdf(MIXED, floating_base=floating)
    q, qd, tau = oracle.random_states(robot, 3, seed=14, scale=2.0)
    qdd = rd.forward_dynamics(robot, q, qd, tau)
    bias = rd.inverse_dynamics(robot, q, qd, np.zeros_like(qd)).torques
    for n in range(3):
        reference = np.linalg.solve(rd.mass_matrix(robot, q[n]), tau[n] - bias[n])
        assert oracle.relative_error(qdd[n], reference) < TOLERANCE
    geared = robot.with_drive(armature=[0.05, 0.02, 0.01, 0.03], damping=[0.2] * 4, friction=[0.1] * 4)
    result = rd.forward_dynamics(geared, q, qd, tau, joint_wrenches=True)
    inverse = rd.inverse_dynamics(geared, q, qd, result.accelerations)
    assert oracle.relative_error(inverse.torques, tau) < TOLERANCE
    assert oracle.relative_error(result.joint_wrenches, inverse.joint_wrenches) < TOLERANCE
    assert oracle.relative_error(result.base_wrench, inverse.base_wrench) < TOLERANCE


def test_spherical_joint_turning_a_point_mass_is_named():
    """A spherical joint whose link is a point mass at the joint's centre turns nothing: ``D_i = 0``; a rotor on it
    makes the motion well posed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load_urdf(MIXED.replace(link("tip", 0.3), link("tip", 0.3, inertia=0.0, com="0 0 0")))
    q, qd, tau = oracle.random_states(robot, 2, seed=15, scale=2.0)
    with pytest.raises(rd.SingularMassMatrixError, match=r"at state 0: joint 'wrist\.wx' drives no mass.*"
                                                         r"armature=\{'wrist'"):
        rd.forward_dynamics(robot, q, qd, tau)
    geared = robot.with_drive(armature={"wrist": 0.01})
    qdd = rd.forward_dynamics(geared, q, qd, tau)
    assert oracle.relative_error(rd.inverse_dynamics(geared, q, qd, qdd).torques, tau) < TOLERANCE


def free_body(mass, inertia):
    with warnings.catch_warnings():  # the loader warns about a massless link or odd inertia: expected here
        warnings.simplefilter("ignore", rd.ModelWarning)
        return rd.load_urdf('<robot name="free">' + link("body", mass, inertia) + "</robot>", floating_base=True)


@pytest.mark.parametrize("mass, inertia, coordinate", [(0.0, 0.0, "root_joint.vx"), (1.0, 0.0, "root_joint.wx")],
                         ids=["massless", "point-mass"])
def test_free_body_without_inertia_is_named(mass, inertia, coordinate):
    """A free body of no mass has no ``qdd``: the first pivot of ``D_0`` is zero. A point mass off the origin
    can translate but has no rotational inertia about its centre of mass: an angular pivot is zero."""
    robot = free_body(mass, inertia)
    q = np.array([0.1, 0.2, 0.3, 0.0, 0.0, 0.0, 1.0])
    qd = np.linspace(-1.0, 1.0, 6)
    with pytest.raises(rd.SingularMassMatrixError, match=f"joint '{coordinate}' drives no mass"):
        rd.forward_dynamics(robot, q, qd, qd)
    with pytest.raises(rd.SingularMassMatrixError, match=f"at state 0: joint '{coordinate}'"):
        rd.forward_dynamics(robot, np.stack([q, q]), np.stack([qd, qd]), np.stack([qd, qd]))


def test_free_body_is_newton_euler():
    """A single free rigid body: ``qdd`` in the body frame from Newton-Euler's equations about its centre of mass."""
    robot = free_body(2.0, 0.01)
    q = np.array([0.1, 0.2, 0.3, 0.2, -0.4, 0.1, 0.0])
    q[3:] /= np.linalg.norm(q[3:])
    qd, tau = np.linspace(-1.0, 1.0, 6), np.array([0.3, -0.2, 0.5, 0.05, 0.02, -0.04])
    g = np.array([0.0, 0.0, -9.81])
    R = pin.Quaternion(q[6], *q[3:6]).matrix()
    m, c = 2.0, np.array([0.05, -0.02, 0.1])
    I_c = np.diag([0.01, 0.015, 0.007])
    v, w = qd[:3], qd[3:]
    # about the centre of mass: m (v_c' + w x v_c) = f + m R^T g,  I_c w' + w x I_c w = n - c x f (gravity acts
    # at the centre of mass)
    f, n = tau[:3], tau[3:]
    w_dot = np.linalg.solve(I_c, n - np.cross(c, f) - np.cross(w, I_c @ w))
    v_c = v + np.cross(w, c)
    v_dot = ((f + m * R.T @ g) / m - np.cross(w, v_c)) - np.cross(w_dot, c)  # v_c' = v' + w' x c (c fixed in the body)
    expected = np.concatenate([v_dot, w_dot])
    assert oracle.relative_error(rd.forward_dynamics(robot, q, qd, tau, gravity=g), expected) < 1e-12
