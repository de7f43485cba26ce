"""The robot model: an immutable kinematic tree of rigid bodies, built once, packed flat for the kernels.

A *body* is a set of links joined by fixed joints, moved by one non-fixed joint (independent or mimic). Bodies are
numbered in topological order (a parent before its children); the links fixed to the root form the fixed base,
index ``-1``. The kernels receive two buffers (``fdata``, ``idata``) and read them through :func:`model_view`: numba
dispatches two arrays far faster than a dozen.
"""
from collections import namedtuple
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from .._jit import helper, kernel
from ..errors import ModelError
from .joints import rotation_terms

#: Fields of the model seen by the kernels; per body unless noted.
ModelView = namedtuple("ModelView", [
    "nb",         # number of bodies (movable joints, mimic included)
    "dof",        # number of independent joint coordinates
    "parent",     # parent body index, -1 for the fixed base
    "jtype",      # joint code (joints.REVOLUTE, joints.PRISMATIC)
    "q_index",    # the coordinate that drives the body: q_body = q_mult * q[q_index] + q_offset
    "dof_body",   # per coordinate: the body it moves
    "S",          # motion subspace, (nb, 6)
    "axis",       # joint axis, unit, (nb, 3)
    "R_tree",     # joint frame at q = 0 in the parent body frame, (nb, 3, 3) and (nb, 3)
    "p_tree",
    "mass",       # body mass
    "h",          # first moment of mass, mass * com, body frame, (nb, 3)
    "I",          # rotational inertia about the body frame origin, (nb, 3, 3)
    "q_mult",
    "q_offset",
    "armature",   # per coordinate: rotor inertia reflected to the joint
    "damping",    # per coordinate: viscous friction coefficient
    "friction",   # per coordinate: Coulomb friction
    "R_sin",      # revolute joints: R_tree R_J(q) = R_tree + sin(q) R_sin + (1 - cos(q)) R_versine, (nb, 3, 3)
    "R_versine",
])


#: A body's (10, 6) block in ``fdata`` (row: columns 0:3 | 3:6): 0: S; 1: axis | p_tree; 2: h | mass, q_mult,
#: q_offset; 3-5: R_tree | I; 6-8: R_sin | R_versine; 9: armature, damping, friction of coordinate ``k`` in block
#: ``k`` (a robot has no more coordinates than bodies).
BODY_BLOCK = (10, 6)


@kernel
def model_view(fdata, idata):
    """Named views into the model buffers: ``fdata`` ``(nb, 10, 6)`` and ``idata``. Slices only (a reshape costs
    as much as the arithmetic of a small robot's gravity pass)."""
    return model_view_inline(fdata, idata)


@helper
def model_view_inline(fdata, idata):
    """:func:`model_view` inlined into its caller: in a kernel compiled without reference counting
    (``_jit.arithmetic_kernel``) its twenty views then cost nothing."""
    nb = idata[0]
    dof = idata[1]
    parent = idata[2:2 + nb]
    jtype = idata[2 + nb:2 + 2 * nb]
    q_index = idata[2 + 2 * nb:2 + 3 * nb]
    dof_body = idata[2 + 3 * nb:2 + 3 * nb + dof]
    return ModelView(nb, dof, parent, jtype, q_index, dof_body, fdata[:, 0], fdata[:, 1, 0:3], fdata[:, 3:6, 0:3],
                     fdata[:, 1, 3:6], fdata[:, 2, 3], fdata[:, 2, 0:3], fdata[:, 3:6, 3:6], fdata[:, 2, 4],
                     fdata[:, 2, 5], fdata[:dof, 9, 0], fdata[:dof, 9, 1], fdata[:dof, 9, 2], fdata[:, 6:9, 0:3],
                     fdata[:, 6:9, 3:6])


def pack(bodies, dof_body, armature, damping, friction):
    """The ``(fdata, idata)`` buffers from a list of :class:`Body`, in the layout :func:`model_view` reads."""
    nb = len(bodies)
    idata = np.concatenate([[nb, len(dof_body)],
                            [b.parent for b in bodies], [b.code for b in bodies], [b.q_index for b in bodies],
                            dof_body]).astype(np.int64)
    fdata = np.zeros((nb,) + BODY_BLOCK)
    for i, b in enumerate(bodies):
        R_sin, R_versine = rotation_terms(b.code, b.axis, b.R_tree)
        fdata[i, 0] = b.S
        fdata[i, 1] = np.concatenate([b.axis, b.p_tree])
        fdata[i, 2] = np.concatenate([b.h, [b.mass, b.q_mult, b.q_offset]])
        fdata[i, 3:6] = np.hstack([b.R_tree, b.I])
        fdata[i, 6:9] = np.hstack([R_sin, R_versine])
    fdata[:len(dof_body), 9, 0:3] = np.column_stack([armature, damping, friction])
    return fdata, idata


@dataclass(frozen=True)
class Body:
    """One rigid body of the tree, in its own frame (the frame of the joint that moves it)."""
    joint: str
    parent: int
    code: int
    axis: np.ndarray
    S: np.ndarray
    R_tree: np.ndarray
    p_tree: np.ndarray
    mass: float
    h: np.ndarray
    I: np.ndarray
    q_index: int
    q_mult: float = 1.0
    q_offset: float = 0.0

    def with_mass_added(self, mass, com, I_com):
        """This body with a point-less rigid mass added: ``com`` and ``I_com`` (about the com) in the body frame;
        the parallel-axis theorem moves it to the body origin (RBDA eq. 2.63)."""
        com = np.asarray(com, float)
        I_o = np.asarray(I_com, float) + mass * (com @ com * np.eye(3) - np.outer(com, com))
        return replace(self, mass=self.mass + mass, h=self.h + mass * com, I=self.I + I_o)


