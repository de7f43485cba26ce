"""The one-call closed-loop inverse dynamics (``loop_kinematics.CLOSED_LOOP`` as the robot's written machine code)
against the Python solver it stands in for: the same numbers to 1e-12 on every mechanism it serves, warm- and
cold-started; a state it hands back (more Newton steps than it takes) still gets the Python solver's answer; a cold
process answers exactly before its machine code exists."""
import gc
import json
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics._jit import GUARD
from rne_dynamics.algorithms import driver, loops, written
from rne_dynamics.algorithms.loop_kinematics import CLOSED_LOOP
from rne_dynamics.robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS

pytestmark = pytest.mark.skipif(written.MODE == "0", reason="the written code is not built in this mode")

MECHANISMS = {"four_bar": lambda: rd.four_bar().load(), "four_bar_point": lambda: rd.four_bar(cut="point").load(),
              "five_bar": lambda: rd.five_bar().load(), "delta": lambda: rd.delta_robot().load(),
              "gough_stewart": lambda: rd.gough_stewart().load(),
              "gough_stewart_gimbal": lambda: rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)}
#: Square passive Jacobian and coordinates that add: the mechanisms the one call serves (the planar linkages close
#: with redundant constraints, the spherical joints of ``gough_stewart()`` are quaternions).
SERVED = {"delta", "gough_stewart_gimbal"}
GRAVITY = np.array([0.3, -0.2, -9.7])


def motion(robot, states=40, amplitude=0.03):
    """``(qa, qda, qdda)`` ``(states, N)``: each actuated coordinate ``amplitude sin(k t)`` about the neutral one."""
    t = np.linspace(0.0, 1.0, states)[:, None]
    k = np.arange(1, len(robot.actuated_joint_names) + 1)
    qa0 = rd.neutral(robot)[loops.coordinates(robot).actuated_q]
    return qa0 + amplitude * np.sin(k * t), amplitude * k * np.cos(k * t), -amplitude * k ** 2 * np.sin(k * t)


def python_solver(robot, qa, qda, qdda, q_guess=None, gravity=None):
    """``closed_loop_inverse_dynamics`` by the Python solver (the one call switched off)."""
    one_call, loops._one_call = loops._one_call, lambda *arguments: None
    try:
        return rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda, q_guess=q_guess, gravity=gravity)
    finally:
        loops._one_call = one_call


def assert_same(result, reference, tolerance=1e-12):
    for field in reference._fields:
        a, b = getattr(result, field), getattr(reference, field)
        if isinstance(b, dict):
            assert a.keys() == b.keys()
            a, b = np.array(list(a.values())), np.array(list(b.values()))
        assert np.shape(a) == np.shape(b), field
        assert np.abs(a - b).max() <= tolerance * max(1.0, np.abs(b).max()), field


@pytest.mark.parametrize("name", MECHANISMS)
def test_one_call_equals_the_python_solver(name):
    robot = MECHANISMS[name]()
    assert rd.prepare_closed_loop(robot) == (name in SERVED)
    qa, qda, qdda = motion(robot)
    guess, served = None, 0
    for k in range(len(qa)):
        for gravity in (None, GRAVITY):
            reference = python_solver(robot, qa[k], qda[k], qdda[k], guess, gravity)
            one = loops._one_call(robot, qa[k], qda[k], qdda[k], guess, gravity)
            if isinstance(one, loops.ClosedLoopInverseDynamicsResult):  # (else None or the status it hands back)
                served += 1
                assert_same(one, reference)
            assert_same(rd.closed_loop_inverse_dynamics(robot, qa[k], qda[k], qdda[k], q_guess=guess, gravity=gravity),
                        reference)
        guess = reference.q  # warm start: the previous state's closed q (the first state: from neutral, cold)
    # every warm-started state of the served mechanisms takes the one call; the others never
    assert served == (2 * len(qa) if name in SERVED else 0)


def handed_back():
    """The closed-loop states the one call handed back to the Python solver so far, as rd.engine_report() counts
    them: the reason, and the states of the engine that computed them."""
    report = rd.engine_report().get(CLOSED_LOOP.name, {})
    return report.get("fallbacks", {}).get(driver.PAST_GUARD, 0), report.get("states", {}).get(driver.GENERIC_PYTHON, 0)


