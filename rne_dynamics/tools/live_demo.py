"""The nodes live, without a ROS install (pip rclpy): a simulated robot drives the inverse dynamics node.

One process, one executor, four nodes on this machine's loopback:

- ``forward_dynamics`` with ``simulate: true`` integrates the robot and publishes ``/joint_states``;
- ``demo_motion`` makes it follow a slow swing of every joint (computed-torque control through the library) by
  publishing ``/forward_dynamics/effort_command``;
- ``inverse_dynamics`` turns the simulated joint states into torques, gravity torques, wrenches and load markers;
- ``demo_table`` prints the torques and each joint's load (|torque| / URDF effort limit) every ``--period`` seconds,
  and the simulation's real-time factor (with the reason when it is below 0.95).

Exits 1 when no torques arrived, the simulation ran away or the simulator refused the robot (the forward node's
message says where and why).

    rne-dynamics live [ROBOT] [--duration 10]
"""
import argparse
import math
import os
import sys
import time

import numpy as np

from ..algorithms.rnea import inverse_dynamics
from ..errors import ModelError
from ..model.joints import joint_type
from ..model.urdf import expand_xacro, load_urdf
from .arguments import live_options

#: Start pose of the bundled arm: elbow bent, wrist down, well inside the limits.
ARM6_HOME = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0]
SWING_AMPLITUDE = 0.4  # rad (m for a prismatic joint, scaled to its range)
SWING_HZ = 0.25
TRACKING_HZ = 1.0      # bandwidth of the demo controller: stable with the 0.1 s loop delays of a loaded machine
#                        (at 3 Hz such a delay costs 108 degrees of phase: the arm ran away)
HOME_MARGIN = 0.1      # of a joint's range between the start pose and its stops
SETTLE = 1.0           # s after the first torques before peaks count: the controller pulls the arm onto its path


def parse(argv):
    parser = argparse.ArgumentParser(prog="rne-dynamics live", description=__doc__.split("\n\n")[0],
                                     parents=[live_options()])
    return parser.parse_args(argv)


def home_pose(robot):
    """The bundled arm's :data:`ARM6_HOME`; else zero, clipped to :data:`HOME_MARGIN` of each joint's range inside
    its limits (a joint on its stop takes the stop's branch of the step, the generic kernel, at every step)."""
    if robot.name == "rne_arm6" and robot.dof == len(ARM6_HOME):
        return np.array(ARM6_HOME)
    limits = robot.position_limits
    margin = HOME_MARGIN * np.nan_to_num(limits[:, 1] - limits[:, 0], posinf=0.0)
    return np.clip(0.0, limits[:, 0] + margin, limits[:, 1] - margin)


def swing(robot, home):
    """``(amplitude, phase)`` per joint: joints move out of phase, by less than their range allows."""
    limits = robot.position_limits
    room = np.minimum(home - limits[:, 0], limits[:, 1] - home)
    amplitude = np.minimum(SWING_AMPLITUDE, 0.8 * room)
    return amplitude, np.arange(robot.dof) * 0.7


def make_motion_node(context, robot, home):
    """A node that steers the simulation along ``home + a sin(w t + phase)`` (computed torque through the library)."""
    from rclpy.node import Node
    from sensor_msgs.msg import JointState

    from ..nodes.messages import doubles

    amplitude, phase = swing(robot, home)
    w, wc = 2 * math.pi * SWING_HZ, 2 * math.pi * TRACKING_HZ
    node = Node("demo_motion", context=context)
    # depth 1 both ways: on a loaded machine the controller acts on the newest state only (a queue of old states, each
    # answered in turn, delayed its efforts by tenths of a second: the arm ran away once in a fresh install's first run)
    publisher = node.create_publisher(JointState, "/forward_dynamics/effort_command", 1)
    out = JointState(name=list(robot.joint_names))
    start = {}

    def on_state(msg):
        t_msg = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        t = t_msg - start.setdefault("t", t_msg)
        q, qd = np.asarray(msg.position), np.asarray(msg.velocity)
        s, c = np.sin(w * t + phase) - np.sin(phase), np.cos(w * t + phase)
        q_ref, qd_ref, qdd_ref = home + amplitude * s, amplitude * w * c, -amplitude * w * w * np.sin(w * t + phase)
        qdd = qdd_ref + wc * wc * (q_ref - q) + 2.0 * wc * (qd_ref - qd)
        out.header.stamp = msg.header.stamp
        out.effort = doubles(inverse_dynamics(robot, q, qd, qdd).torques)
        publisher.publish(out)

    node.create_subscription(JointState, "/joint_states", on_state, 1)
    return node


