"""Robots with a moving base (Khalil 2010 Sec. 7): the free-floating inverse model and inverse dynamics on a base of
prescribed motion, against Pinocchio on every example-robot-data robot with a floating base and against closed forms
derived by hand.

(a) Free-floating, Pinocchio: our base acceleration ``a_b`` and joint torques ``tau_j`` satisfy
    ``aba(q, v, [0; tau_j]) = [a_b; qdd_j]`` and ``rnea(q, v, [a_b; qdd_j]) = [0; tau_j]`` (URDF friction moved to
    the torque side: Pinocchio's algorithms leave it out); robots with mimic joints (``aba`` refuses them): the
    partitioned system of ``crba`` and ``nonLinearEffects``. With no wrench on the base, the centre of mass falls
    with gravity: ``center_of_mass(q, v, [a_b; qdd_j]).acceleration = g``.
(b) Free-floating, closed form: a base (mass ``m0``, inertia ``I0`` about its centre of mass, at its origin) and a
    link (mass ``m1`` at ``l`` along its x axis, inertia ``I1`` about its centre of mass) joined by a revolute joint
    about z at ``r`` in the base frame, moving in the world's xy plane in zero gravity. Base angle ``phi``, joint
    angle ``theta``, ``psi = phi + theta``; the vector between the centres of mass is ``d = R(phi) r + l e(psi)``
    and ``mu = m0 m1 / (m0 + m1)``. The angular momentum about the centre of mass,
        L = I0 phi' + I1 psi' + mu d x d' = A(theta) phi' + B(theta) theta',
        A = I0 + I1 + mu (|r|^2 + l^2 + 2 k),   B = I1 + mu (l^2 + k),   k = l (r . e(theta)),
    is constant, so ``phi'' = -(B theta'' + mu k' (2 phi' + theta')) / A`` with ``k' = l (r . e'(theta)) theta'``;
    the centre of mass does not accelerate, so the base origin's acceleration is ``-m1 / (m0 + m1) d''``.
(c) Prescribed base motion, closed form: a cart accelerating at ``a`` along its x axis under gravity ``-g z``, a
    pendulum (point mass ``m`` at ``l`` along ``-z`` of its link) on a joint about y at the cart's origin, at rest
    relative to the cart at angle ``theta``: the mass is at ``(-l sin theta, 0, -l cos theta)`` and needs the force
    ``F = m (a, 0, g)``, so the joint torque is ``(r x F)_y = m l (g sin theta - a cos theta)`` and the mounting
    wrench ``[(m0 + m) a, 0, (m0 + m) g, 0, m l (g sin theta - a cos theta), 0]``.
(d) A base of constant linear acceleration ``a`` (base frame) that does not turn is a fixed base under the gravity
    ``R^T g - a`` seen from it.
"""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
CLOSED_FORM = 1e-12

PATHS = {oracle.short_name(path): path for path in oracle.floating_comparable_paths()}
NAMES = sorted(n for n in PATHS if oracle.floating_pair(PATHS[n])[0].joint_names)


def pinocchio_free_floating(robot, model, data, mapping, q, v, qdd_joints):
    """``[a_b; qdd_j]`` and ``[0; tau_j]`` by Pinocchio: base acceleration and joint torques of the free-floating
    inverse model, from ``aba`` and ``rnea`` when it can, else from the partitioned system."""
    Q, V = mapping.q(q), mapping.v(v)
    M = mapping.ours(pin.crba(model, data, Q))
    M = np.triu(M) + np.triu(M, 1).T
    h = mapping.ours(pin.nonLinearEffects(model, data, Q, V)) + oracle.drive_torques(robot, v)
    a_b = np.linalg.solve(M[:6, :6], -h[:6] - M[:6, 6:] @ qdd_joints)
    return a_b, M[6:, :6] @ a_b + M[6:, 6:] @ qdd_joints + h[6:]


