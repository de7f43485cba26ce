"""Joints held at given positions, out of the model (Pinocchio's ``buildReducedModel``): :func:`lock_joints`, which
:meth:`Robot.with_locked_joints <rne_dynamics.model.robot.Robot.with_locked_joints>` calls.

Each locked joint's body is merged into its nearest moving ancestor as a fixed joint's child link is (inertia moved
with rotation and the parallel-axis theorem; the world's bodies are not counted), so ``q``, ``v`` and
``joint_names`` lose its coordinates. In phases: the positions checked and the configuration they hold
(:func:`_held_configuration`); where each body goes (:func:`_merge_plan`, from the bodies' poses at that
configuration); the bodies merged (:func:`_merged_bodies`) and the links carried with them
(:func:`_merged_link_frames`); the reduced robot, its drives reflected again (:func:`_reduced_robot`).
"""
from dataclasses import fields, replace
from typing import NamedTuple

import numpy as np

from .._jit import is_unit, kernel
from .._trace import traceable
from .._tuning import QUATERNION_TOLERANCE
from ..errors import ModelError
from . import drive
from .body import JointInfo, resolve_coordinates
from .buffers import model_view
from .configuration import neutral_configuration
from .joints import FLOATING, X_up, type_of_code


def lock_joints(robot, positions):
    """``robot`` with the joints of ``positions`` ``{joint: value}`` held at those values (Pinocchio's
    ``buildReducedModel``): each locked joint's body is merged into its nearest moving ancestor as a fixed joint's
    child link is (the world's bodies are not counted), so ``q``, ``v`` and ``joint_names`` lose its coordinates.
    Implements :meth:`Robot.with_locked_joints <rne_dynamics.model.robot.Robot.with_locked_joints>`."""
    if not hasattr(positions, "items"):
        raise ModelError(f"locked joints are a mapping {{joint: position}}, not {type(positions).__name__}")
    q, locked = _held_configuration(robot, positions)
    merge = _merge_plan(robot, q, locked)
    return _reduced_robot(robot, merge, _merged_bodies(robot.bodies, merge), _merged_link_frames(robot, merge), locked)


def _held_configuration(robot, positions):
    """``(q, locked)``: the neutral configuration with the positions of ``positions`` in it, and ``{joint: its
    position (a tuple)}`` of every joint that becomes held, in body order (a mimic joint with its source, at the
    position it follows). Each position is checked (:func:`_checked_position`); a mimic joint named with its source
    must be at the position its source gives it."""
    bodies, names = robot.bodies, robot.body_joint_names
    index = {name: i for i, name in enumerate(names)}
    source = {i: next(k for k, o in enumerate(bodies) if not o.mimic and o.idx_q == b.idx_q)
              for i, b in enumerate(bodies)}  # the body whose coordinate moves body i (itself, unless a mimic)
    q = neutral_configuration(robot)
    for name, value in positions.items():
        value = _checked_position(robot, name, value)
        b, moved_by = bodies[index[name]], names[source[index[name]]]
        if b.mimic and moved_by not in positions:
            raise ModelError(f"locked joint '{name}': a mimic joint moves with its source '{moved_by}'; lock "
                             f"'{moved_by}' (its mimic joints are locked with it)")
        if not b.mimic:
            q[b.idx_q:b.idx_q + b.nq] = value
    at = {i: q[b.idx_q:b.idx_q + b.nq] if not b.mimic else np.array([b.q_mult * q[b.idx_q] + b.q_offset])
          for i, b in enumerate(bodies)}
    for name, value in positions.items():
        i = index[name]
        if bodies[i].mimic and abs(float(np.ravel(value)[0]) - at[i][0]) > 1e-9 * max(1.0, abs(at[i][0])):
            raise ModelError(f"locked joint '{name}': a mimic joint of '{names[source[i]]}', held at {at[i][0]:g} "
                             f"by it, not {float(np.ravel(value)[0]):g}")
    return q, {names[i]: tuple(at[i].tolist()) for i in range(len(bodies)) if names[source[i]] in positions}


