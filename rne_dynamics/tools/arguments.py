"""What the commands' parsers share: argparse types (a bounded number, ``NAME:=VALUE``, ``NAME=DIR``,
``JOINT=POSITION``) and the option groups of every command that reads a ROBOT or a recording, and of ``live``."""
import argparse
import math

from ..errors import ModelError
from ..model.xacro_expand import argument_entry, package_entry
from ..robots import DEFAULT_ROBOT


def at_least(minimum, kind=int):
    """An argparse type: a finite number of ``kind`` not below ``minimum``."""
    def parse(text):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a{'n integer' if kind is int else ' number'}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"{value} is not finite")
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{value} is below {minimum}")
        return value
    return parse


def xacro_arg(text):
    """An argparse type: ``name:=value`` (xacro's own command-line form) as ``(name, value)``."""
    return _entry(argument_entry, text)


def package_path(text):
    """An argparse type: ``NAME=DIR`` as ``(NAME, DIR)``, DIR an existing directory."""
    return _entry(package_entry, text)


def _entry(parse, text):
    try:
        return parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def locked_joint(text):
    """An argparse type: ``JOINT=POSITION`` (comma-separated for a joint of several coordinates) as
    ``(JOINT, value)``."""
    name, sep, value = text.partition("=")
    try:
        numbers = [float(x) for x in value.split(",")]
    except ValueError:
        numbers = None
    if not sep or not name or not numbers:
        raise argparse.ArgumentTypeError(f"{text!r} is not JOINT=POSITION")
    return name, numbers[0] if len(numbers) == 1 else numbers


def robot_options(model=True):
    """The options of every command that reads a ROBOT: xacro arguments and package directories; with ``model``,
    locked joints and the inertia check (``live`` passes the description to the nodes, which have neither)."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--xacro-arg", metavar="NAME:=VALUE", type=xacro_arg, action="append", default=[],
                         dest="xacro_args", help="an argument of a xacro ROBOT (repeatable)")
    options.add_argument("--package-path", metavar="NAME=DIR", type=package_path, action="append", default=[],
                         dest="package_paths", help="the share directory of a package that $(find NAME) names, "
                         "where the ament index does not have it (repeatable)")
    if not model:
        return options
    options.add_argument("--lock", metavar="JOINT=POSITION", type=locked_joint, action="append", default=[],
                         dest="locked_joints", help="hold JOINT fixed at POSITION (within its limits), out of the "
                         "model (repeatable, each joint once; comma-separated for a joint of several coordinates)")
    options.add_argument("--check-inertia", choices=("error", "warn"), default="error",
                         help="a link inertia no rigid body has (indefinite): refuse it (default), or load it as "
                         "given with a warning")
    return options


def recording_options():
    """The options of the commands that read a recording (``loads``, ``identify``)."""
    options = argparse.ArgumentParser(add_help=False)
    options.add_argument("--topic", metavar="NAME", default="/joint_states",
                         help="sensor_msgs/JointState topic of a rosbag2 (default: %(default)s)")
    options.add_argument("--window", metavar="SECONDS", type=at_least(1e-6, float),
                         help="time span of the zero-phase local cubic fits that differentiate positions or "
                              "velocities; longer smooths noisy recordings more (default: 0.1 for loads; for "
                              "identify --links chosen from the sampling rate)")
    options.add_argument("--scheduler", metavar="ADDRESS", help="run the recordings on the Dask cluster of this "
                         "scheduler (e.g. tcp://10.0.0.5:8786; its workers must see the recordings' paths); "
                         "default: several recordings on a local cluster of processes, one recording here")
    options.add_argument("--workers", metavar="N", type=at_least(1), help="processes of the local Dask cluster "
                         "(default: one per core, at most one per recording)")
    return options


def robot_source(args):
    """``load_urdf``'s keyword arguments for the ROBOT options of ``args``; a joint locked twice is refused."""
    locked = {}
    for joint, position in args.locked_joints:
        if joint in locked:
            raise ModelError(f"--lock names joint '{joint}' twice ({locked[joint]!r} and {position!r})")
        locked[joint] = position
    return {"xacro_args": dict(args.xacro_args) or None, "package_paths": dict(args.package_paths) or None,
            "locked_joints": locked or None, "check_inertia": args.check_inertia}


def live_options():
    """The options of ``live`` (``rne-dynamics live`` and ``python -m rne_dynamics.tools.live_demo``): a ROBOT with
    its xacro arguments and package directories, the run's duration, the period of its tables and the simulation
    rate."""
    options = argparse.ArgumentParser(add_help=False, parents=[robot_options(model=False)])
    options.add_argument("robot", nargs="?", default=DEFAULT_ROBOT,
                         help="a URDF or xacro path (default: the bundled 6-DOF arm)")
    options.add_argument("--duration", type=at_least(1e-3, float), default=10.0,
                         help="seconds to run (default: %(default)g)")
    options.add_argument("--period", type=at_least(1e-3, float), default=1.0,
                         help="seconds between tables (default: %(default)g)")
    options.add_argument("--rate", type=at_least(1e-3, float), default=100.0,
                         help="simulation rate in Hz (default: %(default)g)")
    return options
