"""Flexible joints (issue 15): the drive layer, Khalil's lumped elasticity against Pinocchio, ``torque_acceleration``
against finite differences and closed forms, and the motor-link model's exact feedforward by simulation."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.tools.cli import main
from rne_dynamics.tools.flexible_demo import sinusoid

PANDA = "panda_description/urdf/panda.urdf"
UR5 = "ur_description/urdf/ur5_robot.urdf"
ARM_JOINTS = [f"panda_joint{k}" for k in range(1, 8)]


def polynomial(robot, seed, degree=5, scale=1.0):
    """A degree-``degree`` polynomial motion in the tangent space around a random configuration: ``at(t, h)`` gives
    ``(q, qd, qdd, qddd, qdddd)`` at ``t + h``; ``q`` exact for a fixed base with one-coordinate joints, within
    ``O(h^3)`` of the motion on a floating base's group (its ``exp`` of the tangent Taylor polynomial at ``t``)."""
    rng = np.random.default_rng(seed)
    C = rng.normal(scale=scale, size=(degree + 1, robot.nv))
    q0 = oracle.random_states(robot, 1, seed=seed)[0][0]

    def derivative(t, k):
        return sum(C[j] * np.prod(np.arange(j - k + 1, j + 1)) * t ** (j - k) for j in range(k, degree + 1))

    def at(t, h=0.0):
        rates = [derivative(t + h, k) for k in range(1, 5)]
        if robot.has_floating_base:
            q = rd.integrate(robot, rd.integrate(robot, q0, derivative(t, 0) - C[0]),
                             sum(derivative(t, k) * h ** k / np.prod(np.arange(1, k + 1)) for k in range(1, 4)))
        else:
            q = q0 + derivative(t + h, 0) - C[0]
        return (q, *rates)
    return at


# -- torque_acceleration ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
@pytest.mark.parametrize("fragment", [PANDA, UR5, "solo_description/robots/solo.urdf"])
def test_torque_acceleration_matches_finite_differences(fragment, floating):
    """Central differences of ``torque_rate`` (and, fixed base, second differences of ``inverse_dynamics``) along a
    quintic: relative errors 1e-6, with rotor inertia and viscous damping in the drives."""
    robot = oracle.load_quietly(oracle.robot_path(fragment), floating_base=floating)
    n = len(robot.joint_names)
    robot = robot.with_drive(armature=np.linspace(0.01, 0.1, n), damping=np.full(n, 0.3))
    at = polynomial(robot, seed=5, scale=0.7)
    t, h = 0.4, 1e-4
    ours = rd.torque_acceleration(robot, *at(t))
    rate = [rd.torque_rate(robot, *at(t, s)[:4]) for s in (h, -h)]
    assert oracle.relative_error((rate[0] - rate[1]) / (2 * h), ours) < 1e-6
    if not floating:
        h = 3e-4
        tau = [rd.inverse_dynamics(robot, *at(t, s)[:3]).torques for s in (h, 0.0, -h)]
        assert oracle.relative_error((tau[0] - 2 * tau[1] + tau[2]) / h ** 2, ours) < 1e-6
    batch = rd.torque_acceleration(robot, *(np.stack([x, x]) for x in at(t)))
    np.testing.assert_allclose(batch, [ours, ours], rtol=0, atol=0)


MASS, LENGTH, G = 2.0, 0.7, 9.81


def pendulum(masses=(MASS,), lengths=(LENGTH,)):
    """A planar chain about z, point masses at the ends of its links (along x); with gravity ``(0, -G, 0)`` its
    angles are measured from the horizontal."""
    links = "".join(f'<link name="l{k}"><inertial><origin xyz="{length} 0 0"/><mass value="{mass}"/>'
                    '<inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>'
                    for k, (mass, length) in enumerate(zip(masses, lengths)))
    joints = "".join(f'<joint name="j{k}" type="continuous"><parent link="{"base" if k == 0 else f"l{k - 1}"}"/>'
                     f'<child link="l{k}"/><origin xyz="{0 if k == 0 else lengths[k - 1]} 0 0"/><axis xyz="0 0 1"/>'
                     '</joint>' for k in range(len(masses)))
    return rd.load_urdf(f'<robot name="chain"><link name="base"/>{links}{joints}</robot>')


