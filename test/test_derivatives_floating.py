"""Analytic derivatives with a floating base, and of joints with several motion columns.

References: Pinocchio's ``computeRNEADerivatives`` and ``computeABADerivatives`` with a free-flyer root joint on every
example-robot-data URDF both libraries load (not mimic joints: Pinocchio refuses them in these algorithms); central
finite differences of ``rd.inverse_dynamics`` along ``integrate(q, dq)`` (the free-flyer's and a spherical joint's
rotation turned in the child frame) on a few robots, fixed and floating, mimic joints included, and on a robot with
planar and spherical joints. Derivatives with respect to ``q`` are along the tangent at ``q``, as Pinocchio's.
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from oracle import FloatingMapping, integrate, per_coordinate, random_states, with_armature
from rne_dynamics.algorithms.derivatives import forward_dynamics_derivatives, joint_wrench_derivatives
from test_derivatives import TILTED_GRAVITY, pinocchio_link_wrenches, symmetric

TOLERANCE = 1e-7            # against Pinocchio
FD_TOLERANCE = 1e-6         # against central differences
BATCH = 3
PATHS = oracle.floating_comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]


# ---------------------------------------------------------------- Pinocchio, free-flyer

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics_derivatives_match_pinocchio(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio's RNEA derivatives refuse mimic joints; see the finite-difference tests")
    robot = with_armature(robot, seed=3)
    mapping = FloatingMapping(robot, model)
    rng = np.random.default_rng(4)
    q, qd, qdd = random_states(robot, BATCH, seed=4, scale=2.0)
    wrenches = {link: rng.normal(scale=20.0, size=6) for link in robot.link_names}
    tilted = oracle.with_gravity(model, TILTED_GRAVITY)
    ours = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    ours_loaded = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=TILTED_GRAVITY,
                                                  external_wrenches=wrenches)
    damping = np.diag(mapping.ours(model.damping))  # Pinocchio's algorithms leave the URDF damping out
    armature = np.diag(per_coordinate(robot, robot.armature))
    data, tilted_data = model.createData(), tilted.createData()  # Pinocchio returns views into these
    for n in range(BATCH):
        args = (mapping.q(q[n]), mapping.v(qd[n]), mapping.v(qdd[n]))
        for label, derivatives, reference in (
                ("default", ours, pin.computeRNEADerivatives(model, data, *args)),
                ("tilted gravity, external wrenches", ours_loaded,
                 pin.computeRNEADerivatives(tilted, tilted_data, *args,
                                            pinocchio_link_wrenches(robot, model, wrenches)))):
            dq, dqd, M = (mapping.ours(x) for x in reference)
            expected = (dq, dqd + damping, symmetric(M) + armature)
            for name, value, exact in zip(("dtau_dq", "dtau_dqd", "dtau_dqdd"), derivatives, expected):
                error = oracle.relative_error(value[n], exact)
                assert error < TOLERANCE, f"state {n}, {label}: {name} relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics_derivatives_match_pinocchio(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio's ABA derivatives refuse mimic joints; see the finite-difference tests")
    nj = len(robot.joint_names)
    robot = robot.with_drive(damping=np.zeros(nj), friction=np.zeros(nj))  # left out by Pinocchio
    mapping = FloatingMapping(robot, model)
    q, qd, tau = random_states(robot, BATCH, seed=6)
    tau = tau * 10.0
    ours = forward_dynamics_derivatives(robot, q, qd, tau)
    data = model.createData()
    for n in range(BATCH):
        reference = pin.computeABADerivatives(model, data, mapping.q(q[n]), mapping.v(qd[n]), mapping.v(tau[n]))
        dq, dqd, M_inv = (mapping.ours(x) for x in reference)
        for name, value, exact in zip(("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), ours, (dq, dqd, symmetric(M_inv))):
            error = oracle.relative_error(value[n], exact)
            assert error < TOLERANCE, f"state {n}: {name} relative error {error:.3g}"


# ---------------------------------------------------------------- finite differences along integrate

#: Two revolute links, a planar and a spherical joint, a mimic of the elbow, links fixed to them.
MULTI_COLUMN_URDF = """<robot name="multi_column">
  <link name="base"><inertial><mass value="2.0"/><origin xyz="0.05 -0.02 0.1"/>
    <inertia ixx="0.05" ixy="0.002" ixz="-0.001" iyy="0.04" iyz="0.003" izz="0.06"/></inertial></link>
  <link name="slider"><inertial><mass value="1.2"/><origin xyz="0.1 0.03 -0.02"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0.002" iyy="0.03" iyz="-0.001" izz="0.025"/></inertial></link>
  <link name="upper"><inertial><mass value="0.8"/><origin xyz="0.02 0.2 0.01"/>
    <inertia ixx="0.01" ixy="-0.001" ixz="0.0" iyy="0.012" iyz="0.002" izz="0.009"/></inertial></link>
  <link name="ball"><inertial><mass value="0.6"/><origin xyz="0.0 0.05 0.15"/>
    <inertia ixx="0.006" ixy="0.0005" ixz="0.001" iyy="0.007" iyz="-0.0004" izz="0.005"/></inertial></link>
  <link name="hand"><inertial><mass value="0.3"/><origin xyz="0.01 0.0 0.04"/>
    <inertia ixx="0.002" ixy="0.0" ixz="0.0001" iyy="0.002" iyz="0.0" izz="0.001"/></inertial></link>
  <link name="finger"><inertial><mass value="0.1"/><origin xyz="0.0 0.02 0.01"/>
    <inertia ixx="0.0004" ixy="0.0" ixz="0.0" iyy="0.0003" iyz="0.0" izz="0.0002"/></inertial></link>
  <link name="tool"><inertial><mass value="0.2"/><origin xyz="0.03 0.0 0.0"/>
    <inertia ixx="0.001" ixy="0.0" ixz="0.0" iyy="0.001" iyz="0.0" izz="0.001"/></inertial></link>
  <joint name="plane" type="planar"><parent link="base"/><child link="slider"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="0.2 0.3 1"/></joint>
  <joint name="shoulder" type="revolute"><parent link="slider"/><child link="upper"/>
    <origin xyz="0.0 0.1 0.05" rpy="0.1 0.2 0.3"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/><dynamics damping="0.2" friction="0.1"/></joint>
  <joint name="wrist" type="spherical"><parent link="upper"/><child link="ball"/>
    <origin xyz="0.0 0.4 0.0" rpy="-0.4 0.1 0.2"/></joint>
  <joint name="elbow" type="revolute"><parent link="ball"/><child link="hand"/>
    <origin xyz="0.0 0.1 0.2" rpy="0.2 0.0 -0.1"/><axis xyz="1 0 0"/>
    <limit lower="-2" upper="2" effort="10" velocity="3"/></joint>
  <joint name="finger_joint" type="revolute"><parent link="hand"/><child link="finger"/>
    <origin xyz="0.02 0.0 0.05"/><axis xyz="0 0 1"/><limit lower="-2" upper="2" effort="1" velocity="1"/>
    <mimic joint="elbow" multiplier="-0.7" offset="0.2"/></joint>
  <joint name="tool_mount" type="fixed"><parent link="ball"/><child link="tool"/>
    <origin xyz="0.05 0.0 0.1" rpy="0.3 0.2 0.1"/></joint>
