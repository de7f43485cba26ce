"""The Coriolis matrix, the torque regressor and the torque rate on motion columns: free-flyer bases (Pinocchio's
``JointModelFreeFlyer``), planar and spherical joints.

Against Pinocchio: ``computeCoriolisMatrix`` (robots without mimic joints: Pinocchio 4.1's is wrong there) and
``computeJointTorqueRegressor`` with a free-flyer on example-robot-data robots, and both on a small tree of planar,
spherical, revolute and prismatic joints built the same way in both libraries. Without Pinocchio: ``C v = bias - g``
and the skew symmetry of ``dM/dt - 2 C`` (``dM/dt`` by central differences along ``integrate(q, t v)``), ``Y pi``
against the inverse dynamics, the base parameters, and the torque rate against central differences of the inverse
dynamics along trajectories whose velocity, acceleration and jerk are known exactly.
"""
import numpy as np
import pinocchio as pin
import pytest
from scipy.spatial.transform import Rotation

import oracle
import rne_dynamics as rd
from oracle import integrate
from rne_dynamics.model.joints import FREE_FLYER, SPHERICAL

TOLERANCE = 1e-9
FD_TOLERANCE = 1e-7   # dM/dt, central differences with step 1e-6
RATE_TOLERANCE = 1e-6  # torque rate, central differences with step 1e-5
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])

FRAGMENTS = [
    "ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf", "talos_data/robots/talos_reduced.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf", "icub_description/robots/icub_reduced.urdf",
    "solo_description/robots/solo12.urdf", "go1_description/urdf/go1.urdf", "romeo_description/urdf/romeo_small.urdf",
    "human_description/robots/human.urdf", "centauro_description/urdf/centauro.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf", "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "baxter_description/urdf/baxter.urdf", "pr2_description/urdf/pr2.urdf",
]
PATHS = [oracle.robot_path(f) for f in FRAGMENTS]
IDS = [f.split("/")[0].replace("_description", "") + "/" + f.rsplit("/", 1)[1] for f in FRAGMENTS]


# ---------------------------------------------------------------- configurations and motions on the Lie groups

def random_configuration(robot, rng):
    """Within the joint limits (±pi where unbounded or placeholders), random unit quaternions."""
    lo, hi = robot.position_limits.T
    q = rng.uniform(np.where(lo > -2 * np.pi, lo, -np.pi), np.where(hi < 2 * np.pi, hi, np.pi))
    for start in robot.quaternions:
        q[start:start + 4] /= np.linalg.norm(q[start:start + 4])
    return q


class Motion:
    """``q(t) = integrate(q0, Phi(t))`` with ``Phi`` a polynomial of degree 5 in the tangent space, every joint of
    several coordinates moving along one fixed direction ``xi`` (``Phi_joint(t) = phi(t) xi``, ``phi`` a scalar
    polynomial): ``exp(phi xi)`` is a one-parameter subgroup, so the child-frame velocity is exactly ``phi' xi``
    and ``v, a, jerk = Phi', Phi'', Phi'''`` (for a general ``Phi`` the body velocity is not ``Phi'``)."""

    def __init__(self, robot, seed):
        rng = np.random.default_rng(seed)
        self.robot = robot
        self.q0 = random_configuration(robot, rng)
        c = rng.uniform(-1.0, 1.0, size=(6, robot.nv))
        c[0] = 0.0
        c[1] = np.where(np.abs(c[1]) < 0.1, 0.5, c[1])  # qd away from 0: Coulomb friction switches there
        for b in robot.bodies:
            if not b.mimic and b.nv > 1:  # phi(t) xi, phi(0) = 0
                c[1:, b.idx_v:b.idx_v + b.nv] = rng.uniform(-1.0, 1.0, size=(5, 1)) * rng.uniform(-1.0, 1.0, b.nv)
        self.c = c

    def tangent(self, t, order):
        out = 0.0
        for k in range(order, len(self.c)):
            out = out + np.prod(np.arange(k - order + 1, k + 1)) * self.c[k] * t ** (k - order)
        return out

    def state(self, t):
        return (integrate(self.robot, self.q0, self.tangent(t, 0)),) + tuple(self.tangent(t, n) for n in (1, 2, 3))


# ---------------------------------------------------------------- a small tree of planar and spherical joints

