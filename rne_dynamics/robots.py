"""Robots bundled with the package."""
import os

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")
DEFAULT_ROBOT = os.path.join(DATA_DIR, "rne_arm6.urdf")


def bundled_robot_path():
    """Path of the bundled 6-DOF arm URDF (``rne_arm6``), wherever the package is installed."""
    return DEFAULT_ROBOT


default_robot_path = bundled_robot_path

#: The bundled Gough-Stewart platform: its legs as a URDF tree (every joint one coordinate, for the nodes) and its
#: loop file; written by ``rd.gough_stewart(ball="gimbal")``.
GOUGH_STEWART = os.path.join(DATA_DIR, "gough_stewart.urdf")
GOUGH_STEWART_LOOPS = os.path.join(DATA_DIR, "gough_stewart_loops.yaml")
