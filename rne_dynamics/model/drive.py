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
import warnings
from dataclasses import dataclass

import numpy as np
import yaml

from .._jit import arithmetic_kernel, helper
from ..errors import ModelError, ModelWarning, yaml_problem

#: The drive parameters, in the order of :meth:`Robot.with_drive`; the rigid joint's three first.
RIGID = ("armature", "damping", "friction", "friction_offset", "coulomb_velocity")
ELASTIC = ("stiffness", "spring_damping", "rest_offset", "motor_inertia", "gear_ratio")
PARAMETERS = RIGID + ELASTIC
#: The parameters that may be negative.
SIGNED = ("friction_offset", "rest_offset")
#: Values of a joint nobody described: rigid, direct drive.
DEFAULTS = {"stiffness": 0.0, "spring_damping": 0.0, "rest_offset": 0.0, "motor_inertia": 0.0, "gear_ratio": 1.0}


@helper
def coulomb_law(velocity, coulomb_velocity):
    """``s(velocity)``: ``tanh(velocity / coulomb_velocity)``, or ``sign(velocity)`` where ``coulomb_velocity`` is 0
    (a branch on the model, never on the velocity)."""
    if coulomb_velocity > 0.0:
        return math.tanh(velocity / coulomb_velocity)
    return np.sign(velocity)


@helper
def coulomb_law_slope(velocity, coulomb_velocity):
    """``d s / d velocity`` of :func:`coulomb_law`: ``(1 - tanh^2) / coulomb_velocity``; 0 for ``sign`` (taken as 0
    at 0)."""
    if coulomb_velocity > 0.0:
        return (1.0 - math.tanh(velocity / coulomb_velocity) ** 2) / coulomb_velocity
    return 0.0


@helper
def coulomb_shape(m, c, qd_c):
    """``s(qd)`` of column ``c``: :func:`coulomb_law` at its ``coulomb_velocity``."""
    return coulomb_law(qd_c, m.coulomb_velocity[c])


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


@helper
def motor_velocity(m, k, x):
    """``G_k x``: coupled motor ``k``'s velocity (or acceleration, or their rates) for the joint velocities ``x``,
    ``G_k`` its row of the joint-to-motor matrix."""
    out = 0.0
    for e in range(m.motor_start[k], m.motor_start[k + 1]):
        out += m.motor_gear[e] * x[m.motor_v[e]]
    return out


@arithmetic_kernel
def drive_torques_add(m, qd, qdd, tau):
    """``tau += armature qdd + damping qd + friction s(qd) + friction_offset``, :func:`drive_torque` of every column
    (zero on the base's and mimic columns), and each coupled motor's ``G_k^T tau_m`` with ``tau_m = I_m G_k qdd +
    b_m G_k qd + f_m s(G_k qd)`` (:class:`JointTransmission`: the motor's torque seen at the joints it turns)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        tau[k] += drive_torque(m, c, qd[k], qdd[k])
    for k in range(m.nm):
        velocity = motor_velocity(m, k, qd)
        tau_m = (m.rotor_inertia[k] * motor_velocity(m, k, qdd) + m.motor_damping[k] * velocity
                 + m.motor_friction[k] * coulomb_law(velocity, m.motor_coulomb_velocity[k]))
        for e in range(m.motor_start[k], m.motor_start[k + 1]):
            tau[m.motor_v[e]] += m.motor_gear[e] * tau_m


@arithmetic_kernel
def drive_rates_add(m, rate, rate_of_rate, out):
    """A time derivative of the drive torques, ``out += armature d/dt(qdd) + damping d/dt(qd)`` with ``rate`` the
    derivative of ``qd`` and ``rate_of_rate`` that of ``qdd`` (``qdd, qddd`` for ``d tau / dt``; ``qddd, qdddd``
    for ``d2 tau / dt2``), and each coupled motor's ``G_k^T (I_m G_k rate_of_rate + b_m G_k rate)``. Coulomb
    friction and the offset are left out: ``sign(qd)`` is constant wherever ``qd != 0``; the smooth ``friction
    tanh(qd / coulomb_velocity)``'s rate is not modelled here (it matters only within a few ``coulomb_velocity`` of
    rest)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        out[k] += m.armature[c] * rate_of_rate[k] + m.damping[c] * rate[k]
    for k in range(m.nm):
        rate_m = m.rotor_inertia[k] * motor_velocity(m, k, rate_of_rate) + m.motor_damping[k] * motor_velocity(m, k,
                                                                                                             rate)
        for e in range(m.motor_start[k], m.motor_start[k + 1]):
            out[m.motor_v[e]] += m.motor_gear[e] * rate_m


