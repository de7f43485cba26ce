"""Inverse dynamics against closed forms derived by hand, and against invariants of statics and virtual work.

Every robot here is a URDF written in the test; every expected value comes from the equations written out below
(Lagrange for the planar arms, Newton-Euler on one body, geometric Jacobians, forward kinematics done with this
file's own rotation matrices), never from the package.
"""
import numpy as np
import pytest

import rne_dynamics as rd

G = 9.81
PLANAR_GRAVITY = (0.0, -G, 0.0)  # the planar arms move in the x-y plane, gravity along -y
TILTED_GRAVITY = (1.7, -2.3, -9.1)


def assert_close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-11, atol=1e-11)


# ---------------------------------------------------------------- URDF text and rotations, written independently

def fmt(values):
    return " ".join(repr(float(v)) for v in np.atleast_1d(values))


def link(name, mass=None, com=(0, 0, 0), rpy=(0, 0, 0), inertia=(0, 0, 0, 0, 0, 0)):
    """A ``<link>``; ``inertia`` is ``ixx ixy ixz iyy iyz izz`` about the com, in the ``rpy``-rotated frame."""
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, ixy, ixz, iyy, iyz, izz = (repr(float(x)) for x in inertia)
    return (f'<link name="{name}"><inertial><origin xyz="{fmt(com)}" rpy="{fmt(rpy)}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial></link>')


def joint(name, kind, parent, child, xyz=(0, 0, 0), rpy=(0, 0, 0), axis=(0, 0, 1), extra=""):
    limit = '<limit lower="-3" upper="3" effort="100" velocity="10"/>' if kind in ("revolute", "prismatic") else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{fmt(xyz)}" rpy="{fmt(rpy)}"/><axis xyz="{fmt(axis)}"/>{limit}{extra}</joint>')


def load(*elements):
    return rd.load_urdf('<robot name="closed_form">' + "".join(elements) + "</robot>")