def _link(name, mass, com, inertia):
    return (f'<link name="{name}"><inertial><origin xyz="{" ".join(map(str, com))}"/><mass value="{mass}"/>'
            '<inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/></inertial></link>'.format(*inertia))


LINKS = {  # mass, com, (ixx ixy ixz iyy iyz izz) about the com
    "base": (3.0, (0.02, -0.01, 0.05), (0.3, 0.01, -0.02, 0.4, 0.03, 0.5)),
    "a": (2.0, (0.1, 0.2, -0.1), (0.3, 0.01, 0.02, 0.4, 0.03, 0.5)),
    "b": (1.5, (0.05, -0.1, 0.2), (0.2, 0.01, -0.02, 0.3, 0.01, 0.25)),
    "c": (0.8, (0.2, 0.0, 0.05), (0.05, -0.01, 0.0, 0.08, 0.02, 0.06)),
    "d": (1.2, (-0.1, 0.1, 0.1), (0.1, 0.0, 0.01, 0.12, -0.02, 0.09)),
    "e": (0.6, (0.0, 0.05, -0.15), (0.04, 0.005, 0.0, 0.03, 0.0, 0.05)),
    "f": (0.4, (0.03, 0.03, 0.03), (0.02, 0.0, 0.001, 0.02, 0.0, 0.01)),
}
JOINTS = [  # name, type, parent, child, xyz, rpy, axis
    ("plane", "planar", "base", "a", (0.1, 0.2, 0.3), (0.1, 0.2, 0.3), (0, 0, 1)),
    ("ball", "spherical", "a", "b", (0.3, -0.1, 0.2), (0.4, -0.2, 0.1), None),
    ("hinge", "revolute", "b", "c", (0.0, 0.2, 0.25), (0.0, 0.3, 0.0), (0.6, 0.0, 0.8)),
    ("slide", "prismatic", "a", "d", (-0.2, 0.1, 0.0), (0.2, 0.0, -0.5), (0, 1, 0)),
    ("ball2", "spherical", "d", "e", (0.0, 0.0, -0.3), (0.0, 0.0, 0.0), None),
    ("elbow", "revolute", "e", "f", (0.1, 0.0, -0.2), (-0.3, 0.1, 0.2), (1, 0, 0)),
]


def tree_urdf():
    joints = "".join(
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>'
        + (f'<axis xyz="{" ".join(map(str, axis))}"/>' if axis else "")
        + ('<limit lower="-2" upper="2" effort="10" velocity="5"/>' if kind in ("revolute", "prismatic") else "")
        + "</joint>" for name, kind, parent, child, xyz, rpy, axis in JOINTS)
    return f'<robot name="tree">{"".join(_link(n, *v) for n, v in LINKS.items())}{joints}</robot>'


def tree_model(floating_base):
    """The same tree built by hand in Pinocchio (its URDF reader knows no spherical joint)."""
    def inertia(link):
        mass, com, (xx, xy, xz, yy, yz, zz) = LINKS[link]
        return pin.Inertia(mass, np.array(com), np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))

    model = pin.Model()
    ids = {"base": 0}
    if floating_base:
        ids["base"] = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
        model.appendBodyToJoint(ids["base"], inertia("base"), pin.SE3.Identity())
    for name, kind, parent, child, xyz, rpy, axis in JOINTS:
        joint = {"planar": pin.JointModelPlanar, "spherical": pin.JointModelSpherical}.get(kind)
        if joint is not None:
            joint = joint()
        elif kind == "revolute":
            joint = pin.JointModelRevoluteUnaligned(np.array(axis, float) / np.linalg.norm(axis))
        else:
            joint = pin.JointModelPrismaticUnaligned(np.array(axis, float))
        placement = pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz, float))
        ids[child] = model.addJoint(ids[parent], joint, placement, name)
        model.appendBodyToJoint(ids[child], inertia(child), pin.SE3.Identity())
    return model


def tree_pair(floating_base):
    return rd.load_urdf(tree_urdf(), floating_base=floating_base), tree_model(floating_base)