@helper
def motor_outer_add(m, k, scale, A):
    """``A += scale G_k^T G_k``: a coupled motor's term between every pair of the joints it turns."""
    for r in range(m.motor_start[k], m.motor_start[k + 1]):
        for e in range(m.motor_start[k], m.motor_start[k + 1]):
            A[m.motor_v[r], m.motor_v[e]] += scale * m.motor_gear[r] * m.motor_gear[e]


@arithmetic_kernel
def drive_jacobians_add(m, qd, dtau_dqd, dtau_dqdd):
    """The drives' share of ``d tau / d qd`` (``damping + friction s'(qd)`` on the diagonal, :func:`coulomb_law_slope`;
    a coupled motor's ``G_k^T (b_m + f_m s'(G_k qd)) G_k``) and of ``d tau / d qdd`` (the rotor inertia:
    :func:`rotor_inertia_add`)."""
    for c in range(m.ncol):
        k = m.col_v[c]
        dtau_dqd[k, k] += m.damping[c] + m.friction[c] * coulomb_law_slope(qd[k], m.coulomb_velocity[c])
    for k in range(m.nm):
        slope = coulomb_law_slope(motor_velocity(m, k, qd), m.motor_coulomb_velocity[k])
        motor_outer_add(m, k, m.motor_damping[k] + m.motor_friction[k] * slope, dtau_dqd)
    rotor_inertia_add(m, dtau_dqdd)


