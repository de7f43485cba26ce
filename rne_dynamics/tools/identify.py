"""``rne-dynamics identify`` and ``rne-dynamics excite``: payload and friction from a recording with measured efforts,
and the exciting trajectory to record.

identify: MOTION as ``loads`` reads it (CSV or rosbag2), with a measured effort per joint (``<joint>.effort`` or
``<joint>.torque`` columns; a bag's ``JointState.effort``); velocities and accelerations from the recording when
present, else by the zero-phase local cubic (Savitzky-Golay) fits of ``loads`` over ``--window`` seconds. Writes into
DIR, only once everything is computed: ``identified.yaml`` (estimates and standard deviations), ``parameters.yaml``
(a ROS 2 parameter file for the nodes: ``--params-file``) and ``residuals.png``.

excite: writes ``excitation.csv`` (``time``, then ``<joint>.position``, ``.velocity``, ``.acceleration``,
``.torque``: the ``plan`` layout, readable by ``loads``) sampled every ``--sample-period`` (1 ms), and
``excitation.yaml``, a ``trajectory_msgs/JointTrajectory`` with a point every 10 ms.
"""
import io
import os
import sys
from time import monotonic

import numpy as np
import yaml

from ..algorithms.identification import condition_number, exciting_trajectory, identify, limit_usage
from ..algorithms.rnea import inverse_dynamics
from .inspect_robot import effort_unit, load_robot, print_warnings
from . import loads
from .loads import DEFAULT_TOPIC, DEFAULT_WINDOW, DPI, MotionError, read_motion, window_samples

NO_PAYLOAD_SIGMAS = 2.0  # a payload mass within this many standard deviations of zero is reported as none
YAML_PERIOD = 0.01   # s between the points of excitation.yaml