# ---------------------------------------------------------------- Coriolis matrix

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coriolis_matches_pinocchio_with_a_free_flyer(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio 4.1's computeCoriolisMatrix is wrong with mimic joints")
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(31)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v = rng.uniform(-2.0, 2.0, size=(3, robot.nv))
    batch = rd.coriolis_matrix(robot, q, v)
    assert batch.shape == (3, robot.nv, robot.nv)
    for n in range(3):
        reference = mapping.ours(pin.computeCoriolisMatrix(model, data, mapping.q(q[n]), mapping.v(v[n])))
        error = oracle.relative_error(batch[n], reference)
        assert error < TOLERANCE, f"state {n}: relative error {error:.3g}"
        np.testing.assert_array_equal(rd.coriolis_matrix(robot, q[n], v[n]), batch[n])


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_planar_and_spherical_joints_match_pinocchio(floating_base):
    """Mass matrix and torques first (the two models are the same robot), then ``C`` and ``Y``: the column pairs of
    one joint of several coordinates follow Pinocchio's rule."""
    robot, model = tree_pair(floating_base)
    assert robot.nv == model.nv and robot.nq == model.nq - 1  # the planar angle is (cos, sin) there
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    rng = np.random.default_rng(32)
    for _ in range(4):
        q = random_configuration(robot, rng)
        v, a = rng.uniform(-2.0, 2.0, size=(2, robot.nv))
        q_pin, v_pin, a_pin = mapping.q(q), mapping.v(v), mapping.v(a)
        M = pin.crba(model, data, q_pin)
        M = np.triu(M) + np.triu(M, 1).T
        assert oracle.relative_error(rd.mass_matrix(robot, q), mapping.ours(M)) < TOLERANCE
        tau = mapping.ours(pin.rnea(model, data, q_pin, v_pin, a_pin))
        assert oracle.relative_error(rd.inverse_dynamics(robot, q, v, a).torques, tau) < TOLERANCE
        C = mapping.ours(pin.computeCoriolisMatrix(model, data, q_pin, v_pin))
        error = oracle.relative_error(rd.coriolis_matrix(robot, q, v), C)
        assert error < TOLERANCE, f"Coriolis: relative error {error:.3g}"
        Y = pin.computeJointTorqueRegressor(model, data, q_pin, v_pin, a_pin)
        Y = Y[mapping.idx_v][:, mapping.regressor_columns()]
        error = oracle.relative_error(rd.joint_torque_regressor(robot, q, v, a), Y)
        assert error < TOLERANCE, f"regressor: relative error {error:.3g}"


def skew_check(robot, q, v):
    """``C v = bias - g``, and ``dM/dt - 2 C`` skew with ``dM/dt`` by central differences along ``q exp(t v)``."""
    C = rd.coriolis_matrix(robot, q, v)
    velocity_torques = rd.bias_torques(robot, q, v) - rd.gravity_torques(robot, q)
    assert oracle.relative_error(C @ v, velocity_torques) < TOLERANCE
    step = 1e-6
    M_rate = (rd.mass_matrix(robot, integrate(robot, q, step * v))
              - rd.mass_matrix(robot, integrate(robot, q, -step * v))) / (2 * step)
    N = M_rate - 2 * C
    error = oracle.relative_error(N + N.T, np.zeros_like(N)) / max(1.0, np.abs(C).max())
    assert error < FD_TOLERANCE, f"dM/dt - 2 C is not skew: relative error {error:.3g}"


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_coriolis_properties_with_a_floating_base(path):
    """Every listed robot, mimic joints included (``C = J^T C_columns J``)."""
    # constant rotor inertia: changes neither C nor dM/dt
    robot = oracle.with_armature(oracle.load_quietly(path, floating_base=True), seed=33)
    rng = np.random.default_rng(33)
    for _ in range(2):
        skew_check(robot, random_configuration(robot, rng), rng.uniform(-2.0, 2.0, robot.nv))


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_coriolis_properties_with_planar_and_spherical_joints(floating_base):
    robot = rd.load_urdf(tree_urdf(), floating_base=floating_base)
    rng = np.random.default_rng(34)
    for _ in range(3):
        skew_check(robot, random_configuration(robot, rng), rng.uniform(-2.0, 2.0, robot.nv))


# ---------------------------------------------------------------- regressor and base parameters

@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_matches_pinocchio_with_a_free_flyer(path):
    robot, model = oracle.floating_pair(path)
    if robot.has_mimic:
        pytest.skip("Pinocchio's regressor refuses mimic joints; see test_regressor_times_parameters...")
    mapping = oracle.FloatingMapping(robot, model)
    columns = mapping.regressor_columns()
    rng = np.random.default_rng(35)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 3, robot.nv))
    reference = np.concatenate([model.inertias[j].toDynamicParameters() for j in range(1, model.njoints)])
    assert oracle.relative_error(rd.inertial_parameters(robot), reference[columns]) < TOLERANCE
    for gravity in (None, TILTED_GRAVITY):
        reference_model = oracle.with_gravity(model, gravity)
        data = reference_model.createData()
        ours = rd.joint_torque_regressor(robot, q, v, a, gravity=gravity)
        assert ours.shape == (3, robot.nv, 10 * len(robot.bodies))
        for n in range(3):
            Y = pin.computeJointTorqueRegressor(reference_model, data, mapping.q(q[n]), mapping.v(v[n]),
                                                mapping.v(a[n]))
            error = oracle.relative_error(ours[n], Y[mapping.idx_v][:, columns])
            assert error < TOLERANCE, f"gravity {gravity}, state {n}: relative error {error:.3g}"
            np.testing.assert_array_equal(rd.joint_torque_regressor(robot, q[n], v[n], a[n], gravity=gravity),
                                          ours[n])


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_regressor_times_parameters_with_a_floating_base(path):
    """Mimic joints included; the difference is exactly the drive terms (URDF friction, armature)."""
    robot = oracle.with_armature(oracle.load_quietly(path, floating_base=True), seed=36)
    rng = np.random.default_rng(36)
    q = np.array([random_configuration(robot, rng) for _ in range(3)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 3, robot.nv))
    Y = rd.joint_torque_regressor(robot, q, v, a, gravity=TILTED_GRAVITY)
    tau = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY).torques
    error = oracle.relative_error(Y @ rd.inertial_parameters(robot), tau - oracle.drive_torques(robot, v, a))
    assert error < TOLERANCE, f"relative error {error:.3g}"


