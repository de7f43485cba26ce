"""What both dynamics nodes share: the model and its parameters, joint-name matching, services and diagnostics.

The callbacks read one :class:`DynamicsModel` (the robot with payload and drive parameters applied, gravity, name
maps; never changed once built), replaced by a single assignment. A new description (topic, reload) or a parameter
set that changes the model is built on one worker thread, in the order the requests came, while the data path goes
on; the new model is swapped in on the executor's thread between two messages. A parameter set is answered at once
after the checks that need no new model (types, sizes, signs, link and joint names against the model in service);
a build that fails afterwards is refused with the reason (logged and in diagnostics), the parameters it set go back
to the last good values, and the last good model stays in service.

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

``locked_joints`` holds joints fixed (``joint=position`` entries, :meth:`Robot.with_locked_joints`): the model loses
them, so joint states need not carry them (a gripper published elsewhere). One string array, as
``external_wrench_topics``: ROS 2 parameters have no map type, and two parallel arrays (names, positions) could not
be changed together by ``ros2 param set``.
"""
import array
import gc
import math
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
import warnings
from dataclasses import dataclass, field, replace
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType, SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger

from .._jit import compiled
from ..errors import ModelError, ModelWarning, StateError, one_line
from ..model.joints import effort_unit
from ..algorithms.inputs import gravity_vector
from ..model.drive import RIGID as RIGID_DRIVE, load_drive
from ..model.loops import read_loops
from ..model.urdf import load_urdf

#: QoS of ``/robot_description`` as robot_state_publisher offers it: the last message kept for late joiners.
DESCRIPTION_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
WARNING_PERIOD = 2.0  # s between two logs of the same input problem


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

    def descriptor(self):
        d = ParameterDescriptor(name=self.name, type=self.type, description=self.description,
                                additional_constraints=self.constraints)
        if self.low is not None:
            d.floating_point_range = [FloatingPointRange(from_value=self.low, to_value=self.high, step=0.0)]
        return d


STRING, DOUBLE, BOOL = ParameterType.PARAMETER_STRING, ParameterType.PARAMETER_DOUBLE, ParameterType.PARAMETER_BOOL
DOUBLES, STRINGS = ParameterType.PARAMETER_DOUBLE_ARRAY, ParameterType.PARAMETER_STRING_ARRAY
PER_JOINT = ("empty: as the URDF says; one value: every joint; else one value per joint in joint_names order; or by "
             "joint name: <name>.<joint> (a map in a parameter file)")

