"""The body of the dynamics executables' ``main``: one node, run until it is shut down."""
import gc
import re
import threading
import time


#: Longest time (s) the model-building worker holds the interpreter before the joint-state callback gets it back
#: (Python's default, 5 ms, let a swap delay a burst of 1 kHz messages).
GIL_SWITCH_INTERVAL = 5e-4


#: How long (s) a failure waits for the context to be shut down before it counts as a fault: rclpy's signal handler
#: shuts the context down from a thread of its own, and Python's KeyboardInterrupt can come first, raised inside a
#: conversion that turns it into a RuntimeError.
SHUTDOWN_GRACE = 1.0


def shut_down(rclpy):
    """Whether the default context is shut down, or is within :data:`SHUTDOWN_GRACE`."""
    end = time.monotonic() + SHUTDOWN_GRACE
    while rclpy.ok():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


def spin(node_class, args=None):
    """Run one node until Ctrl-C or shutdown (the body of the executables' ``main``). Arguments rcl cannot parse and
    parameter values the node refuses at start end it with a one-line reason and exit code 2.

    A shutdown of any kind (SIGINT, SIGTERM, launch's escalation from one to the other, the context shut down by
    another thread) returns 0 without a traceback: once the context is shut down, whatever a callback or the wait set
    raises about it (rclpy's ``RCLError`` "context is invalid") is the shutdown, not a fault, and further signals
    are ignored while the node is destroyed."""
    import signal
    import sys

    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.impl.implementation_singleton import rclpy_implementation

    name = re.sub(r"(?<!^)(?=[A-Z])", "_", node_class.__name__).lower()  # InverseDynamicsNode: the executable
    try:
        rclpy.init(args=args)
    except rclpy_implementation.RCLError as exc:
        reason = str(exc).split("\n")[0][:200]
        print(f"{name}: error: cannot parse the ROS arguments ({reason}...); a value with ': ' (URDF text) cannot "
              "be given with -p: give robot_description a file path (-p robot_description:=/path/robot.urdf) or "
              "publish the text on robot_description", file=sys.stderr)
        return 2
    node = None
    status = 0
    try:
        node = node_class()
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        # Python's full garbage collection walks every object (numba's and rclpy's: 35 ms on this machine), holding
        # the interpreter; the allocations of a model build trigger it. Frozen objects are never walked again.
        gc.freeze()
        rclpy.spin(node)
    except ParameterException as exc:  # a -p value that the node's checks refuse
        print(f"{name}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        status = 2
    except BaseException as exc:  # noqa: BLE001 -- sorted below: a shutdown, or a fault that must show
        if not isinstance(exc, KeyboardInterrupt) and not shut_down(rclpy):
            raise
    finally:
        if threading.current_thread() is threading.main_thread():  # launch escalates SIGINT to SIGTERM: let it go
            for number in (signal.SIGINT, signal.SIGTERM):
                signal.signal(number, signal.SIG_IGN)
        if node is not None:
            try:
                node.destroy_node()
            except Exception:  # noqa: BLE001 -- handles of a shut-down context refuse to be destroyed twice
                pass
        rclpy.try_shutdown()
    return status
