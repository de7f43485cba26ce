"""Soak of the inverse_dynamics node (not a test, not in CI): 1 kHz joint states for minutes, while its robot
description and parameters keep changing.

Processes: the node (``python -m rne_dynamics.nodes.inverse_dynamics_node``), a driver publishing ``/joint_states`` at
``--rate`` Hz, node_latency.py's receiver of ``/inverse_dynamics/torques``, and this process as the operator. Every
``--reload-period`` s the operator publishes the other of two robots on ``/robot_description`` (default: the bundled
rne_space_robot and rne_arm6, so the soak is the same on every install); the driver's messages name the joints of
both, so either robot finds its joints (extra joints are ignored). Within each period, at fixed fractions of it:
gravity tilted, a payload set on the current robot's last arm link, a bad description (rne_arm6 with a negative link
mass, to be refused), then payload and gravity back. The node starts without the ``robot_description`` parameter (an
explicit parameter would win over the topic) and takes the first robot from the topic. Reported per minute: messages
sent, received, dropped (sent, never answered), latency percentiles (torques receipt minus JointState stamp) and the
node's resident memory; at the end the node's own input counters, the swaps and refusals in its log, RSS at start and
end (target: growth under 5 MB), the drop rates within 1 s after an action and elsewhere, how busy the machine was
with other work (the load average before and after, the CPU time of all processes minus the soak's own, from
/proc/stat), and how many machine-code modules of the robots' code were built into the cache folder during the run
and removed from it (a warm cache builds none; a build is seconds of the C compiler beside the node, and the cache
removes only what nobody used for 30 days, so processes of other package sources sharing it leave this version's
modules).

    python benchmarks/soak.py [--minutes 10] [--rate 1000] [--reload-period 10]
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
BENCHMARKS = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCHMARKS)
sys.path.insert(0, BENCHMARKS)
from node_latency import cpu_seconds  # noqa: E402

NODE_LATENCY = os.path.join(BENCHMARKS, "node_latency.py")
BUNDLED = os.path.join(ROOT, "rne_dynamics", "data", "rne_arm6.urdf")
SPACE_ROBOT = os.path.join(ROOT, "rne_dynamics", "data", "rne_space_robot.urdf")  # fixed base unless told
TOPIC = "/inverse_dynamics/torques"
START_DELAY = 6.0  # s from launching the driver to the measurement: process start-up, discovery
# The operator's actions (Operator.act), evenly spaced within each reload period.
ACTIONS = ("good description", "gravity tilted", "payload set", "bad description", "payload and gravity restored")
TILTED, STANDARD = [0.5, -0.3, -9.7], [0.0, 0.0, -9.81]


def rss_mb(pid):
    """Resident set size of a process (Linux /proc), in MB."""
    with open(f"/proc/{pid}/status") as stream:
        kb = next(int(line.split()[1]) for line in stream if line.startswith("VmRSS:"))
    return kb / 1024.0


def payload_link(robot):
    """The child link of the robot's last revolute joint: where a tool's payload sits."""
    revolute = [j for j in robot.joint_names if robot.joints[j].type in ("revolute", "continuous")]
    return robot.joints[revolute[-1]].child


# -- the driver --------------------------------------------------------------------------------------------------

def run_driver(args):
    """Publish the union of both robots' joints at ``--rate`` Hz until ``--end``; write the stamps sent."""
    import rclpy
    import rne_dynamics as rd
    from sensor_msgs.msg import JointState
    rclpy.init()
    node = rclpy.create_node("soak_driver")
    publisher = node.create_publisher(JointState, "/joint_states", 10)
    while publisher.get_subscription_count() == 0:
        rclpy.spin_once(node, timeout_sec=0.05)
    robots = [rd.load_urdf(path) for path in args.robots]
    names = [j for robot in robots for j in robot.joint_names]
    limits = np.clip(np.concatenate([robot.position_limits for robot in robots]), -2.0, 2.0)
    middle, swing, phase = limits.mean(axis=1), 0.4 * (limits[:, 1] - limits[:, 0]), np.arange(len(names))
    period_ns, end = round(1e9 / args.rate), args.end
    sent = []
    start = time.time_ns()
    k = 0
    while True:
        due = start + k * period_ns
        if due >= end:
            break
        now = time.time_ns()
        if due > now:
            time.sleep((due - now) / 1e9)
        t = k / args.rate
        msg = JointState(name=names, position=(middle + swing * np.sin(t + phase)).tolist(),
                         velocity=(swing * np.cos(t + phase)).tolist())
        stamp = time.time_ns()
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp, 1_000_000_000)
        publisher.publish(msg)
        sent.append(stamp)
        k += 1
    np.save(args.out, np.array(sent, dtype=np.int64))
    node.destroy_node()
    rclpy.shutdown()


