"""From links and joints (as a URDF or a DH table states them) to a :class:`~rne_dynamics.model.Robot`.

Checks the structure (one root, no cycle, every joint's links defined, mimic joints resolvable), merges links
joined by fixed joints into one body (inertia lumped with rotation and the parallel-axis theorem), numbers bodies
in topological order and collects warnings about implausible mass models. :mod:`~rne_dynamics.model.locking` merges
the bodies of joints held at given positions the same way (Pinocchio's ``buildReducedModel``).
"""
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import ModelWarning
from .body import Body, JointInfo, inertia_problem, resolve_coordinates, triangle_problem
from .joints import FLOATING, TYPES, is_fixed, is_floating, joint_code, motion_subspace, one_coordinate
from .robot import Robot

#: The name of the free-flyer that ``floating_base=True`` puts between the world and the root link (Pinocchio's).
BASE_JOINT = "root_joint"


@dataclass(frozen=True)
class LinkSpec:
    """A link's inertial data: mass, centre of mass and rotational inertia about it, in the link frame."""
    name: str
    mass: float = 0.0
    com: np.ndarray = field(default_factory=lambda: np.zeros(3))
    I_com: np.ndarray = field(default_factory=lambda: np.zeros((3, 3)))


#: ``check_inertia`` values: refuse a link inertia that no body has, or load it as given with a warning.
CHECK_INERTIA = ("error", "warn")
#: A link's negative principal moment is slight (a warning, not an error) within this share of the largest principal
#: moment of the physical rigid body it is fixed into.
SLIGHT_INERTIA = 1e-6


def build_robot(name, links, joints, origins, *, error, source="<robot>", floating_base=False, check_inertia="error"):
    """Build a Robot. ``links``: LinkSpec list; ``joints``: JointInfo list; ``origins[joint] = (R, p)``, the joint
    frame in its parent link frame; ``error``: the exception class to raise (names the element at fault);
    ``floating_base``: put a free-flyer between the world and the root link; ``check_inertia="warn"``: a moving
    link's indefinite (or asymmetric) inertia is kept with a warning instead of refused (a non-finite one never).

    In phases: the links' tree and the joints' kinds checked (:func:`_link_tree`, :func:`_check_joint_kinds`); the
    bodies numbered, fixed joints' links placed in them (:func:`_numbered_bodies`); the links' masses lumped into
    their bodies (:func:`_lumped_masses`); the indefinite link inertias judged on their lumped bodies
    (:func:`_judged_inertias`); the coordinates numbered (:func:`~rne_dynamics.model.body.resolve_coordinates`);
    the Robot, its warnings issued."""
    def fail(message):
        raise error(f"{source}: {message}")

    if check_inertia not in CHECK_INERTIA:
        fail(f"check_inertia is one of {', '.join(map(repr, CHECK_INERTIA))}, not {check_inertia!r}")
    root, children = _link_tree(links, joints, fail)
    _check_joint_kinds(joints, root, floating_base, fail)
    bodies, body_joints, frame, notes = _numbered_bodies(links, joints, origins, root, children, floating_base, fail)
    bodies, suspects, mass_notes = _lumped_masses(links, frame, bodies, fail)
    notes += mass_notes + _judged_inertias(suspects, bodies, body_joints, check_inertia, fail)
    bodies, joint_names = resolve_coordinates(bodies, body_joints, fail)
    robot_body_index = {b.joint: i for i, b in enumerate(bodies)}
    by_name = {j.name: j for j in joints}
    base_joint = next((j.name for b, j in zip(bodies, body_joints) if b.parent < 0 and is_floating(j.type)), None)
    robot = Robot(
        name=name, joint_names=joint_names, link_names=tuple(link.name for link in links), root_link=root,
        joints=by_name, bodies=tuple(bodies),
        joint_bodies=tuple(robot_body_index[n] for n in joint_names),
        link_frames=frame, base_joint=base_joint,
        armature=np.zeros(len(joint_names)),
        **_joint_drives(joint_names, bodies, by_name),
        warnings=tuple(notes + _plausibility_warnings(links, bodies, body_joints)), source=source)
    for message in robot.warnings:
        warnings.warn(f"{source}: {message}", ModelWarning, stacklevel=3)
    return robot


