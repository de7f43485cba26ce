"""Analytic derivatives of inverse dynamics, joint wrenches and forward dynamics.

Three independent references: Pinocchio (``computeRNEADerivatives``, ``computeABADerivatives``) on every
example-robot-data robot it supports (not mimic joints: Pinocchio refuses them in these algorithms); central finite
differences of ``rd.inverse_dynamics`` / ``rd.forward_dynamics`` on every robot, mimic joints and URDF friction
included; and the closed-form derivatives of a planar two-link arm derived below from its Lagrange equations.
"""
import dataclasses

import numpy as np
import pinocchio as pin
import pytest

import oracle
from oracle import random_states, with_armature
import rne_dynamics as rd
from rne_dynamics.algorithms.derivatives import forward_dynamics_derivatives, joint_wrench_derivatives

TOLERANCE = 1e-7            # against Pinocchio
FD_TOLERANCE = 1e-6         # against central differences (step 1e-6: truncation and round-off near 1e-9)
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])
BATCH = 4


def has_mimic(robot):
    return len(robot.bodies) > robot.dof


def without_drive_friction(robot):
    """The robot with URDF damping and friction removed (Pinocchio's derivatives leave them out)."""
    return robot.with_drive(damping=np.zeros(robot.dof), friction=np.zeros(robot.dof))


def pinocchio_link_wrenches(robot, model, link_wrenches):
    """``{link: wrench}`` (link frame) as Pinocchio's per-joint ``fext`` (joint frame)."""
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for link, wrench in link_wrenches.items():
        body, R, p = robot.link_frames[link]
        if body >= 0:
            fext[model.getJointId(robot.bodies[body].joint)] += pin.SE3(R, p).act(pin.Force(np.asarray(wrench)))
    return fext


def symmetric(upper):
    """Pinocchio fills the upper triangle of ``M`` and ``M^-1`` only."""
    return np.triu(upper) + np.triu(upper, 1).T


# ---------------------------------------------------------------- Pinocchio

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics_derivatives_match_pinocchio(path):
    robot, model = oracle.pair(path)
    if has_mimic(robot):
        pytest.skip("Pinocchio's RNEA derivatives refuse mimic joints; see the finite-difference tests")
    mapping = oracle.Mapping(robot, model)
    rng = np.random.default_rng(5)
    q, qd, qdd = random_states(robot, BATCH, seed=5, scale=2.0)
    wrenches = {link: rng.normal(scale=20.0, size=6) for link in robot.link_names}
    tilted = oracle.with_gravity(model, TILTED_GRAVITY)
    ours = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    ours_loaded = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=TILTED_GRAVITY,
                                                  external_wrenches=wrenches)
    data, tilted_data = model.createData(), tilted.createData()  # Pinocchio returns views into these
    for n in range(BATCH):
        args = (mapping.q(q[n]), mapping.v(qd[n]), mapping.v(qdd[n]))
        for label, derivatives, reference in (
                ("default", ours, pin.computeRNEADerivatives(model, data, *args)),
                ("tilted gravity, external wrenches", ours_loaded,
                 pin.computeRNEADerivatives(tilted, tilted_data, *args,
                                            pinocchio_link_wrenches(robot, model, wrenches)))):
            dq, dqd, M = (mapping.ours(x) for x in reference)
            expected = (dq, dqd + np.diag(robot.damping), symmetric(M) + np.diag(robot.armature))
            for name, value, exact in zip(("dtau_dq", "dtau_dqd", "dtau_dqdd"), derivatives, expected):
                error = oracle.relative_error(value[n], exact)
                assert error < TOLERANCE, f"state {n}, {label}: {name} relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics_derivatives_match_pinocchio(path):
    robot, model = oracle.pair(path)
    if has_mimic(robot):
        pytest.skip("Pinocchio's ABA derivatives refuse mimic joints; see the finite-difference tests")
    robot = without_drive_friction(robot)
    mapping = oracle.Mapping(robot, model)
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


