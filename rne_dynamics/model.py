"""The robot model: an immutable kinematic tree of rigid bodies, built once, packed flat for the kernels.

A *body* is a set of links joined by fixed joints, moved by one non-fixed joint (independent or mimic). Bodies are
numbered in topological order (a parent before its children); the links fixed to the root form the fixed base,
index ``-1``. The kernels receive two flat buffers (``fdata``, ``idata``) and read them through
:func:`model_view`: numba dispatches two arrays far faster than a dozen.
"""
from collections import namedtuple
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from ._jit import kernel

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
])


@kernel
def model_view(fdata, idata):
    """Named views into the flat model buffers (no copies)."""
    nb = idata[0]
    dof = idata[1]
    o = 2
    parent = idata[o:o + nb]
    jtype = idata[o + nb:o + 2 * nb]
    q_index = idata[o + 2 * nb:o + 3 * nb]
    dof_body = idata[o + 3 * nb:o + 3 * nb + dof]
    sizes = (6 * nb, 3 * nb, 9 * nb, 3 * nb, nb, 3 * nb, 9 * nb, nb, nb, dof, dof, dof)
    starts = [0] * 13
    for k in range(12):
        starts[k + 1] = starts[k] + sizes[k]
    S = fdata[starts[0]:starts[1]].reshape((nb, 6))
    axis = fdata[starts[1]:starts[2]].reshape((nb, 3))
    R_tree = fdata[starts[2]:starts[3]].reshape((nb, 3, 3))
    p_tree = fdata[starts[3]:starts[4]].reshape((nb, 3))
    mass = fdata[starts[4]:starts[5]]
    h = fdata[starts[5]:starts[6]].reshape((nb, 3))
    I = fdata[starts[6]:starts[7]].reshape((nb, 3, 3))
    q_mult = fdata[starts[7]:starts[8]]
    q_offset = fdata[starts[8]:starts[9]]
    armature = fdata[starts[9]:starts[10]]
    damping = fdata[starts[10]:starts[11]]
    friction = fdata[starts[11]:starts[12]]
    return ModelView(nb, dof, parent, jtype, q_index, dof_body, S, axis, R_tree, p_tree, mass, h, I,
                     q_mult, q_offset, armature, damping, friction)


def pack(bodies, dof_body, armature, damping, friction):
    """Flat ``(fdata, idata)`` buffers from a list of :class:`Body`, in the layout :func:`model_view` reads."""
    nb = len(bodies)
    idata = np.concatenate([[nb, len(dof_body)],
                            [b.parent for b in bodies], [b.code for b in bodies], [b.q_index for b in bodies],
                            dof_body]).astype(np.int64)
    per_body = [np.reshape([getattr(b, name) for b in bodies], -1) if bodies else np.zeros(0)
                for name in ("S", "axis", "R_tree", "p_tree", "mass", "h", "I", "q_mult", "q_offset")]
    fdata = np.concatenate(per_body + [np.asarray(armature, float), np.asarray(damping, float),
                                       np.asarray(friction, float)]).astype(np.float64)
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

    @property
    def dof(self):
        return len(self.joint_names)

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