GRAVITY = (0.0, -G, 0.0)


def test_torque_acceleration_single_link_closed_form():
    """``tau = m l^2 qdd + m g l cos q``, so ``d2 tau / dt2 = m l^2 qdddd + m g l (-sin q qdd - cos q qd^2)``."""
    robot = pendulum()
    rng = np.random.default_rng(3)
    for q, qd, qdd, qddd, qdddd in rng.uniform(-2, 2, size=(5, 5)):
        tau = rd.inverse_dynamics(robot, [q], [qd], [qdd], gravity=GRAVITY).torques[0]
        assert abs(tau - (MASS * LENGTH ** 2 * qdd + MASS * G * LENGTH * np.cos(q))) < 1e-12
        ours = rd.torque_acceleration(robot, [q], [qd], [qdd], [qddd], [qdddd], gravity=GRAVITY)[0]
        closed = MASS * LENGTH ** 2 * qdddd + MASS * G * LENGTH * (-np.sin(q) * qdd - np.cos(q) * qd ** 2)
        assert abs(ours - closed) < 1e-12 * (1 + abs(closed))


class Jet:
    """A truncated Taylor series in time, ``c[0] + c[1] t + c[2] t^2``: evaluating a closed-form torque on jets
    gives its exact second time derivative, ``2 c[2]``."""

    def __init__(self, c):
        self.c = np.asarray(c, float)

    def __add__(self, other):
        return Jet(self.c + (other.c if isinstance(other, Jet) else np.array([other, 0, 0])))

    __radd__ = __add__

    def __sub__(self, other):
        return self + other * -1.0

    def __mul__(self, other):
        if not isinstance(other, Jet):
            return Jet(self.c * other)
        a, b = self.c, other.c
        return Jet([a[0] * b[0], a[0] * b[1] + a[1] * b[0], a[0] * b[2] + a[1] * b[1] + a[2] * b[0]])

    __rmul__ = __mul__

    def sin(self):
        a = self.c
        return Jet([np.sin(a[0]), np.cos(a[0]) * a[1], np.cos(a[0]) * a[2] - np.sin(a[0]) * a[1] ** 2 / 2])

    def cos(self):
        a = self.c
        return Jet([np.cos(a[0]), -np.sin(a[0]) * a[1], -np.sin(a[0]) * a[2] - np.cos(a[0]) * a[1] ** 2 / 2])


def two_link_torques(q, qd, qdd, m=(1.5, 0.8), l=(0.6, 0.4)):
    """The planar two-link arm with point masses at the link ends (Spong, Hutchinson, Vidyasagar, eq. 7.87):
    ``M(q) qdd + C(q, qd) qd + g(q)``, angles from the horizontal, gravity ``-G y``."""
    c2, s2 = q[1].cos(), q[1].sin()
    c1, c12 = q[0].cos(), (q[0] + q[1]).cos()
    h = m[1] * l[0] * l[1] * s2
    M11 = m[0] * l[0] ** 2 + m[1] * (l[0] ** 2 + l[1] ** 2) + 2 * m[1] * l[0] * l[1] * c2
    M12 = m[1] * l[1] ** 2 + m[1] * l[0] * l[1] * c2
    M22 = m[1] * l[1] ** 2
    g1 = G * ((m[0] + m[1]) * l[0] * c1 + m[1] * l[1] * c12)
    g2 = G * m[1] * l[1] * c12
    tau1 = M11 * qdd[0] + M12 * qdd[1] - h * (2.0 * qd[0] * qd[1] + qd[1] * qd[1]) + g1
    tau2 = M12 * qdd[0] + M22 * qdd[1] + h * qd[0] * qd[0] + g2
    return tau1, tau2