# ---------------------------------------------------------------- finite differences (all robots, mimic included)

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics_and_joint_wrench_derivatives_match_finite_differences(path):
    """Torques and joint wrenches, with URDF damping and Coulomb friction on (``|qd|`` far above the step) and
    armature."""
    robot = with_armature(oracle.pair(path)[0], seed=7)
    q, qd, qdd = (x[0] for x in random_states(robot, 1, seed=7, scale=2.0))
    qd = np.where(np.abs(qd) < 0.1, 0.5, qd)
    torques = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=TILTED_GRAVITY)
    wrenches = joint_wrench_derivatives(robot, q, qd, qdd, gravity=TILTED_GRAVITY)
    state = {"q": q, "qd": qd, "qdd": qdd}
    for k, name in enumerate(state):
        torque_fd = oracle.central_difference(
            lambda **x: rd.inverse_dynamics(robot, **x, gravity=TILTED_GRAVITY).torques, robot, state, name)
        wrench_fd = oracle.central_difference(
            lambda **x: rd.inverse_dynamics(robot, **x, gravity=TILTED_GRAVITY).joint_wrenches, robot, state, name)
        error = oracle.relative_error(torques[k], torque_fd)
        assert error < FD_TOLERANCE, f"dtau_d{name}: relative error {error:.3g}"
        error = oracle.relative_error(wrenches[k], wrench_fd)
        assert error < FD_TOLERANCE, f"joint wrenches, d/d{name}: relative error {error:.3g}"
        assert wrenches[k].shape == (robot.dof, 6, robot.dof)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics_derivatives_match_finite_differences(path):
    """With URDF damping and friction, mimic joints included; ``M^-1`` also checked as the inverse of ``M``. Step
    1e-5: light finger links make ``M^-1`` reach 1e5, and round-off in ``qdd`` then swamps a smaller step."""
    robot = with_armature(oracle.pair(path)[0], seed=8)
    q, qd, tau = (x[0] for x in random_states(robot, 1, seed=31, scale=2.0))
    qd = np.where(np.abs(qd) < 0.1, 0.5, qd)
    try:
        derivatives = forward_dynamics_derivatives(robot, q, qd, tau)
    except rd.SingularMassMatrixError:
        pytest.skip("a joint drives no mass: forward dynamics is undefined")
    state = {"q": q, "qd": qd, "tau": tau}
    for k, name in enumerate(state):
        fd = oracle.central_difference(lambda **x: rd.forward_dynamics(robot, **x), robot, state, name, 1e-5)
        scale = max(1.0, np.abs(derivatives[k]).max())
        error = np.abs(derivatives[k] - fd).max() / scale
        assert error < FD_TOLERANCE, f"dqdd_d{name}: relative error {error:.3g}"
    M = rd.inverse_dynamics_derivatives(robot, q, qd, rd.forward_dynamics(robot, q, qd, tau))[2]
    np.testing.assert_allclose(derivatives[2] @ M, np.eye(robot.dof), atol=1e-8)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics_derivatives_equal_the_dense_solution(path):
    """The tree-sparse factorisation and solves give ``-M^-1 dtau/dq``, ``-M^-1 dtau/dqd`` and ``M^-1`` as numpy's
    dense inverse does, mimic joints included (their ``M`` need not follow the tree in its coordinates)."""
    robot = with_armature(oracle.pair(path)[0], seed=8)
    q, qd, tau = (x[0] for x in random_states(robot, 1, seed=32))
    try:
        ours = forward_dynamics_derivatives(robot, q, qd, tau)
    except rd.SingularMassMatrixError:
        pytest.skip("a joint drives no mass: forward dynamics is undefined")
    dtau_dq, dtau_dqd, M = rd.inverse_dynamics_derivatives(robot, q, qd, rd.forward_dynamics(robot, q, qd, tau))
    M_inv = np.linalg.inv(M)
    for name, value, dense in zip(("dqdd_dq", "dqdd_dqd", "dqdd_dtau"), ours,
                                  (-M_inv @ dtau_dq, -M_inv @ dtau_dqd, M_inv)):
        error = np.abs(value - dense).max() / max(1.0, np.abs(dense).max())
        assert error < 1e-10, f"{name}: relative error {error:.3g}"


# ---------------------------------------------------------------- batches and arguments

@pytest.mark.parametrize("fragment", ["panda_description/urdf/panda.urdf", "talos_data/robots/talos_reduced.urdf"])
def test_batch_matches_one_state_at_a_time(fragment):
    robot, _ = oracle.pair(oracle.robot_path(fragment))
    q, qd, qdd = random_states(robot, 6, seed=9)
    batched = rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    batched_wrenches = joint_wrench_derivatives(robot, q, qd, qdd)
    batched_forward = forward_dynamics_derivatives(robot, q, qd, qdd)
    dof = robot.dof
    assert [x.shape for x in batched] == [(6, dof, dof)] * 3
    assert [x.shape for x in batched_wrenches] == [(6, dof, 6, dof)] * 3
    assert [x.shape for x in batched_forward] == [(6, dof, dof)] * 3
    for n in range(6):
        for many, one in zip(batched + batched_wrenches + batched_forward,
                             rd.inverse_dynamics_derivatives(robot, q[n], qd[n], qdd[n])
                             + joint_wrench_derivatives(robot, q[n], qd[n], qdd[n])
                             + forward_dynamics_derivatives(robot, q[n], qd[n], qdd[n])):
            np.testing.assert_allclose(many[n], one, rtol=0, atol=1e-12)


