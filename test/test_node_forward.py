"""The forward_dynamics node over real rclpy: accelerations equal the library's, and the simulator it can be."""
import math
import time

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import LATCHED, Harness, pendulum_urdf, wait_for_count

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

import rne_dynamics as rd
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.simulation import period_ns
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.robots import DEFAULT_ROBOT
from rne_dynamics.algorithms.simulate import step

ARM = rd.load_urdf(DEFAULT_ROBOT)
NAMES = list(ARM.joint_names)
EXACT = dict(rtol=0.0, atol=1e-12)

# Two links swinging about y under gravity -z; hanging straight down at q = 0. Closed-form energy below.
M1, L1_COM, I1, L1, M2, L2_COM, I2 = 1.5, 0.3, 0.02, 0.6, 0.8, 0.25, 0.01
DOUBLE_PENDULUM = f"""<robot name="double_pendulum">
  <link name="base"/>
  <link name="upper"><inertial><origin xyz="0 0 -{L1_COM}"/><mass value="{M1}"/>
    <inertia ixx="{I1}" ixy="0" ixz="0" iyy="{I1}" iyz="0" izz="0.001"/></inertial></link>
  <link name="lower"><inertial><origin xyz="0 0 -{L2_COM}"/><mass value="{M2}"/>
    <inertia ixx="{I2}" ixy="0" ixz="0" iyy="{I2}" iyz="0" izz="0.001"/></inertial></link>
  <joint name="shoulder" type="continuous"><parent link="base"/><child link="upper"/><axis xyz="0 1 0"/></joint>
  <joint name="elbow" type="continuous"><parent link="upper"/><child link="lower"/><origin xyz="0 0 -{L1}"/>
    <axis xyz="0 1 0"/></joint>
</robot>"""

LIMITED_PENDULUM = pendulum_urdf("stop", -0.5, 1.6, 50)


def pendulum_energy(q, qd, g=9.81):
    """Kinetic plus potential energy of DOUBLE_PENDULUM (zero potential at the shoulder's height)."""
    (q1, q2), (w1, w2) = q, qd
    w12 = w1 + w2
    v2_squared = L1 ** 2 * w1 ** 2 + L2_COM ** 2 * w12 ** 2 + 2 * L1 * L2_COM * w1 * w12 * math.cos(q2)
    kinetic = 0.5 * (M1 * L1_COM ** 2 + I1) * w1 ** 2 + 0.5 * M2 * v2_squared + 0.5 * I2 * w12 ** 2
    potential = -g * (M1 * L1_COM * math.cos(q1) + M2 * (L1 * math.cos(q1) + L2_COM * math.cos(q1 + q2)))
    return kinetic + potential