</robot>"""

FD_ROBOTS = ["ur_description/urdf/ur5_robot.urdf", "talos_data/robots/talos_reduced.urdf",
             "panda_description/urdf/panda.urdf", "multi_column"]


def load(name, floating):
    return oracle.load_quietly(MULTI_COLUMN_URDF if name == "multi_column" else oracle.robot_path(name), floating)


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("name", FD_ROBOTS)
def test_torque_and_joint_wrench_derivatives_match_finite_differences(name, floating):
    """Torques and joint wrenches, with external wrenches, URDF damping and Coulomb friction on (``|qd|`` far above
    the step) and armature; joint wrenches are ``(nj, 6, nv)``, the floating base without a row."""
    robot = with_armature(load(name, floating), seed=11)
    q, qd, qdd = (x[0] for x in random_states(robot, 1, seed=12, scale=2.0))
    qd = np.where(np.abs(qd) < 0.1, 0.5, qd)
    rng = np.random.default_rng(13)
    wrenches = {link: rng.normal(scale=5.0, size=6) for link in robot.link_names[::3]}
    options = dict(gravity=TILTED_GRAVITY, external_wrenches=wrenches)
    torques = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, **options)
    joint_wrenches = joint_wrench_derivatives(robot, q, qd, qdd, **options)
    state = {"q": q, "qd": qd, "qdd": qdd}
    for k, argument in enumerate(state):
        assert joint_wrenches[k].shape == (len(robot.joint_names), 6, robot.nv)
        torque_fd = oracle.central_difference(lambda **x: rd.inverse_dynamics(robot, **x, **options).torques,
                                       robot, state, argument)
        wrench_fd = oracle.central_difference(lambda **x: rd.inverse_dynamics(robot, **x, **options).joint_wrenches,
                                       robot, state, argument)
        error = oracle.relative_error(torques[k], torque_fd)
        assert error < FD_TOLERANCE, f"dtau_d{argument}: relative error {error:.3g}"
        error = oracle.relative_error(joint_wrenches[k], wrench_fd)
        assert error < FD_TOLERANCE, f"joint wrenches, d/d{argument}: relative error {error:.3g}"


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_multi_column_forward_dynamics_derivatives_match_finite_differences(floating):
    robot = with_armature(load("multi_column", floating), seed=14)
    q, qd, tau = (x[0] for x in random_states(robot, 1, seed=15))
    qd = np.where(np.abs(qd) < 0.1, 0.5, qd)
    derivatives = forward_dynamics_derivatives(robot, q, qd, tau)
    state = {"q": q, "qd": qd, "tau": tau}
    for k, name in enumerate(state):
        fd = oracle.central_difference(lambda **x: rd.forward_dynamics(robot, **x), robot, state, name)
        error = oracle.relative_error(derivatives[k], fd)
        assert error < FD_TOLERANCE, f"dqdd_d{name}: relative error {error:.3g}"


def test_integrate_agrees_with_the_package():
    """When the package has its own ``integrate``, it moves ``q`` as the one these tests differentiate along."""
    if not hasattr(rd, "integrate"):
        pytest.skip("rd.integrate does not exist (yet)")
    robot = load("multi_column", True)
    q = random_states(robot, 1, seed=16)[0][0]
    dv = np.random.default_rng(16).normal(scale=0.3, size=robot.nv)
    np.testing.assert_allclose(rd.integrate(robot, q, dv), integrate(robot, q, dv), rtol=0, atol=1e-12)


def test_batch_matches_one_state_at_a_time():
    robot = load("talos_data/robots/talos_reduced.urdf", True)
    q, qd, qdd = random_states(robot, 5, seed=17)
    many = (rd.inverse_dynamics_derivatives(robot, q, qd, qdd) + joint_wrench_derivatives(robot, q, qd, qdd)
            + forward_dynamics_derivatives(robot, q, qd, qdd))
    nv, nj = robot.nv, len(robot.joint_names)
    assert [x.shape for x in many] == [(5, nv, nv)] * 3 + [(5, nj, 6, nv)] * 3 + [(5, nv, nv)] * 3
    for n in range(5):
        one = (rd.inverse_dynamics_derivatives(robot, q[n], qd[n], qdd[n])
               + joint_wrench_derivatives(robot, q[n], qd[n], qdd[n])
               + forward_dynamics_derivatives(robot, q[n], qd[n], qdd[n]))
        for batched, single in zip(many, one):
            np.testing.assert_allclose(batched[n], single, rtol=0, atol=1e-12)


def test_mass_matrix_is_dtau_dqdd():
    robot = with_armature(load("multi_column", True), seed=18)
    q, qd, qdd = random_states(robot, 3, seed=18)
    np.testing.assert_allclose(rd.inverse_dynamics_derivatives(robot, q, qd, qdd)[2], rd.mass_matrix(robot, q),
                               rtol=0, atol=1e-12)
