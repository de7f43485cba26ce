"""The forward node simulates the motor-link model of elastic joints (real rclpy): link states on /joint_states,
motor states on ~/motor_states, each step the library's; bad drive parameters are refused, the last good kept."""
import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import Harness, wait_for_count

from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState

import rne_dynamics as rd
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from test_node_forward import DOUBLE_PENDULUM

EXACT = dict(rtol=0.0, atol=1e-12)


@pytest.fixture
def harness():
    made = Harness(ForwardDynamicsNode, robot_description=DOUBLE_PENDULUM, simulate=True, rate_hz=200.0,
                   initial_positions=[0.4, 0.3], joint_stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4],
                   gear_ratio=[1.0, 20.0])
    yield made
    made.close()


def test_motor_link_simulation_publishes_library_steps(harness):
    h = harness
    robot = rd.load_urdf(DOUBLE_PENDULUM).with_drive(stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4],
                                                     gear_ratio=[1.0, 20.0])
    states = h.collect(JointState, "/joint_states")
    motors = h.collect(JointState, "/forward_dynamics/motor_states")
    wait_for_count(h, motors, 40)
    assert h.spin_until(lambda: len(states) >= 40)
    assert all(m.name == ["elbow"] for m in motors)
    link = {(m.header.stamp.sec, m.header.stamp.nanosec): m for m in states}
    pairs = [(link[(m.header.stamp.sec, m.header.stamp.nanosec)], m) for m in motors
             if (m.header.stamp.sec, m.header.stamp.nanosec) in link]  # one step's link and motor states
    assert len(pairs) > 30
    for (state, motor), (next_state, next_motor) in zip(pairs, pairs[1:]):  # each the library's RK4 step
        elapsed = stamp_ns(next_state) - stamp_ns(state)  # in sub-steps of at most 1/200 s, as the node
        substeps = -(-elapsed // 5_000_000)
        q, qd, theta, thetad = state.position, state.velocity, motor.position, motor.velocity
        for _ in range(substeps):
            dt = 1e-9 * elapsed / substeps
            moved = rd.flexible_simulate(robot, q, qd, theta, thetad, np.zeros(2), dt, dt)
            q, qd, theta, thetad = moved.q[-1], moved.qd[-1], moved.theta[-1], moved.thetad[-1]
        np.testing.assert_allclose(next_state.position, q, **EXACT)
        np.testing.assert_allclose(next_state.velocity, qd, **EXACT)
        np.testing.assert_allclose(next_motor.position, theta, **EXACT)
        np.testing.assert_allclose(next_motor.velocity, thetad, **EXACT)
    spring = np.array([m.position[0] - s.position[1] for s, m in pairs])
    assert np.abs(spring).max() > 1e-3  # the spring winds up: the link and its motor part


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def test_bad_drive_parameters_are_refused_and_the_last_good_kept(harness):
    h = harness
    for name, value, reason in (("joint_stiffness", [-1.0, 2.0], "joint_stiffness must be finite and >= 0"),
                                ("gear_ratio", [0.0, 1.0], "gear_ratio must be > 0"),
                                ("joint_stiffness", [1.0, 2.0, 3.0], "joint_stiffness has 3 values")):
        result = h.node.set_parameters([Parameter(name, value=value)])[0]
        assert not result.successful and reason in result.reason, result.reason
    h.refused_build("motor_inertia", [0.0, 0.0], "elastic joint 'elbow' has no motor inertia")
    assert h.node.model.robot.elastic_joints == ("elbow",)
    assert h.node.model.robot.transmission.stiffness.tolist() == [0.0, 150.0]


def test_trajectory_efforts_are_the_exact_flexible_feedforward():
    from scipy.interpolate import make_interp_spline
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

    drive = dict(joint_stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4], gear_ratio=[1.0, 20.0])
    h = Harness(InverseDynamicsNode, robot_description=DOUBLE_PENDULUM, **drive)
    try:
        robot = rd.load_urdf(DOUBLE_PENDULUM).with_drive(stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4],
                                                         gear_ratio=[1.0, 20.0])
        out = h.collect(JointTrajectory, "/inverse_dynamics/trajectory_with_efforts")
        t = np.linspace(0.0, 1.0, 9)
        q = np.stack([0.5 * np.sin(3 * t), 0.4 * np.cos(2 * t)], axis=1)

        def trajectory(times):
            return JointTrajectory(joint_names=["elbow", "shoulder"], points=[
                JointTrajectoryPoint(positions=[float(b), float(a)], time_from_start=Duration(
                    sec=int(s), nanosec=int(round((s - int(s)) * 1e9)))) for s, (a, b) in zip(times, q)])
        h.publish(JointTrajectory, "/inverse_dynamics/trajectory", trajectory(t))
        msg = wait_for_count(h, out, 1)
        spline = make_interp_spline(t, q, k=5)
        expected = rd.flexible_feedforward(robot, q, *(spline(t, nu=n) for n in range(1, 5))).motor_torques
        np.testing.assert_allclose([p.effort[::-1] for p in msg.points], expected, rtol=1e-12, atol=1e-12)
        assert np.abs(expected[:, 1] - rd.inverse_dynamics(robot, q, spline(t, nu=1), spline(t, nu=2)).torques[:, 1]
                      ).max() > 1e-3  # the motor torques are not the rigid ones
        backwards = t.copy()
        backwards[4] = backwards[3]
        h.publish(JointTrajectory, "/inverse_dynamics/trajectory", trajectory(backwards))
        assert h.wait_for_warning("time_from_start must increase: point 4"), h.warnings()
        h.publish(JointTrajectory, "/inverse_dynamics/trajectory", trajectory(t[:3]))
        assert h.wait_for_warning("needs at least 6 points"), h.warnings()
        assert len(out) == 1
    finally:
        h.close()