# -- the operator ------------------------------------------------------------------------------------------------

class Operator:
    """Publishes descriptions, sets parameters, reads /diagnostics; everything from one executor in this process."""

    def __init__(self, robots, texts, bad_text):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rcl_interfaces.srv import SetParametersAtomically
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from std_msgs.msg import String
        self.rclpy, self.String = rclpy, String
        rclpy.init()
        self.node = rclpy.create_node("soak_operator")
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.description = self.node.create_publisher(String, "/robot_description", latched)
        self.parameters = self.node.create_client(SetParametersAtomically,
                                                  "/inverse_dynamics/set_parameters_atomically")
        self.request_type = SetParametersAtomically.Request
        self.robots, self.texts, self.bad_text = robots, texts, bad_text
        self.diagnostics = {}
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.on_diagnostics, 10)
        self.pending = []  # (what, future) of parameter sets
        self.parameter_sets = {"accepted": 0, "refused": []}

    def on_diagnostics(self, msg):
        for status in msg.status:
            if status.name == "rne_dynamics: /inverse_dynamics":
                self.diagnostics = {kv.key: kv.value for kv in status.values} | {"message": status.message}

    def spin(self, seconds):
        end = time.monotonic() + seconds
        while True:
            self.rclpy.spin_once(self.node, timeout_sec=max(0.0, min(0.01, end - time.monotonic())))
            for what, future in [p for p in self.pending if p[1].done()]:
                self.pending.remove((what, future))
                result = future.result().result
                if result.successful:
                    self.parameter_sets["accepted"] += 1
                else:
                    self.parameter_sets["refused"].append(f"{what}: {result.reason}")
            if time.monotonic() >= end:
                return

    def wait_for_node(self):
        while not self.parameters.service_is_ready():
            self.spin(0.1)

    def publish_description(self, text):
        self.description.publish(self.String(data=text))

    def set(self, what, values):
        """Set the parameters ``{name: value}`` at once; the result is counted in ``spin``."""
        from rclpy.parameter import Parameter
        request = self.request_type(parameters=[Parameter(name, value=value).to_parameter_msg()
                                                for name, value in values.items()])
        self.pending.append((what, self.parameters.call_async(request)))

    def act(self, slot, phase):
        """Action ``ACTIONS[phase]`` of reload slot ``slot`` (the slot's robot: ``slot % 2``)."""
        k = slot % 2  # slot 0 loads robot 0 again: the one the node started with
        if phase == 0:
            self.publish_description(self.texts[k])
        elif phase == 1:
            self.set("gravity", {"gravity": TILTED})
        elif phase == 2:
            self.set("payload", {"payload.link": payload_link(self.robots[k]), "payload.mass": 2.0,
                                 "payload.com": [0.0, 0.0, 0.05],
                                 "payload.inertia": [0.004, 0.0, 0.0, 0.004, 0.0, 0.003]})
        elif phase == 3:
            self.publish_description(self.bad_text)
        else:
            self.set("restore", {"payload.link": "", "payload.mass": 0.0, "gravity": STANDARD})

    def close(self):
        self.node.destroy_node()
        self.rclpy.shutdown()


def per_minute(sent, stamps, latencies_ms, t0, minutes):
    rows = []
    for m in range(minutes):
        low, high = t0 + m * 60_000_000_000, t0 + (m + 1) * 60_000_000_000
        window = sent[(sent >= low) & (sent < high)]
        answered = np.isin(window, stamps)
        latency = latencies_ms[(stamps >= low) & (stamps < high) & np.isin(stamps, window)]
        rows.append({"minute": m + 1, "sent": int(window.size), "received": int(answered.sum()),
                     "dropped": int(window.size - answered.sum()),
                     **{f"p{q}_ms": float(np.percentile(latency, q)) if latency.size else float("nan")
                        for q in (50, 90, 99)},
                     "max_ms": float(latency.max()) if latency.size else float("nan")})
    return rows


