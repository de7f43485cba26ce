#!/usr/bin/env python3
"""Time rne_dynamics against Pinocchio in the same process, same states; print medians and ratios.

    python benchmarks/bench_dynamics.py [--quick] [--robots UR5,Panda,Talos,Talos-ff,ANYmal-ff]

Ratios are ours / Pinocchio's Python call (below 1: we are faster). Single-state rows time one call in CPU time of
the calling thread (steady when other processes share the machine); the batch row compares, in wall time, our
per-state cost on a batch of 10,000 states (on all cores) with a Python loop of ``pinocchio.rnea``. Talos is
talos_full_v2 (44 moving bodies in both libraries; Pinocchio loads its 12 gripper mimic joints as independent joints,
the same work); so does Panda's finger (Pinocchio's aba and its derivatives refuse mimic joints).

The "call floor" row is the least a numba kernel with inverse dynamics' arguments costs from Python (allocating the
results and calling a compiled function that returns at once): no wrapper of a numba kernel can beat it. Rows marked
``data=`` pass a held ``robot.data()`` (no allocation); ``-ff`` robots have a floating base (free-flyer in both).
"""
import argparse
import os
import platform
import subprocess
import sys
import time
import warnings

import numba
import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import oracle  # noqa: E402  (the Pinocchio oracle of the tests: paths and state mapping)

import rne_dynamics as rd  # noqa: E402

ROBOTS = {  # label: (URDF, Pinocchio's mimic joints, floating base)
    "UR5": ("ur_description/urdf/ur5_robot.urdf", True, False),
    "Panda": ("panda_description/urdf/panda.urdf", False, False),
    "Talos": ("talos_data/robots/talos_full_v2.urdf", False, False),
    "Talos-ff": ("talos_data/robots/talos_reduced.urdf", False, True),
    "ANYmal-ff": ("anymal_b_simple_description/robots/anymal.urdf", False, True),
}
BATCH = 10_000


def median_times(calls, repeats, inner, clock=time.thread_time):
    """Per call, the median over ``repeats`` rounds of the mean time of ``inner`` calls, in microseconds. The calls
    take turns within each round, so that the machine's load falls on all of them alike."""
    for call in calls:
        call()
    samples = [[] for _ in calls]
    for _ in range(repeats):
        for call, times in zip(calls, samples):
            start = clock()
            for _ in range(inner):
                call()
            times.append((clock() - start) / inner)
    return [1e6 * float(np.median(times)) for times in samples]


@numba.njit(nogil=True)
def no_op(fdata, idata, q, qd, qdd, gravity, f_ext, drives, tau, wrench, base):
    """A compiled call that does nothing, with the arguments of ``rd.inverse_dynamics``'s kernel."""
    return True


def call_floor(case):
    """The least any numba-compiled inverse dynamics can cost from Python: allocate the three results and call
    :func:`no_op` with the kernel's arguments; no checks, no arithmetic."""
    r, q, qd, qdd = case.robot, case.q, case.qd, case.qdd
    gravity, f_ext = np.array([0.0, 0.0, -9.81]), np.zeros((0, 6))

    def floor():
        tau, wrench, base = np.empty(r.nv), np.empty((len(r.joint_names), 6)), np.empty(6)
        no_op(r.fdata, r.idata, q, qd, qdd, gravity, f_ext, True, tau, wrench, base)
    return floor


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
        self.label = label
        rng = np.random.default_rng(1)
        self.q = rd.random_configuration(self.robot, rng) if floating else rng.uniform(-1, 1, self.robot.nq)
        self.qd, self.qdd = (rng.uniform(-1, 1, self.robot.nv) for _ in range(2))
        self.pq = pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq))
        self.pv, self.pa = (rng.uniform(-1, 1, self.model.nv) for _ in range(2))
        self.tau = rd.inverse_dynamics(self.robot, self.q, self.qd, self.qdd).torques
        self.batch = ([rd.random_configuration(self.robot, rng, size=BATCH)] if floating
                      else [rng.uniform(-1, 1, (BATCH, self.robot.nq))])
        self.batch += [rng.uniform(-1, 1, (BATCH, self.robot.nv)) for _ in range(2)]
        self.pbatch = [(pin.randomConfiguration(self.model, -np.ones(self.model.nq), np.ones(self.model.nq)),
                        rng.uniform(-1, 1, self.model.nv), rng.uniform(-1, 1, self.model.nv)) for _ in range(BATCH)]