def test_accelerations_are_the_motor_link_models_while_simulating():
    """Simulating elastic joints, ~/accelerations carries the motor-link model's link accelerations at the simulated
    link and motor state, not the rigid robot's (the first step is 1 s away: the command meets the initial state,
    motors where the springs are relaxed, all at rest)."""
    from trajectory_msgs.msg import JointTrajectory

    h = Harness(ForwardDynamicsNode, robot_description=DOUBLE_PENDULUM, simulate=True, rate_hz=1.0,
                initial_positions=[0.4, 0.3], joint_stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4],
                gear_ratio=[1.0, 20.0])
    try:
        robot = rd.load_urdf(DOUBLE_PENDULUM).with_drive(stiffness=[0.0, 150.0], motor_inertia=[0.0, 2.0e-4],
                                                         gear_ratio=[1.0, 20.0])
        out = h.collect(JointTrajectory, "/forward_dynamics/accelerations")
        tau = [0.5, -0.2]
        h.publish(JointState, "/forward_dynamics/effort_command", JointState(name=["shoulder", "elbow"], effort=tau))
        point = wait_for_count(h, out, 1).points[0]
        assert h.node.steps == 0 and list(point.positions) == [0.4, 0.3]
        at_rest = np.zeros(2)
        expected = rd.flexible_forward_dynamics(robot, [0.4, 0.3], at_rest, [0.3], [0.0], tau).link
        np.testing.assert_allclose(point.accelerations, expected, **EXACT)
        rigid = rd.forward_dynamics(robot, [0.4, 0.3], at_rest, tau)
        assert np.abs(np.asarray(point.accelerations) - rigid).max() > 1.0  # the relaxed spring passes no torque
    finally:
        h.close()


def test_trajectory_efforts_with_damped_springs_are_the_library_on_a_uniform_resampling():
    """With spring damping the node resamples the quintic spline through the points uniformly (a grid through every
    point; here the points are 0.125 s apart and D / K = 0.02 s, so the step is min(1 ms, D / K / 10) = 1 ms) and
    answers the library's motor torques of those samples at the points; a 4 times finer grid changes them by less
    than 1e-6 of their size, and the damping changes them."""
    from scipy.interpolate import make_interp_spline
    from builtin_interfaces.msg import Duration
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

    drive = dict(joint_stiffness=[0.0, 150.0], joint_damping=[0.0, 3.0], motor_inertia=[0.0, 2.0e-4],
                 gear_ratio=[1.0, 20.0])
    h = Harness(InverseDynamicsNode, robot_description=DOUBLE_PENDULUM, **drive)
    try:
        robot = rd.load_urdf(DOUBLE_PENDULUM).with_drive(stiffness=[0.0, 150.0], spring_damping=[0.0, 3.0],
                                                         motor_inertia=[0.0, 2.0e-4], gear_ratio=[1.0, 20.0])
        out = h.collect(JointTrajectory, "/inverse_dynamics/trajectory_with_efforts")
        t = np.linspace(0.0, 1.0, 9)
        q = np.stack([0.5 * np.sin(3 * t), 0.4 * np.cos(2 * t)], axis=1)
        h.publish(JointTrajectory, "/inverse_dynamics/trajectory", JointTrajectory(
            joint_names=["shoulder", "elbow"], points=[JointTrajectoryPoint(
                positions=[float(a), float(b)], time_from_start=Duration(sec=int(s), nanosec=round(s % 1 * 1e9)))
                for s, (a, b) in zip(t, q)]))
        efforts = np.array([p.effort for p in wait_for_count(h, out, 1).points])
        spline = make_interp_spline(t, q, k=5)

        def resampled(step, damped=robot):
            grid = np.linspace(0.0, 1.0, round(1.0 / step) + 1)
            every = round(0.125 / step)
            samples = [spline(grid, nu=n) for n in range(5)]
            return rd.flexible_feedforward(damped, *samples, dt=step).motor_torques[::every]
        expected = resampled(1e-3)
        np.testing.assert_allclose(efforts, expected, rtol=1e-9, atol=1e-9)
        finer = resampled(0.25e-3)
        assert np.abs(finer - expected).max() < 1e-6 * np.abs(expected).max()
        undamped = resampled(1e-3, robot.with_drive(spring_damping=[0.0, 0.0]))
        assert np.abs(undamped - expected).max() > 1e-3 * np.abs(expected).max()
    finally:
        h.close()
