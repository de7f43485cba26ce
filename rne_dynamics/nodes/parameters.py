"""The parameters both dynamics nodes declare: their specifications and the checks of their values that need no model.

Per-joint parameters (``armature``, ``viscous_friction``, ``coulomb_friction``; the elastic transmissions'
``joint_stiffness``, ``joint_damping``, ``motor_inertia``, ``gear_ratio``: :mod:`rne_dynamics.model.drive`) are
double arrays: empty keeps the URDF values (``<dynamics damping friction>``, armature 0; rigid joints, direct
drive), one value applies to every joint, otherwise one value per movable joint in ``robot.joint_names`` order (the
movable, non-mimic joints depth-first over the tree, children in document order: not the URDF's document order on a
branched robot; locked joints left out). Each also takes values by joint name: a map in a parameter file
(``armature: {elbow_joint: 0.1}``), which ROS flattens to the double parameter ``armature.elbow_joint``; the node
declares those its start-up overrides name (they can then be set at run time). The drive values come, each later one
winning for the joints it gives: the URDF, the YAML file of parameter ``drive_file``
(:func:`rne_dynamics.load_drive`), the arrays, the values by name.

``xacro_args`` (``NAME:=VALUE``) and ``package_paths`` (``NAME=DIR``) expand a ``robot_description`` that is a
``.xacro`` path or xacro text, as the command line's ``--xacro-arg`` and ``--package-path``.

``locked_joints`` holds joints fixed (``joint=position`` entries, :meth:`Robot.with_locked_joints`): the model loses
them, so joint states need not carry them (a gripper published elsewhere). One string array, as
``external_wrench_topics``: ROS 2 parameters have no map type, and two parallel arrays (names, positions) could not
be changed together by ``ros2 param set``.
"""
import math
from dataclasses import dataclass

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, ParameterType

from ..errors import ModelError
from ..model.drive import load_drive
from ..model.xacro_expand import argument_entry, package_entry


@dataclass(frozen=True)
class Spec:
    """A node parameter: default (``None``: an empty array), descriptor, and whether it changes the model."""
    name: str
    default: object
    type: int
    description: str
    low: float = None
    high: float = None
    constraints: str = ""
    rebuilds_model: bool = False
    per_joint: bool = False  # a per-joint array that also takes ``<name>.<joint>`` values by joint name
    read_only: bool = False  # read once, at start

    def descriptor(self):
        d = ParameterDescriptor(name=self.name, type=self.type, description=self.description,
                                additional_constraints=self.constraints, read_only=self.read_only)
        if self.low is not None and self.type == INTEGER:
            d.integer_range = [IntegerRange(from_value=self.low, to_value=self.high, step=1)]
        elif self.low is not None:
            d.floating_point_range = [FloatingPointRange(from_value=self.low, to_value=self.high, step=0.0)]
        return d


STRING, DOUBLE, BOOL = ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_BOOL
INTEGER = ParameterType.PARAMETER_INTEGER
DOUBLES, STRINGS = ParameterType.PARAMETER_DOUBLE_ARRAY, ParameterType.PARAMETER_STRING_ARRAY
PER_JOINT = ("empty: as the URDF says; one value: every joint; else one value per joint in joint_names order; or by "
             "joint name: <name>.<joint> (a map in a parameter file)")