def run_identify(robot_path, motion_path, *, payload=None, friction=False, output="rne_identified",
                 topic=DEFAULT_TOPIC, window=DEFAULT_WINDOW, print_=print, **source):
    """The ``identify`` command: read, identify, print, then write the three files."""
    robot = load_robot(robot_path, **source)
    print_warnings("identify", robot)
    if payload is None and not friction:
        raise MotionError("nothing to identify: give --payload LINK and/or --friction")
    if payload is not None and payload not in robot.link_names:
        raise MotionError(f"--payload: robot '{robot.name}' has no link '{payload}' (its links: "
                          f"{', '.join(robot.link_names)})")
    motion = read_motion(robot, motion_path, topic=topic, window=window, need_effort=True)
    result = identify(robot, motion.q, motion.qd, motion.qdd, motion.effort, payload=payload, friction=friction)
    figure = residual_figure(robot, motion, result,
                             edge=window_samples(motion.time, window) // 2 if motion.derived else 0)
    identified = yaml.safe_dump(result.as_dict(), sort_keys=False)
    parameters = yaml.safe_dump(node_parameters(robot, result), sort_keys=False)
    derived = f"; {' and '.join(motion.derived)} differentiated (cubic fits over {window:g} s)" if motion.derived \
        else ""
    print_(f"{robot.name}: {len(motion.time)} samples over {motion.time[-1] - motion.time[0]:.3f} s from "
           f"{motion_path}{derived}")
    print_("\n".join(summary_lines(robot, result)))
    write_files(output, {"identified.yaml": identified.encode(), "parameters.yaml": parameters.encode(),
                         "residuals.png": figure}, print_)
    return 0


def write_files(output, files, print_):
    """Every ``{name: bytes}`` into the directory ``output`` (made if missing), then the list of them printed."""
    loads.write_files(output, files)
    print_(f"wrote {', '.join(os.path.join(output, name) for name in files)}")


def summary_lines(robot, result):
    """The estimates with their standard deviations, and the torque residuals before and after."""
    lines = []
    p = result.payload
    if p is not None and p.mass <= NO_PAYLOAD_SIGMAS * p.mass_std:
        lines.append(f"payload on '{p.link}': none found (mass {p.mass:.4f} +- {p.mass_std:.4f} kg is zero within "
                     f"{NO_PAYLOAD_SIGMAS:g} standard deviations; no COM or inertia to estimate)")
    elif p is not None:
        note = " (least squares was not physically consistent: constrained fit)" if p.constrained else ""
        lines += [f"payload on '{p.link}'{note}",
                  f"  mass     {p.mass:.4f} +- {p.mass_std:.4f} kg",
                  "  com      " + "  ".join(f"{v:+.4f} +- {s:.4f}" for v, s in zip(p.com, p.com_std)) + " m",
                  "  inertia  " + "  ".join(f"{n} {v:+.3e} +- {s:.1e}" for n, v, s in
                                            zip(("ixx", "ixy", "ixz", "iyy", "iyz", "izz"), p.inertia,
                                                p.inertia_std)) + " kg m^2 (about the COM, link axes)"]
    if result.friction is not None:
        lines.append(f"{'friction':<24}{'viscous':>22}{'Coulomb':>22}")
        for joint, f in result.friction.items():
            unit = effort_unit(robot.joints[joint].type)
            lines.append(f"  {joint[:22]:<22}{f.viscous:>10.4f} +- {f.viscous_std:<8.4f}"
                         f"{f.coulomb:>10.4f} +- {f.coulomb_std:<8.4f}({unit} s/rad | {unit})")
    lines.append(f"{'torque residual RMS':<24}{'given model':>14}{'identified':>14}")
    for j, joint in enumerate(robot.joint_names):
        unit = effort_unit(robot.joints[joint].type)
        lines.append(f"  {joint[:22]:<22}{result.rms_before[j]:>10.4f} {unit:<3}{result.rms_after[j]:>10.4f} {unit}")
    return lines


def node_parameters(robot, result):
    """A ROS 2 parameter file for both nodes (``--ros-args --params-file parameters.yaml``): ``payload.*`` and
    the friction arrays in ``joint_names`` order."""
    values = {}
    if result.payload is not None:
        p = result.payload
        values |= {"payload.link": p.link, "payload.mass": float(p.mass), "payload.com": p.com.tolist(),
                   "payload.inertia": p.inertia.tolist()}
    if result.friction is not None:
        values["viscous_friction"] = [float(result.friction[j].viscous) for j in robot.joint_names]
        values["coulomb_friction"] = [float(result.friction[j].coulomb) for j in robot.joint_names]
    return {"/**": {"ros__parameters": values}}


def residual_figure(robot, motion, result, edge=0):
    """PNG bytes of :func:`residual_plot`."""
    return png(residual_plot(robot, motion, result, edge))


def residual_plot(robot, motion, result, edge=0):
    """The figure: per joint the measured torque, the identified model's and the residual, against time. ``edge``
    samples at each end are left out (the differentiating filter's one-sided fits there make spikes), and the
    figure says so."""
    shown = slice(edge, len(motion.time) - edge)

    def panel(ax, j, joint, unit):
        ax.plot(motion.time[shown], motion.effort[shown, j], color="0.6", lw=1.0, label="measured")
        ax.plot(motion.time[shown], result.torques[shown, j], color="tab:blue", lw=1.0, label="identified model")
        ax.plot(motion.time[shown], result.residuals[shown, j], color="tab:red", lw=0.8, label="residual")
        ax.set_title(f"{joint}: residual RMS {result.rms_after[j]:.3g} {unit} (given model "
                     f"{result.rms_before[j]:.3g})", fontsize=10)
    trimmed = f"\n(first and last {edge} samples not shown: the differentiating filter's edges)" if edge else ""
    return joint_plot(robot, panel, f"{robot.name}: measured torque against the identified model{trimmed}",
                      "time [s]")


def png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI)
    return buffer.getvalue()


def joint_figure(robot, panel, title, xlabel):
    """PNG bytes of :func:`joint_plot`."""
    return png(joint_plot(robot, panel, title, xlabel))


