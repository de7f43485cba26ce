#!/usr/bin/env python3
"""Time rne_dynamics against Pinocchio in the same process, same states; print medians and ratios.

    python benchmarks/bench_dynamics.py [--quick] [--robots UR5,Panda,Talos,Talos-ff,ANYmal-ff]

Ratios are ours / Pinocchio's Python call (below 1: we are faster): the median over rounds in which the two calls
take turns, and the spread of the rounds' ratios. Single-state rows time one call in CPU time of the calling thread
(steady when other processes share the machine); the batch rows time, in wall time, our per-state cost on a batch of
10,000 states (on all cores). Talos is
talos_full_v2 (44 moving bodies in both libraries; Pinocchio loads its 12 gripper mimic joints as independent joints,
the same work); so does Panda's finger (Pinocchio's aba and its derivatives refuse mimic joints).

Every call runs the robot's written machine code (``algorithms/written.py``), built or loaded from the disk cache
before the timing (``rd.specialised_data``). Rows marked ``data=`` pass a held ``robot.data()`` (no allocation), the
others allocate their results; ``-ff`` robots have a floating base (free-flyer in both). The batch rows compare our
per-state time with a Python loop of ``rnea`` and with Pinocchio's C++ (estimated). The last rows time a new
process's first torques on the bundled arm (``benchmarks/bench_startup.py`` times empty caches).
"""
import argparse
import os
import platform
import subprocess
import sys
import time
import warnings
from functools import partial

import numba
import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import oracle  # noqa: E402  (the Pinocchio oracle of the tests: paths and state mapping)

import rne_dynamics as rd  # noqa: E402
from rne_dynamics import _compile  # noqa: E402

ROBOTS = {  # label: (URDF, Pinocchio's mimic joints, floating base)
    "UR5": ("ur_description/urdf/ur5_robot.urdf", True, False),
    "Panda": ("panda_description/urdf/panda.urdf", False, False),
    "Talos": ("talos_data/robots/talos_full_v2.urdf", False, False),
    "Talos-ff": ("talos_data/robots/talos_reduced.urdf", False, True),
    "ANYmal-ff": ("anymal_b_simple_description/robots/anymal.urdf", False, True),
}
BATCH = 10_000
#: A median spread of the rounds' ratios above this says another process competed for the cores.
BUSY_SPREAD = 0.10


def round_times(calls, repeats, inner, clock=time.thread_time):
    """Per call, the mean time of ``inner`` calls in each of ``repeats`` rounds, in microseconds ``(calls,
    repeats)``. The calls take turns within each round, so that the machine's load falls on all of them alike."""
    for call in calls:
        call()
    samples = np.empty((len(calls), repeats))
    for r in range(repeats):
        for k, call in enumerate(calls):
            start = clock()
            for _ in range(inner):
                call()
            samples[k, r] = 1e6 * (clock() - start) / inner
    return samples


def median_times(calls, repeats, inner, clock=time.thread_time):
    """Per call, the median over the rounds of :func:`round_times`."""
    return [float(np.median(times)) for times in round_times(calls, repeats, inner, clock)]


def compared(ours, theirs):
    """``(ours, theirs, ratio, spread)`` of two calls' times over the same rounds: their medians, the median of the
    per-round ratios and their spread (the 25th to 75th percentile, as a fraction of the median: a busy machine shows
    here)."""
    ratios = ours / theirs
    ratio = float(np.median(ratios))
    spread = float(np.subtract(*np.percentile(ratios, [75, 25]))) / ratio
    return float(np.median(ours)), float(np.median(theirs)), ratio, spread


def ratio_row(ours, theirs, repeats, inner, clock=time.thread_time):
    """:func:`compared` of the two calls taking turns over ``repeats`` rounds of ``inner`` calls."""
    return compared(*round_times([ours, theirs], repeats, inner, clock))


