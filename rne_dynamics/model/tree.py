"""From links and joints (as a URDF or a DH table states them) to a :class:`~rne_dynamics.model.Robot`.

Checks the structure (one root, no cycle, every joint's links defined, mimic joints resolvable), merges links
joined by fixed joints into one body (inertia lumped with rotation and the parallel-axis theorem), numbers bodies
in topological order and collects warnings about implausible mass models.
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelWarning
from .joints import TYPE_CODES, motion_subspace
from .robot import Body, Robot


@dataclass(frozen=True)
class LinkSpec:
    """A link's inertial data: mass, centre of mass and rotational inertia about it, in the link frame."""
    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    I_com: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


def build_robot(name, links, joints, origins, *, error, source="<robot>"):
    """Build a Robot. ``links``: LinkSpec list; ``joints``: JointInfo list; ``origins[joint] = (R, p)``, the joint
    frame in its parent link frame; ``error``: the exception class to raise (names the element at fault)."""
    def fail(message):
        raise error(f"{source}: {message}")

    notes = []

    link_by_name = {link.name: link for link in links}
    if not link_by_name:
        fail("the robot has no <link>")
    parent_joint = {}
    children = {link.name: [] for link in links}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in link_by_name:
                fail(f"joint '{joint.name}': {role} link '{link}' is not defined")
        if joint.parent == joint.child:
            fail(f"joint '{joint.name}': link '{joint.child}' cannot be its own parent")
        if joint.child in parent_joint:
            fail(f"link '{joint.child}' is the child of two joints, '{parent_joint[joint.child].name}' and "
                 f"'{joint.name}'")
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)

    roots = [link.name for link in links if link.name not in parent_joint]
    if len(roots) > 1:
        fail(f"the robot has {len(roots)} root links ({', '.join(repr(r) for r in roots)}); "
             "a robot has exactly one link that is no joint's child")
    if not roots:
        fail("every link is some joint's child, so the joints form a cycle; a robot needs one root link")
    root = roots[0]

    # Depth-first, children in document order (as Pinocchio numbers them); a joint becomes a body when it is
    # visited, so each subtree is numbered before the next sibling. Fixed joints keep the parent's body.
    frame = {root: (-1, np.eye(3), np.zeros(3))}
    bodies, body_joints = [], []
    stack = list(reversed(children[root]))
    while stack:
        joint = stack.pop()
        body, R_link, p_link = frame[joint.parent]
        R_o, p_o = origins[joint.name]
        R, p = R_link @ R_o, p_link + R_link @ p_o
        if joint.type == "fixed":
            frame[joint.child] = (body, R, p)
            if joint.mimic is not None:
                notes.append(f"joint '{joint.name}': fixed, so its <mimic> is ignored")
        else:
            frame[joint.child] = (len(bodies), np.eye(3), np.zeros(3))
            code = TYPE_CODES[joint.type]
            axis = np.asarray(joint.axis, float)
            bodies.append(Body(joint.name, body, code, axis, motion_subspace(code, axis), R, p,
                               0.0, np.zeros(3), np.zeros((3, 3)), -1))
            body_joints.append(joint)
        stack.extend(reversed(children[joint.child]))
    unreached = [link.name for link in links if link.name not in frame]
    if unreached:
        fail(f"links {', '.join(repr(n) for n in unreached)} are not connected to the root '{root}': "
             "their joints form a cycle")

    for link in links:
        body, R, p = frame[link.name]
        problem = inertia_problem(link.I_com)
        if problem and body >= 0:
            fail(f"link '{link.name}': inertia is {problem}")
        if problem:
            notes.append(f"link '{link.name}': inertia is {problem}; ignored, the link is fixed to the world")
        if link.mass > 0 or np.any(link.I_com):
            if body >= 0:
                bodies[body] = bodies[body].with_mass_added(link.mass, R @ link.com + p, R @ link.I_com @ R.T)
                if not (np.isfinite(bodies[body].I).all() and np.isfinite(bodies[body].h).all()):
                    fail(f"link '{link.name}': mass {link.mass:g} kg at {link.com.tolist()} m overflows its body's "
                         "inertia (not finite)")

    bodies, joint_names = _resolve_coordinates(bodies, body_joints, fail)
    robot_body_index = {b.joint: i for i, b in enumerate(bodies)}
    by_name = {j.name: j for j in joints}
    robot = Robot(
        name=name, joint_names=joint_names, link_names=tuple(link.name for link in links), root_link=root,
        joints=by_name, bodies=tuple(bodies),
        dof_body=tuple(robot_body_index[n] for n in joint_names),
        link_frames=frame,
        armature=np.zeros(len(joint_names)),
        damping=np.array([by_name[n].damping for n in joint_names], float),
        friction=np.array([by_name[n].friction for n in joint_names], float),
        warnings=tuple(notes + _plausibility_warnings(links, bodies, body_joints)), source=source)
    for message in robot.warnings:
        warnings.warn(f"{source}: {message}", ModelWarning, stacklevel=3)
    return robot


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


def _resolve_coordinates(bodies, body_joints, fail):
    """Number the independent coordinates in body order and point every mimic body at its source coordinate."""
    names = [j.name for j in body_joints]
    independent = [j.name for j in body_joints if j.mimic is None]
    index = {n: k for k, n in enumerate(independent)}
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
        resolved.append(Body(**{**body.__dict__, "q_index": index[source.name], "q_mult": mult,
                                "q_offset": offset}))
    return resolved, tuple(independent)


def _plausibility_warnings(links, bodies, body_joints):
    """Inertias that break the triangle inequality (typical of CAD exports) and joints that move no mass."""
    messages = []
    for link in links:
        if not np.isfinite(link.I_com).all():
            continue  # reported as ignored on a base link (refused elsewhere); eigvalsh would not converge
        problem = triangle_problem(link.I_com)
        if problem:
            messages.append(f"link '{link.name}': {problem}")
    subtree_mass = np.array([b.mass for b in bodies])
    for i in range(len(bodies) - 1, -1, -1):
        if bodies[i].parent >= 0:
            subtree_mass[bodies[i].parent] += subtree_mass[i]
    for mass, joint in zip(subtree_mass, body_joints):
        if mass <= 0 and joint.mimic is None:
            messages.append(f"joint '{joint.name}' moves no mass (its whole subtree is massless): the mass matrix "
                            "is singular and forward dynamics undefined unless it gets armature")
    return messages
