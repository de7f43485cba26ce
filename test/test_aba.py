"""Forward dynamics (ABA; the mass-matrix solve for mimic joints) against Pinocchio, a closed form, inverse
dynamics (round trips with drives, payload and external wrenches) and the singular cases.

Pinocchio's ``aba`` ignores URDF damping/friction, so it gets ``tau - drive_torques(qd)``; it refuses mimic joints,
so robots with them are compared with ``solve(crba, tau - nonLinearEffects)`` computed by Pinocchio.
"""
import warnings

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from test_crba import ARM, PLANAR_GRAVITY, arm_mass_matrix, pinocchio_mass_matrix, two_link_arm
from test_gravity_bias import arm_gravity, arm_velocity_torques

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]


def pinocchio_forward_dynamics(robot, model, data, mapping, q, qd, tau, link_wrenches=None):
    """Pinocchio's ``qdd`` in our order; ``link_wrenches`` ``{link: [f; n]}`` moved to the frame of the Pinocchio
    joint that carries the link."""
    Q, V = mapping.q(q), mapping.v(qd)
    T = mapping.v(tau - mapping.drive_torques(qd))
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for link, wrench in (link_wrenches or {}).items():
        body, R, p = robot.link_frames[link]
        if body >= 0:
            fext[model.getJointId(robot.bodies[body].joint)] += pin.SE3(R, p).act(pin.Force(np.asarray(wrench)))
    if len(robot.bodies) == robot.dof:
        return mapping.ours(pin.aba(model, data, Q, V, T, fext))
    M = pinocchio_mass_matrix(model, data, mapping, q)
    return np.linalg.solve(M, mapping.ours(T - pin.rnea(model, data, Q, V, np.zeros(model.nv), fext)))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_matches_pinocchio(path):
    robot, model = oracle.pair(path)
    data, mapping = model.createData(), oracle.Mapping(robot, model)
    q, qd, tau = oracle.random_states(robot, 4, seed=7, scale=2.0)
    batch = rd.forward_dynamics(robot, q, qd, tau)
    assert batch.shape == q.shape
    for n in range(4):
        reference = pinocchio_forward_dynamics(robot, model, data, mapping, q[n], qd[n], tau[n])
        assert oracle.relative_error(batch[n], reference) < TOLERANCE
        assert oracle.relative_error(rd.forward_dynamics(robot, q[n], qd[n], tau[n]), reference) < TOLERANCE


@pytest.mark.parametrize("name", ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                                  "talos_data/robots/talos_reduced.urdf"])
def test_external_wrenches_match_pinocchio(name):
    robot, model = oracle.pair(oracle.robot_path(name))
    data, mapping = model.createData(), oracle.Mapping(robot, model)
    rng = np.random.default_rng(8)
    q, qd, tau = oracle.random_states(robot, 1, seed=8)
    wrenches = {link: rng.normal(scale=10.0, size=6) for link in robot.link_names}
    ours = rd.forward_dynamics(robot, q[0], qd[0], tau[0], external_wrenches=wrenches)
    reference = pinocchio_forward_dynamics(robot, model, data, mapping, q[0], qd[0], tau[0], wrenches)
    assert oracle.relative_error(ours, reference) < TOLERANCE


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_round_trip_with_drives_payload_and_external_wrenches(path):
    """``inverse_dynamics(q, qd, forward_dynamics(q, qd, tau)) == tau`` with the URDF friction, rotor inertia on
    every joint, a payload on the last moving link and a wrench on every link; the joint wrenches ABA returns are
    those of inverse dynamics for the same motion."""
    robot, _ = oracle.pair(path)
    robot = robot.with_drive(armature=np.linspace(0.01, 0.1, robot.dof), damping=robot.damping + 0.2,
                             friction=robot.friction + 0.3)
    carried = next(link for link in reversed(robot.link_names) if robot.link_frames[link][0] >= 0)
    robot = robot.with_payload(carried, 0.8, (0.02, -0.01, 0.05), (0.003, 0.0002, 0, 0.004, 0, 0.002))
    rng = np.random.default_rng(9)
    wrenches = {link: rng.normal(scale=5.0, size=(3, 6)) for link in robot.link_names}
    q, qd, tau = oracle.random_states(robot, 3, seed=9, scale=2.0)
    result = rd.forward_dynamics(robot, q, qd, tau, external_wrenches=wrenches, joint_wrenches=True)
    inverse = rd.inverse_dynamics(robot, q, qd, result.accelerations, external_wrenches=wrenches)
    assert oracle.relative_error(inverse.torques, tau) < TOLERANCE
    assert oracle.relative_error(result.joint_wrenches, inverse.joint_wrenches) < TOLERANCE
    assert oracle.relative_error(result.base_wrench, inverse.base_wrench) < TOLERANCE
    one = rd.forward_dynamics(robot, q[1], qd[1], tau[1], joint_wrenches=True,
                              external_wrenches={link: w[1] for link, w in wrenches.items()})
    assert oracle.relative_error(one.accelerations, result.accelerations[1]) < TOLERANCE
    assert oracle.relative_error(one.joint_wrenches, result.joint_wrenches[1]) < TOLERANCE