@pytest.mark.parametrize("name", NAMES)
def test_free_floating_matches_pinocchio(name):
    robot, model = oracle.floating_pair(PATHS[name])
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    q, v, a = oracle.random_floating_states(robot, 2, seed=31, scale=2.0)
    gravity = np.array([0.3, -0.2, -9.81])
    result = rd.free_floating_inverse_dynamics(robot, q, v, a[:, 6:], gravity=gravity)
    model = oracle.with_gravity(model, gravity)
    for n in range(2):
        a_b, tau_j = result.base_acceleration[n], result.torques[n]
        qdd = np.concatenate([a_b, a[n, 6:]])
        Q, V = mapping.q(q[n]), mapping.v(v[n])
        friction = oracle.drive_torques(robot, v[n])
        if robot.has_mimic:
            reference = pinocchio_free_floating(robot, model, data, mapping, q[n], v[n], a[n, 6:])
            assert oracle.relative_error(a_b, reference[0]) < TOLERANCE
            assert oracle.relative_error(tau_j, reference[1]) < TOLERANCE
        else:
            tau = np.concatenate([np.zeros(6), tau_j]) - friction
            solved = mapping.ours(pin.aba(model, data, Q, V, mapping.v(tau)))
            assert oracle.relative_error(solved[:6], a_b) < TOLERANCE
            # the joints' part amplifies rounding by cond(M): 4e12 on icub.urdf (links of 1e-8 kg m^2)
            M = pin.crba(model, data, Q)
            conditioning = np.linalg.cond(np.triu(M) + np.triu(M, 1).T)
            assert oracle.relative_error(solved, qdd) < max(TOLERANCE, 1e-16 * conditioning)
        forces = mapping.ours(pin.rnea(model, data, Q, V, mapping.v(qdd))) + friction
        assert oracle.relative_error(forces, np.concatenate([np.zeros(6), tau_j])) < TOLERANCE
        com = rd.center_of_mass(robot, q[n], v[n], qdd).acceleration
        assert oracle.relative_error(com, gravity) < TOLERANCE
    wrenches = rd.inverse_dynamics(robot, q, v, np.concatenate([result.base_acceleration, a[:, 6:]], axis=1),
                                   gravity=gravity).joint_wrenches
    assert oracle.relative_error(result.joint_wrenches, wrenches) < TOLERANCE


@pytest.mark.parametrize("name", ["xarm_description/urdf/xarm7.urdf", "go1_description/urdf/go1.urdf"])
def test_drive_false_is_pinocchios_rigid_body_dynamics(name):
    """``drive=False``: both moving-base calls are Pinocchio's rigid-body terms (``rnea``, no URDF damping or
    friction); by default the joint torques include the drives' terms (10 N m s/rad damping, 1 N m friction on the
    xArm), the mounting wrench is the same either way."""
    robot, model = oracle.floating_pair(PATHS[name])
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    assert np.abs(robot.damping).max() > 0 and np.abs(robot.friction).max() > 0
    q, v, a = oracle.random_floating_states(robot, 2, seed=35, scale=2.0)
    free = rd.free_floating_inverse_dynamics(robot, q, v, a[:, 6:], drive=False)
    mounted = rd.mounted_inverse_dynamics(robot, q[:, :7], v[:, :6], a[:, :6], q[:, 7:], v[:, 6:], a[:, 6:],
                                          drive=False)
    driven = rd.mounted_inverse_dynamics(robot, q[:, :7], v[:, :6], a[:, :6], q[:, 7:], v[:, 6:], a[:, 6:])
    for n in range(2):
        Q, V = mapping.q(q[n]), mapping.v(v[n])
        qdd = np.concatenate([free.base_acceleration[n], a[n, 6:]])
        rigid = mapping.ours(pin.rnea(model, data, Q, V, mapping.v(qdd)))
        assert oracle.relative_error(rigid, np.concatenate([np.zeros(6), free.torques[n]])) < TOLERANCE
        rigid = mapping.ours(pin.rnea(model, data, Q, V, mapping.v(a[n])))
        assert oracle.relative_error(np.concatenate([mounted.mounting_wrench[n], mounted.torques[n]]),
                                     rigid) < TOLERANCE
        drive = oracle.drive_torques(robot, v[n], a[n])[6:]
        assert np.abs(drive).max() > 0.1  # the default's difference is no rounding (0.2 N m on the Go1)
        assert oracle.relative_error(driven.torques[n] - mounted.torques[n], drive) < TOLERANCE
    assert np.array_equal(driven.mounting_wrench, mounted.mounting_wrench)


