"""Robots bundled with the package."""
import os

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
DEFAULT_ROBOT = os.path.join(DATA_DIR, "rne_arm6.urdf")


def default_robot_path():
    """Path of the bundled 6-DOF arm URDF (``rne_arm6``)."""
    return DEFAULT_ROBOT
