"""A floating base against closed forms derived by hand.

Conventions (the contract's): ``q = [p; quat]``, ``p`` the base origin in the world, ``quat = [qx, qy, qz, qw]`` the
base orientation ``R`` (base to world); ``v = [v; w]`` the base twist in the base frame (``v`` the velocity of the
base origin, ``w`` the angular velocity, both in base coordinates); ``a = dv/dt`` (the derivative of those
components; the base origin's classical acceleration is ``a[:3] + w x v``); ``torques[:6] = [f; n]`` the wrench the
world exerts on the base, base frame, about the base origin.

(a) One free rigid body (mass ``m``, centre of mass ``c`` and inertia ``I_c`` about it, both in the body frame):
    - kinetic energy ``1/2 m |v + w x c|^2 + 1/2 w.I_c w``, so ``M = [[m 1, -m [c]x], [m [c]x, I_c - m [c]x^2]]``;
    - Newton-Euler: with ``wd = a[3:]`` and the centre of mass's acceleration in body coordinates
      ``a_c = a[:3] + w x v + wd x c + w x (w x c)``, the total force ``m a_c = f + m R^T g`` and the moment about the
      centre of mass ``I_c wd + w x I_c w = n - c x f``: ``f = m (a_c - R^T g)``, ``n = c x f + I_c wd + w x I_c w``;
    - without wrench (free flight): Euler's torque-free equations ``wd = -I_c^-1 (w x I_c w)`` and ``a_c = R^T g``;
    - at rest under gravity: the world holds the weight, ``f = -m R^T g``, ``n = c x f``;
    - kinematics: the link frame is ``(R, p)``; Jacobians ``local = 1``, ``local_world_aligned = diag(R, R)``,
      ``world = [[R, [p]x R], [0, R]]``; centre of mass ``p + R c``; centroidal momentum ``[m R (v + w x c);
      R I_c w]`` (about the centre of mass, world axes).
(b) A robot whose base is at rest (``v[:6] = 0``, ``a[:6] = 0``) is a fixed-base robot under the gravity seen from
    the base, ``R^T g``: the same joint torques and joint wrenches; at rest its base wrench holds the total weight
    through the centre of mass.
(c) A free-floating two-body chain in zero gravity, its joint driven: no external wrench, so its linear momentum and
    its angular momentum about any world point stay constant, and its centre of mass moves uniformly (stays put when
    the momentum is 0). The generalised momentum's base rows ``(M v)[:6]`` are the total momentum in the base frame
    about the base origin (``d T / d v_base``).
"""
import xml.etree.ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.robots import default_robot_path

TOLERANCE = 1e-9
ZERO_GRAVITY = np.zeros(3)
GRAVITIES = [np.array([0.0, 0.0, -9.81]), np.array([1.7, -2.3, -9.1])]

# ---------------------------------------------------------------- helpers written out by hand


