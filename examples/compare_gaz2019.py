#!/usr/bin/env python3
"""Held-out comparison with Gaz et al.'s published Panda model (IEEE RA-L 2019): on the last 30% of their
Trajectory_1 (the recording of ``identify_real_panda.py``), the torque RMSE per joint of their model, of the URDFs
and of ``rd.identify_robot``'s fit on the first 70%.

    python examples/compare_gaz2019.py [--data DIR] [--model DIR]

Their model is the Matlab their repository publishes (github.com/marcocognetti/FrankaEmikaPandaDynModel,
``matlab/dyn_model_panda``, GPL-3.0: downloaded, not shipped): ``tau = M(q) qdd + c(q, qd) + g(q) + tau_f(qd)``,
whose generated expressions this script evaluates with numpy (a Matlab expression is Python once ``.*``, ``.^``
and ``q(i)`` are rewritten). Accelerations: zero-phase local cubic fits of the measured velocities over 32 samples
(32 ms), as ``identify`` chooses for this 1 kHz recording. The URDFs: franka_description's fer (``hand:=false``,
test/data/fer_description/fer.urdf) and example-robot-data's panda (fingers locked).
"""
import argparse
import os
import re
import urllib.request
import warnings

import numpy as np

import rne_dynamics as rd
from rne_dynamics.tools.loads import smooth_derivatives

from identify_real_panda import PANDA, download, recording

MODEL = ("https://raw.githubusercontent.com/marcocognetti/FrankaEmikaPandaDynModel/"
         "24d85ce4e648e2e894c832bfeee9b16711eb1a1a/matlab/dyn_model_panda/")
FUNCTIONS = {"get_MassMatrix": ("MassMatrix", "q"), "get_CoriolisVector": ("cqdq", "q, dq"),
             "get_GravityVector": ("g_li_hat", "q"), "get_FrictionTorque": None}   # the last: its numbers only
GENERATED = ("get_MassMatrix", "get_CoriolisVector", "get_GravityVector")
FER = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "test", "data", "fer_description",
                   "fer.urdf")


def statements(code):
    """Matlab statements split at ``;`` and line ends outside brackets."""
    out, depth, current = [], 0, []
    for ch in code:
        depth += (ch == "[") - (ch == "]")
        if depth == 0 and ch in ";\n":
            out.append("".join(current).strip())
            current = []
        else:
            current.append(ch)
    return [s for s in out + ["".join(current).strip()] if s and s != "end"]


def matlab_function(path, result, arguments):
    """A generated Matlab function of theirs as a numpy function of ``(N, 7)`` arrays."""
    with open(path) as stream:
        code = stream.read()
    code = "\n".join(line for line in code[code.index("function"):].splitlines()[1:]
                     if not line.strip().startswith("%")).replace("...", "")
    code = code.replace(".*", "*").replace(".^", "**").replace("./", "/").replace("^", "**")
    code = re.sub(r"\b(d?q)\((\d)\)", lambda m: f"{m.group(1)}[..., {int(m.group(2)) - 1}]", code)
    code = re.sub(r"Bstack_hat\((\d+)\)", lambda m: f"Bstack_hat[{int(m.group(1)) - 1}]", code)
    lines = []
    for statement in statements(code):
        name, value = (x.strip() for x in statement.split("=", 1))
        if value.startswith("["):
            rows = [r for r in value[1:-1].replace("\n", " ").split(";") if r.strip()]
            value = f"[{', '.join(rows)}]" if name == "Bstack_hat" else "[" + ", ".join(f"[{r}]" for r in rows) + "]"
        lines.append(f"    {name} = {value}")
    namespace = {"np": np}
    exec(f"from numpy import cos, sin, exp, sqrt\ndef f({arguments}):\n" + "\n".join(lines) +
         f"\n    return {result}\n", namespace)
    return namespace["f"]


def stacked(rows, n, shape):
    """Rows of entries (scalars, ``(n,)`` arrays) as a float array ``(n, *shape)``."""
    entries = [np.broadcast_to(np.asarray(e, float), (n,)) for row in rows for e in row]
    return np.moveaxis(np.array(entries).reshape(*shape, n), -1, 0)


def gaz_torques(directory, q, qd, qdd):
    M, c, g = (matlab_function(os.path.join(directory, f"{name}.m"), *FUNCTIONS[name]) for name in GENERATED)
    n = len(q)
    with open(os.path.join(directory, "get_FrictionTorque.m")) as stream:   # tau_f = A/(1+e^-alpha(qd+s)) - A/(1+e^-alpha s)
        numbers = re.search(r"fp = \[(.*?)\];", stream.read(), re.S).group(1).replace("...", "")
    A, _, s, alpha = (np.array([float(x) for x in row.split(",")]) for row in numbers.split(";"))
    friction = A / (1 + np.exp(-alpha * (qd + s))) - A / (1 + np.exp(-alpha * s))
    return (np.einsum("nij,nj->ni", stacked(M(q), n, (7, 7)), qdd) + stacked(c(q, qd), n, (7,))
            + stacked(g(q), n, (7,)) + friction)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the rbt_log directory of a clone (default: download)")
    parser.add_argument("--model", help="the matlab/dyn_model_panda directory of a clone (default: download)")
    args = parser.parse_args(argv)
    cache = os.path.join(os.path.expanduser("~"), ".cache", "rne_dynamics", "gaz2019")
    model = args.model or os.path.join(cache, "model")
    os.makedirs(model, exist_ok=True)
    for name in FUNCTIONS:
        if not os.path.isfile(os.path.join(model, f"{name}.m")):
            print(f"downloading {MODEL}{name}.m")
            urllib.request.urlretrieve(f"{MODEL}{name}.m", os.path.join(model, f"{name}.m"))
    time, q, qd, tau = recording(args.data or download(cache))
    qdd = smooth_derivatives(time, qd, 32)[0]
    cut = len(q) - int(round(0.3 * len(q)))
    rows = {"Gaz et al. 2019": np.sqrt(np.mean((tau[cut:] - gaz_torques(model, q[cut:], qd[cut:], qdd[cut:])) ** 2,
                                               axis=0))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the fer's link 4 breaks the triangle inequality: said below
        robots = {"fer": rd.load_urdf(FER),
                  "panda": rd.load_urdf(PANDA).with_locked_joints({"panda_finger_joint1": 0.0})}
    for name, robot in robots.items():
        result = rd.identify_robot(robot, (q, qd, qdd, tau), coulomb_velocity=0.01, holdout=0.3, armature=True)
        rows[f"{name} URDF"], rows[f"{name} identified"] = result.holdout_rmse_given, result.holdout_rmse
    print(f"torque RMSE (N m) on the last {len(q) - cut} of {len(q)} samples, joints 1-7:")
    for name, values in rows.items():
        print(f"  {name:<18}" + "".join(f"{v:7.3f}" for v in values))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