def single_rows(case):
    """(call name, ours, Pinocchio's name, Pinocchio) for every function both libraries have, each of ours also with
    a held ``data=``."""
    r, m, d = case.robot, case.model, case.data
    q, qd, qdd, tau = case.q, case.qd, case.qdd, case.tau
    pq, pv, pa = case.pq, case.pv, case.pa
    calls = [  # (our function, its state arguments, Pinocchio's name, Pinocchio's call)
        (rd.inverse_dynamics, (q, qd, qdd), "rnea", lambda: pin.rnea(m, d, pq, pv, pa)),
        (rd.gravity_torques, (q,), "computeGeneralizedGravity", lambda: pin.computeGeneralizedGravity(m, d, pq)),
        (rd.bias_torques, (q, qd), "nonLinearEffects", lambda: pin.nonLinearEffects(m, d, pq, pv)),
        (rd.mass_matrix, (q,), "crba", lambda: pin.crba(m, d, pq)),
        (rd.forward_dynamics, (q, qd, tau), "aba", lambda: pin.aba(m, d, pq, pv, pa)),
        (rd.coriolis_matrix, (q, qd), "computeCoriolisMatrix", lambda: pin.computeCoriolisMatrix(m, d, pq, pv)),
        (rd.inverse_dynamics_derivatives, (q, qd, qdd), "computeRNEADerivatives",
         lambda: pin.computeRNEADerivatives(m, d, pq, pv, pa)),
        (rd.forward_dynamics_derivatives, (q, qd, tau), "computeABADerivatives",
         lambda: pin.computeABADerivatives(m, d, pq, pv, pa)),
        (rd.joint_torque_regressor, (q, qd, qdd), "computeJointTorqueRegressor",
         lambda: pin.computeJointTorqueRegressor(m, d, pq, pv, pa)),
    ]
    held = r.data()
    rows = [("call floor (see call_floor)", call_floor(case), "rnea", calls[0][3])]
    for function, args, pin_name, theirs in calls:
        rows.append((function.__name__, lambda f=function, a=args: f(r, *a), pin_name, theirs))
        rows.append((function.__name__ + " data=", lambda f=function, a=args: f(r, *a, data=held), pin_name, theirs))
    return rows


def batch_row(case, quick):
    n = 1000 if quick else BATCH
    q, qd, qdd = (x[:n] for x in case.batch)
    m, d, states = case.model, case.data, case.pbatch[:n]

    def loop():
        for pq, pv, pa in states:
            pin.rnea(m, d, pq, pv, pa)
    ours, theirs = median_times([lambda: rd.inverse_dynamics(case.robot, q, qd, qdd), loop], 3 if quick else 5, 1,
                                time.perf_counter)
    return ours / n, theirs / n


def load_time_ms(path, repeats=5):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return 1e3 * min(_timed(lambda: rd.load_urdf(path)) for _ in range(repeats))


def _timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def cold_start_s(path):
    """Seconds from a fresh interpreter to the first inverse_dynamics result (import, load, first call)."""
    code = ("import time; t = time.perf_counter(); import numpy as np, rne_dynamics as rd; "
            f"r = rd.load_urdf({path!r}); z = np.zeros(r.dof); rd.inverse_dynamics(r, z, z, z); "
            "print(time.perf_counter() - t)")
    out = subprocess.run([sys.executable, "-W", "ignore", "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats and a 1,000-state batch")
    parser.add_argument("--robots", default=",".join(ROBOTS), help="comma-separated subset of " + ", ".join(ROBOTS))
    parser.add_argument("--no-cold-start", action="store_true", help="skip the cold-start row")
    args = parser.parse_args(argv)
    repeats, inner = (5, 200) if args.quick else (15, 1000)
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}, pinocchio {pin.__version__}, "
          f"rne_dynamics {rd.__version__}")
    print(f"{'robot':<7}{'call':<30}{'ours [us]':>11}{'pinocchio [us]':>16}{'ratio':>8}   pinocchio call")
    for label in args.robots.split(","):
        case = Case(label, *ROBOTS[label])
        for name, ours, pin_name, theirs in single_rows(case):
            t_ours, t_pin = median_times([ours, theirs], repeats, inner)
            print(f"{label:<7}{name:<30}{t_ours:>11.2f}{t_pin:>16.2f}{t_ours / t_pin:>8.2f}   {pin_name}")
        t_ours, t_pin = batch_row(case, args.quick)
        print(f"{label:<7}{'inverse_dynamics batch/state':<30}{t_ours:>11.2f}{t_pin:>16.2f}{t_ours / t_pin:>8.2f}"
              "   python loop of rnea")
    talos = oracle.robot_path(ROBOTS["Talos"][0])
    cold = "" if args.no_cold_start else f"; cold start to first torques: {cold_start_s(talos):.2f} s"
    print(f"load_urdf Talos: {load_time_ms(talos):.1f} ms (after the first import){cold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
