"""A floating base (``load_urdf(path, floating_base=True)``) against Pinocchio's free-flyer
(``buildModelFromUrdf(path, JointModelFreeFlyer(), mimic=True)``) on every example-robot-data URDF both load, robots
without movable joints included (they are free bodies).

Our ``q`` is ``[x, y, z, qx, qy, qz, qw]`` then one coordinate per joint of ``robot.joint_names`` (one angle for a
continuous joint), ``v`` the base twist ``[v; w]`` in the base frame then the joints; Pinocchio's free-flyer has the
same base coordinates, so ``oracle.FloatingMapping`` copies them and maps the joints by name. The first 6 torques are
the wrench the world exerts on the base (base frame, about its origin): Pinocchio's ``tau[:6]``.

One random state per robot (a random unit quaternion, either sign of ``qw``), a batch of 3 for inverse and forward
dynamics and the mass matrix, checked state by state. 1e-9 relative (``oracle.relative_error``), 1e-7 for
derivatives. Pinocchio's work per robot is linear in its links.

Drive terms: URDF damping and friction are added to our torques; Pinocchio stores them (``model.damping``,
``model.friction``) but its algorithms leave them out, so the references add them back (``mapping.drive_torques``)
or feed ``tau - drive`` to Pinocchio's forward dynamics. Mimic joints: Pinocchio 4.1 refuses them in ABA, the
derivatives and the regressor, and its Coriolis matrix is wrong for them; those robots are compared through CRBA
and RNEA where Pinocchio refuses, and skipped where it has no right answer.
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
DERIVATIVE_TOLERANCE = 1e-7
PATHS = oracle.floating_comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])
BATCH = 3
REFERENCES = {"world": pin.WORLD, "local": pin.LOCAL, "local_world_aligned": pin.LOCAL_WORLD_ALIGNED}


def setup(path, seed, n=1, scale=1.0):
    """``robot, model, data, mapping`` and ``n`` random states ``(q, v, a)`` (one state unbatched when ``n == 1``)."""
    robot, model = oracle.floating_pair(path)
    q, v, a = oracle.random_floating_states(robot, n, seed=seed, scale=scale)
    if n == 1:
        q, v, a = q[0], v[0], a[0]
    return robot, model, model.createData(), oracle.FloatingMapping(robot, model), (q, v, a)


def skip_mimic(model, what):
    if oracle.has_mimic_joints(model):
        pytest.skip(f"Pinocchio 4.1's {what} does not handle mimic joints")


def symmetric(upper):
    """Pinocchio fills the upper triangle of ``M`` (and ``M^-1``) only."""
    return np.triu(upper) + np.triu(upper, 1).T


def body_frame(model, link):
    """Pinocchio's frame of a URDF link (a BODY frame: some URDFs give a joint the name of a link)."""
    assert model.existFrame(link, pin.BODY), f"Pinocchio has no frame for link '{link}'"
    return model.getFrameId(link, pin.BODY)


def pinocchio_fext(model, link_wrenches):
    """``{link: [f; n]}`` (link frame, about its origin) as Pinocchio's per-joint ``fext`` (joint frame): each
    moved by the placement of the link's frame in its parent joint (links merged by fixed joints included)."""
    fext = [pin.Force.Zero() for _ in range(model.njoints)]
    for link, wrench in link_wrenches.items():
        frame = model.frames[body_frame(model, link)]
        fext[frame.parentJoint] += frame.placement.act(pin.Force(np.asarray(wrench, float)))
    return fext


def pinocchio_forward_dynamics(model, data, mapping, q, v, tau):
    """Pinocchio's acceleration for our ``tau`` (drive terms taken off), our order; robots with mimic joints, which
    Pinocchio's ABA refuses, by ``M^-1 (tau - nonLinearEffects)``."""
    Q, V, T = mapping.q(q), mapping.v(v), mapping.v(tau - mapping.drive_torques(v))
    if not oracle.has_mimic_joints(model):
        return mapping.ours(pin.aba(model, data, Q, V, T))
    M = symmetric(pin.crba(model, data, Q))
    return mapping.ours(np.linalg.solve(M, T - pin.nonLinearEffects(model, data, Q, V)))


def check(label, ours, reference, tolerance=TOLERANCE):
    error = oracle.relative_error(ours, reference)
    assert error < tolerance, f"{label}: relative error {error:.3g}"


# ---------------------------------------------------------------- the set of robots and the coordinates

