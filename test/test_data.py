"""``data = robot.data()``: every call given ``data=`` returns the same numbers as without it, bit for bit, writes its
results into ``data`` (views, the same arrays call after call) and allocates no array once it has run with it.

Allocation is measured with ``tracemalloc``: on the bundled arm with a fixed and a floating base (6 and 12
coordinates), a call's peak on the larger may exceed its peak on the smaller by less than the 48 bytes by which an
array of a row per coordinate grows: a call that allocated any result or workspace array with a row per coordinate
or body would exceed it. ``pytest --long`` also runs the calls on a long chain (a floating base and 400 revolute
joints, too large for most calls' written code: their generic kernels, compiled for it), where every such array is
larger than the few hundred bytes of Python objects a call makes and would show a peak above :data:`LIMIT`.
"""
import warnings

import numpy as np
import pytest
import tracemalloc

import rne_dynamics as rd
from rne_dynamics import _compile, _jit
from rne_dynamics.algorithms import driver
from rne_dynamics.robots import default_robot_path

CHAIN_LENGTH = 400
#: Bytes a call may allocate at its peak: its Python objects, fewer than one array of ``nv`` floats (3,248 bytes).
LIMIT = 3000


def chain_urdf(n):
    """A floating base and ``n`` revolute joints in a chain, axes turning x, y, z."""
    inertial = ('<inertial><origin xyz="0.05 0.01 0.1"/><mass value="1"/>'
                '<inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>')
    links = "".join(f'<link name="l{k}">{inertial}</link>' for k in range(n + 1))
    axes = ("1 0 0", "0 1 0", "0 0 1")
    joints = "".join(f'<joint name="j{k}" type="revolute"><parent link="l{k}"/><child link="l{k + 1}"/>'
                     f'<origin xyz="0 0 0.1"/><axis xyz="{axes[k % 3]}"/>'
                     f'<limit lower="-3" upper="3" effort="10" velocity="2"/></joint>' for k in range(n))
    return f'<robot name="chain">{links}{joints}</robot>'


def robots():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"arm6": rd.load_urdf(default_robot_path()),
                "arm6 floating": rd.load_urdf(default_robot_path(), floating_base=True)}


def calls(robot, rng):
    """``(name, call)`` pairs: ``call(data)`` runs one public function on a fixed random state."""
    q = rd.random_configuration(robot, rng)
    v, a, j = (rng.uniform(-1, 1, robot.nv) for _ in range(3))
    link = robot.link_names[-1]
    wrench = {link: rng.uniform(-1, 1, 6)}
    return [
        ("inverse_dynamics", lambda d: rd.inverse_dynamics(robot, q, v, a, external_wrenches=wrench, data=d)),
        ("gravity_torques", lambda d: rd.gravity_torques(robot, q, data=d)),
        ("bias_torques", lambda d: rd.bias_torques(robot, q, v, data=d)),
        ("mass_matrix", lambda d: rd.mass_matrix(robot, q, data=d)),
        ("forward_dynamics", lambda d: rd.forward_dynamics(robot, q, v, a, data=d)),
        ("forward_dynamics with wrenches", lambda d: rd.forward_dynamics(robot, q, v, a, joint_wrenches=True, data=d)),
        ("inverse_dynamics_derivatives", lambda d: rd.inverse_dynamics_derivatives(robot, q, v, a, data=d)),
        ("joint_wrench_derivatives", lambda d: rd.joint_wrench_derivatives(robot, q, v, a, data=d)),
        ("forward_dynamics_derivatives", lambda d: rd.forward_dynamics_derivatives(robot, q, v, a, data=d)),
        ("coriolis_matrix", lambda d: rd.coriolis_matrix(robot, q, v, data=d)),
        ("torque_rate", lambda d: rd.torque_rate(robot, q, v, a, j, data=d)),
        ("joint_torque_regressor", lambda d: rd.joint_torque_regressor(robot, q, v, a, data=d)),
        ("forward_kinematics", lambda d: rd.forward_kinematics(robot, q, data=d)),
        ("frame_placement", lambda d: rd.frame_placement(robot, q, link, data=d)),
        ("frame_jacobian", lambda d: rd.frame_jacobian(robot, q, link, reference="world", data=d)),
        ("frame_velocity", lambda d: rd.frame_velocity(robot, q, v, link, data=d)),
        ("frame_acceleration", lambda d: rd.frame_acceleration(robot, q, v, a, link, data=d)),
        ("center_of_mass", lambda d: rd.center_of_mass(robot, q, v, a, data=d)),
        ("centroidal_momentum", lambda d: rd.centroidal_momentum(robot, q, v, data=d)),
        ("centroidal_momentum_matrix", lambda d: rd.centroidal_momentum_matrix(robot, q, data=d)),
        ("integrate", lambda d: rd.integrate(robot, q, v, 0.01, data=d)),
        ("difference", lambda d: rd.difference(robot, q, q, data=d)),
    ]