def test_torque_acceleration_two_link_closed_form():
    """The closed-form torques of the two-link arm evaluated on jets of ``q(t)``, ``qd(t)``, ``qdd(t)``: their
    second time derivative, exactly (1e-12 relative)."""
    robot = pendulum((1.5, 0.8), (0.6, 0.4))
    rng = np.random.default_rng(4)
    for q, qd, qdd, qddd, qdddd in rng.uniform(-2, 2, size=(5, 5, 2)):
        jets = [[Jet([x[k], y[k], z[k] / 2]) for k in range(2)]
                for x, y, z in ((q, qd, qdd), (qd, qdd, qddd), (qdd, qddd, qdddd))]
        closed = np.array([2 * tau.c[2] for tau in two_link_torques(*jets)])
        tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=GRAVITY).torques
        np.testing.assert_allclose(tau, [x.c[0] for x in two_link_torques(*jets)], rtol=1e-12, atol=1e-12)
        ours = rd.torque_acceleration(robot, q, qd, qdd, qddd, qdddd, gravity=GRAVITY)
        assert oracle.relative_error(ours, closed) < 1e-12


# -- the drive layer ----------------------------------------------------------------------------------------------

def test_with_drive_elastic_parameters_and_yaml(tmp_path):
    robot = rd.load_urdf(rd.bundled_robot_path())
    first, second = robot.joint_names[:2]
    elastic = robot.with_drive(stiffness={first: 800.0}, motor_inertia={first: 1e-4}, gear_ratio={first: 100.0},
                               rest_offset={first: -0.2})
    assert robot.elastic_joints == () and elastic.elastic_joints == (first,)
    assert elastic.transmission.stiffness[0] == 800.0 and elastic.transmission.gear_ratio[1] == 1.0
    assert elastic.transmission.reflected_motor_inertia[0] == pytest.approx(1.0)
    assert np.array_equal(elastic.armature, robot.armature)  # the rigid drive unchanged
    damped = elastic.with_drive(damping={second: 0.5})
    assert damped.elastic_joints == (first,) and damped.damping[1] == 0.5
    (tmp_path / "drive.yaml").write_text(f"{first}: {{stiffness: 800.0, motor_inertia: 1.0e-4, gear_ratio: 100}}\n"
                                         f"{second}: {{armature: 0.3}}\n")
    loaded = rd.load_drive(robot, tmp_path / "drive.yaml")
    assert loaded.elastic_joints == (first,) and loaded.armature[1] == 0.3
    for bad, match in (({"stiffness": {first: -1.0}}, "stiffness of joint .* must be finite and >= 0, got -1.0"),
                       ({"motor_inertia": {first: np.nan}}, "motor_inertia of joint .* must be finite"),
                       ({"gear_ratio": {first: 0.0}}, "gear_ratio of joint .* must be finite and > 0"),
                       ({"stiffness": {"nope": 1.0}}, "has no movable joint 'nope'")):
        with pytest.raises(rd.ModelError, match=match):
            robot.with_drive(**bad)
    (tmp_path / "bad.yaml").write_text(f"{first}: {{stiffnes: 1.0}}\n")
    with pytest.raises(rd.ModelError, match="unknown parameter 'stiffnes'"):
        rd.load_drive(robot, tmp_path / "bad.yaml")
    (tmp_path / "broken.yaml").write_text(f"{first}: {{stiffness: [1.0\n{second}: {{armature: 0.3}}\n")
    with pytest.raises(rd.ModelError) as error:  # the parser's reason, in one line with its place
        rd.load_drive(robot, tmp_path / "broken.yaml")
    assert str(error.value) == (f"drive file {tmp_path / 'broken.yaml'}: not valid YAML (line 2, column "
                                f"{len(second) + 1}: expected ',' or ']', but got ':')")
    panda = oracle.load_quietly(oracle.robot_path(PANDA))
    with pytest.raises(rd.ModelError, match="'panda_finger_joint2' is a mimic joint of 'panda_finger_joint1'"):
        panda.with_drive(stiffness={"panda_finger_joint2": 10.0})


# -- Khalil's lumped elasticity -----------------------------------------------------------------------------------

