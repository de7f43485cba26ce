#!/usr/bin/env python3
"""Motion planning: solve times with analytic against finite-difference gradients, and rd.retime against toppra.

    NUMBA_NUM_THREADS=1 python benchmarks/bench_planning.py [--repeat 3]

Problems: Barman's 2R minimum time (test_planning.BARMAN_2R, 20 and 32 control points) and the Panda point to
point of test_planning (URDF limits, 20 and 40 control points), one warm-up solve each, then the median wall time of
``--repeat`` solves; "finite-difference" lets scipy's SLSQP difference the objective and constraints (one batch of
inverse dynamics per design variable per gradient), "analytic" uses the planner's chain rule through
``inverse_dynamics_derivatives``. Retiming: the 2R and UR5 straight lines, 500 stages, torque limits only, both
libraries given the same inverse dynamics and the same grid. Wall times depend on the machine and its load; the
kernels' thread pool stalls on a shared, loaded machine, hence ``NUMBA_NUM_THREADS=1``.
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
import rne_dynamics as rd  # noqa: E402
from oracle import load_quietly, robot_path  # noqa: E402
from test_planning import BARMAN_2R, GOAL, PANDA_GOAL, PANDA_START, START  # noqa: E402


def median_time(solve, repeat):
    solve()
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = solve()
        times.append(time.perf_counter() - started)
    return float(np.median(times)), result


def gradients(repeat):
    arm = rd.load_urdf(BARMAN_2R)
    panda = load_quietly(robot_path("panda_description/urdf/panda.urdf"))
    print(f"{'problem':<22}{'gradients':<19}{'T [s]':>9}{'iterations':>12}{'evaluations':>13}{'solve [s]':>11}")
    for label, robot, start, goal, count in (("2R, 20 points", arm, START, GOAL, 20),
                                             ("2R, 32 points", arm, START, GOAL, 32),
                                             ("Panda, 20 points", panda, PANDA_START, PANDA_GOAL, 20),
                                             ("Panda, 40 points", panda, PANDA_START, PANDA_GOAL, 40)):
        for kind in ("analytic", "finite-difference"):
            def solve():
                problem = rd.TrajectoryProblem(robot, start, goal, control_points=count)
                return problem.solve(gradients=kind)
            seconds, result = median_time(solve, repeat)
            print(f"{label:<22}{kind:<19}{result.duration:9.5f}{len(result.history):12d}{result.evaluations:13d}"
                  f"{seconds:11.3f}")


def retiming(repeat):
    import toppra as ta
    ur5 = load_quietly(robot_path("ur_description/urdf/ur5_robot.urdf"))
    print(f"\n{'path':<22}{'rd.retime T [s]':>16}{'toppra T [s]':>14}{'ratio':>10}{'rd [s]':>9}{'toppra [s]':>12}")
    for label, robot, a, b in (("2R line", rd.load_urdf(BARMAN_2R), START, GOAL),
                               ("UR5 line", ur5, np.array([0.0, -1.2, 1.0, -1.0, 0.5, 0.0]),
                                np.array([1.0, -0.6, 0.2, -0.4, -0.5, 1.0]))):
        waypoints = np.array([a, b])
        ours_s, ours = median_time(lambda: rd.retime(robot, waypoints, stages=500,
                                                     velocity_limits=np.full(robot.nv, np.inf)), repeat)

        def theirs():
            torque = ta.constraint.JointTorqueConstraint(
                lambda q, qd, qdd: rd.inverse_dynamics(robot, q, qd, qdd).torques,
                np.column_stack([-robot.effort_limits, robot.effort_limits]), np.zeros(robot.nv))
            path = ta.SplineInterpolator([0, 1], waypoints, bc_type="natural")
            return ta.algorithm.TOPPRA([torque], path, gridpoints=np.linspace(0, 1, 501),
                                       solver_wrapper="seidel").compute_trajectory(0, 0)
        theirs_s, trajectory = median_time(theirs, repeat)
        print(f"{label:<22}{ours.duration:16.6f}{trajectory.duration:14.6f}{ours.duration / trajectory.duration:10.6f}"
              f"{ours_s:9.3f}{theirs_s:12.3f}")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    gradients(args.repeat)
    retiming(args.repeat)


if __name__ == "__main__":
    main()
