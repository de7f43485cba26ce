"""Pinocchio as the reference oracle, on the example-robot-data URDFs: load both models, map states between them.

Pinocchio orders its coordinates by its own joint order and stores a continuous joint as (cos, sin); our ``q``
follows ``robot.joint_names`` with one angle per continuous joint. Everything here maps by joint name.
"""
import functools
import glob
import os
import warnings

import numpy as np
import pinocchio as pin

import rne_dynamics as rd
from rne_dynamics.model import joints as joint_codes  # body.code of each joint type

ROBOTS_DIR = os.path.join(os.path.dirname(pin.__file__).split("lib")[0], "share", "example-robot-data", "robots")
if not os.path.isdir(ROBOTS_DIR):  # cmeel layout: site-packages/cmeel.prefix/share/example-robot-data/robots
    import sysconfig
    ROBOTS_DIR = os.path.join(sysconfig.get_paths()["purelib"], "cmeel.prefix", "share", "example-robot-data",
                              "robots")


def urdf_paths():
    """Every URDF shipped by example-robot-data (69 at version 6)."""
    return sorted(glob.glob(os.path.join(ROBOTS_DIR, "**", "*.urdf"), recursive=True))


def robot_path(fragment):
    """The one URDF whose path ends with ``fragment`` (``'panda_description/urdf/panda.urdf'``)."""
    matches = [p for p in urdf_paths() if p.endswith(fragment)]
    assert len(matches) == 1, (fragment, matches)
    return matches[0]


def load_quietly(source, floating_base=False):
    """``rd.load_urdf`` with its warnings silenced (many example-robot-data files have massless links)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return rd.load_urdf(source, floating_base=floating_base)


@functools.lru_cache(maxsize=None)
def _pair(path, floating_base):
    """``(robot, pin_model)`` for a URDF, or ``None`` when Pinocchio cannot load it; mimic joints on; with
    ``floating_base``, a free-flyer between the world and the URDF's root link on both sides."""
    try:
        model = (pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True) if floating_base
                 else pin.buildModelFromUrdf(path, mimic=True))
    except Exception:  # Pinocchio refuses some files (mimic of an unknown joint, missing robot name)
        return None
    return load_quietly(path, floating_base), model


def _comparable_paths(floating_base):
    out = []
    for path in urdf_paths():
        try:
            loaded = _pair(path, floating_base)
        except rd.URDFError:
            continue  # refused on purpose (physically impossible inertia); tested on its own
        if loaded is not None and (floating_base or loaded[0].dof > 0):
            out.append(path)
    return out


def pair(path):
    """``(robot, pin_model)`` for a URDF, or ``None`` when Pinocchio cannot load it; fixed base, mimic joints on."""
    return _pair(path, False)


def comparable_paths():
    """URDFs both libraries load with at least one movable joint (ids for pytest)."""
    return _comparable_paths(False)


def short_name(path):
    return os.path.relpath(path, ROBOTS_DIR)


def with_gravity(model, gravity):
    """A copy of a Pinocchio model (the ones here are shared) with the gravity ``[gx, gy, gz]``; ``None`` keeps the
    model's."""
    model = pin.Model(model)
    if gravity is not None:
        model.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    return model


def random_states(robot, n, seed=0, scale=1.0):
    """``n`` random ``(q, qd, qdd)``: each coordinate of ``q`` within its limits, or within ±pi where it has none or
    they are placeholders (some URDFs write ±1e16), then every unit quaternion (a floating base's, a spherical
    joint's) a random one (:func:`random_unit_quaternions`); ``qd`` and ``qdd`` uniform in ``[-scale, scale]``. A
    floating base's position is within ±pi of the origin; for other states of floating robots, see
    :func:`random_floating_states`."""
    rng = np.random.default_rng(seed)
    lo, hi = robot.position_limits.T
    lo = np.where(lo > -2 * np.pi, lo, -np.pi)
    hi = np.where(hi < 2 * np.pi, hi, np.pi)
    q = rng.uniform(lo, hi, size=(n, robot.nq))
    for start in robot.quaternions:
        q[:, start:start + 4] = random_unit_quaternions(rng, n)
    qd = rng.uniform(-scale, scale, size=(n, robot.nv))
    qdd = rng.uniform(-scale, scale, size=(n, robot.nv))
    return q, qd, qdd


