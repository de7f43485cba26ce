"""``rd.engine_report()``: per algorithm, the states each engine computed and why the generic kernel ran, counted
exactly (a robot's first WARM allocating states, a state while its written code is built, the written code's
machine code, a batch's states, a robot without written code); an engine that fails is an error under ``RNE_DYNAMICS_STRICT=1`` (the tests) and a
logged, counted fallback that still gives the generic kernel's numbers otherwise."""
import dataclasses
import logging

import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics import _compile, _jit
from rne_dynamics.algorithms import driver, rnea, written

ALLOCATING = rnea.INVERSE_DYNAMICS  # inverse dynamics of allocating calls and batches
ID = rnea.INVERSE_DYNAMICS_SHOWN  # of one state with data= (it leaves RNEA's intermediates in the Data)
TOLERANCE = 1e-12


def counts(algorithm=ID):
    """The inverse dynamics' report now (empty if it has not run)."""
    report = rd.engine_report().get(algorithm.name, {})
    return {key: dict(report.get(key, {})) for key in ("states", "fallbacks", "not written")}


def change(before, after):
    """What each count of ``after`` added to ``before``, the counts that did not change left out."""
    return {key: {k: n - before[key].get(k, 0) for k, n in after[key].items() if n != before[key].get(k, 0)}
            for key in after}


