"""The dynamics written out per robot against the generic kernels, the reference: inverse dynamics (torques, joint
wrenches, base wrench), gravity torques, mass matrix and forward dynamics on every example-robot-data URDF both
libraries load, with a fixed and with a floating base, with rotor inertia, damping and friction, under two
gravities; the written source run as plain Python on all of them, compiled on a few (numba compiles the same
source); a tree of planar and spherical joints; the same status codes for a bad state; ``rd.specialised_data``."""
import os
import subprocess
import sys

import numpy as np
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms.driver import BAD_SHAPE, NOT_FINITE, NOT_UNIT, OK, SINGULAR
from rne_dynamics.algorithms.inputs import gravity_vector
from rne_dynamics.algorithms.specialised import KERNELS, Unsupported, compiled, kernel_source
from multi_dof import tree_urdf

TOLERANCE = 1e-12
FORWARD_TOLERANCE = 1e-10  # M qdd = tau - bias solved by another factorisation than the ABA's
CASES = ([(path, False) for path in oracle.comparable_paths()]  # every example-robot-data URDF both libraries load
         + [(path, True) for path in oracle.floating_comparable_paths()])
COMPILED = ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
            "anymal_b_simple_description/robots/anymal.urdf"]


def with_drives(robot):
    """``robot`` with random rotor inertias, damping and friction on every joint."""
    rng = np.random.default_rng(7)
    n = len(robot.joint_names)
    damping, friction = rng.uniform(0.0, 0.5, n), rng.uniform(0.0, 0.5, n)
    return oracle.with_armature(robot, 3).with_drive(damping=damping, friction=friction)


def generic(robot, call, q, qd, qdd_or_tau, gravity):
    """The generic kernel's results of ``call``, flat in the written kernel's order, and its inputs."""
    if call == "inverse_dynamics":
        result = rd.inverse_dynamics(robot, q, qd, qdd_or_tau, gravity=gravity)
        return np.concatenate([x.ravel() for x in result]), (q, qd, qdd_or_tau)
    if call == "gravity_torques":
        return rd.gravity_torques(robot, q, gravity=gravity), (q,)
    if call == "mass_matrix":
        return rd.mass_matrix(robot, q).ravel(), (q,)
    return rd.forward_dynamics(robot, q, qd, qdd_or_tau, gravity=gravity), (q, qd, qdd_or_tau)


def assert_equal_to_generic(robot, jit, states=2):
    rng = np.random.default_rng(0)
    for call in KERNELS:
        kernel = compiled(robot, call, jit=jit)
        for gravity in (None, [1.7, -2.3, -9.1]):
            for _ in range(states):
                q = rd.random_configuration(robot, rng)
                qd, qdd_or_tau = rng.uniform(-2.0, 2.0, robot.nv), rng.uniform(-2.0, 2.0, robot.nv)
                expected, state = generic(robot, call, q, qd, qdd_or_tau, gravity)
                block = np.full(expected.size + 5, np.nan)
                environment = (gravity_vector(gravity),) * ("environment" in KERNELS[call][1])
                assert kernel(block, *state, *environment) == OK
                tolerance = FORWARD_TOLERANCE if call == "forward_dynamics" else TOLERANCE
                assert oracle.relative_error(block[:expected.size], expected) < tolerance, call


@pytest.mark.parametrize("path, floating_base", CASES,
                         ids=[oracle.short_name(p) + ("-floating" if f else "") for p, f in CASES])
def test_written_source_equals_the_generic_kernels(path, floating_base):
    assert_equal_to_generic(with_drives(oracle.load_quietly(path, floating_base=floating_base)), jit=False)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints(floating_base):
    assert_equal_to_generic(with_drives(rd.load_urdf(tree_urdf(), floating_base=floating_base)), jit=False, states=4)


@pytest.mark.parametrize("path", COMPILED)
def test_compiled_equals_the_generic_kernels(path):
    assert_equal_to_generic(with_drives(oracle.load_quietly(oracle.robot_path(path), floating_base=True)), jit=True)


@pytest.mark.filterwarnings("ignore:invalid value")  # inf * 0.0, the finiteness check, in plain Python
def test_bad_states_give_the_generic_status_codes():
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    kernel = compiled(robot, "forward_dynamics", jit=False)
    block, q, zeros, g = np.empty(robot.nv), rd.neutral(robot), np.zeros(robot.nv), gravity_vector(None)
    assert kernel(block, q, zeros, zeros, g) == OK
    assert kernel(block, q[:-1], zeros, zeros, g) == BAD_SHAPE
    assert kernel(block[:-1], q, zeros, zeros, g) == BAD_SHAPE
    nan = zeros.copy()
    nan[2] = np.nan
    assert kernel(block, q, nan, zeros, g) == NOT_FINITE
    assert kernel(block, q, zeros, zeros, np.array([0.0, np.inf, 0.0])) == NOT_FINITE
    assert kernel(block, 1.1 * q, zeros, zeros, g) == NOT_UNIT  # the base's quaternion, 10% long