def _link_tree(links, joints, fail):
    """``(root, children)``: the root link and ``{link: the joints hanging from it, in document order}``, once every
    joint's links are defined, each link is the child of one joint at most and exactly one link is the root. Calls
    ``fail(message)`` on the first that is not so."""
    link_names = {link.name for link in links}
    if not link_names:
        fail("the robot has no <link>")
    parent_joint = {}
    children = {link.name: [] for link in links}
    for joint in joints:
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in link_names:
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
    return roots[0], children


def _check_joint_kinds(joints, root, floating_base, fail):
    """Calls ``fail(message)`` unless every joint type is known, a floating joint hangs from ``root``, one base at
    most floats (a floating joint or ``floating_base``) and every mimic joint has one coordinate (or is fixed)."""
    for joint in joints:
        if joint.type not in TYPES:
            fail(f"joint '{joint.name}': unknown type {joint.type!r} (known: {', '.join(TYPES)})")
    floating = [j for j in joints if is_floating(j.type)]
    for joint in floating:
        if joint.parent != root:
            fail(f"joint '{joint.name}': a floating joint must connect the root link '{root}' to the base; this "
                 f"one hangs from '{joint.parent}'")
    if len(floating) + floating_base > 1:
        fail("the robot has " + (f"floating joints {', '.join(repr(j.name) for j in floating)}" if len(floating) > 1
                                 else f"a floating joint '{floating[0].name}' and floating_base=True")
             + "; one base can float")
    for joint in joints:
        if joint.mimic is not None and not (one_coordinate(joint.type) or is_fixed(joint.type)):
            fail(f"joint '{joint.name}': a {joint.type} joint cannot be a mimic joint")


def _numbered_bodies(links, joints, origins, root, children, floating_base, fail):
    """``(bodies, body_joints, frame, notes)``: a massless body per movable joint (and the free-flyer of
    ``floating_base``), numbered depth-first from ``root`` with children in document order (as Pinocchio numbers
    them), a floating joint first, so each subtree is numbered before the next sibling; the joint of each body;
    ``frame[link] = (body, R, p)``, every link placed in its body (a fixed joint's child link in its parent's body,
    body -1 the world); notes on ignored ``<mimic>`` s of fixed joints. Calls ``fail`` for links the root does not
    reach."""
    notes = []
    frame = {root: (-1, np.eye(3), np.zeros(3))}
    bodies, body_joints = [], []
    if floating_base:
        if BASE_JOINT in {j.name for j in joints}:
            fail(f"floating_base=True adds a joint '{BASE_JOINT}', and the robot already has one of that name")
        base = JointInfo(BASE_JOINT, FLOATING, "world", root)
        bodies.append(_body(base, -1, np.eye(3), np.zeros(3)))
        body_joints.append(base)
        frame[root] = (0, np.eye(3), np.zeros(3))
    stack = sorted(reversed(children[root]), key=lambda j: is_floating(j.type))
    while stack:
        joint = stack.pop()
        body, R_link, p_link = frame[joint.parent]
        R_o, p_o = origins[joint.name]
        R, p = R_link @ R_o, p_link + R_link @ p_o
        if is_fixed(joint.type):
            frame[joint.child] = (body, R, p)
            if joint.mimic is not None:
                notes.append(f"joint '{joint.name}': fixed, so its <mimic> is ignored")
        else:
            frame[joint.child] = (len(bodies), np.eye(3), np.zeros(3))
            bodies.append(_body(joint, body, R, p))
            body_joints.append(joint)
        stack.extend(reversed(children[joint.child]))
    unreached = [link.name for link in links if link.name not in frame]
    if unreached:
        fail(f"links {', '.join(repr(n) for n in unreached)} are not connected to the root '{root}': "
             "their joints form a cycle")
    return bodies, body_joints, frame, notes


def _lumped_masses(links, frame, bodies, fail):
    """``(bodies, suspects, notes)``: ``bodies`` with each link's mass, centre of mass and inertia added to its body
    (RBDA eq. 2.63, rotated into the body frame); ``suspects``, ``(link, body, problem)`` of the moving links whose
    inertia no rigid body has, judged once the body is whole (:func:`_judged_inertias`); notes on such inertias
    of links fixed to the world (ignored). Calls ``fail`` for a moving link's non-finite inertia or a body whose
    sum is not finite."""
    bodies, suspects, notes = list(bodies), [], []
    for link in links:
        body, R, p = frame[link.name]
        problem = inertia_problem(link.I_com)
        if problem and body < 0:
            notes.append(f"link '{link.name}': inertia is {problem}; ignored, the link is fixed to the world")
        elif problem and not np.isfinite(link.I_com).all():
            fail(f"link '{link.name}': inertia is {problem}")
        elif problem:
            suspects.append((link, body, problem))
        if link.mass > 0 or np.any(link.I_com):
            if body >= 0:
                bodies[body] = bodies[body].with_mass_added(link.mass, R @ link.com + p, R @ link.I_com @ R.T)
                if not (np.isfinite(bodies[body].I).all() and np.isfinite(bodies[body].h).all()):
                    fail(f"link '{link.name}': mass {link.mass:g} kg at {link.com.tolist()} m overflows its body's "
                         "inertia (not finite)")
    return bodies, suspects, notes