M0, I0, R_JOINT, M1, L1, I1 = 50.0, 4.0, np.array([0.3, 0.2, 0.0]), 5.0, 0.6, 0.2
CHAIN = f"""<robot name="chain">
  <link name="base"><inertial><mass value="{M0}"/><inertia ixx="3" ixy="0" ixz="0" iyy="3" iyz="0" izz="{I0}"/>
  </inertial></link>
  <link name="arm"><inertial><origin xyz="{L1} 0 0"/><mass value="{M1}"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="{I1}"/></inertial></link>
  <joint name="joint" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="{R_JOINT[0]} {R_JOINT[1]} 0"/><axis xyz="0 0 1"/></joint>
</robot>"""


def e(angle):
    return np.array([np.cos(angle), np.sin(angle), 0.0])


def e_perp(angle):
    return np.array([-np.sin(angle), np.cos(angle), 0.0])


@pytest.mark.parametrize("name", NAMES)
def test_one_state_equals_the_batch_and_hybrid_dynamics(name):
    """A single state's call (its mask made once per robot) equals the batch's rows and ``hybrid_dynamics`` with the
    mask given, to 1e-12 of the largest entry, allocating and with ``data=``, without and with an external wrench."""
    robot, _ = oracle.floating_pair(PATHS[name])
    q, v, a = oracle.random_floating_states(robot, 2, seed=32, scale=2.0)
    known, data = np.arange(robot.nv) >= 6, robot.data()
    for wrenches in (None, {robot.link_names[-1]: [1.0, -2.0, 3.0, 0.1, 0.2, -0.3]}):
        batch = rd.free_floating_inverse_dynamics(robot, q, v, a[:, 6:], external_wrenches=wrenches)
        for n in range(2):
            hybrid = rd.hybrid_dynamics(robot, q[n], v[n], np.concatenate([np.zeros(6), a[n, 6:]]),
                                        np.zeros(robot.nv), known_acceleration=known, external_wrenches=wrenches)
            expected = (hybrid.accelerations[:6], hybrid.torques[6:], hybrid.joint_wrenches)
            for held in (None, data):
                one = rd.free_floating_inverse_dynamics(robot, q[n], v[n], a[n, 6:], external_wrenches=wrenches,
                                                        data=held)
                for got, rows, want in zip(one, batch, expected):
                    scale = max(1.0, np.abs(want).max())
                    assert np.abs(got - want).max() < 1e-12 * scale and np.abs(rows[n] - want).max() < 1e-12 * scale


