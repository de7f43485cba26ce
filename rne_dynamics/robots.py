"""Robots bundled with the package (URDFs in its ``data`` folder)."""
import os

from .errors import ModelError

DATA_DIR = os.path.join(os.path.dirname(__file__), "data")

#: The bundled robots by name. ``rne_arm6``: a fixed-base 6-DOF arm. ``rne_mobile_manipulator``: that arm on a 60 kg
#: wheeled platform, and ``rne_space_robot``: a 500 kg satellite with a 7-DOF arm, both to be loaded with
#: ``floating_base=True`` (their root link is the moving base).
BUNDLED_ROBOTS = ("rne_arm6", "rne_mobile_manipulator", "rne_space_robot")
DEFAULT_ROBOT = os.path.join(DATA_DIR, "rne_arm6.urdf")


def bundled_robot_path(name="rne_arm6"):
    """Path of a bundled robot's URDF (one of :data:`BUNDLED_ROBOTS`; default the 6-DOF arm ``rne_arm6``), wherever
    the package is installed."""
    if name not in BUNDLED_ROBOTS:
        raise ModelError(f"no bundled robot '{name}'; the bundled robots are {', '.join(BUNDLED_ROBOTS)}")
    return os.path.join(DATA_DIR, f"{name}.urdf")


default_robot_path = bundled_robot_path

#: The bundled Gough-Stewart platform: its legs as a URDF tree (every joint one coordinate, for the nodes) and its
#: loop file; written by ``rd.gough_stewart(ball="gimbal")``.
GOUGH_STEWART = os.path.join(DATA_DIR, "gough_stewart.urdf")
GOUGH_STEWART_LOOPS = os.path.join(DATA_DIR, "gough_stewart_loops.yaml")
