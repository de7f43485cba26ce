"""The screw (helical) joint, Drake's URDF extension ``<joint type="screw">`` with ``<drake:screw_thread_pitch>``,
against Pinocchio's ``JointModelHelicalUnaligned`` built by hand from the same numbers (its pitch is ours over
``2 pi``: Pinocchio's is travel per radian, Drake's per revolution).

The tree mixes three screws (an unaligned axis, ``-z`` with a left-handed pitch, ``+y``) with a revolute and a
prismatic joint, on a fixed and on a floating base. Compared to 1e-12: inverse dynamics (torques, joint wrenches),
the mass matrix, forward dynamics, the derivatives of RNEA and ABA, link placements and Jacobians, ``integrate`` and
``difference``. Then a mimic screw (Pinocchio without the mimic, the source loaded by virtual work), what the reader
takes and refuses, and that the joint module's table and its kernel answers agree for every code.
"""
import math

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.model import joints
from rne_dynamics.model.buffers import model_view
from test_joint_types import link_element, random_link, text

TOLERANCE = 1e-12
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])
TWO_PI = 2.0 * math.pi


def unit(x):
    x = np.asarray(x, float)
    return x / np.linalg.norm(x)


#: ``(parent link, type, axis, pitch (m per revolution), xyz, rpy)`` of joint ``k``, whose child is link ``k + 1``.
JOINTS = [
    (0, "screw", unit([0.3, -0.5, 0.8]), 0.05, [0.1, 0.0, 0.2], [0.3, -0.2, 0.5]),
    (1, "revolute", unit([1.0, 2.0, -0.5]), 0.0, [0.0, 0.3, 0.0], [0.0, 0.4, -0.1]),
    (1, "screw", np.array([0.0, 0.0, -1.0]), -0.2, [0.2, -0.1, 0.0], [-0.5, 0.0, 0.2]),
    (3, "prismatic", unit([0.2, 1.0, 0.1]), 0.0, [0.0, 0.0, 0.25], [0.1, 0.2, 0.3]),
    (4, "screw", np.array([0.0, 1.0, 0.0]), 0.31, [0.15, 0.05, -0.1], [0.0, -0.3, 0.0]),
]


def links(seed=7):
    """One massive link per body and the root's."""
    rng = np.random.default_rng(seed)
    return [random_link(rng) for _ in range(len(JOINTS) + 1)]


def urdf(links, joints_=JOINTS, mimic=None):
    """The URDF text; ``mimic`` ``(joint index, source index, multiplier, offset)`` adds a ``<mimic>``."""
    parts = ['<robot name="screws" xmlns:drake="http://drake.mit.edu">']
    parts += [link_element(k, link) for k, link in enumerate(links)]
    for k, (parent, kind, axis, pitch, xyz, rpy) in enumerate(joints_):
        extra = f'<axis xyz="{text(axis)}"/><limit lower="-2" upper="2" effort="50" velocity="3"/>'
        if kind == "screw":
            extra += f'<drake:screw_thread_pitch value="{pitch!r}"/>'
        if mimic is not None and mimic[0] == k:
            extra += f'<mimic joint="j{mimic[1]}" multiplier="{mimic[2]!r}" offset="{mimic[3]!r}"/>'
        parts.append(f'<joint name="j{k}" type="{kind}"><parent link="l{parent}"/><child link="l{k + 1}"/>'
                     f'<origin xyz="{text(xyz)}" rpy="{text(rpy)}"/>{extra}</joint>')
    return "".join(parts) + "</robot>"


def pinocchio_joint(kind, axis, pitch):
    if kind == "screw":
        return pin.JointModelHelicalUnaligned(axis, pitch / TWO_PI)
    if kind == "revolute":
        return pin.JointModelRevoluteUnaligned(axis)
    return pin.JointModelPrismaticUnaligned(axis)


def pinocchio_model(links, floating):
    """The same tree, joints added depth first (as Pinocchio's URDF parser does); every link at the identity in its
    joint (a URDF link frame is its joint's frame)."""
    model = pin.Model()
    joint_of_link = {0: 0}
    if floating:
        base = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), oracle.FREE_FLYER)
        model.appendBodyToJoint(base, links[0].inertia(), pin.SE3.Identity())
        joint_of_link[0] = base

    def add(link):
        for k, (parent, kind, axis, pitch, xyz, rpy) in enumerate(JOINTS):
            if parent == link:
                placement = pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.asarray(xyz, float))
                index = model.addJoint(joint_of_link[parent], pinocchio_joint(kind, axis, pitch), placement, f"j{k}")
                model.appendBodyToJoint(index, links[k + 1].inertia(), pin.SE3.Identity())
                joint_of_link[k + 1] = index
                add(k + 1)

    add(0)
    model.gravity = pin.Motion(np.concatenate([TILTED_GRAVITY, np.zeros(3)]))
    return model, joint_of_link


