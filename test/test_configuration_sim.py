"""The configuration manifold (rd.integrate, rd.difference, rd.neutral, rd.random_configuration, rd.normalize) against
Pinocchio's pin.integrate / pin.difference / pin.neutral, their properties (hypothesis), bad input; and the simulator
on it: floating bases, planar and spherical joints, conservation laws and the RK4's order on the group."""
import math

import numpy as np
import pinocchio as pin
import pytest
from hypothesis import given
from hypothesis import strategies as st

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-12
ZERO_GRAVITY = np.zeros(3)

# ---------------------------------------------------------------------------------------------- robots

FLOATING_ROBOTS = ["talos_reduced.urdf", "anymal_b_simple_description/robots/anymal.urdf",
                   "panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf", "icub.urdf"]


def inertial(mass=1.0, com="0.1 0.02 -0.03", diagonal=(0.01, 0.02, 0.025)):
    ixx, iyy, izz = diagonal
    return (f'<inertial><origin xyz="{com}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def joint(name, kind, parent, child, axis="0 0 1", xyz="0.1 0 0", limit=""):
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')


#: Every joint type in one chain: planar (normal z), spherical (our URDF extension), revolute with limits,
#: continuous, prismatic.
ALL_JOINTS = (f'<robot name="all_joints"><link name="base">{inertial(3.0)}</link>'
              + "".join(f'<link name="l{k}">{inertial()}</link>' for k in range(1, 6))
              + joint("planar", "planar", "base", "l1")
              + joint("ball", "spherical", "l1", "l2")
              + joint("elbow", "revolute", "l2", "l3", "0 1 0", limit='<limit lower="-1" upper="1.5"/>')
              + joint("wrist", "continuous", "l3", "l4", "1 0 0")
              + joint("slider", "prismatic", "l4", "l5", "0 0 1")
              + "</robot>")


def all_joints_model(floating):
    """The Pinocchio model of ALL_JOINTS built by hand (the joints' names and types; placements and inertias do not
    enter integrate and difference)."""
    model = pin.Model()
    parent = 0
    if floating:
        parent = model.addJoint(parent, pin.JointModelFreeFlyer(), pin.SE3.Identity(), oracle.FREE_FLYER)
    for name, joint_model in (("planar", pin.JointModelPlanar()), ("ball", pin.JointModelSpherical()),
                              ("elbow", pin.JointModelRY()), ("wrist", pin.JointModelRUBX()),
                              ("slider", pin.JointModelPZ())):
        parent = model.addJoint(parent, joint_model, pin.SE3.Identity(), name)
        model.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    return model


def all_joints(floating):
    robot = rd.load_urdf(ALL_JOINTS, floating_base=floating)
    return robot, all_joints_model(floating)


def angle_coordinates(robot):
    """Indices in q of the angles Pinocchio stores as (cos, sin): continuous joints and the planar joints' theta."""
    out = []
    for name in robot.joint_names:
        kind, k = robot.joints[name].type, robot.idx_q[name]
        if kind == "continuous":
            out.append(k)
        elif kind == "planar":
            out.append(k + 2)
    return np.array(out, dtype=int)


def near(robot, rng, q0):
    """A random configuration whose (cos, sin) angles are within 3 rad of ``q0``'s: Pinocchio wraps their
    difference to (-pi, pi], ours does not."""
    q1 = rd.random_configuration(robot, rng)
    k = angle_coordinates(robot)
    q1[k] = q0[k] + rng.uniform(-3.0, 3.0, size=k.size)
    return q1


def compare_with_pinocchio(robot, model, seed=0, n=20, speed=6.0):
    """Largest difference from pin.neutral, pin.integrate (any rotation angle, so Pinocchio's choice of quaternion
    sign is compared too) and pin.difference over ``n`` random states."""
    mapping = oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(seed)
    errors = [np.abs(mapping.q(rd.neutral(robot)) - pin.neutral(model)).max()]
    for _ in range(n):
        q0 = rd.random_configuration(robot, rng)
        v = rng.uniform(-speed, speed, size=robot.nv)
        dt = rng.uniform(0.1, 1.0)
        errors.append(np.abs(mapping.q(rd.integrate(robot, q0, v, dt)) -
                             pin.integrate(model, mapping.q(q0), dt * mapping.v(v))).max())
        q1 = near(robot, rng, q0)
        errors.append(np.abs(mapping.v(rd.difference(robot, q0, q1)) -
                             pin.difference(model, mapping.q(q0), mapping.q(q1))).max())
    return max(errors)


# ---------------------------------------------------------------------------------------------- vs Pinocchio

@pytest.mark.parametrize("fragment", FLOATING_ROBOTS)
def test_free_flyer_robots_match_pinocchio(fragment):
    robot, model = oracle.floating_pair(oracle.robot_path(fragment))
    assert robot.has_floating_base
    assert compare_with_pinocchio(robot, model) < TOLERANCE


@pytest.mark.parametrize("floating", [False, True])
def test_planar_and_spherical_joints_match_pinocchio(floating):
    robot, model = all_joints(floating)
    assert robot.nq == (7 if floating else 0) + 3 + 4 + 1 + 1 + 1
    assert compare_with_pinocchio(robot, model) < TOLERANCE


def test_batches_equal_one_by_one():
    robot, _ = all_joints(True)
    rng = np.random.default_rng(1)
    q = rd.random_configuration(robot, rng, size=6)
    v = rng.normal(size=(6, robot.nv))
    out = rd.integrate(robot, q, v, 0.3)
    assert out.shape == (6, robot.nq)
    d = rd.difference(robot, q[::-1], q)
    assert d.shape == (6, robot.nv)
    for i in range(6):
        np.testing.assert_array_equal(out[i], rd.integrate(robot, q[i], v[i], 0.3))
        np.testing.assert_array_equal(d[i], rd.difference(robot, q[::-1][i], q[i]))


def test_random_configuration_within_limits():
    robot, _ = all_joints(True)
    q = rd.random_configuration(robot, 7, size=2000)
    assert q.shape == (2000, robot.nq)
    names = robot.q_names
    for k, name in enumerate(names):
        lo, hi = q[:, k].min(), q[:, k].max()
        if name == "elbow":
            assert -1.0 <= lo < -0.9 and 1.4 < hi <= 1.5
        elif name in ("wrist", "planar.theta"):
            assert -math.pi <= lo < -3.0 and 3.0 < hi <= math.pi
        elif name.rsplit(".", 1)[-1] in ("x", "y", "z") or name == "slider":
            assert -1.0 <= lo < -0.9 and 0.9 < hi <= 1.0
    for s in robot.quaternions:
        quaternion = q[:, s:s + 4]
        np.testing.assert_allclose(np.linalg.norm(quaternion, axis=1), 1.0, rtol=0, atol=1e-15)
        assert np.abs(quaternion.mean(axis=0)).max() < 0.05  # uniform: no preferred direction
    np.testing.assert_array_equal(rd.random_configuration(robot, 3), rd.random_configuration(robot, 3))


def test_normalize():
    robot, _ = all_joints(True)
    q = rd.random_configuration(robot, 2)
    scaled = q.copy()
    for s in robot.quaternions:
        scaled[s:s + 4] *= 3.7
    np.testing.assert_allclose(rd.normalize(robot, scaled), q, rtol=0, atol=1e-15)
    assert rd.normalize(robot, scaled * 1e300 / 3.7).shape == q.shape  # no overflow in the norm


# ---------------------------------------------------------------------------------------------- properties

def reals(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def unit_quaternions(draw):
    x = np.array(draw(st.tuples(*[reals(-1.0, 1.0)] * 4)))
    if np.linalg.norm(x) < 0.1:
        x = np.array([0.0, 0.0, 0.0, 1.0]) + x
    return x / np.linalg.norm(x)


@st.composite
def configurations(draw, robot):
    """Any configuration of ALL_JOINTS (floating): positions in [-2, 2], angles in [-3, 3] (two of them differ by
    less than 2 pi: at a planar angle difference of 2 pi no constant twist displaces the origin)."""
    q = np.empty(robot.nq)
    q[0:3] = draw(st.tuples(*[reals(-2.0, 2.0)] * 3))
    q[3:7] = draw(unit_quaternions())
    k = robot.idx_q["planar"]
    q[k:k + 3] = draw(st.tuples(reals(-2.0, 2.0), reals(-2.0, 2.0), reals(-3.0, 3.0)))
    k = robot.idx_q["ball"]
    q[k:k + 4] = draw(unit_quaternions())
    q[robot.idx_q["elbow"]] = draw(reals(-1.0, 1.5))
    q[robot.idx_q["wrist"]] = draw(reals(-3.0, 3.0))
    q[robot.idx_q["slider"]] = draw(reals(-2.0, 2.0))
    return q


def rotation_vector(values, limit):
    """A 3-vector shorter than ``limit``."""
    w = np.array(values)
    norm = np.linalg.norm(w)
    return w if norm < limit else w * (limit / norm)


@st.composite
def small_velocities(draw, robot):
    """Velocities whose rotations turn by less than pi (where the logarithm is the inverse of the exponential)."""
    v = np.array(draw(st.tuples(*[reals(-3.0, 3.0)] * robot.nv)))
    limit = math.pi - 1e-3
    v[3:6] = rotation_vector(v[3:6], limit)
    k = robot.idx_v["ball"]
    v[k:k + 3] = rotation_vector(v[k:k + 3], limit)
    return v


ROBOT = rd.load_urdf(ALL_JOINTS, floating_base=True)


def same_configuration(a, b, atol):
    """Equal configurations, quaternions up to sign."""
    a, b = np.array(a), np.array(b)
    for s in ROBOT.quaternions:
        if a[s:s + 4] @ b[s:s + 4] < 0:
            b[s:s + 4] *= -1
    np.testing.assert_allclose(a, b, rtol=0, atol=atol)


@given(q0=configurations(ROBOT), q1=configurations(ROBOT))
def test_integrate_inverts_difference(q0, q1):
    same_configuration(rd.integrate(ROBOT, q0, rd.difference(ROBOT, q0, q1)), q1, atol=1e-9)


@given(q=configurations(ROBOT), v=small_velocities(ROBOT))
def test_difference_inverts_integrate(q, v):
    np.testing.assert_allclose(rd.difference(ROBOT, q, rd.integrate(ROBOT, q, v)), v, rtol=0, atol=1e-9)


@given(q=configurations(ROBOT), v=small_velocities(ROBOT), s=reals(-1.0, 1.0), t=reals(-1.0, 1.0))
def test_integrate_along_one_twist_adds_times(q, v, s, t):
    """A one-parameter subgroup: ``(q ⊕ s v) ⊕ t v = q ⊕ (s + t) v``."""
    same_configuration(rd.integrate(ROBOT, rd.integrate(ROBOT, q, v, s), v, t), rd.integrate(ROBOT, q, v, s + t),
                       atol=1e-9)


# ---------------------------------------------------------------------------------------------- bad input

def test_bad_input_is_a_clear_state_error():
    robot = ROBOT
    q, v = rd.neutral(robot), np.zeros(robot.nv)
    with pytest.raises(rd.StateError, match=rf"q has shape \({robot.nv},\); robot 'all_joints' needs \({robot.nq},\) "
                                            rf"or \(N, {robot.nq}\).*q is a configuration of {robot.nq}"):
        rd.integrate(robot, np.zeros(robot.nv), v)
    with pytest.raises(rd.StateError, match=rf"v has shape \({robot.nq},\).*needs \({robot.nv},\)"):
        rd.integrate(robot, q, np.zeros(robot.nq))
    with pytest.raises(rd.StateError, match=r"q1 has shape \(3,\)"):
        rd.difference(robot, q, [1.0, 2.0, 3.0])
    zero = q.copy()
    zero[3:7] = 0.0
    with pytest.raises(rd.StateError, match="quaternion of joint 'root_joint'.*norm 0; it must be a unit quaternion"):
        rd.integrate(robot, zero, v)
    with pytest.raises(rd.StateError, match=r"q0 \(state 1\): the quaternion of joint 'root_joint'"):
        rd.difference(robot, np.stack([q, zero]), np.stack([q, q]))
    with pytest.raises(rd.StateError, match=r"the quaternion of joint 'root_joint' \[qx qy qz qw\] = \[0.0, 0.0, "
                                            r"0.0, 0.0\] is zero"):
        rd.normalize(robot, zero)
    ball = q.copy()
    ball[robot.idx_q["ball"] + 1] = np.nan
    with pytest.raises(rd.StateError, match="quaternion of joint 'ball'.* is not finite"):
        rd.normalize(robot, ball)
    with pytest.raises(rd.StateError, match="q is not finite at joint 'ball.qy'"):
        rd.integrate(robot, ball, v)
    bad_v = np.zeros((2, robot.nv))
    bad_v[1, robot.idx_v["ball"] + 1] = np.inf
    with pytest.raises(rd.StateError, match=r"v is not finite at joint 'ball.wy' \(state 1\): inf"):
        rd.integrate(robot, np.stack([q, q]), bad_v)
    with pytest.raises(rd.StateError, match=r"v has shape \(3, 15\) but q has \(2, 17\)"):
        rd.integrate(robot, np.stack([q, q]), np.zeros((3, robot.nv)))
    with pytest.raises(rd.StateError, match="dt must be finite"):
        rd.integrate(robot, q, v, np.inf)


# ---------------------------------------------------------------------------------------------- the simulator

#: A free-floating 2-link chain: a torso and an arm on a continuous joint about a skew axis.
CHAIN = ('<robot name="chain"><link name="torso"><inertial><origin xyz="0.05 -0.02 0.1" rpy="0.1 0.2 0.3"/>'
         '<mass value="3.0"/><inertia ixx="0.08" ixy="0.01" ixz="0" iyy="0.1" iyz="0.02" izz="0.12"/></inertial>'
         '</link><link name="arm"><inertial><origin xyz="0.2 0.0 0.05"/><mass value="1.5"/>'
         '<inertia ixx="0.004" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.021"/></inertial></link>'
         '<joint name="shoulder" type="continuous"><parent link="torso"/><child link="arm"/>'
         '<origin xyz="0.3 0.1 -0.05" rpy="0.2 -0.1 0.4"/><axis xyz="0 0.6 0.8"/></joint></robot>')

#: A single rigid body, its centre of mass away from its frame's origin and its principal axes turned from it.
BRICK = ('<robot name="brick"><link name="brick"><inertial><origin xyz="0.1 -0.05 0.2" rpy="0.3 0.2 0.1"/>'
         '<mass value="2.0"/><inertia ixx="0.05" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.13"/></inertial></link>'
         '</robot>')


def rotation(x, y, z, w):
    """The rotation of a unit quaternion (scalar last)."""
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def rpy(roll, pitch, yaw):
    c, s = np.cos([roll, pitch, yaw]), np.sin([roll, pitch, yaw])
    Rx = np.array([[1, 0, 0], [0, c[0], -s[0]], [0, s[0], c[0]]])
    Ry = np.array([[c[1], 0, s[1]], [0, 1, 0], [-s[1], 0, c[1]]])
    Rz = np.array([[c[2], -s[2], 0], [s[2], c[2], 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def about_axis(axis, angle):
    u = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -u[2], u[1]], [u[2], 0, -u[0]], [-u[1], u[0], 0]])
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def chain_center_of_mass(q):
    """From the link poses, written out: the torso at the base pose, the arm at the torso's ``<origin>`` turned by
    the shoulder angle."""
    R, p = rotation(*q[3:7]), q[:3]
    R_arm = R @ rpy(0.2, -0.1, 0.4) @ about_axis([0, 0.6, 0.8], q[7])
    p_arm = p + R @ np.array([0.3, 0.1, -0.05])
    return (3.0 * (p + R @ np.array([0.05, -0.02, 0.1])) + 1.5 * (p_arm + R_arm @ np.array([0.2, 0.0, 0.05]))) / 4.5


def world_momentum(robot, q, v):
    """The spatial momentum ``[linear; angular about the world origin]`` in the world: the base rows of ``M v`` are
    the whole system's momentum in the base frame about its origin (the free-flyer's motion columns are the
    identity), moved to the world by the base pose."""
    h = rd.mass_matrix(robot, q)[:6] @ v
    R, p = rotation(*q[3:7]), q[:3]
    linear = R @ h[:3]
    return np.concatenate([linear, R @ h[3:] + np.cross(p, linear)])


def test_free_floating_chain_conserves_momentum_and_its_center_of_mass():
    """Zero gravity, a sinusoidal shoulder torque for 2 s at dt = 1 ms (RK4): the internal torque changes neither
    momentum; the centre of mass stays where it is (zero linear momentum). Measured: momentum 1.4e-11, centre of
    mass 3e-12 m, while the arm turns through 5.2 rad at up to 5.6 rad/s and the base moves by 0.38 m."""
    robot = rd.load_urdf(CHAIN, floating_base=True)
    assert (robot.nq, robot.nv) == (8, 7)
    q0 = np.array([0.3, -0.2, 0.5, 0.1, 0.2, -0.3, 0.9, 0.4])
    q0 = rd.normalize(robot, q0)
    v0 = np.array([0.0, 0.0, 0.0, 0.8, -1.2, 0.5, 2.0])
    M = rd.mass_matrix(robot, q0)
    v0[:3] = -np.linalg.solve(M[:3, :3], M[:3, 3:] @ v0[3:])  # no linear momentum: a still centre of mass

    def torque(t, q, qd):
        return np.r_[np.zeros(6), 0.5 * np.sin(3.0 * t)]

    trajectory = rd.simulate(robot, q0, v0, torque, 2.0, 1e-3, gravity=ZERO_GRAVITY)
    assert trajectory.q.shape == (2001, 8) and trajectory.qd.shape == trajectory.tau.shape == (2001, 7)
    h = np.array([world_momentum(robot, q, v) for q, v in zip(trajectory.q, trajectory.qd)])
    c = np.array([chain_center_of_mass(q) for q in trajectory.q])
    assert np.abs(h[0]).max() > 0.1 and np.abs(h[0, :3]).max() < 1e-15
    assert np.abs(h - h[0]).max() < 1e-9
    assert np.abs(c - c[0]).max() < 1e-9
    assert np.ptp(trajectory.q[:, 7]) > 5.0 and np.abs(trajectory.q[:, :3] - q0[:3]).max() > 0.3  # it moves
    np.testing.assert_allclose(np.linalg.norm(trajectory.q[:, 3:7], axis=1), 1.0, rtol=0, atol=1e-15)
    if hasattr(rd, "center_of_mass"):
        k = [0, 1000, 2000]
        result = rd.center_of_mass(robot, trajectory.q[k])
        np.testing.assert_allclose(getattr(result, "position", result), c[k], rtol=0, atol=1e-12)


def test_torque_free_rigid_body_conserves_energy_and_angular_momentum():
    """Euler's torque-free motion of an asymmetric body, spinning at 5.4 rad/s off its principal axes (it tumbles)
    and translating, for 2 s at dt = 1 ms (RK4): kinetic energy and the world momentum stay within 1e-9."""
    robot = rd.load_urdf(BRICK, floating_base=True)
    q0 = rd.normalize(robot, [0.1, 0.2, 0.3, 0.2, -0.1, 0.3, 0.9])
    v0 = np.array([0.3, -0.2, 0.5, 2.0, -3.0, 4.0])
    trajectory = rd.simulate(robot, q0, v0, np.zeros(6), 2.0, 1e-3, gravity=ZERO_GRAVITY)
    M = rd.mass_matrix(robot, trajectory.q)
    energy = 0.5 * np.einsum("ti,tij,tj->t", trajectory.qd, M, trajectory.qd)
    h = np.array([world_momentum(robot, q, v) for q, v in zip(trajectory.q, trajectory.qd)])
    assert np.abs(energy - energy[0]).max() < 1e-9
    assert np.abs(h - h[0]).max() < 1e-9
    spin = trajectory.qd[:, 3:]
    assert np.abs(spin - spin[0]).max() > 1.0  # the body-frame angular velocity does change: a real tumble


def test_rk4_is_fourth_order_on_the_group():
    """On the free body above, halving dt divides the error at t = 1 s by 16 (measured 16.04-16.07 from dt = 8 ms
    to 1 ms); freezing the stages in the tangent space at q_n would give 4 (measured 4.00)."""
    robot = rd.load_urdf(BRICK, floating_base=True)
    q0 = rd.normalize(robot, [0.1, 0.2, 0.3, 0.2, -0.1, 0.3, 0.9])
    v0 = np.array([0.3, -0.2, 0.5, 2.0, -3.0, 4.0])

    def final(dt, method="rk4"):
        return rd.simulate(robot, q0, v0, np.zeros(6), 1.0, dt, method=method, gravity=ZERO_GRAVITY).q[-1]

    reference = final(5e-4)  # its error: 1/256 of the smaller one below
    errors = [np.abs(rd.difference(robot, reference, final(dt))).max() for dt in (4e-3, 2e-3)]
    assert 0.75 * 16 < errors[0] / errors[1] < 1.25 * 16
    errors = [np.abs(rd.difference(robot, reference, final(dt, "semi_implicit"))).max() for dt in (2e-3, 1e-3)]
    assert 0.75 * 2 < errors[0] / errors[1] < 1.25 * 2


def test_planar_body_moves_in_a_straight_line_while_turning():
    """A free body on a planar joint, its centre of mass at the joint, zero gravity: it turns at a constant rate and
    its origin moves at a constant world velocity, ``p(t) = p0 + R(theta0) v0 t``, ``theta(t) = theta0 + w t``."""
    urdf = ('<robot name="puck"><link name="ground"/><link name="puck">'
            + inertial(2.0, "0 0 0", (0.02, 0.03, 0.04)) + '</link>'
            + joint("slide", "planar", "ground", "puck", xyz="0 0 0") + "</robot>")
    robot = rd.load_urdf(urdf)
    q0, v0 = np.array([0.2, -0.1, 0.7]), np.array([0.5, 0.3, 2.5])
    trajectory = rd.simulate(robot, q0, v0, np.zeros(3), 2.0, 1e-3, gravity=ZERO_GRAVITY)
    t = trajectory.t[:, None]
    c, s = np.cos(q0[2]), np.sin(q0[2])
    expected = np.hstack([q0[:2] + t * np.array([c * v0[0] - s * v0[1], s * v0[0] + c * v0[1]]), q0[2] + t * v0[2]])
    np.testing.assert_allclose(trajectory.q, expected, rtol=0, atol=1e-9)


def test_spherical_pendulum_conserves_energy():
    """A body on a spherical joint, its centre of mass 0.3 m from the joint, swinging and spinning in gravity for
    2 s at dt = 1 ms (RK4): kinetic plus potential energy stays within 1e-9 J; its quaternion stays unit."""
    com = np.array([0.05, 0.02, -0.3])
    urdf = ('<robot name="ball"><link name="ceiling"/><link name="bob">'
            + inertial(1.5, " ".join(map(str, com)), (0.02, 0.03, 0.01)) + '</link>'
            + joint("ball", "spherical", "ceiling", "bob", xyz="0 0 0") + "</robot>")
    robot = rd.load_urdf(urdf)
    assert (robot.nq, robot.nv) == (4, 3)
    q0 = rd.normalize(robot, [0.3, -0.2, 0.1, 0.9])
    trajectory = rd.simulate(robot, q0, np.array([1.0, -2.0, 3.0]), np.zeros(3), 2.0, 1e-3)
    M = rd.mass_matrix(robot, trajectory.q)
    kinetic = 0.5 * np.einsum("ti,tij,tj->t", trajectory.qd, M, trajectory.qd)
    height = np.array([(rotation(*q) @ com)[2] for q in trajectory.q])
    energy = kinetic + 1.5 * 9.81 * height
    assert np.ptp(height) > 0.1
    assert np.abs(energy - energy[0]).max() < 1e-9
    np.testing.assert_allclose(np.linalg.norm(trajectory.q, axis=1), 1.0, rtol=0, atol=1e-15)


def test_step_batch_equals_one_by_one_with_a_floating_base():
    robot, _ = all_joints(True)
    rng = np.random.default_rng(4)
    q = rd.random_configuration(robot, rng, size=3)
    q[:, robot.idx_q["elbow"]] = [-1.0, 0.2, 1.5]  # one on each stop, moving into it
    qd = rng.normal(size=(3, robot.nv))
    qd[:, robot.idx_v["elbow"]] = [-1.0, 0.5, 1.0]
    tau = rng.normal(size=(3, robot.nv))
    for method in ("rk4", "semi_implicit"):
        q_next, qd_next = rd.step(robot, q, qd, tau, 1e-3, method=method)
        assert q_next.shape == (3, robot.nq) and qd_next.shape == (3, robot.nv)
        for n in range(3):
            one = rd.step(robot, q[n], qd[n], tau[n], 1e-3, method=method)
            np.testing.assert_allclose(q_next[n], one[0], rtol=0, atol=1e-14)
            np.testing.assert_allclose(qd_next[n], one[1], rtol=0, atol=1e-12)
        # the stops hold (within 1e-6 rad of them, never past) and the velocity into a stop reaches it within a step
        elbow, elbow_v = q_next[[0, 2], robot.idx_q["elbow"]], qd_next[[0, 2], robot.idx_v["elbow"]]
        np.testing.assert_allclose(elbow, [-1.0, 1.5], rtol=0, atol=1e-6)
        assert elbow[0] >= -1.0 and elbow[1] <= 1.5
        assert elbow_v[0] >= (-1.0 - elbow[0]) / 1e-3 and elbow_v[1] <= (1.5 - elbow[1]) / 1e-3
        for s in robot.quaternions:
            np.testing.assert_allclose(np.linalg.norm(q_next[:, s:s + 4], axis=1), 1.0, rtol=0, atol=1e-15)


def test_a_short_step_follows_the_group_exponential():
    """Over one tiny step the motion is ``q ⊕ qd dt`` to first order: the simulator moves on the group, not by
    ``q + dt qd`` (which is not even the right size for a floating base)."""
    robot, _ = all_joints(True)
    rng = np.random.default_rng(5)
    q, qd = rd.random_configuration(robot, rng), rng.normal(size=robot.nv)
    q[robot.idx_q["elbow"]] = 0.0
    dt = 1e-6
    q_next, _ = rd.step(robot, q, qd, np.zeros(robot.nv), dt, gravity=ZERO_GRAVITY)
    np.testing.assert_allclose(rd.difference(robot, q, q_next) / dt, qd, rtol=0, atol=1e-5)


def test_simulate_refuses_a_configuration_of_nv_entries():
    robot = rd.load_urdf(BRICK, floating_base=True)
    with pytest.raises(rd.StateError, match=r"q has shape \(6,\); robot 'brick' needs \(7,\)"):
        rd.simulate(robot, np.zeros(6), np.zeros(6), np.zeros(6), 1.0, 1e-3)
    with pytest.raises(rd.StateError, match="unit quaternion"):
        rd.simulate(robot, np.zeros(7), np.zeros(6), np.zeros(6), 1.0, 1e-3)
