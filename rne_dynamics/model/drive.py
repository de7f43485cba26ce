"""The drive layer: everything between a rigid joint and its actuator, per joint of ``robot.joint_names``.

- ``armature`` (rotor inertia reflected to the joint, kg m^2 or kg), ``damping`` (viscous friction, N m s/rad),
  ``friction`` (Coulomb, N m), ``friction_offset`` (a constant torque, N m, either sign: the drive's torque-sensor
  or current offset) and ``coulomb_velocity`` (rad/s): terms of the rigid joint's torque,
  ``tau = tau_rigid + armature qdd + damping qd + friction s(qd) + friction_offset`` with the Coulomb shape
  ``s(qd) = tanh(qd / coulomb_velocity)`` (the smooth Coulomb law of Gaz, Cognetti, Oliva, Robuffo Giordano &
  De Luca, IEEE RA-L 2019, in its tanh form: continuous through ``qd = 0``, so simulation has no switch there) or
  ``sign(qd)`` where ``coulomb_velocity`` is 0 (the default: the URDF's ``friction``). The algorithms take them
  from the compiled drive steps below (the rotor inertia also enters the articulated-body pivots); a call with
  ``drive=False`` runs on the rigid-body model, whose drive terms are zero
  (:attr:`Robot.rigid_body_fdata <rne_dynamics.model.robot.Robot.rigid_body_fdata>`).
- ``stiffness`` ``K`` (N m/rad, N/m), ``spring_damping`` ``D`` (N m s/rad), ``rest_offset`` ``q0``: a joint with
  ``K > 0`` is elastic. In Khalil's lumped model (:mod:`~rne_dynamics.algorithms.elastic`) its force is
  ``-K (q - q0) - D qd``; in the motor-link model (:mod:`~rne_dynamics.algorithms.flexible`) the spring sits between
  link and motor, ``K (theta - q) + D (thetad - qd)``. ``K = 0`` (the default): rigid.
- ``motor_inertia`` (kg m^2, on the motor side) and ``gear_ratio`` ``n``: the motor-link model's motor inertia
  reflected to the joint, ``B = n^2 motor_inertia``; its motor positions and torques are joint-side
  (``theta`` = motor angle / n, ``tau_m`` = n x motor torque).

URDF has no stiffness tag: nothing here is read from a URDF but ``damping`` and ``friction``. Values
come from :meth:`Robot.with_drive <rne_dynamics.model.robot.Robot.with_drive>`, from a YAML file
(:func:`load_drive`) and from the nodes' parameters.
"""
import math
from dataclasses import dataclass

import numpy as np
import yaml

from .._jit import arithmetic_kernel, helper
from ..errors import ModelError, yaml_problem

#: The drive parameters, in the order of :meth:`Robot.with_drive`; the rigid joint's three first.
RIGID = ("armature", "damping", "friction", "friction_offset", "coulomb_velocity")
ELASTIC = ("stiffness", "spring_damping", "rest_offset", "motor_inertia", "gear_ratio")
PARAMETERS = RIGID + ELASTIC
#: The parameters that may be negative.
SIGNED = ("friction_offset", "rest_offset")
#: Values of a joint nobody described: rigid, direct drive.
DEFAULTS = {"stiffness": 0.0, "spring_damping": 0.0, "rest_offset": 0.0, "motor_inertia": 0.0, "gear_ratio": 1.0}


@helper
def coulomb_shape(m, c, qd_c):
    """``s(qd)`` of column ``c``: ``tanh(qd / coulomb_velocity)``, or ``sign(qd)`` where ``coulomb_velocity`` is 0
    (a branch on the model, never on the velocity)."""
    if m.coulomb_velocity[c] > 0.0:
        return math.tanh(qd_c / m.coulomb_velocity[c])
    return np.sign(qd_c)


@helper
def coulomb_slope(m, c, qd_c):
    """``d s / d qd`` of column ``c``: ``(1 - tanh^2) / coulomb_velocity``; 0 for ``sign`` (taken as 0 at 0)."""
    if m.coulomb_velocity[c] > 0.0:
        return (1.0 - math.tanh(qd_c / m.coulomb_velocity[c]) ** 2) / m.coulomb_velocity[c]
    return 0.0


