#!/usr/bin/env python3
"""Time what a user waits for before the first numbers, on a fresh copy of this checkout with empty caches.

    python benchmarks/bench_startup.py [--readme] [--generic]

Each row runs in new processes with ``RNE_DYNAMICS_CACHE`` and the package's numba cache empty (a copy of the
package without ``__pycache__``), as after ``pip install .`` or ``colcon build``:

- the first call of each public function in a new process (import, ``load_urdf`` of the bundled arm, the call);
- a new inverse-dynamics node's first torques on ``/joint_states`` (real rclpy, loopback);
- ``rne-dynamics compile`` (the bundled arm's machine code; ``--generic``: also every numba kernel);
- the same after one algorithm module is edited (a comment appended to ``algorithms/crba.py``);
- ``--readme``: README's first command in a fresh clone with a fresh HOME (pip included), and the time from the
  start of ``live`` to its first torques table.
"""
import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CALLS = {
    "inverse_dynamics": "rd.inverse_dynamics(r, q, v, v)",
    "gravity_torques": "rd.gravity_torques(r, q)",
    "mass_matrix": "rd.mass_matrix(r, q)",
    "forward_dynamics": "rd.forward_dynamics(r, q, v, v)",
    "inverse_dynamics_derivatives": "rd.inverse_dynamics_derivatives(r, q, v, v)",
    "forward_dynamics_derivatives": "rd.forward_dynamics_derivatives(r, q, v, v)",
    "frame_jacobian": "rd.frame_jacobian(r, q, r.link_names[-1])",
    "inverse_dynamics, external wrenches": "rd.inverse_dynamics(r, q, v, v, external_wrenches={r.link_names[-1]: "
                                           "[1, 2, 3, 0, 0, 0]})",
    "inverse_dynamics, batch of 1000": "rd.inverse_dynamics(r, np.tile(q, (1000, 1)), np.tile(v, (1000, 1)), "
                                       "np.tile(v, (1000, 1)))",
}
FIRST_CALL = """
import time; start = time.perf_counter()
import numpy as np, rne_dynamics as rd
r = rd.load_urdf(rd.bundled_robot_path()); q = rd.neutral(r) + 0.1; v = np.full(r.nv, 0.2)
{call}
print(time.perf_counter() - start)
"""
NODE_FIRST_TORQUES = """
import os, subprocess, sys, time
import rclpy
from sensor_msgs.msg import JointState
import rne_dynamics as rd
robot = rd.load_urdf(rd.bundled_robot_path())
start = time.perf_counter()
node = subprocess.Popen([sys.executable, "-m", "rne_dynamics.nodes.inverse_dynamics_node", "--ros-args", "-p",
                         "robot_description:=" + rd.bundled_robot_path()],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
rclpy.init()
probe = rclpy.create_node("startup_probe")
got = []
probe.create_subscription(JointState, "/inverse_dynamics/torques", lambda m: got.append(time.perf_counter()), 10)
publisher = probe.create_publisher(JointState, "/joint_states", 10)
message = JointState(name=list(robot.joint_names), position=[0.1] * robot.nv, velocity=[0.0] * robot.nv)
while not got and time.perf_counter() - start < 600:
    publisher.publish(message)
    rclpy.spin_once(probe, timeout_sec=0.05)
node.terminate(); node.wait()
print(got[0] - start if got else float("nan"))
"""


def fresh_package(root):
    """A copy of the package at ``root`` without compiled caches; the environment that imports it with an empty
    written-code cache."""
    shutil.copytree(os.path.join(ROOT, "rne_dynamics"), os.path.join(root, "rne_dynamics"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return dict(os.environ, PYTHONPATH=root, RNE_DYNAMICS_CACHE=os.path.join(root, "cache"),
                ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST", ROS_DOMAIN_ID=str(70 + os.getpid() % 20))


def seconds(code_or_command, env, cwd=None):
    start = time.perf_counter()
    command = code_or_command if isinstance(code_or_command, list) else [sys.executable, "-W", "ignore", "-c",
                                                                          code_or_command]
    out = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{command[:3]} failed: {out.stderr[-2000:]}")
    reported = out.stdout.strip().splitlines()
    try:
        return float(reported[-1])
    except (IndexError, ValueError):
        return time.perf_counter() - start


def scratch():
    """A temporary folder whose removal tolerates a build still writing into it: builds outlive the process that
    started them (the builder's, and setup_venv's background compiles)."""
    return tempfile.TemporaryDirectory(ignore_cleanup_errors=True)


def readme_first_command():
    """README's first command in a fresh clone with a fresh HOME: total seconds, and seconds from ``live``'s start
    to its first torques table."""
    with scratch() as root:
        clone, home = os.path.join(root, "clone"), os.path.join(root, "home")
        os.mkdir(home)
        subprocess.run(["git", "clone", "-q", ROOT, clone], check=True)
        env = dict(os.environ, HOME=home, ROS_AUTOMATIC_DISCOVERY_RANGE="LOCALHOST")
        env.pop("RNE_DYNAMICS_CACHE", None)
        start = time.perf_counter()
        subprocess.run(["bash", "scripts/setup_venv.sh", "--runtime"], cwd=clone, env=env, check=True,
                       stdout=subprocess.DEVNULL)
        setup = time.perf_counter() - start
        live = subprocess.Popen([".venv/bin/rne-dynamics", "live", "--duration", "5"], cwd=clone, env=env,
                                stdout=subprocess.PIPE, text=True)
        live_start, first = time.perf_counter(), None
        for line in live.stdout:
            if first is None and "N m" in line or first is None and "torque" in line.lower():
                first = time.perf_counter() - live_start
        live.wait()
        return setup, time.perf_counter() - start, first


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--readme", action="store_true", help="also README's first command (pip: minutes)")
    parser.add_argument("--generic", action="store_true", help="also `rne-dynamics compile --generic` (minutes)")
    args = parser.parse_args(argv)
    load = os.getloadavg()[0]
    print(f"# {time.strftime('%Y-%m-%d %H:%M')}, {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}; load average {load:.1f} at the start" + (
              " (busy: other processes compete for the cores, times are longer than on an idle machine)"
              if load > 0.5 * os.cpu_count() else ""))
    for name, call in CALLS.items():
        with scratch() as root:
            env = fresh_package(root)
            first = seconds(FIRST_CALL.format(call=call), env)
            again = seconds(FIRST_CALL.format(call=call), env)
        print(f"first {name:<40} new process, empty caches {first:6.2f} s; next process {again:6.2f} s")
    with scratch() as root:
        env = fresh_package(root)
        print(f"inverse-dynamics node, first torques, empty caches          {seconds(NODE_FIRST_TORQUES, env):6.2f} s")
        command = [sys.executable, "-m", "rne_dynamics", "compile"] + ["--generic"] * args.generic
        print(f"rne-dynamics compile{' --generic' * args.generic}, empty caches"
              f"{'':<24}{seconds(command, env):6.1f} s")
        with open(os.path.join(root, "rne_dynamics", "algorithms", "crba.py"), "a") as module:
            module.write("# an edit\n")
        print(f"rne-dynamics compile after an edit of algorithms/crba.py{'':<8}{seconds(command, env):6.1f} s")
    if args.readme:
        setup, total, first = readme_first_command()
        print(f"README's first command: set-up {setup:.0f} s, in all {total:.0f} s; live's first torques "
              f"{first:.1f} s after its start")
    return 0


if __name__ == "__main__":
    sys.exit(main())