COMMON_PARAMETERS = (
    Spec("robot_description", "", STRING, "URDF XML text or a URDF file path; when set it wins: messages on the "
         "relative robot_description topic are then ignored; empty: the robot from the robot_description topic",
         rebuilds_model=True),
    Spec("xacro_args", None, STRINGS, "arguments of a xacro robot_description (a .xacro path or xacro text), entries "
         "NAME:=VALUE as xacro's command line takes them", constraints="NAME:=VALUE, each NAME at most once",
         rebuilds_model=True),
    Spec("package_paths", None, STRINGS, "share directories of the packages a xacro robot_description finds "
         "($(find NAME)) where the ament index has none, entries NAME=DIR", constraints="NAME=DIR, DIR an existing "
         "directory, each NAME at most once", rebuilds_model=True),
    Spec("gravity", [0.0, 0.0, -9.81], DOUBLES, "gravitational acceleration in the root-link frame (m/s^2)",
         constraints="3 finite values", rebuilds_model=True),
    Spec("payload.link", "", STRING, "link that carries the payload; empty: no payload", rebuilds_model=True),
    Spec("payload.mass", 0.0, DOUBLE, "payload mass (kg); needs payload.link", 0.0, 1.0e4, rebuilds_model=True),
    Spec("payload.com", [0.0, 0.0, 0.0], DOUBLES, "payload centre of mass in the payload link frame (m)",
         constraints="3 finite values", rebuilds_model=True),
    Spec("payload.inertia", [0.0] * 6, DOUBLES, "payload inertia about its COM, link axes (kg m^2)",
         constraints="6 values ixx ixy ixz iyy iyz izz, physically possible", rebuilds_model=True),
    Spec("drive_terms", True, BOOL, "true: torques and accelerations with each drive's rotor inertia and friction "
         "(URDF <dynamics>, the parameters below); false: rigid-body dynamics only (as Pinocchio's rnea and aba)",
         rebuilds_model=True),
    Spec("armature", None, DOUBLES, "rotor inertia reflected to each joint (kg m^2 or kg)",
         constraints=PER_JOINT + "; >= 0", rebuilds_model=True, per_joint=True),
    Spec("viscous_friction", None, DOUBLES, "viscous friction coefficient per joint (N m s/rad or N s/m)",
         constraints=PER_JOINT + "; >= 0", rebuilds_model=True, per_joint=True),
    Spec("coulomb_friction", None, DOUBLES, "Coulomb friction per joint (N m or N)",
         constraints=PER_JOINT + "; >= 0", rebuilds_model=True, per_joint=True),
    Spec("joint_stiffness", None, DOUBLES, "elastic transmission stiffness K per joint (N m/rad); 0: rigid",
         constraints=PER_JOINT.replace("as the URDF says", "rigid") + "; >= 0", rebuilds_model=True,
         per_joint=True),
    Spec("joint_damping", None, DOUBLES, "damping D of the elastic transmission per joint (N m s/rad)",
         constraints=PER_JOINT.replace("as the URDF says", "none") + "; >= 0", rebuilds_model=True,
         per_joint=True),
    Spec("motor_inertia", None, DOUBLES, "motor rotor inertia per joint, motor side (kg m^2)",
         constraints=PER_JOINT.replace("as the URDF says", "none") + "; >= 0", rebuilds_model=True,
         per_joint=True),
    Spec("gear_ratio", None, DOUBLES, "gear ratio per joint (motor angle / joint angle)",
         constraints=PER_JOINT.replace("as the URDF says", "1") + "; > 0", rebuilds_model=True, per_joint=True),
    Spec("drive_file", "", STRING, "YAML file of drive parameters per joint, {joint: {parameter: value}} "
         "(rne_dynamics.load_drive: armature, damping, friction, stiffness, spring_damping, rest_offset, "
         "motor_inertia, gear_ratio); the per-joint parameters given here override its values; empty: none",
         rebuilds_model=True),
    Spec("locked_joints", None, STRINGS, "joints held fixed at a position, entries joint=position (rad or m): "
         "left out of the model, so joint states need not carry them", constraints="joint=position, each a movable "
         "joint at most once; locking a mimic joint's source locks it too", rebuilds_model=True),
    Spec("diagnostics_rate_hz", 1.0, DOUBLE, "rate of the /diagnostics status (Hz)", 0.1, 100.0),
    Spec("joint_state_timeout", 0.0, DOUBLE, "a joint whose last value on /joint_states is older than this makes a "
         "WARN naming it (s); 0: no check", 0.0, 3600.0),
    Spec("joint_states_depth", 100, INTEGER, "/joint_states messages kept while the node is busy, and the inverse "
         "node's ~/torques for its subscribers (QoS history depth, read at start): a stall shorter than depth / rate "
         "is caught up, no message lost", 1, 100000, read_only=True),
)
#: The node parameters of the elastic drives and the names :meth:`Robot.with_drive` gives them.
ELASTIC_PARAMETERS = {"joint_stiffness": "stiffness", "joint_damping": "spring_damping",
                      "motor_inertia": "motor_inertia", "gear_ratio": "gear_ratio"}
#: The per-joint drive parameters and the names :meth:`Robot.with_drive` gives them.
DRIVE_PARAMETERS = {"armature": "armature", "viscous_friction": "damping", "coulomb_friction": "friction",
                    **ELASTIC_PARAMETERS}
PER_JOINT_PARAMETERS = tuple(DRIVE_PARAMETERS)


def finite_values(name, value, count=None, non_negative=False):
    """``value`` as a float array, or a ValueError naming the parameter."""
    x = np.asarray(value, float)
    if count is not None and x.shape != (count,):
        raise ValueError(f"{name} needs {count} values, got {len(x)}")
    if not np.isfinite(x).all() or (non_negative and (x < 0).any()):
        raise ValueError(f"{name} must be finite{' and >= 0' if non_negative else ''}, got {list(value)}")
    return x


#: The parameters that change which joints the model has: the others are checked against the model in service.
STRUCTURE = {"robot_description", "xacro_args", "package_paths", "loops_file", "locked_joints"}
#: The xacro parameters (named as load_urdf's keywords) and the parser of their entries.
XACRO_PARAMETERS = {"xacro_args": argument_entry, "package_paths": package_entry}


