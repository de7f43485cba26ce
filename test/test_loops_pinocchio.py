"""Closed-loop dynamics against Pinocchio's constrained dynamics (``pin.constraintDynamics`` with
``RigidConstraintModel`` ``CONTACT_3D``; its proximal solver for redundant constraints) on the four-bar, a five-bar,
a delta robot and a Gough-Stewart platform: tree accelerations and cut wrenches to 1e-8. A point cut is one
``CONTACT_3D``; a revolute cut two on its axis (their sum is the cut's force and moment). Also the Gough-Stewart
statics against ``J^-T w`` and its platform inverse and direct dynamics."""
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

import rne_dynamics as rd
from oracle import FloatingMapping


def platform_anchors(mechanism, robot, q):
    """``(B, P)`` ``(6, 3)`` each: base and platform anchors of a ``rd.gough_stewart`` robot in the world at ``q``."""
    T = rd.frame_placement(robot, q, "platform")
    base = [rd.frame_placement(robot, q, f"cardan_{k}")[:3, 3] for k in range(1, 7)]
    platform = [rd.frame_placement(robot, q, "platform_ball")[:3, 3]]
    platform += [T[:3, :3] @ np.array(loop["xyz_b"]) + T[:3, 3] for loop in mechanism.loops["loops"]]
    return np.array(base), np.array(platform)


AXIAL_OFFSET = 0.05  # the two points of a revolute cut, either side of its origin on the axis


def pinocchio_model(urdf):
    """The URDF tree built joint by joint in Pinocchio (its URDF reader knows no spherical joint); ``(model,
    {link: (joint id, link placement in the joint frame)})``."""
    root = ET.fromstring(urdf)
    inertias = {}
    for link in root.findall("link"):
        inertial = link.find("inertial")
        if inertial is not None:
            I = inertial.find("inertia").attrib
            xx, xy, xz, yy, yz, zz = (float(I[k]) for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"))
            com = np.array([float(x) for x in inertial.find("origin").get("xyz").split()])
            inertias[link.get("name")] = pin.Inertia(float(inertial.find("mass").get("value")), com,
                                                     np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))
    model = pin.Model()
    frames = {root.find("link").get("name"): (0, pin.SE3.Identity())}
    for joint in root.findall("joint"):
        parent, child = joint.find("parent").get("link"), joint.find("child").get("link")
        pid, M = frames[parent]
        placement = M * pin.SE3(np.eye(3), np.array([float(x) for x in joint.find("origin").get("xyz").split()]))
        kind = joint.get("type")
        if kind == "fixed":
            frames[child] = (pid, placement)
            if child in inertias:
                model.appendBodyToJoint(pid, inertias[child], placement)
            continue
        axis = np.array([float(x) for x in joint.find("axis").get("xyz").split()]) if kind != "spherical" else None
        joint_model = {"revolute": lambda: pin.JointModelRevoluteUnaligned(axis / np.linalg.norm(axis)),
                       "prismatic": lambda: pin.JointModelPrismaticUnaligned(axis / np.linalg.norm(axis)),
                       "spherical": pin.JointModelSpherical}[kind]()
        jid = model.addJoint(pid, joint_model, placement, joint.get("name"))
        frames[child] = (jid, pin.SE3.Identity())
        if child in inertias:
            model.appendBodyToJoint(jid, inertias[child], pin.SE3.Identity())
    model.gravity.linear = np.array([0.0, 0.0, -9.81])
    return model, frames


def pinocchio_constraints(model, frames, robot):
    """``[(closure, [(constraint model, offset along the cut's axis)])]``: one CONTACT_3D per point cut, two per
    revolute cut."""
    out = []
    for closure in robot.loops.closures:
        points = [0.0] if closure.kind == "point" else [-AXIAL_OFFSET, AXIAL_OFFSET]
        pairs = []
        for offset in points:
            shift = offset * (closure.axis if closure.axis is not None else np.zeros(3))
            ja, Ma = frames[closure.link_a]
            jb, Mb = frames[closure.link_b]
            pa = Ma * pin.SE3(closure.R_a, closure.p_a + closure.R_a @ shift)
            pb = Mb * pin.SE3(closure.R_b, closure.p_b + closure.R_b @ shift)
            pairs.append((pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, ja, pa, jb, pb,
                                                   pin.ReferenceFrame.LOCAL), offset))
        out.append((closure, pairs))
    return out