class Table:
    """Keeps the latest torques and gravity torques and prints them as a compact table."""

    def __init__(self, context, robot):
        from rclpy.node import Node
        from sensor_msgs.msg import JointState

        from ..nodes.markers import load_fractions

        self.load_fractions = load_fractions
        self.robot = robot
        self.latest = {}
        self.received = 0
        self.first = None  # monotonic time of the first torques
        self.peak = np.zeros(robot.dof)
        self.node = Node("demo_table", context=context)
        for key in ("torques", "gravity_torques"):
            self.node.create_subscription(JointState, f"/inverse_dynamics/{key}",
                                          lambda msg, key=key: self.on_message(key, msg), 10)
        self.node.create_subscription(JointState, "/joint_states", lambda msg: self.on_message("state", msg), 10)

    def on_message(self, key, msg):
        self.latest[key] = msg
        if key == "torques":
            self.received += 1
            now = time.monotonic()
            self.first = now if self.first is None else self.first
            if now - self.first >= SETTLE:
                self.peak = np.maximum(self.peak, self.load(np.asarray(msg.effort)))

    def load(self, torques):
        return self.load_fractions(torques, self.robot.effort_limits)

    def print(self, elapsed, write=print):
        if "torques" not in self.latest:
            write(f"t = {elapsed:5.1f} s   waiting for the first torques ...")
            return
        tau = np.asarray(self.latest["torques"].effort)
        gravity = np.asarray(self.latest["gravity_torques"].effort) if "gravity_torques" in self.latest else tau * 0
        q = np.asarray(self.latest["state"].position) if "state" in self.latest else tau * np.nan
        load = self.load(tau)
        write(f"t = {elapsed:5.1f} s   {self.received} torque messages")
        width = max(len(name) for name in self.robot.joint_names) + 2
        linear = any(joint_type(self.robot.joints[name].type).linear for name in self.robot.joint_names)
        position, effort = ("[rad|m]", "[N m|N]") if linear else ("[rad]", "[N m]")
        write(f"  {'joint':<{width}}{'q ' + position:>11}{'torque ' + effort:>16}{'gravity ' + effort:>16}"
              "  load [% of the effort limit]")
        for k, name in enumerate(self.robot.joint_names):
            limited = np.isfinite(self.robot.effort_limits[k])
            bar = "#" * int(round(20 * min(load[k], 1.0))) + ("!" if load[k] > 1.0 else "")
            share = f"{100 * load[k]:4.0f}% {bar}" if limited else "  (no effort limit)"
            write(f"  {name:<{width}}{q[k]:11.3f}{tau[k]:16.2f}{gravity[k]:16.2f}  {share}")


def real_time_line(forward, since):
    """The forward node's tally now and a line with its real-time factor since the tally ``since`` (and why it is
    below 0.95)."""
    from ..nodes.simulation import real_time

    clock = forward.clock
    now = clock.since(since, time.monotonic_ns())
    factor, reason = real_time(since, now, clock.period_ns)
    steps = now.steps - since.steps
    cost = f", a step costs {1e-6 * (now.step_cpu_ns - since.step_cpu_ns) / steps:.3g} ms" if steps else ""
    return now, (f"real-time factor {factor:.2f} (period {1e-6 * clock.period_ns:g} ms{cost})"
                 + (f": {reason}" if reason else ""))


def refused(forward):
    """Why the simulator has no model (it refused the robot: e.g. a step from the start pose diverges), or ''."""
    return forward.refusal if forward.model is None else ""


def main(argv=None):
    return run(parse(sys.argv[1:] if argv is None else argv))


def run(args):
    """The demo for parsed :func:`~rne_dynamics.tools.arguments.live_options`; the exit status."""
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")  # the demo's traffic stays on this machine
    try:
        import rclpy
    except ImportError as exc:
        print(f"rne-dynamics live: error: needs rclpy and the ROS 2 message packages ({exc})", file=sys.stderr)
        return 2
    from rclpy.context import Context
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.parameter import Parameter

    from ..nodes.forward_dynamics_node import ForwardDynamicsNode
    from ..nodes.inverse_dynamics_node import InverseDynamicsNode

    source = {"xacro_args": dict(args.xacro_args) or None, "package_paths": dict(args.package_paths) or None}
    try:
        urdf = expand_xacro(args.robot, **source)
        robot = load_urdf(urdf)
    except ModelError as exc:
        print(f"rne-dynamics live: error: {exc}", file=sys.stderr)
        return 2
    home = home_pose(robot)
    print(f"{robot.name}: {robot.dof} joints; simulating at {args.rate:g} Hz -> /joint_states -> inverse_dynamics "
          f"(starting the nodes)", flush=True)
    context = Context()
    rclpy.init(context=context, args=["--ros-args", "--log-level", "warn"])
    nodes = []
    try:
        description = Parameter("robot_description", value=urdf)
        nodes.append(InverseDynamicsNode(context=context, parameter_overrides=[
            description, Parameter("acceleration_source", value="differentiate")]))
        nodes.append(ForwardDynamicsNode(context=context, parameter_overrides=[
            description, Parameter("simulate", value=True), Parameter("rate_hz", value=args.rate),
            Parameter("initial_positions", value=home.tolist()), Parameter("hold_until_command", value=True)]))
        nodes.append(make_motion_node(context, robot, home))
        table = Table(context, robot)
        nodes.append(table.node)
        executor = SingleThreadedExecutor(context=context)
        for node in nodes:
            executor.add_node(node)
        forward = nodes[1]
        start = time.monotonic()
        first = window = forward.clock.tally
        next_print = start + args.period
        while (now := time.monotonic()) < start + args.duration and not forward.runaway and not refused(forward):
            executor.spin_once(timeout_sec=min(0.05, max(0.0, next_print - now)))
            if time.monotonic() >= next_print:
                table.print(time.monotonic() - start)
                window, line = real_time_line(forward, window)
                print(f"  {line}")
                next_print += args.period
        _, overall = real_time_line(forward, first)
        runaway, refusal = forward.runaway, refused(forward)
        executor.shutdown()
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
    if runaway:
        print(f"rne-dynamics live: error: {runaway}", file=sys.stderr)
        return 1
    if refusal:
        print(f"rne-dynamics live: error: the forward_dynamics node refused {refusal}", file=sys.stderr)
        return 1
    if not table.received:
        print("rne-dynamics live: error: no torques arrived from the inverse_dynamics node", file=sys.stderr)
        return 1
    peaks = ", ".join(f"{name} {100 * p:.0f}%" for name, p in zip(robot.joint_names, table.peak))
    print(f"done: {table.received} torque messages in {args.duration:g} s; {overall}; peak loads (of the effort "
          f"limits, after the first {SETTLE:g} s): {peaks}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
