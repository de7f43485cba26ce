"""Planar and spherical joints (with revolute, continuous and prismatic ones) on random trees of 5 to 8 moving
bodies, fixed or on a floating base, against Pinocchio models built by hand from the same numbers.

Each tree is written twice from one Python description: as URDF text for ``rd.load_urdf`` and as a Pinocchio model
(``addJoint`` with the joint placement of the URDF ``<origin>``, ``appendBodyToJoint`` with the link's inertia; a
URDF link frame is its joint's frame, so a body sits at the identity in its joint).

- ``planar`` (a standard URDF type, ``<axis>`` the plane's normal): always written with axis ``(0, 0, 1)``, so it is
  Pinocchio's ``JointModelPlanar``: translation in the joint frame's x-y plane, rotation about its z. Ours
  ``q = (x, y, theta)``, Pinocchio's ``(x, y, cos theta, sin theta)``; ``v = (vx, vy, wz)`` in the child frame in both.
- ``spherical`` (not a URDF type; ``rd.load_urdf`` accepts it): ``q`` the unit quaternion ``(qx, qy, qz, qw)`` of the
  child frame in the joint frame, ``v`` the angular velocity in the child frame: ``JointModelSpherical``.
- revolute and prismatic joints about random unit axes (``JointModelRevoluteUnaligned``,
  ``JointModelPrismaticUnaligned``); continuous joints about +x, +y or +z (``JointModelRUBX/Y/Z``: Pinocchio's Python
  binding cannot set the axis of ``JointModelRevoluteUnboundedUnaligned``).

Compared: inverse dynamics (torques and joint wrenches, tilted gravity), the mass matrix, forward dynamics, the
inverse dynamics derivatives (w.r.t. ``q`` along ``integrate``: ``nv`` columns), ``integrate`` and ``difference``;
and, without Pinocchio, that a multi-coordinate joint's torques are its joint wrench's components along its motion
subspace.
"""
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
DERIVATIVE_TOLERANCE = 1e-7
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])
KINDS = ("revolute", "continuous", "prismatic", "planar", "spherical")
CASES = [(seed, floating) for floating in (False, True) for seed in range(8)]
CASE_IDS = [f"{'floating' if floating else 'fixed'}-{seed}" for seed, floating in CASES]


@dataclass
class Link:
    mass: float
    com: np.ndarray
    rpy: np.ndarray       # of the principal axes of inertia in the link frame
    moments: np.ndarray   # principal moments of a solid box (the triangle inequality holds)

    def inertia(self):
        R = pin.rpy.rpyToMatrix(*self.rpy)
        return pin.Inertia(self.mass, self.com, R @ np.diag(self.moments) @ R.T)


@dataclass
class Joint:
    parent: int           # link index; the child is link (joint index + 1)
    kind: str
    axis: np.ndarray
    xyz: np.ndarray
    rpy: np.ndarray

    def pinocchio(self):
        if self.kind == "planar":
            return pin.JointModelPlanar()
        if self.kind == "spherical":
            return pin.JointModelSpherical()
        if self.kind == "continuous":
            return {0: pin.JointModelRUBX, 1: pin.JointModelRUBY, 2: pin.JointModelRUBZ}[int(np.argmax(self.axis))]()
        if self.kind == "revolute":
            return pin.JointModelRevoluteUnaligned(self.axis)
        return pin.JointModelPrismaticUnaligned(self.axis)


def text(values):
    return " ".join(repr(float(x)) for x in values)


def random_link(rng):
    """A massive link with a full-rank inertia: a solid box's principal moments, turned, about a random COM."""
    mass = float(rng.uniform(0.3, 3.0))
    a, b, c = rng.uniform(0.05, 0.5, 3)
    moments = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    return Link(mass, rng.uniform(-0.2, 0.2, 3), rng.uniform(-np.pi, np.pi, 3), moments)