def test_every_robot_pinocchio_loads_is_compared():
    """63 at example-robot-data 6: the 61 of the fixed-base comparison and the two quadrotors without joints.
    The three tiago robots load with a floating base: their antenna links' indefinite inertias (CAD rounding,
    -3.5e-8 kg m^2) are checked on the rigid body the base forms, with a warning naming the link.
    romeo_laas_small is refused for its non-PSD inertia, floating or not."""
    assert len(PATHS) >= 63
    for tiago in ("tiago.urdf", "tiago_dual.urdf", "tiago_no_hand.urdf"):
        assert any(p.endswith("tiago_description/robots/" + tiago) for p in PATHS), tiago
        with pytest.warns(rd.ModelWarning, match="base_antenna_left_link.*not positive semi-definite"):
            rd.load_urdf(oracle.robot_path("tiago_description/robots/" + tiago), floating_base=True)
    free_bodies = [p for p in PATHS if not oracle.floating_pair(p)[0].joint_names]
    assert {oracle.short_name(p) for p in free_bodies} >= {"hector_description/robots/quadrotor_base.urdf",
                                                          "iris_description/robots/iris_simple.urdf"}


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coordinates(path):
    """``q = [base 7, one per joint]``, ``v = [base 6, one per joint]``, the joints in ``joint_names`` order; the
    joints are Pinocchio's less the free-flyer and the mimic joints."""
    robot, model = oracle.floating_pair(path)
    n = len(robot.joint_names)
    assert (robot.nq, robot.nv, robot.dof) == (7 + n, 6 + n, 6 + n)
    assert robot.nv == model.nv
    pinocchio_joints = {model.names[j] for j in range(1, model.njoints)
                        if model.names[j] != oracle.FREE_FLYER and "Mimic" not in model.joints[j].shortname()}
    assert set(robot.joint_names) == pinocchio_joints
    assert [robot.idx_q[name] for name in robot.joint_names] == list(range(7, 7 + n))
    assert [robot.idx_v[name] for name in robot.joint_names] == list(range(6, 6 + n))


# ---------------------------------------------------------------- inverse dynamics

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics(path):
    """Torques (the first 6: the wrench on the base by the world, base frame) and joint wrenches (``data.f``)."""
    robot, model, data, mapping, (q, v, a) = setup(path, seed=1)
    ours = rd.inverse_dynamics(robot, q, v, a)
    tau = pin.rnea(model, data, mapping.q(q), mapping.v(v), mapping.v(a))
    assert ours.torques.shape == (robot.nv,)
    assert ours.joint_wrenches.shape == (len(robot.joint_names), 6)
    check("torques", ours.torques, mapping.ours(tau) + mapping.drive_torques(v))
    check("base wrench", ours.torques[:6], data.f[model.getJointId(oracle.FREE_FLYER)].vector)
    check("joint wrenches", ours.joint_wrenches, mapping.joint_wrenches(data))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics_batch_tilted_gravity_external_wrenches(path):
    """A batch of 3 under a tilted gravity with a random wrench on every link (the base's links included),
    compared state by state."""
    robot, model, _, mapping, (q, v, a) = setup(path, seed=2, n=BATCH, scale=2.0)
    rng = np.random.default_rng(2)
    wrenches = {link: rng.normal(scale=10.0, size=(BATCH, 6)) for link in robot.link_names}
    ours = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY, external_wrenches=wrenches)
    assert ours.torques.shape == (BATCH, robot.nv)
    assert ours.joint_wrenches.shape == (BATCH, len(robot.joint_names), 6)
    tilted = oracle.with_gravity(model, TILTED_GRAVITY)
    data = tilted.createData()
    for n in range(BATCH):
        fext = pinocchio_fext(tilted, {link: w[n] for link, w in wrenches.items()})
        tau = pin.rnea(tilted, data, mapping.q(q[n]), mapping.v(v[n]), mapping.v(a[n]), fext)
        check(f"state {n} torques", ours.torques[n], mapping.ours(tau) + mapping.drive_torques(v[n]))
        check(f"state {n} joint wrenches", ours.joint_wrenches[n], mapping.joint_wrenches(data))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_gravity_and_bias_torques(path):
    """``gravity_torques`` = ``computeGeneralizedGravity`` (holding the robot still: the base wrench carries its
    weight); ``bias_torques`` = ``nonLinearEffects`` (rigid-body terms only: drive friction is not part of
    ``C v + g``)."""
    robot, model, data, mapping, (q, v, _) = setup(path, seed=3, scale=2.0)
    Q = mapping.q(q)
    check("gravity", rd.gravity_torques(robot, q), mapping.ours(pin.computeGeneralizedGravity(model, data, Q)))
    check("bias", rd.bias_torques(robot, q, v),
          mapping.ours(pin.nonLinearEffects(model, data, Q, mapping.v(v))))
    tilted = oracle.with_gravity(model, TILTED_GRAVITY)
    check("gravity, tilted", rd.gravity_torques(robot, q, gravity=TILTED_GRAVITY),
          mapping.ours(pin.computeGeneralizedGravity(tilted, tilted.createData(), Q)))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coriolis_matrix(path):
    robot, model, data, mapping, (q, v, _) = setup(path, seed=4, scale=2.0)
    skip_mimic(model, "computeCoriolisMatrix")
    reference = pin.computeCoriolisMatrix(model, data, mapping.q(q), mapping.v(v))
    check("C", rd.coriolis_matrix(robot, q, v), mapping.ours(reference))


