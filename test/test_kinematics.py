"""The kinematics layer against Pinocchio (fixed and free-flyer base, every example-robot-data URDF both load) and
a closed form: link placements, frame Jacobians in the three references, frame velocity and acceleration, centre of
mass, centroidal momentum and its matrix."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.model.joints import FREE_FLYER, PLANAR, PRISMATIC, SPHERICAL
from test_crba import ARM, two_link_arm

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
REFERENCES = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}
BATCH_ROBOTS = ["panda_description/urdf/panda.urdf", "talos_data/robots/talos_reduced.urdf"]


# we refuse a few robots floating: a link fixed to the root has an impossible inertia (ignored on a fixed base, it
# would move)
FLOATING = set(oracle.floating_comparable_paths())
CASES = [pytest.param(path, False, id=f"{name}-fixed") for path, name in zip(PATHS, IDS)] + [
    pytest.param(path, True, id=f"{name}-floating") for path, name in zip(PATHS, IDS) if path in FLOATING]


def chosen_links(robot):
    """Three links to take Jacobians of: the last moving one, one halfway down the tree and the root."""
    moving = [name for name in robot.link_names if robot.link_frames[name][0] >= 0]
    chosen = [moving[-1], moving[len(moving) // 2]] if moving else []
    return list(dict.fromkeys(chosen + [robot.root_link]))


def pinocchio_reference(robot, model, q, v, a, links):
    """Everything compared, from Pinocchio, for one state of ours."""
    data, c = model.createData(), oracle.FloatingMapping(robot, model)
    pq, pv, pa = c.q(q), c.v(v), c.v(a)
    out = {}
    pin.framesForwardKinematics(model, data, pq)
    frame = {name: model.getFrameId(name, pin.FrameType.BODY) for name in robot.link_names}
    out["placements"] = np.array([data.oMf[frame[name]].homogeneous for name in robot.link_names])
    for link in links:
        for label, reference in REFERENCES.items():
            J = pin.computeFrameJacobian(model, data, pq, frame[link], reference)
            out["jacobian", link, label] = c.columns(J)
    pin.forwardKinematics(model, data, pq, pv, pa)
    pin.updateFramePlacements(model, data)
    for link in links:
        for label, reference in REFERENCES.items():
            out["velocity", link, label] = pin.getFrameVelocity(model, data, frame[link], reference).vector
            out["classical", link, label] = pin.getFrameClassicalAcceleration(model, data, frame[link],
                                                                              reference).vector
            out["spatial", link, label] = pin.getFrameAcceleration(model, data, frame[link], reference).vector
    pin.centerOfMass(model, data, pq, pv, pa)
    out["com"] = data.com[0].copy(), data.vcom[0].copy(), data.acom[0].copy()
    out["momentum"] = pin.computeCentroidalMomentum(model, data, pq, pv).vector.copy()
    out["A_G"] = c.columns(pin.computeCentroidalMap(model, data, pq))
    return out


def check_state(robot, model, q, v, a, links, ours=None):
    """Our results (computed here, or ``ours`` for a state of a batch) against Pinocchio's at ``(q, v, a)``."""
    reference = pinocchio_reference(robot, model, q, v, a, links)
    if ours is None:
        ours = our_results(robot, q, v, a, links)
    errors = {key: oracle.relative_error(ours[key], reference[key]) for key in reference if key != "com"}
    for k, label in enumerate(("com", "vcom", "acom")):
        errors[label] = oracle.relative_error(ours["com"][k], reference["com"][k])
    worst = max(errors, key=errors.get)
    assert errors[worst] < TOLERANCE, (worst, errors[worst])
    return errors[worst]


def our_results(robot, q, v, a, links):
    """Everything compared, from rne_dynamics, for one state or a batch (then indexed by ``[n]``)."""
    out = {"placements": rd.forward_kinematics(robot, q)}
    for link in links:
        for label in REFERENCES:
            out["jacobian", link, label] = rd.frame_jacobian(robot, q, link, label)
            out["velocity", link, label] = rd.frame_velocity(robot, q, v, link, label)
            out["classical", link, label] = rd.frame_acceleration(robot, q, v, a, link, label)
            out["spatial", link, label] = rd.frame_acceleration(robot, q, v, a, link, label, classical=False)
    out["com"] = tuple(rd.center_of_mass(robot, q, v, a))
    out["momentum"] = rd.centroidal_momentum(robot, q, v)
    out["A_G"] = rd.centroidal_momentum_matrix(robot, q)
    return out


@pytest.mark.parametrize("path, floating", CASES)
def test_matches_pinocchio(path, floating):
    robot, model = oracle.floating_pair(path) if floating else oracle.pair(path)
    q, v, a = oracle.random_states(robot, 1, seed=11)
    check_state(robot, model, q[0], v[0], a[0], chosen_links(robot))


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("fragment", BATCH_ROBOTS)
def test_batch_matches_pinocchio_state_by_state(fragment, floating):
    path = oracle.robot_path(fragment)
    robot, model = oracle.floating_pair(path) if floating else oracle.pair(path)
    q, v, a = oracle.random_states(robot, 3, seed=12)
    links = chosen_links(robot)
    batch = our_results(robot, q, v, a, links)
    assert batch["placements"].shape == (3, len(robot.link_names), 4, 4)
    assert batch["A_G"].shape == (3, 6, robot.nv)
    for n in range(3):
        ours = {key: (tuple(x[n] for x in value) if key == "com" else value[n]) for key, value in batch.items()}
        check_state(robot, model, q[n], v[n], a[n], links, ours)


