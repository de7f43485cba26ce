"""Robots with a moving base (Khalil 2010 Sec. 7): the two inverse models, one for each way the base moves.

- The base floats free (a space robot, a drone's arm, a legged robot in flight): the joints follow a trajectory and
  the base reacts. :func:`free_floating_inverse_dynamics` is Khalil's inverse model with a mobile base (eqs. 86-87,
  recursively 89-99): hybrid dynamics with the base's 6 forces known (zero: no wrench on the base but gravity and
  the external wrenches) and the joints' accelerations known.
- The base's motion is imposed (an arm on a mobile platform, a ship, a vehicle): :func:`mounted_inverse_dynamics`
  takes the base's pose, twist and acceleration (from odometry and an IMU) with the joint state and returns the joint
  torques and the wrench the mounting must exert on the robot: floating-base inverse dynamics (eq. 83) in one call.
"""
from typing import NamedTuple

import numpy as np

from ..errors import ModelError, StateError
from .hybrid import HYBRID, hybrid_dynamics, recursive
from .rnea import inverse_dynamics


class FreeFloatingResult(NamedTuple):
    """``base_acceleration`` ``(…, 6)``: the time derivative of the base twist ``v[:6]`` (base frame; Pinocchio's
    spatial ``a[:6]``; the base origin's classical acceleration is ``a[:3] + w x v[:3]``). ``torques``
    ``(…, len(joint_names))``: the joint torques/forces (no entry for the base). ``joint_wrenches``
    ``(…, len(joint_names), 6)``: as :func:`rne_dynamics.inverse_dynamics`'s."""
    base_acceleration: np.ndarray
    torques: np.ndarray
    joint_wrenches: np.ndarray


class MountedInverseDynamicsResult(NamedTuple):
    """``torques`` ``(…, len(joint_names))``: the joint torques/forces. ``joint_wrenches``
    ``(…, len(joint_names), 6)``: as :func:`rne_dynamics.inverse_dynamics`'s. ``mounting_wrench`` ``(…, 6)``:
    ``[f; tau]`` exerted ON the robot's base link BY the mounting (the vehicle, the platform), in the base frame,
    about the base origin; the load on the mounting is its opposite."""
    torques: np.ndarray
    joint_wrenches: np.ndarray
    mounting_wrench: np.ndarray


def _floating(robot, what):
    """Refuse a robot without a floating base, saying how to give it one."""
    if not robot.has_floating_base:
        raise ModelError(f"{what}: robot '{robot.name}' has a fixed base; load it with "
                         "rd.load_urdf(..., floating_base=True) (or give its URDF a floating root joint)")


def _part(robot, x, name, entries, batch):
    """``x`` as float64 ``(len(entries),)`` or ``batch + (len(entries),)``: the base's or the joints' part of a
    state, ``entries`` the names of its coordinates."""
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise StateError(f"{name} is not an array of numbers ({exc})") from None
    size = len(entries)
    if x.shape not in ((size,), batch + (size,)):
        raise StateError(f"{name} has shape {x.shape}; robot '{robot.name}' needs ({size},)"
                         + (f" or {batch + (size,)}" if batch else f" or (N, {size})") + f": {', '.join(entries)}")
    return x


def free_floating_inverse_dynamics(robot, q, v, qdd_joints, *, gravity=None, external_wrenches=None, data=None,
                                   drive=True):
    """Khalil's inverse model of a robot with a free-floating base (Sec. 7.2, eqs. 86-87, recursively 89-99): the
    joints follow ``qdd_joints``, no wrench acts on the base but gravity and ``external_wrenches``; returns the
    base's acceleration, the joint torques and the joint wrenches.

    ``q`` ``(nq,)``, ``v`` ``(nv,)``: the full state (base pose ``[x y z qx qy qz qw]`` and twist in the base frame
    first); ``qdd_joints`` ``(nv - 6,)``, the joints' accelerations in ``robot.joint_names`` order; one state or a
    batch. ``gravity`` (world frame, default ``(0, 0, -9.81)``; a space robot: ``(0, 0, 0)``), ``external_wrenches``
    as in :func:`rne_dynamics.inverse_dynamics`. ``drive``: by default the torques are the drives' and include
    each joint's rotor inertia and friction (the URDF's ``<dynamics damping friction>``, :meth:`Robot.with_drive`;
    the rotor inertia also changes how the base reacts), as :func:`rne_dynamics.inverse_dynamics`; ``False``: the
    rigid-body terms only (Pinocchio's ``aba`` and ``rnea``). Returns a :class:`FreeFloatingResult`;
    ``base_acceleration`` is ``d v[:6] / dt``. Uses: how a space robot's or a drone's base reacts to arm motion, arm
    motions that disturb the base least. By :func:`rne_dynamics.hybrid_dynamics` with the base's force known (O(n)).
    """
    known, zero = _free_base(robot)
    batch = np.shape(q)[:-1]  # hybrid_dynamics checks q and v
    qdd_joints = _part(robot, qdd_joints, "qdd_joints", robot.v_names[6:], batch)
    if batch or known is None:
        qdd = np.zeros(batch + (robot.nv,))
        qdd[..., 6:] = qdd_joints
        result = hybrid_dynamics(robot, q, v, qdd, np.zeros_like(qdd), known_acceleration=np.arange(robot.nv) >= 6,
                                 gravity=gravity, external_wrenches=external_wrenches, data=data, drive=drive)
    else:  # one state: the base's known forces (zero) and the mask made once per robot
        qdd = np.zeros(robot.nv)
        qdd[6:] = qdd_joints
        result = HYBRID.run(robot, data, (q, v, qdd, zero), gravity, external_wrenches, extras=(known,),
                            drive=drive)
    return FreeFloatingResult(result.accelerations[..., :6], result.torques[..., 6:], result.joint_wrenches)


