"""Without numba the kernels run as plain Python (rne_dynamics/_jit.py): the same code, the same numbers.

A subprocess imports rne_dynamics with numba unavailable and writes its results; they must equal the compiled ones.
"""
import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rne_dynamics as rd
import oracle
from multi_dof import tree_urdf
from oracle import random_states, robot_path
from rne_dynamics import _compile, _jit
from rne_dynamics._trace import traceable
from rne_dynamics.algorithms import driver, written
from rne_dynamics.algorithms.driver import ALGORITHMS, OK
from rne_dynamics.algorithms.loops import coordinates as loop_coordinates
from rne_dynamics.model.buffers import model_view
from rne_dynamics.robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS

ROBOTS = ["ur_description/urdf/ur5_robot.urdf",      # plain serial arm
          "panda_description/urdf/panda.urdf",        # a mimic finger: the mass-matrix forward dynamics
          "talos_data/robots/talos_reduced.urdf"]     # a branched tree

NO_NUMBA = """
import sys
sys.modules["numba"] = None  # 'import numba' now raises ImportError, as on a machine without it
import warnings
import numpy as np
import rne_dynamics as rd
from rne_dynamics import _jit
assert _jit.numba is None
"""
RUN = """
warnings.simplefilter("ignore")
np.savez(sys.argv[3], **results(rd.load_urdf(sys.argv[1]), *np.load(sys.argv[2])))
"""


def results(robot, q, qd, qdd):
    """Every public dynamics call, one state and a batch of two."""
    out = {}
    for tag, args in (("one", (q[0], qd[0], qdd[0])), ("batch", (q, qd, qdd))):
        inverse = rd.inverse_dynamics(robot, *args)
        out[f"tau_{tag}"], out[f"wrench_{tag}"] = inverse.torques, inverse.joint_wrenches
        out[f"gravity_{tag}"] = rd.gravity_torques(robot, args[0])
        out[f"bias_{tag}"] = rd.bias_torques(robot, *args[:2])
        out[f"M_{tag}"] = rd.mass_matrix(robot, args[0])
        out[f"qdd_{tag}"] = rd.forward_dynamics(robot, *args)
        out[f"C_{tag}"] = rd.coriolis_matrix(robot, *args[:2])
        for name, value in zip(("dq", "dqd", "dqdd"), rd.inverse_dynamics_derivatives(robot, *args)):
            out[f"{name}_{tag}"] = value
    return out