def rot_x(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def rot_y(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def rot_z(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def rpy_matrix(rpy):
    """URDF's fixed-axis roll, pitch, yaw: roll about x first, then pitch about y, then yaw about z."""
    return rot_z(rpy[2]) @ rot_y(rpy[1]) @ rot_x(rpy[0])


def matrix_rpy(R):
    """Inverse of :func:`rpy_matrix` (pitch within ±pi/2)."""
    return np.array([np.arctan2(R[2, 1], R[2, 2]), -np.arcsin(R[2, 0]), np.arctan2(R[1, 0], R[0, 0])])


def axis_rotation(u, angle):
    """Rotation by ``angle`` about the unit vector ``u``: ``I + sin K + (1 - cos) K^2``."""
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def spin(x):
    """``(w, 0, 0)`` and friends: a 3-vector along z, for the planar arms."""
    return np.array([0.0, 0.0, x])


def random_states(rng, n, dof, scale=1.5):
    return (rng.uniform(-scale, scale, (n, dof)) for _ in range(3))


# ---------------------------------------------------------------- planar 2R arm (Lagrange)

L1, C1, M1, I1 = 0.7, 0.3, 2.5, 0.11  # link length, com distance from its joint, mass, inertia about the com (z)
L2, C2, M2, I2 = 0.5, 0.2, 1.3, 0.05


def planar_arm(joint2_extra="", tool_rpy=None):
    """Two rods in the x-y plane, both joints about z; joint 2 at the end of link 1; optional tool at link 2's end."""
    elements = [
        link("base"),
        link("link1", M1, (C1, 0, 0), inertia=(0.01, 0, 0, I1, 0, I1)),
        link("link2", M2, (C2, 0, 0), inertia=(0.004, 0, 0, I2, 0, I2)),
        joint("joint1", "revolute", "base", "link1"),
        joint("joint2", "revolute", "link1", "link2", xyz=(L1, 0, 0), extra=joint2_extra),
    ]
    if tool_rpy is not None:
        elements += [link("tool"), joint("tool_joint", "fixed", "link2", "tool", xyz=(L2, 0, 0.1), rpy=tool_rpy)]
    return load(*elements)


def planar_arm_torques(q1, q2, qd1, qd2, qdd1, qdd2):
    """tau = M(q) qdd + C(q, qd) qd + g(q) of the planar 2R arm, gravity g along -y, angles from the x axis."""
    c2 = np.cos(q2)
    M11 = M1 * C1**2 + I1 + M2 * (L1**2 + C2**2 + 2 * L1 * C2 * c2) + I2
    M12 = M2 * (C2**2 + L1 * C2 * c2) + I2
    M22 = M2 * C2**2 + I2
    h = M2 * L1 * C2 * np.sin(q2)
    g1 = (M1 * C1 + M2 * L1) * G * np.cos(q1) + M2 * C2 * G * np.cos(q1 + q2)
    g2 = M2 * C2 * G * np.cos(q1 + q2)
    tau1 = M11 * qdd1 + M12 * qdd2 - h * (2 * qd1 * qd2 + qd2**2) + g1
    tau2 = M12 * qdd1 + M22 * qdd2 + h * qd1**2 + g2
    return np.stack([tau1, tau2], axis=-1)


def unit(angle):
    return np.array([np.cos(angle), np.sin(angle), 0.0])


def normal(angle):
    return np.array([-np.sin(angle), np.cos(angle), 0.0])


def point_acceleration(length, angle, rate, acceleration):
    """Acceleration of a point at ``length`` along a rod at ``angle``: tangential minus centripetal."""
    return length * (acceleration * normal(angle) - rate**2 * unit(angle))


def test_planar_arm_torques():
    robot = planar_arm()
    assert robot.joint_names == ("joint1", "joint2")
    q, qd, qdd = random_states(np.random.default_rng(0), 10, 2)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(result.torques, planar_arm_torques(*q.T, *qd.T, *qdd.T))


def test_planar_arm_terms_separately():
    """Gravity alone, then Coriolis/centripetal alone, then inertia alone (each can be wrong on its own)."""
    robot = planar_arm()
    q = np.array([0.4, -1.1])
    zero = np.zeros(2)
    gravity_only = rd.inverse_dynamics(robot, q, zero, zero, gravity=PLANAR_GRAVITY).torques
    assert_close(gravity_only, [(M1 * C1 + M2 * L1) * G * np.cos(0.4) + M2 * C2 * G * np.cos(-0.7),
                                M2 * C2 * G * np.cos(-0.7)])
    qd = np.array([1.3, -0.8])
    velocity_only = rd.inverse_dynamics(robot, q, qd, zero, gravity=(0, 0, 0)).torques
    h = M2 * L1 * C2 * np.sin(-1.1)
    assert_close(velocity_only, [-h * (2 * 1.3 * -0.8 + 0.8**2), h * 1.3**2])
    qdd = np.array([0.0, 2.0])
    inertial_only = rd.inverse_dynamics(robot, q, zero, qdd, gravity=(0, 0, 0)).torques
    assert_close(inertial_only, 2.0 * np.array([M2 * (C2**2 + L1 * C2 * np.cos(-1.1)) + I2, M2 * C2**2 + I2]))


def test_planar_arm_joint_wrenches():
    """Newton on each rod: the force across joint 2 moves link 2's com; across joint 1, both coms."""
    robot = planar_arm()
    rng = np.random.default_rng(1)
    g = np.array(PLANAR_GRAVITY)
    for q, qd, qdd in zip(*random_states(rng, 5, 2)):
        result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=g)
        a1 = point_acceleration(C1, q[0], qd[0], qdd[0])
        a2 = point_acceleration(L1, q[0], qd[0], qdd[0]) + point_acceleration(C2, q.sum(), qd.sum(), qdd.sum())
        f2 = M2 * (a2 - g)
        f1 = M1 * (a1 - g) + f2
        wrenches = result.joint_wrenches
        assert_close(wrenches[1, :3], rot_z(q.sum()).T @ f2)  # child (link 2) frame
        assert_close(wrenches[0, :3], rot_z(q[0]).T @ f1)
        assert_close(wrenches[:, 5], result.torques)  # moment about z (the axis) is the torque
        # planar motion: no moment about x or y from in-plane forces on an in-plane arm whose inertia is diagonal
        assert_close(wrenches[:, 3:5], np.zeros((2, 2)))


# ---------------------------------------------------------------- a single prismatic joint

COM = np.array([0.12, -0.05, 0.3])


def test_vertical_prismatic():
    """Lifting a mass m: tau = m (qdd + g); the force is all vertical; its moment about the joint is com x f."""
    m = 3.2
    robot = load(link("base"), link("slider", m, COM, inertia=(0.1, 0, 0, 0.1, 0, 0.1)),
                 joint("lift", "prismatic", "base", "slider", xyz=(0.5, 0.2, 0.1), axis=(0, 0, 1)))
    q, qd, qdd = random_states(np.random.default_rng(2), 6, 1)
    result = rd.inverse_dynamics(robot, q, qd, qdd)
    assert_close(result.torques[:, 0], m * (qdd[:, 0] + G))
    f = np.zeros((6, 3))
    f[:, 2] = m * (qdd[:, 0] + G)
    assert_close(result.joint_wrenches[:, 0, :3], f)
    assert_close(result.joint_wrenches[:, 0, 3:], np.cross(COM, f))


def test_horizontal_prismatic():
    """Pushing a mass sideways: tau = m qdd, gravity carried by the joint's reaction force (axis given unnormalised)."""
    m = 1.9
    robot = load(link("base"), link("cart", m, COM, inertia=(0.1, 0, 0, 0.1, 0, 0.1)),
                 joint("push", "prismatic", "base", "cart", axis=(2, 0, 0)))
    q, qd, qdd = random_states(np.random.default_rng(3), 6, 1)
    result = rd.inverse_dynamics(robot, q, qd, qdd)
    assert_close(result.torques[:, 0], m * qdd[:, 0])
    f = np.stack([m * qdd[:, 0], np.zeros(6), np.full(6, m * G)], axis=-1)
    assert_close(result.joint_wrenches[:, 0, :3], f)
    assert_close(result.joint_wrenches[:, 0, 3:], np.cross(COM, f))


# ---------------------------------------------------------------- a branched tree

SLIDER_MASS = 4.1
SLIDER_ORIGIN = np.array([0.4, 0.0, 0.2])
SLIDER_COM = np.array([0.05, 0.1, -0.02])


def two_branches():
    """The planar arm on one side of a fixed base; a vertical (along +y, against gravity) slider on the other."""
    return load(link("base"), link("link1", M1, (C1, 0, 0), inertia=(0.01, 0, 0, I1, 0, I1)),
                link("link2", M2, (C2, 0, 0), inertia=(0.004, 0, 0, I2, 0, I2)),
                link("slider", SLIDER_MASS, SLIDER_COM, inertia=(0.02, 0, 0, 0.03, 0, 0.04)),
                joint("joint1", "revolute", "base", "link1"),
                joint("slide", "prismatic", "base", "slider", xyz=SLIDER_ORIGIN, axis=(0, 1, 0)),
                joint("joint2", "revolute", "link1", "link2", xyz=(L1, 0, 0)))


def test_branched_tree_each_branch_on_its_own():
    robot = two_branches()
    arm = [robot.joint_index("joint1"), robot.joint_index("joint2")]
    slide = robot.joint_index("slide")
    q, qd, qdd = random_states(np.random.default_rng(4), 8, 3)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(result.torques[:, arm], planar_arm_torques(*q[:, arm].T, *qd[:, arm].T, *qdd[:, arm].T))
    assert_close(result.torques[:, slide], SLIDER_MASS * (qdd[:, slide] + G))
    # the other branch's motion changes nothing
    moved = [x.copy() for x in (q, qd, qdd)]
    for x in moved:
        x[:, slide] += 0.7
    again = rd.inverse_dynamics(robot, *moved, gravity=PLANAR_GRAVITY)
    assert_close(again.torques[:, arm], result.torques[:, arm])
    assert not np.allclose(again.torques[:, slide], result.torques[:, slide])


def test_branched_tree_base_wrench_is_the_weight():
    """Static: the base holds the total weight, and its moment about the root origin is sum(com_i x m_i (-g))."""
    robot = two_branches()
    rng = np.random.default_rng(5)
    g = np.array(PLANAR_GRAVITY)
    for q in rng.uniform(-2, 2, (4, 3)):
        q1, q2, s = q[robot.joint_index("joint1")], q[robot.joint_index("joint2")], q[robot.joint_index("slide")]
        coms = [C1 * unit(q1), L1 * unit(q1) + C2 * unit(q1 + q2), SLIDER_ORIGIN + [0, s, 0] + SLIDER_COM]
        masses = [M1, M2, SLIDER_MASS]
        base = rd.inverse_dynamics(robot, q, np.zeros(3), np.zeros(3), gravity=g).base_wrench
        assert_close(base[:3], -sum(masses) * g)
        assert_close(base[3:], sum(np.cross(c, -m * g) for c, m in zip(coms, masses)))


# ---------------------------------------------------------------- an external force at the tool: tau = -J^T F

TOOL_RPY = (0.3, -0.5, 0.9)


def test_tool_force_planar_jacobian():
    """J of the tool point written from the geometry; a force F and moment M on the tool (world frame) are held by
    tau = -(J_v^T F + J_w^T M), on top of whatever the motion and gravity need."""
    robot = planar_arm(tool_rpy=TOOL_RPY)
    rng = np.random.default_rng(6)
    for q, qd, qdd in zip(*random_states(rng, 5, 2)):
        F, M = rng.normal(size=3) * 10, rng.normal(size=3)
        s1, c1, s12, c12 = np.sin(q[0]), np.cos(q[0]), np.sin(q.sum()), np.cos(q.sum())
        J_v = np.array([[-L1 * s1 - L2 * s12, -L2 * s12], [L1 * c1 + L2 * c12, L2 * c12], [0, 0]])
        J_w = np.array([[0, 0], [0, 0], [1, 1]])
        R_tool = rot_z(q.sum()) @ rpy_matrix(TOOL_RPY)
        wrench = np.concatenate([R_tool.T @ F, R_tool.T @ M])  # tool frame
        static = rd.inverse_dynamics(robot, q, np.zeros(2), np.zeros(2), gravity=(0, 0, 0),
                                     external_wrenches={"tool": wrench})
        assert_close(static.torques, -(J_v.T @ F + J_w.T @ M))
        loaded = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY, external_wrenches={"tool": wrench})
        assert_close(loaded.torques, planar_arm_torques(*q, *qd, *qdd) - (J_v.T @ F + J_w.T @ M))


# ---------------------------------------------------------------- a random spatial chain, forward kinematics by hand

KINDS = ("revolute", "revolute", "prismatic", "continuous", "revolute", "prismatic")
CHAIN_TOOL_XYZ, CHAIN_TOOL_RPY = np.array([0.1, -0.2, 0.15]), (0.2, 0.4, -0.3)


def random_chain(seed, kinds=KINDS, first_rpy=True):
    """A serial chain with random joint origins, axes (unnormalised) and full inertias (com frame rotated).

    Returns ``(spec, elements)``: per joint a dict of what was written, and the URDF elements with a massless
    root ``base`` and a fixed ``tool`` on the last link.
    """
    rng = np.random.default_rng(seed)
    spec, elements = [], [link("base")]
    parent = "base"
    for k, kind in enumerate(kinds):
        spread = rng.uniform(0.01, 0.1, 3)  # mass-weighted squares of the extent along each principal axis
        moments = spread.sum() - spread  # Ixx = syy + szz and so on: a real body's moments
        item = dict(kind=kind, name=f"j{k}", child=f"l{k}", xyz=rng.uniform(-0.4, 0.4, 3),
                    rpy=rng.uniform(-1.5, 1.5, 3) if (k or first_rpy) else np.zeros(3),
                    axis=rng.normal(size=3) * rng.uniform(0.5, 3), mass=rng.uniform(0.5, 4.0),
                    com=rng.uniform(-0.2, 0.2, 3), com_rpy=rng.uniform(-1.5, 1.5, 3))
        if k == 0 and not first_rpy:
            item["axis"] = np.array([0.0, 0.0, 1.7])
        elements += [link(item["child"], item["mass"], item["com"], item["com_rpy"],
                          (moments[0], 0, 0, moments[1], 0, moments[2])),
                     joint(item["name"], kind, parent, item["child"], item["xyz"], item["rpy"], item["axis"])]
        spec.append(item)
        parent = item["child"]
    elements += [link("tool"), joint("tool_joint", "fixed", parent, "tool", CHAIN_TOOL_XYZ, CHAIN_TOOL_RPY)]
    return spec, elements


def forward_kinematics(spec, q):
    """World pose ``(R, p)`` of each child link, and of the tool."""
    R, p, poses = np.eye(3), np.zeros(3), []
    for item, x in zip(spec, q):
        R, p = R @ rpy_matrix(item["rpy"]), p + R @ item["xyz"]
        u = item["axis"] / np.linalg.norm(item["axis"])
        if item["kind"] == "prismatic":
            p = p + R @ u * x
        else:
            R = R @ axis_rotation(u, x)
        poses.append((R, p))
    tool = (R @ rpy_matrix(CHAIN_TOOL_RPY), p + R @ CHAIN_TOOL_XYZ)
    return poses, tool


def test_joint_wrench_along_axis_is_the_torque():
    """Revolute: the moment about the axis; prismatic: the force along it (moving, tilted gravity, a tool load)."""
    spec, elements = random_chain(7)
    robot = load(*elements)
    assert robot.joint_names == tuple(item["name"] for item in spec)
    q, qd, qdd = random_states(np.random.default_rng(7), 10, len(spec))
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY,
                                 external_wrenches={"tool": [3.0, -1.0, 2.0, 0.5, 0.1, -0.4]})
    for k, item in enumerate(spec):
        u = item["axis"] / np.linalg.norm(item["axis"])
        part = slice(0, 3) if item["kind"] == "prismatic" else slice(3, 6)
        assert_close(result.joint_wrenches[:, k, part] @ u, result.torques[:, k])