def _free_base(robot):
    """``(known, zero)`` of a floating-base robot, made once: the mask of :func:`free_floating_inverse_dynamics`
    (the joints' accelerations known, the base's forces) and the forces ``(nv,)`` all zero; ``known`` None when the
    articulated-body pass does not apply (a mimic joint: :func:`hybrid_dynamics` solves it partitioned)."""
    _floating(robot, "free_floating_inverse_dynamics")
    return robot.engines.derived(_free_base_mask, robot)


def _free_base_mask(robot):
    known = np.arange(robot.nv) >= 6
    return known if recursive(robot, known) else None, np.zeros(robot.nv)


def mounted_inverse_dynamics(robot, base_pose, base_twist, base_acceleration, q, qd, qdd, *, gravity=None,
                             external_wrenches=None, data=None, drive=True):
    """Inverse dynamics of a robot mounted on a base whose motion is given (a mobile manipulator, an arm on a ship or
    a vehicle): joint torques, joint wrenches and the mounting wrench.

    The robot has a floating base (``rd.load_urdf(..., floating_base=True)``): its root link is the part bolted to
    the moving base, and its mass counts in the mounting wrench. ``base_pose`` ``(7,)``: ``[x y z qx qy qz qw]`` of
    the base frame in the world (unit quaternion, scalar last); ``base_twist`` ``(6,)``: ``[v; w]``, the base
    origin's velocity and the angular velocity, both in the base frame (``nav_msgs/Odometry``'s twist);
    ``base_acceleration`` ``(6,)``: the time derivative of ``base_twist`` (from an accelerometer's classical
    acceleration ``a_c`` of the base origin, in the base frame: ``a_c - w x v`` and the angular acceleration).
    ``q``, ``qd``, ``qdd``: the joints only, ``robot.joint_names`` order (``nq - 7`` and ``nv - 6`` entries). One
    state or a batch; base and joints broadcast against each other. ``gravity``, ``external_wrenches``: as
    :func:`rne_dynamics.inverse_dynamics`. ``drive``: by default the joint torques are the drives' and include each
    joint's rotor inertia and friction (the URDF's ``<dynamics damping friction>``, :meth:`Robot.with_drive`), as
    :func:`rne_dynamics.inverse_dynamics`; ``False``: the rigid-body terms only (Pinocchio's ``rnea``). The mounting
    wrench is the same either way (no drive acts on the base). Returns a :class:`MountedInverseDynamicsResult`.

    Floating-base inverse dynamics (Khalil eq. 83 with the base's acceleration given; Featherstone's RNEA from a
    moving base): ``torques`` of the full state is ``[mounting_wrench; joint torques]``.
    """
    _floating(robot, "mounted_inverse_dynamics")
    parts = [np.asarray(x, dtype=float) if isinstance(x, (list, tuple)) else x for x in
             (base_pose, base_twist, base_acceleration, q, qd, qdd)]
    shapes = [np.shape(x) for x in parts]
    if any(len(s) not in (1, 2) for s in shapes):
        raise StateError("mounted_inverse_dynamics: each argument is one state (1-D) or a batch (2-D), got shapes "
                         f"{shapes}")
    batch = max((s[:-1] for s in shapes), key=len)
    entries = (robot.q_names[:7], robot.v_names[:6], robot.v_names[:6], robot.q_names[7:], robot.v_names[6:],
               robot.v_names[6:])
    names = ("base_pose", "base_twist", "base_acceleration", "q", "qd", "qdd")
    base_pose, base_twist, base_acceleration, q, qd, qdd = (
        np.broadcast_to(_part(robot, x, name, e, batch), batch + (len(e),))
        for x, name, e in zip(parts, names, entries))
    full = inverse_dynamics(robot, np.concatenate([base_pose, q], axis=-1), np.concatenate([base_twist, qd], axis=-1),
                            np.concatenate([base_acceleration, qdd], axis=-1), gravity=gravity,
                            external_wrenches=external_wrenches, data=data, drive=drive)
    return MountedInverseDynamicsResult(full.torques[..., 6:], full.joint_wrenches, full.torques[..., :6])
