"""The joint torque regressor and the base parameters.

``Y`` against Pinocchio's ``computeJointTorqueRegressor`` (robots without mimic joints, which Pinocchio refuses
there) and ``Y @ pi`` against ``rd.inverse_dynamics`` on every robot; the base parameters reproduce the torques and,
for a planar two-link arm, are exactly the combinations derived by hand (Khalil's regrouping).
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms.regressor import PARAMETER_NAMES, parameter_names
from oracle import drive_torques, random_states, with_armature
from test_derivatives import PLANAR_GRAVITY, TILTED_GRAVITY, TwoLinkArm, has_mimic

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_parameters_are_pinocchios(path):
    robot, model = oracle.pair(path)
    reference = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    columns = oracle.Mapping(robot, model).regressor_columns()
    error = oracle.relative_error(rd.inertial_parameters(robot), reference[columns])
    assert error < TOLERANCE, f"relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_matches_pinocchio(path):
    robot, model = oracle.pair(path)
    if has_mimic(robot):
        pytest.skip("Pinocchio's regressor refuses mimic joints; see test_regressor_times_parameters_is_the_torque")
    mapping = oracle.Mapping(robot, model)
    columns = mapping.regressor_columns()
    q, qd, qdd = random_states(robot, 3, seed=21, scale=2.0)
    for gravity in (None, TILTED_GRAVITY):
        reference_model = oracle.with_gravity(model, gravity)
        data = reference_model.createData()
        ours = rd.joint_torque_regressor(robot, q, qd, qdd, gravity=gravity)
        for n in range(len(q)):
            Y = pin.computeJointTorqueRegressor(reference_model, data, mapping.q(q[n]), mapping.v(qd[n]),
                                                mapping.v(qdd[n]))
            error = oracle.relative_error(ours[n], Y[mapping.idx_v][:, columns])
            assert error < TOLERANCE, f"gravity {gravity}, state {n}: relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_times_parameters_is_the_torque(path):
    """All robots, mimic joints included; the difference is exactly the drive terms (URDF friction, armature)."""
    robot = with_armature(oracle.pair(path)[0], seed=22)
    q, qd, qdd = random_states(robot, 3, seed=22, scale=2.0)
    Y = rd.joint_torque_regressor(robot, q, qd, qdd, gravity=TILTED_GRAVITY)
    assert Y.shape == (3, robot.dof, 10 * len(robot.bodies))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY).torques
    error = oracle.relative_error(Y @ rd.inertial_parameters(robot), tau - drive_torques(robot, qd, qdd))
    assert error < TOLERANCE, f"relative error {error:.3g}"


def test_batch_matches_one_state_at_a_time():
    robot, _ = oracle.pair(oracle.robot_path("pr2_description/urdf/pr2.urdf"))
    q, qd, qdd = random_states(robot, 5, seed=23)
    batched = rd.joint_torque_regressor(robot, q, qd, qdd)
    for n in range(5):
        np.testing.assert_array_equal(batched[n], rd.joint_torque_regressor(robot, q[n], qd[n], qdd[n]))


def test_parameter_names_follow_the_bodies():
    robot, _ = oracle.pair(oracle.robot_path("panda_description/urdf/panda.urdf"))
    names = parameter_names(robot)
    assert len(names) == len(rd.inertial_parameters(robot)) == 10 * len(robot.bodies)
    assert names[:10] == tuple(f"{robot.body_joint_names[0]}.{p}" for p in PARAMETER_NAMES)
    assert names[-1] == f"{robot.body_joint_names[-1]}.I_zz"


def test_bad_arguments_are_named():
    robot, _ = oracle.pair(oracle.robot_path("ur_description/urdf/ur5_robot.urdf"))
    with pytest.raises(rd.StateError, match="qd"):
        rd.joint_torque_regressor(robot, np.zeros(6), np.zeros(7), np.zeros(6))


# ---------------------------------------------------------------- base parameters

@pytest.mark.parametrize("fragment", [
    "ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf", "talos_data/robots/talos_left_arm.urdf",
    "double_pendulum_description/urdf/double_pendulum.urdf", "anymal_c_simple_description/urdf/anymal.urdf",
    "pr2_description/urdf/pr2.urdf",
])
def test_base_parameters_reproduce_the_torques(fragment):
    robot, _ = oracle.pair(oracle.robot_path(fragment))
    base = rd.base_parameters(robot)
    pi = rd.inertial_parameters(robot)
    rank = len(base.indices)
    assert base.combination.shape == (rank, len(pi)) and len(base.names) == rank
    np.testing.assert_allclose(base.values, base.combination @ pi)
    q, qd, qdd = random_states(robot, 10, seed=24, scale=2.0)  # states the reduction never saw
    placeholders = np.subtract(*robot.position_limits.T) >= 0  # the pendulum's <limit lower="0" upper="0">: it moves
    q[:, placeholders] = np.random.default_rng(25).uniform(-np.pi, np.pi, size=(len(q), placeholders.sum()))
    Y = rd.joint_torque_regressor(robot, q, qd, qdd)
    tau = rd.inverse_dynamics(robot, q, qd, qdd).torques - drive_torques(robot, qd, qdd)
    error = oracle.relative_error(base.regressor(Y) @ base.values, tau)
    assert error < TOLERANCE, f"relative error {error:.3g}"
    # the kept columns are independent and no parameter outside their span moves a joint
    W = Y.reshape(-1, len(pi))
    assert np.linalg.matrix_rank(base.regressor(W)) == rank == np.linalg.matrix_rank(W)
    assert rank < len(pi)


@pytest.mark.parametrize("gravity, expected_rank", [(PLANAR_GRAVITY, 6), ((0.0, 0.0, -9.81), 4)])
def test_two_link_arm_base_parameters_are_khalils_regrouping(gravity, expected_rank):
    """Planar arm, parameters about each body origin (body 1 = upper arm, 2 = forearm; joint 2 at ``l1`` on x).
    Only ``m, mc_x, mc_y, I_zz`` of each body move z joints in planar motion; the forearm's mass acts on joint 1 only
    through ``l1^2 m2`` (with the upper arm's ``I_zz``) and, under gravity in the plane, ``l1 m2`` (with its
    ``mc_x``), so the base parameters are ``I_zz1 + l1^2 m2``, ``mc_x1 + l1 m2``, ``mc_y1``, ``I_zz2``, ``mc_x2``,
    ``mc_y2``; with gravity along the joint axes the upper arm's first moment moves nothing: 4 remain."""
    arm = TwoLinkArm()
    robot = arm.robot()
    base = rd.base_parameters(robot, gravity=gravity)
    assert len(base.indices) == expected_rank
    index = {name: k for k, name in enumerate(parameter_names(robot))}

    def combination(**terms):
        row = np.zeros(len(index))
        for name, weight in terms.items():
            joint, parameter = name.split("__")
            row[index[f"{joint}.{parameter}"]] = weight
        return row

    known = [combination(shoulder__I_zz=1.0, elbow__m=arm.l1 ** 2), combination(elbow__I_zz=1.0),
             combination(elbow__mc_x=1.0), combination(elbow__mc_y=1.0)]
    if expected_rank == 6:
        known += [combination(shoulder__mc_x=1.0, elbow__m=arm.l1), combination(shoulder__mc_y=1.0)]
    # the same row space: each known combination is a mix of the computed ones, and they are as many
    stacked = np.vstack([base.combination, known])
    assert np.linalg.matrix_rank(stacked, tol=1e-9) == expected_rank == np.linalg.matrix_rank(known)
    q, qd, qdd = random_states(robot, 5, seed=25, scale=2.0)
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity).torques - drive_torques(robot, qd, qdd)
    Y = rd.joint_torque_regressor(robot, q, qd, qdd, gravity=gravity)
    np.testing.assert_allclose(base.regressor(Y) @ base.values, tau, rtol=1e-10, atol=1e-10)