def _checked_position(robot, name, value):
    """The position ``value`` of movable joint ``name`` as ``nq`` finite numbers, its quaternion (if it has one)
    of unit norm and normalised; a :class:`ModelError` names what is wrong."""
    if name not in robot.body_joint_names:
        why = (" (it is locked already)" if name in robot.locked_joints else
               f" ('{name}' is a fixed joint)" if name in robot.joints else "")
        raise ModelError(f"locked joint '{name}': robot '{robot.name}' has no movable joint of that name{why}; "
                         f"its movable joints are {', '.join(robot.body_joint_names)}")
    b = robot.bodies[robot.body_joint_names.index(name)]
    try:
        value = np.array(value, float).reshape(-1)
    except (TypeError, ValueError):
        raise ModelError(f"locked joint '{name}': position {value!r} is not a number") from None
    if value.size != b.nq or not np.isfinite(value).all():
        order = "" if b.nq == 1 else " (" + " ".join(n.rsplit(".", 1)[1] for n in robot.q_names
                                                    if n.startswith(name + ".")) + ")"
        raise ModelError(f"locked joint '{name}': expected {b.nq} finite number(s){order}, got {value.tolist()}")
    start = type_of_code(b.code).quaternion
    if start >= 0 and not traceable(is_unit)(*value[start:start + 4], QUATERNION_TOLERANCE):
        raise ModelError(f"locked joint '{name}': the quaternion of {value.tolist()} is not of unit norm")
    if start >= 0:
        value[start:start + 4] /= np.linalg.norm(value[start:start + 4])
    return value


@kernel
def parent_poses(fdata, idata, q, R, p):
    """Every body's pose ``(R, p)`` in its parent at configuration ``q`` (:func:`~rne_dynamics.model.joints.X_up`)."""
    m = model_view(fdata, idata)
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])


class _Merge(NamedTuple):
    """Where each body goes when the ``held`` bodies are merged: ``ancestor[i]``, body ``i``'s nearest moving
    ancestor (``-1``: the world); ``index[i]``, a moving body's index in the reduced robot (``index[-1] = -1``);
    ``world[i]``, body ``i``'s pose in the world (4 x 4) at the held configuration."""
    held: set
    ancestor: dict
    index: dict
    world: dict

    def to_ancestor(self, i, R, p):
        """A pose ``(R, p)`` in body ``i``'s frame, seen from its nearest moving ancestor's."""
        X = np.linalg.solve(self.world[self.ancestor[i]], self.world[i])
        return X[:3, :3] @ R, X[:3, :3] @ p + X[:3, 3]


def _merge_plan(robot, q, locked):
    """The :class:`_Merge` of the bodies of the joints of ``locked`` at configuration ``q``: body poses in the world
    composed from the root (RBDA eq. 2.20), each body's nearest moving ancestor, the moving bodies renumbered."""
    bodies = robot.bodies
    held = {i for i, name in enumerate(robot.body_joint_names) if name in locked}
    R, p = np.empty((len(bodies), 3, 3)), np.empty((len(bodies), 3))
    traceable(parent_poses)(robot.fdata, robot.idata, q, R, p)  # its Python: once per lock, no compile
    world = {-1: np.eye(4)}
    for i, b in enumerate(bodies):
        X = np.eye(4)
        X[:3, :3], X[:3, 3] = R[i], p[i]
        world[i] = world[b.parent] @ X
    ancestor, index = {-1: -1}, {-1: -1}
    for i, b in enumerate(bodies):
        ancestor[i] = ancestor[b.parent] if b.parent in held else b.parent
        if i not in held:
            index[i] = len(index) - 1
    return _Merge(held, ancestor, index, world)