def command(names, effort, sec=1, nanosec=0):
    msg = JointState(name=list(names), effort=[float(x) for x in effort])
    msg.header.stamp.sec, msg.header.stamp.nanosec = sec, nanosec
    return msg


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def simulated_steps(robot, q, qd, tau, before, after, rate):
    """The state the simulator publishes after ``before``: the whole periods of ``1 / rate`` between the two stamps,
    one step each (as the node does them)."""
    period = period_ns(rate)
    elapsed = stamp_ns(after) - stamp_ns(before)
    assert elapsed % period == 0, (elapsed, period)
    for _ in range(elapsed // period):
        q, qd = step(robot, q, qd, tau, 1e-9 * period)
    return q, qd


def holdable_rate(robot, rate, share):
    """``rate`` (Hz), or lower: the rate at which the simulator's steps of ``robot`` take at most ``share`` of a
    core, as measured here (with the kernels in plain Python a step costs milliseconds): the least of five rounds'
    cost per step, so that the other processes of a loaded machine do not count as the step's."""
    zero = np.zeros(robot.dof)
    step(robot, zero, zero, zero, 1e-3)
    costs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(10):
            step(robot, zero, zero, zero, 1e-3)
        costs.append((time.perf_counter() - start) / 10)
    return min(rate, float(math.floor(share / min(costs))))


def machine_code_step_cost(robot, dt, seconds=60.0):
    """The cost (s) of one simulator step of ``robot`` once it runs as machine code: the written code of the step is
    built as C in the background after it has served a few dozen states (and cached on disk, where the node's model
    of the same numbers finds it). The steps are repeated until one costs under 50 us or ``seconds`` pass."""
    zero = np.zeros(robot.dof)
    end = time.monotonic() + seconds
    while True:
        start = time.perf_counter()
        for _ in range(100):
            step(robot, zero, zero, zero, dt)
        cost = (time.perf_counter() - start) / 100
        if cost < 5e-5 or time.monotonic() > end:
            return cost
        time.sleep(0.1)


def test_simulation_keeps_time_at_1_khz(harness_factory):
    """At 1 kHz the stamps are the simulated time, which advances with the wall clock (within 5% on this loaded
    machine); the states are the library's steps between the stamps; diagnostics report a real-time factor of 1.
    1 kHz needs the step as machine code (the robot's written code, built as C: microseconds; its generic kernel in
    plain Python costs milliseconds): without a C compiler the test is skipped, saying so."""
    robot = rd.load_urdf(pendulum_urdf("pendulum", -3, 3, 50))
    zero = np.zeros(1)
    rate = 1000.0
    cost = machine_code_step_cost(robot, 1e-9 * period_ns(rate))
    if cost > 0.1 / rate:
        pytest.skip(f"a step of the pendulum costs {1e6 * cost:.0f} us here (no machine code: no C compiler?): more "
                    "than a tenth of a core at 1 kHz")
    h = harness_factory(robot_description=pendulum_urdf("pendulum", -3, 3, 50), simulate=True, rate_hz=rate,
                        initial_positions=[1.0], diagnostics_rate_hz=0.5)
    received = []
    h.probe.create_subscription(JointState, "/joint_states", lambda m: received.append((time.monotonic(), m)), 100)
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    assert h.spin_until(lambda: len(received) > 2)
    h.spin_for(4.5)
    (wall0, first), (wall1, last) = received[1], received[-1]
    ratio = 1e-9 * (stamp_ns(last) - stamp_ns(first)) / (wall1 - wall0)
    assert abs(ratio - 1.0) < 0.05, (ratio, rate, len(received))
    clock = h.node.clock
    assert h.spin_until(lambda: stamp_ns(received[-1][1]) == clock.start_stamp_ns + clock.simulated_ns)
    assert clock.dropped_ns < 0.05 * clock.simulated_ns
    messages = [m for _, m in received]
    assert all(stamp_ns(b) > stamp_ns(a) for a, b in zip(messages, messages[1:]))
    for a, b in zip(messages[-50:], messages[-49:]):
        q, qd = simulated_steps(robot, np.array(a.position), np.array(a.velocity), zero, a, b, rate)
        np.testing.assert_allclose(b.position, q, **EXACT)
        np.testing.assert_allclose(b.velocity, qd, **EXACT)
    status = diagnostics[-1].status[0]
    values = {v.key: v.value for v in status.values}
    assert abs(float(values["real-time factor"]) - 1.0) < 0.05, values
    assert status.level == DiagnosticStatus.OK, status.message


def test_the_clock_catches_up_within_its_lag_and_drops_beyond():
    """Each tick simulates the whole periods the wall clock passed; a tick out of budget leaves the rest due at the
    next; only time beyond MAX_LAG_NS (100 ms) behind is dropped. The clock starts at its first tick."""
    from rne_dynamics.nodes.simulation import MAX_LAG_NS, SimulationClock

    period = 1_000_000
    clock = SimulationClock(period, 5_000_000_000)
    start = 7_000_000_000 - period
    assert clock.due(start + period) == 1  # the first tick, however late the node spins: one period
    clock.advanced(1, 1, 10_000, 20_000)
    assert clock.due(start + 4 * period + 10) == 3  # a late tick: all whole periods, one step each
    clock.advanced(3, 3, 30_000, 40_000)
    assert clock.due(start + 4 * period + 20) == 0  # the rest of a period waits for the next tick
    assert clock.due(start + 9 * period) == 5
    clock.advanced(2, 5, 20_000, 5_000_000)  # out of budget after 2
    assert clock.due(start + 9 * period + 1) == 3 and clock.dropped_ns == 0  # still due, not dropped
    clock.advanced(3, 3, 30_000, 40_000)
    assert clock.due(start + 301 * period) == MAX_LAG_NS // period == 100  # far behind: 100 ms caught up, rest dropped
    assert clock.dropped_ns == (301 - 9 - 100) * period and clock.tally.late_ticks == 1
    clock.advanced(100, 100, 1_000_000, 1_000_000)
    assert clock.due(start + 301 * period + 999_999) == 0 and clock.due(start + 302 * period) == 1
    stamp = clock.stamp()
    assert (stamp.sec, stamp.nanosec) == (5, 109 * period)
    # elapsed, simulated, steps, cpu, wall, ticks, late ticks, dropped, limited ticks
    assert clock.tally == (302 * period, 109 * period, 109, 1_090_000, 6_100_000, 8, 1, 192 * period, 1)
    clock.resume(start + 400 * period)  # a stopped clock goes on from now: nothing due, nothing dropped
    assert clock.due(start + 400 * period) == 0 and clock.due(start + 401 * period) == 1
    assert clock.dropped_ns == 192 * period


def test_the_real_time_factor_below_095_says_why_from_the_measurements():
    from rne_dynamics.nodes.simulation import Tally, real_time

    period, second = 1_000_000, 1_000_000_000
    start = Tally(0, 0, 0, 0, 0, 0, 0, 0, 0)

    def window(simulated, steps, cpu, wall, ticks=1000, late=0, dropped=0, limited=0):
        return real_time(start, Tally(second, simulated, steps, cpu, wall, ticks, late, dropped, limited), period)

    assert window(970 * period, 970, 970 * 20_000, 970 * 30_000) == (0.97, "")
    factor, reason = window(600 * period, 600, 600 * 1_500_000, 600 * 1_600_000)
    assert factor == 0.6 and "a step costs 1.5 ms of computing, more than the period of 1 ms" in reason
    factor, reason = window(700 * period, 700, 700 * 400_000, 700 * 1_200_000)
    assert "a step took 1.2 ms of wall time for 0.4 ms of computing" in reason and "loaded" in reason
    factor, reason = window(800 * period, 800, 800 * 20_000, 800 * 25_000, ticks=500, late=2, dropped=200 * period)
    assert factor == 0.8 and "2 of 500 ticks came over 100 ms late (200 ms of simulated time dropped)" in reason
    factor, reason = window(900 * period, 900, 900 * 20_000, 900 * 25_000, limited=40)
    assert "40 of 1000 ticks ran out of their 5 ms budget" in reason


@pytest.fixture
def harness_factory():
    made = []

    def make(node_args=None, **parameters):
        made.append(Harness(ForwardDynamicsNode, node_args=node_args, **parameters))
        return made[-1]
    yield make
    for harness in made:
        harness.close()


def test_accelerations_at_the_measured_state_equal_the_library(harness_factory):
    armature = [0.05]
    payload = dict(link="forearm_link", mass=2.0, com=[0.0, 0.0, 0.1], inertia=[0.01, 0.0, 0.0, 0.01, 0.0, 0.01])
    h = harness_factory(robot_description=DEFAULT_ROBOT, armature=armature, gravity=[0.0, 0.5, -9.8],
                        **{f"payload.{key}": value for key, value in payload.items()})
    robot = ARM.with_payload(**payload).with_drive(armature=np.full(6, 0.05))
    accelerations = h.collect(JointTrajectory, "/forward_dynamics/accelerations")
    rng = np.random.default_rng(5)
    q, qd, tau = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, 6), rng.uniform(-20, 20, 6)

    h.publish(JointState, "/forward_dynamics/effort_command", command(NAMES, tau, sec=1))
    assert h.wait_for_warning("no /joint_states received yet")
    order = [2, 5, 0, 1, 4, 3]
    state = JointState(name=[NAMES[k] for k in order] + ["spare"], position=list(q[order]) + [3.0],
                       velocity=list(qd[order]) + [math.nan])  # a non-finite value of an extra joint is not ours
    h.publish(JointState, "/joint_states", state)
    assert h.spin_until(lambda: h.node.measured is not None)
    bad_effort = tau.copy()
    bad_effort[4] = math.inf
    for msg, warning in ((command(NAMES, bad_effort, sec=2), "effort of joint 'wrist_2_joint' is inf"),
                         (command(NAMES[:5], tau[:5], sec=3), "missing joints wrist_3_joint"),
                         (command(NAMES, tau[:2], sec=4), "6 joint names but 2 effort values")):
        h.publish(JointState, "/forward_dynamics/effort_command", msg)
        assert h.wait_for_warning(warning), h.warnings()
    reverse = NAMES[::-1]
    h.publish(JointState, "/forward_dynamics/effort_command", command(reverse, tau[::-1], sec=5, nanosec=6))
    msg = wait_for_count(h, accelerations, 1)
    h.spin_for(0.1)
    assert len(accelerations) == 1 and (msg.header.stamp.sec, msg.header.stamp.nanosec) == (5, 6)
    assert msg.joint_names == NAMES and len(msg.points) == 1
    point = msg.points[0]
    np.testing.assert_allclose(point.positions, q, **EXACT)
    np.testing.assert_allclose(point.velocities, qd, **EXACT)
    np.testing.assert_allclose(point.effort, tau, **EXACT)
    np.testing.assert_allclose(point.accelerations, rd.forward_dynamics(robot, q, qd, tau, gravity=[0.0, 0.5, -9.8]),
                               **EXACT)


