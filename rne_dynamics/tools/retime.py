"""``rne-dynamics retime``: a path of joint positions (a CSV, or a ``trajectory_msgs/JointTrajectory`` as YAML, as
``ros2 topic echo`` prints it) in the least time the URDF's effort and velocity limits allow: the ``~/retime`` of the
inverse dynamics node (:mod:`rne_dynamics.nodes.retiming`) on the command line.

The path is the cubic spline through the positions (:class:`rne_dynamics.planning.SplinePath`; the file's times,
velocities and accelerations are not used), timed by :func:`rne_dynamics.retime` (TOPP-RA), at rest at both ends,
its limits verified on a grid of 1 ms (the sample period when finer). Writes ``DIR/trajectory.csv`` in the layout of
``rne-dynamics plan`` (``time``, ``<joint>.position``, ``.velocity``, ``.acceleration``, ``.torque``) and
``DIR/torques.png``. Errors (bad files, a path the limits cannot follow): one line, exit code 2.
"""
import os

import numpy as np
import yaml

from .. import PlanningError, retime
from ..errors import StateError
from ..planning import SplinePath
from .inspect_robot import load_robot
from .loads import POSITION, MotionError, _read_csv, compute_loads, plot_torques
from .plan import write_motion

CHECK_PERIOD = 1e-3  # s


def read_path(robot, path):
    """The waypoints ``(K, nq)`` in ``robot.joint_names`` order from a CSV (a ``time`` column, ignored, and one
    position column per joint, ``<joint>`` or ``<joint>.position``; other quantities ignored) or a JointTrajectory
    YAML (``joint_names`` and ``points`` with ``positions``)."""
    if not os.path.isfile(path):
        raise MotionError(f"{path}: no such file")
    if path.endswith((".yaml", ".yml")):
        return _read_yaml(robot, path)
    columns = _read_csv(robot, path, timed=False)[1]
    missing = [joint for joint in robot.joint_names if (joint, POSITION) not in columns]
    if missing:
        raise MotionError(f"{path}: no position column for joint(s) {', '.join(missing)}")
    return np.column_stack([columns[(joint, POSITION)] for joint in robot.joint_names])


def _read_yaml(robot, path):
    try:
        with open(path, encoding="utf-8") as stream:
            documents = [d for d in yaml.safe_load_all(stream) if d is not None]
    except yaml.YAMLError as exc:
        raise MotionError(f"{path}: not YAML ({str(exc).splitlines()[0]})") from None
    message = documents[0] if documents else None
    if not isinstance(message, dict) or "joint_names" not in message or "points" not in message:
        raise MotionError(f"{path}: expected a JointTrajectory: a map with 'joint_names' and 'points'")
    names = list(message["joint_names"])
    missing = [joint for joint in robot.joint_names if joint not in names]
    if missing:
        raise MotionError(f"{path}: joint_names lacks joint(s) {', '.join(missing)} of robot '{robot.name}'")
    order = [names.index(joint) for joint in robot.joint_names]
    waypoints = []
    for k, point in enumerate(message["points"]):
        positions = point.get("positions") if isinstance(point, dict) else None
        try:
            values = np.asarray(positions, float)
        except (TypeError, ValueError):
            values = None
        if values is None or values.shape != (len(names),) or not np.isfinite(values).all():
            raise MotionError(f"{path}: point {k}: expected {len(names)} finite positions, got {positions!r}")
        waypoints.append(values[order])
    return np.array(waypoints).reshape(len(waypoints), len(robot.joint_names))


def run(robot_path, trajectory_path, *, sample_period=1e-3, acceleration_limits=None, output="rne_retime",
        print_=print, **source):
    """The ``retime`` command: read the path, retime it, write ``trajectory.csv`` and ``torques.png``."""
    robot = load_robot(robot_path, **source)
    if not (np.isfinite(sample_period) and sample_period > 0):
        raise StateError(f"--sample-period must be a positive number of seconds, got {sample_period}")
    waypoints = read_path(robot, trajectory_path)
    if acceleration_limits is not None and len(acceleration_limits) == 1:
        acceleration_limits = np.full(robot.nv, acceleration_limits[0])
    try:
        path = SplinePath(waypoints)
        retimed = retime(robot, path, acceleration_limits=acceleration_limits,
                         check_period=min(sample_period, CHECK_PERIOD))
    except PlanningError as exc:
        raise StateError(f"no timing: {exc}") from None
    except ValueError as exc:
        raise StateError(f"{trajectory_path}: {exc}") from None
    times = retimed.grid(sample_period)
    _, qd, _, tau = values = retimed.sample_with_torques(times)
    motion = write_motion(output, robot, times, values)
    title = f"{robot.name}: the path of {os.path.basename(trajectory_path)} in minimum time, T = " \
            f"{retimed.duration:.4f} s"
    plot_torques(os.path.join(output, "torques.png"), robot, motion, compute_loads(robot, motion), title)
    print_(f"{robot.name}: the path through {len(path.waypoints)} points takes {retimed.duration:.4f} s at the "
           f"limits; largest share of a limit: effort {np.max(np.abs(tau) / robot.effort_limits):.4f}, "
           f"velocity {np.max(np.abs(qd) / robot.velocity_limits):.4f}")
    print_(f"wrote {os.path.join(output, 'trajectory.csv')}, {os.path.join(output, 'torques.png')} "
           f"({len(times)} samples)")
    return 0
