#!/usr/bin/env python3
"""The size of every written program (issue 37: "a robot's programs, small and large, are machine code"): for each
example-robot-data robot the tests compare with Pinocchio (fixed and floating base, ``test/oracle.py``) and each
algorithm of ``driver.ALGORITHMS`` that can be written out, the traced program's operations, the tracer's time and
the programs above ``MAX_NODES`` (``rne_dynamics._tuning``).

    RNE_DYNAMICS_JIT=0 python benchmarks/bench_program_sizes.py [--above 100000] [--robots talos,tiago]
    python benchmarks/bench_program_sizes.py --build --robots talos_full_v2 [--numba]

Traced with no limit (``MAX_NODES`` lifted here), one process, one robot at a time; printed per robot: its
coordinates, its largest program, and each program of more than ``--above`` operations with its trace time
(CPU seconds), the nodes its C computes, and the process's peak memory so far. ``--build``: each such program's
C is also built as the written code builds it (``_native.c_source``, the compiler's command of ``_native.build``):
its first stage (the one-state module, at ``-O0`` above ``QUICK_FIRST``) and its final module (``-O1``, with the
batch's vector lanes), each with the compiler's CPU seconds and peak memory; then one call of each against
Pinocchio's same call in this process (the derivatives'), the generic kernel's Python, and with ``--numba`` its
numba machine code (loaded from numba's cache, else compiled here: minutes).
"""
import argparse
import os
import platform
import resource
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "test"))
import oracle  # noqa: E402  (the tests' robots: example-robot-data's URDFs both libraries load)

import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402

from rne_dynamics import _native, _trace, _tuning  # noqa: E402
from rne_dynamics._trace import traceable  # noqa: E402
from rne_dynamics._tuning import QUICK_FIRST  # noqa: E402
from rne_dynamics.algorithms import written  # noqa: E402
from rne_dynamics.algorithms.driver import ALGORITHMS  # noqa: E402
from rne_dynamics.algorithms.hybrid import known_coordinates  # noqa: E402
from rne_dynamics.algorithms.kinematics import REFERENCES  # noqa: E402


def extras_of(algorithm, robot):
    """Per-call parameters a user passes: the last link, the world frame, the joints' accelerations known (a
    floating base's forces); None for an algorithm whose parameters a tree does not have (loops' cuts)."""
    sample = {"link": robot.nb - 1, "reference": REFERENCES["world"], "classical": False,
              "known": known_coordinates(robot, robot.joint_names)}
    if any(name not in sample for name in algorithm.extras):
        return None
    return tuple(sample[name] for name in algorithm.extras)


def sizes(robot):
    """``[(algorithm name, operations, nodes the C computes, trace CPU seconds)]`` of ``robot``'s programs."""
    rows = []
    for algorithm in ALGORITHMS:
        extras = extras_of(algorithm, robot)
        if not algorithm.writable or extras is None:
            continue
        start = time.process_time()
        try:
            program, outputs, _ = written.program_of(algorithm, robot, robot.fdata, extras)
        except _trace.Untraceable as error:
            rows.append((algorithm.name, None, str(error), time.process_time() - start))
            continue
        seconds = time.process_time() - start
        rows.append((algorithm.name, len(program.ops), len(_native.used_nodes(program, outputs)), seconds))
    return rows


#: Pinocchio's call for each program measured (its arguments: the model, its data, q, v, then a or tau).
PINOCCHIO = {"forward_derivatives_step_forward_derivatives_memory": "computeABADerivatives",
             "derivatives_step_torque_derivatives_memory": "computeRNEADerivatives",
             "derivatives_step_wrench_derivatives_memory": "computeRNEADerivatives"}


def compiled(source, optimise):
    """Build ``source`` as :func:`rne_dynamics._native.build` does, here: ``(module, compiler CPU s, compiler peak
    MB, wall s)``."""
    folder = tempfile.mkdtemp(prefix="rne_sizes_")
    name = "sized_" + ("final" if optimise else "first")
    with open(os.path.join(folder, name + ".c"), "w") as f:
        f.write(source.replace(_native.UNNAMED, name))
    flags = _native.FLAGS if optimise else ["-O0", *_native.FLAGS[1:]]
    command = [_tuning.COMPILER, *flags, *_native.host_flags(), f"-I{sysconfig.get_paths()['include']}",
               f"-I{np.get_include()}", os.path.join(folder, name + ".c"), "-o", _native.path_of(name, folder), "-lm"]
    start = time.perf_counter()
    _, status, usage = os.wait4(subprocess.Popen(command).pid, 0)  # (the compiler's own CPU time and memory)
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"the compiler failed: {' '.join(command)}")
    module = _native.load(name, folder)
    shutil.rmtree(folder)
    return module, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, time.perf_counter() - start


def per_call(call, seconds=0.5):
    """The best of a few rounds' seconds per call of ``call()``."""
    call()
    calls = 1
    start = time.perf_counter()
    while time.perf_counter() - start < 0.05 * seconds:
        call()
        calls += 1
    rounds = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        rounds.append((time.perf_counter() - start) / calls)
    return min(rounds)