# ---------------------------------------------------------------- mass matrix and forward dynamics

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_mass_matrix(path):
    """A batch of 3, state by state; full and symmetric (Pinocchio fills the upper triangle)."""
    robot, model, data, mapping, (q, _, _) = setup(path, seed=5, n=BATCH)
    ours = rd.mass_matrix(robot, q)
    assert ours.shape == (BATCH, robot.nv, robot.nv)
    for n in range(BATCH):
        check(f"state {n}", ours[n], mapping.ours(symmetric(pin.crba(model, data, mapping.q(q[n])))))
    check("one state", rd.mass_matrix(robot, q[0]), ours[0])


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics(path):
    """ABA (``M^-1 (tau - h)`` where Pinocchio refuses mimic joints); a batch of 3 and one state."""
    robot, model, data, mapping, (q, v, tau) = setup(path, seed=6, n=BATCH, scale=2.0)
    ours = rd.forward_dynamics(robot, q, v, tau)
    assert ours.shape == (BATCH, robot.nv)
    for n in range(BATCH):
        check(f"state {n}", ours[n], pinocchio_forward_dynamics(model, data, mapping, q[n], v[n], tau[n]))
    check("one state", rd.forward_dynamics(robot, q[0], v[0], tau[0]), ours[0])


# ---------------------------------------------------------------- derivatives, regressor, torque rate

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inverse_dynamics_derivatives(path):
    """``computeRNEADerivatives``: with respect to ``q`` along ``integrate`` (``nv`` columns, the base's in the base
    frame), ``v`` (plus the URDF damping) and ``a`` (``M``)."""
    robot, model, data, mapping, (q, v, a) = setup(path, seed=7, scale=2.0)
    skip_mimic(model, "computeRNEADerivatives")
    dq, dv, M = (np.array(x) for x in pin.computeRNEADerivatives(model, data, mapping.q(q), mapping.v(v),
                                                                  mapping.v(a)))
    expected = (mapping.ours(dq), mapping.ours(dv) + np.diag(mapping.damping()), mapping.ours(symmetric(M)))
    for name, value, exact in zip(("dtau_dq", "dtau_dv", "dtau_da"),
                                  rd.inverse_dynamics_derivatives(robot, q, v, a), expected):
        assert np.shape(value) == (robot.nv, robot.nv), name
        check(name, value, exact, DERIVATIVE_TOLERANCE)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_forward_dynamics_derivatives(path):
    """``computeABADerivatives`` at ``tau - drive(v)``: the drive's damping ``D`` adds ``-M^-1 D`` to ``d/dv``
    (Coulomb friction is constant where no velocity is 0)."""
    robot, model, data, mapping, (q, v, tau) = setup(path, seed=8)
    skip_mimic(model, "computeABADerivatives")
    tau = 10.0 * tau
    T = mapping.v(tau - mapping.drive_torques(v))
    dq, dv, M_inv = (np.array(x) for x in pin.computeABADerivatives(model, data, mapping.q(q), mapping.v(v), T))
    M_inv = mapping.ours(symmetric(M_inv))
    expected = (mapping.ours(dq), mapping.ours(dv) - M_inv @ np.diag(mapping.damping()), M_inv)
    for name, value, exact in zip(("da_dq", "da_dv", "da_dtau"),
                                  rd.forward_dynamics_derivatives(robot, q, v, tau), expected):
        check(name, value, exact, DERIVATIVE_TOLERANCE)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_inertial_parameters(path):
    """10 per body (the base body first or wherever ``body_joint_names`` puts it), Pinocchio's per joint id."""
    robot, model = oracle.floating_pair(path)
    mapping = oracle.FloatingMapping(robot, model)
    reference = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    check("parameters", rd.inertial_parameters(robot), reference[mapping.regressor_columns()])


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_joint_torque_regressor(path):
    robot, model, data, mapping, (q, v, a) = setup(path, seed=9, scale=2.0)
    skip_mimic(model, "computeJointTorqueRegressor")
    Y = pin.computeJointTorqueRegressor(model, data, mapping.q(q), mapping.v(v), mapping.v(a))
    ours = rd.joint_torque_regressor(robot, q, v, a)
    assert ours.shape == (robot.nv, 10 * len(robot.body_joint_names))
    check("Y", ours, Y[mapping.idx_v][:, mapping.regressor_columns()])


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_torque_rate(path):
    """The chain rule through Pinocchio's derivatives: ``dtau/dt = dtau_dq v + (dtau_dv + D) a + M jerk`` (``q``
    moves along ``integrate(q, v dt)``; the URDF damping ``D`` feeds ``a`` through the drive term)."""
    robot, model, data, mapping, (q, v, a) = setup(path, seed=10)
    skip_mimic(model, "computeRNEADerivatives")
    jerk = np.random.default_rng(10).uniform(-1.0, 1.0, robot.nv)
    dq, dv, M = (np.array(x) for x in pin.computeRNEADerivatives(model, data, mapping.q(q), mapping.v(v),
                                                                  mapping.v(a)))
    expected = mapping.ours(dq @ mapping.v(v) + dv @ mapping.v(a) + symmetric(M) @ mapping.v(jerk))
    check("torque rate", rd.torque_rate(robot, q, v, a, jerk), expected + mapping.damping() * a,
          DERIVATIVE_TOLERANCE)


