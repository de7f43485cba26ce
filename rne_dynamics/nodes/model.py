"""The model a dynamics node computes with: the robot description as read, and the robot built from it with the
nodes' parameter values (joint structure, payload, drive terms, gravity), and the dynamics the callbacks ask of it:
one call each, whatever the robot's kind (a closed chain, a fixed, mounted or free-floating base, elastic joints),
in Data made once per model.
"""
import time
import warnings
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

import rne_dynamics as rd

from ..model.joints import effort_unit
from ..algorithms.driver import WARM
from ..algorithms.inputs import gravity_vector
from ..algorithms.simulate import step as simulation_step
from ..errors import ModelError, ModelWarning, PackageNotFoundError, StateError
from ..model.drive import RIGID as RIGID_DRIVE, load_drive
from ..model.loops import read_loops
from ..model.urdf import load_urdf
from ..planning.feedforward import flexible_feedforward_through
from .joint_states import message_values
from .parameters import DRIVE_PARAMETERS, by_joint, locked_positions, per_joint


@dataclass(frozen=True)
class Description:
    """A robot description as loaded: the robot, the text or path it came from, where from, its model warnings."""
    robot: object
    text: str
    source: str
    warnings: tuple


def read_description(text, source, floating_base=False, xacro_args=None, package_paths=None):
    """Load a URDF or xacro description (text or path; xacro expanded with ``xacro_args`` and ``package_paths``,
    ``load_urdf``'s); a bad one raises :class:`ModelError` naming the element at fault, and a package xacro cannot
    find names the node's parameter ``package_paths`` as the remedy.

    ``floating_base``: the node knows how the base moves (the inverse node's ``base`` parameter), so the robot gets a
    floating base (unless its URDF has a floating root joint already); else a floating base is refused."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ModelWarning)
        try:
            robot = load_urdf(text, xacro_args=xacro_args, package_paths=package_paths)
        except PackageNotFoundError as exc:
            raise PackageNotFoundError(exc.place, exc.package, f"parameter package_paths (an entry "
                                       f"{exc.package}=DIR)") from None
        if floating_base and not robot.has_floating_base:
            caught.clear()
            robot = load_urdf(text, floating_base=True, xacro_args=xacro_args, package_paths=package_paths)
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


#: Seconds the builder process waits for a new model's machine code (about a second for an arm; beyond this the node's
#: process makes the written code itself, holding its interpreter meanwhile).
MACHINE_CODE_WAIT = 20.0
NEUTRAL_POSE = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0])  # a floating base at the origin, [x y z qx qy qz qw]


class Loads(NamedTuple):
    """The inverse dynamics of one joint state: the joint torques (``joint_names`` order; a closed chain's passive
    joints 0) and joint wrenches; a closed chain's solved tree state and cut-joint wrenches; a moving base's mounting
    wrench (base ``odometry``) or base acceleration (``free_floating``) and the centre of mass in the odometry
    frame. Arrays may be views into the model's Data, valid until its next call."""
    torques: np.ndarray
    joint_wrenches: np.ndarray
    q: np.ndarray = None
    qd: np.ndarray = None
    loop_wrenches: dict = None
    mounting_wrench: np.ndarray = None
    base_acceleration: np.ndarray = None
    center_of_mass: np.ndarray = None


class Columns(NamedTuple):
    """A message's joint names against the robot's input joints: ``given``, the indices into the message's arrays
    of the input joints it names, ``joints`` their indices among the input joints, ``left_out`` the names of those
    it does not name; ``ordered`` (``given`` in input order) when it names every one, else None."""
    given: np.ndarray
    joints: np.ndarray
    left_out: tuple
    ordered: np.ndarray


class BaseMotion(NamedTuple):
    """A moving base's state at a joint state: pose ``[x y z qx qy qz qw]`` in the odometry frame, twist and its
    time derivative in the base frame (the derivative only for base ``odometry``)."""
    pose: np.ndarray
    twist: np.ndarray
    acceleration: np.ndarray = None