@pytest.mark.parametrize("first_rpy", [False, True])
def test_static_base_joint_carries_the_weight(first_rpy):
    """Static: the first joint's force is the weight of everything it carries, straight up (seen in its child frame);
    with a z axis and no origin rotation the child frame's z is the world's."""
    spec, elements = random_chain(8, first_rpy=first_rpy)
    robot = load(*elements)
    weight = G * sum(item["mass"] for item in spec)
    rng = np.random.default_rng(8)
    for q in rng.uniform(-2, 2, (4, len(spec))):
        force = rd.inverse_dynamics(robot, q, np.zeros(len(q)), np.zeros(len(q))).joint_wrenches[0, :3]
        R_first = forward_kinematics(spec, q)[0][0][0]
        assert_close(R_first @ force, [0, 0, weight])
        if not first_rpy:
            assert_close(force, [0, 0, weight])


def test_static_base_wrench_is_the_weight():
    """Static: ``base_wrench`` is the total weight upwards, its moment about the root origin sum(com_i x m_i g_up)."""
    spec, elements = random_chain(9)
    robot = load(*elements)
    rng = np.random.default_rng(9)
    q = rng.uniform(-2, 2, (5, len(spec)))
    base = rd.inverse_dynamics(robot, q, np.zeros_like(q), np.zeros_like(q)).base_wrench
    for n in range(len(q)):
        poses, _ = forward_kinematics(spec, q[n])
        up = [np.array([0, 0, item["mass"] * G]) for item in spec]
        assert_close(base[n, :3], sum(up))
        assert_close(base[n, 3:], sum(np.cross(p + R @ item["com"], f) for (R, p), item, f in zip(poses, spec, up)))


