"""The model a dynamics node computes with: the robot description as read, and the robot built from it with the
nodes' parameter values (joint structure, payload, drive terms, gravity).
"""
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from ..model.joints import effort_unit
from ..algorithms.inputs import gravity_vector
from ..errors import ModelError, ModelWarning, StateError
from ..model.drive import RIGID as RIGID_DRIVE, load_drive
from ..model.loops import read_loops
from ..model.urdf import load_urdf
from .joint_states import message_values
from .parameters import DRIVE_PARAMETERS, by_joint, locked_positions, per_joint


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
    data: object = field(init=False, default=None)  # robot.data() of the joint-state callback: see prepare
    gravity_data: object = field(init=False, default=None)  # another, so gravity torques keep its results

    def __post_init__(self):
        self.joint_names = list(self.robot.joint_names)
        self.input_names = list(self.robot.actuated_joint_names)
        self.effort_limits = self.robot.effort_limits[self.robot.nv - len(self.joint_names):]  # a base's 6 first
        self.locked = locked_positions(self.settings.get("locked_joints", []))
        self.zeros = np.zeros(len(self.joint_names))  # shared: never written (kept writable: numba compiles per flag)
        self.input_zeros = np.zeros(len(self.input_names))
        self.elastic = np.array([self.joint_names.index(j) for j in self.robot.elastic_joints], dtype=np.int64)

    def prepare(self):
        """Make the Data the callbacks compute in (no allocation per message; in the node's process: a Data is
        not sent between processes)."""
        self.data, self.gravity_data = self.robot.data(), self.robot.data()
        return self

    def __getstate__(self):
        return self.__dict__ | {"data": None, "gravity_data": None}

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
                    f"(robot '{self.robot.name}' needs {', '.join(self.input_names)}; a joint nobody commands "
                    "can be held fixed with parameter locked_joints, entries joint=position)")
        return np.array([position[name] for name in self.input_names], dtype=np.intp)

    def gather(self, names, values, what, optional=False):
        """The robot's joints' entries of a per-name message array (``position``, ``effort`` ...), joint order.

        An empty array of an ``optional`` field reads as zeros. Wrong lengths and non-finite values of the robot's
        joints raise :class:`StateError` (other joints' values are not looked at).
        """
        x = message_values(values, len(names), what, self.order(names), self.input_names, optional)
        return self.input_zeros if x is None else x

    def joint_unit(self, k):
        """``N m`` for a revolute joint, ``N`` for a prismatic one."""
        return effort_unit(self.robot.joints[self.joint_names[k]].type)
