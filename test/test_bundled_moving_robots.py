"""The bundled robots with a moving base: the mobile manipulator and the free-floating space robot load (ours and
Pinocchio's), the platform rolling on flat ground is a planar joint, and the space robot's simulated motion
conserves momentum while its arm turns the satellite."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

MOBILE, SPACE = rd.bundled_robot_path("rne_mobile_manipulator"), rd.bundled_robot_path("rne_space_robot")


@pytest.mark.parametrize("path, mass, joints", [(MOBILE, 81.4, 6), (SPACE, 559.0, 7)], ids=["mobile", "space"])
def test_loads_and_matches_pinocchio(path, mass, joints):
    """No warning; mass and joints as documented; free-floating inverse model against Pinocchio's ``rnea``."""
    robot = rd.load_urdf(path, floating_base=True)
    assert robot.warnings == () and robot.has_floating_base
    assert robot.total_mass == pytest.approx(mass) and len(robot.joint_names) == joints
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    model.gravity = pin.Motion.Zero()
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    assert sum(model.inertias[j].mass for j in range(1, model.njoints)) == pytest.approx(mass)
    q, v, a = oracle.random_floating_states(robot, 3, seed=41, scale=1.0)
    result = rd.free_floating_inverse_dynamics(robot, q, v, a[:, 6:], gravity=np.zeros(3))
    for n in range(3):
        qdd = np.concatenate([result.base_acceleration[n], a[n, 6:]])
        forces = mapping.ours(pin.rnea(model, data, mapping.q(q[n]), mapping.v(v[n]), mapping.v(qdd)))
        assert oracle.relative_error(forces, np.concatenate([np.zeros(6), result.torques[n]])) < 1e-9


def test_bundled_robot_names():
    assert rd.bundled_robot_path() == rd.bundled_robot_path("rne_arm6")
    with pytest.raises(rd.ModelError, match="no bundled robot 'rover'; the bundled robots are rne_arm6"):
        rd.bundled_robot_path("rover")


def test_mobile_platform_on_flat_ground_is_a_planar_joint():
    """The platform upright on flat ground: the free-flyer with ``vz, wx, wy`` and their accelerations held at 0
    (known), the wheels' forces on ``vx, vy, wz`` known, the arm's accelerations known, equals the same robot on a
    URDF planar joint; the free-flyer's extra forces are the ground's support wrench, which holds the weight."""
    with open(MOBILE, encoding="utf-8") as stream:
        text = stream.read()
    planar = rd.load_urdf(text.replace('<link name="base_link">', '<link name="odom"/><joint name="drive" '
                                       'type="planar"><parent link="odom"/><child link="base_link"/><axis xyz="0 0 1"/>'
                                       '</joint><link name="base_link">'))
    robot = rd.load_urdf(MOBILE, floating_base=True)
    rng = np.random.default_rng(42)
    wheels = rng.uniform(-50.0, 50.0, 3)  # the wheels' force along x, y and torque about z, base frame
    x, y, heading = rng.uniform(-2.0, 2.0, 3)
    arm_q, arm_qd, arm_qdd = rng.uniform(-1.0, 1.0, (3, 6))
    vx, vy, wz = rng.uniform(-1.0, 1.0, 3)
    q = np.concatenate([[x, y, 0.0, 0.0, 0.0, np.sin(heading / 2), np.cos(heading / 2)], arm_q])
    v = np.concatenate([[vx, vy, 0.0, 0.0, 0.0, wz], arm_qd])
    known = np.array([False, False, True, True, True, False] + [True] * 6)
    floating = rd.hybrid_dynamics(robot, q, v, np.concatenate([np.zeros(6), arm_qdd]),
                                  np.concatenate([wheels[:2], [0, 0, 0], wheels[2:], np.zeros(6)]),
                                  known_acceleration=known)
    reference = rd.hybrid_dynamics(planar, np.concatenate([[x, y, heading], arm_q]), np.concatenate([[vx, vy, wz],
                                   arm_qd]), np.concatenate([np.zeros(3), arm_qdd]), np.concatenate([wheels,
                                   np.zeros(6)]), known_acceleration=["shoulder_pan_joint", "shoulder_lift_joint",
                                   "elbow_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"])
    assert oracle.relative_error(floating.accelerations[[0, 1, 5]], reference.accelerations[:3]) < 1e-12
    assert oracle.relative_error(floating.torques[6:], reference.torques[3:]) < 1e-12
    assert oracle.relative_error(floating.joint_wrenches, reference.joint_wrenches[1:]) < 1e-12
    at_rest = rd.hybrid_dynamics(robot, q, np.zeros(12), np.zeros(12), np.zeros(12), known_acceleration=known)
    assert at_rest.torques[2] == pytest.approx(robot.total_mass * 9.81, rel=1e-12)  # the ground holds the weight


def test_space_robot_simulation_conserves_momentum():
    """The arm moved to a new posture in 2 s (a minimum-jerk path) in zero gravity, base free: computed-torque control
    by the free-floating inverse model (its torques for the path's acceleration plus a PD correction) keeps the
    joints on the path; the simulated momentum stays at its initial value (0) to the integrator's accuracy, the
    centre of mass stays put, and the satellite turns (the arm visibly moves it)."""
    robot = rd.load_urdf(SPACE, floating_base=True)
    q0, target, duration = rd.neutral(robot), np.array([0.8, -0.6, 0.5, 1.2, -0.7, 0.6, 0.4]), 2.0

    def path(t):
        s = min(t / duration, 1.0)
        return (target * (10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5),
                target * (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration,
                target * (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2)

    def controller(t, q, qd):
        position, velocity, acceleration = path(t)
        command = acceleration + 100.0 * (position - q[7:]) + 20.0 * (velocity - qd[6:])
        torques = rd.free_floating_inverse_dynamics(robot, q, qd, command, gravity=np.zeros(3)).torques
        return np.concatenate([np.zeros(6), torques])

    motion = rd.simulate(robot, q0, np.zeros(robot.nv), controller, duration, 0.005, gravity=np.zeros(3))
    assert np.abs(motion.q[-1, 7:] - target).max() < 1e-3  # the joints followed the path
    momentum = rd.centroidal_momentum(robot, motion.q, motion.qd)
    arm_momentum = np.abs(rd.centroidal_momentum_matrix(robot, motion.q)[:, :, 6:] @ motion.qd[:, 6:, None]).max()
    assert arm_momentum > 10.0  # the arm's own momentum (N s, N m s), which the base's cancels
    # RK4's error: at dt = 10, 5, 2.5 ms the drift is 2.8e-6, 1.7e-7, 1.0e-8 N m s (16x per halving, order 4)
    assert np.abs(momentum).max() < 1e-8 * arm_momentum
    com = rd.center_of_mass(robot, motion.q)
    assert np.abs(com - com[0]).max() < 1e-9
    turn = 2 * np.degrees(np.arccos(min(1.0, abs(motion.q[-1, 6]))))  # the satellite's rotation angle
    assert turn > 5.0  # 9.0 degrees
