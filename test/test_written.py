"""Each robot's written code (``algorithms/written.py``: the generic step traced with the model's numbers as
constants) against the generic kernels, the reference: the main calls on every example-robot-data URDF both
libraries load, fixed and floating, with rotor inertia, damping and friction, under two gravities, the traced
program run node by node; every algorithm that can be written out on a few robots as machine code, equal to its
program to the last bit; the status codes of bad states; guards; ``rd.specialised_data``; a new process gets exact
results (the generic kernel's) before its machine code is built, and the next process loads it from the disk
cache."""
import math
import operator
import os
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics import _compile, _compile_child, _native, _trace
from rne_dynamics.algorithms import aba, crba, driver, gravity, regressor, rnea, written
from rne_dynamics.algorithms.driver import ALGORITHMS, BAD_SHAPE, NOT_FINITE, NOT_UNIT, OK, OVERFLOW
from rne_dynamics.algorithms.inputs import gravity_vector
from multi_dof import tree_urdf

TOLERANCE = 1e-12
MAIN = [rnea.INVERSE_DYNAMICS, rnea.BIAS, gravity.GRAVITY, crba.MASS_MATRIX, aba.ACCELERATIONS]
CASES = ([(path, False) for path in oracle.comparable_paths()]  # every example-robot-data URDF both libraries load
         + [(path, True) for path in oracle.floating_comparable_paths()])
#: The robots whose every algorithm is built as machine code here, on a floating base: a double pendulum (41,000
#: operations in all), and with ``--long`` the UR5 (91,000: a build of all about a minute on a 2-core machine).
EVERY_ALGORITHM = ["double_pendulum_description/urdf/double_pendulum_continuous.urdf",
                   "ur_description/urdf/ur5_robot.urdf"]
NATIVE = [EVERY_ALGORITHM[0], pytest.param(EVERY_ALGORITHM[1], marks=pytest.mark.long),
          "panda_description/urdf/panda.urdf", "anymal_b_simple_description/robots/anymal.urdf"]


def with_drives(robot):
    """``robot`` with random rotor inertias, damping and friction on every joint."""
    rng = np.random.default_rng(7)
    n = len(robot.joint_names)
    return oracle.with_armature(robot, 3).with_drive(damping=rng.uniform(0.0, 0.5, n),
                                                     friction=rng.uniform(0.0, 0.5, n))


def inputs(algorithm, robot, rng, gravity=None):
    """A random state of ``algorithm``'s arguments, and the gravity it takes (if any)."""
    state = [rd.random_configuration(robot, rng)] + [rng.uniform(-2.0, 2.0, robot.nv) for _ in algorithm.arguments[1:]]
    return state + [gravity_vector(gravity)] * algorithm.gravity


def generic(algorithm, robot, arguments):
    """The generic kernel's results (one state's block up to its results)."""
    _, results, size, _ = algorithm.slots(robot)
    block = np.full(size, np.nan)
    assert algorithm.generic(robot.fdata, robot.idata, block, *arguments) == OK  # its Python until numba has it
    return block[:results]


#: The traced program's operations as Python functions (the C's spellings: _native.C_OPERATIONS).
UNARY = {"neg": operator.neg, "abs": abs, "sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "tanh": math.tanh,
         "exp": math.exp, "log": math.log, "atan": math.atan, "asin": math.asin, "acos": math.acos,
         "sign": lambda x: float((x > 0) - (x < 0))}
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv, "max": max,
          "min": min, **{op: (lambda f: lambda a, b: float(f(a, b)))(getattr(operator, op))
                         for op in ("lt", "le", "gt", "ge", "eq", "ne")}}


def run_program(program, outputs, arguments):
    """The outputs of a traced ``program`` at ``arguments``, node by node in Python (what its C computes, in the
    same order); its guards must hold."""
    values = []
    for op, operands in program.ops:
        if op == "input":
            values.append(float(arguments[operands[0]][operands[1]]))
        else:
            numbers = [values[a] if type(a) is int else a for a in operands]
            values.append((UNARY if len(numbers) == 1 else BINARY)[op](*numbers))
    assert all((values[k] != 0.0) == side for k, side in program.guards)
    return np.array([values[k] if type(k) is int else k for k in outputs])


