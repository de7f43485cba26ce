#!/usr/bin/env python3
"""Seconds from a robot's first use on a machine until each of its programs runs as written machine code (issue 37:
"a robot's programs, small and large, are machine code within 30 s of its first use on a machine").

    python benchmarks/bench_first_use.py [--robots Panda,Talos] [--limit 300] [--kernels]

Each robot runs in a new process with an empty private ``RNE_DYNAMICS_CACHE`` (so numba's generic kernels are absent
too and compile in the background; ``--kernels``: the user cache's numba kernels are copied in first, as after
``scripts/setup_venv.sh``). The process calls each program with ``data=`` in turns, every ``PERIOD`` seconds, and
reads ``rd.engine_report()`` after each call (the first call of a program traces it, on the caller's thread: the
programs after it wait for that too): a program is machine code when its call counted a state of
``"written machine code"`` and none elsewhere. Printed per program: the seconds from the robot's first call, the
calls until then, its first call's time and engine; and the machine, the load average before and after.
"""
import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test"))
import oracle  # noqa: E402  (the tests' paths to example-robot-data's URDFs)

ROBOTS = {"Panda": "panda_description/urdf/panda.urdf", "Talos": "talos_data/robots/talos_full_v2.urdf"}
#: Seconds between two rounds of calls.
PERIOD = 0.2
CHILD = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np, rne_dynamics as rd
robot = rd.load_urdf(sys.argv[1])
limit, period = float(sys.argv[2]), float(sys.argv[3])
q = rd.neutral(robot) + 0.1; v = np.full(robot.nv, 0.2); data = robot.data()
programs = {
    "inverse_dynamics": lambda: rd.inverse_dynamics(robot, q, v, v, data=data),
    "forward_dynamics": lambda: rd.forward_dynamics(robot, q, v, v, data=data),
    "mass_matrix": lambda: rd.mass_matrix(robot, q, data=data),
    "inverse_dynamics_derivatives": lambda: rd.inverse_dynamics_derivatives(robot, q, v, v, data=data),
    "forward_dynamics_derivatives": lambda: rd.forward_dynamics_derivatives(robot, q, v, v, data=data),
}


def counts():
    out = {}
    for report in rd.engine_report().values():
        for engine, n in report["states"].items():
            out[engine] = out.get(engine, 0) + n
    return out


first = time.perf_counter()
rows = {name: {"calls": 0} for name in programs}
while time.perf_counter() - first < limit and any("seconds" not in row for row in rows.values()):
    for name, call in programs.items():
        row = rows[name]
        if "seconds" in row:
            continue
        before = counts()
        call_start = time.perf_counter()
        call()
        row["call_ms"] = 1e3 * (time.perf_counter() - call_start)
        row["calls"] += 1
        after = counts()
        ran = sorted(e for e in after if after[e] != before.get(e, 0))
        row.setdefault("first engine", ran)
        row.setdefault("first call ms", row["call_ms"])
        if ran == ["written machine code"]:
            row["seconds"] = time.perf_counter() - first
    time.sleep(period)
failures = {name: report["failures"] for name, report in rd.engine_report().items() if report["failures"]}
print(json.dumps({"import and load_urdf s": first - start, "rows": rows, "failures": failures}))
"""


def run(robot, limit, kernels):
    cache = tempfile.mkdtemp(prefix="rne_first_use_")
    try:
        if kernels:
            user = os.path.join(os.path.expanduser("~"), ".cache", "rne_dynamics", "numba")
            if os.path.isdir(user):
                shutil.copytree(user, os.path.join(cache, "numba"))
        env = dict(os.environ, RNE_DYNAMICS_CACHE=cache)
        env.pop("RNE_DYNAMICS_STRICT", None)
        load = os.getloadavg()
        arguments = [oracle.robot_path(ROBOTS[robot]), str(limit), str(PERIOD)]
        out = subprocess.run([sys.executable, "-c", CHILD, *arguments], env=env, capture_output=True, text=True)
        if out.returncode:
            raise SystemExit(f"{robot}: the process failed:\n{out.stderr}")
        result = json.loads(out.stdout.strip().splitlines()[-1])
        result["load before, after"] = (load[0], os.getloadavg()[0])
        return result
    finally:
        time.sleep(2)  # the builder process may still write its last files
        shutil.rmtree(cache, ignore_errors=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robots", default="Panda,Talos")
    parser.add_argument("--limit", type=float, default=300.0, help="seconds to wait at most per robot")
    parser.add_argument("--kernels", action="store_true", help="start with the user cache's numba kernels")
    args = parser.parse_args()
    print(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, numba kernels "
          f"{'copied from the user cache' if args.kernels else 'absent (empty cache)'}")
    for robot in args.robots.split(","):
        result = run(robot, args.limit, args.kernels)
        print(f"{robot}: import and load_urdf {result['import and load_urdf s']:.1f} s, load average "
              f"{result['load before, after'][0]:.1f} before, {result['load before, after'][1]:.1f} after")
        for name, row in result["rows"].items():
            seconds = f"{row['seconds']:6.1f} s" if "seconds" in row else f"  not in {args.limit:.0f} s"
            print(f"  {name:30s} {seconds}  ({row['calls']} calls; first call {row['first call ms']:.0f} ms on "
                  f"{', '.join(row['first engine'])}; "
                  f"last call {row['call_ms']:.2f} ms)")
        for name, failure in result["failures"].items():
            print(f"  failures {name}: {failure}")


if __name__ == "__main__":
    main()