def test_tool_wrench_is_held_by_minus_jacobian_transpose():
    """Spatial version: J from the forward kinematics (revolute column [u x (p_tool - p_j); u], prismatic [u; 0]);
    the torques added by a tool wrench (world F, M) are -J^T [F; M] in any state."""
    spec, elements = random_chain(10)
    robot = load(*elements)
    rng = np.random.default_rng(10)
    for q, qd, qdd in zip(*random_states(rng, 4, len(spec))):
        poses, (R_tool, p_tool) = forward_kinematics(spec, q)
        J = np.zeros((6, len(spec)))
        for k, ((R, p), item) in enumerate(zip(poses, spec)):
            u = R @ (item["axis"] / np.linalg.norm(item["axis"]))
            J[:, k] = np.r_[u, 0, 0, 0] if item["kind"] == "prismatic" else np.r_[np.cross(u, p_tool - p), u]
        F, M = rng.normal(size=3) * 10, rng.normal(size=3)
        wrench = np.r_[R_tool.T @ F, R_tool.T @ M]
        free = rd.inverse_dynamics(robot, q, qd, qdd).torques
        loaded = rd.inverse_dynamics(robot, q, qd, qdd, external_wrenches={"tool": wrench}).torques
        assert_close(loaded - free, -J.T @ np.r_[F, M])