@pytest.fixture(scope="module", params=[False, True], ids=["fixed", "floating"])
def case(request):
    floating = request.param
    body_links = links()
    robot = rd.load_urdf(urdf(body_links), floating_base=floating)
    model, joint_of_link = pinocchio_model(body_links, floating)
    q, v, a = (x[0] for x in oracle.random_floating_states(robot, 1, seed=3, scale=2.0))
    return robot, model, model.createData(), oracle.FloatingMapping(robot, model), joint_of_link, (q, v, a)


def check(label, ours, reference):
    error = oracle.relative_error(ours, reference)
    assert error < TOLERANCE, f"{label}: relative error {error:.3g}"


def symmetric(upper):
    return np.triu(upper) + np.triu(upper, 1).T


def test_the_screw_joint_is_one_angle_and_its_motion_column_is_pitch_over_two_pi_along_the_axis(case):
    robot, model, _, _, _, _ = case
    assert robot.nv == model.nv and robot.nq == model.nq
    for k, (_, kind, axis, pitch, _, _) in enumerate(JOINTS):
        body = robot.bodies[robot.joint_bodies[robot.joint_names.index(f"j{k}")]]
        linear, angular = {"screw": (pitch / TWO_PI * axis, axis), "revolute": (0 * axis, axis),
                           "prismatic": (axis, 0 * axis)}[kind]
        expected = np.concatenate([linear, angular])
        np.testing.assert_allclose(body.S, [expected], rtol=0, atol=1e-15)
        assert (body.nq, body.nv) == (1, 1)
    assert robot.position_limits[robot.idx_q["j0"]].tolist() == [-2.0, 2.0]
    assert robot.effort_limits[robot.idx_v["j0"]] == 50.0 and robot.velocity_limits[robot.idx_v["j0"]] == 3.0


def test_inverse_dynamics(case):
    robot, model, data, mapping, _, (q, v, a) = case
    ours = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY)
    tau = pin.rnea(model, data, mapping.q(q), mapping.v(v), mapping.v(a))
    check("torques", ours.torques, mapping.ours(tau))
    check("joint wrenches", ours.joint_wrenches, mapping.joint_wrenches(data))
    assert np.abs(tau).max() > 1.0  # the comparison is of numbers that matter


def test_a_screws_torque_is_its_moment_plus_pitch_over_two_pi_times_its_force_along_the_axis(case):
    robot, _, _, _, _, (q, v, a) = case
    ours = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY)
    for k, (_, kind, axis, pitch, _, _) in enumerate(JOINTS):
        if kind == "screw":
            wrench = ours.joint_wrenches[robot.joint_names.index(f"j{k}")]
            check(f"j{k}", ours.torques[robot.idx_v[f"j{k}"]], axis @ wrench[3:] + pitch / TWO_PI * axis @ wrench[:3])


def test_mass_matrix(case):
    robot, model, data, mapping, _, (q, _, _) = case
    check("M", rd.mass_matrix(robot, q), mapping.ours(symmetric(pin.crba(model, data, mapping.q(q)))))


def test_forward_dynamics(case):
    robot, model, data, mapping, _, (q, v, tau) = case
    reference = pin.aba(model, data, mapping.q(q), mapping.v(v), mapping.v(tau))
    check("qdd", rd.forward_dynamics(robot, q, v, tau, gravity=TILTED_GRAVITY), mapping.ours(reference))


def test_inverse_dynamics_derivatives(case):
    robot, model, data, mapping, _, (q, v, a) = case
    dq, dv, M = (np.array(x) for x in pin.computeRNEADerivatives(model, data, mapping.q(q), mapping.v(v),
                                                                  mapping.v(a)))
    ours = rd.inverse_dynamics_derivatives(robot, q, v, a, gravity=TILTED_GRAVITY)
    for name, value, exact in zip(("dtau_dq", "dtau_dv", "dtau_da"), ours,
                                  (mapping.ours(dq), mapping.ours(dv), mapping.ours(symmetric(M)))):
        check(name, value, exact)


