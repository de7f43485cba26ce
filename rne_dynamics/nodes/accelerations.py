"""The joint accelerations the inverse node answers a joint state with (parameter ``acceleration_source``): zero, or
the low-pass filtered derivative of the measured joint velocity (:class:`VelocityDerivative`, which also filters a
moving base's twist and the payload estimator's velocities).
"""
import math

import numpy as np

from .messages import stamp_seconds
from .parameters import DOUBLE, STRING, Spec

ACCELERATION_SOURCES = ("zero", "differentiate")

SOURCE = Spec("acceleration_source", "zero", STRING, "joint accelerations: zero, or differentiate (the low-pass "
              "filtered derivative of the measured velocity)", constraints="zero | differentiate")
CUTOFF = Spec("acceleration_cutoff_hz", 20.0, DOUBLE, "cutoff frequency of the velocity-derivative filter (Hz)",
              0.01, 1.0e4)
PARAMETERS = (SOURCE, CUTOFF)


def check_parameter(name, value):
    if name == "acceleration_source" and value not in ACCELERATION_SOURCES:
        raise ValueError(f"acceleration_source must be one of {', '.join(ACCELERATION_SOURCES)}, got '{value}'")


class VelocityDerivative:
    """Joint accelerations as the low-pass filtered derivative of the measured joint velocity.

    Per message, with ``dt`` the difference of the stamps and ``T = 1 / (2 pi cutoff)``:
    ``qdd <- qdd + dt / (dt + T) * ((qd - qd_prev) / dt - qdd)`` (a first-order filter, backward Euler).
    The estimate starts at zero; a message that is not newer than the last, or whose derivative overflows, leaves
    it unchanged.
    """

    def __init__(self, dof, cutoff_hz):
        self.time_constant = 1.0 / (2.0 * math.pi * cutoff_hz)
        self.qdd, self.qd = np.zeros(dof), np.zeros(dof)
        self.t = None

    def update(self, t, qd):
        """Take a measurement at ``t`` (s); the reason it was not used, or None."""
        if self.t is not None:
            dt = t - self.t
            if dt <= 0.0:
                return "needs increasing stamps"
            with np.errstate(over="ignore", invalid="ignore"):  # checked on the next line
                qdd = self.qdd + dt / (dt + self.time_constant) * ((qd - self.qd) / dt - self.qdd)
            if not np.isfinite(qdd).all():
                return "the derivative of the velocity is not finite"
            self.qdd = qdd
        self.t = t
        np.copyto(self.qd, qd)  # qd is the merged joint state, which the next message overwrites
        return None


class JointAccelerations:
    """The accelerations of ``node``'s joint states, by its parameters ``acceleration_source`` and
    ``acceleration_cutoff_hz``."""

    def __init__(self, node):
        self.node = node
        self.derivative = None  # a VelocityDerivative while acceleration_source is differentiate

    def configure(self, model):
        """Start again (a new filter) for ``model``'s input joints."""
        parameter = self.node.get_parameter
        self.derivative = (VelocityDerivative(len(model.input_names), parameter("acceleration_cutoff_hz").value)
                           if model is not None and parameter("acceleration_source").value == "differentiate"
                           else None)

    def of(self, model, stamp, qd):
        """The accelerations of a joint state with ``stamp`` and velocities ``qd``, and a reason to warn about (a
        stamp that did not increase: the last estimate is kept) or None."""
        if self.derivative is None:
            return model.input_zeros, None
        unused = self.derivative.update(stamp_seconds(stamp), qd)
        if unused:
            unused = (f"/joint_states: acceleration_source 'differentiate' {unused}; keeping the last acceleration "
                      "estimate")
        return self.derivative.qdd, unused