def test_simulation_conserves_energy_and_publishes_library_steps(harness_factory):
    rate = 200.0
    q0 = [1.2, -0.5]
    h = harness_factory(robot_description=DOUBLE_PENDULUM, simulate=True, rate_hz=rate, initial_positions=q0)
    robot = rd.load_urdf(DOUBLE_PENDULUM)
    states = h.collect(JointState, "/joint_states")
    wait_for_count(h, states, 120)
    q = np.array([m.position for m in states])
    qd = np.array([m.velocity for m in states])
    assert all(m.name == ["shoulder", "elbow"] and list(m.effort) == [0.0, 0.0] for m in states)
    for k in range(len(states) - 1):  # every published state is the library's sub-steps from the one before
        q_next, qd_next = simulated_steps(robot, q[k], qd[k], np.zeros(2), states[k], states[k + 1], rate)
        np.testing.assert_allclose(q[k + 1], q_next, **EXACT)
        np.testing.assert_allclose(qd[k + 1], qd_next, **EXACT)
    e0 = pendulum_energy(q0, [0.0, 0.0])
    energy = np.array([pendulum_energy(a, b) for a, b in zip(q, qd)])
    kinetic = energy - np.array([pendulum_energy(a, [0.0, 0.0]) for a in q])
    assert kinetic.max() > 2.0  # it does swing: joules moved between kinetic and potential energy
    assert np.abs(energy - e0).max() < 1e-5 * abs(e0), np.abs(energy - e0).max()