@pytest.mark.parametrize("fragment", ["ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf",
                                      "anymal_c_simple_description/urdf/anymal.urdf", None],
                         ids=["ur5", "panda", "anymal", "planar-spherical-tree"])
def test_base_parameters_with_a_floating_base(fragment):
    robot = (oracle.load_quietly(oracle.robot_path(fragment), floating_base=True) if fragment
             else rd.load_urdf(tree_urdf(), floating_base=True))
    base = rd.base_parameters(robot)
    pi = rd.inertial_parameters(robot)
    rank = len(base.indices)
    assert 0 < rank < len(pi) and base.combination.shape == (rank, len(pi))
    rng = np.random.default_rng(37)
    q = np.array([random_configuration(robot, rng) for _ in range(10)])
    v, a = rng.uniform(-2.0, 2.0, size=(2, 10, robot.nv))
    Y = rd.joint_torque_regressor(robot, q, v, a)
    tau = rd.inverse_dynamics(robot, q, v, a).torques - oracle.drive_torques(robot, v, a)
    error = oracle.relative_error(base.regressor(Y) @ base.values, tau)
    assert error < TOLERANCE, f"relative error {error:.3g}"
    W = Y.reshape(-1, len(pi))
    assert np.linalg.matrix_rank(base.regressor(W)) == rank == np.linalg.matrix_rank(W)


# ---------------------------------------------------------------- torque rate

def rate_check(robot, seed):
    motion = Motion(robot, seed)
    step = 1e-5
    q, v, a, _ = (np.array(x) for x in zip(motion.state(step), motion.state(-step)))
    tau = rd.inverse_dynamics(robot, q, v, a, gravity=TILTED_GRAVITY).torques
    expected = (tau[0] - tau[1]) / (2 * step)
    ours = rd.torque_rate(robot, *motion.state(0.0), gravity=TILTED_GRAVITY)
    error = oracle.relative_error(ours, expected)
    assert error < RATE_TOLERANCE, f"relative error {error:.3g}"
    batch = rd.torque_rate(robot, *(np.array([x, x]) for x in motion.state(0.0)), gravity=TILTED_GRAVITY)
    np.testing.assert_array_equal(batch[1], ours)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_torque_rate_matches_finite_differences(path, floating_base):
    """Mimic joints, URDF friction and random armature included."""
    rate_check(oracle.with_armature(oracle.load_quietly(path, floating_base), seed=38), seed=38)