@helper
def dissipative_torque(m, c, qd_c):
    """The dissipative part of column ``c``'s friction: ``damping qd + friction s(qd)`` (its power ``>= 0``)."""
    return m.damping[c] * qd_c + m.friction[c] * coulomb_shape(m, c, qd_c)


@helper
def drive_friction(m, c, qd_c):
    """Friction of motion column ``c`` at velocity ``qd_c``: ``damping qd + friction s(qd) + friction_offset``."""
    return dissipative_torque(m, c, qd_c) + m.friction_offset[c]


@helper
def dissipative_torques_add(m, qd, tau):
    """``tau += damping qd + friction s(qd)`` of every column: added to a torque, it cancels what forward dynamics
    subtracts, which leaves the conservative motion (:mod:`~rne_dynamics.algorithms.simulate`)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        tau[k] += dissipative_torque(m, c, qd[k])


@helper
def dissipation_per_coordinate(m, damping, friction, slip):
    """Each velocity coordinate's viscous ``damping``, Coulomb ``friction`` and its ``coulomb_velocity`` (``slip``;
    0: ``sign``), from its drive's column (zero on the base's and mimic columns). Returns whether any is nonzero:
    a model without them has no dissipative drive term."""
    dissipative = False
    for k in range(m.nv):
        damping[k] = 0.0
        friction[k] = 0.0
        slip[k] = 0.0
    for c in range(m.ncol):
        k = m.col_v[c]
        if m.damping[c] > 0.0 or m.friction[c] > 0.0:
            dissipative = True
            damping[k] += m.damping[c]
            friction[k] += m.friction[c]
            slip[k] = m.coulomb_velocity[c]
    return dissipative


@helper
def drive_torque(m, c, qd_c, qdd_c):
    """The torque of column ``c``'s drive beyond the rigid body's: ``armature qdd`` + :func:`drive_friction`."""
    return m.armature[c] * qdd_c + drive_friction(m, c, qd_c)


@arithmetic_kernel
def drive_torques_add(m, qd, qdd, tau):
    """``tau += armature qdd + damping qd + friction s(qd) + friction_offset``, :func:`drive_torque` of every column
    (zero on the base's and mimic columns)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        tau[k] += drive_torque(m, c, qd[k], qdd[k])


@arithmetic_kernel
def drive_rates_add(m, rate, rate_of_rate, out):
    """A time derivative of the drive torques, ``out += armature d/dt(qdd) + damping d/dt(qd)`` with ``rate`` the
    derivative of ``qd`` and ``rate_of_rate`` that of ``qdd`` (``qdd, qddd`` for ``d tau / dt``; ``qddd, qdddd``
    for ``d2 tau / dt2``). Coulomb friction and the offset are left out: ``sign(qd)`` is constant wherever
    ``qd != 0``; the smooth ``friction tanh(qd / coulomb_velocity)``'s rate is not modelled here (it matters only
    within a few ``coulomb_velocity`` of rest)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        out[k] += m.armature[c] * rate_of_rate[k] + m.damping[c] * rate[k]


@arithmetic_kernel
def drive_jacobians_add(m, qd, dtau_dqd, dtau_dqdd):
    """The drives' share of ``d tau / d qd`` (``damping + friction s'(qd)`` on the diagonal, :func:`coulomb_slope`)
    and of ``d tau / d qdd`` (the rotor inertia: :func:`rotor_inertia_add`)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        dtau_dqd[k, k] += m.damping[c] + m.friction[c] * coulomb_slope(m, c, qd[k])
    rotor_inertia_add(m, dtau_dqdd)


@arithmetic_kernel
def rotor_inertia_add(m, M):
    """``M += diag(armature)``: each rotor's inertia reflected to its joint (zero on the base's and mimic columns)."""
    for c in range(m.ncol):
        M[m.col_v[c], m.col_v[c]] += m.armature[c]


