"""Latency of the inverse_dynamics node at 1 kHz, next to a bare rclpy echo node on the same machine, same run.

Three processes: a driver publishing ``/joint_states`` of a 7-DOF arm (example-robot-data's panda: 7 arm joints and
a gripper coordinate) at ``--rate`` Hz, the node under test, and a receiver of its output
(``/inverse_dynamics/torques``; for the echo, the echoed JointState). The two nodes take turns in ``--segments``
alternating segments, ``--duration`` s in all per node, so both see the same machine load. Latency is receipt time
minus the JointState stamp (the driver's wall clock at publishing; the outputs carry the input stamp). Reported per
node: messages sent, dropped (sent, never received), median and p99 latency, and the node process's CPU use (% of
one core) over the measurement windows. Not a test: numbers depend on the machine and its load.

    python benchmarks/node_latency.py [--duration 60] [--segments 2] [--rate 1000] [--robot URDF]
"""
import argparse
import glob
import json
import os
import signal
import subprocess
import sys
import sysconfig
import time

import numpy as np

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
ROBOTS = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots")
ECHO_TOPIC = "/echo/joint_states"
WARM_UP = 2.0  # s of driving before the measurement window (discovery, caches, first-message costs)


def default_robot():
    matches = glob.glob(os.path.join(ROBOTS, "panda_description", "urdf", "panda.urdf"))
    return matches[0] if matches else None


# -- the processes -----------------------------------------------------------------------------------------------

def ros_node(name):
    import rclpy
    rclpy.init()
    return rclpy, rclpy.create_node(name)


def run_echo(_args):
    """The floor: subscribe JointState, republish the same message."""
    from sensor_msgs.msg import JointState
    rclpy, node = ros_node("echo")
    publisher = node.create_publisher(JointState, ECHO_TOPIC, 10)
    node.create_subscription(JointState, "/joint_states", publisher.publish, 10)
    spin(rclpy, node)


def run_receiver(args):
    """Record ``(stamp, receipt - stamp)`` of every message on ``--topic`` until SIGINT, then write them out."""
    from sensor_msgs.msg import JointState
    rclpy, node = ros_node("latency_receiver")
    stamps, latencies = [], []

    def on_message(msg):
        now = time.time_ns()
        stamp = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
        stamps.append(stamp)
        latencies.append(now - stamp)

    node.create_subscription(JointState, args.topic, on_message, 100)
    spin(rclpy, node)
    np.save(args.out, np.array([stamps, latencies], dtype=np.int64))


def run_driver(args):
    """Publish joint states at ``--rate`` Hz: a warm-up, then ``--duration`` s whose stamps are written out."""
    import rne_dynamics as rd
    from sensor_msgs.msg import JointState
    rclpy, node = ros_node("latency_driver")
    publisher = node.create_publisher(JointState, "/joint_states", 10)
    while publisher.get_subscription_count() == 0:  # the node under test is up
        rclpy.spin_once(node, timeout_sec=0.05)
    robot = rd.load_urdf(args.robot)
    names = list(robot.joint_names)
    limits = np.clip(robot.position_limits, -2.0, 2.0)
    middle, swing = limits.mean(axis=1), 0.4 * (limits[:, 1] - limits[:, 0])
    period = 1.0 / args.rate
    sent = []
    start = time.perf_counter()
    end_warm_up, end = start + WARM_UP, start + WARM_UP + args.duration
    k = 0
    while True:
        due = start + k * period
        now = time.perf_counter()
        if due >= end:
            break
        if due > now:
            time.sleep(due - now)
        t = k * period
        msg = JointState(name=names, position=(middle + swing * np.sin(t + np.arange(len(names)))).tolist(),
                         velocity=(swing * np.cos(t + np.arange(len(names)))).tolist())
        stamp = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        publisher.publish(msg)
        if due >= end_warm_up:
            sent.append(stamp)
        k += 1
    with open(args.out, "w") as stream:
        json.dump({"sent": sent}, stream)
    node.destroy_node()
    rclpy.shutdown()


def spin(rclpy, node):
    from rclpy.executors import ExternalShutdownException
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


# -- the orchestration -------------------------------------------------------------------------------------------

def cpu_seconds(pid):
    """User + system CPU time of a process (Linux /proc), in seconds."""
    with open(f"/proc/{pid}/stat") as stream:
        fields = stream.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(role, *extra, env):
    return subprocess.Popen([sys.executable, HERE, "--role", role, *extra], env=env)