def skew(x):
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rotation(quaternion):
    """Rotation matrix of a unit quaternion ``[qx, qy, qz, qw]`` (scalar last)."""
    x, y, z, w = quaternion
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rpy_matrix(roll, pitch, yaw):
    """URDF ``rpy``: ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = np.cos(roll), np.sin(roll), np.cos(pitch), np.sin(pitch), np.cos(yaw), np.sin(yaw)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def check(label, ours, expected, tolerance=TOLERANCE):
    error = oracle.relative_error(ours, expected)
    assert error < tolerance, f"{label}: relative error {error:.3g}"


# ---------------------------------------------------------------- (a) one free rigid body

MASS = 2.5
COM = np.array([0.12, -0.07, 0.05])
INERTIAL_RPY = (0.3, -0.2, 0.5)
INERTIA = dict(ixx=0.09, ixy=0.01, ixz=-0.005, iyy=0.12, iyz=0.008, izz=0.15)  # in the inertial frame
BODY_URDF = (
    '<robot name="brick"><link name="brick"><inertial>'
    f'<origin xyz="{" ".join(repr(float(x)) for x in COM)}" rpy="{" ".join(repr(float(x)) for x in INERTIAL_RPY)}"/>'
    f'<mass value="{MASS!r}"/><inertia {" ".join(f"{k}={chr(34)}{v!r}{chr(34)}" for k, v in INERTIA.items())}/>'
    '</inertial></link></robot>')


def inertia_about_com():
    """``I_c`` in body axes: the URDF inertia turned by the inertial ``rpy``."""
    i = INERTIA
    I = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]], [i["ixz"], i["iyz"], i["izz"]]])
    R = rpy_matrix(*INERTIAL_RPY)
    return R @ I @ R.T


I_C = inertia_about_com()


def body():
    return rd.load_urdf(BODY_URDF, floating_base=True)


def body_states(seed):
    """A random pose (unit quaternion, either sign of ``qw``), twist and acceleration."""
    rng = np.random.default_rng(seed)
    quaternion = rng.normal(size=4)
    q = np.concatenate([rng.uniform(-2.0, 2.0, 3), quaternion / np.linalg.norm(quaternion)])
    return q, rng.uniform(-2.0, 2.0, 6), rng.uniform(-3.0, 3.0, 6)


def com_acceleration(v, a):
    """Classical acceleration of the centre of mass, body coordinates."""
    lin, w, wd = v[:3], v[3:], a[3:]
    return a[:3] + np.cross(w, lin) + np.cross(wd, COM) + np.cross(w, np.cross(w, COM))


def newton_euler(q, v, a, gravity):
    """The wrench on the body about its origin, body frame, that makes it move with ``(v, a)`` under gravity."""
    R, w, wd = rotation(q[3:]), v[3:], a[3:]
    f = MASS * (com_acceleration(v, a) - R.T @ gravity)
    n = np.cross(COM, f) + I_C @ wd + np.cross(w, I_C @ w)
    return np.concatenate([f, n])


def body_mass_matrix():
    return np.block([[MASS * np.eye(3), -MASS * skew(COM)], [MASS * skew(COM), I_C - MASS * skew(COM) @ skew(COM)]])


SEEDS = [0, 1, 2, 3]


def test_free_body_coordinates():
    robot = body()
    assert (robot.nq, robot.nv, robot.dof) == (7, 6, 6)
    assert tuple(robot.joint_names) == ()
    np.testing.assert_array_equal(rd.neutral(robot), [0, 0, 0, 0, 0, 0, 1])


@pytest.mark.parametrize("seed", SEEDS)
def test_free_body_kinematics(seed):
    robot = body()
    q, v, _ = body_states(seed)
    p, R = q[:3], rotation(q[3:])
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = R, p
    check("placement", rd.frame_placement(robot, q, "brick"), pose)
    zero = np.zeros((3, 3))
    check("local Jacobian", rd.frame_jacobian(robot, q, "brick", reference="local"), np.eye(6))
    check("local-world-aligned Jacobian", rd.frame_jacobian(robot, q, "brick", reference="local_world_aligned"),
          np.block([[R, zero], [zero, R]]))
    check("world Jacobian", rd.frame_jacobian(robot, q, "brick", reference="world"),
          np.block([[R, skew(p) @ R], [zero, R]]))
    check("centre of mass", rd.center_of_mass(robot, q), p + R @ COM)
    lin, w = v[:3], v[3:]
    momentum = np.concatenate([MASS * R @ (lin + np.cross(w, COM)), R @ I_C @ w])
    check("centroidal momentum", rd.centroidal_momentum(robot, q, v), momentum)
    A = np.block([[MASS * R, -MASS * R @ skew(COM)], [zero, R @ I_C]])
    check("centroidal map", rd.centroidal_momentum_matrix(robot, q), A)
    check("centroidal map times v", A @ v, momentum)  # the closed forms agree with each other


@pytest.mark.parametrize("seed", SEEDS)
def test_free_body_mass_matrix(seed):
    robot = body()
    q, _, _ = body_states(seed)
    check("M", rd.mass_matrix(robot, q), body_mass_matrix())


@pytest.mark.parametrize("gravity", [ZERO_GRAVITY] + GRAVITIES, ids=["zero-g", "g", "tilted-g"])
@pytest.mark.parametrize("seed", SEEDS)
def test_free_body_inverse_dynamics_is_newton_euler(seed, gravity):
    robot = body()
    q, v, a = body_states(seed)
    result = rd.inverse_dynamics(robot, q, v, a, gravity=gravity)
    assert result.torques.shape == (6,) and result.joint_wrenches.shape == (0, 6)
    check("base wrench", result.torques, newton_euler(q, v, a, gravity))


@pytest.mark.parametrize("gravity", [ZERO_GRAVITY] + GRAVITIES, ids=["zero-g", "g", "tilted-g"])
@pytest.mark.parametrize("seed", SEEDS)
def test_free_flight_is_eulers_equations(seed, gravity):
    """No wrench: ``wd = -I_c^-1 (w x I_c w)`` (torque-free about the centre of mass) and the centre of mass falls
    with ``g``: ``a[:3] = R^T g - w x v - wd x c - w x (w x c)``."""
    robot = body()
    q, v, _ = body_states(seed)
    w = v[3:]
    wd = -np.linalg.solve(I_C, np.cross(w, I_C @ w))
    lin = rotation(q[3:]).T @ gravity - np.cross(w, v[:3]) - np.cross(wd, COM) - np.cross(w, np.cross(w, COM))
    a = rd.forward_dynamics(robot, q, v, np.zeros(6), gravity=gravity)
    check("acceleration", a, np.concatenate([lin, wd]))
    check("the centre of mass falls freely", com_acceleration(v, a), rotation(q[3:]).T @ gravity)


@pytest.mark.parametrize("seed", SEEDS)
def test_free_body_forward_dynamics_with_a_wrench(seed):
    """``a = M^-1 (tau - b)``, ``M`` and ``b`` (Newton-Euler at ``a = 0``) the closed forms above."""
    robot = body()
    q, v, tau = body_states(seed)
    gravity = GRAVITIES[1]
    expected = np.linalg.solve(body_mass_matrix(), tau - newton_euler(q, v, np.zeros(6), gravity))
    check("acceleration", rd.forward_dynamics(robot, q, v, tau, gravity=gravity), expected)
    check("round trip", newton_euler(q, v, expected, gravity), tau)


@pytest.mark.parametrize("gravity", GRAVITIES, ids=["g", "tilted-g"])
@pytest.mark.parametrize("seed", SEEDS)
def test_body_at_rest_is_held_by_its_weight(seed, gravity):
    """``f = -m R^T g`` (upwards: against gravity), through the centre of mass: ``n = c x f``."""
    robot = body()
    q, _, _ = body_states(seed)
    f = -MASS * rotation(q[3:]).T @ gravity
    expected = np.concatenate([f, np.cross(COM, f)])
    zero = np.zeros(6)
    check("inverse dynamics", rd.inverse_dynamics(robot, q, zero, zero, gravity=gravity).torques, expected)
    check("gravity torques", rd.gravity_torques(robot, q, gravity=gravity), expected)
    assert rotation(q[3:]) @ f @ gravity < 0  # the world pushes against gravity


def test_quaternion_convention_is_scalar_last():
    """A quarter turn about z, ``[0, 0, sin(pi/4), cos(pi/4)]``, takes the body x axis to the world y axis."""
    robot = body()
    q = np.array([0.0, 0.0, 0.0, 0.0, 0.0, np.sin(np.pi / 4), np.cos(np.pi / 4)])
    np.testing.assert_allclose(rd.frame_placement(robot, q, "brick")[:3, 0], [0.0, 1.0, 0.0], atol=1e-15)


# ---------------------------------------------------------------- (b) a base at rest

ARM = default_robot_path()


def urdf_mass(path):
    return sum(float(mass.get("value")) for mass in ET.parse(path).getroot().iter("mass"))


def arm_state(seed, robot):
    q, v, a = (x[0] for x in oracle.random_floating_states(robot, 1, seed=seed, scale=2.0))
    v[:6] = a[:6] = 0.0
    return q, v, a


@pytest.mark.parametrize("gravity", GRAVITIES, ids=["g", "tilted-g"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_base_at_rest_is_a_fixed_base_under_the_gravity_seen_from_the_base(seed, gravity):
    floating = rd.load_urdf(ARM, floating_base=True)
    fixed = rd.load_urdf(ARM)
    assert tuple(floating.joint_names) == tuple(fixed.joint_names)
    q, v, a = arm_state(seed, floating)
    R = rotation(q[3:7])
    ours = rd.inverse_dynamics(floating, q, v, a, gravity=gravity)
    reference = rd.inverse_dynamics(fixed, q[7:], v[6:], a[6:], gravity=R.T @ gravity)
    check("joint torques", ours.torques[6:], reference.torques)
    check("joint wrenches", ours.joint_wrenches, reference.joint_wrenches)


@pytest.mark.parametrize("gravity", GRAVITIES, ids=["g", "tilted-g"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_robot_at_rest_is_held_through_its_centre_of_mass(seed, gravity):
    """``torques[:6] = [f; r x f]``, ``f = -m_total R^T g``, ``r = R^T (com - p)`` (the centre of mass from
    Pinocchio, the total mass summed from the URDF)."""
    robot, model = oracle.floating_pair(ARM)
    q, _, _ = arm_state(seed, robot)
    zero = np.zeros(robot.nv)
    R, p = rotation(q[3:7]), q[:3]
    com = pin.centerOfMass(model, model.createData(), oracle.FloatingMapping(robot, model).q(q))
    f = -urdf_mass(ARM) * R.T @ gravity
    expected = np.concatenate([f, np.cross(R.T @ (com - p), f)])
    check("base wrench", rd.inverse_dynamics(robot, q, zero, zero, gravity=gravity).torques[:6], expected)
    check("gravity torques", rd.gravity_torques(robot, q, gravity=gravity)[:6], expected)


# ---------------------------------------------------------------- (c) a free-floating chain

CHAIN_URDF = """<robot name="floating_chain">
  <link name="base"><inertial><origin xyz="0.05 -0.02 0.03" rpy="0.2 -0.1 0.3"/><mass value="3.0"/>
    <inertia ixx="0.05" ixy="0.004" ixz="-0.002" iyy="0.07" iyz="0.003" izz="0.09"/></inertial></link>
  <link name="arm"><inertial><origin xyz="0.25 0.01 0" rpy="0 0 0"/><mass value="1.2"/>
    <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.031"/></inertial></link>
  <joint name="hinge" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0.2 0.05 -0.03" rpy="0.1 0.4 -0.2"/><axis xyz="0 0.6 0.8"/></joint>