def test_a_batch_of_one_state_keeps_its_batch_dimension(monkeypatch, tmp_path):
    """``q`` ``(1, nq)`` is a batch of one: its results are ``(1, …)`` whichever engine runs. The written C took any
    array of one state's size for one state and answered ``(nv,)`` once built (the generic kernel, ``(1, nv)``,
    before): the inverse node's ``~/trajectory`` of one point then failed in its callback (IndexError) and the node
    died; identify_robot, which computes in blocks of 10,000 samples, failed on a recording of 10,001)."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = rd.load_urdf(rd.bundled_robot_path())
    zero, one = np.zeros(robot.dof), np.zeros((1, robot.dof))
    calls = {rnea.INVERSE_DYNAMICS: lambda x, **data: rd.inverse_dynamics(robot, x, x, x, **data).torques,
             aba.ACCELERATIONS: lambda x, **data: rd.forward_dynamics(robot, x, x, x, **data),
             crba.MASS_MATRIX: lambda x, **data: rd.mass_matrix(robot, x, **data),
             regressor.REGRESSOR: lambda x, **data: rd.joint_torque_regressor(robot, x, x, x, **data)}
    start_builds(robot, calls)
    for algorithm, call in calls.items():
        code = written.written(algorithm, robot, wait=True)
        assert code.native
        block, arguments = np.empty(64), (one,) * len(algorithm.arguments) + algorithm.defaults
        assert code.single(block, *arguments) == BAD_SHAPE
        expected = call(zero)  # one state: the written code's
        assert rd.engine_report()[algorithm.name]["states"].get("written machine code", 0) > 0
        for data in ({}, {"data": robot.data()}):
            result = call(one, **data)
            assert result.shape == (1,) + expected.shape, (algorithm.name, data, result.shape)
            np.testing.assert_array_equal(result[0], expected)


def start_builds(robot, algorithms):
    """Trace ``robot``'s written code of each of ``algorithms``: each build starts when its program is traced, so
    they run side by side."""
    for algorithm in algorithms:
        written.written(algorithm, robot)


def assert_equal_to_generic(robot, algorithms, native, states=2):
    """``robot``'s written code of each of ``algorithms`` (its built C if ``native``, else its traced program run in
    Python) equals the generic kernel on random states under two gravities."""
    rng = np.random.default_rng(0)
    if native:
        start_builds(robot, algorithms)
    for algorithm in algorithms:
        if native:
            code = written.written(algorithm, robot, wait=True)
            assert code is not None and code.native, algorithm.name
        else:
            program, outputs, _ = written.program_of(algorithm, robot, robot.fdata)
        for g in (None, [1.7, -2.3, -9.1]):
            for _ in range(states):
                arguments = inputs(algorithm, robot, rng, g)
                expected = generic(algorithm, robot, arguments)
                if native:
                    block = np.full(expected.size + 3, np.nan)
                    assert code.single(block, *arguments) == OK, algorithm.name
                else:
                    block = run_program(program, outputs, arguments)
                assert oracle.relative_error(block[:expected.size], expected) < TOLERANCE, algorithm.name


@pytest.fixture
def not_built(monkeypatch, tmp_path):
    """Written code traced but never built (the generic kernel serves), and a cache folder of the test's own."""
    monkeypatch.setattr(written.Written, "start", lambda self: None)
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))


@pytest.mark.parametrize("path, floating_base", CASES,
                         ids=[oracle.short_name(p) + ("-floating" if f else "") for p, f in CASES])
def test_written_code_equals_the_generic_kernels(path, floating_base):
    assert_equal_to_generic(with_drives(oracle.load_quietly(path, floating_base=floating_base)), MAIN, native=False)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints(floating_base):
    robot = with_drives(rd.load_urdf(tree_urdf(), floating_base=floating_base))
    assert_equal_to_generic(robot, [a for a in ALGORITHMS if not a.extras], native=False, states=3)


