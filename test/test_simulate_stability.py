"""The simulator on real robots (issue 34): stable with the URDFs' damping and Coulomb friction at 100 Hz-1 kHz,
joint stops that never add energy, Coulomb friction that holds a joint below its breakaway torque, and the rigid
motion still integrated at order 4.

Robots: the xArm 7 with its gripper (xarm_ros2) and the KUKA iiwa 14 (lbr-stack), expanded into ``test/data/robots``
with their inertias, limits, damping and friction as published (licences in the files' headers), and
example-robot-data's arms with viscous damping added to every joint. Energy is kinetic (rotor inertia included)
plus gravitational potential; "relative" is to the robot's weight lifted by one metre.
"""
import os

import numpy as np
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms.integrator import rkmk4_step
from test_crba import PLANAR_GRAVITY, two_link_arm

ROBOTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "robots")
XARM = os.path.join(ROBOTS, "xarm7_gripper.urdf")
IIWA = os.path.join(ROBOTS, "iiwa14.urdf")
GRAVITY = np.array([0.0, 0.0, -9.81])
ARMS = ("panda_description/urdf/panda.urdf", "ur_description/urdf/ur5_robot.urdf", "z1_description/urdf/z1.urdf",
        "so_arm_description/urdf/so101.urdf", "kinova_description/robots/kinova.urdf",
        "xarm_description/urdf/xarm7.urdf")
#: Energy may rise by at most this fraction of the energy scale per second of simulated time, at any step.
RISE = 1e-6
#: A joint ends at most this far past a limit (rad, m).
PAST = 1e-9


def energy(robot, q, qd, gravity=GRAVITY):
    """``1/2 qd^T M qd - m g . c`` of each state ``(T, nq)``, ``(T, nv)`` (J)."""
    kinetic = 0.5 * np.einsum("ti,tij,tj->t", qd, rd.mass_matrix(robot, q), qd)
    return kinetic - robot.total_mass * rd.center_of_mass(robot, q) @ gravity


def scale(robot):
    """The robot's weight lifted by one metre (J): the scale of its energy."""
    return robot.total_mass * 9.81


def fall(robot, q0, duration, dt, method="rk4"):
    """The robot released at rest from ``q0`` under gravity with no torque: its trajectory and energy."""
    trajectory = rd.simulate(robot, q0, np.zeros(robot.nv), np.zeros(robot.nv), duration, dt, method=method)
    return trajectory, energy(robot, trajectory.q, trajectory.qd)


def assert_dissipative(robot, trajectory, E, dt):
    """Finite, within the stops (to :data:`PAST`), and no step adds more than :data:`RISE` of the energy scale per
    second."""
    assert np.isfinite(trajectory.q).all() and np.isfinite(trajectory.qd).all()
    limits = robot.position_limits
    assert (limits[:, 0] - trajectory.q).max() <= PAST and (trajectory.q - limits[:, 1]).max() <= PAST
    rise = np.diff(E).max()
    assert rise <= RISE * scale(robot) * dt, f"a step added {rise:.3g} J"


def random_pose(robot, seed):
    """A configuration within the limits, 0.8 of the way to each limit at most (continuous joints: +-pi)."""
    lower, upper = np.maximum(robot.position_limits[:, 0], -np.pi), np.minimum(robot.position_limits[:, 1], np.pi)
    middle, half = (lower + upper) / 2, (upper - lower) / 2
    return middle + 0.8 * half * np.random.default_rng(seed).uniform(-1.0, 1.0, robot.nq)


def damped(path, seed):
    """An example-robot-data arm with viscous damping of 0.5 to 2 N m s/rad (N s/m) on every joint."""
    robot = oracle.load_quietly(oracle.robot_path(path))
    return robot.with_drive(damping=np.random.default_rng(seed).uniform(0.5, 2.0, robot.dof))