def test_free_floating_two_bodies_closed_form():
    """(b): the base's angular acceleration from the conservation of angular momentum, its linear one from the
    centre of mass at rest (or in uniform motion), in the plane, at any velocity."""
    robot = rd.load_urdf(CHAIN, floating_base=True)
    rng = np.random.default_rng(32)
    mu = M0 * M1 / (M0 + M1)
    for _ in range(5):
        phi, theta, x, y = rng.uniform(-np.pi, np.pi, 4)
        dphi, dtheta, ddtheta, vx, vy = rng.uniform(-2.0, 2.0, 5)
        q = np.array([x, y, 0.0, 0.0, 0.0, np.sin(phi / 2), np.cos(phi / 2), theta])
        v = np.array([vx, vy, 0.0, 0.0, 0.0, dphi, dtheta])
        result = rd.free_floating_inverse_dynamics(robot, q, v, [ddtheta], gravity=np.zeros(3))
        k = L1 * R_JOINT @ e(theta)
        dk = L1 * R_JOINT @ e_perp(theta) * dtheta
        A = I0 + I1 + mu * (R_JOINT @ R_JOINT + L1 ** 2 + 2 * k)
        B = I1 + mu * (L1 ** 2 + k)
        ddphi = -(B * ddtheta + mu * dk * (2 * dphi + dtheta)) / A
        psi, dpsi, ddpsi = phi + theta, dphi + dtheta, ddphi + ddtheta
        Rr = np.array([[np.cos(phi), -np.sin(phi), 0.0], [np.sin(phi), np.cos(phi), 0.0], [0.0, 0.0, 1.0]]) @ R_JOINT
        Jz = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
        d_dd = ddphi * Jz @ Rr - dphi ** 2 * Rr + L1 * (ddpsi * e_perp(psi) - dpsi ** 2 * e(psi))
        d_dd[2] = 0.0
        origin = -M1 / (M0 + M1) * d_dd  # world frame
        classical = np.array([e(phi) @ origin, e_perp(phi) @ origin, 0.0])  # in the base frame
        w = np.array([0.0, 0.0, dphi])
        expected = np.concatenate([classical - np.cross(w, v[:3]), [0.0, 0.0, ddphi]])
        assert oracle.relative_error(result.base_acceleration, expected) < CLOSED_FORM
        qdd = np.concatenate([result.base_acceleration, [ddtheta]])
        assert np.abs(rd.center_of_mass(robot, q, v, qdd).acceleration).max() < CLOSED_FORM


def test_free_floating_conserves_momentum():
    """No wrench on the base in zero gravity: the centroidal momentum of the bundled 6-joint arm on a free base does
    not change (its rate by central differences along the motion, ``O(dt^2)``)."""
    robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
    q, v, a = oracle.random_floating_states(robot, 3, seed=33, scale=2.0)
    dt = 1e-4
    for n in range(3):
        a_b = rd.free_floating_inverse_dynamics(robot, q[n], v[n], a[n, 6:], gravity=np.zeros(3)).base_acceleration
        qdd = np.concatenate([a_b, a[n, 6:]])
        momentum = [rd.centroidal_momentum(robot, rd.integrate(robot, q[n], s * v[n] + 0.5 * dt * qdd, dt),
                                           v[n] + s * dt * qdd) for s in (-1.0, 1.0)]
        rate = (momentum[1] - momentum[0]) / (2 * dt)
        scale = np.abs(rd.centroidal_momentum(robot, q[n], v[n])).max()
        assert np.abs(rate).max() < 1e-6 * max(scale, 1.0)
        assert np.abs(rd.centroidal_momentum(robot, q[n], v[n])).max() > 0.1  # a motion that has momentum


def test_free_floating_bad_calls():
    fixed = rd.load_urdf(CHAIN)
    with pytest.raises(rd.ModelError, match="has a fixed base; load it with"):
        rd.free_floating_inverse_dynamics(fixed, [0.0], [0.0], [0.0])
    robot = rd.load_urdf(CHAIN, floating_base=True)
    q, v = rd.neutral(robot), np.zeros(7)
    with pytest.raises(rd.StateError, match=r"qdd_joints has shape \(2,\); robot 'chain' needs \(1,\)"):
        rd.free_floating_inverse_dynamics(robot, q, v, [0.0, 1.0])
    batch = rd.free_floating_inverse_dynamics(robot, np.tile(q, (3, 1)), np.zeros((3, 7)), [1.0])
    assert batch.base_acceleration.shape == (3, 6) and batch.torques.shape == (3, 1)


CART_MASS, BOB_MASS, ARM = 20.0, 3.0, 0.8
CART = f"""<robot name="cart">
  <link name="cart"><inertial><mass value="{CART_MASS}"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>
  </inertial></link>
  <link name="bob"><inertial><origin xyz="0 0 {-ARM}"/><mass value="{BOB_MASS}"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="pivot" type="continuous"><parent link="cart"/><child link="bob"/><axis xyz="0 1 0"/></joint>
</robot>"""