AT_REST = BaseMotion(NEUTRAL_POSE, np.zeros(6), np.zeros(6))


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
    _orders: dict = field(init=False, default_factory=dict)  # a message's name tuple -> Columns, or a reason
    data: object = field(init=False, default=None)  # robot.data() of the joint-state callback: see prepare
    gravity_data: object = field(init=False, default=None)  # another, so gravity torques keep its results
    com_data: object = field(init=False, default=None)  # and one for a moving base's centre of mass
    trajectory_data: object = field(init=False, default=None)  # and one for ~/trajectory's batches
    loop_guess: np.ndarray = field(init=False, default=None)  # a closed chain's last configuration: the next guess

    def __post_init__(self):
        self.joint_names = list(self.robot.joint_names)
        self.input_names = list(self.robot.actuated_joint_names)
        self.effort_limits = self.robot.effort_limits[self.robot.nv - len(self.joint_names):]  # a base's 6 first
        self.locked = locked_positions(self.settings.get("locked_joints", []))
        self.zeros = np.zeros(len(self.joint_names))  # shared: never written (kept writable: numba compiles per flag)
        self.input_zeros = np.zeros(len(self.input_names))
        self.elastic = np.array([self.joint_names.index(j) for j in self.robot.elastic_joints], dtype=np.int64)
        robot = self.robot
        self.base = "loops" if robot.loops is not None else self.settings.get("base", "fixed")
        self.actuated = (np.array([robot.idx_v[name] for name in robot.actuated_joint_names], dtype=np.intp)
                         if robot.loops is not None else None)

    def prepare(self):
        """Make the Data the callbacks compute in (no allocation per message; in the node's process: a Data is
        not sent between processes)."""
        self.data, self.gravity_data, self.com_data, self.trajectory_data = (self.robot.data() for _ in range(4))
        return self

    def __getstate__(self):
        return self.__dict__ | {"data": None, "gravity_data": None, "com_data": None, "trajectory_data": None}

    # -- the dynamics of the callbacks -------------------------------------------------------------------------

    def inverse_dynamics(self, q, qd, qdd, base=None, external_wrenches=None):
        """The :class:`Loads` of the joint state ``(q, qd, qdd)`` (the input joints': a closed chain's actuated ones)
        with the robot's kind's call: :func:`rne_dynamics.closed_loop_inverse_dynamics` (the last solution guessing
        the assembly mode), :func:`rne_dynamics.inverse_dynamics`, or on a moving base (``base``, a
        :class:`BaseMotion`) :func:`rne_dynamics.mounted_inverse_dynamics` (``odometry``) or
        :func:`rne_dynamics.free_floating_inverse_dynamics` (``free_floating``). ``external_wrenches``: ``{link:
        wrench}`` as the library's (not for a closed chain)."""
        robot, gravity = self.robot, self.gravity
        if self.base == "loops":
            result = rd.closed_loop_inverse_dynamics(robot, q, qd, qdd, q_guess=self.loop_guess, gravity=gravity)
            self.loop_guess = result.q
            torques = np.zeros(robot.dof)
            torques[self.actuated] = result.torques
            return Loads(torques, result.joint_wrenches, result.q, result.qd, result.loop_wrenches)
        if self.base == "fixed":
            result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity, external_wrenches=external_wrenches,
                                         data=self.data)
            return Loads(result.torques, result.joint_wrenches)
        center = rd.center_of_mass(robot, np.concatenate([base.pose, q]), data=self.com_data)
        if self.base == "odometry":
            result = rd.mounted_inverse_dynamics(robot, base.pose, base.twist, base.acceleration, q, qd, qdd,
                                                 gravity=gravity, external_wrenches=external_wrenches, data=self.data)
            return Loads(result.torques, result.joint_wrenches, mounting_wrench=result.mounting_wrench,
                         center_of_mass=center)
        result = rd.free_floating_inverse_dynamics(robot, np.concatenate([base.pose, q]),
                                                   np.concatenate([base.twist, qd]), qdd, gravity=gravity,
                                                   external_wrenches=external_wrenches, data=self.data)
        return Loads(result.torques, result.joint_wrenches, base_acceleration=result.base_acceleration,
                     center_of_mass=center)

    def gravity_torques(self, q, base_pose=None):
        """The joint torques that hold the joints still at ``q`` (a moving base: at rest, as it stands at
        ``base_pose``, default upright at the origin)."""
        if self.base == "fixed":
            return rd.gravity_torques(self.robot, q, gravity=self.gravity, data=self.gravity_data)
        if self.base == "loops":
            return self.inverse_dynamics(q, self.input_zeros, self.input_zeros).torques
        zero = AT_REST.twist
        return rd.mounted_inverse_dynamics(self.robot, NEUTRAL_POSE if base_pose is None else base_pose, zero, zero,
                                           q, self.zeros, self.zeros, gravity=self.gravity,
                                           data=self.gravity_data).torques

    def trajectory_torques(self, nanoseconds, q, qd, qdd):
        """The torques along a trajectory's points (times ``nanoseconds``, inputs ``(N, len(input_names))``):
        ``(inputs', the tree's)`` (equal but for a closed chain). With elastic joints, the motor torques of the
        exact flexible feedforward through the positions
        (:func:`rne_dynamics.planning.flexible_feedforward_through`; the points' own velocities and accelerations
        are not used)."""
        robot, gravity = self.robot, self.gravity
        if self.base == "loops":
            driven = rd.closed_loop_inverse_dynamics(robot, q, qd, qdd, q_guess=self.loop_guess,
                                                     gravity=gravity).torques
            tau = np.zeros((len(q), robot.dof))
            tau[:, self.actuated] = driven
            return driven, tau
        if robot.elastic_joints:
            tau = flexible_feedforward_through(robot, nanoseconds, q, gravity=gravity)
        else:
            tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity, data=self.trajectory_data).torques
        return tau, tau

    def full_state(self, q, qd=None, at=None):
        """The robot's ``(q, v)`` for joint positions ``q`` and velocities ``qd`` (zero if None): a floating base at
        ``at`` (``(pose, twist)``, default at rest at the origin), its coordinates first."""
        qd = self.zeros if qd is None else qd
        if not self.robot.has_floating_base:
            return q, qd
        pose, twist = at if at is not None else (NEUTRAL_POSE, AT_REST.twist)
        return np.concatenate([pose, q]), np.concatenate([twist, qd])

    def joints_part(self, x):
        """The joints' entries of a configuration or a tangent vector (a floating base's come first)."""
        return x[len(x) - len(self.joint_names):]

    def generalised_forces(self, tau):
        """The generalised forces of joint efforts ``tau``: zero on a floating base (nothing holds it)."""
        return np.concatenate([AT_REST.twist, tau]) if self.robot.has_floating_base else tau

    def forward_dynamics(self, q, v, tau, motors=None):
        """The accelerations at the full state ``(q, v)`` under joint efforts ``tau``: the rigid robot's, or with
        the elastic joints' ``motors`` (``(theta, thetad)``) the links' of the motor-link model
        (:func:`rne_dynamics.flexible_forward_dynamics`; ``tau`` then the motor torques at the elastic joints)."""
        if motors is not None:
            return rd.flexible_forward_dynamics(self.robot, q, v, *motors, tau, gravity=self.gravity).link
        return rd.forward_dynamics(self.robot, q, v, self.generalised_forces(tau), gravity=self.gravity,
                                   data=self.data)

    def step(self, q, v, tau, dt, motors=None):
        """The full state and ``motors`` after ``dt`` s under the held efforts ``tau``: one RK4 step of the rigid
        robot (:func:`rne_dynamics.algorithms.simulate.step`), or of the motor-link model with the elastic joints'
        ``motors`` (:func:`rne_dynamics.flexible_simulate`)."""
        if motors is None:
            q, v = simulation_step(self.robot, q, v, self.generalised_forces(tau), dt, gravity=self.gravity)
            return q, v, None
        moved = rd.flexible_simulate(self.robot, q, v, *motors, tau, dt, dt, gravity=self.gravity)
        return moved.q[-1], moved.qd[-1], (moved.theta[-1], moved.thetad[-1])

    def warm_up(self):
        """Make (or load) the machine code of the calls of :meth:`inverse_dynamics` and :meth:`gravity_torques`
        and of a trajectory's, before the first message: a call's written code is made past a robot's first ``WARM``
        states (:data:`rne_dynamics._tuning.WARM`), here rather than in a callback."""
        robot, zeros = self.robot, self.input_zeros
        if self.base == "loops":
            return  # its calls are the Newton solve's
        for _ in range(WARM + 1):
            self.inverse_dynamics(zeros, zeros, zeros, AT_REST)
            self.gravity_torques(zeros)
            if self.base == "odometry":  # the IMU's gravity in the base frame
                rd.frame_placement(robot, rd.neutral(robot), robot.root_link)
            if self.base == "fixed":
                self.trajectory_torques(np.arange(6) * 1_000_000, *(np.zeros((6, robot.dof)),) * 3)

    def machine_code(self, timeout=MACHINE_CODE_WAIT):
        """Wait, at most ``timeout`` s in all, for the machine code of the robot's written code that the calls so far
        made (:mod:`rne_dynamics.algorithms.written`: built as C and cached on disk, keyed by the model's numbers), so
        that a process computing with the same numbers loads it rather than trace it."""
        end = time.monotonic() + timeout
        for made in list(self.robot.engines.written.values()):
            if made is not None:
                made.wait(max(0.0, end - time.monotonic()))

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

    def columns(self, names):
        """How a message's per-name arrays (joint ``names``) meet the robot's input joints (``joint_names``, or a
        closed chain's actuated joints): a :class:`Columns`, made once per name list. A joint named twice raises
        :class:`StateError`."""
        key = tuple(names)
        found = self._orders.get(key)
        if found is None:
            found = self._columns(key)
            if len(self._orders) > 64:  # a publisher that keeps changing its name list: stay bounded
                self._orders.clear()
            self._orders[key] = found
        if isinstance(found, str):
            raise StateError(found)
        return found

    def _columns(self, names):
        position = {}
        for k, name in enumerate(names):
            if name in position:
                return f"joint '{name}' is named twice"
            position[name] = k
        joints = [j for j, name in enumerate(self.input_names) if name in position]
        given = np.array([position[self.input_names[j]] for j in joints], dtype=np.intp)
        left_out = tuple(name for name in self.input_names if name not in position)
        return Columns(given, np.array(joints, dtype=np.intp), left_out, None if left_out else given)

    def order(self, names):
        """Indices into a message's per-name arrays that give the robot's input joints in order; a message that
        leaves one out raises :class:`StateError` naming it."""
        columns = self.columns(names)
        if columns.left_out:
            raise StateError(f"{'no joint names' if not names else 'missing joints ' + ', '.join(columns.left_out)} "
                             f"(robot '{self.robot.name}' needs {', '.join(self.input_names)}; a joint nobody "
                             "commands can be held fixed with parameter locked_joints, entries joint=position)")
        return columns.ordered

    def gather(self, names, values, what, optional=False, held=None):
        """The robot's input joints' entries of a per-name message array (``position``, ``effort`` ...), joint order.

        An empty array of an ``optional`` field reads as zeros. ``held`` (one value per input joint): the values of
        the joints the message leaves out (else it must name every one). Wrong lengths and non-finite values of the
        robot's joints raise :class:`StateError` (other joints' values are not looked at).
        """
        if held is None:
            x = message_values(values, len(names), what, self.order(names), self.input_names, optional)
            return self.input_zeros if x is None else x
        columns = self.columns(names)
        x = message_values(values, len(names), what, columns.given,
                           [self.input_names[j] for j in columns.joints], optional)
        out = held.copy()
        out[columns.joints] = 0.0 if x is None else x
        return out

    def joint_unit(self, k):
        """``N m`` for a revolute joint, ``N`` for a prismatic one."""
        return effort_unit(self.robot.joints[self.joint_names[k]].type)