def test_without_drive_terms_or_active_stops_a_step_is_the_rigid_rkmk4_step():
    """Nothing dissipates and no stop is near: the dissipative half steps are the identity and the step is the
    integrator's RKMK4 step of forward dynamics (the Panda, its fingers a mimic pair: the mass-matrix path)."""
    robot = oracle.load_quietly(oracle.robot_path(ARMS[0]))
    robot = robot.with_drive(damping=np.zeros(robot.dof), friction=np.zeros(robot.dof))
    q, qd, tau = random_pose(robot, 1) * 0.5, np.random.default_rng(2).uniform(-1, 1, robot.nv), np.zeros(robot.nv)
    ours = rd.step(robot, q, qd, tau, 1e-3)
    reference = rkmk4_step(robot, q, qd, lambda t, x, v: rd.forward_dynamics(robot, x, v, tau), 0.0, 1e-3)
    for x, y in zip(ours, reference):
        np.testing.assert_allclose(x, y, rtol=1e-14, atol=1e-14)


def test_frictionless_energy_drift_is_of_the_fourth_order():
    """The UR5 without drive terms, swinging down from a bent pose for 0.5 s (its stops at +-2 pi never reached):
    halving ``dt`` divides the worst energy error by about 16."""
    robot = oracle.load_quietly(oracle.robot_path(ARMS[1]))
    robot = robot.with_drive(damping=np.zeros(robot.dof), friction=np.zeros(robot.dof))
    q0 = np.array([0.3, -0.5, 1.0, -1.2, 0.5, 1.0])
    drifts = []
    for dt in (1e-2, 5e-3):
        trajectory, E = fall(robot, q0, 0.5, dt)
        drifts.append(np.abs(E - E[0]).max())
    assert np.abs(trajectory.q - q0).max() > 1.0  # a real swing
    assert 12.0 < drifts[0] / drifts[1] < 20.0, drifts


@pytest.mark.parametrize("dt", [1e-2, 2e-3, 1e-3])
@pytest.mark.parametrize("path", [XARM, IIWA], ids=["xarm7_gripper", "iiwa14"])
def test_description_packages_fall_stably_with_their_damping_and_friction(path, dt):
    """The xArm 7 + gripper and the iiwa 14 with their URDF damping (2-10 N m s/rad on links down to 0.1 kg m^2)
    and Coulomb friction, released from a random pose: the explicit step ran away at these rates (issue 34)."""
    robot = rd.load_urdf(path)
    trajectory, E = fall(robot, random_pose(robot, 3), 1.0, dt)
    assert_dissipative(robot, trajectory, E, dt)
    assert E[-1] < E[0] - 0.01 * scale(robot)  # it fell: potential energy was dissipated


@pytest.mark.long
@pytest.mark.parametrize("dt", [1e-2, 2e-3, 1e-3])
@pytest.mark.parametrize("path", [XARM, IIWA], ids=["xarm7_gripper", "iiwa14"])
def test_description_packages_fall_stably_for_10_s(path, dt):
    robot = rd.load_urdf(path)
    for seed in range(3):
        trajectory, E = fall(robot, random_pose(robot, seed), 10.0, dt)
        assert_dissipative(robot, trajectory, E, dt)


@pytest.mark.parametrize("dt", [1e-2, 2e-3, 1e-3])
@pytest.mark.parametrize("path", ARMS[:4], ids=lambda p: os.path.basename(p))
def test_damped_arms_fall_stably_onto_their_stops(path, dt):
    robot = damped(path, 4)
    trajectory, E = fall(robot, random_pose(robot, 5), 1.0, dt)
    assert_dissipative(robot, trajectory, E, dt)


@pytest.mark.long
@pytest.mark.parametrize("dt", [1e-2, 2e-3, 1e-3])
@pytest.mark.parametrize("path", ARMS, ids=lambda p: os.path.basename(p))
def test_damped_arms_fall_stably_for_10_s(path, dt):
    robot = damped(path, 4)
    for q0 in (np.clip(np.zeros(robot.nq), *robot.position_limits.T), random_pose(robot, 6)):
        trajectory, E = fall(robot, q0, 10.0, dt)
        assert_dissipative(robot, trajectory, E, dt)


