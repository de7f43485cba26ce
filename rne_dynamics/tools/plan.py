"""``rne-dynamics plan``: the fastest (or least-effort) motion between two configurations under the URDF's limits.

Solves :func:`rne_dynamics.plan` (B-spline trajectory optimisation, minimum time or minimum ``int tau^2 dt``) and
writes into DIR:

- ``trajectory.csv``: ``time``, then per quantity one column per joint: ``<joint>.position``, ``<joint>.velocity``,
  ``<joint>.acceleration`` (the exact derivatives of the planned spline at the sample times) and ``<joint>.torque``
  (its inverse dynamics), sampled every ``--sample-period`` seconds (1 ms by default) from 0 to the duration; the
  layout ``rne-dynamics loads`` reads.
- ``positions.png`` (positions, and velocities as a share of their limits), ``torques.png`` (torques against the
  effort limits, as ``loads`` draws them) and ``convergence.png`` (duration, objective and constraint violation per
  solver iteration).

The limits (position, velocity, effort) are verified on a grid of at most 1 ms (the written samples when finer).
Errors (bad arguments, no feasible motion): one line, exit code 2.
"""
import os
import sys
import time

import numpy as np

from .. import PlanningError, plan
from ..errors import StateError
from .inspect_robot import load_robot
from .loads import DPI, Motion, compute_loads, plot_torques

QUANTITIES = ("position", "velocity", "acceleration", "torque")


def parse_configuration(text):
    """An argparse type: comma-separated numbers."""
    try:
        return np.array([float(v) for v in text.replace(" ", "").split(",") if v], float)
    except ValueError:
        import argparse
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of numbers") from None


def run(robot_path, start, goal, *, objective="time", duration=None, sample_period=1e-3, output="rne_plan",
        print_=print, **source):
    """The ``plan`` command: plan, check, write ``trajectory.csv`` and the figures, print the summary."""
    robot = load_robot(robot_path, **source)
    if robot.nq != robot.nv or robot.nq == 0:
        what = "no movable joint" if robot.nq == 0 else "a joint of several coordinates"
        raise StateError(f"{robot_path}: robot '{robot.name}' has {what}; plan needs one coordinate per joint")
    for flag, q in (("--from", start), ("--to", goal)):
        if len(q) != robot.nq:
            raise StateError(f"{flag}: {len(q)} values for the {robot.nq} joints of '{robot.name}' "
                             f"({', '.join(robot.joint_names)})")
    if not (np.isfinite(sample_period) and sample_period > 0):
        raise StateError(f"--sample-period must be a positive number of seconds, got {sample_period}")
    if objective == "effort" and duration is None:
        raise StateError("--objective effort needs --duration (effort alone falls as the motion slows)")
    progress = Progress(sys.stderr)
    try:
        planned = plan(robot, start, goal, objective=objective, duration=duration, progress=progress,
                       check_period=min(sample_period, 1e-3))
    except PlanningError as exc:
        raise StateError(f"no plan: {exc}") from None
    finally:
        progress.close()
    times = planned.grid(sample_period)
    motion = write_motion(output, robot, times, planned.sample(times))
    title = f"{robot.name}: {'minimum time' if objective == 'time' else 'minimum effort'}, T = " \
            f"{planned.duration:.4f} s"
    plot_positions(os.path.join(output, "positions.png"), robot, planned, motion, title)
    plot_torques(os.path.join(output, "torques.png"), robot, motion, compute_loads(robot, motion), title)
    plot_convergence(os.path.join(output, "convergence.png"), planned, title)
    gap = f", within ~{100 * planned.time_gap:.1f}% of the minimum time" if np.isfinite(planned.time_gap) else ""
    print_(f"{robot.name}: {objective} optimal motion of {planned.duration:.4f} s{gap}; effort "
           f"int tau^2 dt = {planned.effort:.4g}; {len(planned.history)} iterations in {planned.solve_time:.2f} s")
    print_(f"limits: {planned.check}")
    print_(f"wrote {', '.join(os.path.join(output, f) for f in FILES)} ({len(times)} samples)")
    return 0


FILES = ("trajectory.csv", "positions.png", "torques.png", "convergence.png")


def write_motion(output, robot, times, values):
    """``output/trajectory.csv`` (:func:`write_csv`) of ``values`` ``(q, qd, qdd, tau)`` at ``times``, the directory
    made if needed; the samples as a :class:`~rne_dynamics.tools.loads.Motion` for the figures."""
    os.makedirs(output, exist_ok=True)
    write_csv(os.path.join(output, "trajectory.csv"), robot, times, values)
    return Motion(times, *values[:3], ())


