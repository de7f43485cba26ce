"""Checking and shaping the arguments of the dynamics calls: one state ``(dof,)`` or a batch ``(N, dof)``."""
import math

import numpy as np

from .._jit import kernel
from ..errors import StateError
from ..model.robot import Robot

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


_FLOAT64 = np.dtype(np.float64)


def _floats(value, name):
    """``value`` as a float64 array; text, ragged lists and other non-numbers raise a :class:`StateError`."""
    try:
        x = np.ascontiguousarray(value, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise StateError(f"{name} is not an array of numbers ({exc})") from None
    return x if x.flags.writeable else x.copy()  # one compiled kernel: numba compiles read-only arrays apart


def states(robot, finite=True, **arrays):
    """The named joint-space arrays as float64, all ``(dof,)`` or all ``(N, dof)``, finite.

    Returns the arrays in the order given; a mismatch names the argument and the shapes. This runs on every call,
    so the common case costs a few attribute reads per array; the detailed checks run only on failure.
    ``finite=False`` leaves finiteness to the kernel, which reports it; then :func:`not_finite` names the culprit.
    """
    if not isinstance(robot, Robot):
        raise StateError(f"the first argument must be an rne_dynamics Robot (from rd.load_urdf or rd.load_dh), "
                         f"got {type(robot).__name__}")
    out = []
    for name, x in arrays.items():
        if not (type(x) is np.ndarray and x.dtype is _FLOAT64 and x.flags.carray):  # else taken as it is
            x = _floats(x, name)
        out.append(x)
    shape = out[0].shape
    if len(shape) not in (1, 2) or shape[-1] != robot.dof:
        _explain(robot, arrays)
    for x in out:
        if x.shape != shape or (finite and not all_finite(x)):
            _explain(robot, arrays)
    return out


@kernel
def all_finite(x):
    """No NaN and no inf in ``x``; numpy's checks cost microseconds on a few numbers, this does not."""
    for value in x.flat:
        if not math.isfinite(value):
            return False
    return True


def not_finite(robot, what, **arrays):
    """The error for a kernel that found a NaN or inf: the input that holds it (argument, joint, state), or else
    an overflow of ``what``, the results."""
    _explain(robot, arrays)
    return overflow(what)


def overflow(what):
    """The error for results that are not finite although every input is: magnitudes beyond float64."""
    return StateError(f"{what} are not finite although every input is: the inputs are too large (float64 overflow)")


def _explain(robot, arrays):
    """Raise the StateError that names the argument, joint and state at fault; return if there is none."""
    shape = None
    for name, value in arrays.items():
        x = _floats(value, name)
        if x.ndim not in (1, 2) or x.shape[-1] != robot.dof:
            raise StateError(f"{name} has shape {x.shape}; robot '{robot.name}' needs ({robot.dof},) or "
                             f"(N, {robot.dof}) (joints {', '.join(robot.joint_names)})")
        if shape is not None and x.shape != shape:
            raise StateError(f"{name} has shape {x.shape} but {next(iter(arrays))} has {shape}")
        if not np.isfinite(x).all():
            bad = np.argwhere(~np.isfinite(x))[0]
            raise StateError(f"{name} is not finite at joint '{robot.joint_names[bad[-1]]}'"
                             + (f" (state {bad[0]})" if x.ndim == 2 else "") + f": {x[tuple(bad)]}")
        shape = x.shape


_DEFAULT_GRAVITY = np.array(DEFAULT_GRAVITY)  # writable, like a gravity the caller passes: numba compiles per flag


def gravity_vector(gravity):
    """The gravity argument as a finite 3-vector (root-link frame, m/s^2)."""
    if gravity is None:
        return _DEFAULT_GRAVITY
    g = _floats(gravity, "gravity")
    if g.shape != (3,) or not np.isfinite(g).all():
        raise StateError(f"gravity must be 3 finite numbers (m/s^2, root-link frame), got {gravity!r}")
    return g


NO_WRENCHES = np.zeros((1, 0, 6))  # one empty row set, shared by every state


def body_wrenches(robot, external_wrenches, batch):
    """External wrenches ``{link: [f; n]}`` (link frame, about the link origin) as body-frame wrenches.

    Returns ``(batch, nb, 6)`` (``batch`` 1 for a single state), or :data:`NO_WRENCHES` when there are none.
    A wrench on a link fixed to the root acts on the fixed base and changes no joint load.
    """
    if not external_wrenches:
        return NO_WRENCHES
    if not hasattr(external_wrenches, "items"):
        raise StateError("external_wrenches must be a mapping {link_name: [fx, fy, fz, tx, ty, tz]}")
    out = np.zeros((batch, len(robot.bodies), 6))
    for link, wrench in external_wrenches.items():
        if link not in robot.link_frames:
            raise StateError(f"external_wrenches: robot '{robot.name}' has no link '{link}'")
        w = _floats(wrench, f"external_wrenches['{link}']")
        if w.shape not in ((6,), (batch, 6)) or not np.isfinite(w).all():
            raise StateError(f"external_wrenches['{link}'] must be 6 finite numbers [fx fy fz tx ty tz] "
                             f"(or ({batch}, 6) for a batch), got shape {w.shape}")
        body, R, p = robot.link_frames[link]
        if body < 0:
            continue
        f = w[..., :3] @ R.T
        out[:, body, :3] += f
        out[:, body, 3:] += w[..., 3:] @ R.T + np.cross(p, f)
    return out