@pytest.mark.parametrize("path", NATIVE)
def test_machine_code_equals_the_generic_kernels_and_its_program(path, monkeypatch, tmp_path):
    """The main calls (every algorithm that can be written out, on the first robot), built as C: equal to the
    generic kernel, and to its traced program run node by node in Python to the last bit."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = with_drives(oracle.load_quietly(oracle.robot_path(path), floating_base=True))
    algorithms = [a for a in ALGORITHMS if not a.extras] if path in EVERY_ALGORITHM else MAIN
    assert_equal_to_generic(robot, algorithms, native=True, states=1)
    rng = np.random.default_rng(5)
    for algorithm in algorithms:
        program, outputs, _ = written.program_of(algorithm, robot, robot.fdata)
        slots = [(int(s.offset), tuple(map(int, s.shape))) for s in algorithm.slots(robot)[0]]
        arguments = inputs(algorithm, robot, rng)
        block, theirs = np.empty(len(outputs)), np.empty(len(outputs))
        code = written.written(algorithm, robot)
        assert code.single(block, *arguments) == OK
        np.testing.assert_array_equal(run_program(program, outputs, arguments), block)
        # a batch (its states a vector's lanes at a time, the last ones one by one): each state's bits
        states = [np.stack(x) for x in zip(*(inputs(algorithm, robot, rng) for _ in range(2 * _native.LANES + 3)))]
        states[-1] = states[-1][0] if algorithm.gravity else states[-1]  # one gravity for all states
        rows = np.full((len(states[0]), len(outputs)), np.nan)
        assert code.batch(rows, *states) == (OK, 0)
        for n, row in enumerate(rows):
            assert code.single(theirs, *(x[n] if x.ndim == 2 else x for x in states)) == OK
            np.testing.assert_array_equal(row, theirs, err_msg=f"{algorithm.name}, state {n}")
        # an allocating call's result: the block's result arrays, in the algorithm's type
        fresh = code.fresh(algorithm.kind, *arguments)
        assert type(fresh) is (np.ndarray if algorithm.kind is None else algorithm.kind)
        for x, (offset, shape) in zip((fresh,) if algorithm.kind is None else fresh, slots):
            assert x.flags.c_contiguous
            np.testing.assert_array_equal(x, block[offset:offset + math.prod(shape)].reshape(shape))


@pytest.mark.filterwarnings("ignore:invalid value")
def test_bad_states_give_the_generic_status_codes(monkeypatch, tmp_path):
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    code = written.written(aba.ACCELERATIONS, robot, wait=True)
    assert code.native
    block, q, zeros, g = np.empty(robot.nv), rd.neutral(robot), np.zeros(robot.nv), gravity_vector(None)
    assert code.single(block, q, zeros, zeros, g) == OK
    assert code.single(block, q[:-1], zeros, zeros, g) == BAD_SHAPE
    assert code.single(block[:-1], q, zeros, zeros, g) == BAD_SHAPE
    assert code.single(block, q.astype(np.float32), zeros, zeros, g) == BAD_SHAPE
    nan = zeros.copy()
    nan[2] = np.nan
    assert code.single(block, q, nan, zeros, g) == NOT_FINITE
    assert code.single(block, q, zeros, zeros, np.array([0.0, np.inf, 0.0])) == NOT_FINITE
    assert code.single(block, 1.1 * q, zeros, zeros, g) == NOT_UNIT  # the base's quaternion, 10% long
    out = np.empty((4, robot.nv))
    states = np.stack([q] * 4), np.zeros((4, robot.nv)), np.zeros((4, robot.nv))
    assert code.batch(out, *states, g) == (OK, 0)
    states[0][2] *= 1.1  # (in a vector's lane, when machine code)
    assert code.batch(out, *states, g) == (NOT_UNIT, 2)
    states[0][2] /= 1.1
    states[1][2, 0] = np.nan
    assert code.batch(out, *states, g) == (NOT_FINITE, 2)
    states[1][1] = 1e200  # finite, but its velocity products overflow: the first state at fault, before the NaN's
    assert code.batch(out, *states, g) == (OVERFLOW, 1)
    states[1][2, 0] = 0.0
    assert code.batch(out, *states, g) == (OVERFLOW, 1)


def test_the_tracer_folds_the_models_zeros_and_ones_and_shares_equal_terms():
    def run(x):
        a = x[0] * 0.0 + x[1] * 1.0   # the first term vanishes, the second is x[1] itself
        b = x[1] * 1.0 + 0.0
        return [a, b, a * b, 2.0 * 3.0]

    program, outputs = _trace.trace(run, [np.array([2.0, 3.0])])
    assert outputs[0] == outputs[1] == 1 and outputs[3] == 6.0  # node 1 reads x[1]
    assert [op for op, _ in program.ops] == ["input", "input", "mul"]
    with pytest.raises(_trace.Untraceable, match="index"):
        _trace.trace(lambda x: [[1.0, 2.0][x[0]]], [np.array([0.0])])
    # x - x vanishes; a constant equal to a node's index is no node (before, 1.0 - x[1] and x[1] - 1.0 were 0.0)
    program, outputs = _trace.trace(lambda x: [x[1] - x[1], 1.0 - x[1], x[1] - 1.0], [np.array([2.0, 3.0])])
    np.testing.assert_array_equal(run_program(program, outputs, [[2.0, 5.0]]), [0.0, -4.0, 4.0])
    # a number's own truth is a guard, as a comparison's is (before, a traced number was always true, unguarded)
    program, _ = _trace.trace(lambda x: [x[0] or 1.0], [np.array([2.0])])
    assert program.guards == [(0, True)]


@pytest.mark.parametrize("part", [_native.PART, 1], ids=["machine code", "machine code, a statement per part"])
def test_a_state_past_a_guard_is_refused_for_the_generic_kernel(part, tmp_path, monkeypatch):
    """A branch on a traced number follows the sample state and becomes a guard: a state on its other side gets
    the status that hands it to the generic kernel."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    monkeypatch.setattr(_native, "PART", part)
    program, outputs = _trace.trace(lambda x: [x[0] if x[0] > 0.0 else -x[0]], [np.array([2.0])])
    assert program.guards == [(1, True)]
    build_now("guarded_00000000_0", _native.c_source("guarded_00000000_0", program, outputs, [1]))
    module = _native.load("guarded_00000000_0")
    single, batch = module.single, module.batch
    out = np.empty(1)
    assert single(out, np.array([5.0])) == OK and out[0] == 5.0
    assert single(out, np.array([-5.0])) == _native.GUARD
    # a batch: the state past the guard is named, in whichever lane of the vectors it falls
    states = np.arange(1.0, 12.0)[:, None]
    for bad in (0, 2, 5, 10):
        states[bad] *= -1.0
        out = np.full((len(states), 1), np.nan)
        assert batch(out, states) == (_native.GUARD, bad)
        np.testing.assert_array_equal(out[:bad], states[:bad])
        states[bad] *= -1.0
    assert batch(out, states) == (OK, 0)
    np.testing.assert_array_equal(out, states)


def build_now(name, source):
    """Build ``source`` into the module ``name`` of the cache now (the builder's queue), and wait for it."""
    build = _native.build(lambda: (name, source, True))
    assert build.ended.wait(120) and build.failure is None, build.failure