def _judged_inertias(suspects, bodies, body_joints, check_inertia, fail):
    """Notes on the ``suspects`` (:func:`_lumped_masses`) that are loaded: slightly indefinite on a physical
    lumped body (:func:`_slight_on`), or any with ``check_inertia="warn"``; ``fail`` for the others."""
    notes = []
    for link, body, problem in suspects:
        scale = _slight_on(link, bodies[body])
        if scale:
            notes.append(f"link '{link.name}': inertia is {problem}, slightly: the rigid body it is fixed to (link "
                         f"'{body_joints[body].child}', {bodies[body].mass:.6g} kg) is physical, its principal "
                         f"moments up to {scale:.3g} kg m^2; loaded as lumped")
        elif check_inertia == "error":
            fail(f"link '{link.name}': inertia is {problem}; no rigid body has it (check_inertia='warn' loads it as "
                 "given, with a warning; CLI: --check-inertia warn)")
        else:
            notes.append(f"link '{link.name}': inertia is {problem}; loaded as given (check_inertia='warn'): "
                         "mass matrices may be indefinite and forward dynamics wrong")
    return notes


def _body(joint, parent, R_tree, p_tree):
    """A massless body for ``joint`` (mass is added link by link), its frame at ``(R_tree, p_tree)`` in its parent's
    at the zero configuration."""
    axis = np.asarray(joint.axis, float)
    code = joint_code(joint.type, axis)
    return Body(joint.name, parent, code, axis, motion_subspace(code, axis, joint.pitch), R_tree, p_tree, 0.0,
                np.zeros(3), np.zeros((3, 3)))


def _slight_on(link, body):
    """The largest principal moment (kg m^2) of ``body``'s inertia about its centre of mass when ``body`` (the
    links fixed together, lumped) has a physical inertia and ``link``'s own indefiniteness is slight against it
    (its negative principal moment within :data:`SLIGHT_INERTIA` of that scale); else 0. CAD rounding leaves small
    links with principal moments of -1e-8 kg m^2 fixed to bodies of 1 kg m^2, where the body is what moves."""
    com = body.h / body.mass if body.mass > 0 else np.zeros(3)
    moments = np.linalg.eigvalsh(body.I - body.mass * (com @ com * np.eye(3) - np.outer(com, com)))
    scale = float(moments[-1])
    if scale <= 0 or moments[0] < -1e-12 * max(1.0, scale):
        return 0.0
    return scale if -np.linalg.eigvalsh(link.I_com)[0] <= SLIGHT_INERTIA * scale else 0.0


def _joint_drives(joint_names, bodies, joints):
    """``damping`` and ``friction`` per joint of ``joint_names``: its URDF ``<dynamics>``, plus those of the mimic
    joints that follow it, carried over by virtual work. A mimic joint ``q_m = k q_s + o`` resists with its own
    ``tau_m = d_m qd_m + f_m sign(qd_m)``, ``qd_m = k qd_s``; its source then bears ``k tau_m = k^2 d_m qd_s +
    |k| f_m sign(qd_s)`` (the same power ``tau_m qd_m``): viscous damping ``k^2 d_m`` and Coulomb friction
    ``|k| f_m`` added to the source's."""
    damping = np.array([joints[n].damping for n in joint_names], float)
    friction = np.array([joints[n].friction for n in joint_names], float)
    column = {b.idx_v: joint_names.index(b.joint) for b in bodies if not b.mimic and b.joint in joint_names}
    for b in bodies:
        if b.mimic:
            damping[column[b.idx_v]] += b.q_mult ** 2 * joints[b.joint].damping
            friction[column[b.idx_v]] += abs(b.q_mult) * joints[b.joint].friction
    return {"damping": damping, "friction": friction}


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