@dataclass(frozen=True, eq=False)
class Transmission:
    """The elastic part of the drives, one array per parameter of :data:`ELASTIC` in ``joint_names`` order."""
    stiffness: np.ndarray
    spring_damping: np.ndarray
    rest_offset: np.ndarray
    motor_inertia: np.ndarray
    gear_ratio: np.ndarray

    @property
    def reflected_motor_inertia(self):
        """``B = gear_ratio^2 motor_inertia``: the motor's inertia seen at the joint."""
        return self.gear_ratio ** 2 * self.motor_inertia

    @classmethod
    def rigid(cls, joints):
        return cls(*(np.full(joints, DEFAULTS[name]) for name in ELASTIC))


def transmission(robot):
    """The robot's :class:`Transmission` (rigid and direct drive when none was set)."""
    return robot.transmission or Transmission.rigid(len(robot.joint_names))


def check(robot, label, values):
    """Refuse a value no drive can have (not finite; negative, or a gear ratio of zero) and an elastic joint of
    several coordinates (a spherical or planar joint). Fixed and mimic joints have no drive (not in ``joint_names``)."""
    ok = np.isfinite(values)
    if label == "gear_ratio":
        ok &= values > 0
    elif label not in SIGNED:
        ok &= values >= 0
    bad = np.flatnonzero(~ok)
    if bad.size:
        need = "finite" if label in SIGNED else "finite and > 0" if label == "gear_ratio" else "finite and >= 0"
        raise ModelError(f"{label} of joint '{robot.joint_names[bad[0]]}' must be {need}, got {values[bad[0]]}")
    if label == "stiffness":
        for name, K, body in zip(robot.joint_names, values, robot.joint_bodies):
            if K > 0 and robot.bodies[body].nv != 1:
                raise ModelError(f"stiffness of joint '{name}': an elastic joint has one coordinate; '{name}' has "
                                 f"{robot.bodies[body].nv}")


def with_transmission(robot, given):
    """``robot``'s transmission with the parameters ``given`` (``{label: array per joint}``, already per joint)."""
    current = transmission(robot)
    values = {name: given.get(name, getattr(current, name)) for name in ELASTIC}
    for label, value in values.items():
        check(robot, label, value)
    return Transmission(**values)


def elastic_joints(robot):
    """Indices into ``joint_names`` of the elastic joints (``stiffness > 0``)."""
    return np.flatnonzero(transmission(robot).stiffness > 0)


def elastic_coordinates(robot):
    """Velocity coordinates of the elastic joints, in ``joint_names`` order."""
    return np.array([robot.bodies[robot.joint_bodies[j]].idx_v for j in elastic_joints(robot)], dtype=np.int64)


def load_drive(robot, path):
    """``robot`` with the drive parameters of the YAML file ``path``: a mapping ``{joint: {parameter: value}}``,
    parameters among :data:`PARAMETERS` (the others of a joint keep their values), e.g.
    ``panda_joint2: {stiffness: 5000.0, motor_inertia: 2.0e-4, gear_ratio: 100.0}``."""
    try:
        with open(path) as stream:
            document = yaml.safe_load(stream)
    except OSError as exc:
        raise ModelError(f"drive file {path}: cannot read it ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"drive file {path}: not valid YAML ({yaml_problem(exc)})") from None
    if not isinstance(document, dict):
        raise ModelError(f"drive file {path}: expected a mapping joint -> {{parameter: value}}")
    given = {}
    for joint, entries in document.items():
        if not isinstance(entries, dict):
            raise ModelError(f"drive file {path}: joint '{joint}' must map to {{parameter: value}}, got {entries!r}")
        for label, value in entries.items():
            if label not in PARAMETERS:
                raise ModelError(f"drive file {path}: joint '{joint}': unknown parameter '{label}' (known: "
                                 f"{', '.join(PARAMETERS)})")
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                raise ModelError(f"drive file {path}: joint '{joint}': {label} must be a number, got {value!r}")
            given.setdefault(label, {})[joint] = float(value)
    return robot.with_drive(**given)