@dataclass(frozen=True)
class JointInfo:
    """A URDF joint as written, with its limits and dynamics; ``mimic`` is ``(source, multiplier, offset)``."""
    name: str
    type: str
    parent: str
    child: str
    axis: tuple = (1.0, 0.0, 0.0)
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = np.inf
    velocity: float = np.inf
    damping: float = 0.0
    friction: float = 0.0
    mimic: tuple = None


@dataclass(frozen=True, eq=False)
class Robot:
    """A robot's dynamics model. Immutable: ``with_*`` methods return new robots sharing nothing mutable.

    ``joint_names`` orders ``q``; ``link_frames[link] = (body, R, p)`` places every link in its body
    (body ``-1`` is the fixed base).
    """
    name: str
    joint_names: tuple
    link_names: tuple
    root_link: str
    joints: dict            # joint name -> JointInfo, every joint of the description (fixed included)
    bodies: tuple           # Body, topological order
    dof_body: tuple         # per coordinate, its body index
    link_frames: dict
    armature: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    warnings: tuple = ()
    source: str = "<robot>"
    fdata: np.ndarray = field(init=False, repr=False)
    idata: np.ndarray = field(init=False, repr=False)

    def __post_init__(self):
        fdata, idata = pack(self.bodies, self.dof_body, self.armature, self.damping, self.friction)
        fdata.setflags(write=False)
        idata.setflags(write=False)
        object.__setattr__(self, "fdata", fdata)
        object.__setattr__(self, "idata", idata)

    @cached_property
    def dof(self):
        """Number of independent joint coordinates (the length of ``q``)."""
        return len(self.joint_names)

    @cached_property
    def nb(self):
        """Number of moving bodies (movable joints, mimic joints included)."""
        return len(self.bodies)

    @cached_property
    def arrays(self):
        """The kernels' view of the model (:class:`ModelView`), as read-only numpy arrays."""
        return model_view(self.fdata, self.idata)

    @cached_property
    def body_joint_names(self):
        """Names of the joints that move each body (independent and mimic), in body order."""
        return tuple(b.joint for b in self.bodies)

    @cached_property
    def position_limits(self):
        """``(dof, 2)`` lower and upper joint limits (``-inf, inf`` for continuous joints)."""
        return np.array([[self.joints[n].lower, self.joints[n].upper] for n in self.joint_names]).reshape(-1, 2)

    @cached_property
    def effort_limits(self):
        """``(dof,)`` URDF effort limits; ``inf`` where none is given."""
        return np.array([self.joints[n].effort for n in self.joint_names], float)

    @cached_property
    def velocity_limits(self):
        """``(dof,)`` URDF velocity limits; ``inf`` where none is given."""
        return np.array([self.joints[n].velocity for n in self.joint_names], float)

    @cached_property
    def total_mass(self):
        """Mass of all moving bodies (the fixed base is not counted)."""
        return float(sum(b.mass for b in self.bodies))

    def with_payload(self, link, mass, com=(0.0, 0.0, 0.0), inertia=(0.0,) * 6):
        """A new robot carrying a rigid payload on ``link``: ``mass`` (kg), ``com`` (m, link frame) and ``inertia``
        ``(ixx, ixy, ixz, iyy, iyz, izz)`` about the payload's COM, link axes (kg m^2). This robot is unchanged."""
        from .tree import inertia_problem, triangle_problem
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

    def with_drive(self, armature=None, damping=None, friction=None):
        """A new robot with other drive parameters per joint: ``armature`` (rotor inertia, kg m^2 or kg),
        ``damping`` (viscous, N m s/rad) and ``friction`` (Coulomb, N m). Each is an array in ``joint_names`` order
        or a mapping ``{joint: value}`` that changes only the joints it names; ``None`` keeps the current values."""
        values = {}
        for label, given, current in (("armature", armature, self.armature), ("damping", damping, self.damping),
                                      ("friction", friction, self.friction)):
            values[label] = current if given is None else self._per_joint(label, given, current)
        return replace(self, **values)

    def _per_joint(self, label, given, current):
        out = np.array(current, float)
        if hasattr(given, "items"):
            for name, value in given.items():
                if name not in self.joint_names:
                    raise ModelError(f"{label}: robot '{self.name}' has no movable joint '{name}'")
                out[self.joint_names.index(name)] = value
        else:
            given = np.asarray(given, float)
            if given.shape != (self.dof,):
                raise ModelError(f"{label}: expected {self.dof} values ({', '.join(self.joint_names)}), "
                                 f"got shape {given.shape}")
            out = given.copy()
        bad = np.flatnonzero(~np.isfinite(out) | (out < 0))
        if bad.size:
            raise ModelError(f"{label} of joint '{self.joint_names[bad[0]]}' must be finite and >= 0, "
                             f"got {out[bad[0]]}")
        return out

    def joint_index(self, name):
        """Position of joint ``name`` in ``q``; a clear error for a joint that is not a coordinate."""
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