def test_simulation_publishes_the_locked_joints_at_their_positions(harness_factory):
    """robot_state_publisher needs every joint for the links' poses: a locked joint is in /joint_states, still."""
    rate = 200.0
    h = harness_factory(robot_description=DOUBLE_PENDULUM, simulate=True, rate_hz=rate, initial_positions=[1.2],
                        locked_joints=["elbow=0.4"])
    robot = rd.load_urdf(DOUBLE_PENDULUM).with_locked_joints({"elbow": 0.4})
    states = h.collect(JointState, "/joint_states")
    wait_for_count(h, states, 20)
    assert all(m.name == ["shoulder", "elbow"] for m in states)
    assert all(list(m.position[1:]) == [0.4] and list(m.velocity[1:]) == [0.0] and list(m.effort) == [0.0, 0.0]
               for m in states)
    q, qd = np.array([m.position[:1] for m in states]), np.array([m.velocity[:1] for m in states])
    for k in range(len(states) - 1):  # the shoulder moves as the library's one-joint robot
        q_next, qd_next = simulated_steps(robot, q[k], qd[k], np.zeros(1), states[k], states[k + 1], rate)
        np.testing.assert_allclose(q[k + 1], q_next, **EXACT)
        np.testing.assert_allclose(qd[k + 1], qd_next, **EXACT)
    assert np.ptp(q) > 0.01  # it does swing