def test_the_xarm_falling_onto_joint_2_loses_energy_at_its_stop():
    """The xArm 7, gripper locked, no damping or friction, released upright: it falls onto joint 2's upper limit
    (2.0944 rad) at about 0.4 s. The old step (a position reset and a zeroed velocity) added 39 J in that step to a
    robot holding 10 J; the inelastic stop in the mass matrix's metric takes energy away, and the energy never
    comes back above its start (RK4's own error while the wrist spins at 40 rad/s: 1e-4 J a step at most)."""
    robot = rd.load_urdf(XARM).with_drive(damping=np.zeros(8), friction=np.zeros(8))
    robot = robot.with_locked_joints({"drive_joint": 0.0})
    trajectory, E = fall(robot, np.zeros(robot.nq), 0.6, 1e-3)
    upper = robot.position_limits[1, 1]
    hit = np.flatnonzero(trajectory.q[:, 1] >= upper - 1e-4)[0]
    assert 0.35 < trajectory.t[hit] < 0.45
    assert E[hit] < E[hit - 1] - 1.0  # the impact dissipates (measured: 9.2 J)
    assert E.max() <= E[0] + 1e-6 * scale(robot)
    assert trajectory.q[:, 1].max() <= upper


def test_a_joint_rests_on_its_stop_without_drifting_or_bouncing():
    """The xArm with its URDF friction and damping 0.5 N m s/rad, released with joint 2 at 1.5 rad, falls onto
    joint 2's stop and lies there: at every step of the last half second of 2 s, on the limit to :data:`PAST`, its
    speed below 1e-6 rad/s."""
    robot = rd.load_urdf(XARM)
    robot = robot.with_drive(damping=np.full(8, 0.5))
    q0 = np.zeros(robot.nq)
    q0[1] = 1.5
    trajectory, _ = fall(robot, q0, 2.0, 1e-3)
    upper = robot.position_limits[1, 1]
    last = trajectory.t >= 1.5
    np.testing.assert_allclose(trajectory.q[last, 1], upper, rtol=0, atol=PAST)
    assert np.abs(trajectory.qd[last, 1]).max() < 1e-6


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_coulomb_friction_holds_a_joint_below_its_breakaway_torque(method):
    """The level 2R arm (gravity torques 9.71 and 2.40 N m): with Coulomb friction 1.2 times each, nothing moves
    (no creep, no chatter: within 1e-12 rad, the velocity exactly 0); with joint 2's at half its gravity torque,
    joint 2 slides at ``(tau_g - F) / M_22`` from rest while joint 1 stays held."""
    base = rd.load_urdf(two_link_arm())
    tau_g = rd.gravity_torques(base, np.zeros(2), gravity=PLANAR_GRAVITY)
    held = base.with_drive(friction=1.2 * np.abs(tau_g))
    trajectory = rd.simulate(held, np.zeros(2), np.zeros(2), np.zeros(2), 1.0, 1e-3, method=method,
                             gravity=PLANAR_GRAVITY)
    assert np.abs(trajectory.q).max() < 1e-12
    assert not trajectory.qd.any()
    friction = np.abs(tau_g) * [1.2, 0.5]
    sliding = base.with_drive(friction=friction)
    t, trajectory = 0.01, rd.simulate(sliding, np.zeros(2), np.zeros(2), np.zeros(2), 0.01, 1e-4, method=method,
                                      gravity=PLANAR_GRAVITY)
    M22 = rd.mass_matrix(base, np.zeros(2))[1, 1]
    expected = -(abs(tau_g[1]) - friction[1]) / M22 * t ** 2 / 2  # gravity pulls joint 2 down (tau_g > 0 holds it)
    assert abs(trajectory.q[-1, 1] / expected - 1.0) < 0.02
    assert np.abs(trajectory.q[:, 0]).max() < 1e-12


