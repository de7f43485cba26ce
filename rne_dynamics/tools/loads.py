"""``rne-dynamics loads``: joint torques, gravity torques and joint reaction loads along a recorded or planned motion.

MOTION is a CSV or a rosbag2.

CSV: a header row, then one row per sample. Columns: ``time`` (s); per joint of the robot, its position ``<joint>``
(or ``<joint>.position``; rad or m), optionally ``<joint>.velocity``, ``<joint>.acceleration`` and the measured
``<joint>.effort`` (or ``<joint>.torque``: ``plan``'s layout; only ``identify`` uses efforts). Columns may come in any
order; every movable joint needs a position column, a column naming anything else is an error. A row written twice
(same time, same values) is one sample; two different rows at one time are refused naming both lines.

rosbag2 (a bag directory, or a ``.mcap`` / ``.db3`` file): ``sensor_msgs/msg/JointState`` messages on ``--topic``
(``/joint_states``), timed by their header stamp (the recording time when stamps are zero), in stamp order. Names
that are not movable joints of the robot (another robot's joints, mimic joints) are ignored, and so are messages
with none of its joints (another driver's); every other message must hold every joint. A message recorded twice
(same stamp, same values) is one sample; two different states at one stamp are refused. Velocities (and efforts)
are used when every message has them. Efforts that are not all finite (a driver's NaN for one it does not sense)
are left unread by ``loads``, which computes the torques, and refused by ``identify`` naming the sample.

Missing velocities and accelerations are derivatives of local cubic fits over ``--window`` seconds (0.1 s by default;
longer for noisy recordings), :func:`smooth_derivatives`, on each side of a gap apart (:func:`between_gaps`), a
continuous joint's angle unwrapped first (a driver may report it within ±pi); accelerations come from the velocities
where those are given.
Outputs in DIR: ``loads.csv`` (per sample: time, the positions, velocities and accelerations used, then per joint the
torque, the gravity torque, the norms of the joint wrench's force and moment, and its 6 components ``force_x`` ...
``moment_z`` (on the child link by its parent, child-link frame, about the joint origin); SI units: rad or m, rad/s
or m/s, N m or N, N), ``torques.png`` and ``wrenches.png``; a summary table on the terminal.

Several MOTIONs (paths, directories, globs: :func:`motion_paths`) are a fleet: one Dask task per recording
(:mod:`~rne_dynamics.tools.fleet`), each one's files in ``DIR/<recording>/`` and the fleet's ``summary.csv`` and
``summary.yaml`` (:func:`write_summary`).
"""
import csv
import glob
import io
import math
import os
import sys
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import yaml

from ..algorithms.gravity import gravity_torques
from ..model.drive import load_drive
from .inspect_robot import effort_unit, load_robot, print_warnings
from ..algorithms.rnea import inverse_dynamics

DEFAULT_TOPIC = "/joint_states"
DEFAULT_WINDOW = 0.1         # s, the time span of each local fit of smooth_derivatives
LONG_INPUT = 20_000          # samples (or messages) from which a progress bar is shown
CHUNK = 2_000                # states per batch call between progress updates
POSITION, VELOCITY, ACCELERATION, EFFORT = "position", "velocity", "acceleration", "effort"
WRENCH_COMPONENTS = ("force_x", "force_y", "force_z", "moment_x", "moment_y", "moment_z")
SUFFIXES = {".position": POSITION, ".velocity": VELOCITY, ".acceleration": ACCELERATION, ".effort": EFFORT,
            ".torque": EFFORT}