def drops_after_actions(sent, stamps, t0, actions, seconds):
    """The dropped messages sent less than ``seconds`` after one of the operator's ``actions`` (``(at, slot,
    phase)``), by the action last before them: ``{action: [seconds after it, ...]}``."""
    dropped = (sent[~np.isin(sent, stamps)] - t0) / 1e9
    times = np.array([at for at, _, _ in actions])
    by_action = {name: [] for name in ACTIONS}
    for t in dropped:
        last = np.searchsorted(times, t, side="right") - 1
        if last >= 0 and t - times[last] < seconds:
            by_action[ACTIONS[actions[last][2]]].append(float(t - times[last]))
    return by_action


def drops_after_driver_stalls(sent, stamps, stall_ns=5_000_000):
    """``(stalls, drops)``: how often the driver itself fell more than ``stall_ns`` behind, and how many of the dropped
    messages it then sent in its catch-up (one per missed period, back to back, into the node's 10-deep queue)."""
    dropped, gaps = ~np.isin(sent, stamps), np.diff(sent)
    catch_up = np.zeros(sent.size, bool)
    period = np.median(gaps)
    for k in np.where(gaps > stall_ns)[0]:
        catch_up[k + 1:k + 1 + int(gaps[k] / period) + 5] = True
    return int((gaps > stall_ns).sum()), int((dropped & catch_up).sum())


def drop_rates(dropped, near, duration_s, actions, seconds):
    """Drops per minute of measured time within ``seconds`` after an action and elsewhere, of the ``dropped``
    messages, ``near`` of them after an action: ``(near, elsewhere, near seconds)``."""
    grid = np.arange(0.0, duration_s, 1e-3)  # the measured time on a 1 ms grid: which instants are near an action
    since = grid[:, None] - np.array([at for at, _, _ in actions])[None, :]
    near_grid = ((since >= 0) & (since < seconds)).any(axis=1)
    near_seconds = near_grid.mean() * duration_s
    return (60.0 * near / max(near_seconds, 1e-9), 60.0 * (dropped - near) / max(duration_s - near_seconds, 1e-9),
            near_seconds)