#: Every joint type (a planar joint about its z, a spherical joint, a revolute and a prismatic joint about unaligned
#: axes, a fixed tool), with turned joint frames; Pinocchio's URDF reader has no spherical joint, so its model is
#: built from ours by :func:`pinocchio_model`.
EVERY_JOINT = """<robot name="every_joint">
  <link name="base"/>
  <link name="l1"><inertial><origin xyz="0.1 0.02 0" rpy="0.1 0.2 0.3"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.03" iyz="0.002" izz="0.04"/></inertial></link>
  <link name="l2"><inertial><origin xyz="0 0.1 0.2"/><mass value="1.5"/>
    <inertia ixx="0.01" ixy="0" ixz="0.001" iyy="0.02" iyz="0" izz="0.015"/></inertial></link>
  <link name="l3"><inertial><origin xyz="0.3 0 -0.1"/><mass value="0.8"/>
    <inertia ixx="0.005" ixy="0" ixz="0" iyy="0.006" iyz="0" izz="0.007"/></inertial></link>
  <link name="l4"><inertial><origin xyz="0 0 0.05"/><mass value="0.4"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.002" iyz="0" izz="0.0015"/></inertial></link>
  <link name="tool"><inertial><mass value="0.2"/>
    <inertia ixx="0.0001" ixy="0" ixz="0" iyy="0.0001" iyz="0" izz="0.0001"/></inertial></link>
  <joint name="slide" type="planar"><parent link="base"/><child link="l1"/>
    <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.2 0.5"/><axis xyz="0 0 1"/></joint>
  <joint name="ball" type="spherical"><parent link="l1"/><child link="l2"/><origin xyz="0.4 0 0.1" rpy="0 0.4 0"/>
  </joint>
  <joint name="hinge" type="revolute"><parent link="l2"/><child link="l3"/><origin xyz="0 0.3 0.2" rpy="0.2 0 -0.3"/>
    <axis xyz="0.6 0 0.8"/><limit lower="-2" upper="2" effort="1" velocity="1"/></joint>
  <joint name="piston" type="prismatic"><parent link="l3"/><child link="l4"/><origin xyz="0.3 0 0" rpy="0 0 0.7"/>
    <axis xyz="0 0.6 -0.8"/><limit lower="-0.5" upper="0.5" effort="1" velocity="1"/></joint>
  <joint name="flange" type="fixed"><parent link="l4"/><child link="tool"/><origin xyz="0 0.1 0.2" rpy="0.5 0.1 0"/>
  </joint>
</robot>"""


def pinocchio_model(robot):
    """A Pinocchio model of ``robot`` (no mimic joints), built body by body: joint ``i + 1`` moves body ``i``, placed
    at its ``(R_tree, p_tree)``, and a frame per link."""
    model = pin.Model()
    for b in robot.bodies:
        if b.code == FREE_FLYER:
            joint = pin.JointModelFreeFlyer()
        elif b.code == SPHERICAL:
            joint = pin.JointModelSpherical()
        elif b.code == PLANAR:
            assert np.allclose(b.axis, [0, 0, 1])  # Pinocchio's planar joint moves in its frame's xy plane
            joint = pin.JointModelPlanar()
        elif b.code == PRISMATIC:
            joint = pin.JointModelPrismaticUnaligned(b.axis)
        else:
            joint = pin.JointModelRevoluteUnaligned(b.axis)
        j = model.addJoint(b.parent + 1, joint, pin.SE3(b.R_tree, b.p_tree), b.joint)
        com = b.h / b.mass if b.mass > 0 else np.zeros(3)
        I_com = b.I - b.mass * (com @ com * np.eye(3) - np.outer(com, com))  # parallel axes, to the COM
        model.appendBodyToJoint(j, pin.Inertia(b.mass, com, I_com), pin.SE3.Identity())
    for name in robot.link_names:
        body, R, p = robot.link_frames[name]
        model.addFrame(pin.Frame(name, body + 1, pin.SE3(R, p), pin.FrameType.BODY))
    return model


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_every_joint_type_matches_pinocchio(floating):
    robot = rd.load_urdf(EVERY_JOINT, floating_base=floating)
    model = pinocchio_model(robot)
    q, v, a = oracle.random_states(robot, 1, seed=15)
    check_state(robot, model, q[0], v[0], a[0], ["tool", "l2", "base"])


