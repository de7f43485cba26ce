#!/usr/bin/env python3
"""Time hybrid dynamics and the free-floating inverse model against Pinocchio's ``aba`` (the O(n) call of the same
work) on floating-base robots, same process, same states, the calls taking turns (``bench_dynamics.py``'s method).

    python benchmarks/bench_moving_base.py [--quick] [--robots Talos-ff,ANYmal-ff]

Rows: ``forward_dynamics`` (our ABA, for reference), ``hybrid_dynamics`` with every force known (the ABA's work),
with the base's forces known and the joints' accelerations (Khalil's inverse model with a free base), with half the
joints of known acceleration, and ``free_floating_inverse_dynamics``. Ratio = ours / Pinocchio's ``aba``.
"""
import argparse
import os
import sys

import numpy as np
import pinocchio as pin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dynamics import ROBOTS, Case, median_times  # noqa: E402

import rne_dynamics as rd  # noqa: E402


def rows(case):
    r, q, qd, qdd, tau = case.robot, case.q, case.qd, case.qdd, case.tau
    m, d, pq, pv, pa = case.model, case.data, case.pq, case.pv, case.pa
    base = np.arange(r.nv) < 6
    half = base | (np.arange(r.nv) % 2 == 0)
    none = np.zeros(r.nv, bool)
    return [
        ("forward_dynamics", lambda: rd.forward_dynamics(r, q, qd, tau)),
        ("hybrid_dynamics, all forces", lambda: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=none)),
        ("hybrid_dynamics, free base", lambda: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=~base)),
        ("hybrid_dynamics, half known", lambda: rd.hybrid_dynamics(r, q, qd, qdd, tau, known_acceleration=~half)),
        ("free_floating_inverse_dynamics", lambda: rd.free_floating_inverse_dynamics(r, q, qd, qdd[6:])),
    ], lambda: pin.aba(m, d, pq, pv, pa)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--robots", default="Talos-ff,ANYmal-ff", help="comma-separated subset of " + ", ".join(ROBOTS))
    args = parser.parse_args(argv)
    repeats, inner = (5, 200) if args.quick else (15, 1000)
    print(f"{'robot':<10}{'call':<34}{'ours [us]':>11}{'aba [us]':>10}{'ratio':>8}")
    for label in args.robots.split(","):
        case = Case(label, *ROBOTS[label])
        ours, theirs = rows(case)
        for name, call in ours:
            t_ours, t_pin = median_times([call, theirs], repeats, inner)
            print(f"{label:<10}{name:<34}{t_ours:>11.2f}{t_pin:>10.2f}{t_ours / t_pin:>8.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