def test_mass_matrix_is_dtau_dqdd():
    robot, _ = oracle.pair(oracle.robot_path("pr2_description/urdf/pr2.urdf"))  # mimic joints and prismatic
    q, qd, qdd = random_states(robot, 3, seed=10)
    np.testing.assert_allclose(rd.inverse_dynamics_derivatives(robot, q, qd, qdd)[2], rd.mass_matrix(robot, q),
                               rtol=0, atol=1e-10)


def test_bad_arguments_are_named():
    robot, _ = oracle.pair(oracle.robot_path("ur_description/urdf/ur5_robot.urdf"))
    with pytest.raises(rd.StateError, match="qdd"):
        rd.inverse_dynamics_derivatives(robot, np.zeros(6), np.zeros(6), np.zeros(5))
    with pytest.raises(rd.StateError, match="gravity"):
        joint_wrench_derivatives(robot, np.zeros(6), np.zeros(6), np.zeros(6), gravity=(0, 0))
    with pytest.raises(rd.StateError, match="tau"):
        forward_dynamics_derivatives(robot, np.zeros(6), np.zeros(6), np.full(6, np.nan))


# ---------------------------------------------------------------- closed form: a planar two-link arm

G = 9.81
PLANAR_GRAVITY = (0.0, -G, 0.0)


@dataclasses.dataclass(frozen=True)
class TwoLinkArm:
    """Two revolute z joints in the x-y plane; link ``k`` has mass ``m_k``, com at ``(r_k, 0, 0)`` and moment
    ``I_k`` about its com's z axis (its other inertia entries move no joint of a planar arm); joint 2 sits at
    ``(l1, 0, 0)``. Each joint has viscous ``damping``, Coulomb ``friction`` and a rotor inertia ``armature``."""
    m1: float = 2.0
    m2: float = 1.3
    l1: float = 0.7
    r1: float = 0.3
    r2: float = 0.45
    I1: float = 0.05
    I2: float = 0.03
    damping: tuple = (0.2, 0.1)
    friction: tuple = (0.4, 0.3)
    armature: tuple = (0.02, 0.01)

    def urdf(self):
        def link(name, m, r, izz, off_diagonal):
            ixy, ixz, iyz = off_diagonal
            return (f'<link name="{name}"><inertial><origin xyz="{r} 0 0"/><mass value="{m}"/>'
                    f'<inertia ixx="0.03" ixy="{ixy}" ixz="{ixz}" iyy="0.04" iyz="{iyz}" izz="{izz}"/>'
                    "</inertial></link>")

        def joint(name, parent, child, x, k):
            return (f'<joint name="{name}" type="continuous"><parent link="{parent}"/><child link="{child}"/>'
                    f'<origin xyz="{x} 0 0"/><axis xyz="0 0 1"/>'
                    f'<dynamics damping="{self.damping[k]}" friction="{self.friction[k]}"/></joint>')

        return ('<robot name="two_link"><link name="base"/>'
                + link("upper", self.m1, self.r1, self.I1, (0.004, 0.002, -0.003))
                + link("fore", self.m2, self.r2, self.I2, (-0.002, 0.005, 0.001))
                + joint("shoulder", "base", "upper", 0.0, 0) + joint("elbow", "upper", "fore", self.l1, 1)
                + "</robot>")

    def robot(self):
        return rd.load_urdf(self.urdf()).with_drive(armature=self.armature)

    def mass_matrix(self, q):
        """Lagrange's ``M(q)``, the rotor inertias on its diagonal."""
        m2, l1, r2 = self.m2, self.l1, self.r2
        c2 = np.cos(q[1])
        M11 = self.I1 + self.m1 * self.r1 ** 2 + self.I2 + m2 * (l1 ** 2 + r2 ** 2 + 2 * l1 * r2 * c2)
        M12 = self.I2 + m2 * (r2 ** 2 + l1 * r2 * c2)
        return np.array([[M11, M12], [M12, self.I2 + m2 * r2 ** 2]]) + np.diag(self.armature)

    def torques(self, q, qd, qdd):
        """Lagrange: ``M qdd + C qd + g + damping qd + friction sign(qd)``, gravity along -y."""
        h = self.m2 * self.l1 * self.r2 * np.sin(q[1])
        g1 = (self.m1 * self.r1 + self.m2 * self.l1) * G * np.cos(q[0])
        g12 = self.m2 * self.r2 * G * np.cos(q[0] + q[1])
        coriolis = np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])
        return (self.mass_matrix(q) @ qdd + coriolis + np.array([g1 + g12, g12])
                + np.multiply(self.damping, qd) + np.multiply(self.friction, np.sign(qd)))

    def torque_derivatives(self, q, qd, qdd):
        """``dtau/dq, dtau/dqd, dtau/dqdd`` of :meth:`torques`, differentiated by hand."""
        m2, l1, r2 = self.m2, self.l1, self.r2
        s2, c2 = np.sin(q[1]), np.cos(q[1])
        s1, s12 = np.sin(q[0]), np.sin(q[0] + q[1])
        h, dh = m2 * l1 * r2 * s2, m2 * l1 * r2 * c2  # h and dh/dq2
        g12 = m2 * r2 * G * s12
        dtau_dq = np.array([
            [-(self.m1 * self.r1 + m2 * l1) * G * s1 - g12,
             -h * (2 * qdd[0] + qdd[1]) - dh * (2 * qd[0] * qd[1] + qd[1] ** 2) - g12],
            [-g12, -h * qdd[0] + dh * qd[0] ** 2 - g12]])
        dtau_dqd = np.array([[-2 * h * qd[1], -2 * h * (qd[0] + qd[1])], [2 * h * qd[0], 0.0]])
        return dtau_dq, dtau_dqd + np.diag(self.damping), self.mass_matrix(q)

    def elbow_force_derivatives(self, q, qd, qdd):
        """Derivatives of the force on the forearm by the upper arm, in the forearm frame (x along the forearm):
        ``F = m2 (a_com2 - g)`` with ``a_com2 = l1 (qdd1 t1 - qd1^2 e1) + r2 (thdd t2 - thd^2 e2)`` (``th = q1 + q2``,
        ``e, t`` radial and tangential unit vectors); in forearm axes ``e1 = (c2, -s2)``, ``t1 = (s2, c2)`` and
        ``g = -G (sin th, cos th)``, so
        ``F_x = m2 (l1 (qdd1 s2 - qd1^2 c2) - r2 thd^2 + G sin th)``,
        ``F_y = m2 (l1 (qdd1 c2 + qd1^2 s2) + r2 thdd + G cos th)``.
        Returns ``(2, 2)`` arrays (force component x/y, coordinate) for q, qd, qdd."""
        m2, l1, r2 = self.m2, self.l1, self.r2
        s2, c2 = np.sin(q[1]), np.cos(q[1])
        s, c = np.sin(q[0] + q[1]), np.cos(q[0] + q[1])
        thd = qd[0] + qd[1]
        d_q = m2 * np.array([[G * c, l1 * (qdd[0] * c2 + qd[0] ** 2 * s2) + G * c],
                             [-G * s, l1 * (-qdd[0] * s2 + qd[0] ** 2 * c2) - G * s]])
        d_qd = m2 * np.array([[-2 * l1 * qd[0] * c2 - 2 * r2 * thd, -2 * r2 * thd],
                              [2 * l1 * qd[0] * s2, 0.0]])
        d_qdd = m2 * np.array([[l1 * s2, 0.0], [l1 * c2 + r2, r2]])
        return d_q, d_qd, d_qdd