def _merged_bodies(bodies, merge):
    """The moving bodies of ``bodies``, each hung from its nearest moving ancestor (its joint frame carried from a
    held parent's frame to the new parent's), with the mass of every held body added to its nearest moving
    ancestor's (none to the world)."""
    new_bodies = []
    for i, b in enumerate(bodies):
        if i not in merge.held:
            R, p = merge.to_ancestor(b.parent, b.R_tree, b.p_tree) if b.parent in merge.held else (b.R_tree, b.p_tree)
            new_bodies.append(replace(b, parent=merge.index[merge.ancestor[i]], R_tree=R, p_tree=p))
    for i in sorted(merge.held):
        b, a = bodies[i], merge.index[merge.ancestor[i]]
        if a >= 0:
            com = b.h / b.mass if b.mass > 0 else np.zeros(3)
            R, p = merge.to_ancestor(i, np.eye(3), com)
            I_com = b.I - b.mass * (com @ com * np.eye(3) - np.outer(com, com))  # RBDA eq. 2.63 reversed
            new_bodies[a] = new_bodies[a].with_mass_added(b.mass, p, R @ I_com @ R.T)
    return new_bodies


def _merged_link_frames(robot, merge):
    """``robot.link_frames`` with every link of a held body placed in its nearest moving ancestor; a loop closure
    whose two links become one rigid body is refused (as :func:`~rne_dynamics.model.loops.read_loops` refuses it)."""
    link_frames = {link: (merge.index[merge.ancestor[i]], *merge.to_ancestor(i, R, p)) if i in merge.held
                   else (merge.index[i], R, p) for link, (i, R, p) in robot.link_frames.items()}
    for c in robot.loops.closures if robot.loops else ():
        if link_frames[c.link_a][0] == link_frames[c.link_b][0]:
            raise ModelError(f"locked joints: loop '{c.name}': link_a '{c.link_a}' and link_b '{c.link_b}' become one "
                             "rigid body; a cut joint joins two bodies")
    return link_frames


def _reduced_robot(robot, merge, bodies, link_frames, locked):
    """The reduced robot: ``bodies``' coordinates numbered again, the per-joint drive values, elastic
    transmissions and loops' actuated joints of the joints left, ``locked`` added to ``robot.locked_joints``; the
    motors' terms reflected again on the joints left (a coupled motor turning one of them only becomes that joint's
    term)."""
    def fail(message):
        raise ModelError(f"locked joints: {message}")

    names = robot.body_joint_names
    base = JointInfo(robot.base_joint, FLOATING, "world", robot.root_link)
    kept = [robot.joints.get(names[i], base) for i in range(len(names)) if i not in merge.held]
    bodies, joint_names = resolve_coordinates(bodies, kept, fail)
    keep = [robot.joint_names.index(n) for n in joint_names]
    body_of = {b.joint: k for k, b in enumerate(bodies)}
    transmission = robot.transmission and type(robot.transmission)(
        *(getattr(robot.transmission, f.name)[keep] for f in fields(robot.transmission)))
    loops = robot.loops and replace(robot.loops, actuated=tuple(a for a in robot.loops.actuated if a in joint_names))
    reflected = drive.reflected_terms(robot, robot.transmissions)
    own = {label: (getattr(robot, label) - reflected[label] if label in drive.REFLECTED
                   else getattr(robot, label))[keep] for label in drive.RIGID}
    reduced = replace(
        robot, joint_names=joint_names, bodies=tuple(bodies), joint_bodies=tuple(body_of[n] for n in joint_names),
        link_frames=link_frames, base_joint=None if robot.base_joint in locked else robot.base_joint, **own,
        transmission=transmission, loops=loops, locked_joints={**robot.locked_joints, **locked}, transmissions=(),
        warnings=tuple(w for w in robot.warnings if not any(f"joint '{n}'" in w for n in locked)))
    return reduced.with_drive(transmissions=robot.transmissions)
