"""``rne-dynamics compile``: prepare the machine code ahead of its first use (``scripts/setup_venv.sh`` runs it).

Every call runs its robot's written code (:mod:`~rne_dynamics.algorithms.written`), built in about a second per
algorithm the first time a robot needs it and cached on disk. This builds the bundled arm's, so that ``live`` and
the nodes start on machine code. ``--generic`` also compiles the generic numba kernels, which serve what the
written code does not (a state past one of its guards, a call it cannot write out); they otherwise compile in a
background process at their first use (their Python serving meanwhile), once per installation.
"""
import os
import time
from contextlib import contextmanager
from functools import partial

import numpy as np

from .._tuning import cache_root
from ..robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS, bundled_robot_path


def calls(rd, robot, batch):
    """``(name, call)`` for every public call of ``rd`` on ``robot``, at one state (``batch`` 0) or a batch."""
    rng = np.random.default_rng(0)
    shape = (batch,) if batch else ()
    q = rd.random_configuration(robot, rng, size=batch) if batch else rd.random_configuration(robot, rng)
    qd, qdd, qddd = (rng.uniform(-1, 1, shape + (robot.nv,)) for _ in range(3))
    link = robot.link_names[-1]
    wrench = {link: rng.uniform(-1, 1, shape + (6,))}
    data = robot.data()
    joint = robot.joint_names[0]
    elastic = robot.with_drive(stiffness={joint: 100.0}, motor_inertia={joint: 1e-4}, gear_ratio={joint: 10.0})
    return [
        ("inverse_dynamics", lambda: rd.inverse_dynamics(robot, q, qd, qdd, data=data)),
        ("inverse_dynamics (external wrenches)", lambda: rd.inverse_dynamics(robot, q, qd, qdd,
                                                                            external_wrenches=wrench)),
        ("gravity_torques", lambda: rd.gravity_torques(robot, q)),
        ("bias_torques", lambda: rd.bias_torques(robot, q, qd)),
        ("mass_matrix", lambda: rd.mass_matrix(robot, q)),
        ("coriolis_matrix", lambda: rd.coriolis_matrix(robot, q, qd)),
        ("forward_dynamics", lambda: rd.forward_dynamics(robot, q, qd, qdd)),
        ("forward_dynamics (joint wrenches)", lambda: rd.forward_dynamics(robot, q, qd, qdd, joint_wrenches=True,
                                                                         external_wrenches=wrench)),
        ("inverse_dynamics_derivatives", lambda: rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
        ("joint_wrench_derivatives", lambda: rd.joint_wrench_derivatives(robot, q, qd, qdd)),
        ("forward_dynamics_derivatives", lambda: rd.forward_dynamics_derivatives(robot, q, qd, qdd)),
        ("torque_rate", lambda: rd.torque_rate(robot, q, qd, qdd, qddd)),
        ("torque_acceleration", lambda: rd.torque_acceleration(robot, q, qd, qdd, qddd, qd)),
        ("joint_torque_regressor", lambda: rd.joint_torque_regressor(robot, q, qd, qdd)),
        ("forward_kinematics", lambda: rd.forward_kinematics(robot, q)),
        ("frame_placement", lambda: rd.frame_placement(robot, q, link)),
        ("frame_jacobian", lambda: rd.frame_jacobian(robot, q, link)),
        ("frame_velocity", lambda: rd.frame_velocity(robot, q, qd, link)),
        ("frame_acceleration", lambda: rd.frame_acceleration(robot, q, qd, qdd, link)),
        ("center_of_mass", lambda: (rd.center_of_mass(robot, q), rd.center_of_mass(robot, q, qd),
                                    rd.center_of_mass(robot, q, qd, qdd))),
        ("centroidal_momentum", lambda: (rd.centroidal_momentum(robot, q, qd),
                                         rd.centroidal_momentum_matrix(robot, q))),
        ("configuration", lambda: (rd.integrate(robot, q, qd, 0.01), rd.difference(robot, q, q),
                                   rd.normalize(robot, q))),
        ("hybrid_dynamics", lambda: rd.hybrid_dynamics(robot, q, qd, qdd, qddd, known_acceleration=robot.joint_names)),
        ("step", lambda: (rd.step(robot, q, qd, qdd, 0.001), rd.step(robot, q, qd, qdd, 0.001,
                                                                     method="semi_implicit"))),
    ] + [("flexible_simulate", lambda: rd.flexible_simulate(elastic, q, qd, [0.0], [0.0], qdd, 0.001, 0.001))
         ] * (not batch)


def run(robot_path=None, generic=False, simulator=False, out=partial(print, flush=True)):
    """Build the bundled arm's written machine code (fixed and floating base), and with ``generic`` compile every
    generic kernel; prints one line per step with the count. ``simulator``: only the simulator's step
    (:func:`compile_simulator`). Returns the exit code."""
    import rne_dynamics as rd
    from ..algorithms import written
    from ..algorithms.driver import ALGORITHMS

    if simulator:
        compile_simulator(rd, out)
        return 0

    start = time.perf_counter()
    robots = [rd.load_urdf(robot_path or bundled_robot_path(), floating_base=floating) for floating in (False, True)]
    steps = [a for a in ALGORITHMS if not a.extras]
    out(f"building the machine code of {robots[0].name}'s {len(steps)} calls, fixed and floating base "
        f"(once per machine; cached in {written._native.cache_folder()})")
    calls = [(robot, a) for robot in robots for a in steps]
    for robot, algorithm in calls:
        written.written(algorithm, robot)  # traced, and its build started: the builds run in parallel
    for n, (robot, algorithm) in enumerate(calls, 1):
        t = time.perf_counter()
        code = written.written(algorithm, robot, wait=True)
        made = robot.engines.written.get((algorithm, True))  # (None: the step cannot be written out)
        state = "ready" if code is not None else "not written out" if made is None else f"failed: {made.failure}"
        base = "floating" if robot.has_floating_base else "fixed"
        out(f"  [{n:2d}/{len(calls)}] {algorithm.name:<55} {base:<8} {state} ({time.perf_counter() - t:4.1f} s)")
    compile_checks(rd, robots, out)
    if generic:
        compile_generic(rd, robots[1], out)
    out(f"done in {time.perf_counter() - start:.0f} s")
    return 0


@contextmanager
def compiling_here():
    """numba compiles in this process, not in the background process that would end with it: this is the caller
    that wants the kernels."""
    from .. import _compile
    _compile.ON_CALLER = True
    try:
        yield
    finally:
        _compile.ON_CALLER = False


def compile_checks(rd, robots, out):
    """Compile (or load from numba's cache) the small kernels that run in Python around every call: the checks of
    the arguments and ``integrate``, for one state and a batch (a few seconds; their Python costs microseconds a
    state until the background process has compiled them)."""
    from .._jit import numba
    from ..algorithms.inputs import states
    if numba is None:
        return
    t = time.perf_counter()
    with compiling_here():
        for robot in robots:
            for batch in (0, 3):
                rng = np.random.default_rng(0)
                q = rd.random_configuration(robot, rng, size=batch) if batch else rd.random_configuration(robot, rng)
                v = np.zeros(q.shape[:-1] + (robot.nv,))
                states(robot, q=q, v=v)
                rd.integrate(robot, q, v, 0.01)
    out(f"  the argument checks and integrate compiled ({time.perf_counter() - t:.1f} s)")


def compile_simulator(rd, out):
    """Compile (or load from numba's cache) the simulator's step: it runs only as its generic kernel, one for every
    robot (:data:`~rne_dynamics.algorithms.simulate.STEP` has no written code), whose Python costs milliseconds a
    step (3 ms on the bundled arm, 12 ms on a 7-joint arm with a gripper): too slow for 1 kHz. 100 s on this
    project's 2-core VM, once per installation: ``scripts/setup_venv.sh`` runs it in the background."""
    robot = rd.load_urdf(bundled_robot_path())
    rest = np.zeros(robot.nv)
    t = time.perf_counter()
    with compiling_here():
        rd.step(robot, rd.neutral(robot), rest, rest, 0.001)
    out(f"the simulator's step compiled ({time.perf_counter() - t:.1f} s)")


def compile_generic(rd, robot, out):
    """Compile (or load from numba's cache) every generic kernel on ``robot``: one pass over the public calls with
    the written code off."""
    from ..algorithms import written
    from ..algorithms.driver import ALGORITHMS

    out(f"compiling the generic kernels (once per installation; cached in {os.path.join(cache_root(), 'numba')})")
    mode, written.MODE = written.MODE, "0"
    try:
        with compiling_here():
            robot = robot.with_drive()  # a new robot object: none of its calls has written code yet
            passes = [(name + (" batch" if batch else ""), call)
                      for batch in (0, 3) for name, call in calls(rd, robot, batch)]
            platform = rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)
            legs = np.zeros(len(platform.actuated_joint_names))
            passes.append(("closed_loop_inverse_dynamics (Gough-Stewart)",
                           lambda: rd.closed_loop_inverse_dynamics(platform, legs, legs, legs)))
            for n, (name, call) in enumerate(passes, 1):
                t = time.perf_counter()
                call()
                out(f"  [{n:2d}/{len(passes)}] {name:<44} {time.perf_counter() - t:6.1f} s")
    finally:
        written.MODE = mode
    missed = [a.name for a in ALGORITHMS if not getattr(a.single, "signatures", True)]
    if missed:  # driver.ALGORITHMS is the registry: a new algorithm that calls() does not reach is named here
        out(f"not compiled (no call above reaches them; add one here): {', '.join(missed)}")