def measure(label, node_command, ready, topic, args, env, work, duration):
    """One segment: the node under test (once ``ready`` is in its log), a receiver and the driver for ``duration``
    s. Returns ``(sent, dropped, latencies in ms, node CPU seconds, wall seconds)`` of the measurement window."""
    files = {name: os.path.join(work, f"{label}_{time.monotonic_ns()}_{name}")
             for name in ("received.npy", "sent.json", "node.log")}
    with open(files["node.log"], "w") as log:
        node = subprocess.Popen(node_command, env=env, stdout=log, stderr=subprocess.STDOUT)
    receiver = driver = None
    try:
        while ready not in open(files["node.log"]).read():
            if node.poll() is not None:
                raise SystemExit(f"{label} exited: {open(files['node.log']).read()}")
            time.sleep(0.1)
        receiver = child("receiver", "--topic", topic, "--out", files["received.npy"], env=env)
        time.sleep(1.0)  # discovery
        driver = child("driver", "--robot", args.robot, "--rate", str(args.rate), "--duration", str(duration),
                       "--out", files["sent.json"], env=env)
        time.sleep(WARM_UP + 0.5)
        cpu_start, wall_start = cpu_seconds(node.pid), time.monotonic()
        if driver.wait(timeout=duration + 600) != 0:
            raise SystemExit(f"{label}: the driver failed")
        cpu, wall = cpu_seconds(node.pid) - cpu_start, time.monotonic() - wall_start
        time.sleep(1.0)  # stragglers
    finally:
        for process in (driver, receiver, node):
            if process is not None and process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
    with open(files["sent.json"]) as stream:
        sent = np.array(json.load(stream)["sent"], dtype=np.int64)
    stamps, latencies = np.load(files["received.npy"])
    in_window = np.isin(stamps, sent)
    return len(sent), int(len(sent) - np.unique(stamps[in_window]).size), latencies[in_window] / 1e6, cpu, wall


def summary(label, segments):
    """The row of results of a node's segments together."""
    sent, dropped, cpu, wall = (sum(s[k] for s in segments) for k in (0, 1, 3, 4))
    latency = np.concatenate([s[2] for s in segments])
    return {"node": label, "sent": sent, "dropped": dropped,
            "median_ms": float(np.median(latency)) if latency.size else float("nan"),
            "p99_ms": float(np.percentile(latency, 99)) if latency.size else float("nan"),
            "cpu_percent": 100 * cpu / wall}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="measured seconds per node (default: 60)")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint states per second (default: 1000)")
    parser.add_argument("--robot", default=default_robot(), help="URDF of the robot (default: example-robot-data "
                        "panda)")
    parser.add_argument("--segments", type=int, default=2, help="alternate the two nodes this many times "
                        "(default: 2)")
    parser.add_argument("--role", choices=("driver", "receiver", "echo"), help=argparse.SUPPRESS)
    parser.add_argument("--topic", help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        return {"driver": run_driver, "receiver": run_receiver, "echo": run_echo}[args.role](args) or 0
    if not args.robot:
        parser.error("example-robot-data is not installed: give --robot URDF")
    env = dict(os.environ, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST",
               ROS_DOMAIN_ID=os.environ.get("ROS_DOMAIN_ID", str(100 + os.getpid() % 100)),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"rne_node_latency_{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    nodes = {
        "echo": ([sys.executable, HERE, "--role", "echo"], "", ECHO_TOPIC),
        "inverse_dynamics": ([sys.executable, "-m", "rne_dynamics.nodes.inverse_dynamics_node", "--ros-args", "-p",
                              f"robot_description:={args.robot}"], "[inverse_dynamics]: robot '",
                             "/inverse_dynamics/torques"),
    }
    segments = {label: [] for label in nodes}
    for _ in range(args.segments):  # alternating, so that both rows see the same (changing) machine load
        for label, (command, ready, topic) in nodes.items():
            segments[label].append(measure(label, command, ready, topic, args, env, work,
                                           args.duration / args.segments))
    rows = [summary(label, parts) for label, parts in segments.items()]
    print(f"{os.path.basename(args.robot)}, {args.rate:g} Hz, {args.duration:g} s per row in {args.segments} "
          f"alternating segments (each after {WARM_UP:g} s warm-up)")
    print(f"{'node':<18}{'sent':>8}{'dropped':>9}{'median ms':>11}{'p99 ms':>9}{'CPU %':>8}")
    for row in rows:
        print(f"{row['node']:<18}{row['sent']:>8}{row['dropped']:>9}{row['median_ms']:>11.3f}{row['p99_ms']:>9.3f}"
              f"{row['cpu_percent']:>8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