class Case:
    """One robot in both libraries, with a random state in each one's coordinates."""

    def __init__(self, label, fragment, mimic, floating):
        path = oracle.robot_path(fragment)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.robot = rd.load_urdf(path, floating_base=True) if floating else rd.load_urdf(path)
        self.path = path
        self.model = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=mimic) if floating
                      else pin.buildModelFromUrdf(path, mimic=mimic))
        self.data = self.model.createData()
        rd.specialised_data(self.robot)  # every written call's machine code, built or loaded before the timing
        self.label = label
        rng = np.random.default_rng(1)
        self.q = self.configurations(rng, 1)[0]
        self.qd, self.qdd = (rng.uniform(-1, 1, self.robot.nv) for _ in range(2))
        self.pq = pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq))
        self.pv, self.pa = (rng.uniform(-1, 1, self.model.nv) for _ in range(2))
        self.tau = rd.inverse_dynamics(self.robot, self.q, self.qd, self.qdd).torques
        self.batch = [self.configurations(rng, BATCH)] + [rng.uniform(-1, 1, (BATCH, self.robot.nv)) for _ in range(2)]
        self.pbatch = [(pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq)),
                        rng.uniform(-1, 1, self.model.nv), rng.uniform(-1, 1, self.model.nv)) for _ in range(BATCH)]
        rd.inverse_dynamics(self.robot, *(x[:3] for x in self.batch))  # (a first batch)
        _compile.wait()  # what the warm-up queued for numba's background process, compiled before the timing

    def configurations(self, rng, n):
        """``n`` configurations drawn as Pinocchio's ``randomConfiguration`` between -1 and 1 draws its own: every
        coordinate in [-1, 1], a quaternion (the free-flyer's) uniform on the rotations (the cost of a joint's sine
        depends on its angle: the two libraries get the same spread of angles)."""
        q = rng.uniform(-1, 1, (n, self.robot.nq))
        for start in self.robot.quaternions:
            q[:, start:start + 4] = oracle.random_unit_quaternions(rng, n)
        return q


def single_rows(case):
    """(call name, ours, Pinocchio's name, Pinocchio) for every function both libraries have, each of ours also with
    a held ``data=``."""
    r, m, d = case.robot, case.model, case.data
    q, qd, qdd, tau = case.q, case.qd, case.qdd, case.tau
    pq, pv, pa = case.pq, case.pv, case.pa
    calls = [  # (our call, given its data= argument; Pinocchio's name and call), each written as a user would
        ("inverse_dynamics", lambda data: rd.inverse_dynamics(r, q, qd, qdd, data=data), "rnea",
         lambda: pin.rnea(m, d, pq, pv, pa)),
        ("gravity_torques", lambda data: rd.gravity_torques(r, q, data=data), "computeGeneralizedGravity",
         lambda: pin.computeGeneralizedGravity(m, d, pq)),
        ("bias_torques", lambda data: rd.bias_torques(r, q, qd, data=data), "nonLinearEffects",
         lambda: pin.nonLinearEffects(m, d, pq, pv)),
        ("mass_matrix", lambda data: rd.mass_matrix(r, q, data=data), "crba", lambda: pin.crba(m, d, pq)),
        ("forward_dynamics", lambda data: rd.forward_dynamics(r, q, qd, tau, data=data), "aba",
         lambda: pin.aba(m, d, pq, pv, pa)),
        ("coriolis_matrix", lambda data: rd.coriolis_matrix(r, q, qd, data=data), "computeCoriolisMatrix",
         lambda: pin.computeCoriolisMatrix(m, d, pq, pv)),
        ("inverse_dynamics_derivatives", lambda data: rd.inverse_dynamics_derivatives(r, q, qd, qdd, data=data),
         "computeRNEADerivatives", lambda: pin.computeRNEADerivatives(m, d, pq, pv, pa)),
        ("forward_dynamics_derivatives", lambda data: rd.forward_dynamics_derivatives(r, q, qd, tau, data=data),
         "computeABADerivatives", lambda: pin.computeABADerivatives(m, d, pq, pv, pa)),
        ("joint_torque_regressor", lambda data: rd.joint_torque_regressor(r, q, qd, qdd, data=data),
         "computeJointTorqueRegressor", lambda: pin.computeJointTorqueRegressor(m, d, pq, pv, pa)),
    ]
    held, rows = r.data(), []
    for name, ours, pin_name, theirs in calls:  # (a lambda unpacking *args would add 0.2 us to ours)
        rows.append((name + " data=", partial(ours, held), pin_name, theirs))
        rows.append((name, partial(ours, None), pin_name, theirs))
    return rows