def per_coordinate(robot, per_joint):
    """A per-joint array (``robot.joint_names`` order) spread over each joint's velocity coordinates, 0 on a
    floating base's."""
    starts = sorted(robot.idx_v.values()) + [robot.nv]
    width = dict(zip(starts, np.diff(starts)))  # a joint's coordinates run to where the next one's start
    out = np.zeros(robot.nv)
    for name, value in zip(robot.joint_names, per_joint):
        start = robot.idx_v[name]
        out[start:start + width[start]] = value
    return out


def drive_torques(robot, qd, qdd=None):
    """``robot``'s own drive terms per velocity coordinate: its URDF damping and friction at ``qd``, and with
    ``qdd`` its rotor inertia (``armature``): what Pinocchio's algorithms and our regressor leave out.
    :meth:`FloatingMapping.drive_torques` reads the damping and friction from the Pinocchio model instead."""
    rotor = 0.0 if qdd is None else per_coordinate(robot, robot.armature) * qdd
    return (rotor + per_coordinate(robot, robot.damping) * qd
            + per_coordinate(robot, robot.friction) * np.sign(qd))


def with_armature(robot, seed):
    """The robot with random rotor inertias, one per joint of ``joint_names`` (no URDF has any), so that the drive
    terms are all exercised."""
    return robot.with_drive(armature=np.random.default_rng(seed).uniform(0.01, 0.2, len(robot.joint_names)))


def relative_error(ours, reference):
    """Max absolute difference over the larger of 1 and the reference's largest magnitude."""
    ours, reference = np.asarray(ours), np.asarray(reference)
    return float(np.abs(ours - reference).max() / max(1.0, np.abs(reference).max())) if reference.size else 0.0


# ---------------------------------------------------------------- floating base and multi-coordinate joints
#
# With ``load_urdf(path, floating_base=True)`` our ``q`` is ``[x, y, z, qx, qy, qz, qw]`` of the base then one block
# per joint of ``robot.joint_names`` (starting at ``robot.idx_q[name]``), ``v`` the base twist ``[v; w]`` in the base
# frame then the joints (from ``robot.idx_v[name]``). Pinocchio's free-flyer ("root_joint", ``idx_q = idx_v = 0``)
# has the same 7 + 6 coordinates, so the base is copied as is; the joints are matched by name as above.

FREE_FLYER = "root_joint"  # the name Pinocchio gives the free-flyer of buildModelFromUrdf(path, JointModelFreeFlyer())


def floating_pair(path):
    """``(robot, pin_model)`` with a free-flyer between the world and the URDF's root link, or ``None`` when
    Pinocchio cannot load the file; mimic joints on."""
    return _pair(path, True)


def floating_comparable_paths():
    """URDFs both libraries load with a floating base (robots without movable joints included: free bodies)."""
    return _comparable_paths(True)


def has_mimic_joints(model):
    """Whether a Pinocchio model has mimic joints (its derivatives, ABA and regressor refuse them)."""
    return any("Mimic" in model.joints[j].shortname() for j in range(1, model.njoints))


def _joint_kind(joint):
    """How a Pinocchio joint's ``q`` maps to ours: ``"copy"`` (same coordinates: one-coordinate joints, the
    free-flyer, the spherical joint's quaternion), ``"angle"`` (an unbounded revolute joint: our angle, Pinocchio's
    cos, sin) or ``"planar"`` (our ``x, y, theta``, Pinocchio's ``x, y, cos, sin``)."""
    name = joint.shortname()
    if name == "JointModelPlanar":
        return "planar"
    if name in ("JointModelFreeFlyer", "JointModelSpherical") or joint.nq == joint.nv:
        return "copy"
    if joint.nq == 2 and joint.nv == 1:
        return "angle"
    raise ValueError(f"no mapping for Pinocchio joint {name} (nq {joint.nq}, nv {joint.nv})")


