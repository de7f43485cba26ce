"""Checking and shaping the arguments of the dynamics calls: one state or a batch ``(N, ...)``; configurations ``q``
have ``nq`` entries, every other joint-space array (``qd``/``v``, ``qdd``, ``tau``, ...) ``nv``."""
import numpy as np

from .._compile import called_from_python
from .._jit import NOT_UNIT, OVERFLOW, SINGULAR, finite_check, is_unit, kernel
from .._trace import traceable
from .._tuning import QUATERNION_TOLERANCE
from ..errors import SingularMassMatrixError, StateError
from ..model.data import memory
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


def compiled_form(x):
    """Whether ``x`` is an array as the compiled kernels take it, with no conversion: a float64 ndarray, C-contiguous,
    aligned and writeable (numba compiles read-only arrays apart)."""
    return x.__class__ is np.ndarray and x.dtype is _FLOAT64 and x.flags.carray


def one_state_arrays(arrays):
    """Whether every one of ``arrays`` is one state's vector in :func:`compiled_form`: the types the generic entries
    are compiled for, so that numba's dispatch takes them (a wrong length is the entry's status to report)."""
    for x in arrays:
        if not (x.__class__ is np.ndarray and x.ndim == 1 and compiled_form(x)):
            return False
    return True


#: The names under which the calls take configurations (``nq`` entries); every other joint-space argument has ``nv``.
CONFIGURATIONS = ("q", "q0", "q1")


def size(robot, name):
    """Entries per state of the argument ``name``: ``nq`` for a configuration, else ``nv``."""
    return robot.nq if name in CONFIGURATIONS else robot.nv


def states(robot, finite=True, unit_quaternions=True, **arrays):
    """The named joint-space arrays as float64, all one state or all ``N`` states, finite, with unit quaternions.

    Returns the arrays in the order given; a mismatch names the argument and the shapes. This runs on every call,
    so the common case costs a few attribute reads per array; the detailed checks run only on failure.
    ``finite=False`` leaves finiteness to the kernel, which reports it; then :func:`_explain` names the culprit.
    """
    if not isinstance(robot, Robot):
        raise StateError(f"the first argument must be an rne_dynamics Robot (from rd.load_urdf or rd.load_dh), "
                         f"got {type(robot).__name__}")
    out = []
    batch = None
    nq, nv = robot.nq, robot.nv
    for name, x in arrays.items():  # one pass, the common case in a few attribute reads per array
        if not compiled_form(x):  # else taken as it is
            x = _floats(x, name)
        shape = x.shape
        if batch is None:
            batch = shape[:-1]
            if len(batch) > 1 or not shape:
                _explain(robot, arrays)
        elif shape[:-1] != batch:
            _explain(robot, arrays)
        if shape[-1] != (nq if name in CONFIGURATIONS else nv) or (finite and not all_finite_from_python(x)):
            _explain(robot, arrays)
        out.append(x)
    if unit_quaternions and robot.has_quaternions:
        for name, x in zip(arrays, out):
            if name in CONFIGURATIONS and not unit_norms(x, robot.quaternions, QUATERNION_TOLERANCE):
                check_quaternions(robot, name, x)
    return out


@called_from_python
@kernel
def unit_norms(q, starts, tolerance):
    """Every quaternion of ``q`` (one state or a batch; ``q[starts[k] : starts[k] + 4]``) has a norm within
    ``tolerance`` of 1 (numpy's norms cost microseconds on a few numbers)."""
    rows = q.reshape(-1, q.shape[-1])
    for n in range(rows.shape[0]):
        for s in starts:
            if not is_unit(rows[n, s], rows[n, s + 1], rows[n, s + 2], rows[n, s + 3], tolerance):
                return False
    return True


def check_quaternions(robot, name, q):
    """Refuse a configuration whose quaternions are not unit, naming the joint and state (a NaN is reported as not
    finite by the caller)."""
    for start in robot.quaternions:
        for n, value in enumerate(q[..., start:start + 4].reshape(-1, 4)):
            if not traceable(is_unit)(*value, QUATERNION_TOLERANCE):
                where = f" (state {n})" if q.ndim == 2 else ""
                raise StateError(f"{name}{where}: the quaternion of joint '{robot.q_names[start].rsplit('.', 1)[0]}' "
                                 f"[qx qy qz qw] = {value.tolist()} has norm {np.linalg.norm(value):.12g}; it must be "
                                 "a unit quaternion (rd.normalize(robot, q) makes it one)")