COMMON_PARAMETERS = (
    Spec("robot_description", "", STRING, "URDF XML text or a URDF file path; when set it wins: messages on the "
         "relative robot_description topic are then ignored; empty: the robot from the robot_description topic",
         rebuilds_model=True),
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
STRUCTURE = {"robot_description", "loops_file", "locked_joints"}


def check_common(name, value):
    """Checks of a common parameter value that need no model (the model checks the rest when it is built)."""
    if name == "gravity":
        finite_values(name, value, 3)
    elif name in ("payload.com", "payload.inertia"):
        finite_values(name, value, 3 if name == "payload.com" else 6)
    elif name == "locked_joints":
        locked_positions(value)
    elif name in PER_JOINT_PARAMETERS:
        finite_values(name, value, non_negative=True)
        if name == "gear_ratio" and any(x == 0 for x in value):
            raise ValueError(f"gear_ratio must be > 0, got {list(value)}")


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


@dataclass(frozen=True)
class Description:
    """A robot description as loaded: the robot, the text or path it came from, where from, its model warnings."""
    robot: object
    text: str
    source: str
    warnings: tuple


def read_description(text, source, floating_base=False):
    """Load a URDF (XML text or path); a bad one raises :class:`ModelError` naming the element at fault.

    ``floating_base``: the node knows how the base moves (the inverse node's ``base`` parameter), so the robot gets a
    floating base (unless its URDF has a floating root joint already); else a floating base is refused."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelWarning)
        robot = load_urdf(text)
        if floating_base and not robot.has_floating_base:
            caught.clear()
            robot = load_urdf(text, floating_base=True)
    if robot.dof == 0:
        raise ModelError(f"robot '{robot.name}' has no movable joint: nothing to compute")
    several = [name for name, body in zip(robot.joint_names, robot.joint_bodies) if robot.bodies[body].nv != 1]
    if (robot.has_floating_base and not floating_base) or several:
        what = f"a floating joint '{robot.base_joint}'" if not several else (
            f"joints of several coordinates ({', '.join(several)})")
        raise ModelError(f"robot '{robot.name}' has {what}; the nodes take robots whose joints have one coordinate "
                         "each (JointState carries one position per joint) and a floating base only when parameter "
                         "'base' says how it moves (odometry, free_floating); use the library for it")
    notes = tuple(str(w.message) for w in caught if issubclass(w.category, ModelWarning))
    return Description(robot, text, source, notes)


@dataclass(eq=False)
class DynamicsModel:
    """Everything the callbacks need about one robot model, computed once per model."""
    robot: object
    gravity: np.ndarray
    settings: dict  # the parameter values this model was built from
    joint_names: list = field(init=False)
    input_names: list = field(init=False)  # the joints a JointState must carry: all, or a closed chain's actuated
    effort_limits: np.ndarray = field(init=False)
    locked: dict = field(init=False)  # the locked joints' positions, by name (the model has them as fixed joints)
    zeros: np.ndarray = field(init=False)
    _orders: dict = field(init=False, default_factory=dict)

    def __post_init__(self):
        self.joint_names = list(self.robot.joint_names)
        self.input_names = list(self.robot.actuated_joint_names)
        self.effort_limits = self.robot.effort_limits[self.robot.nv - len(self.joint_names):]  # a base's 6 first
        self.locked = locked_positions(self.settings.get("locked_joints", []))
        self.zeros = np.zeros(len(self.joint_names))  # shared: never written (kept writable: numba compiles per flag)
        self.input_zeros = np.zeros(len(self.input_names))
        self.elastic = np.array([self.joint_names.index(j) for j in self.robot.elastic_joints], dtype=np.int64)

    @staticmethod
    def structure(robot, values):
        """A loaded robot with the joint structure the parameter ``values`` give it: its loop closures
        (``loops_file``), its ``locked_joints`` held fixed. The per-joint values count the joints it has left."""
        if values.get("loops_file"):  # a closed chain: its loop closures and actuated joints
            robot = replace(robot, loops=read_loops(values["loops_file"], robot))
            if not robot.loops.actuated:
                raise ModelError(f"loops_file {values['loops_file']}: lists no actuated joint")
        locked = locked_positions(values["locked_joints"])
        if locked:
            robot = robot.with_locked_joints(locked)
            if robot.dof == 0:
                raise ModelError(f"locked_joints: every joint of robot '{robot.name}' is locked: nothing to compute")
        return robot

    @classmethod
    def build(cls, robot, values):
        """The model for a robot of the joint structure ``values`` give (:meth:`structure`) and the node's parameter
        values; :class:`ModelError` names what is wrong."""
        if values["payload.link"]:
            robot = robot.with_payload(values["payload.link"], values["payload.mass"], values["payload.com"],
                                       values["payload.inertia"])
        if values["drive_file"]:
            robot = load_drive(robot, values["drive_file"])
        robot = robot.with_drive(**{label: per_joint(name, values[name], robot)
                                    for name, label in DRIVE_PARAMETERS.items()})
        named = {label: by_joint(name, values) for name, label in DRIVE_PARAMETERS.items()}
        robot = robot.with_drive(**{label: given for label, given in named.items() if given})
        if not values["drive_terms"]:
            robot = robot.with_drive(**{label: np.zeros(len(robot.joint_names)) for label in RIGID_DRIVE})
        return cls(robot, gravity_vector(values["gravity"]), dict(values))

    def order(self, names):
        """Indices into a message's per-name arrays that give the robot's input joints (``joint_names``, or a
        closed chain's actuated joints) in order."""
        key = tuple(names)
        take = self._orders.get(key)
        if take is None:
            take = self._order(key)
            if len(self._orders) > 64:  # a publisher that keeps changing its name list: stay bounded
                self._orders.clear()
            self._orders[key] = take
        if isinstance(take, str):
            raise StateError(take)
        return take

    def _order(self, names):
        position = {}
        for k, name in enumerate(names):
            if name in position:
                return f"joint '{name}' is named twice"
            position[name] = k
        missing = [name for name in self.input_names if name not in position]
        if missing:
            return (f"{'no joint names' if not names else 'missing joints ' + ', '.join(missing)} "
                    f"(robot '{self.robot.name}' needs {', '.join(self.input_names)})")
        return np.array([position[name] for name in self.input_names], dtype=np.intp)

    def gather(self, names, values, what, optional=False):
        """The robot's joints' entries of a per-name message array (``position``, ``effort`` ...), joint order.

        An empty array of an ``optional`` field reads as zeros. Wrong lengths and non-finite values of the robot's
        joints raise :class:`StateError` (other joints' values are not looked at).
        """
        if len(values) != len(names):
            if optional and len(values) == 0:
                return self.input_zeros
            raise StateError(f"{len(names)} joint names but {len(values)} {what} values")
        x = (np.frombuffer(values) if type(values) is array.array else np.asarray(values, float))[self.order(names)]
        if not np.isfinite(x).all():
            bad = int(np.flatnonzero(~np.isfinite(x))[0])
            raise StateError(f"{what} of joint '{self.input_names[bad]}' is {x[bad]}")
        return x

    def joint_unit(self, k):
        """``N m`` for a revolute joint, ``N`` for a prismatic one."""
        return effort_unit(self.robot.joints[self.joint_names[k]].type)


def stamp_seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def doubles(x):
    """A float64 numpy array as the ``array('d')`` message fields hold (one memory copy, no Python loop)."""
    return array.array("d", x.tobytes())


class Statistics:
    """Counters behind /diagnostics: a window since the last status, and totals since start or ``~/reset``."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.total_inputs = self.total_rejected = self.total_violations = 0
        self.last_rejection = ""
        self.refused = {}  # topic -> (wall time, reason) of its last refused input, until a good one arrives
        self.new_window()

    def new_window(self):
        self.window_start = time.monotonic()
        self.inputs = self.rejected = self.violations = 0
        self.compute_sum = self.compute_max = 0.0
        self.violating_joints = set()

    def computed(self, seconds):
        self.inputs += 1
        self.total_inputs += 1
        self.compute_sum += seconds
        self.compute_max = max(self.compute_max, seconds)

    def reject(self, reason, topic=None):
        self.rejected += 1
        self.total_rejected += 1
        self.last_rejection = reason
        if topic is not None:
            self.refused[topic] = (time.time(), reason)

    def accepted(self, topic):
        """A good input on ``topic``: its last refusal is no longer news."""
        if self.refused:
            self.refused.pop(topic, None)

    def exceeded(self, joints):
        self.violations += 1
        self.total_violations += 1
        self.violating_joints.update(joints)


class DynamicsNode(Node):
    """Base of the dynamics nodes: parameters, the robot model, ``/robot_description``, services, diagnostics.

    A subclass creates its publishers and subscriptions, then calls :meth:`start`. It may override
    :meth:`check_parameter`, :meth:`check_names` and :meth:`check_model` (raise ValueError with the reason),
    :meth:`model_changed`, :meth:`parameters_changed`, :meth:`reset` and :meth:`diagnostic_values`.
    """

    def __init__(self, name, parameters, **kwargs):
        super().__init__(name, **kwargs)
        self.model = None
        self.description = None
        self.refusal = ""  # why the last description or model was refused; cleared by the next good one
        self.stats = Statistics()
        self._specs = {spec.name: spec for spec in COMMON_PARAMETERS + tuple(parameters)}
        self._warned = {}
        self._ready = False
        self._requests = 0  # number of the last accepted parameter set
        self._setter = {}  # parameter name -> number of the last accepted set that gave it its value
        self._reverting = False  # putting back the values of a set whose model was refused
        self._descriptions_queued = 0  # descriptions on the worker: the model in service may be about to change
        self.builds_pending = 0  # models requested and not yet swapped in or refused
        self._topic_text = None  # the last robot_description message: used once the parameter is emptied
        self._source_logged = None  # the description source last explained in the log
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        for spec in self._specs.values():
            declared = self.declare_parameter(spec.name, Parameter.Type(spec.type) if spec.default is None
                                              else spec.default, spec.descriptor())
            if declared.value is None:  # an empty array (rclpy cannot infer its type from [])
                self.set_parameters([Parameter(spec.name, Parameter.Type(spec.type), [])])
        self.declare_values_by_joint()
        self._ready = True
        # Models are built on this worker, one request after the other (the data path goes on meanwhile), and
        # swapped in on the executor's thread, between two messages. The worker's own state: the parameter values
        # of the last good model (with the sets accepted since, in order) and its description.
        self._good_values, self._good_description = self.parameter_values(), None
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}_model")
        self._outcomes, self._outcomes_lock = [], threading.Lock()
        self._install_guard = self.create_guard_condition(self._take_outcomes)
        self.diagnostics_publisher = self.create_output(DiagnosticArray, "/diagnostics")
        self.diagnostics_timer = self.create_timer(1.0 / self.get_parameter("diagnostics_rate_hz").value,
                                                   self.publish_diagnostics)
        # relative, as ros2_control's controller manager: /robot_description without a namespace, and a namespace
        # keeps one robot's description from another's
        self.create_subscription(String, "robot_description", self._on_description_message, DESCRIPTION_QOS)
        # a group of its own: the default group would hold the swap's guard condition while the reload waits for it
        self.create_service(Trigger, "~/reload_robot_description", self._on_reload,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(Trigger, "~/reset", self._on_reset)

    def declare_values_by_joint(self):
        """Declare the values by joint name (``armature.elbow_joint``) that the start-up overrides give: a map in a
        parameter file, ``armature: {elbow_joint: 0.1}``, arrives flattened so (rclpy keeps the overrides in
        ``_parameter_overrides``; no public accessor)."""
        for name in sorted(self._parameter_overrides):
            field, _, joint = name.partition(".")
            if joint and field in self._specs and self._specs[field].per_joint and name not in self._specs:
                spec = self._specs[field]
                self._specs[name] = Spec(name, 0.0, DOUBLE, f"{field} of joint '{joint}' (wins over {field}'s array "
                                         "and drive_file)", rebuilds_model=spec.rebuilds_model)
                self.declare_parameter(name, 0.0, self._specs[name].descriptor())

    def create_output(self, msg_type, topic):
        """A publisher without rclpy's default QoS-event handlers: each is a waitable that the executor visits on
        every wake-up, which at 1 kHz and a dozen outputs costs more than the dynamics."""
        return self.create_publisher(msg_type, topic, 10,
                                     event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))

    def start(self):
        """Load the ``robot_description`` parameter if it is set (else wait for the topic); before the first message,
        so on the executor's thread."""
        if not compiled():
            self.get_logger().info("the dynamics kernels of this installation are not compiled yet: the first model "
                                   "compiles what it needs (minutes, once); `rne-dynamics compile` does it ahead")
        text = self.get_parameter("robot_description").value
        if not text:
            self.get_logger().info("waiting for a robot description on "
                                   f"{self.resolve_topic_name('robot_description')}")
            return
        source = "parameter robot_description"
        try:
            description = read_description(text, source, self.floating_base(self._good_values))
            model = self.build_model(description, self._good_values)
        except ValueError as exc:
            self.refuse(f"the robot description from {source}", exc)
            return
        self._good_description = description
        self.install(description, model)

    # -- model -------------------------------------------------------------------------------------------------

    def parameter_values(self):
        return {name: self.get_parameter(name).value for name in self._specs}

    def build_model(self, description, values):
        robot = DynamicsModel.structure(description.robot, values)
        check_names(robot, values, self._specs)
        self.check_names(robot, values)
        model = DynamicsModel.build(robot, values)
        self.check_model(model, values)
        return model

    def request_model(self, changes=None, text=None, source=None, reply=None):
        """Build a model on the worker, after the requests before it: from the description ``text`` (from
        ``source``), or from the last good description with the parameter set ``changes`` (number
        ``self._requests``) applied to the last good values; then swap it in, or refuse it, on the executor's
        thread. ``reply`` (an rclpy Future) gets ``(success, message)``."""
        changes, number = changes or {}, self._requests
        self.builds_pending += 1
        if text is not None:
            self._descriptions_queued += 1

        def build():
            values = self._good_values | changes
            try:
                description = self._description_for(values, changes, text, source)
                model = None if description is None else self.build_model(description, values)
            except ValueError as exc:
                what = (f"the robot description from {source}" if text is not None
                        else f"parameters {', '.join(changes)}")
                outcome = partial(self._refused, what, exc, {n: self._good_values[n] for n in changes}, number,
                                  text is not None, reply)
            else:
                self._good_values, self._good_description = values, description or self._good_description
                outcome = partial(self._built, description, model, set(changes), text is not None, reply)
            with self._outcomes_lock:
                self._outcomes.append(outcome)
            self._install_guard.trigger()
        self._builder.submit(build)

    def _description_for(self, values, changes, text, source):
        """The description a build starts from (on the worker): ``text``; a new ``robot_description`` parameter; or
        the last good one, read again if the base changes between fixed and floating. None: no robot yet."""
        floating = self.floating_base(values)
        if text is not None:
            return read_description(text, source, floating)
        if changes.get("robot_description"):
            return read_description(changes["robot_description"], "parameter robot_description", floating)
        description = self._good_description
        if description is not None and description.robot.has_floating_base != floating:
            return read_description(description.text, description.source, floating)
        return description

    def _take_outcomes(self):
        with self._outcomes_lock:
            outcomes, self._outcomes = self._outcomes, []
        for outcome in outcomes:
            outcome()

    def _built(self, description, model, names, from_text, reply):
        """On the executor's thread: swap a model in, then let the parameters of its set take effect."""
        self._descriptions_queued -= from_text
        self.builds_pending -= 1
        if model is not None:
            self.install(description, model)
        if names:
            self._parameters_take_effect(names)
        if reply is not None:
            reply.set_result((True, f"robot '{model.robot.name}' ({model.robot.dof} joints) from "
                                    f"{description.source}"))

    def _refused(self, what, reason, revert, number, from_text, reply):
        """On the executor's thread: keep the model in service; the parameters of the refused set (those no later
        set has changed) go back to the last good values."""
        self._descriptions_queued -= from_text
        self.builds_pending -= 1
        revert = [Parameter(name, Parameter.Type(self._specs[name].type), value) for name, value in revert.items()
                  if self._setter.get(name) == number]
        if revert:
            self._reverting = True
            try:
                self.set_parameters(revert)
            finally:
                self._reverting = False
        message = self.refuse(what, reason)
        if reply is not None:
            reply.set_result((False, message))

    def destroy_node(self):
        self._builder.shutdown(wait=True)
        super().destroy_node()

    def refuse(self, what, reason):
        kept = f"keeping robot '{self.model.robot.name}'" if self.model else "no model yet"
        reason = one_line(reason)
        self.refusal = f"{what}: {reason}"
        message = f"refused {what}: {reason}; {kept}"
        self.get_logger().error(message)
        return message

    def install(self, description, model):
        previous = self.model
        for note in description.warnings:
            self.get_logger().warning(f"{description.source}: {note}")
        self.description = description
        self.model_changed(model, previous)
        self.model = model
        self.refusal = ""
        if previous is None:
            gc.freeze()  # see spin: the first model's objects and the kernels it loaded live as long as the node
        if previous is None or previous.robot is not model.robot:
            robot = model.robot
            self.get_logger().info(f"robot '{robot.name}' from {description.source}: {robot.dof} joints, "
                                   f"{robot.total_mass:.3f} kg moving, gravity {model.gravity.tolist()}")

    # -- parameters --------------------------------------------------------------------------------------------

    def _validate_parameters(self, parameters):
        """The checks that need no new model; the model itself is built after the set (:meth:`request_model`)."""
        if self._reverting:
            return SetParametersResult(successful=True)
        try:
            for p in parameters:
                if p.type_ == Parameter.Type.NOT_SET:
                    if self._ready:
                        raise ValueError(f"{p.name} cannot be unset")
                    continue
                name, value = p.name, p.value
                field, _, joint = name.partition(".")
                if joint and field in self._specs and self._specs[field].per_joint:  # a value by joint name
                    name, value = field, [value]
                check_common(name, value)
                self.check_parameter(name, value)
            changes = {p.name: p.value for p in parameters}
            if (self._ready and self.model is not None and not self._descriptions_queued
                    and not changes.keys() & STRUCTURE):  # else the names are checked when the model is built
                values = self.parameter_values() | changes
                check_names(self.model.robot, values, self._specs)
                self.check_names(self.model.robot, values)
        except ValueError as exc:
            names, reason = ", ".join(p.name for p in parameters), one_line(exc)
            self.get_logger().warning(f"rejected parameter {names}: {reason}")
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters):
        if not self._ready or self._reverting:
            return
        self._requests += 1
        changes = {p.name: p.value for p in parameters}
        for name in changes:
            self._setter[name] = self._requests
        if any(self._specs[name].rebuilds_model for name in changes):
            self.request_model(changes)  # the parameters take effect with the model
            if changes.get("robot_description") == "" and self._topic_text is not None:  # back to the topic
                self._on_description_message(String(data=self._topic_text))
        else:  # in effect now; the worker notes the values, in order with the builds
            self._builder.submit(self._note_values, changes)
            self._parameters_take_effect(set(changes))

    def _note_values(self, changes):
        self._good_values = self._good_values | changes

    def _parameters_take_effect(self, names):
        if "diagnostics_rate_hz" in names:
            self.destroy_timer(self.diagnostics_timer)
            self.diagnostics_timer = self.create_timer(1.0 / self.get_parameter("diagnostics_rate_hz").value,
                                                       self.publish_diagnostics)
        self.parameters_changed(names)

    # -- topics and services -----------------------------------------------------------------------------------

    def _on_description_message(self, msg):
        source = self.resolve_topic_name("robot_description") + " topic"
        self._topic_text = msg.data
        if self.get_parameter("robot_description").value:  # an explicit parameter wins (ros2_control's rule)
            self._log_source(f"parameter robot_description is set: it is the robot description; messages on {source} "
                             "are ignored (set the parameter to '' to follow the topic)")
            return
        self._log_source(f"parameter robot_description is empty: the robot description comes from {source}")
        if not msg.data.lstrip().startswith("<"):  # a message carries the text itself, never a file path
            start = msg.data.strip()[:40]
            self.refuse(f"the robot description from {source}", f"not URDF XML (it starts {start!r}; a message "
                        "carries the URDF text, not a path)" if start else "the URDF is empty")
            return
        self.request_model(text=msg.data, source=source)

    def _log_source(self, explanation):
        """Say once (per change of source) where the robot description comes from and why."""
        if explanation != self._source_logged:
            self._source_logged = explanation
            self.get_logger().info(explanation)

    async def _on_reload(self, request, response):
        """Re-read the ``robot_description`` parameter (text, or the file it names), else the last topic message;
        built on the worker, answered when it is swapped in or refused."""
        text = self.get_parameter("robot_description").value
        source = "parameter robot_description"
        if not text and self.description is not None:
            text, source = self.description.text, self.description.source
        if not text:
            response.success, response.message = False, "no robot description yet (parameter or topic)"
            return response
        reply = Future()
        self.request_model(text=text, source=source, reply=reply)
        response.success, response.message = await reply
        return response

    def _on_reset(self, request, response):
        self.stats.reset()
        response.success, response.message = True, self.reset()
        return response

    def warn_throttled(self, text, key=None):
        """Log a problem, each distinct one (``key``, default the text) at most every :data:`WARNING_PERIOD` s."""
        key = text if key is None else key
        now = time.monotonic()
        if now - self._warned.get(key, -math.inf) >= WARNING_PERIOD:
            if len(self._warned) > 256:
                self._warned.clear()
            self._warned[key] = now
            self.get_logger().warning(text)

    def reject_input(self, topic, reason):
        self.stats.reject(f"{topic}: {reason}", topic)
        self.warn_throttled(f"{topic}: {reason}; message ignored")

    def check_limits(self, model, torques, topic):
        """Count and report torques (one state or a trajectory's points) beyond the URDF effort limits.

        Returns how many states exceed a limit.
        """
        over = np.abs(torques) > model.effort_limits
        if not over.any():
            return 0
        over = np.atleast_2d(over)
        cells = np.argwhere(over)
        joints = sorted({model.joint_names[k] for k in cells[:, 1]})
        self.stats.exceeded(joints)
        tau = np.atleast_2d(torques)
        point = "point {} " if np.ndim(torques) == 2 else ""
        details = ", ".join(f"{point.format(n)}{model.joint_names[k]} {tau[n, k]:.1f} > "
                            f"{model.effort_limits[k]:g} {model.joint_unit(k)}" for n, k in cells[:6])
        self.warn_throttled(f"{topic}: effort limits exceeded: {details}", key=f"limits {topic} {joints}")
        return int(over.any(axis=1).sum())

    def publish_diagnostics(self):
        stats = self.stats
        elapsed = max(time.monotonic() - stats.window_start, 1e-9)
        status = DiagnosticStatus(name=f"rne_dynamics: {self.get_fully_qualified_name()}")
        model = self.model
        values = {"robot": "none", "model source": "none", "refused description": self.refusal or "none"}
        if model is None:
            status.level = DiagnosticStatus.ERROR
            status.message = "no robot model: waiting for /robot_description or parameter robot_description"
        else:
            robot = model.robot
            status.hardware_id = robot.name
            values |= {"robot": robot.name, "model source": self.description.source, "joints": robot.dof,
                       "gravity": model.gravity.tolist(), "payload": f"{model.settings['payload.mass']} kg on "
                       f"'{model.settings['payload.link']}'" if model.settings["payload.link"] else "none"}
            problems = []
            if self.refusal:
                problems.append(f"kept robot '{robot.name}', refused {self.refusal}")
            if stats.violations:
                problems.append("effort limits exceeded: " + ", ".join(sorted(stats.violating_joints)))
            if stats.rejected:
                problems.append(f"{stats.rejected} inputs rejected, last: {stats.last_rejection}")
            else:  # refused earlier, nothing good on that topic since: still news
                problems += [f"last {topic} input refused at {time.strftime('%H:%M:%S', time.localtime(when))}, "
                             f"none good since: {reason}" for topic, (when, reason) in stats.refused.items()]
            problems += self.diagnostic_problems()
            status.level = DiagnosticStatus.WARN if problems else DiagnosticStatus.OK
            status.message = "; ".join(problems) or f"robot '{robot.name}' OK"
        values |= {"input rate [Hz]": stats.inputs / elapsed, "inputs": stats.total_inputs,
                   "rejected inputs": stats.total_rejected, "last rejected input": stats.last_rejection or "none",
                   "compute time mean [ms]": 1e3 * stats.compute_sum / stats.inputs if stats.inputs else 0.0,
                   "compute time max [ms]": 1e3 * stats.compute_max,
                   "effort limit violations": stats.total_violations,
                   "effort limit violations (window)": stats.violations}
        values |= self.diagnostic_values()
        status.values = [KeyValue(key=key, value=f"{v:.6g}" if isinstance(v, float) else str(v))
                         for key, v in values.items()]
        header = Header(stamp=self.get_clock().now().to_msg())
        self.diagnostics_publisher.publish(DiagnosticArray(header=header, status=[status]))
        stats.new_window()

    # -- hooks -------------------------------------------------------------------------------------------------

    def check_parameter(self, name, value):
        """Raise ValueError if ``value`` is invalid for ``name`` whatever the model."""

    def floating_base(self, values):
        """Whether the parameter ``values`` say how the base moves, so that the robot is loaded with a floating
        base."""
        return False

    def check_names(self, robot, values):
        """Raise ValueError if the parameter ``values`` do not fit ``robot``'s names, sizes or limits: checks cheap
        enough for the set-parameters callback, which runs them against the robot in service."""

    def check_model(self, model, values):
        """Raise ValueError if the parameter ``values`` do not fit the newly built ``model`` (on the worker thread:
        compile or load the kernels the callbacks will use here)."""

    def model_changed(self, model, previous):
        """Prepare the node's outputs for ``model`` (called before it replaces ``previous``, which may be None)."""

    def parameters_changed(self, names):
        """React to parameters that were set (after the model, if any, was swapped)."""

    def reset(self):
        """``~/reset``: return a message saying what was reset."""
        return "statistics reset"

    def diagnostic_values(self):
        return {}

    def diagnostic_problems(self):
        """Problems of the subclass's own that make the diagnostics status a WARN."""
        return []


#: Longest time (s) the model-building worker holds the interpreter before the joint-state callback gets it back
#: (Python's default, 5 ms, let a swap delay a burst of 1 kHz messages).
GIL_SWITCH_INTERVAL = 5e-4


def spin(node_class, args=None):
    """Run one node until Ctrl-C or shutdown (the body of the executables' ``main``). Arguments rcl cannot parse and
    parameter values the node refuses at start end it with a one-line reason and exit code 2."""
    import sys

    import rclpy
    from rclpy.exceptions import ParameterException
    from rclpy.executors import ExternalShutdownException
    from rclpy.impl.implementation_singleton import rclpy_implementation

    name = re.sub(r"(?<!^)(?=[A-Z])", "_", node_class.__name__).lower()  # InverseDynamicsNode: the executable
    try:
        rclpy.init(args=args)
    except rclpy_implementation.RCLError as exc:
        reason = str(exc).split("\n")[0][:200]
        print(f"{name}: error: cannot parse the ROS arguments ({reason}...); a value with ': ' (URDF text) cannot "
              "be given with -p: give robot_description a file path (-p robot_description:=/path/robot.urdf) or "
              "publish the text on robot_description", file=sys.stderr)
        return 2
    node = None
    try:
        node = node_class()
        sys.setswitchinterval(GIL_SWITCH_INTERVAL)
        # Python's full garbage collection walks every object (numba's and rclpy's: 35 ms on this machine), holding
        # the interpreter; the allocations of a model build trigger it. Frozen objects are never walked again.
        gc.freeze()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ParameterException as exc:  # a -p value that the node's checks refuse
        print(f"{name}: error: {' '.join(str(exc).split())}", file=sys.stderr)
        return 2
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