@pytest.fixture
def builders_to_itself():
    """Every worker of the builder's queue for the test: the builds earlier tests queued wait until it ends (rather
    than the test waiting for them all: a minute in CI), those they had started end first."""
    held_back = []
    with _compile._changed:
        while _compile._queue or _compile._started:  # (a build that ends may queue the next stage)
            held_back += _compile._queue
            _compile._queue.clear()
            if _compile._started:
                _compile._changed.wait()
    yield
    with _compile._changed:
        _compile._queue[:0] = held_back
        for _ in held_back:
            _compile._start_worker(_compile.FINAL)
        _compile._changed.notify_all()


def test_a_build_a_caller_waits_for_does_not_queue_behind_the_others(tmp_path, monkeypatch, builders_to_itself):
    """Builds share one compiler per core of the machine (a locked file each in the cache, whatever process builds);
    a build that a caller waits for (a long batch) runs at once beside them, rather than behind builds queued
    before it: started, it takes no compiler slot; queued behind every worker's build, it starts in a worker of its
    own."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    program, outputs = _trace.trace(lambda x: [x[0] * x[0]], [np.array([2.0])])
    busy = [_compile_child.compiler_slot(str(tmp_path / "native" / "compilers"), _native.COMPILERS,
                                         str(tmp_path / "not hurried")) for _ in range(_native.COMPILERS)]
    names = [f"queued_00000000_{k}" for k in range(_compile.BUILDERS + 1)]
    try:  # every compiler busy with other builds, every worker with a build that waits for one
        builds = [_native.build(lambda name=name: (name, _native.c_source(name, program, outputs, [1]), True))
                  for name in names]
        assert until(lambda: [build.state for build in builds].count("started") == _compile.BUILDERS, 30)
        time.sleep(2.0)
        assert not any(build.ended.is_set() for build in builds) and builds[-1].state == "queued"
        for build in builds[0], builds[-1]:  # one started, one queued
            _compile.hurry(build)
            assert build.ended.wait(60) and build.failure is None, build.failure
        assert not any(build.ended.is_set() for build in builds[1:-1])
    finally:
        for slot in busy:
            slot.close()
    assert all(build.ended.wait(120) for build in builds)
    out = np.empty(1)
    for name in names:
        assert _native.load(name).single(out, np.array([3.0])) == OK and out[0] == 9.0


def test_the_queue_starts_the_most_urgent_build_first_and_numbas_one_at_a_time(monkeypatch):
    """The builder's queue, in the order of its priorities (first come, first served within one): a build a caller
    waits for, a first stage, a numba kernel, a final module; a numba kernel not beside another, a final module not
    beside a first stage (_compile.APART)."""
    def queued(*priorities):
        return [_compile.Build(lambda: [], priority, None) for priority in priorities]
    final, kernel, first, other_first, waited = queue = queued(_compile.FINAL, _compile.KERNEL, _compile.FIRST_STAGE,
                                                               _compile.FIRST_STAGE, _compile.WAITED)
    with _compile._changed:  # (no worker reads the test's queue)
        monkeypatch.setattr(_compile, "_queue", list(queue))
        monkeypatch.setattr(_compile, "_started", [])
        order = []
        while _compile._queue:
            order.append(_compile._next())
            _compile._queue.remove(order[-1])
        assert order == [waited, first, other_first, kernel, final]
        monkeypatch.setattr(_compile, "_queue", [kernel, final])
        monkeypatch.setattr(_compile, "_started", queued(_compile.KERNEL, _compile.FIRST_STAGE))
        assert _compile._next() is None  # a numba kernel under way, and a first stage
        _compile._started[1].priority = _compile.WAITED  # a caller waits for that first stage now
        assert _compile._next() is final
        kernel.priority = _compile.WAITED  # (what hurry does to a queued build)
        assert _compile._next() is kernel
        monkeypatch.undo()


def test_a_caller_that_waits_before_the_first_stages_turn_gets_the_final_module_alone(tmp_path, monkeypatch):
    """The stage a build makes is decided at its turn: a written code whose first stage is still queued when a caller
    waits for it (rne-dynamics compile, a long batch) is built once, as its final module, without the one-state
    module before it."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = oracle.load_quietly(rd.bundled_robot_path())
    with _compile._changed:  # (no worker starts a build meanwhile)
        assert written.written(gravity.GRAVITY, robot) is None
        code = robot.engines.written[(gravity.GRAVITY, True)]
        assert code.building.state == "queued" and code.building.priority == _compile.FIRST_STAGE
        code.waited = True  # what wait() says first
    assert code.wait(120) and code.final
    modules = sorted(path.name for path in (tmp_path / "native").glob("*.so"))
    assert len(modules) == 1 and written.ONE_STATE_NAME not in modules[0], modules


ENDS_AT_ONCE = """
import os, threading
import rne_dynamics as rd
from rne_dynamics import _compile_child
from rne_dynamics.algorithms import rnea, written
started, start = threading.Event(), _compile_child.start
_compile_child.start = lambda arguments, *rest, **environment: (start(arguments, *rest, **environment),
                                                             arguments[0] == "c" and started.set())[0]
robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
written.written(rnea.INVERSE_DYNAMICS, robot)  # traced: its build starts
assert started.wait(120)
os._exit(0)
"""