def _quaternion_block(joint):
    """Offset of the unit quaternion in a Pinocchio joint's ``q``, or ``None``."""
    return {"JointModelFreeFlyer": 3, "JointModelSpherical": 0}.get(joint.shortname())


class FloatingMapping:
    """Index maps between our coordinates and Pinocchio's for any mix of joints: a free-flyer base (Pinocchio's
    ``root_joint``; ours ``q[:7]``, ``v[:6]``), one-coordinate joints, continuous joints (one angle; cos, sin),
    planar joints (``x, y, theta``; ``x, y, cos, sin``) and spherical joints (a unit quaternion ``qx, qy, qz, qw`` in
    both), matched by name. Velocities are the same numbers in both (a planar joint's ``vx, vy, wz`` in its child
    frame, a spherical joint's angular velocity in its child frame)."""

    def __init__(self, robot, model):
        self.robot, self.model = robot, model
        self.floating = (model.existJointName(FREE_FLYER)
                         and model.joints[model.getJointId(FREE_FLYER)].shortname() == "JointModelFreeFlyer")
        self.joint_ids = np.array([model.getJointId(n) for n in robot.joint_names], dtype=int)
        assert (self.joint_ids < model.njoints).all(), "a joint of ours is not in the Pinocchio model"
        self.blocks = []  # (kind, our q start, Pinocchio joint)
        idx_v = np.full(robot.nv, -1, dtype=int)
        entries = [(FREE_FLYER, 0, 0)] if self.floating else []
        entries += [(n, robot.idx_q[n], robot.idx_v[n]) for n in robot.joint_names]
        for name, start_q, start_v in entries:
            joint = model.joints[model.getJointId(name)]
            self.blocks.append((_joint_kind(joint), start_q, joint))
            idx_v[start_v:start_v + joint.nv] = joint.idx_v + np.arange(joint.nv)
        self.idx_v = idx_v  # Pinocchio's index of each of our velocity coordinates
        assert sorted(idx_v) == list(range(model.nv)), "our velocity coordinates are not Pinocchio's"
        # (our velocity index of the source, multiplier k, damping, friction) of each mimic joint's own <dynamics>,
        # which Pinocchio's model drops (it has no velocity coordinate); q_mimic = k q_source (+ offset)
        self.mimic_drives = []
        for joint in robot.joints.values():
            if joint.mimic is None or joint.type == "fixed":
                continue
            k, source = 1.0, joint
            while source.mimic is not None:
                k, source = k * source.mimic[1], robot.joints[source.mimic[0]]
            if source.name in robot.idx_v:
                self.mimic_drives.append((robot.idx_v[source.name], k, joint.damping, joint.friction))

    def q(self, q):
        """Pinocchio configuration for our ``q`` (one state)."""
        q = np.asarray(q, float)
        out = pin.neutral(self.model)
        for kind, start, joint in self.blocks:
            if kind == "copy":
                out[joint.idx_q:joint.idx_q + joint.nq] = q[start:start + joint.nq]
            elif kind == "angle":
                out[joint.idx_q:joint.idx_q + 2] = np.cos(q[start]), np.sin(q[start])
            else:  # planar
                x, y, theta = q[start:start + 3]
                out[joint.idx_q:joint.idx_q + 4] = x, y, np.cos(theta), np.sin(theta)
        return out

    def v(self, x):
        """Pinocchio tangent vector (velocity, acceleration, torque) for ours."""
        out = np.zeros(self.model.nv)
        out[self.idx_v] = x
        return out

    def ours(self, x):
        """Our ordering of a Pinocchio tangent vector, or of a square matrix's rows and columns."""
        x = np.asarray(x)
        return x[np.ix_(self.idx_v, self.idx_v)] if x.ndim == 2 else x[self.idx_v]

    def columns(self, x):
        """Our ordering of the columns of a ``(rows, nv)`` matrix (a Jacobian, the centroidal map)."""
        return np.asarray(x)[:, self.idx_v]

    def joint_wrenches(self, data):
        """``data.f`` of our joints as ``(len(joint_names), 6)`` ``[f; tau]`` (Pinocchio's ``[linear; angular]``)."""
        return np.array([data.f[int(j)].vector for j in self.joint_ids]).reshape(-1, 6)

    def drive_torques(self, v):
        """The URDF ``<dynamics>`` damping and friction Pinocchio stores but its algorithms leave out (none on the
        free-flyer), and those of the mimic joints, which Pinocchio does not store."""
        V = self.v(v)
        out = self.ours(self.model.damping * V + self.model.friction * np.sign(V))
        for i, k, damping, friction in self.mimic_drives:  # virtual work: k times the mimic drive's own torque
            mimic_velocity = k * v[i]
            out[i] += k * (damping * mimic_velocity + friction * np.sign(mimic_velocity))
        return out

    def damping(self):
        """``d drive_torques / d v``: the URDF viscous damping per velocity coordinate, our order."""
        out = self.ours(self.model.damping).copy()
        for i, k, damping, _ in self.mimic_drives:
            out[i] += k * k * damping
        return out

    def regressor_columns(self):
        """Pinocchio's regressor (and ``toDynamicParameters``) columns in our body order: 10 per entry of
        ``robot.body_joint_names``, Pinocchio's 10 per joint id. The base body is the one entry that names no joint of
        the Pinocchio model other than the free-flyer (whatever our name for it)."""
        ids = []
        for name in self.robot.body_joint_names:
            if name != FREE_FLYER and name in self.robot.joints and self.model.existJointName(name):
                ids.append(self.model.getJointId(name))
            else:
                assert self.floating, f"body '{name}' names no joint of the Pinocchio model"
                ids.append(self.model.getJointId(FREE_FLYER))
        assert sorted(ids) == list(range(1, self.model.njoints)), (self.robot.body_joint_names, ids)
        return np.concatenate([10 * (j - 1) + np.arange(10) for j in ids])

    def align_quaternions(self, reference, q):
        """Pinocchio configuration ``q`` with each unit quaternion (free-flyer, spherical) negated where it is in
        the other hemisphere than in ``reference``: ``x`` and ``-x`` are the same rotation."""
        q = np.array(q, float)
        for _, _, joint in self.blocks:
            offset = _quaternion_block(joint)
            if offset is not None:
                k = slice(joint.idx_q + offset, joint.idx_q + offset + 4)
                if q[k] @ reference[k] < 0:
                    q[k] = -q[k]
        return q


