"""Conversions between ROS messages and numpy."""
import array


def stamp_seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def doubles(x):
    """A float64 numpy array as the ``array('d')`` message fields hold (one memory copy, no Python loop)."""
    return array.array("d", x.tobytes())


def set_vectors(first, second, values):
    """Write six floats ``values`` into two ``Vector3`` fields: a wrench's force and torque, a twist's linear and
    angular parts."""
    first.x, first.y, first.z, second.x, second.y, second.z = values