def test_pendulum_on_accelerating_cart_closed_form():
    """(c): joint torque ``m l (g sin theta - a cos theta)`` and the mounting wrench, whatever the cart's
    position and heading about the vertical."""
    robot = rd.load_urdf(CART, floating_base=True)
    g = 9.81
    for a, theta, heading in [(0.0, 0.3, 0.0), (2.5, 0.0, 1.0), (-1.5, -0.7, -2.0), (4.0, 1.2, 0.5)]:
        pose = [1.0, -2.0, 0.3, 0.0, 0.0, np.sin(heading / 2), np.cos(heading / 2)]
        result = rd.mounted_inverse_dynamics(robot, pose, np.zeros(6), [a, 0, 0, 0, 0, 0], [theta], [0.0], [0.0])
        torque = BOB_MASS * ARM * (g * np.sin(theta) - a * np.cos(theta))
        assert abs(result.torques[0] - torque) < CLOSED_FORM * 100
        total = CART_MASS + BOB_MASS
        expected = [total * a, 0.0, total * g, 0.0, torque, 0.0]
        assert oracle.relative_error(result.mounting_wrench, expected) < CLOSED_FORM
        assert result.joint_wrenches[0, 4] == pytest.approx(torque, abs=1e-12 * total * g)


def test_mounted_is_floating_base_inverse_dynamics():
    """The mounted call is floating-base inverse dynamics split in base and joints; a base that does not turn and
    accelerates at ``a`` is a fixed base under the gravity ``R^T g - a`` (d); base and joints broadcast."""
    path = oracle.robot_path("panda_description/urdf/panda.urdf")
    robot = oracle.load_quietly(path, floating_base=True)
    fixed = oracle.load_quietly(path)
    q, v, a = oracle.random_floating_states(robot, 4, seed=34, scale=2.0)
    wrenches = {"panda_link7": [1.0, -2.0, 3.0, 0.1, 0.2, -0.3]}
    result = rd.mounted_inverse_dynamics(robot, q[:, :7], v[:, :6], a[:, :6], q[:, 7:], v[:, 6:], a[:, 6:],
                                         external_wrenches=wrenches)
    full = rd.inverse_dynamics(robot, q, v, a, external_wrenches=wrenches)
    assert np.array_equal(result.torques, full.torques[:, 6:])
    assert np.array_equal(result.mounting_wrench, full.torques[:, :6])
    assert np.array_equal(result.joint_wrenches, full.joint_wrenches)
    gravity = np.array([0.0, 0.0, -9.81])
    for n in range(4):
        linear = a[n, :3]
        moving = rd.mounted_inverse_dynamics(robot, q[n, :7], np.zeros(6), np.concatenate([linear, np.zeros(3)]),
                                             q[n, 7:], v[n, 6:], a[n, 6:])
        R = rd.frame_placement(robot, q[n], robot.root_link)[:3, :3]
        still = rd.inverse_dynamics(fixed, q[n, 7:], v[n, 6:], a[n, 6:], gravity=R.T @ gravity - linear)
        assert oracle.relative_error(moving.torques, still.torques) < TOLERANCE
        assert oracle.relative_error(moving.joint_wrenches, still.joint_wrenches) < TOLERANCE
    one_base = rd.mounted_inverse_dynamics(robot, q[0, :7], v[0, :6], a[0, :6], q[:, 7:], v[:, 6:], a[:, 6:])
    for n in range(4):
        single = rd.mounted_inverse_dynamics(robot, q[0, :7], v[0, :6], a[0, :6], q[n, 7:], v[n, 6:], a[n, 6:])
        assert oracle.relative_error(one_base.torques[n], single.torques) < 1e-13
    with pytest.raises(rd.StateError, match=r"base_twist has shape \(5,\)"):
        rd.mounted_inverse_dynamics(robot, q[0, :7], np.zeros(5), a[0, :6], q[0, 7:], v[0, 6:], a[0, 6:])
    with pytest.raises(rd.ModelError, match="has a fixed base"):
        rd.mounted_inverse_dynamics(fixed, q[0, :7], v[0, :6], a[0, :6], q[0, 7:], v[0, 6:], a[0, 6:])
