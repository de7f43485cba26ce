#!/usr/bin/env python3
"""Write examples/arm6_motion_bag/: the motion of examples/arm6_motion.csv as a rosbag2 (MCAP storage) of
``sensor_msgs/msg/JointState`` on ``/joint_states``, with the ``rosbags`` library (no ROS install needed).

Positions and velocities are the CSV's numbers; header stamps are the CSV's times from a fixed epoch, so
``rne-dynamics loads`` gives the same numbers for the bag and for the CSV.

    python examples/make_example_bag.py [MOTION.csv [BAG_DIR]]
"""
import csv
import os
import sys

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

HERE = os.path.dirname(os.path.abspath(__file__))
EPOCH_NS = 1_767_225_600 * 1_000_000_000   # 2026-01-01 00:00:00 UTC: recorded stamps are wall-clock times


def write_joint_states_bag(path, time, names, positions, velocities=None, *, efforts=None, topic="/joint_states",
                           storage=StoragePlugin.MCAP):
    """A rosbag2 at ``path`` with one JointState per sample: ``time`` (N,) s, ``positions`` (N, joints); optional
    ``velocities`` and ``efforts`` alike."""
    typestore = get_typestore(Stores.ROS2_KILTED)
    JointState, Header, Time = (typestore.types[name] for name in (
        "sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    empty = np.zeros(0)
    with Writer(path, version=9, storage_plugin=storage) as writer:
        connection = writer.add_connection(topic, JointState.__msgtype__, typestore=typestore)
        for k, t in enumerate(time):
            stamp = EPOCH_NS + round(t * 1e9)
            msg = JointState(header=Header(stamp=Time(sec=stamp // 1_000_000_000, nanosec=stamp % 1_000_000_000),
                                           frame_id=""),
                             name=list(names), position=np.ascontiguousarray(positions[k], float),
                             velocity=empty if velocities is None else np.ascontiguousarray(velocities[k], float),
                             effort=empty if efforts is None else np.ascontiguousarray(efforts[k], float))
            writer.write(connection, stamp, typestore.serialize_cdr(msg, JointState.__msgtype__))


def read_csv(path):
    """``time``, joint names, positions and velocities of a motion CSV written by make_example_motion.py."""
    with open(path, newline="", encoding="utf-8") as stream:
        header = next(csv.reader(stream))
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    names = [h for h in header[1:] if "." not in h]
    position = [header.index(n) for n in names]
    velocity = [header.index(f"{n}.velocity") for n in names]
    return table[:, 0], names, table[:, position], table[:, velocity]


def main(motion=os.path.join(HERE, "arm6_motion.csv"), bag=os.path.join(HERE, "arm6_motion_bag")):
    if os.path.exists(bag):
        sys.exit(f"{bag} exists; remove it first (a rosbag2 writer never overwrites)")
    time, names, positions, velocities = read_csv(motion)
    write_joint_states_bag(bag, time, names, positions, velocities)
    print(f"wrote {bag}: {len(time)} JointState messages on /joint_states")


if __name__ == "__main__":
    main(*sys.argv[1:])