def test_a_heavily_damped_light_link_is_stable_at_any_step():
    """Damping 1e4 N m s/rad on the 2R arm's light second link (``dt D / I`` up to 1e5, where an explicit step
    needs ``< 2``): its velocity decays, never overshoots, and the energy only falls."""
    robot = rd.load_urdf(two_link_arm()).with_drive(damping=np.array([0.1, 1e4]))
    for dt in (1e-2, 1e-3):
        trajectory = rd.simulate(robot, np.array([0.3, 0.5]), np.array([0.0, 5.0]), np.zeros(2), 0.5, dt,
                                 gravity=PLANAR_GRAVITY)
        assert np.abs(trajectory.qd[1:, 1]).max() < 5.0 and np.isfinite(trajectory.qd).all()
        assert np.diff(energy(robot, trajectory.q, trajectory.qd, PLANAR_GRAVITY)).max() <= 0.0


def test_a_batch_steps_as_its_states_do():
    robot = rd.load_urdf(IIWA)
    rng = np.random.default_rng(9)
    q = np.array([random_pose(robot, s) for s in range(3)])
    qd = rng.uniform(-1.0, 1.0, (3, 7))
    q_next, qd_next = rd.step(robot, q, qd, np.zeros((3, 7)), 1e-3)
    for n in range(3):
        one = rd.step(robot, q[n], qd[n], np.zeros(7), 1e-3)
        np.testing.assert_allclose(q_next[n], one[0], rtol=0, atol=1e-13)
        np.testing.assert_allclose(qd_next[n], one[1], rtol=0, atol=1e-11)


def test_a_step_that_diverges_names_the_fastest_coordinate(recwarn):
    """A finite state that forward dynamics takes but a step of 1 s cannot resolve (1e100 rad/s: its stages
    overflow) is a StateError about the simulation naming the fastest joint, not "the inputs are too large" nor a
    joint that "drives no mass"; no numpy warning."""
    robot = rd.load_urdf(two_link_arm())
    with pytest.raises(rd.StateError, match="the simulation diverged: a step of 1 s .* 'joint1', moves at 1e"
                                             r"\+100"):
        rd.step(robot, np.zeros(2), np.array([1e100, -1e99]), np.zeros(2), 1.0)
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


@pytest.mark.parametrize("dt", [2e-3, 2e-2])
def test_a_motion_the_stops_would_hide_diverges_with_its_cause(dt):
    """example-robot-data's iCub at its zero pose: its neck's links are point masses without rotational inertia, and
    there the mass matrix is singular to rounding (condition 1e17); gravity accelerates neck_yaw at 1.9e9 rad/s^2.
    The step cannot resolve that, but the stops hid it: the velocity bounds capped each joint at its range per step,
    and the arm bounced from stop to stop, its energy 1.3e6 J after 5 s from -33 J (at 2 ms; 1.3e4 J at 20 ms), with
    nothing to tell (the node's runaway speed, 100 times iCub's 100 rad/s limits, was never reached). The first step
    now raises, naming the joint and the near-singular mass matrix."""
    robot = oracle.load_quietly(oracle.robot_path("icub_description/robots/icub.urdf"))
    q0 = np.clip(np.zeros(robot.nq), *robot.position_limits.T)
    with pytest.raises(rd.StateError, match=r"does not resolve the motion .* 'neck_yaw' accelerates at -1.88e\+09; "
                                            "the mass matrix there is nearly singular"):
        rd.simulate(robot, q0, np.zeros(robot.nv), np.zeros(robot.nv), 0.1, dt)