def joint_plot(robot, panel, title, xlabel):
    """One panel per joint, two per row, drawn by ``panel(ax, j, joint, unit)``; the first panel's legend below."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows = (robot.dof + 1) // 2
    figure = Figure(figsize=(12.0, 0.8 + 2.6 * rows), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(rows, 2, sharex=True, squeeze=False).ravel()
    for j, (ax, joint) in enumerate(zip(axes, robot.joint_names)):
        unit = effort_unit(robot.joints[joint].type)
        panel(ax, j, joint, unit)
        ax.set_ylabel(f"[{unit}]")
        ax.grid(True, alpha=0.3)
    for ax in axes[robot.dof:]:
        ax.set_visible(False)
    for ax in axes[max(0, robot.dof - 2):robot.dof]:
        ax.set_xlabel(xlabel)
        ax.xaxis.set_tick_params(labelbottom=True)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="outside lower center", ncols=len(labels), fontsize=9)
    figure.suptitle(title, fontsize=12)
    return figure


#: Seconds between two progress lines of ``excite`` (a line at most this long after the last; one evaluation of the
#: cost takes well under a second on a 7-joint arm).
PROGRESS_PERIOD = 1.0


def progress_printer(start, iterations, coefficients):
    """``exciting_trajectory``'s ``progress``: the line ``start`` on stderr at its first report (the search's first
    evaluation: every argument has been checked, none is refused after it), then a line once
    :data:`PROGRESS_PERIOD` has passed since the last: the L-BFGS iterations done, the evaluations and the best
    condition number so far; then the steps of the shrinking onto the effort limits."""
    last = [None]

    def progress(state):
        now = monotonic()
        if last[0] is None:
            print(start, file=sys.stderr, flush=True)
            last[0] = now
        if now - last[0] < PROGRESS_PERIOD:
            return
        last[0] = now
        if state.stage == "search":
            line = (f"iteration {state.iteration}/{iterations}, {state.evaluations} evaluations ({coefficients} "
                    f"coefficients), condition number {state.condition:.4g}")
        else:
            line = f"effort limits: step {state.step}/30, amplitude {state.amplitude:.3f} of the searched motion's"
        print(f"  {line}", file=sys.stderr, flush=True)
    return progress


def check_output_directory(output):
    """Refuse an ``--output`` that cannot be made a directory: it, or its nearest existing ancestor, is a file."""
    existing = os.path.abspath(output)
    while not os.path.exists(existing):
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        raise MotionError(f"--output {output}: {existing} is a file, not a directory")


def run_excite(robot_path, *, payload=None, friction=True, period=10.0, harmonics=5, iterations=20, seed=0,
               sample_period=1e-3, acceleration_limits=None, output="rne_excitation", print_=print, **source):
    """The ``excite`` command: the trajectory, its samples, the two files."""
    robot = load_robot(robot_path, **source)
    if robot.dof == 0:
        raise MotionError(f"{robot_path}: robot '{robot.name}' has no movable joint to excite")
    if payload is not None and payload not in robot.link_names:
        raise MotionError(f"--payload: robot '{robot.name}' has no link '{payload}'")
    if sample_period > period:  # one sample of the period: nothing to write
        raise MotionError(f"--sample-period {sample_period:g} s is longer than --period {period:g} s")
    check_output_directory(output)  # before the search's minutes, not after
    start = f"rne-dynamics excite: optimising {harmonics} harmonics per joint over {iterations} iterations..."
    trajectory = exciting_trajectory(robot, period=period, harmonics=harmonics, payload=payload,
                                     friction=friction, seed=seed, iterations=iterations,
                                     acceleration_limits=acceleration_limits,
                                     progress=progress_printer(start, iterations, 2 * robot.dof * (harmonics - 1)))
    time = np.arange(int(round(period / sample_period)) + 1) * sample_period
    q, qd, qdd = trajectory.sample(time)
    tau = inverse_dynamics(robot, q, qd, qdd).torques
    header = ["time"] + [f"{joint}.{quantity}" for joint in robot.joint_names
                         for quantity in ("position", "velocity", "acceleration", "torque")]
    table = np.column_stack([time] + [column for j in range(robot.dof) for column in
                                      (q[:, j], qd[:, j], qdd[:, j], tau[:, j])])
    every = max(1, int(round(YAML_PERIOD / sample_period)))
    points = [{"positions": q[k].tolist(), "velocities": qd[k].tolist(), "accelerations": qdd[k].tolist(),
               "effort": tau[k].tolist(), "time_from_start": {"sec": int(round(time[k] * 1e9)) // 10 ** 9,
                                                              "nanosec": int(round(time[k] * 1e9)) % 10 ** 9}}
              for k in range(0, len(time), every)]
    message = yaml.safe_dump({"joint_names": list(robot.joint_names), "points": points}, sort_keys=False)
    os.makedirs(output, exist_ok=True)
    with open(os.path.join(output, "excitation.csv"), "w", encoding="utf-8") as stream:
        stream.write(",".join(header) + "\n")
        np.savetxt(stream, table, delimiter=",", fmt="%.10g")
    with open(os.path.join(output, "excitation.yaml"), "w", encoding="utf-8") as stream:
        stream.write(message)
    what = f"the payload on '{payload}'" if payload else "the base parameters"
    print_(f"{robot.name}: {harmonics}-harmonic Fourier series, period {period:g} s; condition number "
           f"{condition_number(robot, trajectory, payload=payload, friction=friction):.1f} for {what}"
           f"{' and friction' if friction else ''}; "
           f"{100 * limit_usage(robot, trajectory, time[:-1], margin=1.0, acceleration_limits=acceleration_limits):.0f}"
           "% of the nearest limit")
    print_(f"wrote {os.path.join(output, 'excitation.csv')}, {os.path.join(output, 'excitation.yaml')}")
    return 0