@pytest.mark.parametrize("floating", [False, True], ids=["fixed", "floating"])
def test_lumped_elasticity_matches_pinocchio(floating):
    """Direct model: Pinocchio's ``aba`` with the springs as joint torques gives our accelerations; inverse model:
    the rigid torques and the computed elastic accelerations through ``rnea`` give back the spring forces (1e-9)."""
    path = oracle.robot_path(UR5)
    robot = oracle.load_quietly(path, floating_base=floating)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True) if floating else \
        pin.buildModelFromUrdf(path, mimic=True)
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    elastic = {"shoulder_lift_joint": 900.0, "elbow_joint": 400.0, "wrist_2_joint": 150.0}
    robot = robot.with_drive(stiffness=elastic, spring_damping={"elbow_joint": 2.0},
                             rest_offset={"shoulder_lift_joint": 0.3})
    v = np.array([robot.idx_v[j] for j in elastic])
    K = np.array(list(elastic.values()))
    D, q0 = np.array([0.0, 2.0, 0.0]), np.array([0.3, 0.0, 0.0])
    states = oracle.random_floating_states(robot, 3, seed=8) if floating else oracle.random_states(robot, 3, seed=8)
    for q, qd, qdd in zip(*states):
        spring = -K * (q[[robot.idx_q[j] for j in elastic]] - q0) - D * qd[v]
        tau = np.random.default_rng(9).uniform(-10, 10, robot.nv)
        tau[v] = 0.0
        ours = rd.elastic_forward_dynamics(robot, q, qd, tau)
        T = tau.copy()
        T[v] = spring
        T = mapping.v(T - mapping.drive_torques(qd))
        reference = mapping.ours(pin.aba(model, data, mapping.q(q), mapping.v(qd), T))
        assert oracle.relative_error(ours, reference) < 1e-9
        inverse = rd.elastic_inverse_dynamics(robot, q, qd, np.where(np.isin(np.arange(robot.nv), v), 0.0, qdd))
        assert np.array_equal(inverse.accelerations[np.setdiff1d(np.arange(robot.nv), v)],
                              qdd[np.setdiff1d(np.arange(robot.nv), v)])
        forces = mapping.ours(pin.rnea(model, data, mapping.q(q), mapping.v(qd), mapping.v(inverse.accelerations))) \
            + mapping.drive_torques(qd)
        assert oracle.relative_error(forces[v], spring) < 1e-9
        assert oracle.relative_error(forces, inverse.torques) < 1e-9


def test_lumped_elasticity_single_joint_closed_form():
    """A pendulum on a torsion spring at rest: ``m l^2 qdd = -K (q - q0) - D qd - m g l cos q``."""
    K, D, q0 = 50.0, 0.4, 0.2
    robot = pendulum().with_drive(stiffness={"j0": K}, spring_damping={"j0": D}, rest_offset={"j0": q0})
    q, qd = 0.9, -1.3
    closed = (-K * (q - q0) - D * qd - MASS * G * LENGTH * np.cos(q)) / (MASS * LENGTH ** 2)
    assert abs(rd.elastic_forward_dynamics(robot, [q], [qd], [0.0], gravity=GRAVITY)[0] - closed) < 1e-12
    inverse = rd.elastic_inverse_dynamics(robot, [q], [qd], [0.0], gravity=GRAVITY)
    assert abs(inverse.accelerations[0] - closed) < 1e-12 and abs(inverse.torques[0] + K * (q - q0) + D * qd) < 1e-12
    with pytest.raises(rd.ModelError, match="has no elastic joint"):
        rd.elastic_forward_dynamics(pendulum(), [q], [qd], [0.0])


# -- the motor-link model -----------------------------------------------------------------------------------------

def track(robot, desired, duration, dt, rigid=False):
    """Simulate the motor-link model from the feedforward's consistent initial state under the exact feedforward
    (or the rigid torques), RK4 step ``dt``; the worst link error against ``desired`` (rad)."""
    stages = dt / 2 * np.arange(int(round(2 * duration / dt)) + 1)
    feedforward = rd.flexible_feedforward(robot, *desired(stages), dt=dt / 2)
    torques = rd.inverse_dynamics(robot, *desired(stages)[:3]).torques if rigid else feedforward.motor_torques
    q, qd = (x[0] for x in desired(stages[:1])[:2])
    result = rd.flexible_simulate(robot, q, qd, feedforward.motor_positions[0], feedforward.motor_velocities[0],
                                  lambda t: torques[int(round(t / (dt / 2)))], duration, dt)
    return np.max(np.abs(result.q - desired(result.t)[0]))