# ---------------------------------------------------------------- fixed joints and inertial frames

def rotated_inertia(rpy, moments):
    R = rpy_matrix(rpy)
    return R @ np.diag(moments) @ R.T


def test_fixed_joint_lumping():
    """A body written as two links welded by a fixed joint (each with a rotated inertial frame) equals the one link
    whose mass, com and inertia are combined by hand (parallel-axis theorem); the next joint hangs off the second
    link, so its origin composes with the weld's."""
    m1, c1, rpy1, D1 = 2.0, np.array([0.1, 0.05, -0.2]), (0.3, 0.6, -0.2), (0.05, 0.07, 0.09)
    m2, c2, rpy2, D2 = 1.2, np.array([-0.1, 0.2, 0.05]), (-0.7, 0.1, 1.2), (0.02, 0.03, 0.04)
    weld_xyz, weld_rpy = np.array([0.2, -0.3, 0.4]), (0.5, -0.4, 0.8)
    next_xyz, next_rpy = np.array([0.1, 0.15, -0.25]), (-0.3, 0.9, 0.2)
    hand = link("hand", 0.8, (0.05, 0, 0.1), (0.2, 0, 0), (0.01, 0, 0, 0.012, 0, 0.014))
    first = joint("j1", "revolute", "base", "upper", (0, 0, 0.3), (0.2, 0.1, 0), (0.3, 0.5, 0.8))
    split = load(link("base"), link("upper", m1, c1, rpy1, (D1[0], 0, 0, D1[1], 0, D1[2])),
                 link("lower", m2, c2, rpy2, (D2[0], 0, 0, D2[1], 0, D2[2])), hand, first,
                 joint("weld", "fixed", "upper", "lower", weld_xyz, weld_rpy),
                 joint("j2", "revolute", "lower", "hand", next_xyz, next_rpy, (1, -0.4, 0.2)))

    R_w = rpy_matrix(weld_rpy)
    parts = [(m1, c1, rotated_inertia(rpy1, D1)), (m2, weld_xyz + R_w @ c2, R_w @ rotated_inertia(rpy2, D2) @ R_w.T)]
    mass = m1 + m2
    com = (m1 * parts[0][1] + m2 * parts[1][1]) / mass
    I = sum(I_c + m * ((c - com) @ (c - com) * np.eye(3) - np.outer(c - com, c - com)) for m, c, I_c in parts)
    merged_inertia = (I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2])
    merged = load(link("base"), link("upper", mass, com, inertia=merged_inertia), hand, first,
                  joint("j2", "revolute", "upper", "hand", weld_xyz + R_w @ next_xyz,
                        matrix_rpy(R_w @ rpy_matrix(next_rpy)), (1, -0.4, 0.2)))

    q, qd, qdd = random_states(np.random.default_rng(11), 6, 2)
    push = np.array([2.0, -1.0, 3.0, 0.3, -0.2, 0.5])  # on 'lower', its frame; the same load seen from 'upper':
    push_upper = np.r_[R_w @ push[:3], R_w @ push[3:] + np.cross(weld_xyz, R_w @ push[:3])]
    a = rd.inverse_dynamics(split, q, qd, qdd, gravity=TILTED_GRAVITY, external_wrenches={"lower": push})
    b = rd.inverse_dynamics(merged, q, qd, qdd, gravity=TILTED_GRAVITY, external_wrenches={"upper": push_upper})
    assert_close(a.torques, b.torques)
    assert_close(a.joint_wrenches, b.joint_wrenches)
    plain = rd.inverse_dynamics(split, q, qd, qdd, gravity=TILTED_GRAVITY)
    assert not np.allclose(plain.torques, a.torques)  # the push is felt