def pinocchio_dynamics(robot, model, frames, q, qd, tau):
    """Pinocchio's tree accelerations (ours ordering) and each cut's wrench ON link_b BY link_a in world axes,
    about the cut origin."""
    mapping = FloatingMapping(robot, model)
    constraints = pinocchio_constraints(model, frames, robot)
    models = [m for _, pairs in constraints for m, _ in pairs]
    vector = pin.StdVec_RigidConstraintModel()
    for m in models:
        vector.append(m)
    datas = pin.StdVec_RigidConstraintData()
    for m in models:
        datas.append(m.createData())
    data = model.createData()
    pin.initConstraintDynamics(model, data, vector, datas)
    settings = pin.ProximalSettings(1e-14, 1e-8, 200)  # proximal: redundant constraints get a minimum-norm force
    qdd = pin.constraintDynamics(model, data, mapping.q(q), mapping.v(qd), mapping.v(tau), vector, datas, settings)
    forces = np.asarray(data.lambda_c).reshape(-1, 3)
    wrenches, k = {}, 0
    for closure, pairs in constraints:
        w = np.zeros(6)
        for m, offset in pairs:
            oMc = data.oMi[m.joint1_id] * m.joint1_placement
            f = -oMc.rotation @ forces[k]  # lambda acts on link_a's side: ON link_b is the opposite
            arm = oMc.rotation @ (offset * closure.axis) if closure.axis is not None else np.zeros(3)
            w += np.concatenate([f, np.cross(arm, f)])
            k += 1
        wrenches[closure.name] = w
    return mapping.ours(qdd), wrenches


def undetermined_directions(robot, q):
    """Per closure, an orthonormal basis (cut frame on link_b) of the wrench components that redundant constraints
    leave undetermined: ``K N`` with ``N`` the null space of ``J^T``."""
    c = rd.loop_constraints(robot, q)
    U, s, _ = np.linalg.svd(c.jacobian)
    null = U[:, int((s > 1e-9 * s[0]).sum()):]
    out = {}
    for closure in robot.loops.closures:
        directions = closure.selection @ null[c.rows[closure.name]]
        basis, sv, _ = np.linalg.svd(directions, full_matrices=False) if directions.size else (np.zeros((6, 0)),
                                                                                              np.zeros(0), None)
        out[closure.name] = basis[:, sv > 1e-9]
    return out


MECHANISMS = {"four_bar": lambda: rd.four_bar(cut="point"), "four_bar_revolute": rd.four_bar,
              "five_bar": lambda: rd.five_bar(cut="point"), "five_bar_revolute": rd.five_bar,
              "delta": rd.delta_robot, "gough_stewart": rd.gough_stewart}


def load(mechanism):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mechanism.load()