#: The name the fixed-base tests use: with no free-flyer in the Pinocchio model, :class:`FloatingMapping` maps the
#: one-coordinate and continuous joints by name, as the fixed-base ``Mapping`` it replaces did.
Mapping = FloatingMapping


def random_unit_quaternions(rng, n):
    """``(n, 4)`` unit quaternions ``[qx, qy, qz, qw]``, uniform on the rotations, either sign of ``qw``."""
    x = rng.normal(size=(n, 4))
    return x / np.linalg.norm(x, axis=1, keepdims=True)


COORDINATES = {"planar": 3, "spherical": 4}  # our q per joint of these types; 1 for the others


def random_floating_states(robot, n, seed=0, scale=1.0):
    """``n`` random ``(q, v, a)``: a floating base (when ``q`` has one: ``robot.nq`` exceeds the joints' coordinates
    by 7) at a random position in ``[-1, 1]^3`` with a random unit quaternion; one-coordinate joints within their
    limits (±pi where unbounded or the limits are placeholders, as :func:`random_states`); planar joints ``x, y`` in
    ``[-1, 1]``, ``theta`` in ``[-pi, pi]``; spherical joints a random unit quaternion. ``v`` and ``a`` uniform in
    ``[-scale, scale]``."""
    rng = np.random.default_rng(seed)
    q = np.empty((n, robot.nq))
    base = robot.nq - sum(COORDINATES.get(robot.joints[name].type, 1) for name in robot.joint_names)
    assert base in (0, 7), f"robot.nq {robot.nq} does not add up with the joints {robot.joint_names}"
    if base:
        q[:, 0:3] = rng.uniform(-1.0, 1.0, size=(n, 3))
        q[:, 3:7] = random_unit_quaternions(rng, n)
    for name in robot.joint_names:
        joint, k = robot.joints[name], robot.idx_q[name]
        if joint.type == "planar":
            q[:, k:k + 2] = rng.uniform(-1.0, 1.0, size=(n, 2))
            q[:, k + 2] = rng.uniform(-np.pi, np.pi, size=n)
        elif joint.type == "spherical":
            q[:, k:k + 4] = random_unit_quaternions(rng, n)
        else:
            lo = joint.lower if joint.lower > -2 * np.pi else -np.pi
            hi = joint.upper if joint.upper < 2 * np.pi else np.pi
            q[:, k] = rng.uniform(lo, hi, size=n)
    v = rng.uniform(-scale, scale, size=(n, robot.nv))
    a = rng.uniform(-scale, scale, size=(n, robot.nv))
    return q, v, a