def test_inertial_rpy_honoured():
    """One body spinning about z through its com: tau = I'_zz qdd and n = I' e_z qdd + (qd e_z) x (I' e_z qd),
    with I' = R D R^T the inertia rotated by the inertial rpy; the force only carries the weight."""
    rpy, D, m = (0.4, -0.7, 1.1), (0.3, 0.2, 0.15), 2.0
    robot = load(link("base"), link("rotor", m, (0, 0, 0), rpy, (D[0], 0, 0, D[1], 0, D[2])),
                 joint("spin", "continuous", "base", "rotor"))
    I = rotated_inertia(rpy, D)
    for q, qd, qdd in zip(*random_states(np.random.default_rng(12), 5, 1)):
        result = rd.inverse_dynamics(robot, q, qd, qdd)
        w = spin(qd[0])
        assert_close(result.torques, [I[2, 2] * qdd[0]])
        assert_close(result.joint_wrenches[0, 3:], I[:, 2] * qdd[0] + np.cross(w, I @ w))
        assert_close(result.joint_wrenches[0, :3], [0, 0, m * G])
    assert abs(I[2, 2] - D[2]) > 1e-3  # the rotation matters: ignoring rpy would fail


# ---------------------------------------------------------------- mimic joints (virtual work)

def test_mimic_planar_arm():
    """Joint 2 follows joint 1: q2 = k q1 + o. By virtual work, tau_src = tau1 + k tau2 of the free arm at
    (q1, k q1 + o), (qd1, k qd1), (qdd1, k qdd1)."""
    k, o = -0.6, 0.25
    robot = planar_arm(f'<mimic joint="joint1" multiplier="{k}" offset="{o}"/>')
    assert robot.joint_names == ("joint1",)
    q, qd, qdd = random_states(np.random.default_rng(13), 8, 1)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    free = planar_arm_torques(q[:, 0], k * q[:, 0] + o, qd[:, 0], k * qd[:, 0], qdd[:, 0], k * qdd[:, 0])
    assert_close(result.torques[:, 0], free[:, 0] + k * free[:, 1])