def test_simulation_stops_at_joint_limits(harness_factory):
    """The stop is in the library's step: every published state is the library's sub-steps from the one before
    (a published state need not be the one on the stop: a late tick takes several sub-steps)."""
    h = harness_factory(robot_description=LIMITED_PENDULUM, simulate=True, rate_hz=200.0, initial_positions=[1.5])
    robot = rd.load_urdf(LIMITED_PENDULUM)
    states = h.collect(JointState, "/joint_states")
    assert h.spin_until(lambda: len(states) > 5 and states[-1].position[0] > states[-2].position[0]
                        and min(m.position[0] for m in states) <= -0.45)  # at the stop, swinging back
    q = np.array([m.position[0] for m in states])
    assert q.min() >= -0.5 and q.max() <= 1.5  # free, it would swing to -1.5
    for a, b in zip(states, states[1:]):
        q_next, qd_next = simulated_steps(robot, a.position, a.velocity, [0.0], a, b, 200.0)
        np.testing.assert_allclose(b.position, q_next, **EXACT)
        np.testing.assert_allclose(b.velocity, qd_next, **EXACT)
    assert not h.warnings()  # a stop is physics, not an error


def test_effort_command_reset_and_diagnostics_while_simulating(harness_factory):
    rate = 100.0
    h = harness_factory(robot_description=DOUBLE_PENDULUM, simulate=True, rate_hz=rate, initial_positions=[0.3, 0.2],
                        diagnostics_rate_hz=20.0)
    robot = rd.load_urdf(DOUBLE_PENDULUM)
    states = h.collect(JointState, "/joint_states")
    accelerations = h.collect(JointTrajectory, "/forward_dynamics/accelerations")
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    wait_for_count(h, states, 3)
    tau = np.array([1.5, -0.7])
    h.publish(JointState, "/forward_dynamics/effort_command", command(["elbow", "shoulder"], tau[::-1], sec=9))
    point = wait_for_count(h, accelerations, 1).points[0]
    np.testing.assert_allclose(point.accelerations, rd.forward_dynamics(robot, point.positions, point.velocities, tau),
                               **EXACT)
    assert h.spin_until(lambda: list(states[-1].effort) == list(tau))  # the command is applied and held

    seen = len(states)
    response = h.call(Trigger, "/forward_dynamics/reset")
    assert response.success and "initial state" in response.message

    def restarted(a, b):  # b: the sub-steps from the initial state at rest since a, the state before the reset
        q_first, qd_first = simulated_steps(robot, [0.3, 0.2], [0.0, 0.0], [0.0, 0.0], a, b, rate)
        return np.array_equal(b.position, q_first) and np.array_equal(b.velocity, qd_first)
    assert h.spin_until(lambda: any(restarted(a, b) for a, b in zip(states[seen - 1:], states[seen:])))
    def values():
        return {kv.key: kv.value for kv in diagnostics[-1].status[0].values} if diagnostics else {}
    assert h.spin_until(lambda: values().get("mode") == "simulating" and int(values()["simulation steps"]) > 0)
    assert values()["robot"] == "double_pendulum" and float(values()["simulated time [s]"]) > 0.0

    assert h.node.set_parameters([Parameter("simulate", value=False)])[0].successful
    assert h.node.joint_states_publisher is None and h.node.step_timer is None
    assert h.spin_until(lambda: h.probe.count_publishers("/joint_states") == 0)
    refused = h.node.set_parameters([Parameter("initial_positions", value=[0.1])])[0]
    assert not refused.successful and "initial_positions has 1 values" in refused.reason


