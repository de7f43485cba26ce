"""The joint torque regressor and the base parameters with joints of several coordinates: free-flyer bases
(Pinocchio's ``JointModelFreeFlyer``), planar and spherical joints. Against Pinocchio's
``computeJointTorqueRegressor`` (robots without mimic joints, which it refuses) on example-robot-data robots and on a
small tree built the same way in both libraries; ``Y pi`` against the inverse dynamics, mimic joints included; the
base parameters reproduce the torques."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from multi_dof import IDS, PATHS, random_configuration, tree_pair, tree_urdf

TOLERANCE = 1e-9
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_matches_pinocchio_with_a_free_flyer(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio's regressor refuses mimic joints; see test_regressor_times_parameters...")
    mapping = oracle.FloatingMapping(robot, model)
    columns = mapping.regressor_columns()
    rng = np.random.default_rng(35)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 3, robot.nv))
    reference = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    assert oracle.relative_error(rd.inertial_parameters(robot), reference[columns]) < TOLERANCE
    for gravity in (None, TILTED_GRAVITY):
        reference_model = oracle.with_gravity(model, gravity)
        data = reference_model.createData()
        ours = rd.joint_torque_regressor(robot, q, v, a, gravity=gravity)
        assert ours.shape == (3, robot.nv, 10 * len(robot.bodies))
        for n in range(3):
            Y = pin.computeJointTorqueRegressor(reference_model, data, mapping.q(q[n]), mapping.v(v[n]),
                                                mapping.v(a[n]))
            error = oracle.relative_error(ours[n], Y[mapping.idx_v][:, columns])
            assert error < TOLERANCE, f"gravity {gravity}, state {n}: relative error {error:.3g}"
            np.testing.assert_array_equal(rd.joint_torque_regressor(robot, q[n], v[n], a[n], gravity=gravity),
                                          ours[n])


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints_match_pinocchio(floating_base):
    """The small tree (its mass matrix and torques match: test_coriolis_floating.py): the regressor's columns of a
    joint of several coordinates follow Pinocchio's rule."""
    robot, model = tree_pair(floating_base)
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(32)
    for _ in range(4):
        q = random_configuration(robot, rng)
        v, a = rng.uniform(-2.0, 2.0, size=(2, robot.nv))
        Y = pin.computeJointTorqueRegressor(model, data, mapping.q(q), mapping.v(v), mapping.v(a))
        Y = Y[mapping.idx_v][:, mapping.regressor_columns()]
        error = oracle.relative_error(rd.joint_torque_regressor(robot, q, v, a), Y)
        assert error < TOLERANCE, f"regressor: relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_times_parameters_with_a_floating_base(path):
    """Mimic joints included; the difference is exactly the drive terms (URDF friction, armature)."""
    robot = oracle.with_armature(oracle.load_quietly(path, floating_base=True), seed=36)
    rng = np.random.default_rng(36)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 3, robot.nv))
    Y = rd.joint_torque_regressor(robot, q, v, a, gravity=TILTED_GRAVITY)
    tau = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY).torques
    error = oracle.relative_error(Y @ rd.inertial_parameters(robot), tau - oracle.drive_torques(robot, v, a))
    assert error < TOLERANCE, f"relative error {error:.3g}"


@pytest.mark.parametrize("fragment", ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                                      "anymal_c_simple_description/urdf/anymal.urdf", None],
                         ids=["ur5", "panda", "anymal", "planar-spherical-tree"])
def test_base_parameters_with_a_floating_base(fragment):
    robot = (oracle.load_quietly(oracle.robot_path(fragment), floating_base=True) if fragment
             else rd.load_urdf(tree_urdf(), floating_base=True))
    base = rd.base_parameters(robot)
    pi = rd.inertial_parameters(robot)
    rank = len(base.indices)
    assert 0 < rank < len(pi) and base.combination.shape == (rank, len(pi))
    rng = np.random.default_rng(37)
    q = np.array([random_configuration(robot, rng) for _ in range(10)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 10, robot.nv))
    Y = rd.joint_torque_regressor(robot, q, v, a)
    tau = rd.inverse_dynamics(robot, q, v, a).torques - oracle.drive_torques(robot, v, a)
    error = oracle.relative_error(base.regressor(Y) @ base.values, tau)
    assert error < TOLERANCE, f"relative error {error:.3g}"
    W = Y.reshape(-1, len(pi))
    assert np.linalg.matrix_rank(base.regressor(W)) == rank == np.linalg.matrix_rank(W)