def test_a_build_outlives_the_process_that_started_it(tmp_path, monkeypatch):
    """A process that ends as soon as its robot's build has started (a short script) leaves the build running in
    the builder's process: the module and its index reach the cache, and the next process runs the machine code
    from its first call, without tracing."""
    import time
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", ENDS_AT_ONCE], env=environment, check=True, timeout=300)
    robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
    key = written.module_name(rnea.INVERSE_DYNAMICS, robot, robot.fdata)
    assert _native.load(key) is None  # the process has ended, its build has not
    start = time.monotonic()
    while _native.load(key) is None and time.monotonic() - start < 120:
        time.sleep(0.1)
    assert _native.load(key) is not None, "the build did not finish after its process ended"
    found = subprocess.run([sys.executable, "-c", "import rne_dynamics as rd\n"
                            "from rne_dynamics.algorithms import rnea, written\n"
                            "robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)\n"
                            "print(written.written(rnea.INVERSE_DYNAMICS, robot).native)"],
                           env=environment, check=True, capture_output=True, text=True, timeout=300)
    assert found.stdout.split() == ["True"]


@pytest.fixture
def lanes_held_back(monkeypatch, tmp_path):
    """A cache folder of the test's own, and every final module's build (the one with the batch's vector lanes) held
    back until the event returned is set."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    release, install = threading.Event(), written.install

    def held_back(made, build):
        if not any(stage in build.arguments[1] for stage in (written.ONE_STATE_NAME, written.QUICK_NAME)):  # final
            release.wait(120)
        return install(made, build)
    monkeypatch.setattr(written, "install", held_back)
    yield release
    release.set()


def until(condition, seconds=120):
    """Whether ``condition()`` became true within ``seconds``."""
    end = time.monotonic() + seconds
    while not condition() and time.monotonic() < end:
        time.sleep(0.05)
    return condition()


def test_a_batch_before_its_vector_lanes_are_built_runs_state_by_state_exactly_and_is_counted(lanes_held_back):
    """A program's first build is its one-state module, without the batch's vector lanes (half the compiler's
    time: Talos's programs 1.7-7.2 s of CPU against 3.5-14.7), and at -O1 its only one until a batch runs (then its
    final module is built, with the lanes; a quick first stage, at -O0, is followed by it at once): a batch before
    the final module is in runs state by
    state on it, each state counted as the written code's and as that fallback in rd.engine_report(), to the generic
    kernel's numbers; once the final module is in (the one indexed for later processes), the same batch runs without
    the fallback, to the same bits."""
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    algorithm = rnea.INVERSE_DYNAMICS  # an allocating batch's
    assert written.written(algorithm, robot) is None  # traced: its one-state build under way
    code = robot.engines.written[(algorithm, True)]
    assert until(lambda: code.stage == written.ONE_STATE) and not code.final
    time.sleep(0.5)
    assert code.building is None  # calls of one state never need the lanes: no final module until a batch runs
    rng = np.random.default_rng(6)
    states = [inputs(algorithm, robot, rng)[:3] for _ in range(37)]  # (not a multiple of the lanes)
    batch = [np.stack(x) for x in zip(*states)]

    def counted_batch():
        before = rd.engine_report().get(algorithm.name, {"states": {}, "fallbacks": {}})
        torques = rd.inverse_dynamics(robot, *batch).torques
        after = rd.engine_report()[algorithm.name]
        return torques, {key: {k: n - before[key].get(k, 0) for k, n in after[key].items()
                               if n != before[key].get(k, 0)} for key in ("states", "fallbacks")}
    one_by_one, added = counted_batch()
    assert added == {"states": {driver.MACHINE_CODE: 37}, "fallbacks": {driver.ONE_BY_ONE: 37}}
    for n, state in enumerate(states):
        expected = generic(algorithm, robot, (*state, gravity_vector(None)))[:robot.nv]
        assert oracle.relative_error(one_by_one[n], expected) < TOLERANCE
    lanes_held_back.set()
    assert code.wait(120) and code.final
    assert code.batch.__self__.__file__ == _native.load(written.module_name(algorithm, robot, robot.fdata)).__file__
    in_lanes, added = counted_batch()
    assert added == {"states": {driver.MACHINE_CODE: 37}, "fallbacks": {}}
    np.testing.assert_array_equal(in_lanes, one_by_one)


def test_only_the_final_module_has_vector_lanes():
    robot = oracle.load_quietly(rd.bundled_robot_path())
    program, outputs, sizes = written.program_of(rnea.INVERSE_DYNAMICS, robot, robot.fdata)
    one_state, final = (_native.c_source("m", program, outputs, sizes, lanes=lanes) for lanes in (False, True))
    assert "lanes_part0" in final and "lanes_part0" not in one_state


def test_a_large_program_serves_its_unoptimised_build_until_the_final_one_is_in(lanes_held_back, monkeypatch):
    """A program of more than QUICK_FIRST operations is built first without optimisation (in a third of the
    time): it serves, the final module replaces it, in a held Data too; both give the same bits (no fused or
    reordered arithmetic at either level), and only the final one is indexed for later processes."""
    monkeypatch.setattr(written, "QUICK_FIRST", 0)
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    held_id = rnea.INVERSE_DYNAMICS_SHOWN  # what a one-state call with data= runs
    assert written.written(held_id, robot) is None  # its build under way
    code = robot.engines.written[(held_id, True)]
    assert until(lambda: code.stage == written.ONE_STATE)
    quick = code.single
    data = robot.data()
    rng = np.random.default_rng(4)
    state = inputs(held_id, robot, rng)[:3]
    rd.inverse_dynamics(robot, *state, data=data)
    assert data.held[held_id].call is quick
    lanes_held_back.set()
    assert code.wait(120) and code.final
    assert data.held[held_id].call is code.single is not quick  # the final module, swapped into the Data
    assert _native.load(written.module_name(held_id, robot, robot.fdata)).single is code.single
    for _ in range(5):
        arguments = inputs(held_id, robot, rng)
        one, other = (np.zeros(len(data.held[held_id].block)) for _ in range(2))
        assert code.single(one, *arguments) == quick(other, *arguments) == OK
        np.testing.assert_array_equal(one, other)


def test_a_program_above_max_nodes_is_not_written_and_its_generic_kernel_serves(not_built, monkeypatch):
    """MAX_NODES bounds a traced program (the tracer's memory, the compiler's time): a program of exactly MAX_NODES
    operations is written, one of more is not (the reason counted in the report) and the generic kernel serves its
    calls with its answers."""
    monkeypatch.setattr(driver.Algorithm, "generic_compiled", lambda *_: False)  # (else UNROLLED bounds it)
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    algorithm = rnea.INVERSE_DYNAMICS_SHOWN  # what a one-state call with data= runs
    size = len(written.program_of(algorithm, robot, robot.fdata)[0].ops)
    monkeypatch.setattr(written, "MAX_NODES", size)
    written.written(algorithm, robot)
    assert isinstance(robot.engines.written[(algorithm, True)], written.Written)
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    monkeypatch.setattr(written, "MAX_NODES", size - 1)
    reason = f"cannot be written out: the program has more than {size - 1} operations"
    before = algorithm.not_written[reason]
    assert written.written(algorithm, robot) is None
    assert robot.engines.written[(algorithm, True)] is None and algorithm.not_written[reason] == before + 1
    rng = np.random.default_rng(3)
    state = inputs(algorithm, robot, rng)[:3]
    torques = rd.inverse_dynamics(robot, *state, data=robot.data()).torques.copy()
    expected = generic(algorithm, robot, (*state, gravity_vector(None)))[:robot.nv]
    assert oracle.relative_error(torques, expected) < TOLERANCE


def test_a_program_above_unrolled_is_a_bridge_until_numba_has_its_generic_kernel(tmp_path, monkeypatch):
    """A program larger than UNROLLED runs no faster written out than its generic kernel as numba's machine code
    (docs/performance.md, "Large programs"): while numba has not compiled that kernel it is written as a bridge from
    the kernel's Python, its one-state module only (no final module follows), and gives way to the kernel once numba
    has cached it; once numba has it, the program is not written (its trace stops at UNROLLED operations) and a bridge
    in the cache is not loaded."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    compiled = [False]
    monkeypatch.setattr(driver.Algorithm, "generic_compiled", lambda *_: compiled[0])
    algorithm = rnea.INVERSE_DYNAMICS_SHOWN
    monkeypatch.setattr(algorithm, "kernel_cached", False)
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    size = len(written.program_of(algorithm, robot, robot.fdata)[0].ops)
    monkeypatch.setattr(written, "UNROLLED", size - 1)
    made = written.written(algorithm, robot, wait=True)
    assert made.bridge and made.native and not made.final and made.ended.is_set() and made.building is None
    modules = [f for f in os.listdir(made.folder) if f.startswith(algorithm.name) and f.endswith(".so")]
    assert len(modules) == 1 and written.BRIDGE_NAME in modules[0]  # (no final module)
    state = inputs(algorithm, robot, np.random.default_rng(4))[:3]
    data = robot.data()
    torques = rd.inverse_dynamics(robot, *state, data=data).torques.copy()
    assert data.held[algorithm].call is made.single  # (the bridge serves the held call)
    expected = generic(algorithm, robot, (*state, gravity_vector(None)))[:robot.nv]
    assert oracle.relative_error(torques, expected) < TOLERANCE
    retired = algorithm.not_written[driver.RETIRED]
    algorithm.kernel_built()  # numba has cached the entry (the build this process queued): the bridge gives way
    assert algorithm.not_written[driver.RETIRED] == retired + 1
    assert written.written(algorithm, robot) is None and data.held[algorithm].call.func == algorithm.typed_generic
    assert not algorithm.bridges and robot.engines.written[written.variant(algorithm, True, (), False)] is None
    assert oracle.relative_error(rd.inverse_dynamics(robot, *state, data=data).torques, expected) < TOLERANCE
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path / "later"))  # a bridge whose build ends after that
    later = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    assert written.written(algorithm, later, wait=True).bridge and written.written(algorithm, later) is None
    assert not algorithm.bridges and later.engines.written[written.variant(algorithm, True, (), False)] is None
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))

    traced = written.program_of

    def not_traced(*_, **__):
        raise AssertionError("traced again")
    monkeypatch.setattr(written, "program_of", not_traced)
    again = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)  # a later process: from the cache
    loaded = written.written(algorithm, again)
    assert loaded.bridge and loaded.native and loaded.ended.is_set() and loaded.building is None
    compiled[0] = True
    reason = f"cannot be written out: the program has more than {size - 1} operations"
    before = algorithm.not_written[reason]
    with_kernel = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    assert written.written(algorithm, with_kernel) is None and algorithm.not_written[reason] == before + 1
    monkeypatch.setattr(written, "program_of", traced)
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path / "empty"))  # nothing cached: traced to UNROLLED only
    with_kernel = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    assert written.written(algorithm, with_kernel) is None and algorithm.not_written[reason] == before + 2