@pytest.mark.parametrize("name", list(MECHANISMS))
def test_matches_pinocchio_constraint_dynamics(name):
    mechanism = MECHANISMS[name]()
    robot = load(mechanism)
    model, frames = pinocchio_model(mechanism.urdf)
    rng = np.random.default_rng(4)
    n = len(robot.actuated_joint_names)
    worst_qdd = worst_wrench = 0.0
    for _ in range(3):
        qa, qda, qdda = rng.uniform(-0.05, 0.05, n), rng.uniform(-1, 1, n), rng.uniform(-3, 3, n)
        ours = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda)
        tau = np.zeros(robot.nv)
        tau[[robot.idx_v[j] for j in robot.actuated_joint_names]] = ours.torques
        qdd, wrenches = pinocchio_dynamics(robot, model, frames, ours.q, ours.qd, tau)
        worst_qdd = max(worst_qdd, np.abs(qdd - ours.qdd).max() / max(1.0, np.abs(ours.qdd).max()))
        undetermined = undetermined_directions(robot, ours.q)
        for closure in robot.loops.closures:
            R_b = rd.frame_placement(robot, ours.q, closure.link_b)[:3, :3] @ closure.R_b
            w = ours.loop_wrenches[closure.name]
            theirs = np.concatenate([R_b.T @ wrenches[closure.name][:3], R_b.T @ wrenches[closure.name][3:]])
            difference = theirs - w
            U = undetermined[closure.name]  # components redundant constraints leave free: not compared
            difference -= U @ (U.T @ difference)
            worst_wrench = max(worst_wrench, np.abs(difference).max() / max(1.0, np.abs(w).max()))
    print(f"{name}: worst qdd {worst_qdd:.2e}, worst cut wrench {worst_wrench:.2e} (relative)")
    assert worst_qdd < 1e-8
    assert worst_wrench < 1e-8


def test_gough_stewart_statics_against_the_inverse_jacobian():
    """Static platform load ``w`` (on the platform, world axes, about its centre), no gravity: the leg forces are
    ``tau = -J^-T w`` with the inverse Jacobian's rows ``[u_i^T, (P_i - p) x u_i]`` (``ldot = J^-1 [v; omega]``)."""
    mechanism = rd.gough_stewart()
    robot = load(mechanism)
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(5):
        qa = rng.uniform(-0.05, 0.05, 6)
        q = rd.close_loops(robot, qa)
        T = rd.frame_placement(robot, q, "platform")
        w = rng.uniform(-100, 100, 6)
        local = np.concatenate([T[:3, :3].T @ w[:3], T[:3, :3].T @ w[3:]])
        result = rd.closed_loop_inverse_dynamics(robot, qa, np.zeros(6), np.zeros(6), gravity=np.zeros(3),
                                                 external_wrenches={"platform": local})
        B, P = platform_anchors(mechanism, robot, q)
        u = (P - B) / np.linalg.norm(P - B, axis=1)[:, None]
        J_inverse = np.hstack([u, np.cross(P - T[:3, 3], u)])
        expected = -np.linalg.solve(J_inverse.T, w)
        worst = max(worst, np.abs(result.torques - expected).max() / np.abs(expected).max())
    print(f"Gough-Stewart statics against -J^-T w: worst relative error {worst:.2e}")
    assert worst < 1e-10


def test_gough_stewart_platform_inverse_and_direct_dynamics():
    """Inverse dynamics from the platform's pose, twist and acceleration; the direct dynamics of the forces found
    gives that acceleration back; both agree with Pinocchio's constrained dynamics of the same forces."""
    mechanism = rd.gough_stewart()
    robot = load(mechanism)
    model, frames = pinocchio_model(mechanism.urdf)
    rng = np.random.default_rng(6)
    pose = rd.frame_placement(robot, rd.neutral(robot), "platform").copy()
    pose[:3, 3] += [0.02, -0.03, 0.05]
    pose[:3, :3] = pose[:3, :3] @ pin.rpy.rpyToMatrix(0.05, -0.04, 0.1)
    twist, acceleration = rng.uniform(-0.3, 0.3, 6), rng.uniform(-2, 2, 6)
    result = rd.platform_inverse_dynamics(robot, "platform", pose, twist, acceleration)
    assert np.allclose(rd.frame_placement(robot, result.q, "platform"), pose, atol=1e-10)
    assert np.allclose(rd.frame_velocity(robot, result.q, result.qd, "platform"), twist, atol=1e-10)
    assert np.allclose(rd.frame_acceleration(robot, result.q, result.qd, result.qdd, "platform"), acceleration,
                       atol=1e-9)
    qa = result.q[[robot.idx_q[j] for j in robot.actuated_joint_names]]
    qda = result.qd[[robot.idx_v[j] for j in robot.actuated_joint_names]]
    back = rd.platform_forward_dynamics(robot, "platform", qa, qda, result.torques, q_guess=result.q)
    assert np.abs(back - acceleration).max() < 1e-8
    tau = np.zeros(robot.nv)
    tau[[robot.idx_v[j] for j in robot.actuated_joint_names]] = result.torques
    qdd, _ = pinocchio_dynamics(robot, model, frames, result.q, result.qd, tau)
    assert np.allclose(rd.frame_acceleration(robot, result.q, result.qd, qdd, "platform"), acceleration, atol=1e-8)


