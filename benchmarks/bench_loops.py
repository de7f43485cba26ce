#!/usr/bin/env python3
"""Time closed-loop inverse dynamics against the open tree's inverse dynamics on the bundled Gough-Stewart platform
(``rd.GOUGH_STEWART``: 6 legs, 21 tree coordinates, 15 loop constraints), warm-started as a controller calls it:
each state's ``q_guess`` is the previous state's closed ``q``. Same process, same states, the calls taking turns
(``bench_dynamics.py``'s method, CPU time of the calling thread).

    python benchmarks/bench_loops.py [--quick]

The closed-loop solve's one machine-code call (``rd.prepare_closed_loop``) is built or loaded before the timing, as
the tree's written code is (``rd.specialised_data``); the header says whether it serves.

Rows: ``closed_loop_inverse_dynamics`` along a smooth leg motion (every state a new actuated state, so Newton
takes its steps) against the tree's ``inverse_dynamics`` of the closed states, with a held ``data=`` and
allocating. Ratio = ours / the tree's; spread: the 25th to 75th percentile of the rounds' ratios.
"""
import argparse
import os
import platform
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dynamics import BUSY_SPREAD, compared, round_times  # noqa: E402

import rne_dynamics as rd  # noqa: E402
from rne_dynamics.robots import GOUGH_STEWART, GOUGH_STEWART_LOOPS  # noqa: E402

#: States of the leg motion: 2 s at 200 Hz.
STATES = 400


def leg_motion(robot, states=STATES, duration=2.0):
    """``(qa, qda, qdda)`` ``(states, 6)``: each leg extends ``3 cm sin(k t)`` (leg ``k``)."""
    t = np.linspace(0.0, duration, states)[:, None]
    k = np.arange(1, len(robot.actuated_joint_names) + 1)
    return 0.03 * np.sin(k * t), 0.03 * k * np.cos(k * t), -0.03 * k ** 2 * np.sin(k * t)


class Motion:
    """The leg motion, its closed tree states (``q``, ``qd``, ``qdd``) and each state's warm start (the previous
    closed ``q``)."""

    def __init__(self, robot):
        self.robot = robot
        self.qa, self.qda, self.qdda = leg_motion(robot)
        first = rd.closed_loop_inverse_dynamics(robot, self.qa[0], self.qda[0], self.qdda[0])
        guess, self.guesses, self.q, self.qd, self.qdd = first.q, [], [], [], []
        for state in zip(self.qa, self.qda, self.qdda):
            result = rd.closed_loop_inverse_dynamics(robot, *state, q_guess=guess)
            self.guesses.append(guess)
            guess = result.q
            self.q.append(result.q)
            self.qd.append(result.qd)
            self.qdd.append(result.qdd)

    def closed_loop(self):
        r, qa, qda, qdda, guesses = self.robot, self.qa, self.qda, self.qdda, self.guesses
        for k in range(STATES):
            rd.closed_loop_inverse_dynamics(r, qa[k], qda[k], qdda[k], q_guess=guesses[k])

    def tree(self, data=None):
        r, q, qd, qdd = self.robot, self.q, self.qd, self.qdd
        for k in range(STATES):
            rd.inverse_dynamics(r, q[k], qd[k], qdd[k], data=data)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args(argv)
    repeats = 7 if args.quick else 21
    robot = rd.load_urdf(GOUGH_STEWART, loops=GOUGH_STEWART_LOOPS)
    rd.specialised_data(robot)  # the written machine code of every call, built or loaded before the timing
    one_call = rd.prepare_closed_loop(robot)  # likewise the closed-loop solve's one call (else its Python serves)
    motion, held = Motion(robot), robot.data()
    print(f"# {platform.machine()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}, Python "
          f"{platform.python_version()}, numpy {np.__version__}; Gough-Stewart: nv {robot.nv}, "
          f"{robot.loops.size} constraints; {STATES} states per round, medians of {repeats} rounds; closed loop "
          f"{'as one machine-code call (states it hands back: the Python solver)' if one_call else 'Python solver'}")
    samples = round_times([motion.closed_loop, lambda: motion.tree(held), motion.tree], repeats, 1) / STATES
    print(f"{'call':<58}{'ours [us]':>10}{'tree [us]':>10}{'ratio':>7}{'spread':>8}")
    spreads = []
    for name, k in (("closed_loop_inverse_dynamics / inverse_dynamics data=", 1),
                    ("closed_loop_inverse_dynamics / inverse_dynamics", 2)):
        ours, tree, ratio, spread = compared(samples[0], samples[k])
        spreads.append(spread)
        print(f"{name:<58}{ours:>10.1f}{tree:>10.2f}{ratio:>7.1f}{100 * spread:>7.0f}%")
    if max(spreads) > BUSY_SPREAD:
        print(f"warning: the machine is busy (spread of the ratios above {100 * BUSY_SPREAD:.0f}%): these ratios may "
              "be off by as much; run again on an idle machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