def measure_build(path, floating, algorithm_name, numba):
    """The program's trace, builds and calls (module docstring), printed."""
    robot = oracle.load_quietly(path, floating)
    algorithm = next(a for a in ALGORITHMS if a.name == algorithm_name)
    start = time.process_time()
    program, outputs, sizes = written.program_of(algorithm, robot, robot.fdata)
    traced = time.process_time() - start
    arguments = written.inputs_of(algorithm, robot)
    slots = algorithm.slots(robot)
    block = np.zeros(slots[2])
    row = [f"trace {traced:.1f} s CPU ({len(program.ops):,} ops)"]
    for optimise in (False, True):
        stage = "final -O1, lanes" if optimise else f"first -O{int(len(program.ops) <= QUICK_FIRST)}"
        source = _native.c_source(_native.UNNAMED, program, outputs, sizes, [int(s) for s in robot.quaternions],
                                  slots[0], lanes=optimise)
        module, cpu, memory, wall = compiled(source, optimise or len(program.ops) <= QUICK_FIRST)
        assert module.single(block, *arguments) == 0
        row.append(f"{stage}: {len(source) / 1e6:.1f} MB of C, {cpu:.1f} s CPU ({wall:.1f} s wall), compiler peak "
                   f"{memory:.0f} MB, {1e6 * per_call(lambda: module.single(block, *arguments)):.0f} us a call")
    pin_model = pin.buildModelFromUrdf(path, *([pin.JointModelFreeFlyer()] if floating else []))
    pin_data, q = pin_model.createData(), pin.neutral(pin_model)
    v = np.full(pin_model.nv, 0.1)
    call = getattr(pin, PINOCCHIO[algorithm_name])
    row.append(f"Pinocchio {PINOCCHIO[algorithm_name]} (nv {pin_model.nv}) "
               f"{1e6 * per_call(lambda: call(pin_model, pin_data, q, v, v)):.0f} us a call")
    python = traceable(algorithm.single)
    seconds = per_call(lambda: python(robot.fdata, robot.idata, block, *arguments), 2)
    row.append(f"generic kernel's Python {1e3 * seconds:.0f} ms")
    if numba:
        start = time.perf_counter()
        algorithm.single(robot.fdata, robot.idata, block, *arguments)
        row.append(f"generic numba kernel (first call {time.perf_counter() - start:.0f} s) "
                   f"{1e6 * per_call(lambda: algorithm.single(robot.fdata, robot.idata, block, *arguments)):.0f} us")
    print("    " + "\n    ".join(row), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--above", type=int, default=_tuning.MAX_NODES, help="programs listed in full above this")
    parser.add_argument("--robots", default="", help="fragments of the URDF paths (default: every robot)")
    parser.add_argument("--base", choices=("fixed", "floating", "both"), default="both")
    parser.add_argument("--build", action="store_true", help="build and call each program above --above")
    parser.add_argument("--numba", action="store_true", help="with --build: numba's generic kernel too")
    args = parser.parse_args()
    _trace.MAX_NODES = sys.maxsize
    print(f"{platform.machine()}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
          f"load average {os.getloadavg()[0]:.1f}; MAX_NODES {_tuning.MAX_NODES} (lifted here)")
    bases = {"fixed": (False,), "floating": (True,), "both": (False, True)}[args.base]
    cases = [(path, floating) for floating in bases
             for path in (oracle.floating_comparable_paths() if floating else oracle.comparable_paths())]
    if args.robots:  # (and a robot only we load with its mimic joints: Talos's full model)
        cases = [(p, f) for p in oracle.urdf_paths() for f in bases
                 if any(r in p for r in args.robots.split(",")) and ((p, f) in cases or not f)]
    warnings.simplefilter("ignore")
    above, start = [], time.process_time()
    for path, floating in sorted(cases, key=lambda case: oracle.load_quietly(*case).nv):
        robot = oracle.load_quietly(path, floating)
        rows = sizes(robot)
        name = oracle.short_name(path) + (" floating" if floating else "")
        largest = max(rows, key=lambda row: row[1] or 0)
        print(f"{name:70s} nv {robot.nv:3d}  largest {largest[0]} {largest[1]:,} ops "
              f"({sum(r[3] for r in rows):.1f} s CPU to trace all)", flush=True)
        for row in rows:
            if row[1] is None or row[1] > args.above:
                above.append((name, *row))
                print(f"    {row[0]:55s} {row[1] or 0:>10,} ops, {row[2]} in the C, traced in {row[3]:.1f} s CPU "
                      f"(peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)", flush=True)
                if args.build and row[0] in PINOCCHIO:
                    measure_build(path, floating, row[0], args.numba)
    print(f"{len(above)} programs above {args.above:,} operations; {time.process_time() - start:.0f} s CPU in all, "
          f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
