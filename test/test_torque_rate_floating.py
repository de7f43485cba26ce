"""The torque rate with joints of several coordinates: free-flyer bases, planar and spherical joints, against central
differences of the inverse dynamics along trajectories on the joints' groups whose velocity, acceleration and jerk are
known exactly (mimic joints, URDF friction and random armature included)."""
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

import oracle
import rne_dynamics as rd
from multi_dof import IDS, PATHS, random_configuration, tree_urdf
from oracle import integrate
from rne_dynamics.model.joints import FREE_FLYER, SPHERICAL

RATE_TOLERANCE = 1e-6  # torque rate, central differences with step 1e-5
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])


class Motion:
    """``q(t) = integrate(q0, Phi(t))`` with ``Phi`` a polynomial of degree 5 in the tangent space, every joint of
    several coordinates moving along one fixed direction ``xi`` (``Phi_joint(t) = phi(t) xi``, ``phi`` a scalar
    polynomial): ``exp(phi xi)`` is a one-parameter subgroup, so the child-frame velocity is exactly ``phi' xi``
    and ``v, a, jerk = Phi', Phi'', Phi'''`` (for a general ``Phi`` the body velocity is not ``Phi'``)."""

    def __init__(self, robot, seed):
        rng = np.random.default_rng(seed)
        self.robot = robot
        self.q0 = random_configuration(robot, rng)
        c = rng.uniform(-1.0, 1.0, size=(6, robot.nv))
        c[0] = 0.0
        c[1] = np.where(np.abs(c[1]) < 0.1, 0.5, c[1])  # qd away from 0: Coulomb friction switches there
        for b in robot.bodies:
            if not b.mimic and b.nv > 1:  # phi(t) xi, phi(0) = 0
                c[1:, b.idx_v:b.idx_v + b.nv] = rng.uniform(-1.0, 1.0, size=(5, 1)) * rng.uniform(-1.0, 1.0, b.nv)
        self.c = c

    def tangent(self, t, order):
        out = 0.0
        for k in range(order, len(self.c)):
            out = out + np.prod(np.arange(k - order + 1, k + 1)) * self.c[k] * t ** (k - order)
        return out

    def state(self, t):
        return (integrate(self.robot, self.q0, self.tangent(t, 0)),) + tuple(self.tangent(t, n) for n in (1, 2, 3))


def rate_check(robot, seed):
    motion = Motion(robot, seed)
    step = 1e-5
    q, v, a, _ = (np.array(x) for x in zip(motion.state(step), motion.state(-step)))
    tau = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY).torques
    expected = (tau[0] - tau[1]) / (2 * step)
    ours = rd.torque_rate(robot, *motion.state(0.0), gravity=TILTED_GRAVITY)
    error = oracle.relative_error(ours, expected)
    assert error < RATE_TOLERANCE, f"relative error {error:.3g}"
    batch = rd.torque_rate(robot, *(np.array([x, x]) for x in motion.state(0.0)), gravity=TILTED_GRAVITY)
    np.testing.assert_array_equal(batch[1], ours)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_torque_rate_matches_finite_differences(path, floating_base):
    """Mimic joints, URDF friction and random armature included."""
    rate_check(oracle.with_armature(oracle.load_quietly(path, floating_base), seed=38), seed=38)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_torque_rate_with_planar_and_spherical_joints(floating_base):
    robot = oracle.with_armature(rd.load_urdf(tree_urdf(), floating_base=floating_base), seed=39)
    for seed in (39, 40, 41):
        rate_check(robot, seed)


def test_motion_is_the_exact_velocity():
    """The test trajectory's velocity is ``Phi'``: a difference of the poses, base and spherical joints alike."""
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    motion = Motion(robot, seed=42)
    step = 1e-6
    q0, v0 = motion.state(0.0)[:2]
    q_plus, q_minus = motion.state(step)[0], motion.state(-step)[0]
    # integrate(q0, dv) for small dv is q0 moved by dv to first order: compare with the tangent of the difference
    for b in robot.bodies:
        if b.code in (FREE_FLYER, SPHERICAL):
            start = b.idx_q + (3 if b.code == FREE_FLYER else 0)
            R0 = Rotation.from_quat(q0[start:start + 4])
            w = ((R0.inv() * Rotation.from_quat(q_plus[start:start + 4])).as_rotvec()
                 - (R0.inv() * Rotation.from_quat(q_minus[start:start + 4])).as_rotvec()) / (2 * step)
            angular = slice(b.idx_v + 3, b.idx_v + 6) if b.code == FREE_FLYER else slice(b.idx_v, b.idx_v + 3)
            np.testing.assert_allclose(w, v0[angular], rtol=1e-6, atol=1e-8)
            if b.code == FREE_FLYER:
                linear = R0.as_matrix().T @ (q_plus[:3] - q_minus[:3]) / (2 * step)
                np.testing.assert_allclose(linear, v0[:3], rtol=1e-6, atol=1e-8)