def test_mimic_gripper_fingers():
    """Two vertical fingers, the second mirroring the first (multiplier -1): tau = m1 (qdd + g) - m2 (-qdd + g)."""
    m1, m2 = 0.3, 0.45
    robot = load(link("hand"), link("left", m1, (0, 0.02, 0.03), inertia=(1e-4, 0, 0, 1e-4, 0, 1e-4)),
                 link("right", m2, (0, -0.02, 0.03), inertia=(1e-4, 0, 0, 1e-4, 0, 1e-4)),
                 joint("left_finger", "prismatic", "hand", "left", (0, 0.05, 0)),
                 joint("right_finger", "prismatic", "hand", "right", (0, -0.05, 0),
                       extra='<mimic joint="left_finger" multiplier="-1"/>'))
    assert robot.joint_names == ("left_finger",)
    q, qd, qdd = random_states(np.random.default_rng(14), 6, 1)
    result = rd.inverse_dynamics(robot, q, qd, qdd)
    assert_close(result.torques[:, 0], (m1 + m2) * qdd[:, 0] + (m1 - m2) * G)


def test_mimic_equals_free_chain_by_virtual_work():
    """A spatial chain with joint j3 mimicking j1 (k, o) against the same chain with j3 free."""
    k, o = 1.7, -0.3
    _, elements = random_chain(15)
    free = load(*elements)
    mimic = f'<mimic joint="j1" multiplier="{k}" offset="{o}"/>'
    elements = [e.replace("</joint>", mimic + "</joint>") if 'name="j3"' in e else e for e in elements]
    robot = load(*elements)
    assert robot.joint_names == ("j0", "j1", "j2", "j4", "j5")
    keep = [0, 1, 2, 4, 5]
    q, qd, qdd = random_states(np.random.default_rng(15), 6, 5)

    def expand(x, offset):
        full = np.zeros((len(x), 6))
        full[:, keep] = x
        full[:, 3] = k * x[:, 1] + offset
        return full

    tau_free = rd.inverse_dynamics(free, expand(q, o), expand(qd, 0), expand(qdd, 0), gravity=TILTED_GRAVITY).torques
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY).torques
    expected = tau_free[:, keep]
    expected[:, 1] += k * tau_free[:, 3]
    assert_close(tau, expected)


