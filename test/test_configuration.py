"""Configurations on the joints' manifold (hypothesis; profiles in conftest.py) and the floating base's bad inputs.

Two floating robots: the bundled 6-DOF arm (``rne_arm6.urdf``, ``floating_base=True``) and a small tree with one
joint of each kind (revolute, continuous, prismatic, planar, spherical) on a floating base.

- ``integrate(q, difference(q, q1)) == q1`` as poses (a quaternion and its negative are the same rotation; angles of
  continuous and planar joints compared modulo 2 pi), for rotations between ``q`` and ``q1`` below pi (where the
  logarithm is unique);
- ``difference(q, integrate(q, v, dt)) == v dt`` for rotation increments below pi; ``integrate`` keeps quaternions
  unit;
- ``neutral`` has identity quaternions and zeros elsewhere; ``random_configuration`` unit quaternions, joints within
  their limits, the same configuration for the same generator seed;
- the mass matrix is symmetric positive definite; ``dM/dt - 2 C`` is skew-symmetric, ``dM/dt`` by central
  differences along ``integrate(q, ±h v)`` (``v`` the base twist in the base frame: ``C`` is Pinocchio's, for which
  this holds with quasi-velocities too), and ``C v`` is ``bias - gravity``;
- a zero or non-unit quaternion in ``q`` is a ``StateError`` naming the quaternion; ``q`` of length ``nv`` a
  ``StateError`` naming ``q`` and both sizes; a ``floating`` joint below the root and a ``planar`` joint with a zero
  axis are ``URDFError``s naming the joint.
"""
import functools
import re

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import rne_dynamics as rd
from rne_dynamics.robots import default_robot_path

TOLERANCE = 1e-9
FD_TOLERANCE = 1e-7
STEP = 1e-5  # differences of M along the motion: round-off ~1e-11 of |M| here
MAX_ROTATION = 3.0  # rad: rotation increments below pi
ROBOTS = ["arm", "mixed"]


def box_inertial(mass, a, b, c, xyz="0 0 0", rpy="0 0 0"):
    ixx, iyy, izz = mass / 12 * (b * b + c * c), mass / 12 * (a * a + c * c), mass / 12 * (a * a + b * b)
    return (f'<inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass!r}"/>'
            f'<inertia ixx="{ixx!r}" ixy="0" ixz="0" iyy="{iyy!r}" iyz="0" izz="{izz!r}"/></inertial>')


MIXED_URDF = (
    '<robot name="mixed">'
    f'<link name="base">{box_inertial(5.0, 0.4, 0.3, 0.2, "0.01 0.02 -0.03")}</link>'
    f'<link name="upper">{box_inertial(1.5, 0.1, 0.1, 0.5, "0 0 0.2", "0.1 0 0")}</link>'
    f'<link name="fore">{box_inertial(1.0, 0.4, 0.08, 0.08, "0.15 0 0")}</link>'
    f'<link name="slider">{box_inertial(0.8, 0.2, 0.2, 0.05, "0 0.02 0")}</link>'
    f'<link name="puck">{box_inertial(0.5, 0.1, 0.1, 0.03, "0.03 0 0.01", "0 0.2 0")}</link>'
    f'<link name="ball">{box_inertial(0.7, 0.12, 0.1, 0.08, "0.05 0.02 0")}</link>'
    '<joint name="shoulder" type="revolute"><parent link="base"/><child link="upper"/>'
    '<origin xyz="0.1 0 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 1 0"/>'
    '<limit lower="-2.5" upper="2.5" effort="100" velocity="5"/></joint>'
    '<joint name="elbow" type="continuous"><parent link="upper"/><child link="fore"/>'
    '<origin xyz="0 0 0.45"/><axis xyz="0 0 1"/></joint>'
    '<joint name="rail" type="prismatic"><parent link="base"/><child link="slider"/>'
    '<origin xyz="-0.2 0.1 0" rpy="0 0 0.4"/><axis xyz="1 0 0"/>'
    '<limit lower="-0.5" upper="0.5" effort="100" velocity="1"/></joint>'
    '<joint name="table" type="planar"><parent link="slider"/><child link="puck"/>'
    '<origin xyz="0 0 0.1" rpy="0.2 0 0"/><axis xyz="0 0 1"/></joint>'
    '<joint name="wrist" type="spherical"><parent link="fore"/><child link="ball"/>'
    '<origin xyz="0.3 0 0" rpy="0 0.3 0"/></joint>'
    '</robot>')


