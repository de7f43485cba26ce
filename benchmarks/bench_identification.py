#!/usr/bin/env python3
"""Whole-robot identification: the wall time of ``rd.identify_robot`` on 20,000 simulated samples of the Panda
(7 joints, fingers locked), the issue's target being 10 s.

    python benchmarks/bench_identification.py [--samples 20000] [--repeat 3] [--profile]

The recording: two periods of a random 5-harmonic Fourier motion about the middle of the joint ranges, torques of a
true robot whose every body differs from the URDF (test_robot_identification.true_robot) with viscous, smooth
Coulomb and offset friction, plus 1% noise. One warm-up call (it traces the robot's written code and, without
``RNE_DYNAMICS_JIT=0``, compiles what it needs once per machine), then the median of ``--repeat`` timed calls.
``--unseen`` identifies a Panda whose numbers no cache has seen (a user's robot the first time: the first call
writes its code). ``--profile`` prints cProfile's 25 most expensive functions of one more call. The machine and
its load average are printed with the figure: wall times on a shared machine say little without them.
"""
import argparse
import cProfile
import os
import platform
import pstats
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import rne_dynamics as rd  # noqa: E402
from rne_dynamics.algorithms.regressor import inertial_parameters  # noqa: E402
from rne_dynamics.algorithms.robot_identification import with_inertial_parameters  # noqa: E402
from test_robot_identification import arm, motion, true_robot  # noqa: E402


def recording(samples, unseen):
    robot = arm("panda")
    true, _ = true_robot(robot)
    if unseen:  # a model no cache has seen: its numbers moved by a part in 1e9 (the written code is keyed by them)
        robot = with_inertial_parameters(robot, inertial_parameters(robot) * (1 + 1e-9 * (1 + time.time() % 1)))
    q, qd, qdd = motion(robot, samples)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    tau += 0.01 * np.sqrt(np.mean(tau ** 2, axis=0)) * np.random.default_rng(7).normal(size=tau.shape)
    return robot, (q, qd, qdd, tau)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--unseen", action="store_true", help="identify a robot whose written code no cache holds "
                        "(a user's robot the first time): the first call then writes it")
    args = parser.parse_args(argv)
    robot, data = recording(args.samples, args.unseen)
    mode = "plain Python kernels" if os.environ.get("RNE_DYNAMICS_JIT") == "0" else "compiled"
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}; {mode}; load average "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())} at the start")
    started = time.perf_counter()
    rd.identify_robot(robot, [data], coulomb_velocity=0.02)
    print(f"first call (tracing, compiling where the caches are empty): {time.perf_counter() - started:.2f} s")
    times = []
    for _ in range(args.repeat):
        started = time.perf_counter()
        result = rd.identify_robot(robot, [data], coulomb_velocity=0.02)
        times.append(time.perf_counter() - started)
    print(f"identify_robot, Panda, {args.samples} samples x {robot.nv} joints, {len(result.base.names)} base "
          f"parameters + {3 * robot.nv} friction: median {np.median(times):.2f} s of {args.repeat} "
          f"({', '.join(f'{t:.2f}' for t in times)}); load average {os.getloadavg()[0]:.2f} at the end")
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(rd.identify_robot, robot, [data], coulomb_velocity=0.02)
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