def test_gough_stewart_equals_khalils_platform_and_legs_method():
    """Khalil 2010 eq. 66: ``Gamma = J_p^T [F_p + sum_i J_vi^T J_i^-T Gamma_i]`` with the platform's Newton-Euler
    wrench ``F_p`` (closed form for its disc), each leg's own inverse dynamics ``Gamma_i`` (its U and P joints),
    ``J_i`` its tip Jacobian, ``J_vi = [I, -P_i^]`` (eq. 65) and ``J_p^-1`` rows ``[u_i, P_i x u_i]``: equal to the
    ``G^T Gamma_tree`` projection."""
    mechanism = rd.gough_stewart()
    robot = load(mechanism)
    gravity = np.array([0.0, 0.0, -9.81])
    mass, radius = 10.0, 0.3
    rng = np.random.default_rng(7)
    worst = 0.0
    for _ in range(3):
        qa, qda, qdda = rng.uniform(-0.05, 0.05, 6), rng.uniform(-0.5, 0.5, 6), rng.uniform(-2, 2, 6)
        result = rd.closed_loop_inverse_dynamics(robot, qa, qda, qdda, gravity=gravity)
        q, qd, qdd = result.q, result.qd, result.qdd
        T = rd.frame_placement(robot, q, "platform")
        R, p = T[:3, :3], T[:3, 3]
        twist = rd.frame_velocity(robot, q, qd, "platform")
        acceleration = rd.frame_acceleration(robot, q, qd, qdd, "platform")
        omega = twist[3:]
        inertia = R @ np.diag([mass * radius ** 2 / 4, mass * radius ** 2 / 4, mass * radius ** 2 / 2]) @ R.T
        F_p = np.concatenate([mass * (acceleration[:3] - gravity),
                              inertia @ acceleration[3:] + np.cross(omega, inertia @ omega)])
        B, P = platform_anchors(mechanism, robot, q)
        u = (P - B) / np.linalg.norm(P - B, axis=1)[:, None]
        J_p = np.linalg.inv(np.hstack([u, np.cross(P - p, u)]))
        tree = result.tree_torques
        total = F_p.copy()
        for i in range(6):
            k = i + 1
            columns = [robot.idx_v[f"universal_{k}_a"], robot.idx_v[f"universal_{k}_b"], robot.idx_v[f"leg_{k}"]]
            Tk = rd.frame_placement(robot, q, f"piston_{k}")
            J = rd.frame_jacobian(robot, q, f"piston_{k}")
            r = P[i] - Tk[:3, 3]
            J_tip = np.vstack([J[:3] - skew(r) @ J[3:], J[3:]])  # piston_k at P_i
            gamma_i = tree[columns].copy()
            if k == 1:  # the tree hangs the platform on leg 1: take its wrench (about P_1) off leg 1's torques
                wrench_at_P1 = np.concatenate([F_p[:3], F_p[3:] + np.cross(p - P[0], F_p[:3])])
                gamma_i -= J_tip[:, columns].T @ wrench_at_P1
            f_i = np.linalg.solve(J_tip[:3, columns].T, gamma_i)  # J_i^-T Gamma_i
            total += np.concatenate([f_i, np.cross(P[i] - p, f_i)])  # J_vi^T (eq. 65)
        khalil = J_p.T @ total
        worst = max(worst, np.abs(khalil - result.torques).max() / np.abs(result.torques).max())
    print(f"Gough-Stewart: G^T Gamma_tree against Khalil's eq. 66, worst relative {worst:.2e}")
    assert worst < 1e-10


def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])
