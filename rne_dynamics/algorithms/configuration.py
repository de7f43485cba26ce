"""The configuration space's operations, checked: ``neutral``, ``integrate`` (``q ⊕ v dt``), ``difference``
(``q1 ⊖ q0``), ``random_configuration`` and ``normalize``, Pinocchio's semantics on each joint's group (the maths
and the joint-by-joint table are in :mod:`rne_dynamics.model.configuration`)."""
import math

import numpy as np

from ..errors import StateError
from ..model.configuration import integrate_rows, log_quaternion, log_se2, log_se3, neutral_configuration, \
    quaternion_conjugate, quaternion_multiply
from ..model.joints import REAL_LINE, SE2, SE3, SO3, type_of_code
from ..model.data import memory, results
from .inputs import states


def neutral(robot, *, data=None):
    """The neutral configuration ``(nq,)``: every coordinate 0, identity quaternions (``[0, 0, 0, 1]``); Pinocchio's
    ``pin.neutral``. ``data``: a ``robot.data()`` to write it in."""
    return neutral_configuration(robot, memory(robot, data, "neutral", (robot.nq,)))


def integrate(robot, q, v, dt=1.0, *, data=None):
    """``q ⊕ v dt``: the configuration reached from ``q`` moving with the velocity ``v`` (child frames) held for
    ``dt`` seconds: revolute and prismatic coordinates add, free-flyer, spherical and planar joints move by their
    group's exponential applied on the right (Pinocchio's ``pin.integrate``). One state (``q`` ``(nq,)``, ``v``
    ``(nv,)``) or a batch; returns ``(…, nq)``, quaternions normalised. ``data``: a ``robot.data()`` to write in."""
    q, v = states(robot, q=q, v=v)
    try:
        dt = float(dt)
    except (TypeError, ValueError):
        raise StateError(f"dt must be a number, got {dt!r}") from None
    if not math.isfinite(dt):
        raise StateError(f"dt must be finite, got {dt}")
    (out,) = results(robot, data, "integrate", q, (robot.nq,))
    integrate_rows(robot.fdata, robot.idata, q.reshape(-1, robot.nq), v.reshape(-1, robot.nv), dt,
                   out.reshape(-1, robot.nq))
    return out


def difference(robot, q0, q1, *, data=None):
    """``q1 ⊖ q0``: the velocity ``v`` (child frames) with ``integrate(robot, q0, v) == q1`` (Pinocchio's
    ``pin.difference``): ``q1 - q0`` for revolute and prismatic coordinates (angles are not wrapped), the SE(3) and
    SO(3) logarithms of ``q0^-1 q1`` (rotation angle in ``[0, pi]``) for free-flyer and spherical joints, SE(2)'s for
    planar joints. One state (``(nq,)`` each) or a batch; returns ``(…, nv)``. ``data``: a ``robot.data()`` to write
    the result in (the logarithms of free-flyer, spherical and planar joints still make temporary arrays)."""
    q0, q1 = states(robot, q0=q0, q1=q1)
    (out,) = results(robot, data, "difference", q0, (robot.nv,))
    for b in robot.bodies:
        if b.mimic:
            continue
        a, z = q0[..., b.idx_q:b.idx_q + b.nq], q1[..., b.idx_q:b.idx_q + b.nq]
        o = out[..., b.idx_v:b.idx_v + b.nv]
        group = type_of_code(b.code).group
        if group == REAL_LINE:
            o[...] = z - a
        elif group == SE3:
            o[...] = log_se3(a, z)
        elif group == SO3:
            o[...] = log_quaternion(quaternion_multiply(quaternion_conjugate(a), z))[0]
        elif group == SE2:
            o[...] = log_se2(a, z)
    return out


def random_configuration(robot, rng=None, size=None):
    """A random configuration ``(nq,)`` (``(*size, nq)`` for ``size``), uniform within ``robot.position_limits``
    where a limit is finite, else within ``±pi`` for an angle and ``±1`` m for a position (a one-sided limit:
    ``2 pi`` or ``2`` m from it); quaternions uniform on the rotations. ``rng``: a ``numpy.random.Generator`` or a
    seed."""
    rng = np.random.default_rng(rng)
    shape = () if size is None else ((size,) if np.ndim(size) == 0 else tuple(size))
    lower, upper = robot.position_limits.T
    span = np.ones(robot.nq)  # half-range of an unlimited coordinate: 1 m, or pi for an angle
    for b in robot.bodies:
        for k in () if b.mimic else type_of_code(b.code).angles:
            span[b.idx_q + k] = math.pi
    has_lower, has_upper = np.isfinite(lower), np.isfinite(upper)
    lo = np.where(has_lower, lower, np.where(has_upper, upper - 2 * span, -span))
    hi = np.where(has_upper, upper, np.where(has_lower, lower + 2 * span, span))
    q = rng.uniform(lo, hi, size=shape + (robot.nq,))
    for s in robot.quaternions:
        x = rng.standard_normal(shape + (4,))
        while True:  # a normal 4-vector's direction is uniform on the sphere: uniform rotations
            norm = np.linalg.norm(x, axis=-1, keepdims=True)
            if (norm > 1e-6).all():
                break
            x = np.where(norm > 1e-6, x, rng.standard_normal(shape + (4,)))
        q[..., s:s + 4] = x / norm
    return q


def normalize(robot, q):
    """``q`` with every quaternion (free-flyer, spherical) scaled to unit norm; ``(…, nq)``. A quaternion that is
    zero or not finite has no direction: a :class:`~rne_dynamics.errors.StateError` names its joint."""
    (q,) = states(robot, finite=False, unit_quaternions=False, q=q)
    q = q.copy()
    for s in robot.quaternions:
        x = q[..., s:s + 4]
        scale = np.abs(x).max(axis=-1, keepdims=True)  # first, so that components like 1e200 cannot overflow
        bad = np.flatnonzero(~np.isfinite(scale) | (scale == 0.0))
        if bad.size:
            value = x.reshape(-1, 4)[bad[0]]
            problem = "zero" if np.all(value == 0.0) else "not finite"
            where = f" (state {bad[0]})" if q.ndim == 2 else ""
            joint = robot.q_names[s].rsplit('.', 1)[0]
            raise StateError(f"q{where}: the quaternion of joint '{joint}' [qx qy qz qw] = "
                             f"{value.tolist()} is {problem}; it gives no rotation to normalise")
        x /= scale
        x /= np.linalg.norm(x, axis=-1, keepdims=True)
    return q