@pytest.mark.parametrize("damping", [0.0, 20.0], ids=["undamped", "damped"])
def test_exact_feedforward_tracks_and_rigid_does_not(damping):
    """Panda, joints 2 and 4 elastic, over 2 s of a fast sinusoid (1 Hz, 0.3 rad, RK4 at 0.5 ms): the exact
    feedforward keeps the link within 1e-6 rad; the rigid torques miss by orders of magnitude more (the bundled arm:
    ``rne-dynamics flexible``, below). With spring damping the deflection is solved along the sampled trajectory."""
    robot = oracle.load_quietly(oracle.robot_path(PANDA))
    elastic = ["panda_joint2", "panda_joint4"]
    robot = robot.with_drive(stiffness=dict.fromkeys(elastic, 3000.0), motor_inertia=dict.fromkeys(elastic, 1e-4),
                             gear_ratio=dict.fromkeys(elastic, 100.0), spring_damping=dict.fromkeys(elastic, damping))
    q_center = np.mean(np.clip(robot.position_limits, -1.5, 1.5), axis=1)
    desired = sinusoid(q_center, 0.3, 2 * np.pi)
    exact = track(robot, desired, 2.0, 5e-4)
    rigid = track(robot, desired, 2.0, 5e-4, rigid=True)
    assert exact < 1e-6
    assert rigid / exact > 1e3


def test_flexible_demo_command(tmp_path, capsys):
    """``rne-dynamics flexible``: the bundled arm's shoulder and elbow elastic, open loop; the numbers it prints and
    the figure it writes."""
    assert main(["flexible", "-o", str(tmp_path / "flexible.png")]) == 0
    lines = capsys.readouterr().out.splitlines()
    worst = {line.split("feedforward")[0].strip(): float(line.split()[-2]) for line in lines if "worst" in line}
    assert worst["exact flexible"] < 1e-6 and worst["rigid"] / worst["exact flexible"] > 1e3
    assert (tmp_path / "flexible.png").stat().st_size > 10_000


def test_feedforward_single_link_closed_form_and_stiff_limit():
    """A pendulum driven through a spring: ``tau_m = tau + B (qdd + tau'' / K)``, ``tau = m l^2 qdd + m g l cos q``;
    as ``K -> infinity`` it tends to the rigid torque plus ``B qdd`` (as 1 / K)."""
    q, qd, qdd, qddd, qdddd = 0.4, 1.1, -2.0, 3.0, 5.0
    B = 1e-4 * 50.0 ** 2
    tau = MASS * LENGTH ** 2 * qdd + MASS * G * LENGTH * np.cos(q)
    tau_dd = MASS * LENGTH ** 2 * qdddd + MASS * G * LENGTH * (-np.sin(q) * qdd - np.cos(q) * qd ** 2)
    gaps = []
    for K in (1e2, 1e4, 1e6):
        robot = pendulum().with_drive(stiffness={"j0": K}, motor_inertia={"j0": 1e-4}, gear_ratio={"j0": 50.0})
        ff = rd.flexible_feedforward(robot, [q], [qd], [qdd], [qddd], [qdddd], gravity=GRAVITY)
        closed = tau + B * (qdd + tau_dd / K)
        assert abs(ff.motor_torques[0] - closed) < 1e-12 * abs(closed)
        assert abs(ff.motor_positions[0] - (q + tau / K)) < 1e-14 and abs(ff.spring_torques[0] - tau) < 1e-12
        gaps.append(ff.motor_torques[0] - (tau + B * qdd))
    assert gaps[1] / gaps[0] == pytest.approx(1e-2, rel=1e-6) and gaps[2] / gaps[1] == pytest.approx(1e-2, rel=1e-6)


def test_motor_link_bad_calls():
    robot = pendulum().with_drive(stiffness={"j0": 100.0})
    with pytest.raises(rd.ModelError, match="elastic joint 'j0' has no motor inertia"):
        rd.flexible_forward_dynamics(robot, [0.0], [0.0], [0.0], [0.0], [0.0])
    robot = robot.with_drive(motor_inertia={"j0": 1e-3}, spring_damping={"j0": 0.1})
    with pytest.raises(rd.ModelError, match="spring_damping 0.1: give the trajectory as a batch sampled every dt"):
        rd.flexible_feedforward(robot, [0.0], [0.0], [0.0], [0.0], [0.0])
    with pytest.raises(rd.StateError, match="theta must be"):
        rd.flexible_forward_dynamics(robot, [0.0], [0.0], [0.0, 1.0], [0.0], [0.0])