@pytest.mark.parametrize("name", sorted(SERVED))
def test_a_state_the_one_call_hands_back_gets_the_python_solvers_answer(name):
    """A state past a guard of the one call's written code (more Newton steps than it takes) is counted as such in
    rd.engine_report() and gets the Python solver's answer; a bad argument still gets the Python solver's error."""
    robot = MECHANISMS[name]()
    assert rd.prepare_closed_loop(robot)
    actuated_q = loops.coordinates(robot).actuated_q
    n = actuated_q.size
    qa = rd.neutral(robot)[actuated_q] + 0.08 * (-1.0) ** np.arange(n)  # far from the guess: more Newton steps
    start = rd.neutral(robot)
    assert loops._one_call(robot, qa, np.ones(n), np.ones(n), start, None) == GUARD
    before = handed_back()
    result = rd.closed_loop_inverse_dynamics(robot, qa, np.ones(n), np.ones(n), q_guess=start)
    assert handed_back() == (before[0] + 1, before[1] + 1)
    assert_same(result, python_solver(robot, qa, np.ones(n), np.ones(n), start), 0.0)
    assert np.abs(rd.loop_constraints(robot, result.q).residual).max() < 1e-12
    # a bad argument still gets the Python solver's error
    with pytest.raises(rd.StateError, match="qda must be"):
        rd.closed_loop_inverse_dynamics(robot, qa, np.full(n, np.nan), np.ones(n), q_guess=result.q)


def test_a_pose_that_cannot_close_gets_the_python_solvers_error():
    robot = MECHANISMS["gough_stewart_gimbal"]()
    assert rd.prepare_closed_loop(robot)
    qa = 0.12 * (-1.0) ** np.arange(6)  # legs too long and too short for a platform
    with pytest.raises(rd.ModelError, match="cannot close"):
        rd.closed_loop_inverse_dynamics(robot, qa, np.zeros(6), np.zeros(6), q_guess=rd.neutral(robot))


COLD = """
import json, sys, numpy as np
import rne_dynamics as rd
from rne_dynamics.algorithms import loops
from rne_dynamics._jit import GUARD
from rne_dynamics.algorithms.loop_kinematics import CLOSED_LOOP
robot = rd.delta_robot().load()
qa, qda, qdda, guess = (np.array(x) for x in json.loads(sys.stdin.read()))
first = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda, q_guess=guess)
ready_at_first = bool(rd.engine_report().get(CLOSED_LOOP.name, {}).get("states", {}).get("written machine code"))
prepared = rd.prepare_closed_loop(robot)
served = isinstance(loops._one_call(robot, qa, qda, qdda, guess, None), loops.ClosedLoopInverseDynamicsResult)
print(json.dumps(dict(ready_at_first=ready_at_first, prepared=prepared, served=served,
                      first=[first.torques.tolist(), first.q.tolist(), first.joint_wrenches.tolist()])))
"""


def test_a_cold_process_answers_exactly_before_its_machine_code_exists(tmp_path):
    robot = MECHANISMS["delta"]()
    qa, qda, qdda = (x[5] for x in motion(robot))
    guess = python_solver(robot, *(x[4] for x in motion(robot))).q
    reference = python_solver(robot, qa, qda, qdda, guess)
    environment = dict(os.environ, RNE_DYNAMICS_CACHE=str(tmp_path), RNE_DYNAMICS_JIT="0",
                       PYTHONPATH=os.pathsep.join(sys.path))
    run = subprocess.run([sys.executable, "-c", COLD], input=json.dumps([x.tolist() for x in (qa, qda, qdda, guess)]),
                         capture_output=True, text=True, env=environment, timeout=600, check=True)
    out = json.loads(run.stdout)
    assert not out["ready_at_first"]  # the first state not on machine code: the Python solver answered
    assert out["prepared"] and out["served"]  # then built, in the empty cache, and serving
    for value, expected in zip(out["first"], (reference.torques, reference.q, reference.joint_wrenches)):
        np.testing.assert_allclose(value, expected, rtol=0, atol=1e-12 * max(1.0, np.abs(expected).max()))


def test_a_robot_dropped_after_its_one_call_is_freed():
    """What the loops derive once per robot (its cuts, coordinates, one call) is kept by the robot
    (``robot.engines.derived``), not by a module's weak-key cache, whose values (the one call's written code) held
    their robot and kept every dropped robot alive."""
    robot = rd.delta_robot().load()
    assert rd.prepare_closed_loop(robot)
    qa, qda, qdda = motion(robot, states=1)
    assert np.isfinite(rd.closed_loop_inverse_dynamics(robot, qa[0], qda[0], qdda[0]).torques).all()
    dropped = weakref.ref(robot)
    del robot
    gc.collect()
    assert dropped() is None