def test_a_program_built_in_parts_computes_what_it_computes_in_one(tmp_path, monkeypatch):
    """A large program is written as several C functions (the compiler's time grows faster than a function's
    length), the values that cross them passing through an array: the same operations in the same order, so the
    same bits, guards included (a floating base's quaternion)."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    program, outputs, sizes = written.program_of(rnea.INVERSE_DYNAMICS, robot, robot.fdata)
    singles = []
    for part in (len(program.ops), 7):
        monkeypatch.setattr(_native, "PART", part)
        name = f"parts_00000000_{part}"
        build_now(name, _native.c_source(name, program, outputs, sizes, [int(s) for s in robot.quaternions]))
        singles.append(_native.load(name).single)
    rng = np.random.default_rng(5)
    for _ in range(5):
        arguments = inputs(rnea.INVERSE_DYNAMICS, robot, rng)
        one, parts = np.empty(len(outputs)), np.empty(len(outputs))
        assert singles[0](one, *arguments) == singles[1](parts, *arguments) == OK
        np.testing.assert_array_equal(one, parts)
    assert singles[1](parts, 1.1 * arguments[0], *arguments[1:]) == NOT_UNIT


def generic_call(monkeypatch, robot_of, call):
    """``call(robot)`` on a new robot (``robot_of()``) whose calls all run their generic kernels."""
    with monkeypatch.context() as patch:
        patch.setattr(written, "MODE", "0")
        return call(robot_of())


def test_specialised_data_runs_machine_code_and_keeps_the_generic_answers(tmp_path, monkeypatch):
    """rd.specialised_data: the held calls run the machine code; the other calls with it (another gravity,
    external wrenches, drive=False, a bad state) the generic ones or other written code, into the same arrays, with
    the same errors."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))

    def robot_of():  # (every algorithm built: the bundled arm's 46,000 operations, a Panda's 88,000)
        return oracle.with_armature(rd.load_urdf(rd.bundled_robot_path()), 1)

    robot = robot_of()
    start_builds(robot, [a for a in ALGORITHMS if not a.extras])  # what specialised_data waits for, side by side
    data = rd.specialised_data(robot)
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, robot.nv) for _ in range(3))
    first = rd.inverse_dynamics(robot, q, qd, qdd, data=data)
    assert type(data.held[rnea.INVERSE_DYNAMICS_SHOWN].call).__name__ == "builtin_function_or_method"
    expected = generic(rnea.INVERSE_DYNAMICS, robot, (q, qd, qdd, gravity_vector(None)))
    assert oracle.relative_error(np.concatenate([x.ravel() for x in first]), expected) < TOLERANCE
    link = robot.link_names[-1]
    for keywords in ({"gravity": [0.0, 1.0, -9.0]}, {"external_wrenches": {link: [1.0, 2.0, 3.0, 0.1, 0.2, 0.3]}},
                     {"drive": False}):
        reference = generic_call(monkeypatch, robot_of,
                                 lambda r: rd.inverse_dynamics(r, q, qd, qdd, **keywords).torques)
        again = rd.inverse_dynamics(robot, q, qd, qdd, data=data, **keywords)
        assert again.torques is first.torques  # the held arrays
        assert oracle.relative_error(again.torques, reference) < TOLERANCE
    with pytest.raises(rd.StateError, match="qd"):
        rd.inverse_dynamics(robot, q, np.full(robot.nv, np.nan), qdd, data=data)
    with pytest.raises(rd.StateError, match="tau"):
        rd.forward_dynamics(robot, q, qd, np.full(robot.nv, np.inf), data=data)
    states = [rng.uniform(-1.5, 1.5, (300, robot.nv)) for _ in range(3)]
    batch = rd.inverse_dynamics(robot, *states, data=data)
    for ours, theirs in zip(batch, generic_call(monkeypatch, robot_of, lambda r: rd.inverse_dynamics(r, *states))):
        assert oracle.relative_error(ours, theirs) < TOLERANCE
    states[1][17, 2] = np.nan
    with pytest.raises(rd.StateError, match="qd is not finite at joint .elbow_joint. \\(state 17\\)"):
        rd.inverse_dynamics(robot, *states, data=data)
    states[1][17, 2] = 0.0
    states[1][250, 4] = np.inf  # in the last thread's rows
    with pytest.raises(rd.StateError, match="qd is not finite at joint .wrist_2_joint. \\(state 250\\)"):
        rd.inverse_dynamics(robot, *states, data=data)