def arrays(result):
    """The arrays of a result (an array, or a tuple of them)."""
    if isinstance(result, np.ndarray):
        return [result]
    return [x for x in result if x is not None]


@pytest.mark.parametrize("name", [name for name, _ in calls(robots()["arm6"], np.random.default_rng(0))])
@pytest.mark.parametrize("which", ["arm6", "arm6 floating"])
def test_data_calls_equal_allocating_calls(which, name):
    robot = robots()[which]
    call = dict(calls(robot, np.random.default_rng(1)))[name]
    data = robot.data()
    expected = arrays(call(None))
    first = arrays(call(data))
    again = arrays(call(data))
    assert len(first) == len(expected)
    for x, y, z in zip(expected, first, again):
        assert np.array_equal(x, y), f"{name}: data= differs from the allocating call"
        assert z is y or np.shares_memory(z, y), f"{name}: a second call with the same data made a new array"


#: ``difference``'s logarithms (free-flyer, spherical, planar) run in numpy and make small temporaries per such joint;
#: its result is still written into ``data``.
NUMPY_TEMPORARIES = {"difference"}
ALLOCATION_CALLS = [name for name, _ in calls(robots()["arm6"], np.random.default_rng(0))
                    if name not in NUMPY_TEMPORARIES]
COMPILED_ONLY = pytest.mark.skipif(_jit.numba is None, reason="plain-Python kernels allocate their temporaries (and "
                                   "take minutes on a 400-body chain): this checks the compiled kernels")


def built(robot):
    """``robot`` once every call has run with a ``data`` and the machine code of its written code is in use (its
    Python allocates): the builds run side by side."""
    data = robot.data()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(driver, "WARM", 0)  # no warm-up: a call's first state makes its written code
        for _, call in calls(robot, np.random.default_rng(2)):
            call(data)
    codes = [code for code in robot.engines.written.values() if code is not None and not code.native]
    for code in codes:
        code.start()
    for code in codes:
        code.wait()
    return robot


def allocations(robot, name):
    """``(peak with data=, peak of the allocating call, bytes of its results)`` of the call ``name`` on ``robot``,
    in bytes: the call with a ``data`` after its first, the least peak of three rounds of three calls (what every
    call allocates is in each; what the process keeps once, such as numba's caches of a first run, in one)."""
    call = dict(calls(robot, np.random.default_rng(2)))[name]
    data = robot.data()
    call(data)
    peaks = []
    for _ in range(3):
        tracemalloc.start()
        for _ in range(3):
            call(data)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
    with_data = min(peaks)
    tracemalloc.start()
    result = call(None)
    without = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return with_data, without, sum(x.nbytes for x in arrays(result))


@pytest.fixture(scope="module")
def arms():
    """The bundled arm, fixed and floating, with every call's machine code (``rne-dynamics compile`` built most)."""
    return [built(robot) for robot in robots().values()]


@COMPILED_ONLY
@pytest.mark.parametrize("name", ALLOCATION_CALLS)
def test_data_calls_allocate_nothing_that_grows_with_the_robot(arms, name, monkeypatch):
    monkeypatch.setattr(driver, "WARM", 0)  # the allocating call runs the written code too: it allocates its results
    monkeypatch.setattr(_compile, "ON_CALLER", True)  # integrate's kernel: its machine code (5 s), not its Python
    peaks = [allocations(robot, name) for robot in arms]
    for (with_data, without, result_bytes), robot in zip(peaks, arms):
        assert without >= result_bytes, f"{name}: the test cannot see the allocating call's {result_bytes} bytes"
        assert with_data < LIMIT, f"{name}: a call with data= allocated {with_data} bytes at its peak ({robot.name})"
    growth = 8 * (arms[1].nv - arms[0].nv)  # of one array of a row per coordinate (a row per body: 6 floats more)
    assert peaks[1][0] - peaks[0][0] < growth, \
        f"{name}: a call with data= allocated {peaks[0][0]} bytes at its peak with {arms[0].nv} coordinates, " \
        f"{peaks[1][0]} with {arms[1].nv}"


@pytest.fixture(scope="module")
def chain():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load_urdf(chain_urdf(CHAIN_LENGTH), floating_base=True)
    return robot


@pytest.mark.long
@COMPILED_ONLY
@pytest.mark.parametrize("name", ALLOCATION_CALLS)
def test_data_calls_on_a_long_chain_allocate_no_array(chain, name, monkeypatch):
    call = dict(calls(chain, np.random.default_rng(2)))[name]
    call(chain.data())
    for code in list(chain.engines.written.values()):  # the machine code of what the call runs (its Python allocates)
        if code is not None:
            code.wait()
    monkeypatch.setattr(_compile, "ON_CALLER", True)  # and of the generic kernel, where it still serves
    with_data, without, result_bytes = allocations(chain, name)
    assert without >= result_bytes, f"{name}: the test cannot see the allocating call's {result_bytes} bytes"
    assert with_data < LIMIT, f"{name}: a call with data= allocated {with_data} bytes at its peak"


