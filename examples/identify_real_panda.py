#!/usr/bin/env python3
"""Identify a real Franka Emika Panda from the recording of Gaz et al. (IEEE RA-L 2019, "Dynamic identification of
the Franka Emika Panda robot with retrieval of feasible parameters using penalty-based optimization"): an exciting
trajectory of 21 s, 20,544 samples at about 1 kHz with 0.7-8.8 ms gaps, positions, velocities and the measured link
torques of the 7 joints, published in https://github.com/marcocognetti/FrankaEmikaPandaDynModel (GPL-3.0; not part
of this package: downloaded from there, or read from a clone).

    python examples/identify_real_panda.py [--data DIR] [--output DIR] [--regularisation LAMBDA]

``--data``: the directory ``matlab/data/Exciting_Traj/Trajectory_1/rbt_log`` of a clone (default: its four files
downloaded once into ``~/.cache/rne_dynamics/gaz2019``). The recording is written as a CSV (``time``,
``<joint>.position``, ``.velocity``, ``.effort``) and identified by ``rne-dynamics identify --links --friction
--holdout 0.3`` on example-robot-data's ``panda.urdf`` with the fingers locked: the last 30% of the recording
validates. Accelerations are differentiated (zero-phase local cubic fits, the window chosen from the rate).
"""
import argparse
import os
import sysconfig
import urllib.request

import numpy as np

from rne_dynamics.tools import cli

SOURCE = ("https://raw.githubusercontent.com/marcocognetti/FrankaEmikaPandaDynModel/"
          "44f1ec8a615555eb3469ca9b0abd31ef863872b5/matlab/data/Exciting_Traj/Trajectory_1/rbt_log/")
FILES = {name: f"exciting_traj_{name}.txt" for name in ("time", "positions", "velocity", "torques")}
PANDA = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data", "robots",
                     "panda_description", "urdf", "panda.urdf")
JOINTS = [f"panda_joint{j}" for j in range(1, 8)]
#: The validation RMSE (N m) that Gaz et al. 2019 report for their identified model (their validation trajectories).
GAZ_2019 = (0.64, 1.01, 0.77, 0.65, 0.42, 0.20, 0.16)


def recording(directory):
    """``(time, q, qd, tau)`` from the four files (time: one value per line; the others: 7 lines per sample)."""
    time = np.loadtxt(os.path.join(directory, FILES["time"]))
    q, qd, tau = (np.loadtxt(os.path.join(directory, FILES[name])).reshape(-1, 7)
                  for name in ("positions", "velocity", "torques"))
    return time, q, qd, tau


def download(directory):
    os.makedirs(directory, exist_ok=True)
    for name in FILES.values():
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            print(f"downloading {SOURCE}{name}")
            urllib.request.urlretrieve(SOURCE + name, path)
    return directory


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", help="the rbt_log directory of a clone (default: download)")
    parser.add_argument("--output", default="panda_gaz2019")
    parser.add_argument("--robot", default=PANDA, help="the Panda's URDF (default: example-robot-data's)")
    parser.add_argument("--regularisation", default="1e-3")
    args = parser.parse_args(argv)
    directory = args.data or download(os.path.join(os.path.expanduser("~"), ".cache", "rne_dynamics", "gaz2019"))
    time, q, qd, tau = recording(directory)
    os.makedirs(args.output, exist_ok=True)
    path = os.path.join(args.output, "panda_gaz2019.csv")
    header = ["time"] + [f"{joint}.{quantity}" for joint in JOINTS for quantity in ("position", "velocity", "effort")]
    columns = [time] + [values[:, j] for j in range(7) for values in (q, qd, tau)]
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.9g")
    code = cli.main(["identify", args.robot, path, "--links", "--friction", "--holdout", "0.3", "--lock",
                     "panda_finger_joint1=0.0", "--coulomb-velocity", "0.01", "--regularisation", args.regularisation,
                     "-o", args.output])
    print("Gaz et al. 2019, validation RMSE (their trajectories):", " / ".join(f"{x:.2f}" for x in GAZ_2019), "N m")
    return code


if __name__ == "__main__":
    raise SystemExit(main())
