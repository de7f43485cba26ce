"""Real-time factor of the forward node's simulation under load: the node in a process of its own (as ``ros2 run``
starts it) simulating a robot at ``--rate`` Hz, with ``--busy`` processes spinning beside it (``while True: pass``:
on a 2-core machine two of them leave the node a share of a core), for ``--duration`` s after a warm-up.

Reported: the factor from the stamps (simulated time advanced over the wall time between the first and the last
``/joint_states`` received in the window), the messages received per second, the node's own ``/diagnostics``
(each second's real-time factor, its reason when below 0.95, the step cost) and the load average. The step's
machine code is built (and cached) before the node starts. The robot
holds still under its gravity torques at its start pose (sent once as the effort command; the node holds it), so
no joint sits on a stop. Not a test: numbers depend on the machine and its load.

    python benchmarks/bench_realtime.py [--rate 1000] [--duration 10] [--busy 2] [--robot URDF]
"""
import argparse
import os
import signal
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WARM_UP = 3.0  # s of simulation before the window (discovery, the first ticks)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=float, default=1000.0, help="simulation rate (Hz)")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds measured")
    parser.add_argument("--busy", type=int, default=2, help="busy processes beside the node")
    parser.add_argument("--robot", default=None, help="URDF (default: the bundled arm)")
    return parser.parse_args(argv)


def stamp(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def main(argv=None):
    args = parse(argv)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState

    import rne_dynamics as rd
    from rne_dynamics.nodes.simulation import period_ns
    from rne_dynamics.robots import DEFAULT_ROBOT
    from rne_dynamics.tools.live_demo import home_pose

    path = os.path.abspath(args.robot or DEFAULT_ROBOT)
    robot = rd.load_urdf(path)
    home = home_pose(robot)
    zero = np.zeros(robot.dof)
    for _ in range(100):  # the step's machine code, built here and cached on disk, where the node's process finds it
        rd.step(robot, home, zero, zero, 1e-9 * period_ns(args.rate))
    for code in robot.engines.written.values():
        if code is not None:  # None: no written code (RNE_DYNAMICS_WRITTEN=0)
            code.wait(600)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT] + sys.path), PYTHONUNBUFFERED="1")
    node = subprocess.Popen(  # from ROOT: ``-m`` puts the working directory first on the path
        [sys.executable, "-m", "rne_dynamics.nodes.forward_dynamics_node", "--ros-args",
         "-p", f"robot_description:={path}", "-p", "simulate:=true", "-p", f"rate_hz:={args.rate}",
         "-p", "hold_until_command:=true", "-p", f"initial_positions:={[float(x) for x in home]}"],
        env=env, cwd=ROOT, start_new_session=True)
    busy = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
    rclpy.init()
    probe = rclpy.create_node("bench_realtime")
    states, diagnostics = [], []
    probe.create_subscription(JointState, "/joint_states", lambda m: states.append((time.monotonic(), stamp(m))), 100)
    probe.create_subscription(DiagnosticArray, "/diagnostics", lambda m: diagnostics.append(
        (time.monotonic(), {kv.key: kv.value for kv in m.status[0].values}, m.status[0].message)), 10)
    command = probe.create_publisher(JointState, "/forward_dynamics/effort_command", 10)
    load = os.getloadavg()[0]
    try:
        end = time.monotonic() + 300.0
        while not states and time.monotonic() < end:  # the model built, the first ticks
            rclpy.spin_once(probe, timeout_sec=0.1)
        if not states:
            raise SystemExit("no /joint_states from the forward node in 300 s")
        msg = JointState(name=list(robot.joint_names), effort=rd.gravity_torques(robot, home).tolist())
        command.publish(msg)
        start = time.monotonic() + WARM_UP
        while time.monotonic() < start + args.duration:
            rclpy.spin_once(probe, timeout_sec=0.01)
    finally:
        for process in busy:
            process.kill()
        os.killpg(node.pid, signal.SIGINT)
        node.wait(timeout=20)
        probe.destroy_node()
        rclpy.try_shutdown()
    window = [(wall, t) for wall, t in states if start <= wall <= start + args.duration]
    (wall0, t0), (wall1, t1) = window[0], window[-1]
    seconds = [(v, message) for wall, v, message in diagnostics if start + 1.0 <= wall <= start + args.duration]
    factors = np.array([float(v["real-time factor"]) for v, _ in seconds])
    reasons = sorted({v["real-time factor below 0.95 because"] for v, _ in seconds} - {"none"})
    print(f"{robot.name} at {args.rate:g} Hz, {args.busy} busy processes beside the node on {os.cpu_count()} cores "
          f"(load average {load:.1f} before the start, {os.getloadavg()[0]:.1f} at the end)")
    print(f"real-time factor from the stamps: {(t1 - t0) / (wall1 - wall0):.3f} over {wall1 - wall0:.1f} s; "
          f"{len(window) / (wall1 - wall0):.0f} /joint_states a second")
    if len(factors):
        print(f"diagnostics, each second: real-time factor min {factors.min():.3f}, median {np.median(factors):.3f};"
              f" step cost {np.median([float(v['step cost [ms]']) for v, _ in seconds]):.4f} ms (median)")
    for reason in reasons:
        print(f"  below 0.95 because: {reason}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
