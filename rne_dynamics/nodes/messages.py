"""Conversions between ROS messages and numpy."""
import array


def stamp_seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def doubles(x):
    """A float64 numpy array as the ``array('d')`` message fields hold (one memory copy, no Python loop)."""
    return array.array("d", x.tobytes())
