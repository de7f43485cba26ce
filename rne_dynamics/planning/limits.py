"""Joint limits of a motion (position, velocity, effort) and their check along a sampled motion."""
from dataclasses import dataclass

import numpy as np

from ..errors import StateError

QUANTITIES = ("position", "velocity", "effort")


@dataclass(frozen=True)
class Limits:
    """``position`` ``(nq, 2)`` lower and upper bounds, ``velocity``, ``effort`` and ``acceleration`` ``(nv,)``
    magnitudes; ``inf`` where a joint has none (a URDF gives no acceleration limits)."""
    position: np.ndarray
    velocity: np.ndarray
    effort: np.ndarray
    acceleration: np.ndarray = None

    @classmethod
    def of(cls, robot, position=None, velocity=None, effort=None, acceleration=None):
        """The robot's URDF limits (``robot.position_limits``, ``velocity_limits``, ``effort_limits``; no
        acceleration limits), each replaced where given: an array in ``q``/``v`` order, or a mapping
        ``{joint: value}`` (``(lower, upper)`` for positions) that changes only the joints it names."""
        values = []
        for label, given, current, shape in (("position limits", position, robot.position_limits, (robot.nq, 2)),
                                             ("velocity limits", velocity, robot.velocity_limits, (robot.nv,)),
                                             ("effort limits", effort, robot.effort_limits, (robot.nv,)),
                                             ("acceleration limits", acceleration, np.full(robot.nv, np.inf),
                                              (robot.nv,))):
            out = np.array(current, float)
            if hasattr(given, "items"):
                for name, value in given.items():
                    if name not in robot.joint_names:
                        raise StateError(f"{label}: robot '{robot.name}' has no movable joint '{name}'")
                    out[robot.joint_index(name)] = value
            elif given is not None:
                out = np.array(given, float)
                if out.shape != shape:
                    raise StateError(f"{label}: expected shape {shape}, got {out.shape}")
            values.append(out)
        position, velocity, effort, acceleration = values
        if np.isnan(position).any() or (position[:, 0] > position[:, 1]).any():
            raise StateError(f"position limits: a lower bound above its upper bound or NaN, {position.tolist()}")
        for label, value in (("velocity", velocity), ("effort", effort), ("acceleration", acceleration)):
            if np.isnan(value).any() or (value <= 0).any():
                bad = int(np.flatnonzero(np.isnan(value) | (value <= 0))[0])
                raise StateError(f"{label} limit of '{_name(robot, bad)}' must be > 0, got {value[bad]}")
        return cls(position, velocity, effort, acceleration)

    def scale(self, quantity):
        """The size against which an excess of ``quantity`` is measured: the limit itself for velocity and effort,
        1 (rad or m) for position."""
        return np.ones(len(self.position)) if quantity == "position" else getattr(self, quantity)


@dataclass(frozen=True)
class LimitCheck:
    """The worst excess over the limits along a sampled motion: ``worst`` is the largest excess as a fraction of
    its limit (position: in rad or m), negative when every sample keeps that margin inside; ``quantity``
    (``position``, ``velocity`` or ``effort``), ``joint`` and ``time`` say where; ``excess`` is the same in SI units
    (rad, m, rad/s, m/s, N m, N); ``samples`` is how many samples were checked. ``tolerance`` (a fraction of the
    limit, as ``worst``): an excess up to it is rounding, not a violation (:attr:`violated`)."""
    worst: float
    excess: float
    quantity: str
    joint: str
    time: float
    samples: int
    tolerance: float = 0.0

    @property
    def violated(self):
        """Whether a limit is exceeded beyond the tolerance."""
        return self.worst > self.tolerance

    def __str__(self):
        where = f"worst {self.quantity} of '{self.joint}' at t = {self.time:.4f} s"
        checked = f"{self.samples} samples checked"
        if self.violated:
            return (f"{where}: {self.excess:.3g} over its limit (beyond the tolerance of {self.tolerance:.3g} of the "
                    f"limit; {checked})")
        if self.excess > 0:
            return (f"{where}: at its limit ({self.excess:.3g} over: rounding, within the tolerance of "
                    f"{self.tolerance:.3g} of the limit; {checked})")
        return f"{where}: {-self.excess:.3g} within its limit ({checked})"


def check_limits(robot, limits, times, q, qd, tau, tolerance=0.0):
    """The :class:`LimitCheck` of samples ``q`` ``(N, nq)``, ``qd`` and ``tau`` ``(N, nv)`` at ``times``, an excess
    up to ``tolerance`` (a fraction of the limit) counting as rounding."""
    excesses = {"position": np.maximum(limits.position[:, 0] - q, q - limits.position[:, 1]),
                "velocity": np.abs(qd) - limits.velocity,
                "effort": np.abs(tau) - limits.effort}
    worst = None
    for quantity, excess in excesses.items():
        scale = limits.scale(quantity)
        relative = np.where(np.isfinite(scale), excess / scale, -np.inf)
        sample, joint = np.unravel_index(np.argmax(relative), relative.shape)
        if worst is None or relative[sample, joint] > worst.worst:
            worst = LimitCheck(float(relative[sample, joint]), float(excess[sample, joint]), quantity,
                               _name(robot, joint), float(times[sample]), len(times), tolerance)
    return worst


def _name(robot, index):
    return (robot.q_names if robot.nq == robot.nv else robot.v_names)[index]
