#!/usr/bin/env python3
"""Write examples/arm6_motion.csv: a planned motion of the bundled arm (rne_dynamics/data/rne_arm6.urdf), 100 Hz.

Three minimum-jerk moves between rests: a slow reach, a turn of the base and wrist, and a lift at the shoulder's
velocity limit that takes the shoulder to about 80% of its 150 N m effort limit. Positions and velocities are exact;
accelerations are left for the tool to differentiate.

    python examples/make_example_motion.py [OUTPUT.csv]
"""
import os
import sys

import numpy as np

RATE_HZ = 100
JOINTS = ("shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint")
# (start time s, duration s, target pose rad); the arm starts at the first pose.
START = (0.0, -1.9, 1.5, -1.2, -1.57, 0.0)
MOVES = [(0.3, 1.4, (0.6, -0.5, 0.6, -0.8, -1.0, 0.8)),
         (2.0, 1.0, (1.4, -0.5, 0.6, 0.4, 0.2, -0.6)),
         (3.3, 0.45, (1.4, -1.25, 0.375, 0.4, 0.2, -0.6))]
DURATION = 4.0


def minimum_jerk(s):
    """Position, velocity and acceleration factors of the quintic 10 s^3 - 15 s^4 + 6 s^5 for s in [0, 1]."""
    s = np.clip(s, 0.0, 1.0)
    return 10 * s**3 - 15 * s**4 + 6 * s**5, 30 * s**2 - 60 * s**3 + 30 * s**4


def motion():
    t = np.arange(round(DURATION * RATE_HZ) + 1) / RATE_HZ
    q = np.tile(np.array(START), (len(t), 1))
    qd = np.zeros_like(q)
    pose = np.array(START)
    for start, duration, target in MOVES:
        position, velocity = minimum_jerk((t - start) / duration)
        step = np.array(target) - pose
        q += position[:, None] * step
        qd += velocity[:, None] * step / duration
        pose = np.array(target)
    return t, q, qd


def main(path=os.path.join(os.path.dirname(os.path.abspath(__file__)), "arm6_motion.csv")):
    t, q, qd = motion()
    header = ["time"] + list(JOINTS) + [f"{joint}.velocity" for joint in JOINTS]
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(",".join(header) + "\n")
        np.savetxt(stream, np.column_stack([t, q, qd]), delimiter=",", fmt="%.6f")
    print(f"wrote {path}: {len(t)} samples at {RATE_HZ} Hz")


if __name__ == "__main__":
    main(*sys.argv[1:])