def test_gravity_torques_of_the_inverse_node_hold_the_simulated_robot(harness_factory):
    """The wiring of simulation.launch.py: the simulator's effort command is the inverse node's ~/gravity_torques.
    Held at home until the first arrives (hold_until_command), then every state carries one: the gravity torque at
    an earlier state, which holds the arm where gravity alone would swing it over 0.5 rad in a second."""
    home, armature, friction = [0.0, -1.2, 1.0, -1.4, -1.57, 0.0], 0.1, 2.0
    rate = holdable_rate(ARM, 200.0, 0.15)  # the simulator keeps real time: the inverse node must keep up
    h = harness_factory(node_args=["--ros-args", "-r", "~/effort_command:=/inverse_dynamics/gravity_torques"],
                        robot_description=DEFAULT_ROBOT, simulate=True, hold_until_command=True, rate_hz=rate,
                        initial_positions=home, armature=[armature], viscous_friction=[friction])
    states = h.collect(JointState, "/joint_states")
    inverse = InverseDynamicsNode(context=h.context, parameter_overrides=[Parameter("robot_description",
                                                                                   value=DEFAULT_ROBOT)])
    h.executor.add_node(inverse)
    try:
        assert h.spin_until(lambda: any(any(m.effort) for m in states), timeout=60.0)
        c = next(k for k, m in enumerate(states) if any(m.effort))
        assert h.spin_until(lambda: stamp_ns(states[-1]) - stamp_ns(states[c]) >= 1e9, timeout=60.0)  # a second
        assert all(list(m.position) == home and not any(m.velocity) for m in states[:c])  # held
        assert all(any(m.effort) for m in states[c:])  # the torques keep coming
        q = np.array([m.position for m in states])
        gravity = rd.gravity_torques(ARM, q)
        for k in range(c, len(states)):  # each applied effort is the inverse node's gravity torque at an earlier state
            assert np.abs(gravity[:k] - states[k].effort).max(axis=1).min() <= 1e-12
        robot = ARM.with_drive(armature=np.full(6, armature), damping=np.full(6, friction))
        falling = rd.simulate(robot, home, np.zeros(6), np.zeros(6), 1.0, 1.0 / rate)
        assert np.abs(falling.q[-1] - home).max() > 0.5 and np.abs(q - home).max() < 1e-9, np.abs(q - home).max()
    finally:
        h.executor.remove_node(inverse)
        inverse.destroy_node()


def test_a_robot_without_forward_dynamics_is_refused(harness_factory):
    h = harness_factory(topic_description=DOUBLE_PENDULUM, simulate=True, rate_hz=50.0)
    massless = LIMITED_PENDULUM.replace('<mass value="2.0"/>', '<mass value="0.0"/>').replace(
        'ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"', 'ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"')
    h.publish(String, "/robot_description", String(data=massless), qos=LATCHED)
    # the refusal is explained by the generic forward-dynamics kernel (the written code only says "not OK"): in numba
    # mode its first use in a process compiles it, minutes on a loaded machine with a cold cache
    assert h.spin_until(lambda: h.warnings("drives no mass"), timeout=900.0), h.warnings()
    assert h.node.model.robot.name == "double_pendulum" and "keeping robot 'double_pendulum'" in h.warnings()[-1]
    states = h.collect(JointState, "/joint_states")
    wait_for_count(h, states, 2)  # still simulating the old robot
    assert states[-1].name == ["shoulder", "elbow"]


def test_live_demo_prints_torques_and_loads_and_exits_0(capsys):
    from rne_dynamics.tools.cli import main

    assert main(["live", "--duration", "2.5", "--period", "1"]) == 0
    out = capsys.readouterr().out
    assert out.count("torque messages") >= 2 and "shoulder_lift_joint" in out and "%" in out
    done = out.strip().splitlines()[-1]
    assert done.startswith("done: ") and int(done.split()[1]) > 10  # torques arrived from the inverse node
