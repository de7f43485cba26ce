"""The drive layer's friction law, ``damping qd + friction s(qd) + friction_offset`` with the smooth Coulomb shape
``s = tanh(qd / coulomb_velocity)`` (``sign`` where it is 0): in inverse dynamics exactly, in forward dynamics as its
inverse, continuous through rest, its slope in the torque Jacobian against finite differences, read from a drive
file; bad values refused."""
import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.errors import ModelError
from rne_dynamics.robots import default_robot_path

DAMPING = np.array([0.8, 0.7, 0.6, 0.3, 0.2, 0.1])
FRICTION = np.array([2.0, 1.5, 1.0, 0.5, 0.4, 0.3])
OFFSET = np.array([0.3, -0.2, 0.1, -0.05, 0.0, 0.02])
VELOCITY = np.array([0.02, 0.03, 0.01, 0.05, 0.02, 0.04])


@pytest.fixture(scope="module")
def arm():
    return rd.load_urdf(default_robot_path()).with_drive(damping=DAMPING, friction=FRICTION, friction_offset=OFFSET,
                                                         coulomb_velocity=VELOCITY)


def test_inverse_dynamics_adds_the_friction_law(arm):
    rng = np.random.default_rng(4)
    q, qd, qdd = rng.uniform(-0.1, 0.1, (3, 5, 6))  # within a few coulomb_velocity of rest: tanh is not sign
    rigid = rd.inverse_dynamics(arm, q, qd, qdd, drive=False).torques
    got = rd.inverse_dynamics(arm, q, qd, qdd).torques
    np.testing.assert_allclose(got - rigid, DAMPING * qd + FRICTION * np.tanh(qd / VELOCITY) + OFFSET, atol=1e-12)
    sign = arm.with_drive(coulomb_velocity=np.zeros(6))  # the default: sign(qd), and friction_offset kept
    np.testing.assert_allclose(rd.inverse_dynamics(sign, q, qd, qdd).torques - rigid,
                               DAMPING * qd + FRICTION * np.sign(qd) + OFFSET, atol=1e-12)


def test_forward_dynamics_inverts_it_and_is_continuous_at_rest(arm):
    rng = np.random.default_rng(5)
    q, qd, tau = rng.uniform(-0.5, 0.5, (3, 6))
    qdd = rd.forward_dynamics(arm, q, qd, tau)
    np.testing.assert_allclose(rd.inverse_dynamics(arm, q, qd, qdd).torques, tau, atol=1e-10)
    step = 1e-9 * np.ones(6)
    jump = rd.forward_dynamics(arm, q, step, tau) - rd.forward_dynamics(arm, q, -step, tau)
    assert np.abs(jump).max() < 1e-3  # sign(qd) jumps by 2 friction / M here; tanh by 2e-9 friction / v / M
    assert np.abs(rd.forward_dynamics(arm.with_drive(coulomb_velocity=np.zeros(6)), q, step, tau)
                  - rd.forward_dynamics(arm.with_drive(coulomb_velocity=np.zeros(6)), q, -step, tau)).max() > 0.1


def test_torque_jacobian_has_the_smooth_coulomb_slope(arm):
    rng = np.random.default_rng(6)
    q, qd, qdd = rng.uniform(-0.05, 0.05, (3, 6))
    dtau_dqd = rd.inverse_dynamics_derivatives(arm, q, qd, qdd)[1]
    h = 1e-6
    numeric = np.column_stack([(rd.inverse_dynamics(arm, q, qd + h * e, qdd).torques
                                - rd.inverse_dynamics(arm, q, qd - h * e, qdd).torques) / (2 * h) for e in np.eye(6)])
    np.testing.assert_allclose(dtau_dqd, numeric, atol=1e-5)
    rigid = rd.inverse_dynamics_derivatives(arm, q, qd, qdd, drive=False)[1]
    np.testing.assert_allclose(np.diag(dtau_dqd - rigid), DAMPING + FRICTION * (1 - np.tanh(qd / VELOCITY) ** 2)
                               / VELOCITY, rtol=1e-12)


def test_drive_file_and_bad_values(arm, tmp_path):
    path = tmp_path / "drive.yaml"
    first = arm.joint_names[0]
    path.write_text(f"{first}: {{friction_offset: -0.4, coulomb_velocity: 0.05, damping: 1.5}}\n")
    robot = rd.load_drive(rd.load_urdf(default_robot_path()), path)
    assert robot.friction_offset[0] == -0.4 and robot.coulomb_velocity[0] == 0.05 and robot.damping[0] == 1.5
    locked = arm.with_locked_joints({arm.joint_names[1]: 0.3})
    np.testing.assert_array_equal(locked.friction_offset, np.delete(OFFSET, 1))
    np.testing.assert_array_equal(locked.coulomb_velocity, np.delete(VELOCITY, 1))
    with pytest.raises(ModelError, match=f"coulomb_velocity of joint '{first}' must be finite and >= 0, got -1"):
        arm.with_drive(coulomb_velocity=-np.ones(6))
    with pytest.raises(ModelError, match=f"friction_offset of joint '{first}' must be finite, got nan"):
        arm.with_drive(friction_offset=np.full(6, np.nan))