# ---------------------------------------------------------------- kinematics

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_frame_placements_of_every_link(path):
    robot, model, data, mapping, (q, _, _) = setup(path, seed=11)
    pin.framesForwardKinematics(model, data, mapping.q(q))
    for link in robot.link_names:
        check(link, rd.frame_placement(robot, q, link), data.oMf[body_frame(model, link)].homogeneous)


def three_links(robot):
    """The root link, one in the middle and the last of ``link_names``."""
    links = robot.link_names
    return sorted({links[0], links[len(links) // 2], links[-1]}, key=links.index)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_frame_jacobians(path):
    """``computeFrameJacobian`` in the three references, columns in our order."""
    robot, model, data, mapping, (q, _, _) = setup(path, seed=12)
    Q = mapping.q(q)
    for link in three_links(robot):
        for reference, pin_reference in REFERENCES.items():
            J = pin.computeFrameJacobian(model, data, Q, body_frame(model, link), pin_reference)
            ours = rd.frame_jacobian(robot, q, link, reference=reference)
            assert ours.shape == (6, robot.nv)
            check(f"{link}, {reference}", ours, mapping.columns(J))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_center_of_mass_and_centroidal_momentum(path):
    """``centerOfMass``; ``computeCentroidalMomentum`` ``[linear; angular about the COM]``, world axes; its map
    ``computeCentroidalMap`` (``A_g v`` is the momentum)."""
    robot, model, data, mapping, (q, v, _) = setup(path, seed=13, scale=2.0)
    Q, V = mapping.q(q), mapping.v(v)
    check("center of mass", rd.center_of_mass(robot, q), pin.centerOfMass(model, data, Q))
    check("centroidal momentum", rd.centroidal_momentum(robot, q, v),
          pin.computeCentroidalMomentum(model, data, Q, V).vector)
    A = rd.centroidal_momentum_matrix(robot, q)
    assert A.shape == (6, robot.nv)
    check("centroidal map", A, mapping.columns(pin.computeCentroidalMap(model, data, Q)))


# ---------------------------------------------------------------- configuration space

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_neutral_integrate_difference(path):
    """``neutral`` is Pinocchio's; ``integrate`` is ``pin.integrate`` (quaternions compared up to sign, continuous
    joints through cos/sin); ``difference(q0, integrate(q0, v, dt)) == v dt`` is ``pin.difference``. Rotation
    increments stay below pi (where ``difference`` is the inverse of ``integrate``)."""
    robot, model, _, mapping, (q, v, _) = setup(path, seed=14)
    check("neutral", mapping.q(rd.neutral(robot)), pin.neutral(model))
    dt = 0.7
    q1 = rd.integrate(robot, q, v, dt)
    assert q1.shape == (robot.nq,)
    reference = pin.integrate(model, mapping.q(q), mapping.v(v * dt))
    check("integrate", mapping.align_quaternions(reference, mapping.q(q1)), reference)
    assert abs(np.linalg.norm(q1[3:7]) - 1.0) < 1e-12
    d = rd.difference(robot, q, q1)
    check("difference", d, mapping.ours(pin.difference(model, mapping.q(q), reference)))
    check("difference of integrate", d, v * dt)
    reference = pin.integrate(model, mapping.q(q), mapping.v(v))  # dt defaults to 1
    check("integrate, dt = 1", mapping.align_quaternions(reference, mapping.q(rd.integrate(robot, q, v))), reference)