def _se2_exp(vx, vy, w):
    """The planar displacement ``exp([vx, vy, w])``: ``(dx, dy, w)``, ``V(w) [vx, vy]`` written stably near 0."""
    s = np.sinc(w / np.pi)                        # sin(w) / w
    c = 0.5 * w * np.sinc(w / (2 * np.pi)) ** 2   # (1 - cos(w)) / w
    return s * vx - c * vy, c * vx + s * vy, w


def integrate(robot, q, dv):
    """``q`` moved by the tangent ``dv`` (one state), each joint by ``X_J exp(S dv_J)`` (right perturbation, child
    frame, as Pinocchio's ``integrate``): one-coordinate joints add, the free-flyer by SE(3)'s exponential, a
    spherical joint by SO(3)'s, a planar joint by SE(2)'s."""
    out = np.array(q, float)
    for b in robot.bodies:
        if b.mimic:
            continue
        x, d = out[b.idx_q:b.idx_q + b.nq], dv[b.idx_v:b.idx_v + b.nv]
        if b.code == joint_codes.FREE_FLYER:
            x[:] = pin.SE3ToXYZQUAT(pin.XYZQUATToSE3(x) * pin.exp6(pin.Motion(d[:3], d[3:])))
        elif b.code == joint_codes.SPHERICAL:
            x[:] = (pin.Quaternion(x[3], x[0], x[1], x[2]) * pin.Quaternion(pin.exp3(d))).coeffs()  # x y z w
        elif b.code == joint_codes.PLANAR:
            dx, dy, w = _se2_exp(*d)
            c, s = np.cos(x[2]), np.sin(x[2])
            x[:] = x[0] + c * dx - s * dy, x[1] + s * dx + c * dy, x[2] + w
        else:
            x += d
    return out


def central_difference(function, robot, state, name, step=1e-6):
    """``d function(**state) / d state[name]`` by central differences over the ``nv`` tangent directions, all points
    in one batch call (``q`` along :func:`integrate`); the direction is the last axis."""
    x = state[name]
    steps = step * np.eye(robot.nv)
    if name == "q":
        points = np.array([integrate(robot, x, d) for d in np.concatenate([steps, -steps])])
    else:
        points = np.concatenate([x + steps, x - steps])
    args = {key: np.broadcast_to(value, (len(points),) + value.shape) for key, value in state.items()}
    args[name] = points
    values = function(**args)
    return np.moveaxis((values[:robot.nv] - values[robot.nv:]) / (2 * step), 0, -1)