def mimic_pair(lower, upper, multiplier):
    """Two 1 kg pendulums: 'source' within [0.1, 0.5] rad and 'follower', its mimic, within ``[lower, upper]``."""
    link = ('<link name="{}"><inertial><origin xyz="0 0 -0.3"/><mass value="1.0"/><inertia ixx="0.01" ixy="0" '
            'ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')
    return f"""<robot name="pair"><link name="base"/>{link.format("a")}{link.format("b")}
  <joint name="source" type="revolute"><parent link="base"/><child link="a"/><axis xyz="0 1 0"/>
    <limit lower="0.1" upper="0.5" effort="10" velocity="5"/></joint>
  <joint name="follower" type="revolute"><parent link="base"/><child link="b"/><origin xyz="0.2 0 0"/>
    <axis xyz="0 1 0"/><limit lower="{lower}" upper="{upper}" effort="10" velocity="5"/>
    <mimic joint="source" multiplier="{multiplier}" offset="0"/></joint></robot>"""


def test_mimic_limits_that_leave_a_joint_no_position_are_a_model_error():
    """The follower at -1 x source within [0.1, 0.5] needs the source within [-0.5, -0.1], outside its own limits:
    no position satisfies both. The step put the source at -0.1 rad, 0.2 rad past its lower limit, and rd.simulate
    refused every start as 'outside its limits [0.1, -0.1]'; now both name the two joints."""
    robot = rd.load_urdf(mimic_pair(0.1, 0.5, -1))
    message = (r"the limits of joint 'source' \[0.1, 0.5\] and of its mimic joint 'follower' \[0.1, 0.5\] \(at -1 x "
               r"'source' \+ 0\) admit no position of 'source'")
    with pytest.raises(rd.ModelError, match=message):
        rd.step(robot, np.array([0.3]), np.zeros(1), np.zeros(1), 1e-2)
    with pytest.raises(rd.ModelError, match=message):
        rd.simulate(robot, np.array([0.3]), np.zeros(1), np.zeros(1), 0.1, 1e-2)


def test_mimic_limits_that_leave_a_joint_one_position_are_warned_of():
    """example-robot-data's PR2: each gripper's r_parallel_root_joint follows the finger joint at -1 within [0,
    0.548], as the finger joint itself: the stops hold the gripper closed at 0. It is said once, per gripper."""
    robot = oracle.load_quietly(oracle.robot_path("pr2_description/urdf/pr2.urdf"))
    q = np.clip(np.zeros(robot.nq), *robot.position_limits.T)
    with pytest.warns(rd.ModelWarning) as warned:
        rd.step(robot, q, np.zeros(robot.nv), np.zeros(robot.nv), 1e-2)
    said = sorted(str(w.message) for w in warned if issubclass(w.category, rd.ModelWarning))
    assert len(said) == 2 and all("leave '" in text and "' one position, 0: the simulator's stops hold it there" in
                                  text for text in said), said
    assert "joint 'l_gripper_l_finger_joint' [0.0, 0.548] and of its mimic joint 'l_gripper_r_parallel_root_joint'" \
        in said[0]


@pytest.mark.parametrize("method", ["rk4", "semi_implicit"])
def test_tanh_coulomb_friction_creeps_at_its_closed_form_speed(method):
    """The smooth Coulomb law ``F tanh(qd / coulomb_velocity)`` (taken exactly in the implicit step, Newton within
    a bracket) with ``F`` 1.2 times each gravity torque of the level 2R arm: the arm creeps where the friction
    balances gravity, ``qd = -coulomb_velocity atanh(tau_g(q) / F)`` (0.012 rad/s with 0.01 rad/s), to 1% after
    0.2 s (the inertia's transient lasts milliseconds)."""
    base = rd.load_urdf(two_link_arm())
    friction = 1.2 * np.abs(rd.gravity_torques(base, np.zeros(2), gravity=PLANAR_GRAVITY))
    robot = base.with_drive(friction=friction, coulomb_velocity=np.full(2, 0.01))
    trajectory = rd.simulate(robot, np.zeros(2), np.zeros(2), np.zeros(2), 0.2, 1e-3, method=method,
                             gravity=PLANAR_GRAVITY)
    tau_g = rd.gravity_torques(base, trajectory.q[-1], gravity=PLANAR_GRAVITY)
    np.testing.assert_allclose(trajectory.qd[-1], -0.01 * np.arctanh(tau_g / friction), rtol=0.01)