COLD = """
import sys, time
import numpy as np
import rne_dynamics as rd
from rne_dynamics.algorithms import aba, driver
robot = rd.load_urdf(rd.bundled_robot_path())
q, qd, tau = np.load(sys.argv[1])
start = time.perf_counter()
data = robot.data()
for _ in range(driver.WARM + 1):  # then its written code is made: loaded from the cache, or traced and built
    qdd = rd.forward_dynamics(robot, q, qd, tau, data=data)
code = robot.engines.written[(aba.ACCELERATIONS, True)]
print(time.perf_counter() - start, int(code.native), *qdd)
code.wait()
"""


def test_a_new_process_is_exact_before_its_machine_code_is_built_and_the_next_loads_it(tmp_path):
    robot = rd.load_urdf(rd.bundled_robot_path())
    rng = np.random.default_rng(11)
    state = np.stack([rng.uniform(-1.0, 1.0, robot.nv) for _ in range(3)])
    np.save(tmp_path / "state.npy", state)
    environment = dict(os.environ, RNE_DYNAMICS_CACHE=str(tmp_path / "cache"))
    runs = [subprocess.run([sys.executable, "-c", COLD, str(tmp_path / "state.npy")], env=environment,
                           capture_output=True, text=True, check=True).stdout.split() for _ in range(2)]
    reference = generic(aba.ACCELERATIONS, robot, (*state, gravity_vector(None)))
    for run, native in zip(runs, ("0", "1")):  # the first served by the generic kernel, the second by the cached module
        assert run[1] == native
        assert oracle.relative_error(np.array(run[2:], float), reference) < TOLERANCE
    assert len(list((tmp_path / "cache" / "native").glob("forward_step_accelerations_memory_program_*"))) == 1


