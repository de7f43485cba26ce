"""The Coriolis matrix against Pinocchio's ``computeCoriolisMatrix``, the Christoffel symbols of ``M`` (by finite
differences of our CRBA, itself checked against Pinocchio), the 2R arm closed form, ``C qd = bias - g`` and the
skew symmetry of ``dM/dt - 2 C``.

Robots with mimic joints are not compared with Pinocchio 4.1: its ``computeCoriolisMatrix`` does not handle them
(there its ``C qd`` differs from ``nonLinearEffects - computeGeneralizedGravity`` and ``dM/dt - 2 C`` is not skew);
the Christoffel symbols cover them.
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from test_crba import ARM, two_link_arm

TOLERANCE = 1e-9
FD_TOLERANCE = 1e-7  # central differences, step 1e-6: truncation ~1e-12, rounding ~1e-10 of |M|
STEP = 1e-6
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
NO_MIMIC = [p for p in PATHS if len(oracle.pair(p)[0].bodies) == oracle.pair(p)[0].dof]


@pytest.mark.parametrize("path", NO_MIMIC, ids=[oracle.short_name(p) for p in NO_MIMIC])
def test_matches_pinocchio(path):
    robot, model = oracle.pair(path)
    data, mapping = model.createData(), oracle.Mapping(robot, model)
    q, qd, _ = oracle.random_states(robot, 4, seed=11, scale=2.0)
    batch = rd.coriolis_matrix(robot, q, qd)
    assert batch.shape == (4, robot.dof, robot.dof)
    for n in range(4):
        reference = mapping.ours(pin.computeCoriolisMatrix(model, data, mapping.q(q[n]), mapping.v(qd[n])))
        assert oracle.relative_error(batch[n], reference) < TOLERANCE
        assert oracle.relative_error(rd.coriolis_matrix(robot, q[n], qd[n]), reference) < TOLERANCE


def mass_matrix_gradient(robot, q):
    """``dM/dq_k`` ``(dof, dof, dof)``, k last, by central differences."""
    steps = STEP * np.eye(robot.dof)
    return (rd.mass_matrix(robot, q + steps) - rd.mass_matrix(robot, q - steps)).transpose(1, 2, 0) / (2 * STEP)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_christoffel_symbols_and_properties(path):
    """``C_ij = sum_k 1/2 (dM_ij/dq_k + dM_ik/dq_j - dM_jk/dq_i) qd_k``; ``C qd = bias - g``;
    ``dM/dt - 2 C`` skew with ``dM/dt = (M(q + h qd) - M(q - h qd)) / 2h``."""
    robot, _ = oracle.pair(path)
    robot = robot.with_drive(armature=np.full(robot.dof, 0.05))  # constant: changes neither C nor dM/dt
    q, qd, _ = oracle.random_states(robot, 2, seed=12, scale=2.0)
    C = rd.coriolis_matrix(robot, q, qd)
    velocity_torques = rd.bias_torques(robot, q, qd) - rd.gravity_torques(robot, q)
    assert oracle.relative_error(np.einsum("nij,nj->ni", C, qd), velocity_torques) < TOLERANCE
    for n in range(2):
        dM = mass_matrix_gradient(robot, q[n])
        christoffel = 0.5 * (dM + dM.transpose(0, 2, 1) - dM.transpose(2, 1, 0))
        assert oracle.relative_error(C[n], christoffel @ qd[n]) < FD_TOLERANCE
        M_rate = (rd.mass_matrix(robot, q[n] + STEP * qd[n]) - rd.mass_matrix(robot, q[n] - STEP * qd[n])) / STEP / 2
        N = M_rate - 2 * C[n]
        assert oracle.relative_error(N + N.T, np.zeros_like(N)) < FD_TOLERANCE


@pytest.mark.parametrize("state", [([0.3, -0.8], [1.2, -0.4]), ([2.0, 1.1], [-0.5, 2.5])])
def test_two_link_arm_closed_form(state):
    """With ``h = m2 l1 lc2 sin q2``: ``C = [[-h qd2, -h (qd1 + qd2)], [h qd1, 0]]`` (Christoffel symbols)."""
    robot = rd.load_urdf(two_link_arm())
    q, qd = (np.array(x) for x in state)
    h = ARM["m2"] * ARM["l1"] * ARM["lc2"] * np.sin(q[1])
    expected = np.array([[-h * qd[1], -h * (qd[0] + qd[1])], [h * qd[0], 0.0]])
    np.testing.assert_allclose(rd.coriolis_matrix(robot, q, qd), expected, rtol=1e-13, atol=1e-14)


def test_bad_state_is_a_clear_error():
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="qd has shape"):
        rd.coriolis_matrix(robot, np.zeros(2), np.zeros((1, 2)))