def check_common(name, value):
    """Checks of a common parameter value that need no model (the model checks the rest when it is built)."""
    if name == "gravity":
        finite_values(name, value, 3)
    elif name in ("payload.com", "payload.inertia"):
        finite_values(name, value, 3 if name == "payload.com" else 6)
    elif name == "locked_joints":
        locked_positions(value)
    elif name in XACRO_PARAMETERS:
        xacro_entries(name, value)
    elif name in PER_JOINT_PARAMETERS:
        finite_values(name, value, non_negative=True)
        if name == "gear_ratio" and any(x == 0 for x in value):
            raise ValueError(f"gear_ratio must be > 0, got {list(value)}")


def xacro_entries(name, entries):
    """``{NAME: VALUE}`` of xacro parameter ``name`` (``xacro_args`` or ``package_paths``), None when empty (then
    ``load_urdf`` expands only what needs xacro); ValueError naming a bad entry."""
    out = {}
    for entry in entries:
        try:
            key, value = XACRO_PARAMETERS[name](entry)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from None
        if key in out:
            raise ValueError(f"{name} names '{key}' twice")
        out[key] = value
    return out or None


def xacro_options(values):
    """``load_urdf``'s keywords ``xacro_args`` and ``package_paths`` from the parameter ``values``."""
    return {name: xacro_entries(name, values.get(name, ())) for name in XACRO_PARAMETERS}


def locked_positions(entries):
    """``{joint: position}`` from the ``joint=position`` entries of ``locked_joints``; ValueError naming a bad one."""
    out = {}
    for entry in entries:
        joint, sep, value = (part.strip() for part in entry.partition("="))
        try:
            position = float(value)
        except ValueError:
            position = math.nan
        if not sep or not joint or not math.isfinite(position):
            raise ValueError(f"locked_joints entry '{entry}' is not joint=position (a finite number)")
        if joint in out:
            raise ValueError(f"locked_joints names joint '{joint}' twice")
        out[joint] = position
    return out


def check_names(robot, values, specs):
    """The checks of the common parameter ``values`` against ``robot`` that need no new model: the payload link
    exists, per-joint arrays have 0, 1 or one value per joint, values by joint name name a joint of the robot, the
    drive file reads. :class:`ModelError` names what is wrong."""
    link, mass = values["payload.link"], values["payload.mass"]
    if link and link not in robot.link_frames:
        raise ModelError(f"payload.link: robot '{robot.name}' has no link '{link}'")
    if not link and mass != 0.0:
        raise ModelError(f"payload.mass is {mass} kg but payload.link is empty: set payload.link first")
    for name in PER_JOINT_PARAMETERS:
        per_joint(name, values[name], robot)
    for name in values:
        field, _, joint = name.partition(".")
        if joint and field in specs and specs[field].per_joint and joint not in robot.joint_names:
            raise ModelError(f"{name}: robot '{robot.name}' has no movable joint '{joint}' (its joints: "
                             f"{', '.join(robot.joint_names)})")
    if values["drive_file"]:
        load_drive(robot, values["drive_file"])


def by_joint(name, values):
    """The values by joint name of per-joint parameter ``name`` (parameters ``<name>.<joint>``): ``{joint: value}``."""
    prefix = name + "."
    return {key[len(prefix):]: value for key, value in values.items() if key.startswith(prefix)}


def joint_array(name, values, robot, default):
    """Per-joint parameter ``name`` in ``robot.joint_names`` order, its values by joint name applied over its array
    (``default``, a number or one per joint, for the joints neither gives); None if neither gives any."""
    array, named = per_joint(name, values[name], robot), by_joint(name, values)
    if array is None and not named:
        return None
    array = np.array(np.broadcast_to(default, len(robot.joint_names)), float) if array is None else array.copy()
    for joint, value in named.items():
        array[list(robot.joint_names).index(joint)] = value
    return array


def named_link(name, values, robot):
    """A link-name parameter: empty (off) or one of ``robot``'s links, else :class:`ModelError` naming both."""
    link = values[name]
    if link and link not in robot.link_names:
        raise ModelError(f"{name}: robot '{robot.name}' has no link '{link}'")


def per_joint(name, values, robot):
    """A per-joint parameter as :meth:`Robot.with_drive` takes it (``None`` keeps the robot's values)."""
    if len(values) == 0:
        return None
    n = len(robot.joint_names)
    if len(values) == 1:
        return np.full(n, values[0])
    if len(values) != n:
        raise ModelError(f"{name} has {len(values)} values; robot '{robot.name}' has {n} joints "
                         f"({', '.join(robot.joint_names)}): give 0, 1 or {n} values")
    return np.asarray(values, float)