def test_a_program_that_an_edit_leaves_as_it_was_is_not_built_again(tmp_path, monkeypatch):
    """The model's key includes the sources' version (no trace on a hit); after an edit it misses, the trace finds
    the same program, and its builder finds its built modules (the one-state one, then the final one) without a
    compiler run (the files are those of the first build); the old version's index stays (an install of that
    version may share the cache)."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))

    def built_by_stages():  # (waited for once its first stage is in: both stages are built)
        robot = rd.load_urdf(rd.bundled_robot_path())
        written.written(aba.ACCELERATIONS, robot)
        code = robot.engines.written[(aba.ACCELERATIONS, True)]
        assert until(lambda: code.native) and code.wait(120) and code.final
    built_by_stages()
    folder = tmp_path / "native"
    mine = "forward_step_accelerations_memory*_program_*.so"  # (an earlier test's final build may come in too)
    built, (old_index,) = sorted(folder.glob(mine)), list(folder.glob("*.program"))
    files = {path: path.stat().st_ino for path in built}
    program = old_index.read_text()
    monkeypatch.setattr(written, "sources_stamp", lambda: _native.digest("an edited comment"))
    built_by_stages()
    (new_index,) = set(folder.glob("*.program")) - {old_index}
    assert new_index.read_text() == old_index.read_text() == program
    assert {path: path.stat().st_ino for path in sorted(folder.glob(mine))} == files


def test_a_varying_extra_is_written_out_for_a_few_values_only(not_built, monkeypatch):
    """A caller asking for a new link and frame each call traces no program past :data:`written.VARIANTS` of them
    (each costs a trace and is kept); the other values run the generic kernel, to the same numbers."""
    from rne_dynamics.algorithms import driver
    from rne_dynamics.algorithms.kinematics import JACOBIAN
    monkeypatch.setattr(driver, "WARM", 0)  # every call asks for its written code
    robot = rd.load_urdf(rd.bundled_robot_path())
    reference = robot.with_drive()  # the same model, another robot object: its own written codes (none)
    q = rd.random_configuration(robot, np.random.default_rng(4))
    asked = [(link, frame) for link in list(robot.link_frames)[1:] for frame in ("world", "local")]
    for link, frame in asked[:written.VARIANTS + 4]:
        ours = rd.frame_jacobian(robot, q, link, reference=frame)
        with monkeypatch.context() as patch:
            patch.setattr(written, "MODE", "0")
            theirs = rd.frame_jacobian(reference, q, link, reference=frame)
        assert oracle.relative_error(ours, theirs) < TOLERANCE
    assert sum(key[0] is JACOBIAN and code is not None for key, code in robot.engines.written.items()) == written.VARIANTS
    assert all(code is None for key, code in reference.engines.written.items() if key[0] is JACOBIAN)


def test_the_simulator_step_runs_its_compiled_entry_only(not_built, monkeypatch):
    """The simulator's step (an iterative solve that branches on the state) never traces a written code."""
    from rne_dynamics.algorithms import driver
    from rne_dynamics.algorithms.simulate import STEP
    monkeypatch.setattr(driver, "WARM", 0)
    robot = rd.load_urdf(rd.bundled_robot_path())
    for _ in range(3):
        rd.step(robot, np.zeros(robot.nq), np.zeros(robot.nv), np.zeros(robot.nv), 1e-3)
    assert not [key for key in robot.engines.written if key[0] is STEP]
