"""The per-call choice between rigid-body dynamics and dynamics with the drives (``drive=False`` / ``True``): the
drive terms are exactly the difference, ``drive=False`` is the robot with every drive zeroed, and on URDFs with
``<dynamics damping friction>`` it equals Pinocchio's algorithms (which leave friction out)."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.robots import default_robot_path

ARMATURE = [0.4, 0.4, 0.3, 0.1, 0.1, 0.05]
DAMPING = [0.8, 0.7, 0.6, 0.3, 0.2, 0.1]
FRICTION = [2.0, 1.5, 1.0, 0.5, 0.4, 0.3]


@pytest.fixture(scope="module")
def arms():
    """The bundled arm with every drive term set, and the same arm with none."""
    robot = rd.load_urdf(default_robot_path())
    driven = robot.with_drive(armature=ARMATURE, damping=DAMPING, friction=FRICTION)
    return driven, robot.with_drive(armature=np.zeros(6), damping=np.zeros(6), friction=np.zeros(6))


def rigid_and_driven(function, driven, *args, **kwargs):
    return function(driven, *args, drive=False, **kwargs), function(driven, *args, **kwargs)


def test_drive_terms_are_the_difference(arms):
    """``tau - tau_rigid = armature qdd + damping qd + friction sign(qd)``; ``M - M_rigid = diag(armature)``; the
    torque Jacobians differ by ``diag(damping)`` and ``diag(armature)``; the torque rate by ``armature qddd + damping
    qdd`` and its derivative by ``armature qdddd + damping qddd``."""
    driven, _ = arms
    armature, damping, friction = (np.array(x) for x in (ARMATURE, DAMPING, FRICTION))
    rng = np.random.default_rng(1)
    q, qd, qdd, qddd, qdddd = rng.uniform(-2, 2, (5, 4, 6))
    rigid, full = rigid_and_driven(rd.inverse_dynamics, driven, q, qd, qdd)
    np.testing.assert_allclose(full.torques - rigid.torques, armature * qdd + damping * qd + friction * np.sign(qd),
                               atol=1e-12)
    np.testing.assert_array_equal(full.joint_wrenches, rigid.joint_wrenches)  # the drive acts inside the joint
    rigid, full = rigid_and_driven(rd.mass_matrix, driven, q)
    np.testing.assert_allclose(full - rigid, np.broadcast_to(np.diag(armature), (4, 6, 6)), atol=1e-12)
    rigid, full = rigid_and_driven(rd.inverse_dynamics_derivatives, driven, q, qd, qdd)
    np.testing.assert_allclose(full[0], rigid[0], atol=1e-12)
    np.testing.assert_allclose(full[1] - rigid[1], np.broadcast_to(np.diag(damping), (4, 6, 6)), atol=1e-12)
    np.testing.assert_allclose(full[2] - rigid[2], np.broadcast_to(np.diag(armature), (4, 6, 6)), atol=1e-12)
    rigid, full = rigid_and_driven(rd.torque_rate, driven, q, qd, qdd, qddd)
    np.testing.assert_allclose(full - rigid, armature * qddd + damping * qdd, atol=1e-11)
    rigid, full = rigid_and_driven(rd.torque_acceleration, driven, q, qd, qdd, qddd, qdddd)
    np.testing.assert_allclose(full - rigid, armature * qdddd + damping * qddd, atol=1e-10)


@pytest.mark.parametrize("call, arguments", [
    (rd.inverse_dynamics, 3), (rd.mass_matrix, 1), (rd.forward_dynamics, 3), (rd.inverse_dynamics_derivatives, 3),
    (rd.forward_dynamics_derivatives, 3), (rd.torque_rate, 4), (rd.torque_acceleration, 5)])
def test_rigid_call_is_the_robot_without_drives(arms, call, arguments):
    """``drive=False`` on a robot with drives gives the very numbers of the robot without them, one state (with and
    without a held ``data``) and a batch."""
    driven, bare = arms
    states = list(np.random.default_rng(2).uniform(-1.5, 1.5, (arguments, 3, 6)))
    flat = lambda result: [np.asarray(x) for x in (result if isinstance(result, tuple) else (result,))]  # noqa: E731
    for expected, got in zip(flat(call(bare, *states)), flat(call(driven, *states, drive=False))):
        np.testing.assert_array_equal(got, expected)
    data = driven.data()
    for n in range(3):
        one = [s[n] for s in states]
        expected = [x.copy() for x in flat(call(bare, *one))]
        assert not all(np.array_equal(a, b) for a, b in zip(flat(call(driven, *one, data=data)), expected))
        for a, b in zip(flat(call(driven, *one, data=data, drive=False)), expected):
            np.testing.assert_array_equal(a, b)


def test_rigid_hybrid_dynamics(arms):
    driven, bare = arms
    q, qd, qdd, tau = np.random.default_rng(3).uniform(-1, 1, (4, 6))
    known = ["shoulder_pan_joint", "elbow_joint", "wrist_2_joint"]
    expected = rd.hybrid_dynamics(bare, q, qd, qdd, tau, known_acceleration=known)
    got = rd.hybrid_dynamics(driven, q, qd, qdd, tau, known_acceleration=known, drive=False)
    for a, b in zip(got, expected):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("floating", [False, True])
def test_rigid_body_torques_equal_pinocchio_on_a_urdf_with_friction(floating):
    """Talos's URDF gives its joints damping and friction: with ``drive=False`` our torques, mass matrix and
    accelerations are Pinocchio's ``rnea``, ``crba`` and ``aba``; with the drives, the torques differ by exactly
    ``damping qd + friction sign(qd)`` (several N m: Coulomb steps at zero velocity in a feedforward)."""
    path = oracle.robot_path("talos_data/robots/talos_reduced.urdf")
    if floating:
        robot, model = oracle.floating_pair(path)
        mapping = oracle.FloatingMapping(robot, model)
        q, qd, qdd = oracle.random_floating_states(robot, 3, seed=4)
    else:
        robot, model = oracle.pair(path)
        mapping = oracle.Mapping(robot, model)
        q, qd, qdd = oracle.random_states(robot, 3, seed=4)
    assert np.abs(robot.friction).max() > 0 and np.abs(robot.damping).max() > 0
    data = model.createData()
    torques = rd.inverse_dynamics(robot, q, qd, qdd, drive=False).torques
    with_drives = rd.inverse_dynamics(robot, q, qd, qdd).torques
    M = rd.mass_matrix(robot, q, drive=False)
    qdd_rigid = rd.forward_dynamics(robot, q, qd, torques, drive=False)
    for n in range(3):
        Q, V, A = mapping.q(q[n]), mapping.v(qd[n]), mapping.v(qdd[n])
        assert oracle.relative_error(torques[n], mapping.ours(pin.rnea(model, data, Q, V, A))) < 1e-12
        M_ref = pin.crba(model, data, Q)
        assert oracle.relative_error(M[n], mapping.ours(np.triu(M_ref) + np.triu(M_ref, 1).T)) < 1e-12
        np.testing.assert_allclose(with_drives[n] - torques[n], oracle.drive_torques(robot, qd[n]), atol=1e-9)
        assert oracle.relative_error(qdd_rigid[n], qdd[n]) < 1e-8
    assert np.abs(with_drives - torques).max() > 1.0
