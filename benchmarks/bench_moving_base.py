#!/usr/bin/env python3
"""Time hybrid dynamics and the free-floating inverse model against Pinocchio's ``aba`` (the O(n) call of the same
work) on floating-base robots, same process, same states, the calls taking turns (``bench_dynamics.py``'s method:
CPU time of the calling thread, the robot's written machine code built before the timing).

    python benchmarks/bench_moving_base.py [--quick] [--robots Talos-ff,ANYmal-ff]

Rows: ``forward_dynamics`` (our ABA, for reference), ``hybrid_dynamics`` with every force known (the ABA's work),
with the base's forces known and the joints' accelerations (Khalil's inverse model with a free base), with half the
joints of known acceleration, and ``free_floating_inverse_dynamics``; each allocating and with a held ``data=``.
Ratio = ours / Pinocchio's ``aba`` (median of the rounds' ratios); spread: their 25th to 75th percentile.
"""
import argparse
import os
import sys
from functools import partial

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dynamics import BUSY_SPREAD, ROBOTS, Case, ratio_row  # noqa: E402

import rne_dynamics as rd  # noqa: E402
from rne_dynamics.algorithms.hybrid import HYBRID  # noqa: E402
from rne_dynamics.algorithms.written import written  # noqa: E402


def rows(case):
    r, q, qd, qdd, tau = case.robot, case.q, case.qd, case.qdd, case.tau
    m, d, pq, pv, pa = case.model, case.data, case.pq, case.pv, case.pa
    base = np.arange(r.nv) < 6
    half = base | (np.arange(r.nv) % 2 == 0)
    none = np.zeros(r.nv, bool)
    held = r.data()
    calls = [
        ("forward_dynamics", lambda data: rd.forward_dynamics(r, q, qd, tau, data=data)),
        ("hybrid_dynamics, all forces",
         lambda data: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=none, data=data)),
        ("hybrid_dynamics, free base",
         lambda data: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=~base, data=data)),
        ("hybrid_dynamics, half known",
         lambda data: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=~half, data=data)),
        ("free_floating_inverse_dynamics",
         lambda data: rd.free_floating_inverse_dynamics(r, q, qd, qdd[6:], data=data)),
    ]
    for mask in (none, ~base, ~half):  # each mask's written machine code, built or loaded before the timing
        rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=mask)
        written(HYBRID, r, True, (mask,), wait=True)
    rows = []
    for name, call in calls:
        rows.append((name + " data=", partial(call, held)))
        rows.append((name, partial(call, None)))
    return rows, lambda: pin.aba(m, d, pq, pv, pa)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--robots", default="Talos-ff,ANYmal-ff", help="comma-separated subset of " + ", ".join(ROBOTS))
    args = parser.parse_args(argv)
    repeats, inner = (7, 200) if args.quick else (21, 1000)
    print(f"# load average {os.getloadavg()[0]:.1f}; medians of {repeats} rounds of {inner} calls")
    print(f"{'robot':<10}{'call':<40}{'ours [us]':>11}{'aba [us]':>10}{'ratio':>8}{'spread':>8}")
    spreads = []
    for label in args.robots.split(","):
        case = Case(label, *ROBOTS[label])
        ours, theirs = rows(case)
        for name, call in ours:
            t_ours, t_pin, ratio, spread = ratio_row(call, theirs, repeats, inner)
            spreads.append(spread)
            print(f"{label:<10}{name:<40}{t_ours:>11.2f}{t_pin:>10.2f}{ratio:>8.2f}{100 * spread:>7.0f}%")
    if np.median(spreads) > BUSY_SPREAD:
        print(f"warning: the machine is busy (median spread of the ratios {100 * np.median(spreads):.0f}%, above "
              f"{100 * BUSY_SPREAD:.0f}%): these ratios may be off by as much; run again on an idle machine")
    return 0


if __name__ == "__main__":
    sys.exit(main())