@functools.lru_cache(maxsize=None)
def robot(name):
    source = default_robot_path() if name == "arm" else MIXED_URDF
    return rd.load_urdf(source, floating_base=True)


def quaternion_blocks(robot):
    """Start of every unit quaternion in ``q`` (the base's, the spherical joints')."""
    return [3] + [robot.idx_q[n] for n in robot.joint_names if robot.joints[n].type == "spherical"]


def rotation_blocks(robot):
    """Start of every angular velocity in ``v`` (the base's, the spherical joints')."""
    return [3] + [robot.idx_v[n] for n in robot.joint_names if robot.joints[n].type == "spherical"]


def angle_indices(robot):
    """Coordinates of ``q`` that are angles without limits (continuous joints, a planar joint's theta)."""
    out = []
    for name in robot.joint_names:
        kind, k = robot.joints[name].type, robot.idx_q[name]
        out += [k] if kind == "continuous" else [k + 2] if kind == "planar" else []
    return out


def pose_error(robot, q, reference):
    """Largest difference between two configurations as poses: quaternions up to sign, unlimited angles modulo
    2 pi; relative to the size of ``reference``."""
    q, reference = np.asarray(q, float), np.asarray(reference, float)
    difference = np.abs(q - reference)
    for k in quaternion_blocks(robot):
        difference[k:k + 4] = min(np.abs(q[k:k + 4] - reference[k:k + 4]).max(),
                                  np.abs(q[k:k + 4] + reference[k:k + 4]).max())
    for k in angle_indices(robot):
        difference[k] = abs(np.angle(np.exp(1j * (q[k] - reference[k]))))
    return difference.max() / max(1.0, np.abs(reference).max())


def rotation_angle(a, b):
    """Angle of the rotation between unit quaternions ``a`` and ``b``."""
    return 2.0 * np.arccos(min(1.0, abs(float(a @ b))))


# ---------------------------------------------------------------- strategies

def reals(low, high):
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


@st.composite
def unit_quaternions(draw):
    x = np.array(draw(st.tuples(*[reals(-1.0, 1.0)] * 4)))
    norm = np.linalg.norm(x)
    assume(norm > 0.1)
    return x / norm


@st.composite
def configurations(draw, robot):
    """The base anywhere in ``[-10, 10]^3``, any orientation; joints in ``[-1.5, 1.5]`` (within their limits),
    planar ``x, y`` in ``[-2, 2]``; spherical joints any orientation."""
    q = np.empty(robot.nq)
    q[0:3] = draw(st.tuples(*[reals(-10.0, 10.0)] * 3))
    q[3:7] = draw(unit_quaternions())
    for name in robot.joint_names:
        joint, k = robot.joints[name], robot.idx_q[name]
        if joint.type == "spherical":
            q[k:k + 4] = draw(unit_quaternions())
        elif joint.type == "planar":
            q[k:k + 3] = draw(st.tuples(reals(-2.0, 2.0), reals(-2.0, 2.0), reals(-1.5, 1.5)))
        else:
            q[k] = draw(reals(max(joint.lower, -1.5), min(joint.upper, 1.5)))
    return q


@st.composite
def velocities(draw, robot, bound=2.0):
    """Each coordinate in ``[-bound, bound]``, every angular velocity block scaled to at most ``MAX_ROTATION``."""
    v = np.array(draw(st.tuples(*[reals(-bound, bound)] * robot.nv)))
    for k in rotation_blocks(robot):
        norm = np.linalg.norm(v[k:k + 3])
        if norm > MAX_ROTATION:
            v[k:k + 3] *= MAX_ROTATION / norm
    return v


def state(name):
    """``(robot, strategy of q)`` for ``@given`` via ``st.data()``."""
    return robot(name), configurations(robot(name))


# ---------------------------------------------------------------- integrate and difference