ARM_STATES = [(np.array([0.3, -1.1]), np.array([0.8, -1.7]), np.array([2.0, 0.5])),
              (np.array([-2.4, 2.0]), np.array([-1.2, 0.4]), np.array([-0.7, 3.1]))]


@pytest.mark.parametrize("q, qd, qdd", ARM_STATES)
def test_two_link_arm_closed_form(q, qd, qdd):
    arm = TwoLinkArm()
    robot = arm.robot()
    np.testing.assert_allclose(rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY).torques,
                               arm.torques(q, qd, qdd), rtol=1e-12, atol=1e-12)  # the model is the one derived
    ours = rd.inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    for value, exact in zip(ours, arm.torque_derivatives(q, qd, qdd)):
        np.testing.assert_allclose(value, exact, rtol=1e-12, atol=1e-12)
    elbow = robot.joint_index("elbow")
    for value, exact in zip(joint_wrench_derivatives(robot, q, qd, qdd, gravity=PLANAR_GRAVITY),
                            arm.elbow_force_derivatives(q, qd, qdd)):
        np.testing.assert_allclose(value[elbow, 0:2], exact, rtol=1e-12, atol=1e-12)
    M = arm.mass_matrix(q)
    dqdd = forward_dynamics_derivatives(robot, q, qd, arm.torques(q, qd, qdd), gravity=PLANAR_GRAVITY)
    dtau_dq, dtau_dqd, _ = arm.torque_derivatives(q, qd, qdd)
    for value, exact in zip(dqdd, (-np.linalg.solve(M, dtau_dq), -np.linalg.solve(M, dtau_dqd), np.linalg.inv(M))):
        np.testing.assert_allclose(value, exact, rtol=1e-10, atol=1e-10)
