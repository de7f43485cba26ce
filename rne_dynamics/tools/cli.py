"""The ``rne-dynamics`` command (also ``python -m rne_dynamics``). Errors: one line on stderr, exit code 2."""
import argparse
import os
import sys

from ..errors import ModelError, StateError
from .arguments import at_least, live_options, recording_options, robot_options, robot_source
from .loads import MotionError
from .plan import parse_configuration


def build_parser():
    parser = argparse.ArgumentParser(prog="rne-dynamics",
                                     description="Rigid-body dynamics of URDF robots (recursive Newton-Euler).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    robot = robot_options()
    demo = commands.add_parser("demo", parents=[robot],
                               help="torques, gravity and joint wrenches of the bundled arm along a motion")
    demo.add_argument("robot", nargs="?", help="a URDF or xacro path (default: the bundled 6-DOF arm)")
    inspect = commands.add_parser("inspect", parents=[robot],
                                  help="model summary of a URDF: tree, masses, warnings, gravity envelope")
    inspect.add_argument("robot", metavar="ROBOT", help="a URDF or xacro path")
    inspect.add_argument("--loops", metavar="FILE", default=None,
                         help="the loop file of a closed-chain robot (YAML: actuated joints and loop closures)")
    inspect.add_argument("--samples", type=at_least(1), default=20_000,
                         help="configurations sampled for the gravity torque envelope (default: %(default)s)")
    recording = recording_options()
    loads = commands.add_parser("loads", parents=[robot, recording],
                                help="torques and joint reaction loads along a motion (CSV or rosbag2), "
                                     "with figures")
    loads.add_argument("robot", metavar="ROBOT", help="a URDF or xacro path")
    loads.add_argument("motion", metavar="MOTION", nargs="+",
                       help="a CSV (time, <joint>, optional <joint>.velocity and <joint>.acceleration columns) or a "
                            "rosbag2 (.mcap, .db3 or bag directory); several, a directory of them or a glob: a fleet")
    loads.add_argument("--output", "-o", metavar="DIR", default="rne_loads",
                       help="directory for loads.csv, torques.png, wrenches.png; for a fleet, those of each "
                            "recording in DIR/<recording>/ and summary.csv, summary.yaml (default: %(default)s)")
    loads.add_argument("--drive", metavar="FILE", help="drive terms (rd.load_drive's YAML, e.g. identify --links' "
                       "drive.yaml) applied to ROBOT first")
    plan = commands.add_parser("plan", parents=[robot], help="the fastest (or least-effort) motion between two "
                               "configurations under the URDF's limits: trajectory.csv and figures")
    plan.add_argument("robot", metavar="ROBOT", help="a URDF path")
    plan.add_argument("--from", dest="start", metavar="Q0", required=True, type=parse_configuration,
                      help="start positions, comma-separated, in joint_names order")
    plan.add_argument("--to", dest="goal", metavar="Q1", required=True, type=parse_configuration,
                      help="goal positions, comma-separated")
    plan.add_argument("--objective", choices=("time", "effort"), default="time",
                      help="minimise the duration, or int tau^2 dt over --duration (default: %(default)s)")
    plan.add_argument("--duration", metavar="T", type=at_least(1e-6, float), help="fixed duration in seconds")
    plan.add_argument("--sample-period", metavar="S", type=at_least(1e-6, float), default=1e-3,
                      help="seconds between written samples (default: %(default)s)")
    plan.add_argument("--output", "-o", metavar="DIR", default="rne_plan",
                      help="directory for trajectory.csv and the figures (default: %(default)s)")
    retime = commands.add_parser("retime", parents=[robot], help="a path of joint positions (CSV or a "
                                 "JointTrajectory YAML) in the least time the URDF's limits allow: trajectory.csv")
    retime.add_argument("robot", metavar="ROBOT", help="a URDF or xacro path")
    retime.add_argument("trajectory", metavar="TRAJECTORY", help="a CSV (time, ignored; <joint> or "
                        "<joint>.position columns) or a JointTrajectory YAML (joint_names, points with positions)")
    retime.add_argument("--acceleration-limits", metavar="A", type=parse_configuration, default=None,
                        help="joint acceleration limits, one for every joint or one per joint, comma-separated "
                             "(default: none)")
    retime.add_argument("--sample-period", metavar="S", type=at_least(1e-6, float), default=1e-3,
                        help="seconds between written samples (default: %(default)s)")
    retime.add_argument("--output", "-o", metavar="DIR", default="rne_retime",
                        help="directory for trajectory.csv and torques.png (default: %(default)s)")
    commands.add_parser("benchmark", help="time the library against Pinocchio and print the table",
                        description="Runs benchmarks/bench_dynamics.py of a source checkout; other options are "
                                    "passed to it.")
    commands.add_parser("live", parents=[live_options()],
                        help="the ROS 2 nodes live (pip rclpy is enough): a simulated robot drives the inverse "
                             "dynamics node; prints torques and joint loads")
    identify = commands.add_parser("identify", parents=[robot, recording], help="payload and friction from a "
                                   "recording with measured efforts: estimates, standard deviations, identified.yaml")
    identify.add_argument("robot", metavar="ROBOT", help="a URDF or xacro path")
    identify.add_argument("motion", metavar="MOTION", nargs="+", help="a CSV (time, <joint>, <joint>.effort or "
                          ".torque; optional .velocity and .acceleration) or a rosbag2 of JointState with efforts "
                          "(bag directory, .mcap or .db3); with --links several, a directory of them or a glob")
    identify.add_argument("--links", action="store_true", help="identify every moving link's 10 inertial "
                          "parameters (physically consistent) and write identified.urdf and drive.yaml")
    identify.add_argument("--holdout", type=float, default=0.0, metavar="FRACTION",
                          help="with --links: the last FRACTION of each recording validates instead of fitting")
    identify.add_argument("--coulomb-velocity", type=at_least(0.0, float), default=0.01, metavar="RAD_PER_S",
                          help="with --links --friction: the smooth Coulomb law's velocity, tanh(qd / v); 0: "
                               "sign(qd) (default: %(default)s)")
    identify.add_argument("--regularisation", type=at_least(1e-12, float), default=1e-3, metavar="LAMBDA",
                          help="with --links: the weight of the pull towards ROBOT's inertials where no consistent "
                               "robot has the least-squares base parameters (model errors, noise): larger keeps "
                               "the links nearer the URDF's (default: %(default)s)")
    identify.add_argument("--payload", metavar="LINK", help="identify a payload's 10 inertial parameters on LINK")
    identify.add_argument("--friction", action="store_true", help="identify each joint's viscous and Coulomb friction")
    identify.add_argument("--output", "-o", metavar="DIR", default="rne_identified",
                          help="directory for identified.yaml, parameters.yaml, residuals.png (default: %(default)s)")
    excite = commands.add_parser("excite", parents=[robot], help="an exciting trajectory for identify (Fourier "
                                 "series within the joint limits, regressor condition number minimised)")
    excite.add_argument("robot", metavar="ROBOT", help="a URDF or xacro path")
    excite.add_argument("--payload", metavar="LINK", help="excite a payload on LINK (default: every base parameter)")
    excite.add_argument("--links", action="store_true", help="excite every base parameter of the whole robot (for "
                        "identify --links; the default without --payload)")
    excite.add_argument("--no-friction", dest="friction", action="store_false",
                        help="leave the friction columns out of the condition number")
    excite.add_argument("--acceleration-limits", metavar="A", type=parse_configuration, default=None,
                        help="joint acceleration limits (rad/s^2 or m/s^2), one for every joint or one per joint, "
                             "comma-separated (default: none; the URDF has none)")
    excite.add_argument("--period", type=at_least(0.1, float), default=10.0, help="seconds (default: %(default)s)")
    excite.add_argument("--harmonics", type=at_least(2), default=5, help="per joint (default: %(default)s)")
    excite.add_argument("--iterations", type=at_least(0), default=20,
                        help="optimiser iterations (default: %(default)s)")
    excite.add_argument("--seed", type=at_least(0), default=0, help="of the random start (default: %(default)s)")
    excite.add_argument("--sample-period", type=at_least(1e-6, float), default=1e-3,
                        help="seconds between the CSV's samples (default: %(default)s)")
    excite.add_argument("--output", "-o", metavar="DIR", default="rne_excitation",
                        help="directory for excitation.csv and excitation.yaml (default: %(default)s)")
    flexible = commands.add_parser("flexible", help="the bundled arm with elastic joints, open loop under the rigid "
                                   "and the exact flexible feedforward: worst link errors and a PNG of both")
    flexible.add_argument("--output", "-o", metavar="PNG", default="rne_flexible.png",
                          help="the figure to write (default: %(default)s)")
    compile_ = commands.add_parser("compile", help="build the bundled arm's machine code now, once per machine (the "
                                   "set-up runs it; any other robot's is built at its first calls, in the background)")
    compile_.add_argument("--generic", action="store_true", help="also compile the generic numba kernels (minutes, "
                          "once per installation; they serve the rare states and calls the written code does not)")
    compile_.add_argument("--simulator", action="store_true", help="only the simulator's step (a minute or two, once "
                          "per installation; setup_venv.sh runs it in the background, live runs its Python until then)")
    return parser


def run_compile(args):
    from . import precompile
    return precompile.run(generic=args.generic, simulator=args.simulator)


def run_flexible(args):
    from . import flexible_demo
    return flexible_demo.run(args.output)


def run_identify(args):
    from . import identify
    from .loads import DEFAULT_WINDOW, MotionError, motion_paths
    if args.links:
        from . import identify_links
        return identify_links.run_identify_links(
            args.robot, motion_paths(args.motion), friction=args.friction, holdout=args.holdout,
            coulomb_velocity=args.coulomb_velocity, regularisation=args.regularisation, output=args.output,
            topic=args.topic, window=args.window, scheduler=args.scheduler, workers=args.workers, **robot_source(args))
    if len(args.motion) != 1 or args.scheduler or args.workers:
        raise MotionError("identify --payload/--friction reads one MOTION here (several, --scheduler, --workers: "
                          "--links)")
    return identify.run_identify(args.robot, args.motion[0], payload=args.payload, friction=args.friction,
                                 output=args.output, topic=args.topic, window=args.window or DEFAULT_WINDOW,
                                 **robot_source(args))


def run_excite(args):
    from . import identify
    from .loads import MotionError
    if args.links and args.payload:
        raise MotionError("excite: --links excites the whole robot, --payload one link: give one of them")
    return identify.run_excite(args.robot, payload=args.payload, friction=args.friction, period=args.period,
                               harmonics=args.harmonics, iterations=args.iterations, seed=args.seed,
                               sample_period=args.sample_period, acceleration_limits=args.acceleration_limits,
                               output=args.output, **robot_source(args))


def run_demo(args):
    from . import demo
    return demo.run(*[args.robot] if args.robot else [], **robot_source(args))


def run_inspect(args):
    from . import inspect_robot
    return inspect_robot.run(args.robot, samples=args.samples, loops=args.loops, **robot_source(args))


def run_loads(args):
    from . import loads
    return loads.run(args.robot, args.motion, output=args.output, topic=args.topic,
                     window=args.window or loads.DEFAULT_WINDOW, drive=args.drive, scheduler=args.scheduler,
                     workers=args.workers, **robot_source(args))


def run_plan(args):
    from . import plan
    return plan.run(args.robot, args.start, args.goal, objective=args.objective, duration=args.duration,
                    sample_period=args.sample_period, output=args.output, **robot_source(args))


def run_retime(args):
    from . import retime
    return retime.run(args.robot, args.trajectory, sample_period=args.sample_period,
                      acceleration_limits=args.acceleration_limits, output=args.output, **robot_source(args))


def run_benchmark(args):
    from . import benchmark
    return benchmark.run(args.options)


def run_live(args):
    from . import live_demo
    return live_demo.run(args)


HANDLERS = {"demo": run_demo, "inspect": run_inspect, "loads": run_loads, "benchmark": run_benchmark,
            "live": run_live, "plan": run_plan, "retime": run_retime, "compile": run_compile, "identify": run_identify,
            "excite": run_excite, "flexible": run_flexible}


def main(argv=None):
    parser = build_parser()
    args, options = parser.parse_known_args(argv)
    if options and args.command != "benchmark":  # only the benchmark passes options on (to its suite)
        parser.error(f"unrecognized arguments: {' '.join(options)}")
    args.options = options
    try:
        return HANDLERS[args.command](args)
    except BrokenPipeError:  # the reader stopped early (`| head`): not an error of ours
        sys.stdout = open(os.devnull, "w")
        return 0
    except (ModelError, StateError, MotionError, OSError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"rne-dynamics {args.command}: error: {message}", file=sys.stderr)
        return 2