class MotionError(ValueError):
    """A motion file that cannot be read as a motion of the robot; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Motion:
    """Samples of a motion in ``robot.joint_names`` order; ``derived``: the quantities that were differentiated."""
    time: np.ndarray           # (N,) s
    q: np.ndarray              # (N, dof)
    qd: np.ndarray
    qdd: np.ndarray
    derived: tuple             # e.g. ("velocity", "acceleration")
    effort: np.ndarray = None  # (N, dof) measured joint efforts, when every joint has them
    window: float = None       # s, the span of the differentiating fits (when something was derived)


@dataclass(frozen=True)
class Loads:
    """Per sample and joint: torque and gravity torque (N m or N), joint wrench force (N) and moment (N m) norms."""
    torques: np.ndarray
    gravity_torques: np.ndarray
    force_norms: np.ndarray
    moment_norms: np.ndarray
    joint_wrenches: np.ndarray  # (N, dof, 6) [fx fy fz tx ty tz] in N and N m


class Progress:
    """A one-line progress bar on stderr, shown only for inputs of at least :data:`LONG_INPUT` items."""

    def __init__(self, label, total):
        self.label, self.total = label, total
        self.shown = total >= LONG_INPUT

    def update(self, done):
        if self.shown:
            filled = int(30 * done / self.total)
            bar = "#" * filled + " " * (30 - filled)
            sys.stderr.write(f"\r{self.label:<24}[{bar}] {100 * done / self.total:3.0f}%")
            if done >= self.total:
                sys.stderr.write("\n")
            sys.stderr.flush()


def window_samples(t, window):
    """The odd number of samples (at least 5) that spans about ``window`` seconds at the median sampling step."""
    return max(5, 2 * round(window / float(np.median(np.diff(t))) / 2) + 1)


def rate_window(time, cutoff=10.0):
    """``(window in s, cutoff in Hz, rate in Hz)``: the span of local cubic fits whose -3 dB frequency, about
    ``(N + 1) / (3.2 M - 4.6)`` of Nyquist for ``M`` samples and order ``N = 3`` (Schafer, IEEE Signal Processing
    Magazine 2011), is ``min(cutoff, rate / 5)`` at the median sampling rate; at least 5 samples."""
    rate = 1.0 / float(np.median(np.diff(time)))
    cutoff = min(cutoff, rate / 5)
    samples = max(5, int(round((rate / cutoff + 4.6) / 3.2)) | 1)
    return (samples - 1) / rate, cutoff, rate


def between_gaps(t, samples):
    """Slices of the sample times ``t`` between their gaps, each differentiated on its own: a step longer than a
    fit of ``samples`` spans at the median step (a paused recording, a driver's dropout), which a fit across would
    bridge with one cubic; a piece of fewer than ``samples`` stays with its neighbour."""
    span = (samples - 1) * float(np.median(np.diff(t)))
    cuts = [0]
    for k in np.flatnonzero(np.diff(t) > span) + 1:
        if k - cuts[-1] >= samples and len(t) - k >= samples:
            cuts.append(int(k))
    return [slice(a, b) for a, b in zip(cuts, cuts[1:] + [len(t)])]


def smooth_derivatives(t, y, samples):
    """First and second time derivatives of ``y`` ``(N, m)`` sampled at increasing times ``t`` ``(N,)``.

    A Savitzky-Golay filter for uneven sampling: at each sample, a cubic in time is fitted by least squares to the
    ``samples`` nearest samples (shifted inwards at the ends, so the ends are not forced flat); its derivatives at
    that sample are the estimates. Exact for cubic motions; noise is averaged over the window.
    """
    n = len(t)
    start = np.clip(np.arange(n) - samples // 2, 0, n - samples)
    neighbours = start[:, None] + np.arange(samples)                      # (N, samples)
    half_span = 0.5 * (t[neighbours[:, -1]] - t[neighbours[:, 0]])
    x = (t[neighbours] - t[:, None]) / half_span[:, None]                 # local time, about [-1, 1]
    V = x[..., None] ** np.arange(4)                                      # (N, samples, 4) Vandermonde
    VT = V.transpose(0, 2, 1)
    fit = np.linalg.solve(np.einsum("nkw,nwl->nkl", VT, V), VT)[:, 1:3]  # slope and curvature rows of (V^T V)^-1 V^T
    windows = y[neighbours]
    return (np.einsum("nw,nwm->nm", fit[:, 0], windows) / half_span[:, None],
            2 * np.einsum("nw,nwm->nm", fit[:, 1], windows) / half_span[:, None] ** 2)


def read_motion(robot, path, *, topic=DEFAULT_TOPIC, window=DEFAULT_WINDOW, show_progress=True, need_effort=False):
    """The motion in ``path`` (CSV or rosbag2) as a :class:`Motion` of ``robot``, derivatives filled in over
    ``window`` seconds (None: :func:`rate_window`'s); ``show_progress``: a bar for a long bag (not on a worker);
    ``need_effort``: a measured effort of every joint in every sample, else a :class:`MotionError` (``identify``)."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise MotionError(f"{path}: no such file or directory")
    if os.path.isdir(path) and not os.path.isfile(os.path.join(path, "metadata.yaml")):
        raise MotionError(f"{path}: a directory but not a rosbag2 (it has no metadata.yaml)")
    if os.path.isdir(path) or path.endswith((".mcap", ".db3")):
        time, columns = _read_bag(robot, path, topic, show_progress, need_effort)
    else:
        time, columns = _read_csv(robot, path, need_effort)
    efforts = [values for (_, quantity), values in columns.items() if quantity == EFFORT]
    if not need_effort and not all(np.isfinite(values).all() for values in efforts):  # a driver's NaN for an effort
        columns = {key: values for key, values in columns.items() if key[1] != EFFORT}  # it does not sense: unread
    motion = _complete(robot, path, time, columns, window)
    if need_effort and motion.effort is None:
        raise MotionError(f"{path}: no measured effort for every joint (CSV columns <joint>.effort or "
                          "<joint>.torque; a bag's JointState.effort): nothing to identify from")
    return motion


def repeated_samples(time, samples):
    """``(repeated, clash)`` of samples at ``time`` in the order read: ``repeated``, the indices of those equal to
    the one before at the same time (one sample recorded twice: dropped), and ``clash``, the first pair of indices
    of two different samples at one time (refused), or None. ``samples[k]``: sample ``k``'s values, a sequence of
    numbers or arrays (None for a field it lacks); a NaN equals a NaN (a driver's, recorded twice)."""
    def same(a, b):
        return a is b or (a is not None and b is not None and np.array_equal(a, b, equal_nan=True))
    repeated = np.flatnonzero(np.diff(time) == 0) + 1
    for k in repeated:
        if not all(map(same, samples[k - 1], samples[k])):
            return repeated, (int(k - 1), int(k))
    return repeated, None


def _read_csv(robot, path, need_effort=True, timed=True):
    """``time`` and ``{(joint, quantity): values}`` from a CSV, every value checked (efforts only if needed); a row
    repeated at one time is one sample, two different rows at one time are refused (:func:`repeated_samples`)
    unless not ``timed`` (retime's waypoints: time ignored)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as stream:  # -sig: spreadsheets write a byte-order mark
            rows = [row for row in csv.reader(stream) if row]
    except UnicodeDecodeError:
        raise MotionError(f"{path}: not a text CSV file (expected a CSV or a rosbag2 .mcap/.db3/directory)") from None
    if not rows:
        raise MotionError(f"{path}: the file is empty; expected a header row 'time,<joint>,...'")
    header = [name.strip() for name in rows[0]]
    if "time" not in header:
        raise MotionError(f"{path}: the header row {','.join(header)[:80]!r} has no 'time' column")
    keys = {}
    for name in header:
        if name == "time":
            continue
        joint, dot, suffix = name.rpartition(".")
        joint, quantity = (joint, SUFFIXES[dot + suffix]) if dot + suffix in SUFFIXES else (name, POSITION)
        if joint not in robot.joint_names:
            raise MotionError(f"{path}: column '{name}' names no movable joint of robot '{robot.name}' "
                              f"(its joints: {', '.join(robot.joint_names)})")
        if (joint, quantity) in keys.values():
            raise MotionError(f"{path}: two columns give the {quantity} of joint '{joint}'")
        keys[name] = (joint, quantity)
    if len(set(header)) != len(header):
        raise MotionError(f"{path}: the header row repeats a column name")
    unread = {name for name, (_, quantity) in keys.items() if quantity == EFFORT and not need_effort}
    values = np.empty((len(rows) - 1, len(header)))
    for r, row in enumerate(rows[1:]):
        if len(row) != len(header):
            raise MotionError(f"{path}: line {r + 2} has {len(row)} fields, the header {len(header)}")
        for c, text in enumerate(row):
            try:
                values[r, c] = float(text)
            except ValueError:
                raise MotionError(f"{path}: line {r + 2}, column '{header[c]}': {text!r} is not a number") from None
            if not math.isfinite(values[r, c]) and header[c] not in unread:
                raise MotionError(f"{path}: line {r + 2}, column '{header[c]}': {text!r} is not finite")
    repeated, clash = repeated_samples(values[:, header.index("time")], values) if timed else ([], None)
    if clash:
        raise MotionError(f"{path}: lines {clash[0] + 2} and {clash[1] + 2} have the same time "
                          f"({float(values[clash[1], header.index('time')])!r} s) but different values")
    values = np.delete(values, repeated, axis=0)
    columns = {key: values[:, header.index(name)] for name, key in keys.items()}
    return values[:, header.index("time")], columns


def _read_bag(robot, path, topic, show_progress=True, need_effort=False):
    """``time`` (s from the first message) and ``{(joint, quantity): values}`` from the JointState messages; with
    ``need_effort``, a message without efforts among others with them is refused by its number."""
    from rosbags.highlevel import AnyReader, AnyReaderError
    from rosbags.rosbag2 import ReaderError
    from rosbags.typesys import Stores, get_typestore

    try:
        with AnyReader([Path(path)], default_typestore=get_typestore(Stores.LATEST)) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                topics = ", ".join(sorted({c.topic for c in reader.connections})) or "none"
                raise MotionError(f"{path}: no topic '{topic}' in the bag (its topics: {topics}); choose one with "
                                  "--topic")
            kinds = {c.msgtype for c in connections}
            if kinds != {"sensor_msgs/msg/JointState"}:
                raise MotionError(f"{path}: topic '{topic}' carries {', '.join(sorted(kinds))}, not "
                                  "sensor_msgs/msg/JointState")
            total = sum(c.msgcount for c in connections)
            progress = Progress(f"reading {topic}", total if show_progress else 0)
            stamps, positions, velocities, efforts, numbers = [], [], [], [], []
            for k, (connection, recorded, raw) in enumerate(reader.messages(connections=connections)):
                msg = reader.deserialize(raw, connection.msgtype)
                index = {name: i for i, name in enumerate(msg.name)}
                missing = [name for name in robot.joint_names if name not in index]
                if len(missing) == robot.dof:
                    continue  # another driver's joints only (a gripper's, another robot's): no state of this robot
                if missing or len(msg.position) != len(msg.name):
                    what = (f"no position for joint '{missing[0]}' (a joint another driver publishes: each "
                            "message must carry every joint; --lock JOINT=POSITION holds one out of the model)"
                            if missing else "fewer positions than names")
                    raise MotionError(f"{path}: message {k} on '{topic}' has {what}")
                order = [index[name] for name in robot.joint_names]
                stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
                stamps.append((stamp, recorded))
                numbers.append(k)
                positions.append(np.asarray(msg.position)[order])
                velocities.append(np.asarray(msg.velocity)[order] if len(msg.velocity) == len(msg.name) else None)
                efforts.append(np.asarray(msg.effort)[order] if len(msg.effort) == len(msg.name) else None)
                for quantity, values in ((POSITION, positions), (VELOCITY, velocities), (EFFORT, efforts)):
                    if values[-1] is not None and not np.isfinite(values[-1]).all() and (need_effort or
                                                                                         quantity != EFFORT):
                        j = int(np.flatnonzero(~np.isfinite(values[-1]))[0])  # by its number: the bag's order
                        raise MotionError(f"{path}: message {k} on '{topic}': the {quantity} of joint "
                                          f"'{robot.joint_names[j]}' is {values[-1][j]}")
                if k % 1000 == 0:
                    progress.update(k)
            progress.update(total)
    except (AnyReaderError, ReaderError) as exc:
        raise MotionError(f"{path}: cannot read the rosbag2 ({' '.join(str(exc).split())})") from None  # one line
    if not stamps:
        raise MotionError(f"{path}: topic '{topic}' has no message with a joint of robot '{robot.name}'")
    stamps = np.array(stamps, dtype=np.int64)
    ns = stamps[:, 0] if np.all(stamps[:, 0] > 0) else stamps[:, 1]
    order = np.argsort(ns, kind="stable")  # a bag keeps arrival order; the stamps say when each state was measured
    repeated, clash = repeated_samples(ns[order], [(positions[i], velocities[i], efforts[i]) for i in order])
    if clash:
        first, second, stamp = numbers[order[clash[0]]], numbers[order[clash[1]]], int(ns[order[clash[1]]])
        raise MotionError(f"{path}: messages {first} and {second} on '{topic}' have the same stamp "
                          f"({stamp // 10 ** 9}.{stamp % 10 ** 9:09d} s) but different joint states")
    order = np.delete(order, repeated)
    columns = {(joint, POSITION): column for joint, column in zip(robot.joint_names, np.array(positions)[order].T)}
    for quantity, values in ((VELOCITY, velocities), (EFFORT, efforts)):
        if all(v is not None for v in values):
            columns.update({(joint, quantity): column
                            for joint, column in zip(robot.joint_names, np.array(values)[order].T)})
        elif quantity == EFFORT and need_effort and any(v is not None for v in values):
            first = next(numbers[i] for i, v in enumerate(values) if v is None)
            raise MotionError(f"{path}: message {first} on '{topic}' has no effort for "
                              f"every joint, though {sum(v is not None for v in values)} of {len(values)} have")
    return (ns[order] - ns[order[0]]) * 1e-9, columns


def _complete(robot, path, time, columns, window):
    """Check the samples and fill in missing velocities and accelerations."""
    missing = [joint for joint in robot.joint_names if (joint, POSITION) not in columns]
    if missing:
        raise MotionError(f"{path}: no position for joint(s) {', '.join(missing)} of robot '{robot.name}'")
    for (joint, quantity), values in columns.items():
        if not np.all(np.isfinite(values)):
            raise MotionError(f"{path}: the {quantity} of joint '{joint}' is not finite at sample "
                              f"{np.flatnonzero(~np.isfinite(values))[0]}")
    if len(time) < 2:
        raise MotionError(f"{path}: {len(time)} sample(s); a motion needs at least 2")
    if not np.all(np.isfinite(time)):
        raise MotionError(f"{path}: a time is not finite")
    steps = np.diff(time)
    if np.any(steps <= 0):
        k = int(np.flatnonzero(steps <= 0)[0])
        raise MotionError(f"{path}: time does not increase at sample {k + 1} ({float(time[k])!r} then "
                          f"{float(time[k + 1])!r})")
    derived = []
    arrays = {}
    for quantity in (POSITION, VELOCITY, ACCELERATION):
        given = [(joint, quantity) in columns for joint in robot.joint_names]
        arrays[quantity] = np.array([columns.get((joint, quantity), np.zeros(len(time)))
                                     for joint in robot.joint_names]).T.reshape(len(time), robot.dof)
        if not all(given):
            derived.append(quantity)
    if derived and len(time) < 5:
        raise MotionError(f"{path}: {len(time)} samples; differentiating needs at least 5 "
                          "(or give every <joint>.velocity and <joint>.acceleration column)")
    if derived:
        window = rate_window(time)[0] if window is None else window
        samples = min(window_samples(time, window), len(time) - 1 + len(time) % 2)
        pieces = between_gaps(time, samples)
        angles = arrays[POSITION].copy()
        turning = [j for j, joint in enumerate(robot.joint_names) if robot.joints[joint].type == "continuous"]
        angles[:, turning] = np.unwrap(angles[:, turning], axis=0)  # a driver's angle wrapped to ±pi: no 2 pi jump
        qd, qdd_from_q = (np.concatenate(parts) for parts in zip(*(
            smooth_derivatives(time[piece], angles[piece], samples) for piece in pieces)))
        has_velocities = any((joint, VELOCITY) in columns for joint in robot.joint_names)
        qdd_from_qd = np.concatenate([smooth_derivatives(time[piece], arrays[VELOCITY][piece], samples)[0]
                                      for piece in pieces]) if has_velocities else None
        for j, joint in enumerate(robot.joint_names):
            has_qd = (joint, VELOCITY) in columns
            if not has_qd:
                arrays[VELOCITY][:, j] = qd[:, j]
            if (joint, ACCELERATION) not in columns:
                arrays[ACCELERATION][:, j] = qdd_from_qd[:, j] if has_qd else qdd_from_q[:, j]
    effort = None
    if all((joint, EFFORT) in columns for joint in robot.joint_names):
        effort = np.array([columns[(joint, EFFORT)] for joint in robot.joint_names]).T.reshape(len(time), robot.dof)
    return Motion(time, arrays[POSITION], arrays[VELOCITY], arrays[ACCELERATION], tuple(derived), effort,
                  window if derived else None)


def compute_loads(robot, motion, show_progress=True):
    """Inverse dynamics along the motion in batches of :data:`CHUNK` states (with a progress bar when long and
    ``show_progress``)."""
    n = len(motion.time)
    torques, gravity = np.empty((n, robot.dof)), np.empty((n, robot.dof))
    wrenches = np.empty((n, robot.dof, 6))
    progress = Progress("inverse dynamics", n if show_progress else 0)
    for start in range(0, n, CHUNK):
        part = slice(start, min(start + CHUNK, n))
        result = inverse_dynamics(robot, motion.q[part], motion.qd[part], motion.qdd[part])
        torques[part], wrenches[part] = result.torques, result.joint_wrenches
        gravity[part] = gravity_torques(robot, motion.q[part])
        progress.update(part.stop)
    return Loads(torques, gravity, np.linalg.norm(wrenches[..., :3], axis=-1),
                 np.linalg.norm(wrenches[..., 3:], axis=-1), wrenches)


def write_csv(stream, robot, motion, loads):
    """``loads.csv`` into the text ``stream``: ``time``, then per quantity one column per joint,
    ``<joint>.<quantity>``."""
    groups = [(POSITION, motion.q), (VELOCITY, motion.qd), (ACCELERATION, motion.qdd), ("torque", loads.torques),
              ("gravity_torque", loads.gravity_torques), ("force_norm", loads.force_norms),
              ("moment_norm", loads.moment_norms)]
    groups += [(name, loads.joint_wrenches[..., k]) for k, name in enumerate(WRENCH_COMPONENTS)]
    header = ["time"] + [f"{joint}.{quantity}" for quantity, _ in groups for joint in robot.joint_names]
    table = np.column_stack([motion.time] + [values for _, values in groups])
    stream.write(",".join(header) + "\n")
    np.savetxt(stream, table, delimiter=",", fmt="%.10g")


#: Per joint, the statistics of :func:`statistics` (the columns of the fleet's ``summary.csv``, SI units;
#: ``*_share``: the peak as a fraction of the limit, 1 at the limit; position: ``1 - closest approach / half range``).
STATISTICS = ("peak_torque", "rms_torque", "effort_limit", "effort_share", "time_over_limit", "peak_velocity",
              "velocity_limit", "velocity_share", "position_share", "peak_force", "peak_moment")
LIMITS = {"effort_share": "effort", "velocity_share": "velocity", "position_share": "position"}


def statistics(robot, motion, loads):
    """``{name: (nv,) array}`` of :data:`STATISTICS` along the motion (NaN for a share where there is no limit)."""
    def share(peak, limit):
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(np.isfinite(limit) & (limit > 0), peak / limit, np.nan)
    peak = np.abs(loads.torques).max(axis=0)
    dt = np.gradient(motion.time) if len(motion.time) > 1 else np.zeros(1)
    velocity = np.abs(motion.qd).max(axis=0)
    lower, upper = robot.position_limits.T
    closest = np.minimum(motion.q - lower, upper - motion.q).min(axis=0)
    return {"peak_torque": peak, "rms_torque": np.sqrt(np.mean(loads.torques ** 2, axis=0)),
            "effort_limit": robot.effort_limits, "effort_share": share(peak, robot.effort_limits),
            "time_over_limit": dt @ _over_limit(loads.torques, robot.effort_limits),
            "peak_velocity": velocity, "velocity_limit": robot.velocity_limits,
            "velocity_share": share(velocity, robot.velocity_limits),
            "position_share": 1.0 - share(closest, (upper - lower) / 2),
            "peak_force": loads.force_norms.max(axis=0), "peak_moment": loads.moment_norms.max(axis=0)}


def summary(robot, motion, loads):
    """The terminal table: per joint peak and RMS torque, the effort limit, peak % of it, time above it."""
    numbers = statistics(robot, motion, loads)
    limits = robot.effort_limits
    lines = [f"{'joint':<24}{'peak |tau|':>12}{'RMS tau':>10}{'limit':>9}{'peak/limit':>12}{'time over':>11}"
             f"{'peak |F|':>10}{'peak |M|':>10}",
             f"{'':<24}{'(N m | N)':>12}{'':>10}{'':>9}{'(%)':>12}{'limit (s)':>11}{'(N)':>10}{'(N m)':>10}"]
    for j, joint in enumerate(robot.joint_names):
        limit = f"{limits[j]:9.1f}" if np.isfinite(limits[j]) else f"{'none':>9}"
        share = numbers["effort_share"][j]
        share = f"{100 * share:11.0f}%" if np.isfinite(share) else f"{'-':>12}"
        flag = "  OVER" if numbers["effort_share"][j] > 1 else ""
        lines.append(f"{joint[:23]:<24}{numbers['peak_torque'][j]:12.2f}{numbers['rms_torque'][j]:10.2f}{limit}"
                     f"{share}{numbers['time_over_limit'][j]:11.2f}{numbers['peak_force'][j]:10.1f}"
                     f"{numbers['peak_moment'][j]:10.1f}{flag}")
    return "\n".join(lines)


def _over_limit(torques, limits):
    return np.abs(torques) > np.where(limits > 0, limits, np.inf)


# Figures: fixed pixel sizes (tests check them); drawn on Agg canvases without pyplot's global state.
DPI = 100
TORQUES_WIDTH_IN, TORQUES_TOP_IN, TORQUES_ROW_IN = 12.0, 0.8, 2.6
WRENCHES_SIZE_IN = (12.0, 7.0)
OFF_SCALE = 0.25   # a torque panel whose peak is below this share of the limit is scaled to the torque


def torques_figure_size(dof):
    """``(width, height)`` in pixels of ``torques.png``: two panels per row."""
    rows = (dof + 1) // 2
    return int(TORQUES_WIDTH_IN * DPI), int(round((TORQUES_TOP_IN + TORQUES_ROW_IN * rows) * DPI))


def plot_torques(path, robot, motion, loads, title):
    """One panel per joint: torque and gravity torque against time, the effort limit, exceedances shaded."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    width, height = torques_figure_size(robot.dof)
    figure = Figure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    rows = (robot.dof + 1) // 2
    axes = figure.subplots(rows, 2, sharex=True, squeeze=False).ravel()
    limits = robot.effort_limits
    over = _over_limit(loads.torques, limits)
    t = motion.time
    for j, (ax, joint) in enumerate(zip(axes, robot.joint_names)):
        unit = effort_unit(robot.joints[joint].type)
        ax.plot(t, loads.torques[:, j], color="tab:blue", lw=1.4, label="torque")
        ax.plot(t, loads.gravity_torques[:, j], color="tab:green", lw=1.2, ls="--", label="gravity torque")
        peak = np.abs(loads.torques[:, j]).max()
        if np.isfinite(limits[j]) and limits[j] > 0:
            bottom, top = ax.get_ylim()
            off_scale = peak < OFF_SCALE * limits[j]
            for sign in (1, -1):
                ax.axhline(sign * limits[j], color="tab:red", lw=1.2, ls=":",
                           label=None if off_scale else "effort limit (±)")
            if over[:, j].any():  # the excess itself, and a band over its times to catch the eye
                clipped = np.clip(loads.torques[:, j], -limits[j], limits[j])
                ax.fill_between(t, loads.torques[:, j], clipped, where=over[:, j], interpolate=True,
                                color="tab:red", alpha=0.6, lw=0, label="above the effort limit")
                ax.fill_between(t, 0, 1, where=over[:, j], transform=ax.get_xaxis_transform(), color="tab:red",
                                alpha=0.12, lw=0)
            if off_scale:  # keep the torque readable: the limit stays off the axis
                ax.set_ylim(bottom, top)
            ax.set_title(f"{joint}: peak {peak:.3g} {unit} = {100 * peak / limits[j]:.0f}% of the "
                         f"{limits[j]:g} {unit} limit{' (off scale)' if off_scale else ''}", fontsize=10)
        else:
            ax.set_title(f"{joint}: peak {peak:.3g} {unit} (no effort limit)", fontsize=10)
        ax.set_ylabel(f"{'force' if unit == 'N' else 'torque'} [{unit}]")
        ax.grid(True, alpha=0.3)
    for ax in axes[robot.dof:]:
        ax.set_visible(False)
    for ax in axes[max(0, robot.dof - 2):robot.dof]:  # the lowest visible panel of each column
        ax.set_xlabel("time [s]")
        ax.xaxis.set_tick_params(labelbottom=True)
    entries = {}
    for ax in axes[:robot.dof]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(label, handle)
    figure.legend(entries.values(), entries.keys(), loc="outside lower center", ncols=len(entries), fontsize=9)
    figure.suptitle(title, fontsize=12)
    figure.savefig(path, dpi=DPI)


def plot_wrenches(path, robot, motion, loads, title):
    """Joint reaction force and moment norms against time, one line per joint."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=WRENCHES_SIZE_IN, dpi=DPI, layout="constrained")
    FigureCanvasAgg(figure)
    force_ax, moment_ax = figure.subplots(2, 1, sharex=True)
    for j, joint in enumerate(robot.joint_names):
        force_ax.plot(motion.time, loads.force_norms[:, j], lw=1.3, label=joint)
        moment_ax.plot(motion.time, loads.moment_norms[:, j], lw=1.3, label=joint)
    force_ax.set_title("reaction force across each joint, |f| (on the child link, by its parent)", fontsize=10)
    force_ax.set_ylabel("force norm [N]")
    moment_ax.set_title("reaction moment about each joint origin, |n| (includes the joint torque)", fontsize=10)
    moment_ax.set_ylabel("moment norm [N m]")
    moment_ax.set_xlabel("time [s]")
    for ax in (force_ax, moment_ax):
        ax.grid(True, alpha=0.3)
        ax.set_ylim(bottom=0)
    figure.legend(*force_ax.get_legend_handles_labels(), loc="outside right center", fontsize=9, title="joint")
    figure.suptitle(title, fontsize=12)
    figure.savefig(path, dpi=DPI)


def motion_paths(arguments):
    """The recordings named by ``arguments``: paths, globs (``*``, ``?``, ``[``) and directories that are not a
    bag (their CSV, ``.mcap`` and ``.db3`` files and bag directories), in order, each once."""
    paths = []
    for argument in arguments:
        if any(c in argument for c in "*?["):
            found = sorted(glob.glob(argument))
            if not found:
                raise MotionError(f"{argument}: no file matches")
        elif os.path.isdir(argument) and not os.path.isfile(os.path.join(argument, "metadata.yaml")):
            found = sorted(os.path.join(argument, name) for name in os.listdir(argument)
                           if name.endswith((".csv", ".mcap", ".db3"))
                           or os.path.isfile(os.path.join(argument, name, "metadata.yaml")))
            if not found:
                raise MotionError(f"{argument}: a directory with no recording (CSV, .mcap, .db3 or bag directory)")
        else:
            found = [argument]
        paths += [path for path in found if path not in paths]
    return paths


@dataclass(frozen=True)
class RecordingLoads:
    """One recording's outcome: ``files`` ``{name: bytes}`` (``loads.csv`` and the figures), ``numbers``
    (:func:`statistics`), the printout's ``heading`` and ``table``."""
    path: str
    samples: int
    duration: float
    numbers: dict
    heading: str
    table: str
    files: dict


def recording_loads(path, *, robot, topic=DEFAULT_TOPIC, window=DEFAULT_WINDOW, show_progress=True):
    """Read the recording at ``path``, compute its loads, draw its figures: a :class:`RecordingLoads` (one task of
    a fleet)."""
    motion = read_motion(robot, path, topic=topic, window=window, show_progress=show_progress)
    loads = compute_loads(robot, motion, show_progress)
    text = io.StringIO()
    write_csv(text, robot, motion, loads)
    files = {"loads.csv": text.getvalue().encode()}
    title = f"{robot.name} along {os.path.basename(os.path.normpath(path))}"
    for name, plot in (("torques.png", plot_torques), ("wrenches.png", plot_wrenches)):
        figure = io.BytesIO()
        plot(figure, robot, motion, loads, title)
        files[name] = figure.getvalue()
    derived = f"; {' and '.join(motion.derived)} differentiated (cubic fits over {window:g} s)" if motion.derived \
        else ""
    duration = float(motion.time[-1] - motion.time[0])
    return RecordingLoads(path, len(motion.time), duration, statistics(robot, motion, loads),
                          f"{robot.name}: {len(motion.time)} samples over {duration:.3f} s from {path}{derived}",
                          summary(robot, motion, loads), files)


def recording_names(paths):
    """A directory name per recording, unique: its path from the recordings' common directory, ``/`` as ``__``,
    without the extension unless two would then be the same."""
    absolute = [os.path.abspath(p) for p in paths]
    root = os.path.commonpath([os.path.dirname(p) for p in absolute])
    names = [os.path.relpath(p, root).replace(os.sep, "__") for p in absolute]
    stems = [os.path.splitext(name)[0] for name in names]
    return [stem if stems.count(stem) == 1 else name for name, stem in zip(names, stems)]


def recording_results(paths, scheduler=None, workers=None, **task):
    """``(index, RecordingLoads)`` of every path as it is done: here for a single recording, else (or with a
    ``scheduler``) one Dask task each (:mod:`~rne_dynamics.tools.fleet`)."""
    from . import fleet
    from ..algorithms.robot_identification import shared

    if not fleet.use_cluster(paths, scheduler):
        yield 0, recording_loads(paths[0], **task)
        return
    with fleet.dask_client(scheduler, workers, len(paths)) as client:
        futures = client.map(recording_loads, [os.path.abspath(p) for p in paths], pure=False, show_progress=False,
                             **shared(client, **task))
        yield from fleet.as_completed(client, futures)


def write_files(directory, files):
    """Every ``{name: bytes}`` into ``directory`` (made if missing)."""
    os.makedirs(directory, exist_ok=True)
    for name, content in files.items():
        with open(os.path.join(directory, name), "wb") as stream:
            stream.write(content)


def write_summary(output, robot, names, results):
    """The fleet's ``summary.csv`` (one row per recording and joint: :data:`STATISTICS`) and ``summary.yaml``
    (``nearest_limits``: per joint the recording where it came nearest a limit, which limit and the share, nearest
    first; ``recordings``: name, path, samples, duration); returns the printed lines."""
    rows = [[name, joint, r.samples, r.duration] + [r.numbers[key][j] for key in STATISTICS]
            for name, r in zip(names, results) for j, joint in enumerate(robot.joint_names)]
    with open(os.path.join(output, "summary.csv"), "w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(["recording", "joint", "samples", "duration"] + list(STATISTICS))
        writer.writerows([row[:4] + [f"{x:.10g}" for x in row[4:]] for row in rows])
    nearest = []
    for j, joint in enumerate(robot.joint_names):
        shares = np.array([[r.numbers[key][j] for key in LIMITS] for r in results])   # (recordings, limits)
        if np.isnan(shares).all():
            continue
        k, kind = np.unravel_index(np.nanargmax(shares), shares.shape)
        nearest.append({"joint": joint, "recording": names[k], "limit": list(LIMITS.values())[kind],
                        "share": float(shares[k, kind])})
    nearest.sort(key=lambda entry: -entry["share"])
    document = {"recordings": [{"name": name, "path": r.path, "samples": r.samples, "duration": r.duration}
                               for name, r in zip(names, results)], "nearest_limits": nearest}
    with open(os.path.join(output, "summary.yaml"), "w", encoding="utf-8") as stream:
        yaml.safe_dump(document, stream, sort_keys=False)
    lines = [f"{'recording':<32}{'samples':>9}{'duration':>10}  peak |tau| / effort limit (worst joint)"]
    for name, r in zip(names, results):
        share = r.numbers["effort_share"]
        worst = f"{100 * np.nanmax(share):.0f}% {robot.joint_names[int(np.nanargmax(share))]}" \
            if not np.isnan(share).all() else "no effort limit"
        lines.append(f"{name[:31]:<32}{r.samples:9d}{r.duration:9.2f}s  {worst}")
    lines.append("joints nearest their limits (peak / limit; position: 1 - closest approach / half range):")
    lines += [f"  {e['joint'][:23]:<24}{100 * e['share']:6.0f}% of its {e['limit']} limit in {e['recording']}"
              for e in nearest]
    return lines


def run(robot_path, motions, output="rne_loads", topic=DEFAULT_TOPIC, window=DEFAULT_WINDOW, print_=print,
        drive=None, scheduler=None, workers=None, **source):
    """The ``loads`` command: read, compute, write ``loads.csv`` and the two figures, print the summary.
    ``motions``: a path, or paths, directories and globs (:func:`motion_paths`): several recordings go through
    Dask (``scheduler``, ``workers``: :func:`~rne_dynamics.tools.fleet.dask_client`), each one's files in
    ``DIR/<name>/`` (:func:`recording_names`), and ``DIR/summary.csv`` and ``summary.yaml``
    (:func:`write_summary`). ``drive``: a drive file (:func:`~rne_dynamics.load_drive`) applied to the robot
    first."""
    paths = motion_paths([motions] if isinstance(motions, (str, os.PathLike)) else motions)
    robot = load_robot(robot_path, **source)
    if drive is not None:
        robot = load_drive(robot, drive)
    if robot.dof == 0:
        raise MotionError(f"{robot_path}: robot '{robot.name}' has no movable joint, so no joint loads")
    print_warnings("loads", robot)
    names = recording_names(paths)
    results = [None] * len(paths)
    for done, (k, result) in enumerate(recording_results(paths, scheduler, workers, robot=robot, topic=topic,
                                                         window=window), start=1):
        directory = output if len(paths) == 1 else os.path.join(output, names[k])
        write_files(directory, result.files)
        if len(paths) == 1:
            print_(f"{result.heading}\n{result.table}")
            print_(f"wrote {', '.join(os.path.join(output, f) for f in result.files)}")
            return 0
        print_(f"[{done}/{len(paths)}] {result.heading}; wrote {directory}")
        results[k] = replace(result, files=None)
    print_("\n".join(write_summary(output, robot, names, results)))
    print_(f"wrote {os.path.join(output, 'summary.csv')}, {os.path.join(output, 'summary.yaml')}")
    return 0