# ---------------------------------------------------------------- continuous joints, joint friction

PENDULUM_MASS, PENDULUM_COM, PENDULUM_INERTIA = 1.4, 0.35, 0.02


def pendulum(kind="continuous", dynamics=""):
    return load(link("base"), link("bob", PENDULUM_MASS, (PENDULUM_COM, 0, 0), inertia=(0.001, 0, 0, 0.02, 0, 0.02)),
                joint("swing", kind, "base", "bob", extra=dynamics))


def pendulum_torque(q, qd, qdd):
    return (PENDULUM_INERTIA + PENDULUM_MASS * PENDULUM_COM**2) * qdd + PENDULUM_MASS * G * PENDULUM_COM * np.cos(q)


def test_continuous_joint_is_one_angle():
    robot = pendulum()
    assert robot.dof == 1
    q = np.array([[7.3], [7.3 - 2 * np.pi], [-11.0]])  # beyond ±pi: no wrapping needed, no cos/sin pair
    qd, qdd = np.full((3, 1), 0.8), np.full((3, 1), -1.2)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(result.torques[:, 0], pendulum_torque(q[:, 0], 0.8, -1.2))
    assert_close(result.torques[0], result.torques[1])
    revolute = rd.inverse_dynamics(pendulum("revolute"), q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(revolute.torques, result.torques)


def test_urdf_damping_and_friction_add_to_torques():
    """tau = rigid-body torque + damping qd + friction sign(qd). The joint wrench stays the rigid-body one (what
    Pinocchio's data.f reports too)."""
    damping, friction = 0.4, 0.7
    robot = pendulum(dynamics=f'<dynamics damping="{damping}" friction="{friction}"/>')
    q = np.array([[0.3], [0.3], [-2.0]])
    qd = np.array([[1.3], [-1.3], [0.2]])
    qdd = np.array([[0.5], [0.5], [-3.0]])
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    expected = pendulum_torque(q[:, 0], qd[:, 0], qdd[:, 0]) + damping * qd[:, 0] + friction * np.sign(qd[:, 0])
    assert_close(result.torques[:, 0], expected)
    rigid = rd.inverse_dynamics(pendulum(), q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(result.joint_wrenches, rigid.joint_wrenches)