def test_data_of_another_robot_is_refused():
    both = robots()
    with pytest.raises(rd.StateError, match="robot.data"):
        rd.gravity_torques(both["arm6"], np.zeros(6), data=both["arm6 floating"].data())
    with pytest.raises(rd.StateError, match="robot.data"):
        rd.gravity_torques(both["arm6"], np.zeros(6), data="not a data")


def test_batches_with_data():
    robot = robots()["arm6 floating"]
    rng = np.random.default_rng(3)
    q = rd.random_configuration(robot, rng, size=5)
    v = rng.uniform(-1, 1, (5, robot.nv))
    data = robot.data()
    np.testing.assert_array_equal(rd.bias_torques(robot, q, v, data=data), rd.bias_torques(robot, q, v))
    np.testing.assert_array_equal(rd.bias_torques(robot, q[:2], v[:2], data=data), rd.bias_torques(robot, q[:2], v[:2]))
    np.testing.assert_array_equal(rd.bias_torques(robot, q[0], v[0], data=data), rd.bias_torques(robot, q[0], v[0]))


def test_a_batch_in_pieces_runs_every_state_once_and_reports_the_first_at_fault():
    """The threads take a batch in pieces as they come free: every state runs exactly once, and the first state at
    fault is reported whichever thread met it (faults in two pieces: the first piece's thread goes slow, so another
    thread meets the earlier fault while it goes on to meet the later one)."""
    import threading
    import time
    count = 40 * driver.THREAD_ROWS
    runs = np.zeros(count, int)
    lock = threading.Lock()

    def rows(first, last, faults=()):
        if first == 0:
            time.sleep(0.05)  # this piece's thread is slow: the others go on meanwhile
        for n in range(first, last):
            with lock:
                runs[n] += 1
            if n in faults:
                return driver.NOT_FINITE, n
        return driver.OK, 0

    assert driver.in_threads(rows, count) == (driver.OK, 0)
    np.testing.assert_array_equal(runs, 1)
    runs[:] = 0
    early, late = count // 4, count - 3
    assert driver.in_threads(lambda first, last: rows(first, last, (early, late)), count) == (driver.NOT_FINITE, early)
    assert np.all(runs[:early + 1] == 1) and np.all(runs <= 1)
    # through a call: the state named is the first that is not finite, far into the batch
    robot = robots()["arm6 floating"]
    q = rd.random_configuration(robot, np.random.default_rng(5), size=count)
    v = np.zeros((count, robot.nv))
    v[count - 7, 2] = v[count // 2 + 1, 0] = np.nan
    with pytest.raises(rd.StateError, match=f"state {count // 2 + 1}"):
        rd.bias_torques(robot, q, v)


def test_held_calls_take_any_array_like_and_explain_bad_input():
    """The held call's one compiled signature takes float64 arrays; lists, float32, read-only and strided arrays go
    through the checked call with the same numbers, and bad input is explained as without ``data=``."""
    robot = robots()["arm6 floating"]
    rng = np.random.default_rng(4)
    q = rd.random_configuration(robot, rng)
    v, a = rng.uniform(-1, 1, (2, robot.nv))
    data = robot.data()
    expected = rd.inverse_dynamics(robot, q, v, a).torques.copy()
    rd.inverse_dynamics(robot, q, v, a, data=data)
    read_only = v.copy()
    read_only.setflags(write=False)
    strided = np.repeat(a, 2)[::2]
    for args in [(list(q), list(v), list(a)), (q.astype(np.float32).astype(float), v, a), (q, read_only, strided)]:
        np.testing.assert_allclose(rd.inverse_dynamics(robot, *args, data=data).torques,
                                   rd.inverse_dynamics(robot, *args).torques, rtol=0, atol=0)
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, v, a, data=data).torques, expected)
    with pytest.raises(rd.StateError, match="qd is not finite at joint"):
        rd.inverse_dynamics(robot, q, np.full(robot.nv, np.nan), a, data=data)
    with pytest.raises(rd.StateError, match="qdd has shape"):
        rd.inverse_dynamics(robot, q, v, a[:-1], data=data)
    bad = q.copy()
    bad[3:7] *= 2.0
    with pytest.raises(rd.StateError, match="unit quaternion"):
        rd.inverse_dynamics(robot, bad, v, a, data=data)
    np.testing.assert_array_equal(rd.inverse_dynamics(robot, q, v, a, data=data).torques, expected)


def test_a_batch_as_the_first_call_of_a_process():
    """Before its first one-state call a compiled entry has no signature to hold to: a batch first (or a list) must go
    through the checked call, not make numba compile the one-state entry for other types."""
    import subprocess
    import sys
    code = ("import numpy as np, rne_dynamics as rd; r = rd.load_urdf(rd.bundled_robot_path()); "
            "q = np.zeros((3, r.nq)); print(rd.inverse_dynamics(r, q, q, q).torques.shape, "
            "rd.gravity_torques(r, [0.0] * r.nq).shape)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["(3,", "6)", "(6,)"]