def write_csv(path, robot, times, values):
    """``time``, then per quantity of :data:`QUANTITIES` one column per joint, ``<joint>.<quantity>``."""
    header = ["time"] + [f"{joint}.{quantity}" for quantity in QUANTITIES for joint in robot.joint_names]
    with open(path, "w", newline="", encoding="utf-8") as stream:
        stream.write(",".join(header) + "\n")
        np.savetxt(stream, np.column_stack([times, *values]), delimiter=",", fmt="%.17g")


class Progress:
    """The solver's progress on ``stream`` (a plan takes minutes), each line saying which solve it is in (the
    refinement's control points; the check round after nodes were added) since the iterations count from 1 in each:
    on a terminal one line rewritten at every iteration, a new line for each solve; elsewhere (a log, a pipe) a line
    at the first iteration of each solve and then at most every :data:`PERIOD` s."""
    PERIOD = 5.0

    def __init__(self, stream):
        self.stream, self.terminal, self.last, self.solve = stream, stream.isatty(), None, None

    def __call__(self, item):
        solve = (item.control_points, item.check_round)
        check = f", check round {item.check_round}" if item.check_round else ""
        line = (f"plan: {item.control_points} control points{check}: iteration {item.iteration:4d}  "
                f"T = {item.duration:.5f} s  objective {item.objective:.6g}  violation {item.violation:.1e}")
        now = time.monotonic()
        new_solve, self.solve = solve != self.solve, solve
        if self.terminal:
            if new_solve and self.last is not None:
                self.stream.write("\n")  # the last solve's final line stays
            self.stream.write(f"\r{line}   ")
        elif new_solve or now - self.last >= self.PERIOD:
            self.stream.write(line + "\n")
        else:
            return
        self.last = now
        self.stream.flush()

    def close(self):
        if self.terminal and self.last is not None:
            self.stream.write("\n")


def _figure(size):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=size, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    return figure


def plot_positions(path, robot, planned, motion, title):
    """Joint positions against time; velocities as a percentage of their limits."""
    figure = _figure((12.0, 7.0))
    position_ax, velocity_ax = figure.subplots(2, 1, sharex=True)
    velocity_limits = planned.limits.velocity
    for j, joint in enumerate(robot.joint_names):
        position_ax.plot(motion.time, motion.q[:, j], lw=1.4, label=joint)
        if np.isfinite(velocity_limits[j]):
            velocity_ax.plot(motion.time, 100 * motion.qd[:, j] / velocity_limits[j], lw=1.4, label=joint)
    position_ax.set_ylabel("position [rad | m]")
    position_ax.set_title("joint positions", fontsize=10)
    velocity_ax.set_ylabel("velocity [% of limit]")
    velocity_ax.set_title("joint velocities against their limits", fontsize=10)
    for sign in (1, -1):
        velocity_ax.axhline(100 * sign, color="tab:red", lw=1.2, ls=":")
    velocity_ax.set_xlabel("time [s]")
    for ax in (position_ax, velocity_ax):
        ax.grid(True, alpha=0.3)
    figure.legend(*position_ax.get_legend_handles_labels(), loc="outside right center", fontsize=9, title="joint")
    figure.suptitle(title, fontsize=12)
    figure.savefig(path, dpi=DPI)


def plot_convergence(path, planned, title):
    """Per solver iteration: the duration, the objective and the largest constraint violation (log scale)."""
    figure = _figure((10.0, 6.0))
    duration_ax, violation_ax = figure.subplots(2, 1, sharex=True)
    k = np.arange(1, len(planned.history) + 1)
    duration_ax.plot(k, [item.duration for item in planned.history], "o-", ms=3, label="duration T [s]")
    objective_ax = duration_ax.twinx()
    objective_ax.plot(k, [item.objective for item in planned.history], "s--", ms=3, color="tab:orange",
                      label="objective")
    duration_ax.set_ylabel("duration T [s]")
    objective_ax.set_ylabel("objective")
    violation_ax.semilogy(k, [max(item.violation, 1e-16) for item in planned.history], "o-", ms=3,
                          color="tab:red")
    violation_ax.set_ylabel("largest violation\n[fraction of the limit]")
    violation_ax.set_xlabel("solver iteration (all refinements)")
    for ax in (duration_ax, violation_ax):
        ax.grid(True, alpha=0.3)
    figure.legend(*[a + b for a, b in zip(duration_ax.get_legend_handles_labels(),
                                           objective_ax.get_legend_handles_labels())], loc="outside lower center",
                  ncols=2, fontsize=9)
    figure.suptitle(title, fontsize=12)
    figure.savefig(path, dpi=DPI)