def machine_cpu_seconds():
    """Busy CPU time of the whole machine so far (all cores, /proc/stat: everything but idle and iowait), in s."""
    with open("/proc/stat") as stream:
        fields = [int(x) for x in stream.readline().split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def soak_cpu_seconds(processes):
    """CPU time of the soak's processes: those running, this one, and its children that ended (the driver)."""
    return sum(cpu_seconds(p.pid) for p in processes if p.poll() is None) + sum(os.times()[:4])


def cached_modules():
    """The machine-code modules in the robot code cache (:func:`rne_dynamics._native.cache_folder`)."""
    from rne_dynamics import _native
    return set(glob.glob(os.path.join(_native.cache_folder(), "*" + sysconfig.get_config_var("EXT_SUFFIX"))))


def swaps(log_text):
    """How often the node's log says it now runs a robot of another name than before."""
    names = [line.split("]: robot '", 1)[1].split("'", 1)[0] for line in log_text.splitlines()
             if "]: robot '" in line]
    return sum(a != b for a, b in zip(names, names[1:]))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="measured minutes (default: 10)")
    parser.add_argument("--rate", type=float, default=1000.0, help="joint states per second (default: 1000)")
    parser.add_argument("--reload-period", type=float, default=10.0, help="seconds between robot swaps (default: 10)")
    parser.add_argument("--robots", nargs=2, default=[SPACE_ROBOT, BUNDLED],
                        help="the two URDFs to alternate, with no joint name in common (default: the bundled "
                        "rne_space_robot and rne_arm6, on every install)")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--role", choices=("driver",), help=argparse.SUPPRESS)
    parser.add_argument("--end", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role:
        return run_driver(args) or 0

    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    os.environ.setdefault("ROS_DOMAIN_ID", str(100 + os.getpid() % 100))
    os.environ["PYTHONPATH"] = ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")
    import rne_dynamics as rd
    texts = [open(path).read() for path in args.robots]
    robots = [rd.load_urdf(text) for text in texts]
    shared = set(robots[0].joint_names) & set(robots[1].joint_names)
    if robots[0].name == robots[1].name or shared:  # the driver's messages would name a joint twice: all refused
        parser.error(f"--robots: give two different robots without common joint names (common: "
                     f"{', '.join(sorted(shared)) or robots[0].name})")
    bad_text = open(BUNDLED).read().replace('<mass value="', '<mass value="-', 1)
    work = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"rne_soak_{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    files = {name: os.path.join(work, name) for name in ("node.log", "sent.npy", "received.npy")}
    duration_ns = round(args.minutes * 60e9)

    load_before = os.getloadavg()
    operator = Operator(robots, texts, bad_text)
    operator.publish_description(texts[0])  # latched: the node takes it when it starts
    processes = []
    with open(files["node.log"], "w") as log:
        node = subprocess.Popen([sys.executable, "-m", "rne_dynamics.nodes.inverse_dynamics_node"], stdout=log,
                                stderr=subprocess.STDOUT)
    processes.append(node)
    samples = []  # (seconds since t0, RSS MB)
    try:
        operator.wait_for_node()
        while operator.diagnostics.get("robot", "none") == "none":  # the first robot, built from the topic
            operator.spin(0.1)
        processes.append(subprocess.Popen([sys.executable, NODE_LATENCY, "--role", "receiver", "--topic", TOPIC,
                                           "--out", files["received.npy"]]))
        operator.spin(1.0)
        t0 = time.time_ns() + round(START_DELAY * 1e9)
        driver = subprocess.Popen([sys.executable, HERE, "--role", "driver", "--rate", str(args.rate), "--end",
                                   str(t0 + duration_ns), "--out", files["sent.npy"], "--robots", *args.robots])
        processes.append(driver)
        operator.spin((t0 - time.time_ns()) / 1e9)
        modules_start = cached_modules()
        cpu_start = cpu_seconds(node.pid)
        ours_start = soak_cpu_seconds(processes)
        machine_start = machine_cpu_seconds()
        step = args.reload_period / len(ACTIONS)
        actions = [(slot * args.reload_period + phase * step, slot, phase)
                   for slot in range(int(duration_ns / 1e9 / args.reload_period) + 1) for phase in range(len(ACTIONS))]
        for at, slot, phase in actions:
            while (now := (time.time_ns() - t0) / 1e9) < at:
                if not samples or now - samples[-1][0] >= 1.0:
                    samples.append((now, rss_mb(node.pid)))
                operator.spin(min(0.1, at - now))
            if at >= duration_ns / 1e9:
                break
            operator.act(slot, phase)
        if driver.wait(timeout=120) != 0:
            raise SystemExit("the driver failed")
        samples.append(((time.time_ns() - t0) / 1e9, rss_mb(node.pid)))
        modules_end = cached_modules()
        cpu = cpu_seconds(node.pid) - cpu_start
        others = machine_cpu_seconds() - machine_start - (soak_cpu_seconds(processes) - ours_start)
        load_after = os.getloadavg()
        operator.spin(2.5)  # stragglers, and a /diagnostics after the last input
        counters_end = dict(operator.diagnostics)
    finally:
        for process in reversed(processes):
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()
        operator.close()

    sent_all = np.load(files["sent.npy"])
    stamps_all, latencies = np.load(files["received.npy"])
    sent = sent_all[(sent_all >= t0) & (sent_all < t0 + duration_ns)]
    stamps = stamps_all
    minutes = int(np.ceil(args.minutes))
    rows = per_minute(sent, stamps, latencies / 1e6, t0, minutes)
    rss = np.array(samples)
    for row in rows:
        in_minute = rss[(rss[:, 0] >= 60 * (row["minute"] - 1)) & (rss[:, 0] < 60 * row["minute"])]
        row["rss_mb"] = float(in_minute[-1, 1]) if in_minute.size else float(rss[-1, 1])
    log_text = open(files["node.log"]).read()
    result = {
        "robots": [robot.name for robot in robots], "rate_hz": args.rate, "minutes": args.minutes,
        "reload_period_s": args.reload_period, "per_minute": rows,
        "sent": int(sent.size), "received": int(np.isin(sent, stamps).sum()),
        "dropped": int(sent.size - np.isin(sent, stamps).sum()),
        "dropped_within_1s_by_action": drops_after_actions(sent, stamps, t0, actions, 1.0),
        "whole_run": {"sent": int(sent_all.size), "node_inputs": int(counters_end.get("inputs", -1)),
                      "node_rejected": int(counters_end.get("rejected inputs", -1)), "received": int(stamps_all.size)},
        "swaps_logged": swaps(log_text), "refusals_logged": log_text.count("refused the robot"),
        "bad_descriptions_sent": sum(1 for at, _, phase in actions if phase == 3 and at < duration_ns / 1e9),
        "parameter_sets": operator.parameter_sets, "node_cpu_percent": 100 * cpu / (duration_ns / 1e9),
        "rss_start_mb": float(rss[0, 1]), "rss_end_mb": float(rss[-1, 1]),
        "rss_after_first_cycle_mb": float(rss[rss[:, 0] >= 2 * args.reload_period][0, 1]),
        "last_diagnostics": counters_end.get("message", ""),
        "load_average_before": load_before, "load_average_after": load_after,
        "other_processes_cpu_percent": 100 * others / (duration_ns / 1e9),
        "modules_built": len(modules_end - modules_start), "modules_removed": len(modules_start - modules_end),
    }
    by_action = result["dropped_within_1s_by_action"]
    near, elsewhere, near_seconds = drop_rates(result["dropped"], sum(map(len, by_action.values())),
                                               duration_ns / 1e9, [a for a in actions if a[0] < duration_ns / 1e9],
                                               1.0)
    result["driver_stalls"], result["dropped_in_driver_catch_up"] = drops_after_driver_stalls(sent, stamps)
    result |= {"drops_per_minute_within_1s_of_an_action": near, "drops_per_minute_elsewhere": elsewhere,
               "seconds_within_1s_of_an_action": near_seconds}
    print(f"soak: {' <-> '.join(result['robots'])} every {args.reload_period:g} s (a bad description between), "
          f"{args.rate:g} Hz, {args.minutes:g} min")
    print(f"{'minute':>6}{'sent':>8}{'received':>10}{'dropped':>9}{'p50 ms':>8}{'p90 ms':>8}{'p99 ms':>8}"
          f"{'max ms':>8}{'RSS MB':>8}")
    for row in rows:
        print(f"{row['minute']:>6}{row['sent']:>8}{row['received']:>10}{row['dropped']:>9}{row['p50_ms']:>8.2f}"
              f"{row['p90_ms']:>8.2f}{row['p99_ms']:>8.2f}{row['max_ms']:>8.1f}{row['rss_mb']:>8.1f}")
    print(f"total: sent {result['sent']}, received {result['received']}, dropped {result['dropped']} "
          f"({sum(map(len, by_action.values()))} of them within 1 s after a reload or parameter set); "
          f"node CPU {result['node_cpu_percent']:.0f}% of a core")
    print(f"drops per minute within 1 s after an action: {near:.1f} ({near_seconds:.0f} s of the run), elsewhere: "
          f"{elsewhere:.1f}")
    print("drops within 1 s after, by action: " + ", ".join(
        f"{name} {len(after)}" + (f" ({1e3 * min(after):.0f}-{1e3 * max(after):.0f} ms after)" if after else "")
        for name, after in by_action.items()))
    print(f"the driver itself fell more than 5 ms behind {result['driver_stalls']} times; "
          f"{result['dropped_in_driver_catch_up']} of the drops were messages it then sent back to back")
    others = result["other_processes_cpu_percent"]
    print(f"machine: load average {load_before[0]:.2f} before, {load_after[0]:.2f} after (1 min); " + (
        f"other processes used {others:.0f}% of a core during the run ({os.cpu_count()} cores: "
        f"{'busy' if others > 20 else 'quiet'})" if others > -5 else
        # seen on a VM whose /proc/stat counts less busy time than its processes' own counters
        f"other processes: unknown (this machine's /proc/stat counted {-others:.0f}% of a core less than the "
        "soak's own processes)"))
    run = result["whole_run"]
    print(f"whole run with warm-up: sent {run['sent']}, the node computed {run['node_inputs']} and rejected "
          f"{run['node_rejected']} (lost before it: {run['sent'] - run['node_inputs'] - run['node_rejected']}), "
          f"torques received {run['received']} (lost after it: {run['node_inputs'] - run['received']})")
    print(f"descriptions: {result['swaps_logged']} swaps logged, {result['refusals_logged']} refusals logged for "
          f"{result['bad_descriptions_sent']} bad ones sent; parameter sets: "
          f"{operator.parameter_sets['accepted']} accepted, {len(operator.parameter_sets['refused'])} refused")
    for refusal in operator.parameter_sets["refused"][:5]:
        print(f"  refused: {refusal}")
    print(f"robot code cache: {result['modules_built']} machine-code modules built during the run, "
          f"{result['modules_removed']} removed")
    growth = result["rss_end_mb"] - result["rss_start_mb"]
    print(f"RSS: start {result['rss_start_mb']:.1f} MB, after the first cycle {result['rss_after_first_cycle_mb']:.1f}"
          f" MB, end {result['rss_end_mb']:.1f} MB: growth {growth:+.1f} MB (target < 5 MB)")
    print(f"last diagnostics: {result['last_diagnostics']}")
    if args.json:
        with open(args.json, "w") as stream:
            json.dump(result, stream, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
