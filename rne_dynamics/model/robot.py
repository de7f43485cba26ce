"""The robot model: an immutable kinematic tree of rigid bodies, built once, packed flat for the kernels.

A *body* is a set of links joined by fixed joints, moved by one non-fixed joint (independent or mimic). Bodies are
numbered in topological order (a parent before its children); the links fixed to the world form the fixed base,
index ``-1`` (a floating base is body 0, moved by a free-flyer joint). Each joint contributes its *motion columns*
(:mod:`~rne_dynamics.model.joints`): one per velocity coordinate, plus one per mimic joint pointing at its source's
coordinate. The kernels read the model from two buffers (:mod:`~rne_dynamics.model.buffers`).
"""
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ..errors import ModelError
from .body import inertia_problem, triangle_problem
from . import drive
from .buffers import pack
from .data import Data, Engines
from .joints import type_of_code
from .locking import lock_joints


def frozen(array):
    """``array``, made read-only: a :class:`Robot`'s arrays are its model (an edit would change what it reports, not
    what it computes: the kernels read the model packed at construction)."""
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Robot:
    """A robot's dynamics model. Immutable: ``with_*`` methods return new robots sharing nothing mutable.

    ``q`` (``nq``) and ``v`` (``nv`` = ``dof``) hold the base's coordinates first when the base floats, then each
    joint of ``joint_names`` (``idx_q[name]``, ``idx_v[name]``); ``link_frames[link] = (body, R, p)`` places every
    link in its body (body ``-1`` is the fixed base). ``armature``, ``damping``, ``friction``,
    ``friction_offset`` and ``coulomb_velocity`` (:mod:`~rne_dynamics.model.drive`) are per joint of
    ``joint_names``; a joint with several coordinates has the value on each.
    """
    name: str
    joint_names: tuple
    link_names: tuple
    root_link: str
    joints: dict            # joint name -> JointInfo, every joint of the description (fixed included)
    bodies: tuple           # Body, topological order
    joint_bodies: tuple     # per joint of joint_names, its body index
    link_frames: dict
    armature: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    base_joint: str = None  # the free-flyer moving the base, when it floats
    warnings: tuple = ()
    source: str = "<robot>"
    loops: object = None    # model.loops.Loops: the loop closures and actuated joints of a closed-chain robot
    transmission: object = None  # the elastic drives (rne_dynamics.model.drive.Transmission); None: rigid
    locked_joints: dict = field(default_factory=dict)  # joint -> its position (a tuple), for joints held fixed
    friction_offset: np.ndarray = None   # None: zeros
    coulomb_velocity: np.ndarray = None  # None: zeros (Coulomb friction is friction sign(qd))
    transmissions: tuple = ()  # drive.JointTransmission: motors through gears, their terms in the per-joint arrays
    fdata: np.ndarray = field(init=False, repr=False)
    idata: np.ndarray = field(init=False, repr=False)
    #: The only mutable part: what the machine-code layer keeps for this robot (its written codes, its live Data
    #: objects, its workspaces' shapes), never compared, copied or pickled.
    engines: Engines = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        for label in ("armature", "damping", "friction", "friction_offset", "coulomb_velocity"):  # (a copy each)
            value = getattr(self, label)
            object.__setattr__(self, label, frozen(np.zeros(len(self.joint_names)) if value is None
                                                   else np.array(value, dtype=float)))
        fdata, idata = pack(self.bodies, self.joint_bodies, [self.link_frames[name] for name in self.link_names],
                            np.column_stack([self._per_coordinate(getattr(self, x)) for x in drive.RIGID]),
                            self.coupled_motors)
        object.__setattr__(self, "fdata", frozen(fdata))
        object.__setattr__(self, "idata", frozen(idata))
        object.__setattr__(self, "engines", Engines())

    @cached_property
    def rigid_body_fdata(self):
        """``fdata`` with no drive terms (armature, damping and friction zero, the coupled motors' terms too): the
        model of a ``drive=False`` call, rigid-body dynamics only."""
        fdata = pack(self.bodies, self.joint_bodies, [self.link_frames[name] for name in self.link_names],
                     np.zeros((self.nv, len(drive.RIGID))),
                     [replace(motor, rotor_inertia=0.0, damping=0.0, friction=0.0) for motor in self.coupled_motors])[0]
        return frozen(fdata)

    def _per_coordinate(self, per_joint, base=0.0):
        """A per-joint array of ``joint_names`` spread over the velocity coordinates (``base`` on the base's)."""
        out = np.full(self.nv, base)
        for value, body in zip(per_joint, self.joint_bodies):
            b = self.bodies[body]
            out[b.idx_v:b.idx_v + b.nv] = value
        return out

    @cached_property
    def nq(self):
        """Number of position coordinates (the length of ``q``)."""
        return sum(b.nq for b in self.bodies if not b.mimic)

    @cached_property
    def nv(self):
        """Number of velocity coordinates (the length of ``v``/``qd``, ``qdd`` and ``tau``)."""
        return sum(b.nv for b in self.bodies if not b.mimic)

    @property
    def dof(self):
        """Degrees of freedom, ``nv``; for a fixed base with one-coordinate joints, the length of ``q`` too."""
        return self.nv

    @cached_property
    def ncol(self):
        """Number of motion columns: ``nv``, plus one per mimic joint."""
        return sum(len(b.S) for b in self.bodies)

    def data(self):
        """A new :class:`~rne_dynamics.model.data.Data` for this robot: pass it as ``data=`` to compute in it."""
        data = Data(self)
        self.engines.datas.add(data)
        return data

    @cached_property
    def nb(self):
        """Number of moving bodies (movable joints, mimic joints included)."""
        return len(self.bodies)

    @cached_property
    def has_floating_base(self):
        return self.base_joint is not None

    @cached_property
    def coupled_motors(self):
        """The motors of :attr:`transmissions` with rotor inertia or friction that are carried whole
        (:class:`~rne_dynamics.model.drive.CoupledMotor`, :func:`~rne_dynamics.model.drive.split_motors`): those that
        turn several joints, whose terms couple the joints, and those whose Coulomb law cannot join their joint's.
        Forward dynamics then solves with the mass matrix, as for mimic joints."""
        return drive.coupled_motors(self, self.transmissions)

    @cached_property
    def has_mimic(self):
        """Bodies moved by another joint's coordinate: the ABA's one-joint-per-body recursion does not apply."""
        return any(b.mimic for b in self.bodies)

    @cached_property
    def joint_body_indices(self):
        """:attr:`joint_bodies` as an integer array (for ``np.take``)."""
        return frozen(np.array(self.joint_bodies, dtype=np.int64))

    @cached_property
    def idx_q(self):
        """``{joint: first index in q}``, the base's free-flyer and every joint of ``joint_names``."""
        return {b.joint: b.idx_q for b in self.bodies if not b.mimic}

    @cached_property
    def idx_v(self):
        """``{joint: first index in v}``, the base's free-flyer and every joint of ``joint_names``."""
        return {b.joint: b.idx_v for b in self.bodies if not b.mimic}

    @cached_property
    def q_names(self):
        """A name per entry of ``q``: the joint's, or ``joint.x``, ``joint.qw``... for a joint with several."""
        return self._coordinate_names("q_names")

    @cached_property
    def v_names(self):
        """A name per entry of ``v``, as :attr:`q_names`."""
        return self._coordinate_names("v_names")

    def _coordinate_names(self, field):
        names = []
        for b in self.bodies:
            if not b.mimic:
                suffixes = getattr(type_of_code(b.code), field)
                names += [f"{b.joint}.{s}" for s in suffixes] if suffixes else [b.joint]
        return tuple(names)

    @cached_property
    def link_index(self):
        """``{link: its row in link_names}``."""
        return {name: k for k, name in enumerate(self.link_names)}

    @cached_property
    def quaternions(self):
        """Start indices in ``q`` of the unit quaternions (free-flyer and spherical joints)."""
        return frozen(np.array([b.idx_q + type_of_code(b.code).quaternion for b in self.bodies
                                if not b.mimic and type_of_code(b.code).quaternion >= 0], dtype=np.int64))

    @cached_property
    def has_quaternions(self):
        return self.quaternions.size > 0

    def __getstate__(self):
        """Pickled without its cached properties and its engines (derived, and the algorithms' workspace makers are
        not picklable): the receiver computes them again (a node's model is built in another process)."""
        cached = {name for name, value in vars(type(self)).items() if isinstance(value, cached_property)}
        return {name: value for name, value in self.__dict__.items() if name not in cached and name != "engines"}

    def __setstate__(self, state):
        """The arrays read-only again (a pickle drops numpy's flag: a node's model from another process had writable
        ``fdata``, a type numba's cached step had not, and the simulator ran its Python until a compile ended)."""
        self.__dict__.update(state)
        for value in state.values():
            if isinstance(value, np.ndarray):
                frozen(value)
        object.__setattr__(self, "engines", Engines())

    @cached_property
    def body_joint_names(self):
        """Names of the joints that move each body (independent and mimic), in body order."""
        return tuple(b.joint for b in self.bodies)

    @cached_property
    def position_limits(self):
        """``(nq, 2)`` lower and upper limits of ``q`` (``-inf, inf`` for continuous joints and for the coordinates
        of joints with several)."""
        lower, upper = np.full(self.nq, -np.inf), np.full(self.nq, np.inf)
        for name, body in zip(self.joint_names, self.joint_bodies):
            b = self.bodies[body]
            if b.nq == 1:
                lower[b.idx_q], upper[b.idx_q] = self.joints[name].lower, self.joints[name].upper
        return frozen(np.column_stack([lower, upper]))

    @cached_property
    def effort_limits(self):
        """``(nv,)`` URDF effort limits; ``inf`` where none is given (and on the base)."""
        return frozen(self._per_coordinate([self.joints[n].effort for n in self.joint_names], np.inf))

    @cached_property
    def velocity_limits(self):
        """``(nv,)`` URDF velocity limits; ``inf`` where none is given (and on the base)."""
        return frozen(self._per_coordinate([self.joints[n].velocity for n in self.joint_names], np.inf))

    @cached_property
    def total_mass(self):
        """Mass of all moving bodies (the fixed base is not counted)."""
        return float(sum(b.mass for b in self.bodies))

    def with_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """A new robot carrying a rigid payload on ``link``: ``mass`` (kg), ``com`` (m, link frame) and ``inertia``
        ``(ixx, ixy, ixz, iyy, iyz, izz)`` about the payload's COM, link axes (kg m^2). This robot is unchanged."""
        if link not in self.link_frames:
            raise ModelError(f"payload: robot '{self.name}' has no link '{link}'")
        com = np.asarray(com, float)
        if not np.isfinite(mass) or mass < 0:
            raise ModelError(f"payload on '{link}': mass must be finite and >= 0, got {mass}")
        if com.shape != (3,) or not np.all(np.isfinite(com)):
            raise ModelError(f"payload on '{link}': com must be 3 finite numbers, got {com.tolist()}")
        i = np.asarray(inertia, float)
        if i.shape != (6,):
            raise ModelError(f"payload on '{link}': inertia must be 6 numbers ixx ixy ixz iyy iyz izz")
        I = np.array([[i[0], i[1], i[2]], [i[1], i[3], i[4]], [i[2], i[4], i[5]]])
        problem = inertia_problem(I) or triangle_problem(I)
        if problem:
            raise ModelError(f"payload on '{link}': inertia is {problem}")
        body, R, p = self.link_frames[link]
        if body < 0:  # carried by the fixed base: no joint feels it
            return self
        bodies = list(self.bodies)
        bodies[body] = bodies[body].with_mass_added(mass, R @ com + p, R @ I @ R.T)
        return replace(self, bodies=tuple(bodies))

    def with_drive(self, armature=None, damping=None, friction=None, *, friction_offset=None, coulomb_velocity=None,
                   stiffness=None, spring_damping=None, rest_offset=None, motor_inertia=None, gear_ratio=None,
                   transmissions=None):
        """A new robot with other drive parameters per joint (:mod:`rne_dynamics.model.drive`): ``armature`` (rotor
        inertia, kg m^2 or kg), ``damping`` (viscous, N m s/rad), ``friction`` (Coulomb, N m), ``friction_offset``
        (constant, N m, either sign) and ``coulomb_velocity`` (rad/s; > 0: smooth Coulomb law) of the rigid joint;
        ``stiffness`` ``K`` (N m/rad; > 0: the joint is elastic), ``spring_damping`` ``D`` (N m s/rad),
        ``rest_offset`` ``q0`` (rad), ``motor_inertia`` (kg m^2, motor side) and ``gear_ratio`` of its elastic
        transmission. Each is an array in ``joint_names`` order or a mapping ``{joint: value}`` that changes only
        the joints it names; ``None`` keeps the current values. ``transmissions``: motors driving joints through
        gears (:class:`~rne_dynamics.model.drive.JointTransmission` s, or ``{name: {joints, motors, matrix,
        rotor_inertia, damping, friction, coulomb_velocity}}`` as ``drive.yaml`` has them, an entry for a
        transmission of the URDF changing only what it gives); the rotor inertia and friction of a motor that turns
        one joint are reflected to it (:func:`~rne_dynamics.model.drive.reflected_terms`) and added to the joint's
        own ``armature``, ``damping`` and ``friction``, which the arrays given here are; a motor that turns several
        joints couples them and is kept whole (:attr:`coupled_motors`)."""
        values = {}
        chosen = self.transmissions if transmissions is None else drive.merged_transmissions(self, transmissions)
        before, after = drive.reflected_terms(self, self.transmissions), drive.reflected_terms(self, chosen)
        for label, given in zip(drive.RIGID, (armature, damping, friction, friction_offset, coulomb_velocity)):
            current = getattr(self, label)
            if label in drive.REFLECTED:
                own = current - before[label]
                values[label] = (own if given is None else self._per_joint(label, given, own)) + after[label]
            else:
                values[label] = current if given is None else self._per_joint(label, given, current)
        values["coulomb_velocity"] = drive.reflected_coulomb_velocity(self, values, after)
        values["transmissions"] = chosen
        elastic = {label: given for label, given in (("stiffness", stiffness), ("spring_damping", spring_damping),
                                                     ("rest_offset", rest_offset), ("motor_inertia", motor_inertia),
                                                     ("gear_ratio", gear_ratio)) if given is not None}
        if elastic:
            current = drive.transmission(self)
            values["transmission"] = drive.with_transmission(self, {
                label: self._per_joint(label, given, getattr(current, label), check=False)
                for label, given in elastic.items()})
        return replace(self, **values)

    def with_locked_joints(self, positions):
        """A new robot with the joints of ``positions`` ``{joint: position}`` held fixed there (Pinocchio's
        ``buildReducedModel``): ``q``, ``v`` and ``joint_names`` lose their coordinates, and each locked joint's
        child links join its parent's body as a fixed joint's do (inertia moved with rotation and the parallel-axis
        theorem); the other joints keep their drive values. A position is a number, or for a joint of several
        coordinates a sequence in ``q``'s order (a floating base ``[x, y, z, qx, qy, qz, qw]``: locking it fixes
        the base there). A mimic joint is locked with its source (naming it too, at the position it follows, is
        allowed; naming it alone is refused). ``locked_joints`` records every joint held, with its position.
        :class:`ModelError` names an unknown joint or a bad position."""
        return lock_joints(self, positions)

    @property
    def elastic_joints(self):
        """The joints of ``joint_names`` with an elastic transmission (``stiffness > 0``), in that order."""
        return tuple(self.joint_names[j] for j in drive.elastic_joints(self))

    def _per_joint(self, label, given, current, check=True):
        out = np.array(current, float)
        if hasattr(given, "items"):
            for name, value in given.items():
                if name not in self.joint_names:
                    joint = self.joints.get(name)
                    why = ("" if joint is None else f" ('{name}' is locked)" if name in self.locked_joints
                           else f" ('{name}' is a {joint.type} joint, which has no drive)" if joint.mimic is None
                           else f" ('{name}' is a mimic joint of '{joint.mimic[0]}', driven through it)")
                    raise ModelError(f"{label}: robot '{self.name}' has no movable joint '{name}'{why}")
                out[self.joint_names.index(name)] = value
        else:
            given = np.asarray(given, float)
            if given.shape != (len(self.joint_names),):
                raise ModelError(f"{label}: expected {len(self.joint_names)} values ({', '.join(self.joint_names)}), "
                                 f"got shape {given.shape}")
            out = given.copy()
        if not check:
            return out
        drive.check(self, label, out)
        return out

    @property
    def actuated_joint_names(self):
        """The driven joints: for a robot with loops, the loop file's ``actuated`` list (its order); otherwise every
        movable joint."""
        return self.loops.actuated if self.loops is not None else self.joint_names

    def joint_index(self, name):
        """Position of joint ``name`` in ``joint_names`` (its index in ``q`` when the base is fixed and every joint has
        one coordinate); a clear error for a joint that is not a coordinate."""
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"robot '{self.name}' has no movable joint '{name}'; its joints are "
                           f"{', '.join(self.joint_names)}") from None

    def link_frame(self, link):
        """``(body, R, p)``: the body carrying ``link`` and the link's pose in that body's frame."""
        try:
            return self.link_frames[link]
        except KeyError:
            raise KeyError(f"robot '{self.name}' has no link '{link}'") from None

    def __repr__(self):
        return f"Robot('{self.name}', dof={self.dof}, links={len(self.link_names)}, mass={self.total_mass:.3f} kg)"
