"""Rigid bodies and joints as the readers describe them, their coordinates numbered (:func:`resolve_coordinates`),
and the checks that make an inertia physically possible."""
from dataclasses import dataclass, replace

import numpy as np

from .joints import is_floating, one_coordinate, type_of_code


@dataclass(frozen=True)
class Body:
    """One rigid body of the tree, in its own frame (the frame of the joint that moves it).

    ``S`` holds the joint's motion columns ``(nv, 6)``; ``idx_q`` and ``idx_v`` locate its coordinates in ``q`` and
    ``v`` (a mimic body's point at its source's, with ``q_mult``, ``q_offset``)."""
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
    idx_q: int = -1
    idx_v: int = -1
    q_mult: float = 1.0
    q_offset: float = 0.0
    mimic: bool = False

    @property
    def nq(self):
        return type_of_code(self.code).nq

    @property
    def nv(self):
        return type_of_code(self.code).nv

    def with_mass_added(self, mass, com, I_com):
        """This body with a point-less rigid mass added: ``com`` and ``I_com`` (about the com) in the body frame;
        the parallel-axis theorem moves it to the body origin (RBDA eq. 2.63)."""
        com = np.asarray(com, float)
        I_o = np.asarray(I_com, float) + mass * (com @ com * np.eye(3) - np.outer(com, com))
        return replace(self, mass=self.mass + mass, h=self.h + mass * com, I=self.I + I_o)


@dataclass(frozen=True)
class JointInfo:
    """A URDF joint as written, with its limits and dynamics; ``mimic`` is ``(source, multiplier, offset)``;
    ``pitch``: a screw joint's travel per revolution (m)."""
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
    pitch: float = 0.0


def resolve_coordinates(bodies, body_joints, fail):
    """Number the coordinates in body order (``idx_q``, ``idx_v``) and point every mimic body at its source's.
    Returns the bodies and ``joint_names``: the joints with coordinates of their own, less the base's free-flyer."""
    names = [j.name for j in body_joints]
    first = {}  # joint -> (idx_q, idx_v)
    nq = nv = 0
    for body, joint in zip(bodies, body_joints):
        if joint.mimic is None:
            first[joint.name] = (nq, nv)
            nq, nv = nq + body.nq, nv + body.nv
    resolved = []
    for body, joint in zip(bodies, body_joints):
        mult, offset, seen, source = 1.0, 0.0, [joint.name], joint
        while source.mimic is not None:  # mimic of a mimic composes: q = m1 (m2 q + o2) + o1
            target, m, o = source.mimic
            if target not in names:
                fail(f"joint '{joint.name}': <mimic joint='{target}'> names no movable joint")
            if target in seen:
                fail(f"joint '{joint.name}': mimic joints form a loop ({' -> '.join(seen + [target])})")
            seen.append(target)
            mult, offset = mult * m, mult * o + offset
            source = body_joints[names.index(target)]
        if source is not joint and not one_coordinate(source.type):
            fail(f"joint '{joint.name}': <mimic joint='{source.name}'> follows a {source.type} joint; a mimic "
                 "joint follows a joint of one coordinate (revolute, prismatic, screw)")
        idx_q, idx_v = first[source.name]
        resolved.append(replace(body, idx_q=idx_q, idx_v=idx_v, q_mult=mult, q_offset=offset,
                                mimic=source is not joint))
    joint_names = tuple(j.name for b, j in zip(bodies, body_joints)
                        if j.mimic is None and not (is_floating(j.type) and b.parent < 0))
    return resolved, joint_names


def inertia_problem(I):
    """What makes ``I`` impossible as a rotational inertia (not finite, not symmetric, not positive
    semi-definite), or ``None``."""
    if not np.all(np.isfinite(I)):
        return f"not finite: {I.tolist()}"
    scale = max(1.0, float(np.abs(I).max()))
    if np.abs(I - I.T).max() > 1e-12 * scale:  # not np.allclose: ten times slower, and 1,000-link trees exist
        return f"not symmetric: {I.tolist()}"
    smallest = np.linalg.eigvalsh(I)[0]
    if smallest < -1e-12 * scale:
        return f"not positive semi-definite (smallest principal moment {smallest:.6g} kg m^2)"
    return None


def triangle_problem(I):
    """Why the principal moments of ``I`` (PSD) are those of no real body (one exceeds the sum of the others), or
    ``None``."""
    moments = np.linalg.eigvalsh(I)
    if np.any(moments > 0) and moments[2] > moments[0] + moments[1] + 1e-9 * max(moments[2], 1.0):
        return (f"principal inertias {np.round(moments, 9).tolist()} break the triangle inequality "
                "(no real body has them)")
    return None