@pytest.mark.parametrize("fragment", ROBOTS, ids=lambda f: os.path.basename(f))
def test_plain_python_matches_compiled(fragment, tmp_path):
    path = robot_path(fragment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load_urdf(path)
    states = np.stack(random_states(robot, 2, seed=3))
    np.save(tmp_path / "states.npy", states)
    source = NO_NUMBA + inspect.getsource(results) + RUN
    subprocess.run([sys.executable, "-c", source, path, str(tmp_path / "states.npy"), str(tmp_path / "out.npz")],
                   check=True, timeout=600)
    plain = np.load(tmp_path / "out.npz")
    compiled = results(robot, *states)
    assert set(plain.files) == set(compiled)
    for name, value in compiled.items():
        np.testing.assert_allclose(plain[name], value, rtol=1e-12, atol=1e-10, err_msg=name)


def every_call(robot, loops):
    """A call of every algorithm's generic entry: on ``robot`` (a tree with drives), and ``loops`` (with loops)."""
    rng = np.random.default_rng(5)
    q, (qd, qdd, qddd, qdddd) = rd.random_configuration(robot, rng), rng.uniform(-1, 1, (4, robot.nv))
    link, wrench = robot.link_names[-1], {robot.link_names[-1]: rng.uniform(-1, 1, 6)}
    tau = rd.inverse_dynamics(robot, q, qd, qdd).torques
    rd.inverse_dynamics(robot, q, qd, qdd, external_wrenches=wrench)
    rd.inverse_dynamics(robot, q, qd, qdd, data=robot.data())
    rd.bias_torques(robot, q, qd)
    rd.gravity_torques(robot, q)
    rd.mass_matrix(robot, q)
    rd.forward_dynamics(robot, q, qd, tau, external_wrenches=wrench)
    rd.forward_dynamics(robot, q, qd, tau, joint_wrenches=True)
    rd.coriolis_matrix(robot, q, qd)
    rd.inverse_dynamics_derivatives(robot, q, qd, qdd)
    rd.joint_wrench_derivatives(robot, q, qd, qdd)
    rd.forward_dynamics_derivatives(robot, q, qd, tau)
    rd.hybrid_dynamics(robot, q, qd, qdd, tau, known_acceleration=np.arange(robot.nv) % 3 == 0)
    rd.torque_rate(robot, q, qd, qdd, qddd)
    rd.torque_acceleration(robot, q, qd, qdd, qddd, qdddd)
    rd.joint_torque_regressor(robot, q, qd, qdd)
    rd.forward_kinematics(robot, q)
    rd.frame_placement(robot, q, link)
    rd.frame_jacobian(robot, q, link, "local")
    rd.frame_velocity(robot, q, qd, link, "world")
    rd.frame_acceleration(robot, q, qd, qdd, link)
    rd.center_of_mass(robot, q)
    rd.center_of_mass(robot, q, qd)
    rd.center_of_mass(robot, q, qd, qdd)
    rd.centroidal_momentum(robot, q, qd)
    rd.centroidal_momentum_matrix(robot, q)
    rd.step(robot, q, qd, tau, 1e-3)
    rd.step(robot, q, qd, tau, 1e-3, method="semi_implicit")
    rd.loop_constraints(loops, rd.neutral(loops), np.zeros(loops.nv))
    actuated = loop_coordinates(loops).actuated_q
    rd.closed_loop_inverse_dynamics(loops, rd.neutral(loops)[actuated] + 0.01, *np.ones((2, actuated.size)))


def copied(arguments):
    """The arguments, each writable array copied; a read-only one (the model's) is the same, as its type is what numba
    compiled the entry for (a writable copy would compile it again, for no caller)."""
    return [a.copy() if isinstance(a, np.ndarray) and a.flags.writeable else a for a in arguments]


@pytest.mark.skipif(_jit.numba is None, reason="numba's machine code against its Python: without numba there is one")
def test_every_generic_entrys_machine_code_equals_its_python(monkeypatch):
    """numba compiles each algorithm's entry (``driver.ENTRY``) with its step: its machine code computes what its
    Python computes, every result entry written, on a tree of every joint type with drives and on a robot with loops
    (numba's inlining of the steps into the entry once left results unwritten: hybrid dynamics, the simulator's
    step, ``M^-1``). Its machine code comes from numba's cache (``compile --generic``, or numba compiles it here)."""
    calls = {}

    def recording(algorithm, entry):
        def record(*arguments):
            calls.setdefault(algorithm, []).append(copied(arguments))
            return traceable(entry)(*arguments)
        return record

    monkeypatch.setattr(written, "MODE", "0")  # no written code: every call on the generic entry
    for algorithm in ALGORITHMS:
        if algorithm.single is not None:
            monkeypatch.setattr(algorithm, "single", recording(algorithm, algorithm.single))
            monkeypatch.setattr(algorithm, "ready", True)
    robot = oracle.with_armature(rd.load_urdf(tree_urdf(), floating_base=True), 3)
    robot = robot.with_drive(damping=np.full(len(robot.joint_names), 0.3),
                             friction=np.full(len(robot.joint_names), 0.2))
    every_call(robot, rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS))
    monkeypatch.undo()
    assert sorted(a.name for a in calls) == sorted(a.name for a in ALGORITHMS if a.single is not None)
    for algorithm, arguments in ((a, x) for a, called in calls.items() for x in called):
        _, results, _ = algorithm.layout(None, traceable(model_view)(*arguments[:2]))
        python, compiled = copied(arguments), copied(arguments)
        python[2][:] = compiled[2][:] = np.nan  # the block: an entry left unwritten stays NaN
        with monkeypatch.context() as patch:  # (compiled alone: a kernel compile --generic compiles now is loaded)
            patch.setattr(_compile, "ON_CALLER", True)
            assert _compile.machine_code(algorithm.single, compiled, (driver.__name__, "entry", algorithm.name))
        assert traceable(algorithm.single)(*python) == algorithm.single(*compiled) == OK, algorithm.name
        np.testing.assert_allclose(compiled[2][:results], python[2][:results], rtol=1e-12, atol=1e-12,
                                   err_msg=algorithm.name)
