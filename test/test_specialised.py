"""The inverse dynamics written out per robot against the generic kernel, the reference, on every example-robot-data
URDF it can write (fixed base, revolute, prismatic and mimic joints): torques, joint wrenches and base wrench to
1e-12 relative, with rotor inertia, damping and friction, under two gravities; the same status codes for a bad
state; a clear refusal for what it does not write."""
import numpy as np
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms.driver import BAD_SHAPE, NOT_FINITE, OK
from rne_dynamics.algorithms.inputs import gravity_vector
from rne_dynamics.algorithms.specialised import Unsupported, compiled_inverse_dynamics, inverse_dynamics_source

TOLERANCE = 1e-12
PATHS = oracle.comparable_paths()  # every example-robot-data URDF both libraries load


def written(path):
    """The robot of ``path`` with random drive terms and its compiled written-out inverse dynamics, or a skip."""
    robot = oracle.load_quietly(path)
    try:
        inverse_dynamics_source(robot)
    except Unsupported as exc:
        pytest.skip(str(exc))
    rng = np.random.default_rng(7)
    robot = oracle.with_armature(robot, 3).with_drive(damping=rng.uniform(0.0, 0.5, len(robot.joint_names)),
                                                      friction=rng.uniform(0.0, 0.5, len(robot.joint_names)))
    return robot, compiled_inverse_dynamics(robot)


@pytest.mark.parametrize("path", PATHS, ids=[oracle.short_name(p) for p in PATHS])
def test_equals_the_generic_kernel(path):
    robot, kernel = written(path)
    nj = len(robot.joint_names)
    block = np.empty(robot.nv + 6 * nj + 6)
    rng = np.random.default_rng(0)
    for gravity in (None, [1.7, -2.3, -9.1]):
        for _ in range(3):
            q, qd, qdd = (rng.uniform(-2.0, 2.0, robot.nv) for _ in range(3))
            assert kernel(block, q, qd, qdd, gravity_vector(gravity)) == OK
            expected = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity)
            for ours, theirs in ((block[:robot.nv], expected.torques),
                                 (block[robot.nv:robot.nv + 6 * nj].reshape(nj, 6), expected.joint_wrenches),
                                 (block[robot.nv + 6 * nj:], expected.base_wrench)):
                assert oracle.relative_error(ours, theirs) < TOLERANCE


def test_bad_states_give_the_generic_status_codes():
    robot, kernel = written(rd.bundled_robot_path())
    block, zeros, g = np.empty(robot.nv + 6 * robot.nv + 6), np.zeros(robot.nv), gravity_vector(None)
    assert kernel(block, zeros, zeros, zeros, g) == OK
    assert kernel(block, zeros[:-1], zeros, zeros, g) == BAD_SHAPE
    assert kernel(block[:-1], zeros, zeros, zeros, g) == BAD_SHAPE
    nan = zeros.copy()
    nan[2] = np.nan
    assert kernel(block, zeros, nan, zeros, g) == NOT_FINITE
    assert kernel(block, zeros, zeros, zeros, np.array([0.0, np.inf, 0.0])) == NOT_FINITE


def test_what_it_does_not_write_is_refused_with_the_reason():
    with pytest.raises(Unsupported, match="robot 'rne_arm6': fixed base"):
        inverse_dynamics_source(oracle.load_quietly(rd.bundled_robot_path(), floating_base=True))


def test_specialised_data_runs_it_and_keeps_the_generic_answers():
    """rd.specialised_data: the held call runs the written-out kernel; the other calls with it (another gravity,
    external wrenches, drive=False, a bad state) the generic ones, into the same arrays, with the same errors."""
    robot = oracle.with_armature(oracle.load_quietly(oracle.robot_path("panda_description/urdf/panda.urdf")), 1)
    data = rd.specialised_data(robot)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, robot.nv) for _ in range(3))
    expected = rd.inverse_dynamics(robot, q, qd, qdd)
    first = rd.inverse_dynamics(robot, q, qd, qdd, data=data)
    for ours, theirs in zip(first, expected):
        assert oracle.relative_error(ours, theirs) < TOLERANCE
    link = robot.link_names[-1]
    for keywords in ({"gravity": [0.0, 1.0, -9.0]}, {"external_wrenches": {link: [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]}},
                     {"drive": False}):
        again = rd.inverse_dynamics(robot, q, qd, qdd, data=data, **keywords)
        assert again.torques is first.torques  # the held arrays
        np.testing.assert_array_equal(again.torques, rd.inverse_dynamics(robot, q, qd, qdd, **keywords).torques)
    with pytest.raises(rd.StateError, match="qd"):
        rd.inverse_dynamics(robot, q, np.full(robot.nv, np.nan), qdd, data=data)
    assert rd.inverse_dynamics(robot, q, qd, qdd, data=data).torques is first.torques