@pytest.mark.parametrize("state", [([0.3, -0.8], [1.2, -0.4], [2.0, -1.0]), ([2.0, 1.1], [-0.5, 2.5], [0.0, 0.3])])
def test_two_link_arm_closed_form(state):
    """``qdd = M^-1 (tau - C qd - g - damping qd - friction sign(qd))`` with every term written out."""
    damping, friction = 0.4, 0.25
    robot = rd.load_urdf(two_link_arm(damping=damping, friction=friction))
    q, qd, tau = (np.array(x) for x in state)
    rhs = (tau - arm_velocity_torques(q, qd, **ARM) - arm_gravity(q, **ARM) - damping * qd
           - friction * np.sign(qd))
    np.testing.assert_allclose(rd.forward_dynamics(robot, q, qd, tau, gravity=PLANAR_GRAVITY),
                               np.linalg.solve(arm_mass_matrix(q, **ARM), rhs), rtol=1e-12, atol=1e-12)


MASSLESS_TIP = two_link_arm(m2=0.0, I2=0.0)
POINT_MASS_ON_AXIS = two_link_arm(lc2=0.0, I2=0.0)


def mimic_arm(tip_mass):
    """joint1 drives link1 and, through the mimic joint3, link3; joint2 drives link2 of mass ``tip_mass``."""
    def link(name, mass):
        inertial = (f'<inertial><mass value="{mass!r}"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" '
                    f'izz="0.01"/></inertial>' if mass else "")
        return f'<link name="{name}">{inertial}</link>'

    def joint(name, parent, child, extra=""):
        return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
                f'<origin xyz="0.3 0 0"/><axis xyz="0 1 0"/>{extra}</joint>')

    return ('<robot name="mimic_arm"><link name="base"/>' + link("link1", 1.0) + link("link2", tip_mass)
            + link("link3", 0.5) + joint("joint1", "base", "link1") + joint("joint2", "link1", "link2")
            + joint("joint3", "link1", "link3", '<mimic joint="joint1" multiplier="-1.5" offset="0.2"/>')
            + "</robot>")


@pytest.mark.parametrize("urdf", [MASSLESS_TIP, POINT_MASS_ON_AXIS, mimic_arm(0.0)],
                         ids=["massless", "point-mass-on-axis", "mimic"])
def test_joint_driving_no_mass_is_named(urdf):
    with warnings.catch_warnings():  # the loader warns about a massless link or odd inertia: expected here
        warnings.simplefilter("ignore", rd.ModelWarning)
        robot = rd.load_urdf(urdf)
    q = np.array([0.2, 0.4])
    with pytest.raises(rd.SingularMassMatrixError, match="joint 'joint2' drives no mass"):
        rd.forward_dynamics(robot, q, q, q)
    with pytest.raises(rd.SingularMassMatrixError, match="at state 0: joint 'joint2'"):
        rd.forward_dynamics(robot, np.stack([q, q]), np.stack([q, q]), np.stack([q, q]))
    geared = robot.with_drive(armature={"joint2": 0.05})  # a rotor makes it well posed: qdd2 = tau2 / armature
    qdd = rd.forward_dynamics(geared, q, np.zeros(2), q, gravity=(0, 0, 0))
    assert np.isfinite(qdd).all()
    assert oracle.relative_error(rd.inverse_dynamics(geared, q, np.zeros(2), qdd, gravity=(0, 0, 0)).torques,
                                 q) < TOLERANCE


def test_mimic_robot_against_inverse_dynamics():
    robot = rd.load_urdf(mimic_arm(0.3))
    rng = np.random.default_rng(10)
    q, qd, tau = rng.normal(size=(3, 5, 2))
    result = rd.forward_dynamics(robot, q, qd, tau, joint_wrenches=True)
    inverse = rd.inverse_dynamics(robot, q, qd, result.accelerations)
    assert oracle.relative_error(inverse.torques, tau) < TOLERANCE
    assert oracle.relative_error(result.joint_wrenches, inverse.joint_wrenches) < TOLERANCE


def test_bad_arguments_are_clear_errors():
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="tau has shape"):
        rd.forward_dynamics(robot, np.zeros(2), np.zeros(2), np.zeros(3))
    with pytest.raises(rd.StateError, match="no link 'hand'"):
        rd.forward_dynamics(robot, np.zeros(2), np.zeros(2), np.zeros(2), external_wrenches={"hand": np.zeros(6)})
    with pytest.raises(rd.StateError, match="joint_wrenches"):
        rd.forward_dynamics(robot, np.zeros(2), np.zeros(2), np.zeros(2), joint_wrenches="yes")