def batch_rows(case, quick):
    """Our per-state time on a batch (wall time, all cores), allocating and with a held ``data=``, against a Python
    loop of ``pinocchio.rnea`` over the same number of states (the three taking turns in each round; the ratios'
    median and spread over the rounds), and Pinocchio's C++ per state, estimated as its Python call less the call
    of ``rnea`` on a model without joints (the binding's own cost)."""
    n = 1000 if quick else BATCH
    q, qd, qdd = (x[:n] for x in case.batch)
    m, d, states = case.model, case.data, case.pbatch[:n]

    def loop():
        for pq, pv, pa in states:
            pin.rnea(m, d, pq, pv, pa)
    held = case.robot.data()
    samples = round_times([lambda: rd.inverse_dynamics(case.robot, q, qd, qdd),
                           lambda: rd.inverse_dynamics(case.robot, q, qd, qdd, data=held), loop],
                          5 if quick else 15, 1, time.perf_counter) / n
    empty = pin.Model()
    empty_data, nothing = empty.createData(), np.zeros(0)
    pq, pv, pa = states[0]
    call, binding = median_times([lambda: pin.rnea(m, d, pq, pv, pa), lambda: pin.rnea(empty, empty_data, nothing,
                                                                                      nothing, nothing)], 7, 2000)
    return [(name, *compared(ours, samples[2]), call - binding)
            for name, ours in (("", samples[0]), (" data=", samples[1]))]


def load_time_ms(path, repeats=5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 1e3 * min(_timed(lambda: rd.load_urdf(path)) for _ in range(repeats))


def _timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def cold_start_s(path, package_root=None):
    """Seconds from a fresh interpreter to the first inverse_dynamics result (import, load, first call), with the
    package at ``package_root`` (default: the installed one)."""
    code = ("import time; t = time.perf_counter(); import numpy as np, rne_dynamics as rd; "
            f"r = rd.load_urdf({path!r}); z = np.zeros(r.dof); rd.inverse_dynamics(r, z, z, z); "
            "print(time.perf_counter() - t)")
    env = dict(os.environ, PYTHONPATH=package_root) if package_root else None
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True,
                         env=env)
    return float(out.stdout.strip())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a 1,000-state batch")
    parser.add_argument("--robots", default=",".join(ROBOTS), help="comma-separated subset of " + ", ".join(ROBOTS))
    parser.add_argument("--no-cold-start", action="store_true", help="skip the cold-start rows")
    args = parser.parse_args(argv)
    repeats, inner = (7, 200) if args.quick else (21, 1000)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, numba {numba.__version__}, pinocchio "
          f"{pin.__version__}, rne_dynamics {rd.__version__}; medians of {repeats} rounds; spread: 25th to 75th "
          "percentile of the rounds' ratios")
    print(f"{'robot':<10}{'call':<48}{'ours [us]':>10}{'pin [us]':>10}{'ratio':>7}{'spread':>8}   pinocchio call")
    spreads = []
    for label in args.robots.split(","):
        case = Case(label, *ROBOTS[label])
        for name, ours, pin_name, theirs in single_rows(case):
            t_ours, t_pin, ratio, spread = ratio_row(ours, theirs, repeats, inner)
            print(f"{label:<10}{name:<48}{t_ours:>10.2f}{t_pin:>10.2f}{ratio:>7.2f}{100 * spread:>7.0f}%   "
                  f"{pin_name}")
            spreads.append(spread)
        for name, t, t_loop, ratio, spread, t_cpp in batch_rows(case, args.quick):
            print(f"{label:<10}{'inverse_dynamics batch' + name:<48}{t:>10.2f}{t_loop:>10.2f}"
                  f"{ratio:>7.2f}{100 * spread:>7.0f}%   python loop of rnea, per state")
            print(f"{label:<10}{'inverse_dynamics batch' + name:<48}{t:>10.2f}{t_cpp:>10.2f}"
                  f"{t / t_cpp:>7.2f}{'':>8}   rnea in C++ (call less binding)")
    if np.median(spreads) > BUSY_SPREAD:
        print(f"warning: the machine is busy (median spread of the ratios {100 * np.median(spreads):.0f}%, above "
              f"{100 * BUSY_SPREAD:.0f}%): these ratios may be off by as much; run again on an idle machine")
    arm = rd.bundled_robot_path()
    talos = oracle.robot_path(ROBOTS["Talos"][0])
    print(f"load_urdf Talos: {load_time_ms(talos):.1f} ms (after the first import)")
    if not args.no_cold_start:
        starts = [cold_start_s(arm) for _ in range(3)]
        print(f"first torques in a new process, machine code cached (rne-dynamics compile): {min(starts):.2f} s "
              f"(best of 3; {max(starts):.2f} s worst)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