def test_a_joint_that_moves_no_mass_is_singular():
    """The pivot check of ``aba.tree_cholesky``: a massless last link without rotor inertia."""
    urdf = ('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/><inertia ixx="1" ixy="0" '
            'ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link><link name="c"/>'
            '<joint name="j1" type="continuous"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/></joint>'
            '<joint name="j2" type="continuous"><parent link="b"/><child link="c"/><axis xyz="1 0 0"/></joint></robot>')
    robot = oracle.load_quietly(urdf)
    kernel = compiled(robot, "forward_dynamics", jit=False)
    assert kernel(np.empty(2), np.zeros(2), np.zeros(2), np.zeros(2), gravity_vector(None)) == SINGULAR + 1


def test_what_it_does_not_write_is_refused_with_the_reason():
    with pytest.raises(Unsupported, match="robot 'four_bar': closed loops"):
        kernel_source(rd.four_bar().load(), "inverse_dynamics")


def test_specialised_data_runs_them_and_keeps_the_generic_answers():
    """rd.specialised_data: the held calls run the written-out kernels; the other calls with it (another gravity,
    external wrenches, drive=False, a bad state) the generic ones, into the same arrays, with the same errors."""
    robot = oracle.with_armature(oracle.load_quietly(oracle.robot_path(COMPILED[1])), 1)
    data = rd.specialised_data(robot)
    for call, algorithm in ((call, entry[0]) for call, entry in KERNELS.items()):
        assert data.held[algorithm][3].__name__ == call  # the written kernel is the held call
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, robot.nv) for _ in range(3))
    expected = rd.inverse_dynamics(robot, q, qd, qdd)
    first = rd.inverse_dynamics(robot, q, qd, qdd, data=data)
    for ours, theirs in zip(first, expected):
        assert oracle.relative_error(ours, theirs) < TOLERANCE
    for ours, theirs in ((rd.gravity_torques(robot, q, data=data), rd.gravity_torques(robot, q)),
                         (rd.mass_matrix(robot, q, data=data), rd.mass_matrix(robot, q)),
                         (rd.forward_dynamics(robot, q, qd, qdd, data=data), rd.forward_dynamics(robot, q, qd, qdd))):
        assert oracle.relative_error(ours, theirs) < FORWARD_TOLERANCE
    link = robot.link_names[-1]
    for keywords in ({"gravity": [0.0, 1.0, -9.0]}, {"external_wrenches": {link: [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]}},
                     {"drive": False}):
        again = rd.inverse_dynamics(robot, q, qd, qdd, data=data, **keywords)
        assert again.torques is first.torques  # the held arrays
        np.testing.assert_array_equal(again.torques, rd.inverse_dynamics(robot, q, qd, qdd, **keywords).torques)
    with pytest.raises(rd.StateError, match="qd"):
        rd.inverse_dynamics(robot, q, np.full(robot.nv, np.nan), qdd, data=data)
    assert rd.inverse_dynamics(robot, q, qd, qdd, data=data).torques is first.torques
    with pytest.raises(rd.StateError, match="tau"):
        rd.forward_dynamics(robot, q, qd, np.full(robot.nv, np.inf), data=data)
    tau = rd.inverse_dynamics(robot, q, qd, qdd).torques
    states = [rng.uniform(-1.5, 1.5, (300, robot.nv)) for _ in range(3)]  # a batch: the written kernel per state
    for ours, theirs in zip(rd.inverse_dynamics(robot, *states, data=data), rd.inverse_dynamics(robot, *states)):
        assert oracle.relative_error(ours, theirs) < TOLERANCE
    states[1][17, 2] = np.nan
    with pytest.raises(rd.StateError, match="qd is not finite at joint .panda_joint3. \\(state 17\\)"):
        rd.inverse_dynamics(robot, *states, data=data)
    for ours, theirs in zip(rd.forward_dynamics_derivatives(robot, q, qd, tau, data=data),
                            rd.forward_dynamics_derivatives(robot, q, qd, tau)):
        assert oracle.relative_error(ours, theirs) < FORWARD_TOLERANCE


def test_a_new_process_loads_the_compiled_kernels_from_disk(tmp_path):
    """The written kernels and their machine code are kept in the cache folder, keyed by the model: the second
    process that asks for a robot's kernels loads them (numba's cache hits) instead of compiling them. The first
    removes what another version of the writer left there."""
    old_version = f"mass_matrix_0badc0de_{24 * '0'}"
    stale = [tmp_path / f"{old_version}.py", tmp_path / "__pycache__" / f"{old_version}.x.nbi"]
    others = [tmp_path / "notes.py", tmp_path / "mass_matrix_of_mine.py"]  # not the writer's: kept
    stale[1].parent.mkdir()
    for path in stale + others:
        path.write_text("")
    code = ("import rne_dynamics as rd; from rne_dynamics.algorithms.specialised import compiled; "
            "robot = rd.load_urdf(rd.bundled_robot_path()); "
            "print(sum(compiled(robot, 'gravity_torques').stats.cache_hits.values()))")
    environment = dict(os.environ, RNE_DYNAMICS_CACHE=str(tmp_path))
    hits = [subprocess.run([sys.executable, "-c", code], env=environment, capture_output=True, text=True,
                           check=True).stdout.split()[-1] for _ in range(2)]
    assert hits == ["0", "1"]
    assert len(list(tmp_path.glob("gravity_torques_*.py"))) == 1
    assert len(list((tmp_path / "__pycache__").glob("gravity_torques_*.nbi"))) == 1
    assert not any(path.exists() for path in stale)
    assert all(path.exists() for path in others)
