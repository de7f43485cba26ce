"""What the package's launch files share (they import it; it needs neither launch nor launch_ros)."""
import importlib.util
import os

#: The simulator's parameters in simulation.launch.py, on top of the parameter file: it holds its initial pose until
#: its first effort command (the inverse node's model may arrive seconds after its own), and its drives have some
#: rotor inertia and viscous friction (kg m^2 and N m s/rad, every joint), which damp what the loop's delay (each
#: command is the gravity torque of a state one or more steps old) would excite.
SIMULATOR_PARAMETERS = {"simulate": True, "hold_until_command": True, "armature": [0.1], "viscous_friction": [2.0]}


def sibling_launch_file(launch_file, name="dynamics.launch.py"):
    """The launch file ``name`` in the folder of ``launch_file`` (the importing launch file's ``__file__``: the
    installed share folder, or the source tree's), as a module whose arguments and nodes the caller reuses."""
    spec = importlib.util.spec_from_file_location(f"rne_dynamics_{name.split('.')[0]}_launch",
                                                  os.path.join(os.path.dirname(os.path.abspath(launch_file)), name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