@finite_check
def all_finite(x):
    """No NaN and no inf in ``x``; numpy's checks cost microseconds on a few numbers, this does not. ``0 x`` is 0
    for a finite ``x`` and NaN for an inf or a NaN: one sum without a branch per number, which the compiler may
    reorder into SIMD lanes (a 50 x 50 mass matrix: 0.17 us instead of 1.4)."""
    total = 0.0
    for value in x.flat:
        total += 0.0 * value
    return total == 0.0


#: :func:`all_finite` for Python callers (kernels call it compiled into them).
all_finite_from_python = called_from_python(all_finite)


def overflow(what):
    """The error for results that are not finite although every input is: magnitudes beyond float64."""
    return StateError(f"{what} are not finite although every input is: the inputs are too large (float64 overflow)")


def _explain(robot, arrays):
    """Raise the StateError that names the argument, joint and state at fault; return if there is none."""
    first, first_shape = None, None
    for name, value in arrays.items():
        x = _floats(value, name)
        n = size(robot, name)
        configuration = name in CONFIGURATIONS
        if x.ndim not in (1, 2) or x.shape[-1] != n:
            kind = "nq position" if configuration else "nv velocity"
            other = (f"; robot.nq = {robot.nq} (q) and robot.nv = {robot.nv} (v, qdd, tau) differ: "
                     f"{name} is a {'configuration' if configuration else 'tangent vector'} of {n}"
                     if robot.nq != robot.nv else "")
            raise StateError(f"{name} has shape {x.shape}; robot '{robot.name}' needs ({n},) or (N, {n}), its "
                             f"{n} {kind} coordinates ({', '.join(robot.q_names if configuration else robot.v_names)})"
                             + other)
        if first is not None and x.shape[:-1] != first_shape[:-1]:
            raise StateError(f"{name} has shape {x.shape} but {first} has {first_shape}")
        if not np.isfinite(x).all():
            bad = np.argwhere(~np.isfinite(x))[0]
            names = robot.q_names if configuration else robot.v_names
            raise StateError(f"{name} is not finite at joint '{names[bad[-1]]}'"
                             + (f" (state {bad[0]})" if x.ndim == 2 else "") + f": {x[tuple(bad)]}")
        if first is None:
            first, first_shape = name, x.shape


def status_error(robot, status, arrays, what, where):
    """The error for an engine's status code on the state ``arrays`` (by name, the configuration first): the argument,
    joint and state at fault, a coordinate that drives no mass (:func:`singular`), or an overflow of ``what``."""
    if status >= SINGULAR:
        return singular(robot, status - SINGULAR, where)
    if status == NOT_UNIT:
        check_quaternions(robot, *next(iter(arrays.items())))
    elif status != OVERFLOW:
        _explain(robot, arrays)
    return overflow(what + where)


def singular(robot, k, where=""):
    """The error for velocity coordinate ``k`` driving no mass."""
    coordinate = robot.v_names[k]
    joint = next(b.joint for b in robot.bodies if not b.mimic and b.idx_v <= k < b.idx_v + b.nv)
    if joint == robot.base_joint:
        remedy = "give the floating base's links mass and rotational inertia"
    else:
        remedy = (f"give the links it moves mass, set its rotor inertia with robot.with_drive(armature={{'{joint}': "
                  f"...}}), or make it a fixed joint")
    return SingularMassMatrixError(
        f"forward dynamics of robot '{robot.name}' is undefined{where}: joint '{coordinate}' drives no mass and no "
        f"rotor inertia (its mass-matrix pivot is zero); {remedy}")


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


def body_wrenches(robot, external_wrenches, batch, data=None):
    """External wrenches ``{link: [f; n]}`` (link frame, about the link origin) as body-frame wrenches.

    Returns ``(batch, nb, 6)`` (``batch`` 1 for a single state; in ``data`` if given), or :data:`NO_WRENCHES` when
    there are none.
    A wrench on a link fixed to the root acts on the fixed base and changes no joint load.
    """
    if not external_wrenches:
        return NO_WRENCHES
    if not hasattr(external_wrenches, "items"):
        raise StateError("external_wrenches must be a mapping {link_name: [fx, fy, fz, tx, ty, tz]}")
    out = memory(robot, data, "external_wrenches", (batch, len(robot.bodies), 6))
    out[...] = 0.0
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
        n = out[:, body, 3:]
        n += w[..., 3:] @ R.T
        for k in range(3):  # + p x f, by components: np.cross costs kilobytes of temporaries
            n[:, k] += p[(k + 1) % 3] * f[..., (k + 2) % 3] - p[(k + 2) % 3] * f[..., (k + 1) % 3]
    return out