@arithmetic_kernel
def rotor_inertia_add(m, M):
    """``M += diag(armature)``: each rotor's inertia reflected to its joint (zero on the base's and mimic columns),
    and each coupled motor's ``G_k^T I_m G_k`` (off the diagonal too)."""
    for c in range(m.ncol):
        M[m.col_v[c], m.col_v[c]] += m.armature[c]
    for k in range(m.nm):
        motor_outer_add(m, k, m.rotor_inertia[k], M)


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
    ``panda_joint2: {stiffness: 5000.0, motor_inertia: 2.0e-4, gear_ratio: 100.0}``; and an optional
    ``transmissions: {name: {joints, motors, matrix, rotor_inertia, damping, friction, coulomb_velocity}}``
    (:func:`merged_transmissions`: motor velocities ``= matrix @ qd[joints]``, the terms motor side, one per
    motor; a name of the URDF's ``<transmission>`` needs only the terms)."""
    try:
        with open(path) as stream:
            document = yaml.safe_load(stream)
    except OSError as exc:
        raise ModelError(f"drive file {path}: cannot read it ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise ModelError(f"drive file {path}: not valid YAML ({yaml_problem(exc)})") from None
    if not isinstance(document, dict):
        raise ModelError(f"drive file {path}: expected a mapping joint -> {{parameter: value}}")
    given, transmissions = {}, document.pop("transmissions", None)
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
    if transmissions is not None and not isinstance(transmissions, dict):
        raise ModelError(f"drive file {path}: transmissions must map a name to {{joints, matrix, rotor_inertia, "
                         f"...}}, got {transmissions!r}")
    try:
        return robot.with_drive(**given, transmissions=transmissions)
    except ModelError as exc:
        raise ModelError(f"drive file {path}: {exc}") from None


#: A ros2_control transmission plugin (``<plugin>`` or the older ``<type>``) -> its kind.
TRANSMISSION_KINDS = {"SimpleTransmission": "simple", "DifferentialTransmission": "differential",
                      "FourBarLinkageTransmission": "four_bar"}
#: The motor-side terms of a transmission, one value per motor.
MOTOR_TERMS = ("rotor_inertia", "damping", "friction", "coulomb_velocity")
#: The per-joint drive terms a transmission's motors add to.
REFLECTED = ("armature", "damping", "friction")


@dataclass(frozen=True, eq=False)
class JointTransmission:
    """Motors driving joints through gears: motor velocities ``thetad = matrix @ qd[joints]`` (``matrix`` ``G``,
    ``(motors, joints)``), and per motor its rotor inertia ``I_m`` (kg m^2), viscous ``damping`` (N m s/rad),
    Coulomb ``friction`` (N m) and ``coulomb_velocity`` (rad/s, 0: ``sign``), all motor side. By virtual work the
    joints feel ``G^T tau_m``: the rotors' inertia ``G^T diag(I_m) G`` (not diagonal for a coupled wrist) and the
    friction ``G^T f_m(G qd)``. ros2_control's conventions (transmission_interface): simple ``G = [n]``;
    differential ``G = [[a1 j1, a1 j2], [a2 j1, -a2 j2]]``; four-bar ``G = [[a1 j1, 0], [a2, a2 j2]]`` (``a``, ``j``
    the actuators' and joints' mechanical reductions). Its four-bar effort map is not ``G^T`` (it does not conserve
    power); the torques here are."""
    name: str
    joints: tuple
    motors: tuple
    matrix: np.ndarray
    rotor_inertia: np.ndarray
    damping: np.ndarray
    friction: np.ndarray
    coulomb_velocity: np.ndarray

    def described(self):
        """The ``drive.yaml`` entry: ``{joints, motors, matrix, rotor_inertia, damping, friction,
        coulomb_velocity}``."""
        return {"joints": list(self.joints), "motors": list(self.motors), "matrix": self.matrix.tolist(),
                **{term: getattr(self, term).tolist() for term in MOTOR_TERMS}}


def transmission_matrix(kind, actuator_reduction, joint_reduction):
    """``G`` of a ros2_control transmission of ``kind`` from its actuators' and joints' mechanical reductions."""
    a, j = actuator_reduction, joint_reduction
    if kind == "simple":
        return np.array([[a[0] * j[0]]])
    if kind == "differential":
        return np.array([[a[0] * j[0], a[0] * j[1]], [a[1] * j[0], -a[1] * j[1]]])
    return np.array([[a[0] * j[0], 0.0], [a[1], a[1] * j[1]]])


def read_transmissions(root, robot, where):
    """The ``<transmission>`` elements of a URDF ``root`` (top level or inside ``<ros2_control>``; ros2_control's
    ``<plugin>`` or the older ``<type>``; ``mechanical_reduction`` or ``mechanicalReduction`` in the ``<joint>`` and
    ``<actuator>`` elements, default 1; ``role`` ``joint1``/``actuator1``... orders them) as
    :class:`JointTransmission` s without motor terms (a URDF has none: ``drive.yaml``'s ``transmissions`` gives
    them). Other plugins (a gripper's reducer) and transmissions of fixed or mimic joints are not read; one that
    names no joint of the robot or has a reduction that is not a number is left out with a :class:`ModelWarning`
    naming it (and among the returned notes): a transmission never stops a URDF from loading. Returns
    ``(transmissions, notes)``."""
    out, notes = [], []
    for element in root.iter("transmission"):
        name = element.get("name") or f"transmission{len(out) + 1}"
        plugin = (element.findtext("plugin") or element.findtext("type") or "").strip()
        kind = TRANSMISSION_KINDS.get(plugin.rsplit("/", 1)[-1])
        if kind is None:
            continue
        try:
            transmission = _read_transmission(element, name, kind, robot)
            out += [transmission] if transmission else []
        except ValueError as why:
            notes.append(f"transmission '{name}' left out: {why}")
            warnings.warn(f"{where}: {notes[-1]}", ModelWarning, stacklevel=4)
    return tuple(out), tuple(notes)


def _read_transmission(element, name, kind, robot):
    size = 1 if kind == "simple" else 2
    found = {}
    for tag in ("joint", "actuator"):
        elements = element.findall(tag)
        if len(elements) != size:
            raise ValueError(f"a {kind} transmission has {size} <{tag}> element(s), got {len(elements)}")
        elements.sort(key=lambda e: (e.get("role") or e.findtext("role") or "").strip())
        reductions = []
        for e in elements:
            text = (e.findtext("mechanical_reduction") or e.findtext("mechanicalReduction") or "1").strip()
            try:
                value = float(text)
            except ValueError:
                value = math.nan
            if not (math.isfinite(value) and value != 0):
                raise ValueError(f"<{tag} name='{e.get('name')}'>: mechanical reduction {text!r} is not a finite "
                                 "non-zero number")
            reductions.append(value)
        found[tag] = ([e.get("name") for e in elements], reductions)
    for joint in found["joint"][0]:
        if joint not in robot.joints:
            raise ValueError(f"robot '{robot.name}' has no joint '{joint}'")
    if not set(found["joint"][0]) <= set(robot.joint_names):
        return None   # a fixed or mimic joint's: it has no motion of its own to drive
    return transmission_of(name, found["joint"][0], found["actuator"][0],
                           transmission_matrix(kind, found["actuator"][1], found["joint"][1]))


def transmission_of(name, joints, motors, matrix, **terms):
    """A :class:`JointTransmission`, the motor terms not given 0."""
    matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
    motors = tuple(m or f"{name}_motor{k + 1}" for k, m in enumerate(motors or [None] * len(matrix)))
    values = {term: np.broadcast_to(np.asarray(terms.get(term, 0.0), dtype=float), (len(motors),)).copy()
              for term in MOTOR_TERMS}
    return JointTransmission(name, tuple(joints), motors, matrix, **values)


def motor_rows(robot, transmissions):
    """``(transmission, motor index, [(joint index, reduction), ...])`` for each motor of ``transmissions`` that
    turns a joint of ``robot.joint_names``: the joints it turns (a locked joint's column drops out, it does not
    move)."""
    for t in transmissions:
        columns = [(k, robot.joint_names.index(j)) for k, j in enumerate(t.joints) if j in robot.joint_names]
        for m in range(len(t.motors)):
            moved = [(j, t.matrix[m, k]) for k, j in columns if t.matrix[m, k] != 0]
            if moved:
                yield t, m, moved


def driving_motors(robot, transmissions):
    """:func:`motor_rows` of the motors with a rotor inertia or friction."""
    return ((t, m, moved) for t, m, moved in motor_rows(robot, transmissions)
            if any((t.rotor_inertia[m], t.damping[m], t.friction[m])))


def split_motors(robot, transmissions):
    """``(per_joint, whole)``: the :func:`driving_motors` of ``transmissions`` whose terms join their joint's (a
    motor that turns one joint; of those with Coulomb friction on one joint, the ones whose joint-side velocity
    scale ``v_m / |n|`` is the first one's: one joint has one Coulomb law), and the motors carried whole
    (:func:`coupled_motors`: those that turn several joints, and the rest)."""
    per_joint, whole, velocity = [], [], {}
    for t, m, moved in driving_motors(robot, transmissions):
        (j, n), *others = moved
        joins = not others and (not t.friction[m] or velocity.setdefault(j, t.coulomb_velocity[m] / abs(n))
                                == t.coulomb_velocity[m] / abs(n))
        (per_joint if joins else whole).append((t, m, moved))
    return per_joint, whole


def reflected_terms(robot, transmissions):
    """``{armature, damping, friction, coulomb_velocity}`` per joint of ``robot.joint_names``: what the motors of
    ``transmissions`` whose terms join their joint's (:func:`split_motors`) add there, ``n^2 I_m``, ``n^2 b_m`` and
    a motor's Coulomb friction ``n f_c s(n qd / v_m) = |n| f_c s(qd / (v_m / |n|))`` (``coulomb_velocity`` NaN
    where no motor adds Coulomb friction). The other motors (a coupled wrist's) are carried whole:
    :func:`coupled_motors`."""
    nv = len(robot.joint_names)
    out = {"armature": np.zeros(nv), "damping": np.zeros(nv), "friction": np.zeros(nv),
           "coulomb_velocity": np.full(nv, np.nan)}
    for t, m, [(j, n)] in split_motors(robot, transmissions)[0]:
        out["armature"][j] += n * n * t.rotor_inertia[m]
        out["damping"][j] += n * n * t.damping[m]
        if t.friction[m]:
            out["friction"][j] += abs(n) * t.friction[m]
            out["coulomb_velocity"][j] = t.coulomb_velocity[m] / abs(n)
    return out


@dataclass(frozen=True)
class CoupledMotor:
    """A motor carried whole (:func:`split_motors`; a differential wrist's, which turns several joints): its
    velocity ``G_k qd`` over the velocity coordinates ``coordinates`` with the reductions ``gears`` (its row of the
    joint-to-motor matrix), and its motor-side ``rotor_inertia``, ``damping``, ``friction`` and
    ``coulomb_velocity``. Its torque ``tau_m = I_m G_k qdd + b_m G_k qd + f_m s(G_k qd)`` acts on the joints as
    ``G_k^T tau_m`` (:func:`drive_torques_add`)."""
    coordinates: tuple
    gears: tuple
    rotor_inertia: float
    damping: float
    friction: float
    coulomb_velocity: float


def coupled_motors(robot, transmissions):
    """The :class:`CoupledMotor` s of ``transmissions``: the motors with rotor inertia or friction carried whole
    (:func:`split_motors`: those that turn more than one joint of ``robot``, and those whose Coulomb law cannot
    join their joint's)."""
    return tuple(CoupledMotor(tuple(robot.bodies[robot.joint_bodies[j]].idx_v for j, _ in moved),
                              tuple(float(n) for _, n in moved),
                              *(float(getattr(t, term)[m]) for term in MOTOR_TERMS))
                 for t, m, moved in split_motors(robot, transmissions)[1])


def reflected_coulomb_velocity(robot, values, reflected):
    """The joints' ``coulomb_velocity`` with the motors' (``reflected``, :func:`reflected_terms`) where they add
    Coulomb friction; a joint whose own Coulomb friction (``values`` less the motors') has another velocity is
    refused: one joint has one Coulomb law."""
    velocity = values["coulomb_velocity"].copy()
    motors = np.isfinite(reflected["coulomb_velocity"])
    own = values["friction"] - reflected["friction"]
    clash = np.flatnonzero(motors & (own > 0) & (velocity != reflected["coulomb_velocity"]))
    if clash.size:
        j = clash[0]
        raise ModelError(f"joint '{robot.joint_names[j]}': its own Coulomb friction has coulomb_velocity "
                         f"{velocity[j]:g} rad/s, its motor's {reflected['coulomb_velocity'][j]:g} (motor side / "
                         "|reduction|): give them one")
    velocity[motors] = reflected["coulomb_velocity"][motors]
    return velocity


def merged_transmissions(robot, given):
    """``robot.transmissions`` with ``given`` (:class:`JointTransmission` s, or ``{name: {joints, motors, matrix,
    rotor_inertia, damping, friction, coulomb_velocity}}``): an entry replaces the transmission of its name, an
    entry for a transmission the robot has (from its URDF) changes only the fields it gives."""
    current = {t.name: t for t in robot.transmissions}
    if not hasattr(given, "items"):
        return tuple({**current, **{t.name: t for t in given}}.values())
    out = dict(current)
    for name, entry in given.items():
        owner = f"transmissions: '{name}'"
        if not isinstance(entry, dict):
            raise ModelError(f"{owner} must map to {{joints, matrix, rotor_inertia, ...}}, got {entry!r}")
        unknown = set(entry) - {"joints", "motors", "matrix", *MOTOR_TERMS}
        if unknown:
            raise ModelError(f"{owner}: unknown field '{sorted(unknown)[0]}' (known: joints, motors, matrix, "
                             f"{', '.join(MOTOR_TERMS)})")
        base = current.get(name)
        joints = entry.get("joints", base.joints if base else None)
        matrix = entry.get("matrix", base.matrix if base else None)
        if joints is None or matrix is None:
            raise ModelError(f"{owner}: not a transmission of the URDF: give its joints and matrix")
        try:
            matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
            terms = {term: np.asarray(entry[term], dtype=float) if term in entry else
                     (getattr(base, term) if base and len(base.motors) == len(matrix) else 0.0)
                     for term in MOTOR_TERMS}
        except (TypeError, ValueError):
            raise ModelError(f"{owner}: matrix and motor terms must be numbers") from None
        if matrix.ndim != 2 or matrix.shape[1] != len(joints) or not np.all(np.isfinite(matrix)):
            raise ModelError(f"{owner}: matrix must be finite, one row per motor and one column per joint "
                             f"({len(joints)}), got shape {matrix.shape}")
        for joint in joints:
            if joint not in robot.joint_names and joint not in robot.locked_joints:
                raise ModelError(f"{owner}: robot '{robot.name}' has no movable joint '{joint}'")
        for term, value in terms.items():
            value = np.broadcast_to(value, (len(matrix),)) if np.ndim(value) == 0 else value
            if value.shape != (len(matrix),) or not np.all(np.isfinite(value)) or np.any(value < 0):
                raise ModelError(f"{owner}: {term} must be {len(matrix)} finite values >= 0 (one per motor), "
                                 f"got {np.asarray(value).tolist()}")
            terms[term] = value
        motors = entry.get("motors", base.motors if base and len(base.motors) == len(matrix) else None)
        out[name] = transmission_of(name, joints, motors, matrix, **terms)
    return tuple(out.values())
