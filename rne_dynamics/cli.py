"""The ``rne-dynamics`` command (also ``python -m rne_dynamics``). Errors: one line on stderr, exit code 2."""
import argparse
import sys

from .errors import ModelError, StateError


def build_parser():
    parser = argparse.ArgumentParser(prog="rne-dynamics",
                                     description="Rigid-body dynamics of URDF robots (recursive Newton-Euler).")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    demo = commands.add_parser("demo", help="torques, gravity and joint wrenches of the bundled arm along a motion")
    demo.add_argument("robot", nargs="?", help="a URDF path (default: the bundled 6-DOF arm)")
    return parser


def run_demo(args):
    from . import demo
    return demo.run(args.robot) if args.robot else demo.run()


HANDLERS = {"demo": run_demo}


def main(argv=None):
    args = build_parser().parse_args(argv)
    try:
        return HANDLERS[args.command](args)
    except (ModelError, StateError, OSError, KeyError) as exc:
        message = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        print(f"rne-dynamics {args.command}: error: {message}", file=sys.stderr)
        return 2