def test_frame_placement_is_a_row_of_forward_kinematics():
    robot, _ = oracle.floating_pair(oracle.robot_path("panda_description/urdf/panda.urdf"))
    q, _, _ = oracle.random_states(robot, 2, seed=13)
    T = rd.forward_kinematics(robot, q)
    for k, link in enumerate(robot.link_names):
        np.testing.assert_array_equal(rd.frame_placement(robot, q, link), T[:, k])
        np.testing.assert_array_equal(rd.frame_placement(robot, q[1], link), T[1, k])


def test_two_link_arm_closed_form():
    """The planar 2R arm's end frame (``link2``, at the elbow, turned by ``q1 + q2``): its origin at
    ``l1 (cos q1, sin q1)`` moves only with ``q1``, both joints turn it about z."""
    robot = rd.load_urdf(two_link_arm())
    q1, q2 = 0.4, -1.1
    l1 = ARM["l1"]
    s1, c1 = np.sin(q1), np.cos(q1)
    lwa = np.array([[-l1 * s1, 0], [l1 * c1, 0], [0, 0], [0, 0], [0, 0], [1, 1]])
    np.testing.assert_allclose(rd.frame_jacobian(robot, [q1, q2], "link2"), lwa, rtol=0, atol=1e-15)
    # world: the velocity of the point at the world origin, w x (0 - p): joint 2's column is p2 x z = (l1 s1, -l1 c1)
    world = np.array([[0, l1 * s1], [0, -l1 * c1], [0, 0], [0, 0], [0, 0], [1, 1]])
    np.testing.assert_allclose(rd.frame_jacobian(robot, [q1, q2], "link2", "world"), world, rtol=0, atol=1e-15)
    # local: the linear rows turned into link2's axes, by -(q1 + q2) about z
    c, s = np.cos(q1 + q2), np.sin(q1 + q2)
    local = lwa.copy()
    local[0:2] = np.array([[c, s], [-s, c]]) @ lwa[0:2]
    np.testing.assert_allclose(rd.frame_jacobian(robot, [q1, q2], "link2", "local"), local, rtol=0, atol=1e-15)
    T = rd.frame_placement(robot, [q1, q2], "link2")
    np.testing.assert_allclose(T[:3, 3], [l1 * c1, l1 * s1, 0], rtol=0, atol=1e-15)
    np.testing.assert_allclose(T[:2, :2], [[c, -s], [s, c]], rtol=0, atol=1e-15)


def test_two_link_arm_center_of_mass():
    """The COM of the arm: ``(m1 lc1 e1 + m2 (l1 e1 + lc2 e12)) / (m1 + m2)``, and its velocity is ``J_com qd``."""
    robot = rd.load_urdf(two_link_arm())
    q, qd = np.array([0.4, -1.1]), np.array([0.3, -0.8])
    m1, m2, l1, lc1, lc2 = (ARM[k] for k in ("m1", "m2", "l1", "lc1", "lc2"))
    e1, e12 = np.array([np.cos(q[0]), np.sin(q[0]), 0]), np.array([np.cos(q.sum()), np.sin(q.sum()), 0])
    c = (m1 * lc1 * e1 + m2 * (l1 * e1 + lc2 * e12)) / (m1 + m2)
    np.testing.assert_allclose(rd.center_of_mass(robot, q), c, rtol=0, atol=1e-15)
    z = np.array([0, 0, 1.0])
    dc = (m1 * lc1 * np.cross(z, e1) * qd[0]
          + m2 * (l1 * np.cross(z, e1) * qd[0] + lc2 * np.cross(z, e12) * qd.sum())) / (m1 + m2)
    result = rd.center_of_mass(robot, q, qd)
    np.testing.assert_allclose(result.velocity, dc, rtol=0, atol=1e-15)
    assert result.acceleration is None
    # the linear rows of A_G are the total mass times the COM Jacobian
    np.testing.assert_allclose(rd.centroidal_momentum_matrix(robot, q)[:3] @ qd, (m1 + m2) * dc, rtol=0, atol=1e-14)


def test_fixed_links_do_not_move():
    robot, _ = oracle.pair(oracle.robot_path("ur_description/urdf/ur5_robot.urdf"))
    q, v, a = oracle.random_states(robot, 1, seed=14)
    root = robot.root_link
    np.testing.assert_array_equal(rd.frame_placement(robot, q[0], root), np.eye(4))
    assert not rd.frame_jacobian(robot, q[0], root).any()
    assert not rd.frame_acceleration(robot, q[0], v[0], a[0], root).any()


def test_bad_arguments_are_clear_errors():
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="no link 'hand'"):
        rd.frame_jacobian(robot, [0.0, 0.0], "hand")
    with pytest.raises(rd.StateError, match="reference must be one of"):
        rd.frame_jacobian(robot, [0.0, 0.0], "link2", reference="global")
    with pytest.raises(rd.StateError, match="v has shape"):
        rd.frame_velocity(robot, [0.0, 0.0], [0.0], "link2")
    with pytest.raises(rd.StateError, match="joint2"):
        rd.forward_kinematics(robot, [0.0, np.nan])
    with pytest.raises(rd.StateError, match="needs the velocity"):
        rd.center_of_mass(robot, [0.0, 0.0], a=[0.0, 0.0])