</robot>"""
CHAIN_MASS = 4.2
START = np.array([0.1, 0.2, 0.3, 0.3, -0.5, 0.1, 0.8, 0.4])  # base pose (quaternion normalised below), hinge angle
START[3:7] /= np.linalg.norm(START[3:7])
DURATION, DT = 2.0, 1e-3


def hinge_drive(amplitude, frequency=3.0):
    """``tau(t, q, v)``: nothing on the base (no external wrench), a sinusoidal torque on the hinge (constant when
    ``frequency`` is 0)."""
    def tau(t, q, v):
        return np.array([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, amplitude * np.cos(frequency * t)])
    return tau


def world_momentum(robot, q, v):
    """``[linear; angular about the world origin]``, world axes, from the base rows of ``M v`` (base frame, about the
    base origin): ``L = R L_b``, ``H_O = R H_b + p x L``. ``q``, ``v`` batches."""
    h = np.einsum("nij,nj->ni", rd.mass_matrix(robot, q)[:, :6], v)
    R = np.array([rotation(x) for x in q[:, 3:7]])
    L = np.einsum("nij,nj->ni", R, h[:, :3])
    return np.concatenate([L, np.einsum("nij,nj->ni", R, h[:, 3:]) + np.cross(q[:, :3], L)], axis=1)


def simulate_chain(v0, amplitude=0.5, frequency=3.0, dt=DT, duration=DURATION):
    robot = rd.load_urdf(CHAIN_URDF, floating_base=True)
    assert (robot.nq, robot.nv) == (8, 7)
    trajectory = rd.simulate(robot, START, v0, hinge_drive(amplitude, frequency), duration=duration, dt=dt,
                             gravity=ZERO_GRAVITY)
    steps = int(round(duration / dt))
    assert trajectory.t.shape == (steps + 1,)
    assert trajectory.q.shape == (steps + 1, 8) and trajectory.qd.shape == (steps + 1, 7)
    np.testing.assert_allclose(np.linalg.norm(trajectory.q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-9)
    return robot, trajectory


def test_momentum_from_the_mass_matrix_is_the_centroidal_momentum():
    """The two ways of writing the momentum agree: ``[L; H_O] = [L; k_G + c x L]``."""
    robot = rd.load_urdf(CHAIN_URDF, floating_base=True)
    rng = np.random.default_rng(5)
    q, v = START.copy(), rng.normal(size=7)
    L_k = rd.centroidal_momentum(robot, q, v)
    c = rd.center_of_mass(robot, q)
    expected = np.concatenate([L_k[:3], L_k[3:] + np.cross(c, L_k[:3])])
    check("momentum", world_momentum(robot, q[None], v[None])[0], expected)


def test_free_floating_chain_from_rest_keeps_its_centre_of_mass():
    """Zero initial momentum: it stays 0 and the centre of mass stays put while the hinge swings the bodies
    around it (1e-9; 1e-12 measured with a fourth-order Lie-group Runge-Kutta; RK4 stages combined on the group
    without the ``dexp^-1`` correction, a second-order method, drift the centre of mass by 5e-8 m here)."""
    robot, trajectory = simulate_chain(np.zeros(7))
    assert np.ptp(trajectory.q[:, 7]) > 0.1  # the hinge moves
    assert np.abs(trajectory.q[-1, 3:7] @ START[3:7]) < 1.0 - 1e-4  # and the base turns in reaction
    samples = slice(None, None, 50)
    momentum = world_momentum(robot, trajectory.q[samples], trajectory.qd[samples])
    assert np.abs(momentum).max() < TOLERANCE
    com = np.array([rd.center_of_mass(robot, q) for q in trajectory.q[samples]])
    assert np.abs(com - com[0]).max() < TOLERANCE
    check("centre of mass at the start", com[0], rd.center_of_mass(robot, START))


def test_free_floating_chain_conserves_momentum():
    """Moving: linear momentum and angular momentum about the world origin constant to 1e-9 of their size (6e-11
    measured with a fourth-order method, 3e-6 with the second-order one above); the centre of mass moves at ``L / m``
    (1e-9 m)."""
    v0 = np.array([0.3, -0.2, 0.1, 0.5, -0.4, 0.8, 1.0])
    robot, trajectory = simulate_chain(v0)
    samples = slice(None, None, 50)
    momentum = world_momentum(robot, trajectory.q[samples], trajectory.qd[samples])
    scale = max(1.0, np.abs(momentum[0]).max())
    assert np.abs(momentum - momentum[0]).max() < TOLERANCE * scale
    for k in (0, len(trajectory.t) // 2, len(trajectory.t) - 1):  # the centroidal momentum says the same
        L_k = rd.centroidal_momentum(robot, trajectory.q[k], trajectory.qd[k])
        check(f"linear momentum at sample {k}", L_k[:3], momentum[0, :3])
    com = np.array([rd.center_of_mass(robot, q) for q in trajectory.q[samples]])
    expected = com[0] + np.outer(trajectory.t[samples], momentum[0, :3] / CHAIN_MASS)
    assert np.abs(com - expected).max() < TOLERANCE


def test_rk4_is_fourth_order_with_a_floating_base():
    """Halving ``dt`` divides the error at t = 1 s by about 16 (reference: dt / 16), the configuration error
    measured on the manifold by ``difference``; a vigorous motion keeps the errors far above round-off. The hinge
    torque is constant: a torque varying in time is held over each step, an error of order 1 in ``dt``."""
    v0 = np.array([0.6, -0.4, 0.2, 1.0, -0.8, 1.6, 2.0])
    robot, reference = simulate_chain(v0, amplitude=2.0, frequency=0.0, dt=2e-3 / 16, duration=1.0)
    errors = []
    for dt in (4e-3, 2e-3):
        _, trajectory = simulate_chain(v0, amplitude=2.0, frequency=0.0, dt=dt, duration=1.0)
        errors.append(max(np.abs(rd.difference(robot, reference.q[-1], trajectory.q[-1])).max(),
                          np.abs(reference.qd[-1] - trajectory.qd[-1]).max()))
    assert 0.75 * 16 < errors[0] / errors[1] < 1.25 * 16, errors