def test_forward_dynamics_derivatives(case):
    robot, model, data, mapping, _, (q, v, tau) = case
    reference = pin.computeABADerivatives(model, data, mapping.q(q), mapping.v(v), mapping.v(tau))
    ours = rd.forward_dynamics_derivatives(robot, q, v, tau, gravity=TILTED_GRAVITY)
    for name, value, exact in zip(("dqdd_dq", "dqdd_dv", "dqdd_dtau"), ours, reference):
        check(name, value, mapping.ours(np.array(exact)))


def test_placements_and_jacobians(case):
    robot, model, data, mapping, joint_of_link, (q, _, _) = case
    pin.computeJointJacobians(model, data, mapping.q(q))
    for link in range(len(JOINTS) + 1):
        j = joint_of_link[link]
        if j == 0:
            continue  # the world
        check(f"l{link} placement", rd.frame_placement(robot, q, f"l{link}"), data.oMi[j].homogeneous)
        for reference, frame in (("world", pin.WORLD), ("local", pin.LOCAL),
                                 ("local_world_aligned", pin.LOCAL_WORLD_ALIGNED)):
            check(f"l{link} {reference} jacobian", rd.frame_jacobian(robot, q, f"l{link}", reference),
                  mapping.columns(pin.getJointJacobian(model, data, j, frame)))


def test_integrate_and_difference(case):
    robot, model, _, mapping, _, (q, v, _) = case
    v = v / 2.0  # every rotation increment below pi
    q1 = rd.integrate(robot, q, v)
    reference = pin.integrate(model, mapping.q(q), mapping.v(v))
    check("integrate", mapping.align_quaternions(reference, mapping.q(q1)), reference)
    check("difference", rd.difference(robot, q, q1), v)
    check("pin.difference", rd.difference(robot, q, q1), mapping.ours(pin.difference(model, mapping.q(q), reference)))


def test_a_mimic_screw_follows_its_source_and_loads_it_by_virtual_work():
    """``j4`` mimics ``j0`` (``q4 = 1.5 q0 - 0.2``): Pinocchio's model without the mimic, at the mimic's motion, gives
    the loads; the source's torque is its own plus ``1.5`` times the mimic's."""
    multiplier, offset = 1.5, -0.2
    body_links = links()
    robot = rd.load_urdf(urdf(body_links, mimic=(4, 0, multiplier, offset)))
    model, _ = pinocchio_model(body_links, False)
    data = model.createData()
    assert "j4" not in robot.joint_names and robot.nv == model.nv - 1
    rng = np.random.default_rng(11)
    q, v, a = (rng.uniform(-1.0, 1.0, robot.nv) for _ in range(3))
    full = {name: k for k, name in enumerate(model.names[1:])}  # Pinocchio's coordinate of each joint (nv = 1 each)

    def expand(x, mimic_value):
        out = np.zeros(model.nv)
        for name in robot.joint_names:
            out[full[name]] = x[robot.idx_v[name]]
        out[full["j4"]] = mimic_value
        return out

    q0, v0, a0 = q[robot.idx_q["j0"]], v[robot.idx_v["j0"]], a[robot.idx_v["j0"]]
    tau = pin.rnea(model, data, expand(q, multiplier * q0 + offset), expand(v, multiplier * v0),
                   expand(a, multiplier * a0))
    expected = np.array([tau[full[name]] for name in robot.joint_names])
    expected[robot.idx_v["j0"]] += multiplier * tau[full["j4"]]
    check("torques", rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY).torques, expected)
    pin.forwardKinematics(model, data, expand(q, multiplier * q0 + offset))
    check("mimic placement", rd.frame_placement(robot, q, "l5"), data.oMi[model.getJointId("j4")].homogeneous)


def test_the_reader_needs_a_screws_pitch_in_drakes_namespace():
    description = urdf(links())
    with pytest.raises(rd.URDFError, match=r"joint 'j0': a screw joint needs <drake:screw_thread_pitch"):
        rd.load_urdf(description.replace('<drake:screw_thread_pitch value="0.05"/>', "", 1))
    with pytest.raises(rd.URDFError, match=r"joint 'j0': <drake:screw_thread_pitch value=\"abc\"> is not 1 number"):
        rd.load_urdf(description.replace('value="0.05"', 'value="abc"', 1))
    with pytest.raises(rd.URDFError, match=r"joint 'j0': <axis xyz=\"0 0 0\"> is zero; it must give the screw axis"):
        rd.load_urdf(description.replace(f'<axis xyz="{text(JOINTS[0][2])}"/>', '<axis xyz="0 0 0"/>', 1))
    robot = rd.load_urdf(description)
    assert robot.joints["j0"].pitch == 0.05 and robot.joints["j2"].pitch == -0.2


