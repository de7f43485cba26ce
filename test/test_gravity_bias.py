"""Gravity torques ``g(q)`` and bias torques ``C(q, qd) qd + g(q)`` against Pinocchio
(``computeGeneralizedGravity``, ``nonLinearEffects``), closed forms of the planar 2R arm and the contract's
definitions in terms of inverse dynamics."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from test_crba import ARM, G, PLANAR_GRAVITY, two_link_arm

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])


@pytest.mark.parametrize("gravity", [None, TILTED_GRAVITY], ids=["default", "tilted"])
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_matches_pinocchio(path, gravity):
    robot, model = oracle.pair(path)
    if gravity is not None:
        model = oracle.with_gravity(model, gravity)
    data, mapping = model.createData(), oracle.Mapping(robot, model)
    q, qd, _ = oracle.random_states(robot, 4, seed=1)
    g_batch = rd.gravity_torques(robot, q, gravity=gravity)
    b_batch = rd.bias_torques(robot, q, qd, gravity=gravity)
    assert g_batch.shape == b_batch.shape == q.shape
    for n in range(4):
        g_ref = mapping.ours(pin.computeGeneralizedGravity(model, data, mapping.q(q[n])))
        b_ref = mapping.ours(pin.nonLinearEffects(model, data, mapping.q(q[n]), mapping.v(qd[n])))
        assert oracle.relative_error(g_batch[n], g_ref) < TOLERANCE
        assert oracle.relative_error(b_batch[n], b_ref) < TOLERANCE
        assert oracle.relative_error(rd.gravity_torques(robot, q[n], gravity=gravity), g_ref) < TOLERANCE
        assert oracle.relative_error(rd.bias_torques(robot, q[n], qd[n], gravity=gravity), b_ref) < TOLERANCE


@pytest.mark.parametrize("name", ["talos_data/robots/talos_left_arm.urdf", "panda_description/urdf/panda.urdf",
                                  "allegro_hand_description/urdf/allegro_left_hand.urdf"])
def test_contract_definitions_with_drive_friction(name):
    """``g(q) == inverse_dynamics(q, 0, 0).torques``; the bias leaves out the URDF friction that inverse dynamics
    adds: ``inverse_dynamics(q, qd, 0) == bias + damping qd + friction sign(qd)``. Robots with URDF friction."""
    robot, _ = oracle.pair(oracle.robot_path(name))
    robot = robot.with_drive(armature=np.full(robot.dof, 0.3), damping=np.full(robot.dof, 0.7),
                             friction=np.full(robot.dof, 1.1))
    q, qd, _ = oracle.random_states(robot, 3, seed=2)
    zero = np.zeros_like(q)
    np.testing.assert_allclose(rd.gravity_torques(robot, q), rd.inverse_dynamics(robot, q, zero, zero).torques,
                               rtol=1e-12, atol=1e-12)
    friction = robot.damping * qd + robot.friction * np.sign(qd)
    np.testing.assert_allclose(rd.bias_torques(robot, q, qd) + friction,
                               rd.inverse_dynamics(robot, q, qd, zero).torques, rtol=1e-12, atol=1e-12)


def arm_gravity(q, m1, m2, l1, lc1, lc2, **_):
    """``dV/dq`` with ``V = G (m1 lc1 sin q1 + m2 (l1 sin q1 + lc2 sin(q1 + q2)))`` (height along +y)."""
    c1, c12 = np.cos(q[0]), np.cos(q[0] + q[1])
    return G * np.array([(m1 * lc1 + m2 * l1) * c1 + m2 * lc2 * c12, m2 * lc2 * c12])


def arm_velocity_torques(q, qd, m2, l1, lc2, **_):
    """``C qd`` from Lagrange with ``h = m2 l1 lc2 sin q2``: ``[-h (2 qd1 qd2 + qd2^2), h qd1^2]``."""
    h = m2 * l1 * lc2 * np.sin(q[1])
    return np.array([-h * (2 * qd[0] * qd[1] + qd[1] ** 2), h * qd[0] ** 2])


@pytest.mark.parametrize("state", [([0.3, -0.8], [1.2, -0.4]), ([2.0, 1.1], [-0.5, 2.5]), ([0.0, 0.0], [1.0, 1.0])])
def test_two_link_arm_closed_form(state):
    robot = rd.load_urdf(two_link_arm())
    q, qd = (np.array(x) for x in state)
    np.testing.assert_allclose(rd.gravity_torques(robot, q, gravity=PLANAR_GRAVITY), arm_gravity(q, **ARM),
                               rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(rd.bias_torques(robot, q, qd, gravity=PLANAR_GRAVITY),
                               arm_gravity(q, **ARM) + arm_velocity_torques(q, qd, **ARM), rtol=1e-13, atol=1e-13)


def test_gravity_along_the_joint_axes_loads_nothing():
    """Gravity along z, the axis of both joints: no torque in any pose; the bias is then the velocity part alone."""
    robot = rd.load_urdf(two_link_arm())
    q, qd = np.array([0.9, -1.3]), np.array([0.6, 1.4])
    np.testing.assert_allclose(rd.gravity_torques(robot, q), np.zeros(2), rtol=0, atol=1e-15)
    np.testing.assert_allclose(rd.bias_torques(robot, q, qd), arm_velocity_torques(q, qd, **ARM), rtol=1e-13)


def test_bad_arguments_are_clear_errors():
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="gravity"):
        rd.gravity_torques(robot, np.zeros(2), gravity=(0, 9.81))
    with pytest.raises(rd.StateError, match="qd has shape"):
        rd.bias_torques(robot, np.zeros((3, 2)), np.zeros(2))