@pytest.mark.parametrize("name", ROBOTS)
@given(data=st.data())
def test_integrate_of_difference_is_the_target(name, data):
    model, strategy = state(name)
    q, q1 = data.draw(strategy), data.draw(strategy)
    for k in quaternion_blocks(model):
        assume(rotation_angle(q[k:k + 4], q1[k:k + 4]) < np.pi - 1e-2)
    d = rd.difference(model, q, q1)
    assert d.shape == (model.nv,)
    error = pose_error(model, rd.integrate(model, q, d), q1)
    assert error < TOLERANCE, f"pose error {error:.3g}"


@pytest.mark.parametrize("name", ROBOTS)
@given(data=st.data(), dt=reals(0.1, 1.0))
def test_difference_of_integrate_is_the_step(name, data, dt):
    model, strategy = state(name)
    q, v = data.draw(strategy), data.draw(velocities(model))
    q1 = rd.integrate(model, q, v, dt)
    assert q1.shape == (model.nq,)
    for k in quaternion_blocks(model):
        assert abs(np.linalg.norm(q1[k:k + 4]) - 1.0) < 1e-12
    d = rd.difference(model, q, q1)
    error = np.abs(d - v * dt).max() / max(1.0, np.abs(v * dt).max())
    assert error < TOLERANCE, f"relative error {error:.3g}"


