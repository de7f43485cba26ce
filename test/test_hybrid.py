"""Hybrid dynamics (RBDA Sec. 9.2): its two ends are inverse and forward dynamics; mixed masks against Pinocchio's
partitioned system; joints of several coordinates with some of their coordinates known; mimic joints (recursive
when their source's acceleration is known, else the partitioned solve); batches, ``data=``, masks by name, errors.

Pinocchio reference for a mask (``K`` known acceleration, ``F`` known force): with ``M = pin.crba`` and
``h = pin.nonLinearEffects + drive friction``, ``qdd_F = M_FF^-1 (tau_F - h_F - M_FK qdd_K)`` and
``tau_K = M_K qdd + h_K`` (Khalil eqs. 83-88).
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
ENDS = 1e-12

FIXED = ["ur_description/urdf/ur5_robot.urdf", "kinova_description/robots/kinova.urdf",
         "panda_description/urdf/panda.urdf", "baxter_description/urdf/baxter.urdf"]
FLOATING = ["talos_data/robots/talos_reduced.urdf", "anymal_b_simple_description/robots/anymal.urdf",
            "icub_description/robots/icub_reduced.urdf", "go2_description/urdf/go2.urdf",
            "panda_description/urdf/panda.urdf"]
CASES = [(f, False) for f in FIXED] + [(f, True) for f in FLOATING]
IDS = [("floating:" if floating else "fixed:") + f.split("/")[-1] for f, floating in CASES]


def pair(fragment, floating):
    path = oracle.robot_path(fragment)
    return oracle.floating_pair(path) if floating else oracle.pair(path)


def masks(robot, seed):
    """All known, none known, base free and joints known (Khalil's inverse model), base known and joints free, and
    three random masks (a base's coordinates split between the two kinds)."""
    rng = np.random.default_rng(seed)
    out = [np.ones(robot.nv, bool), np.zeros(robot.nv, bool)]
    if robot.has_floating_base:
        base = np.arange(robot.nv) < 6
        out += [~base, base]
    return out + [rng.random(robot.nv) < 0.5 for _ in range(3)]


def pinocchio_hybrid(robot, model, data, mapping, known, q, qd, qdd, tau):
    Q, V = mapping.q(q), mapping.v(qd)
    M = mapping.ours(pin.crba(model, data, Q))
    M = np.triu(M) + np.triu(M, 1).T
    h = mapping.ours(pin.nonLinearEffects(model, data, Q, V)) + oracle.drive_torques(robot, qd)
    free = ~known
    a = np.where(known, qdd, 0.0)
    a[free] = np.linalg.solve(M[np.ix_(free, free)], tau[free] - h[free] - M[np.ix_(free, known)] @ qdd[known])
    return a, M @ a + h


@pytest.mark.parametrize("fragment, floating", CASES, ids=IDS)
def test_matches_pinocchio_partitioned_system(fragment, floating):
    robot, model = pair(fragment, floating)
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    q, qd, qdd = oracle.random_states(robot, 2, seed=21, scale=2.0)
    tau = np.random.default_rng(22).uniform(-20.0, 20.0, size=qd.shape)
    worst = 0.0
    for n in range(2):
        for known in masks(robot, n):
            a, forces = pinocchio_hybrid(robot, model, data, mapping, known, q[n], qd[n], qdd[n], tau[n])
            ours = rd.hybrid_dynamics(robot, q[n], qd[n], np.where(known, qdd[n], 0.0),
                                      np.where(known, 0.0, tau[n]), known_acceleration=known)
            worst = max(worst, oracle.relative_error(ours.accelerations, a),
                        oracle.relative_error(ours.torques, forces))
    assert worst < TOLERANCE


@pytest.mark.parametrize("fragment, floating", CASES, ids=IDS)
def test_ends_are_inverse_and_forward_dynamics(fragment, floating):
    """Every acceleration known: ``inverse_dynamics``; every force known: ``forward_dynamics``, with rotor inertia,
    friction and a wrench on every link, joint and base wrenches included."""
    robot = pair(fragment, floating)[0]
    k = len(robot.joint_names)
    robot = robot.with_drive(armature=np.linspace(0.01, 0.1, k), damping=robot.damping + 0.2,
                             friction=robot.friction + 0.3)
    rng = np.random.default_rng(23)
    wrenches = {link: rng.normal(scale=5.0, size=(2, 6)) for link in robot.link_names}
    q, qd, qdd = oracle.random_states(robot, 2, seed=23, scale=2.0)
    inverse = rd.inverse_dynamics(robot, q, qd, qdd, external_wrenches=wrenches)
    ours = rd.hybrid_dynamics(robot, q, qd, qdd, np.zeros_like(qd), known_acceleration=np.ones(robot.nv, bool),
                              external_wrenches=wrenches)
    assert oracle.relative_error(ours.torques, inverse.torques) < ENDS
    assert np.array_equal(ours.accelerations, qdd)
    assert oracle.relative_error(ours.joint_wrenches, inverse.joint_wrenches) < ENDS
    assert oracle.relative_error(ours.base_wrench, inverse.base_wrench) < ENDS
    tau = inverse.torques
    forward = rd.forward_dynamics(robot, q, qd, tau, external_wrenches=wrenches, joint_wrenches=True)
    ours = rd.hybrid_dynamics(robot, q, qd, np.zeros_like(qd), tau, known_acceleration=np.zeros(robot.nv, bool),
                              external_wrenches=wrenches)
    assert oracle.relative_error(ours.accelerations, forward.accelerations) < ENDS
    assert np.array_equal(ours.torques, tau)
    assert oracle.relative_error(ours.joint_wrenches, forward.joint_wrenches) < ENDS
    assert oracle.relative_error(ours.base_wrench, forward.base_wrench) < ENDS
    if not robot.has_mimic:  # one articulated-body pass: forward dynamics is its case of no known acceleration
        assert np.array_equal(ours.accelerations, forward.accelerations)
        assert np.array_equal(ours.joint_wrenches, forward.joint_wrenches)
        assert np.array_equal(ours.base_wrench, forward.base_wrench)


@pytest.mark.parametrize("fragment, floating", CASES, ids=IDS)
def test_mixed_masks_are_inverse_dynamics_of_their_accelerations(fragment, floating):
    """With drives and external wrenches, the accelerations found give back, by inverse dynamics, every force
    (the given ones included) and the joint wrenches; the given entries are returned as given."""
    robot = pair(fragment, floating)[0]
    robot = robot.with_drive(armature=np.linspace(0.02, 0.2, len(robot.joint_names)), damping=robot.damping + 0.1,
                             friction=robot.friction + 0.4)
    rng = np.random.default_rng(24)
    wrenches = {robot.link_names[-1]: rng.normal(scale=5.0, size=6), robot.link_names[1]: rng.normal(size=6)}
    q, qd, qdd = oracle.random_states(robot, 3, seed=24, scale=2.0)
    tau = rng.uniform(-10.0, 10.0, size=qd.shape)
    for known in masks(robot, 25)[2:]:
        ours = rd.hybrid_dynamics(robot, q, qd, qdd, tau, known_acceleration=known, external_wrenches=wrenches)
        assert np.array_equal(ours.accelerations[:, known], qdd[:, known])
        assert np.array_equal(ours.torques[:, ~known], tau[:, ~known])
        inverse = rd.inverse_dynamics(robot, q, qd, ours.accelerations, external_wrenches=wrenches)
        assert oracle.relative_error(ours.torques, inverse.torques) < TOLERANCE
        assert oracle.relative_error(ours.joint_wrenches, inverse.joint_wrenches) < TOLERANCE
        assert oracle.relative_error(ours.base_wrench, inverse.base_wrench) < TOLERANCE


def link(name, mass, inertia=0.01, com="0.05 -0.02 0.1"):
    return (f'<link name="{name}"><inertial><origin xyz="{com}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{inertia!r}" ixy="0" ixz="0" iyy="{1.5 * inertia!r}" iyz="0" izz="{0.7 * inertia!r}"/>'
            f'</inertial></link>')


def joint(name, kind, parent, child, axis="0 0 1", mimic=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0.2 0.1 0" rpy="0.3 -0.2 0.5"/><axis xyz="{axis}"/><limit lower="-2" upper="2" '
            f'effort="1" velocity="1"/>{mimic}</joint>')


MIXED = ('<robot name="mixed">' + link("base", 3.0) + link("sled", 2.0) + link("ball", 1.0) + link("arm", 0.5)
         + link("tip", 0.3) + link("finger", 0.2) + joint("plane", "planar", "base", "sled", axis="0.3 0.4 0.866")
         + joint("shoulder", "spherical", "sled", "ball") + joint("elbow", "revolute", "ball", "arm", axis="0 1 0")
         + joint("wrist", "spherical", "arm", "tip")
         + joint("finger", "prismatic", "tip", "finger", axis="1 0 0", mimic='<mimic joint="elbow" multiplier="0.5"/>')
         + "</robot>")


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_joints_of_several_coordinates_and_mimic(floating):
    """Planar and spherical joints (and a free-flyer) with some of their coordinates known and others not, a mimic
    joint following a coordinate of known acceleration (recursive) or known force (partitioned solve): each result is
    the solution of ``M qdd + bias = tau`` on the unknown half."""
    robot = rd.load_urdf(MIXED, floating_base=floating).with_drive(armature=[0.05, 0.02, 0.01, 0.03],
                                                                   damping=[0.2] * 4, friction=[0.1] * 4)
    q, qd, qdd = oracle.random_states(robot, 2, seed=26, scale=2.0)
    tau = np.random.default_rng(26).uniform(-3.0, 3.0, size=qd.shape)
    elbow = robot.idx_v["elbow"]
    rng = np.random.default_rng(27)
    for n in range(6):
        known = rng.random(robot.nv) < 0.5
        known[elbow] = n % 2 == 0  # the mimic's source: recursive when known
        ours = rd.hybrid_dynamics(robot, q, qd, qdd, tau, known_acceleration=known)
        bias = rd.inverse_dynamics(robot, q, qd, np.zeros_like(qd)).torques
        for s in range(2):
            M = rd.mass_matrix(robot, q[s])
            free = ~known
            a = np.where(known, qdd[s], 0.0)
            a[free] = np.linalg.solve(M[np.ix_(free, free)], tau[s, free] - bias[s, free]
                                      - M[np.ix_(free, known)] @ qdd[s, known])
            assert oracle.relative_error(ours.accelerations[s], a) < TOLERANCE
            assert oracle.relative_error(ours.torques[s], M @ a + bias[s]) < TOLERANCE


@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_batch_data_and_names(floating):
    """A batch (more than one chunk) equals state by state; ``data=`` gives the same numbers in its own arrays; a
    mask by joint names equals the boolean one."""
    robot = pair("talos_data/robots/talos_reduced.urdf", floating)[0]
    q, qd, qdd = oracle.random_states(robot, 70, seed=28, scale=2.0)
    tau = np.random.default_rng(28).uniform(-5.0, 5.0, size=qd.shape)
    names = [n for n in robot.joint_names if "leg" in n]
    known = np.zeros(robot.nv, bool)
    for n in names:
        known[robot.idx_v[n]] = True
    batch = rd.hybrid_dynamics(robot, q, qd, qdd, tau, known_acceleration=names)
    for n in (0, 1, 64, 69):
        one = rd.hybrid_dynamics(robot, q[n], qd[n], qdd[n], tau[n], known_acceleration=known)
        for x, y in zip(one, batch):
            assert oracle.relative_error(x, y[n]) < 1e-13
    data = robot.data()
    held = rd.hybrid_dynamics(robot, q[0], qd[0], qdd[0], tau[0], known_acceleration=known, data=data)
    again = rd.hybrid_dynamics(robot, q[0], qd[0], qdd[0], tau[0], known_acceleration=known, data=data)
    assert held.torques is again.torques
    assert np.array_equal(held.accelerations, batch.accelerations[0])
    if floating:
        by_base = rd.hybrid_dynamics(robot, q[0], qd[0], qdd[0], tau[0], known_acceleration=[robot.base_joint])
        expected = rd.hybrid_dynamics(robot, q[0], qd[0], qdd[0], tau[0], known_acceleration=np.arange(robot.nv) < 6)
        assert np.array_equal(by_base.torques, expected.torques)


def test_bad_calls():
    robot = rd.load_urdf(MIXED)
    q, qd, qdd = (x[0] for x in oracle.random_states(robot, 1, seed=29))
    with pytest.raises(rd.StateError, match="known_acceleration has shape"):
        rd.hybrid_dynamics(robot, q, qd, qdd, qdd, known_acceleration=np.ones(3, bool))
    with pytest.raises(rd.StateError, match="no joint or velocity coordinate 'knee'"):
        rd.hybrid_dynamics(robot, q, qd, qdd, qdd, known_acceleration=["elbow", "knee"])
    known = np.zeros(robot.nv, bool)
    known[robot.idx_v["elbow"]] = True
    tau = np.zeros(robot.nv)
    tau[robot.idx_v["wrist"]] = np.inf
    with pytest.raises(rd.StateError, match="tau is not finite at joint 'wrist.wx'"):
        rd.hybrid_dynamics(robot, q, qd, np.where(known, 1.0, 0.0), tau, known_acceleration=known)
    with pytest.warns(rd.ModelWarning, match="moves no mass"):
        massless = rd.load_urdf('<robot name="m"><link name="a"/><link name="b"/>' + joint("j", "revolute", "a", "b")
                                + "</robot>")
    with pytest.raises(rd.SingularMassMatrixError, match="joint 'j' drives no mass"):
        rd.hybrid_dynamics(massless, [0.0], [0.0], [0.0], [1.0], known_acceleration=[False])
    assert rd.hybrid_dynamics(massless, [0.0], [0.0], [2.0], [1.0], known_acceleration=[True]).torques[0] == 0.0