def random_tree(seed):
    """``(links, joints)``: 6 to 9 links, joint ``k`` joining link ``joints[k].parent`` to link ``k + 1``; at least
    one planar and one spherical joint; every link massive with a full-rank inertia (so ``M`` is positive
    definite)."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(5, 9))  # moving bodies
    kinds = ["planar", "spherical"] + [str(kind) for kind in rng.choice(KINDS, count - 2)]
    rng.shuffle(kinds)
    links = [random_link(rng) for _ in range(count + 1)]
    joints = []
    for child, kind in enumerate(kinds, start=1):
        parent = child - 1 if rng.integers(2) else int(rng.integers(0, child))  # chains and bushes
        if kind == "planar":
            axis = np.array([0.0, 0.0, 1.0])
        elif kind == "continuous":
            axis = np.eye(3)[rng.integers(3)]
        else:
            axis = rng.normal(size=3)
            axis /= np.linalg.norm(axis)
        joints.append(Joint(parent, kind, axis, rng.uniform(-0.4, 0.4, 3), rng.uniform(-np.pi, np.pi, 3)))
    return links, joints


def link_element(k, link):
    """The URDF ``<link name="l{k}">`` of ``link``."""
    ixx, iyy, izz = (repr(float(x)) for x in link.moments)
    return (f'<link name="l{k}"><inertial><origin xyz="{text(link.com)}" rpy="{text(link.rpy)}"/>'
            f'<mass value="{float(link.mass)!r}"/><inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" '
            f'izz="{izz}"/></inertial></link>')


def tree_urdf(links, joints):
    parts = ['<robot name="joint_types">'] + [link_element(k, link) for k, link in enumerate(links)]
    for k, joint in enumerate(joints):
        extra = "" if joint.kind == "spherical" else f'<axis xyz="{text(joint.axis)}"/>'
        if joint.kind == "revolute":
            extra += '<limit lower="-3" upper="3" effort="100" velocity="10"/>'
        elif joint.kind == "prismatic":
            extra += '<limit lower="-1" upper="1" effort="100" velocity="10"/>'
        parts.append(f'<joint name="j{k}" type="{joint.kind}"><parent link="l{joint.parent}"/>'
                     f'<child link="l{k + 1}"/><origin xyz="{text(joint.xyz)}" rpy="{text(joint.rpy)}"/>{extra}'
                     "</joint>")
    return "".join(parts) + "</robot>"


def depth_first(joints, link=0):
    """Indices of the joints below ``link``, depth first (each joint followed by its subtree)."""
    out = []
    for k, joint in enumerate(joints):
        if joint.parent == link:
            out += [k] + depth_first(joints, k + 1)
    return out


def pinocchio_model(links, joints, floating):
    """The same tree built by hand, joints added depth first (as Pinocchio's URDF parser does); the root link on a
    free-flyer named as that parser names it."""
    model = pin.Model()
    model.name = "joint_types"
    joint_of_link = {0: 0}
    if floating:
        base = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), oracle.FREE_FLYER)
        model.appendBodyToJoint(base, links[0].inertia(), pin.SE3.Identity())
        joint_of_link[0] = base
    for k in depth_first(joints):  # Pinocchio's CRBA needs each subtree's coordinates contiguous
        joint = joints[k]
        placement = pin.SE3(pin.rpy.rpyToMatrix(*joint.rpy), joint.xyz)
        index = model.addJoint(joint_of_link[joint.parent], joint.pinocchio(), placement, f"j{k}")
        model.appendBodyToJoint(index, links[k + 1].inertia(), pin.SE3.Identity())
        joint_of_link[k + 1] = index
    model.gravity = pin.Motion(np.concatenate([TILTED_GRAVITY, np.zeros(3)]))
    return model


def setup(seed, floating):
    """``robot, model, data, mapping, joints, (q, v, a)`` for tree ``seed``."""
    links, joints = random_tree(seed)
    robot = rd.load_urdf(tree_urdf(links, joints), floating_base=floating)
    model = pinocchio_model(links, joints, floating)
    q, v, a = (x[0] for x in oracle.random_floating_states(robot, 1, seed=100 + seed, scale=2.0))
    return robot, model, model.createData(), oracle.FloatingMapping(robot, model), joints, (q, v, a)


def check(label, ours, reference, tolerance=TOLERANCE):
    error = oracle.relative_error(ours, reference)
    assert error < tolerance, f"{label}: relative error {error:.3g}"


def symmetric(upper):
    return np.triu(upper) + np.triu(upper, 1).T


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_coordinates(seed, floating):
    """Planar: 3 in ``q``, 3 in ``v``; spherical: 4 and 3; the others 1 and 1; a floating base 7 and 6 in front;
    the joints in ``joint_names`` order, each block where ``idx_q`` / ``idx_v`` say."""
    robot, model, _, _, joints, _ = setup(seed, floating)
    sizes = {"planar": (3, 3), "spherical": (4, 3)}
    assert set(robot.joint_names) == {f"j{k}" for k in range(len(joints))}
    start_q, start_v = (7, 6) if floating else (0, 0)
    for name in robot.joint_names:
        nq, nv = sizes.get(robot.joints[name].type, (1, 1))
        assert (robot.idx_q[name], robot.idx_v[name]) == (start_q, start_v), name
        start_q, start_v = start_q + nq, start_v + nv
    assert (robot.nq, robot.nv, robot.dof) == (start_q, start_v, start_v)
    assert robot.nv == model.nv


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_inverse_dynamics(seed, floating):
    robot, model, data, mapping, _, (q, v, a) = setup(seed, floating)
    ours = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY)
    tau = pin.rnea(model, data, mapping.q(q), mapping.v(v), mapping.v(a))
    check("torques", ours.torques, mapping.ours(tau))
    assert ours.joint_wrenches.shape == (len(robot.joint_names), 6)
    check("joint wrenches", ours.joint_wrenches, mapping.joint_wrenches(data))


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_torques_are_joint_wrenches_along_the_motion_subspace(seed, floating):
    """No Pinocchio: a spherical joint's 3 torques are its joint wrench's moment ``(nx, ny, nz)``; a planar joint's
    are ``(fx, fy, nz)``; a revolute / prismatic joint's the moment / force along its axis."""
    robot, _, _, _, _, (q, v, a) = setup(seed, floating)
    ours = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY)
    for k, name in enumerate(robot.joint_names):
        joint, start = robot.joints[name], robot.idx_v[name]
        wrench = ours.joint_wrenches[k]
        axis = np.asarray(joint.axis, float)
        expected = {"spherical": wrench[3:6], "planar": wrench[[0, 1, 5]],
                    "prismatic": [axis @ wrench[:3]]}.get(joint.type, [axis @ wrench[3:]])
        check(name, ours.torques[start:start + len(expected)], expected)


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_mass_matrix(seed, floating):
    robot, model, data, mapping, _, (q, _, _) = setup(seed, floating)
    M = rd.mass_matrix(robot, q)
    check("M", M, mapping.ours(symmetric(pin.crba(model, data, mapping.q(q)))))
    assert np.linalg.eigvalsh(M).min() > 0.0


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_forward_dynamics(seed, floating):
    robot, model, data, mapping, _, (q, v, tau) = setup(seed, floating)
    reference = pin.aba(model, data, mapping.q(q), mapping.v(v), mapping.v(tau))
    check("accelerations", rd.forward_dynamics(robot, q, v, tau, gravity=TILTED_GRAVITY), mapping.ours(reference))


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_inverse_dynamics_derivatives(seed, floating):
    robot, model, data, mapping, _, (q, v, a) = setup(seed, floating)
    dq, dv, M = (np.array(x) for x in pin.computeRNEADerivatives(model, data, mapping.q(q), mapping.v(v),
                                                                  mapping.v(a)))
    ours = rd.inverse_dynamics_derivatives(robot, q, v, a, gravity=TILTED_GRAVITY)
    for name, value, exact in zip(("dtau_dq", "dtau_dv", "dtau_da"), ours,
                                  (mapping.ours(dq), mapping.ours(dv), mapping.ours(symmetric(M)))):
        assert np.shape(value) == (robot.nv, robot.nv), name
        check(name, value, exact, DERIVATIVE_TOLERANCE)


@pytest.mark.parametrize("seed, floating", CASES, ids=CASE_IDS)
def test_integrate_and_difference(seed, floating):
    """``integrate`` is ``pin.integrate`` (planar: the SE(2) exponential of the child-frame ``v``; spherical: the
    quaternion times ``exp(w)``; quaternions compared up to sign) and ``difference`` inverts it (increments below pi
    in rotation)."""
    robot, model, _, mapping, _, (q, v, _) = setup(seed, floating)
    v = v / 2.0  # |v| <= 1: every rotation increment below pi
    q1 = rd.integrate(robot, q, v)
    reference = pin.integrate(model, mapping.q(q), mapping.v(v))
    check("integrate", mapping.align_quaternions(reference, mapping.q(q1)), reference)
    check("difference", rd.difference(robot, q, q1), v)
    check("pin.difference", rd.difference(robot, q, q1), mapping.ours(pin.difference(model, mapping.q(q), reference)))
    neutral = rd.neutral(robot)
    check("neutral", mapping.q(neutral), pin.neutral(model))