@pytest.mark.parametrize("name", ROBOTS)
def test_neutral_has_identity_quaternions(name):
    model = robot(name)
    q = rd.neutral(model)
    expected = np.zeros(model.nq)
    for k in quaternion_blocks(model):
        expected[k + 3] = 1.0  # [0, 0, 0, 1]
    np.testing.assert_array_equal(q, expected)
    np.testing.assert_allclose(rd.difference(model, q, q), np.zeros(model.nv), rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", ROBOTS)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_random_configuration_is_on_the_manifold(name, seed):
    model = robot(name)
    q = rd.random_configuration(model, rng=np.random.default_rng(seed))
    assert q.shape == (model.nq,) and np.isfinite(q).all()
    for k in quaternion_blocks(model):
        assert abs(np.linalg.norm(q[k:k + 4]) - 1.0) < 1e-12
    for joint_name in model.joint_names:
        joint = model.joints[joint_name]
        if joint.type in ("revolute", "prismatic"):
            assert joint.lower <= q[model.idx_q[joint_name]] <= joint.upper, joint_name
    np.testing.assert_array_equal(rd.random_configuration(model, rng=np.random.default_rng(seed)), q)


# ---------------------------------------------------------------- mass matrix and Coriolis matrix

@pytest.mark.parametrize("name", ROBOTS)
@given(data=st.data())
def test_mass_matrix_is_symmetric_positive_definite(name, data):
    model, strategy = state(name)
    M = rd.mass_matrix(model, data.draw(strategy))
    assert M.shape == (model.nv, model.nv)
    assert np.array_equal(M, M.T)
    np.linalg.cholesky(M)  # raises if M is not positive definite


def away_from_tiny_planar_rotations(robot, v):
    """``v`` with each planar joint's rotation rate 0 or at least 0.05 rad/s: ``integrate`` then needs no care
    with ``(1 - cos theta) / theta`` at ``theta ~ 1e-10`` for the finite difference of ``M`` to be exact to 1e-7
    (Pinocchio's own planar ``integrate`` loses all precision there)."""
    v = v.copy()
    for name in robot.joint_names:
        if robot.joints[name].type == "planar":
            k = robot.idx_v[name] + 2
            if 0.0 < abs(v[k]) < 0.05:
                v[k] = np.copysign(0.05, v[k])
    return v


@pytest.mark.parametrize("name", ROBOTS)
@given(data=st.data())
def test_mass_matrix_rate_minus_twice_coriolis_is_skew(name, data):
    model, strategy = state(name)
    q, v = data.draw(strategy), away_from_tiny_planar_rotations(model, data.draw(velocities(model)))
    C = rd.coriolis_matrix(model, q, v)
    assert C.shape == (model.nv, model.nv)
    velocity_torques = rd.bias_torques(model, q, v) - rd.gravity_torques(model, q)
    error = np.abs(C @ v - velocity_torques).max() / max(1.0, np.abs(velocity_torques).max())
    assert error < TOLERANCE, f"C v: relative error {error:.3g}"

    def M_at(t):
        return rd.mass_matrix(model, rd.integrate(model, q, v, t))
    # five-point central difference: truncation ~ STEP^4, small even for the fastest velocities drawn
    M_rate = (8 * (M_at(STEP) - M_at(-STEP)) - (M_at(2 * STEP) - M_at(-2 * STEP))) / (12 * STEP)
    N = M_rate - 2 * C
    error = np.abs(N + N.T).max() / max(1.0, np.abs(M_rate).max(), np.abs(C).max())
    assert error < FD_TOLERANCE, f"dM/dt - 2C: skew error {error:.3g}"


# ---------------------------------------------------------------- bad input

DYNAMICS = {
    "inverse_dynamics": lambda model, q: rd.inverse_dynamics(model, q, np.zeros(q.shape[:-1] + (model.nv,)),
                                                              np.zeros(q.shape[:-1] + (model.nv,))),
    "forward_dynamics": lambda model, q: rd.forward_dynamics(model, q, np.zeros(q.shape[:-1] + (model.nv,)),
                                                              np.zeros(q.shape[:-1] + (model.nv,))),
    "mass_matrix": lambda model, q: rd.mass_matrix(model, q),
    "gravity_torques": lambda model, q: rd.gravity_torques(model, q),
}
BAD_QUATERNIONS = {"zero": [0.0, 0.0, 0.0, 0.0], "norm 2": [0.0, 0.0, 0.0, 2.0]}


@pytest.mark.parametrize("function", DYNAMICS)
@pytest.mark.parametrize("bad", BAD_QUATERNIONS)
@pytest.mark.parametrize("where", ["base", "spherical joint"])
def test_bad_quaternion_is_a_state_error(function, bad, where):
    model = robot("mixed")
    q = rd.neutral(model)
    k = 3 if where == "base" else model.idx_q["wrist"]
    q[k:k + 4] = BAD_QUATERNIONS[bad]
    with pytest.raises(rd.StateError, match="quaternion"):
        DYNAMICS[function](model, q)
    batch = np.stack([rd.neutral(model), q])  # one bad state in a batch
    with pytest.raises(rd.StateError, match="quaternion"):
        DYNAMICS[function](model, batch)


@pytest.mark.parametrize("function", DYNAMICS)
def test_q_of_length_nv_is_a_state_error_naming_both_sizes(function):
    model = robot("arm")
    assert (model.nq, model.nv) == (13, 12)
    for q in (np.zeros(model.nv), np.zeros((2, model.nv))):
        with pytest.raises(rd.StateError) as error:
            DYNAMICS[function](model, q)
        message = str(error.value)
        assert re.search(r"\bq\b", message), message
        assert re.search(rf"\b{model.nq}\b", message) and re.search(rf"\b{model.nv}\b", message), message


def test_velocity_of_length_nq_is_a_state_error():
    model = robot("arm")
    q = rd.neutral(model)
    with pytest.raises(rd.StateError, match="qd"):
        rd.inverse_dynamics(model, q, np.zeros(model.nq), np.zeros(model.nv))


def chain_urdf(kind, axis="0 0 1"):
    """base -revolute-> link1 -``kind``-> link2: a joint of ``kind`` below the root."""
    inertial = box_inertial(1.0, 0.1, 0.1, 0.1)
    return ('<robot name="chain">'
            f'<link name="base">{inertial}</link><link name="link1">{inertial}</link>'
            f'<link name="link2">{inertial}</link>'
            '<joint name="hinge" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
            f'<joint name="odd_joint" type="{kind}"><parent link="link1"/><child link="link2"/>'
            f'<origin xyz="0.1 0 0"/><axis xyz="{axis}"/></joint></robot>')


@pytest.mark.parametrize("floating_base", [False, True])
def test_floating_joint_below_the_root_is_refused(floating_base):
    with pytest.raises(rd.URDFError, match="odd_joint"):
        rd.load_urdf(chain_urdf("floating"), floating_base=floating_base)


@pytest.mark.parametrize("floating_base", [False, True])
def test_planar_joint_with_a_zero_axis_is_refused(floating_base):
    rd.load_urdf(chain_urdf("planar"), floating_base=floating_base)  # the same with a normal: fine
    with pytest.raises(rd.URDFError, match="odd_joint"):
        rd.load_urdf(chain_urdf("planar", axis="0 0 0"), floating_base=floating_base)