def test_a_screws_dynamics_element_adds_its_friction_to_its_torque():
    """``<dynamics damping friction>`` as for a revolute joint: ``damping qd + friction sign(qd)`` on its torque."""
    description = urdf(links())
    damped = rd.load_urdf(description.replace('<drake:screw_thread_pitch value="0.05"/>',
                                              '<drake:screw_thread_pitch value="0.05"/><dynamics damping="0.3" '
                                              'friction="0.1"/>', 1))
    robot = rd.load_urdf(description)
    q, v, a = (np.full(robot.nv, x) for x in (0.2, -0.7, 0.4))
    difference = (rd.inverse_dynamics(damped, q, v, a).torques - rd.inverse_dynamics(robot, q, v, a).torques)
    expected = np.zeros(robot.nv)
    expected[robot.idx_v["j0"]] = 0.3 * -0.7 - 0.1
    np.testing.assert_allclose(difference, expected, rtol=0, atol=1e-12)


def test_inspect_gives_a_screws_position_in_rad_and_effort_in_n_m():
    from rne_dynamics.tools.inspect_robot import tree_lines

    line = next(line for line in tree_lines(rd.load_urdf(urdf(links()))) if "screw" in line)
    assert "limits [-2, 2] rad" in line and "effort 50 N m" in line, line


# ------------------------------------------------------------------------------------ the joint module's table

def test_the_table_and_the_kernel_answers_agree_for_every_code():
    """For each code: the group and the quaternion of :class:`JointType` are those the kernels branch on; a
    revolute joint about a unit axis has its own code."""
    codes = {t.code for t in joints.TYPES.values() if t.code >= 0} | {joints.REVOLUTE_X, joints.REVOLUTE_Y,
                                                                      joints.REVOLUTE_Z}
    assert codes == set(range(9))
    for code in codes:
        t = joints.type_of_code(code)
        assert joints.configuration_group(code) == t.group, code
        assert joints.quaternion_start(code) == t.quaternion, code
        assert joints.has_stops(code) == (t.nq == 1), code
        assert joints.motion_subspace(code, np.array([0.0, 0.0, 1.0])).shape == (t.nv, 6)
    for axis, code in (((1, 0, 0), joints.REVOLUTE_X), ((0, -1, 0), joints.REVOLUTE_Y), ((0, 0, 1), joints.REVOLUTE_Z),
                       ((0.6, 0.8, 0), joints.REVOLUTE)):
        assert joints.joint_code("revolute", np.array(axis, float)) == code
    assert joints.joint_code("screw", np.array([0.0, 0.0, 1.0])) == joints.SCREW  # a unit axis stays a screw


def test_an_unknown_code_raises_in_python_and_has_no_pose_in_a_kernel():
    for call in (lambda: joints.type_of_code(9), lambda: joints.motion_subspace(9, np.ones(3)),
                 lambda: joints.rotation_terms(-1, np.ones(3), np.eye(3)), lambda: joints.joint_type("helical")):
        with pytest.raises(rd.ModelError, match="unknown joint"):
            call()
    assert joints.configuration_group(9) == joints.NO_GROUP and joints.quaternion_start(9) == -1
    assert not joints.has_stops(9)
    robot = rd.load_urdf(urdf(links()))
    idata = robot.idata.copy()
    m = model_view(robot.fdata, idata)
    m.jtype[0] = 9
    R, p = np.zeros((3, 3)), np.zeros(3)
    x_up = getattr(joints.X_up, "py_func", joints.X_up)
    x_up(m, 0, np.zeros(robot.nq), R, p)
    assert np.isnan(R).all() and np.isnan(p).all()


def test_a_builder_refuses_an_unknown_joint_type():
    from rne_dynamics.model.body import JointInfo
    from rne_dynamics.model.tree import LinkSpec, build_robot

    with pytest.raises(rd.ModelError, match=r"joint 'j': unknown type 'helical'"):
        build_robot("r", [LinkSpec("a", 1.0), LinkSpec("b", 1.0)], [JointInfo("j", "helical", "a", "b")],
                    {"j": (np.eye(3), np.zeros(3))}, error=rd.ModelError)