@pytest.mark.parametrize("floating_base", [False, True], ids=["fixed", "floating"])
def test_torque_rate_with_planar_and_spherical_joints(floating_base):
    robot = oracle.with_armature(rd.load_urdf(tree_urdf(), floating_base=floating_base), seed=39)
    for seed in (39, 40, 41):
        rate_check(robot, seed)


def test_motion_is_the_exact_velocity():
    """The test trajectory's velocity is ``Phi'``: a difference of the poses, base and spherical joints alike."""
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    motion = Motion(robot, seed=42)
    step = 1e-6
    q0, v0 = motion.state(0.0)[:2]
    q_plus, q_minus = motion.state(step)[0], motion.state(-step)[0]
    # integrate(q0, dv) for small dv is q0 moved by dv to first order: compare with the tangent of the difference
    for b in robot.bodies:
        if b.code in (FREE_FLYER, SPHERICAL):
            start = b.idx_q + (3 if b.code == FREE_FLYER else 0)
            R0 = Rotation.from_quat(q0[start:start + 4])
            w = ((R0.inv() * Rotation.from_quat(q_plus[start:start + 4])).as_rotvec()
                 - (R0.inv() * Rotation.from_quat(q_minus[start:start + 4])).as_rotvec()) / (2 * step)
            angular = slice(b.idx_v + 3, b.idx_v + 6) if b.code == FREE_FLYER else slice(b.idx_v, b.idx_v + 3)
            np.testing.assert_allclose(w, v0[angular], rtol=1e-6, atol=1e-8)
            if b.code == FREE_FLYER:
                linear = R0.as_matrix().T @ (q_plus[:3] - q_minus[:3]) / (2 * step)
                np.testing.assert_allclose(linear, v0[:3], rtol=1e-6, atol=1e-8)


# ---------------------------------------------------------------- inputs and results that are not finite

NOT_FINITE_CALLS = {  # call(robot, q, v, a, jerk) and the names of its joint-space arguments
    "coriolis_matrix": (lambda robot, q, v, a, j: rd.coriolis_matrix(robot, q, v), ("q", "qd")),
    "joint_torque_regressor": (lambda robot, q, v, a, j: rd.joint_torque_regressor(robot, q, v, a),
                               ("q", "qd", "qdd")),
    "torque_rate": (lambda robot, q, v, a, j: rd.torque_rate(robot, q, v, a, j), ("q", "qd", "qdd", "qddd")),
}


@pytest.mark.parametrize("batch", [None, 3], ids=["one state", "batch"])
@pytest.mark.parametrize("call", NOT_FINITE_CALLS)
def test_not_finite_input_is_named(call, batch):
    """The kernels check their inputs (the calls do not beforehand): a NaN or an inf names the argument, the
    coordinate and, in a batch, the state."""
    function, names = NOT_FINITE_CALLS[call]
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    rng = np.random.default_rng(43)
    q = np.array([random_configuration(robot, rng) for _ in range(batch or 1)])
    good = [q] + list(rng.uniform(-1.0, 1.0, size=(3, batch or 1, robot.nv)))
    for k, name in enumerate(names):
        coordinate_names = robot.q_names if name == "q" else robot.v_names
        # the planar joint's second coordinate and the last joint's: not in a quaternion, whose norm is checked first
        for bad, coordinate in ((np.nan, 8), (np.inf, len(coordinate_names) - 1)):
            x = [np.array(a) for a in good]
            x[k][-1, coordinate] = bad
            with pytest.raises(rd.StateError) as caught:
                function(robot, *(x if batch else [a[0] for a in x]))
            message = str(caught.value)
            culprits = [f"{name} is not finite", f"joint '{coordinate_names[coordinate]}'", str(bad)]
            for culprit in culprits + ([f"state {batch - 1}"] if batch else []):
                assert culprit in message, f"{culprit!r} not named in: {message}"


@pytest.mark.parametrize("call", ["joint_torque_regressor", "torque_rate"])
def test_overflow_is_an_error_not_nan(call):
    """Finite inputs whose results overflow float64 (``v x* I v`` at ``qd = 1e200``)."""
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    q = random_configuration(robot, np.random.default_rng(44))
    zero = np.zeros(robot.nv)
    with pytest.raises(rd.StateError, match="not finite although every input is"):
        NOT_FINITE_CALLS[call][0](robot, q, np.full(robot.nv, 1e200), zero, zero)
