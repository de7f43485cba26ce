"""The Coriolis matrix with joints of several coordinates: free-flyer bases (Pinocchio's ``JointModelFreeFlyer``),
planar and spherical joints. Against Pinocchio's ``computeCoriolisMatrix`` (robots without mimic joints: Pinocchio
4.1's is wrong there) on example-robot-data robots and on a small tree built the same way in both libraries; without
Pinocchio, ``C v = bias - g`` and the skew symmetry of ``dM/dt - 2 C`` (``dM/dt`` by central differences along
``integrate(q, t v)``), mimic joints included."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from multi_dof import IDS, PATHS, random_configuration, tree_pair, tree_urdf
from oracle import integrate

TOLERANCE = 1e-9
FD_TOLERANCE = 1e-7   # dM/dt, central differences with step 1e-6


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coriolis_matches_pinocchio_with_a_free_flyer(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio 4.1's computeCoriolisMatrix is wrong with mimic joints")
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(31)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v = rng.uniform(-2.0, 2.0, size=(3, robot.nv))
    batch = rd.coriolis_matrix(robot, q, v)
    assert batch.shape == (3, robot.nv, robot.nv)
    for n in range(3):
        reference = mapping.ours(pin.computeCoriolisMatrix(model, data, mapping.q(q[n]), mapping.v(v[n])))
        error = oracle.relative_error(batch[n], reference)
        assert error < TOLERANCE, f"state {n}: relative error {error:.3g}"
        np.testing.assert_array_equal(rd.coriolis_matrix(robot, q[n], v[n]), batch[n])


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints_match_pinocchio(floating_base):
    """Mass matrix and torques first (the two models are the same robot), then ``C``: the column pairs of one joint
    of several coordinates follow Pinocchio's rule."""
    robot, model = tree_pair(floating_base)
    assert robot.nv == model.nv and robot.nq == model.nq - 1  # the planar angle is (cos, sin) there
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(32)
    for _ in range(4):
        q = random_configuration(robot, rng)
        v, a = rng.uniform(-2.0, 2.0, size=(2, robot.nv))
        q_pin, v_pin, a_pin = mapping.q(q), mapping.v(v), mapping.v(a)
        M = pin.crba(model, data, q_pin)
        M = np.triu(M) + np.triu(M, 1).T
        assert oracle.relative_error(rd.mass_matrix(robot, q), mapping.ours(M)) < TOLERANCE
        tau = mapping.ours(pin.rnea(model, data, q_pin, v_pin, a_pin))
        assert oracle.relative_error(rd.inverse_dynamics(robot, q, v, a).torques, tau) < TOLERANCE
        C = mapping.ours(pin.computeCoriolisMatrix(model, data, q_pin, v_pin))
        error = oracle.relative_error(rd.coriolis_matrix(robot, q, v), C)
        assert error < TOLERANCE, f"Coriolis: relative error {error:.3g}"


def skew_check(robot, q, v):
    """``C v = bias - g``, and ``dM/dt - 2 C`` skew with ``dM/dt`` by central differences along ``q exp(t v)``."""
    C = rd.coriolis_matrix(robot, q, v)
    velocity_torques = rd.bias_torques(robot, q, v) - rd.gravity_torques(robot, q)
    assert oracle.relative_error(C @ v, velocity_torques) < TOLERANCE
    step = 1e-6
    M_rate = (rd.mass_matrix(robot, integrate(robot, q, step * v))
              - rd.mass_matrix(robot, integrate(robot, q, -step * v))) / (2 * step)
    N = M_rate - 2 * C
    error = oracle.relative_error(N + N.T, np.zeros_like(N)) / max(1.0, np.abs(C).max())
    assert error < FD_TOLERANCE, f"dM/dt - 2 C is not skew: relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coriolis_properties_with_a_floating_base(path):
    """Every listed robot, mimic joints included (``C = J^T C_columns J``)."""
    # constant rotor inertia: changes neither C nor dM/dt
    robot = oracle.with_armature(oracle.load_quietly(path, floating_base=True), seed=33)
    rng = np.random.default_rng(33)
    for _ in range(2):
        skew_check(robot, random_configuration(robot, rng), rng.uniform(-2.0, 2.0, robot.nv))


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_coriolis_properties_with_planar_and_spherical_joints(floating_base):
    robot = rd.load_urdf(tree_urdf(), floating_base=floating_base)
    rng = np.random.default_rng(34)
    for _ in range(3):
        skew_check(robot, random_configuration(robot, rng), rng.uniform(-2.0, 2.0, robot.nv))