@pytest.fixture
def arm(monkeypatch, tmp_path):
    """A new bundled arm, a cache folder of the test's own, and one random state."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = rd.load_urdf(rd.bundled_robot_path())
    rng = np.random.default_rng(4)
    return robot, [rng.uniform(-1.0, 1.0, robot.nv) for _ in range(3)]


def test_the_report_counts_each_engines_states_and_why_the_generic_kernel_ran(arm, monkeypatch):
    robot, state = arm
    before, before_data = counts(ALLOCATING), counts()
    for _ in range(driver.WARM + 1):  # allocating: the first WARM states on the generic kernel, then it is traced
        rd.inverse_dynamics(robot, *state)  # and its build starts (the generic kernel serves the state)
    assert written.written(ALLOCATING, robot, wait=True).native
    for _ in range(2):
        rd.inverse_dynamics(robot, *state)
    assert written.written(ID, robot, wait=True).native
    data = robot.data()
    for _ in range(5):
        rd.inverse_dynamics(robot, *state, data=data)
    rd.inverse_dynamics(robot, list(state[0]), *state[1:], data=data)  # a list: converted, then the written code
    batch = rd.inverse_dynamics(robot, *(np.tile(x, (40, 1)) for x in state))
    added = change(before, counts(ALLOCATING))
    generic = {engine: added["states"].pop(engine, 0) for engine in (driver.GENERIC_MACHINE_CODE,
                                                                      driver.GENERIC_PYTHON)}
    assert sum(generic.values()) == driver.WARM + 1  # (numba's machine code once its background compile is in)
    assert added == {"states": {driver.MACHINE_CODE: 2 + 40},
                     "fallbacks": {driver.WARMING: driver.WARM, driver.BUILDING: 1}, "not written": {}}
    assert change(before_data, counts()) == {"states": {driver.MACHINE_CODE: 5 + 1}, "fallbacks": {},
                                             "not written": {}}
    np.testing.assert_allclose(batch.torques[17], rd.inverse_dynamics(robot, *state).torques, rtol=0, atol=TOLERANCE)


def test_machine_code_states_are_counted_by_the_built_module(arm):
    robot, state = arm
    data = robot.data()
    rd.inverse_dynamics(robot, *state, data=data)
    assert written.written(ID, robot, wait=True).native  # built (about a second) and swapped into data
    assert written.written(ALLOCATING, robot, wait=True).native  # a batch's
    before, before_batch = counts(), counts(ALLOCATING)
    for _ in range(7):
        rd.inverse_dynamics(robot, *state, data=data)
    rd.inverse_dynamics(robot, *(np.tile(x, (9, 1)) for x in state), data=data)
    assert change(before, counts()) == {"states": {driver.MACHINE_CODE: 7}, "fallbacks": {}, "not written": {}}
    assert change(before_batch, counts(ALLOCATING)) == {"states": {driver.MACHINE_CODE: 9}, "fallbacks": {},
                                                        "not written": {}}


def test_a_state_past_a_guard_with_data_runs_the_written_code_once_then_the_generic_kernel(arm, monkeypatch):
    """With ``data=``, a state the held written code hands back (a guard's other side) goes to the generic kernel
    without the same C being run on it again, and is counted as past a guard."""
    robot, state = arm
    code = written.written(ID, robot, wait=True)
    assert code.native
    data = robot.data()
    reference = rd.inverse_dynamics(robot, *state, data=data).torques.copy()  # the C, now data's held call
    assert data.held[ID].call is code.single
    calls = []

    def past_a_guard(block, *_):
        calls.append(block)
        return _jit.GUARD
    monkeypatch.setattr(code, "single", past_a_guard)
    data.held[ID] = dataclasses.replace(data.held[ID], call=past_a_guard)
    before = counts()
    torques = rd.inverse_dynamics(robot, *state, data=data).torques
    assert len(calls) == 1
    added = change(before, counts())
    assert sum(added["states"].pop(engine, 0) for engine in (driver.GENERIC_MACHINE_CODE, driver.GENERIC_PYTHON)) == 1
    assert added == {"states": {}, "fallbacks": {driver.PAST_GUARD: 1}, "not written": {}}
    np.testing.assert_allclose(torques, reference, rtol=0, atol=TOLERANCE)


def test_a_robot_without_written_code_says_why(arm, monkeypatch):
    robot, state = arm
    monkeypatch.setattr(written, "MODE", "0")
    before = counts()
    data = robot.data()
    expected = None
    for _ in range(driver.WARM + 4):  # the first WARM states warm up (with data= too), then no written code is made
        expected = rd.inverse_dynamics(robot, *state, data=data).torques.copy()
    added = change(before, counts())
    assert added["not written"] == {"RNE_DYNAMICS_WRITTEN=0": 1}
    assert added["fallbacks"] == {driver.WARMING: driver.WARM, driver.NOT_WRITTEN: 4}
    assert sum(added["states"].values()) == driver.WARM + 4
    assert set(added["states"]) <= {driver.GENERIC_MACHINE_CODE, driver.GENERIC_PYTHON}
    monkeypatch.setattr(written, "MODE", "")
    other = rd.load_urdf(rd.bundled_robot_path())
    assert written.written(ID, other, wait=True).native
    np.testing.assert_allclose(rd.inverse_dynamics(other, *state, data=other.data()).torques, expected, rtol=0,
                               atol=TOLERANCE)


def test_a_failing_engine_raises_under_strict_and_otherwise_is_logged_counted_and_served(arm, monkeypatch, caplog):
    robot, state = arm
    reference = rd.inverse_dynamics(robot, *state).torques  # (an allocating call: the generic kernel, no trace)

    def broken(*_):
        raise IndexError("a step's bug")
    monkeypatch.setattr(written, "program_of", broken)
    monkeypatch.setattr(ID, "failures", [])  # (the session's check of engine failures is for real ones)
    monkeypatch.setattr(written, "STRICT", True)
    data = robot.data()
    for _ in range(driver.WARM):  # warm-up: nothing traced yet
        rd.inverse_dynamics(robot, *state, data=data)
    with pytest.raises(written.EngineFailure, match="tracing it on robot 'rne_arm6' raised IndexError"):
        rd.inverse_dynamics(robot, *state, data=data)
    monkeypatch.setattr(written, "STRICT", False)
    other = rd.load_urdf(rd.bundled_robot_path())
    data = other.data()
    before = counts()
    with caplog.at_level(logging.WARNING, logger=written.__name__):
        for _ in range(driver.WARM + 1):
            torques = rd.inverse_dynamics(other, *state, data=data).torques
    message = "tracing it on robot 'rne_arm6' raised IndexError(\"a step's bug\")"
    assert message in caplog.text and ID.failures == [message] * 2
    added = change(before, counts())
    assert added["not written"] == {"tracing failed": 1}
    assert added["fallbacks"] == {driver.WARMING: driver.WARM, driver.NOT_WRITTEN: 1}
    np.testing.assert_allclose(torques, reference, rtol=0, atol=TOLERANCE)


@pytest.mark.skipif(_jit.numba is None, reason="without numba every kernel is its Python: no switch to count")
def test_a_kernel_called_from_python_counts_the_calls_its_python_ran(monkeypatch):
    """The kernels called from Python around the algorithms (the argument checks, ``integrate``) switch to their Python
    while numba compiles them: each such call is counted in the report, by ``"module:name"``."""
    from rne_dynamics.algorithms.inputs import all_finite_from_python
    kernel = "rne_dynamics.algorithms.inputs:" + all_finite_from_python.__name__
    checks = _compile.called_from_python(all_finite_from_python.kernel)  # (a new dispatcher: no machine code yet)
    monkeypatch.setattr(_compile, "machine_code", lambda *_: False)  # numba is compiling it
    before = rd.engine_report().get(kernel, {"states": {}})["states"].get(driver.GENERIC_PYTHON, 0)
    assert checks(np.array([1.0, 2.0])) and not checks(np.array([1.0, np.inf]))
    report = rd.engine_report()[kernel]
    assert report["states"][driver.GENERIC_PYTHON] == before + 2 and report["fallbacks"][driver.COMPILING] >= 2
