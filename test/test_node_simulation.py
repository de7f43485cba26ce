"""The forward node's simulation over real rclpy: it holds until its first command (and simulation.launch.py's wiring
holds the arm whatever order the nodes start in), and a runaway stops it with one message, ~/reset restarting it."""
import os
import warnings

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import LATCHED, Harness, pendulum_urdf, wait_for_count

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from rcl_interfaces.msg import Log
from rclpy.logging import LoggingSeverity
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from std_srvs.srv import Trigger

import rne_dynamics as rd
from rne_dynamics.algorithms.simulate import step
from rne_dynamics.launch_files import SIMULATOR_PARAMETERS
from rne_dynamics.nodes import model as node_model
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.simulation import Tally, likely_cause, period_ns, real_time
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.robots import DEFAULT_ROBOT

CONFIG = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config", "rne_dynamics.yaml")
#: A pendulum that turns freely (no stops: nothing clips a runaway's velocity), 50 N m and 10 rad/s limits.
FREE_PENDULUM = pendulum_urdf("free", -3, 3, 50).replace('type="revolute"', 'type="continuous"')
HINGE_INERTIA = 2.0 * 0.5 ** 2 + 0.01  # kg m^2 about the hinge


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def command(names, effort):
    return JointState(name=list(names), effort=[float(x) for x in effort])


@pytest.fixture
def harnesses():
    made = []
    yield made
    for harness in made:
        harness.close()


def status_values(diagnostics):
    status = diagnostics[-1].status[0]
    return status, {kv.key: kv.value for kv in status.values}


def test_hold_until_command_holds_at_rest_then_runs_and_reset_holds_again(harnesses):
    rate, q0 = 100.0, [1.2]
    harnesses.append(h := Harness(ForwardDynamicsNode, robot_description=FREE_PENDULUM, simulate=True, rate_hz=rate,
                                  initial_positions=q0, hold_until_command=True, diagnostics_rate_hz=2.0))
    h.node.get_logger().set_level(LoggingSeverity.INFO)  # the live demo (of a test before) sets it to WARN
    states = h.collect(JointState, "/joint_states")
    diagnostics = h.collect(DiagnosticArray, "/diagnostics")
    wait_for_count(h, states, 30)  # 0.3 s held where gravity would have swung it by 0.4 rad
    assert all(list(m.position) == q0 and list(m.velocity) == [0.0] and list(m.effort) == [0.0] for m in states)
    gaps = np.diff([stamp_ns(m) for m in states])
    assert (gaps > 0).all() and (gaps % period_ns(rate) == 0).all()  # the stamps advance by whole periods
    assert h.spin_until(lambda: diagnostics and "holding" in status_values(diagnostics)[1]["mode"])
    status = status_values(diagnostics)[0]  # OK, but a loaded machine's late ticks may make a real-time WARN
    assert status.level == DiagnosticStatus.OK or status.message.startswith("the simulation ran at"), status.message

    held = len(states)
    h.publish(JointState, "/forward_dynamics/effort_command", command(["hinge"], [0.0]))
    assert h.spin_until(lambda: len(states) > held + 10 and states[-1].position[0] < 1.1)  # swinging down
    robot = rd.load_urdf(FREE_PENDULUM)
    first = next(k for k in range(held, len(states)) if states[k].position != states[k - 1].position)
    q, qd = np.array(q0), np.zeros(1)
    for _ in range((stamp_ns(states[first]) - stamp_ns(states[first - 1])) // period_ns(rate)):
        q, qd = step(robot, q, qd, np.zeros(1), 1.0 / rate)
    np.testing.assert_allclose(states[first].position, q, rtol=0, atol=1e-12)  # the library's steps from rest
    assert not h.warnings()

    assert "held until the first ~/effort_command" in h.call(Trigger, "/forward_dynamics/reset").message
    assert h.spin_until(lambda: any("holding the robot at initial_positions" in m.msg for m in h.log))  # says so
    seen = len(states)
    wait_for_count(h, states, seen + 20)
    assert all(list(m.position) == q0 and list(m.velocity) == [0.0] for m in states[-15:])

    assert h.set_parameters(Parameter("hold_until_command", value=False)).successful  # released at once
    assert h.spin_until(lambda: states[-1].position[0] < 1.1)


def test_simulation_launch_wiring_holds_the_arm_when_the_inverse_node_comes_seconds_later(harnesses):
    """The nodes as simulation.launch.py starts them (the parameter file, then the launch file's parameters; both
    read /robot_description, as robot_state_publisher latches it), in the worst order: the simulator gets its model,
    and the inverse node, whose gravity torques are its command, starts two seconds later. The arm holds within
    0.05 rad (without the hold it fell 1.7-2.9 rad onto a stop)."""
    urdf = open(DEFAULT_ROBOT).read()
    robot = rd.load_urdf(urdf)
    harnesses.append(h := Harness(ForwardDynamicsNode, init_args=["--ros-args", "--params-file", CONFIG],
                                  node_args=["--ros-args", "-r", "~/effort_command:=/inverse_dynamics/gravity_torques"],
                                  **SIMULATOR_PARAMETERS))
    h.publish(String, "/robot_description", String(data=urdf), qos=LATCHED)  # latched, as robot_state_publisher's
    assert h.spin_until(lambda: h.node.model is not None, timeout=300.0)  # built in the builder process
    states = h.collect(JointState, "/joint_states")
    h.spin_for(2.0)
    assert len(states) > 10 and not any(any(m.effort) for m in states)  # no command yet: held
    home = np.array(states[0].position)
    np.testing.assert_array_equal(home, np.zeros(robot.dof))  # initial_positions empty: zero, inside the limits
    inverse = InverseDynamicsNode(context=h.context)  # the parameter file: the context's; the description latched
    h.executor.add_node(inverse)
    try:
        assert h.spin_until(lambda: any(any(m.effort) for m in states), timeout=120.0), "no gravity torques came"
        first = next(k for k, m in enumerate(states) if any(m.effort))
        np.testing.assert_allclose(states[first].effort, rd.gravity_torques(robot, home), rtol=0, atol=1e-9)
        assert h.spin_until(lambda: stamp_ns(states[-1]) - stamp_ns(states[first]) >= 2_000_000_000, timeout=120.0)
        drift = np.abs(np.array([m.position for m in states]) - home).max()
        assert drift < 0.05, drift
    finally:
        h.executor.remove_node(inverse)
        inverse.destroy_node()


def runaway_harness(harnesses, **parameters):
    harnesses.append(h := Harness(ForwardDynamicsNode, robot_description=FREE_PENDULUM, simulate=True, rate_hz=100.0,
                                  initial_positions=[0.5], diagnostics_rate_hz=10.0, **parameters))
    h.started = h.node.get_clock().now().nanoseconds
    return h, h.collect(JointState, "/joint_states"), h.collect(DiagnosticArray, "/diagnostics")


def errors(h):
    """The node's errors since ``h.started`` (the ROS time the test made it: another test's node of the same name,
    in a context not yet gone, logs on the same /rosout)."""
    return [m.msg for m in h.log if m.level >= Log.ERROR
            and m.stamp.sec * 1_000_000_000 + m.stamp.nanosec >= h.started]


def assert_stopped_then_reset(h, states, diagnostics, words):
    """One ERROR log with ``words``, no more states, diagnostics ERROR, commands refused; ~/reset restarts it."""
    assert h.spin_until(lambda: errors(h))
    h.spin_for(0.3)
    assert len(errors(h)) == 1 and all(word in errors(h)[0] for word in words), errors(h)
    assert all(np.isfinite(m.position).all() and np.isfinite(m.velocity).all() for m in states)
    assert all(abs(m.velocity[0]) <= 1000.0 for m in states)  # 100 x its 10 rad/s limit
    count = len(states)
    h.spin_for(0.3)
    assert len(states) == count  # nothing more published
    assert h.spin_until(lambda: status_values(diagnostics)[0].level == DiagnosticStatus.ERROR)
    status, values = status_values(diagnostics)
    assert status.message.startswith("the simulation ran away at step") and values["mode"].startswith("stopped")
    h.publish(JointState, "/forward_dynamics/effort_command", command(["hinge"], [1.0]))
    assert h.wait_for_warning("the simulation ran away and stopped: ~/reset restarts it")
    assert "restarted after it ran away" in h.call(Trigger, "/forward_dynamics/reset").message
    wait_for_count(h, states, count + 5)
    robot, q, qd, restart = rd.load_urdf(FREE_PENDULUM), np.array([0.5]), np.zeros(1), []
    for _ in range(50):  # the first state after the reset: whole steps of the library from the initial state at rest
        q, qd = step(robot, q, qd, np.zeros(1), 0.01)
        restart.append((q[0], qd[0]))
    assert (states[count].position[0], states[count].velocity[0]) in restart
    assert not h.node.runaway and h.spin_until(lambda: status_values(diagnostics)[0].level == DiagnosticStatus.OK)
    assert len(errors(h)) == 1


def test_an_absurd_effort_command_runs_away_and_stops_with_one_message(harnesses):
    h, states, diagnostics = runaway_harness(harnesses)
    wait_for_count(h, states, 5)
    before = h.node.steps
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy warning raised in the callback would fail the spin
        h.publish(JointState, "/forward_dynamics/effort_command", command(["hinge"], [1e6]))
        assert h.spin_until(lambda: h.node.runaway)
    # 1e6 N m on 0.51 kg m^2: 2e4 rad/s after one step of 10 ms, far beyond 1000 rad/s: caught at that step
    step_number = int(h.node.runaway.split("at step ")[1].split()[0])
    assert before < step_number <= h.node.steps + 1
    assert_stopped_then_reset(h, states, diagnostics, ["joint 'hinge' reached a velocity of",
                                                       "beyond 1000 rad/s", "likely cause: the effort command: joint "
                                                       "'hinge' 1e+06 N m, beyond its effort limit 50"])
    # in a few digits: a command of 1e300 N m was warned of in its 301 digits
    assert h.wait_for_warning("~/effort_command: effort limits exceeded: hinge 1e+06 > 50 N m")


def test_a_non_finite_step_and_a_failing_step_stop_the_simulation(harnesses, monkeypatch):
    """A step that returns NaN (injected at the step level: whatever makes it, the node must catch it) or raises."""
    calls = {"n": 0, "fault": None}
    real = node_model.DynamicsModel.step

    def faulty(self, q, v, tau, dt, motors=None):
        calls["n"] += 1
        if calls["fault"] is not None and calls["n"] >= calls["fault"]:
            calls["fault"] = None  # once
            if calls["kind"] == "nan":
                return np.full_like(q, np.nan), v, None
            raise ValueError("the inputs are too large (float64 overflow)")
        return real(self, q, v, tau, dt, motors)
    monkeypatch.setattr(node_model.DynamicsModel, "step", faulty)
    h, states, diagnostics = runaway_harness(harnesses)
    wait_for_count(h, states, 5)
    calls.update(fault=calls["n"] + 3, kind="nan")
    assert_stopped_then_reset(h, states, diagnostics, ["joint 'hinge' reached a non-finite state", "likely cause"])
    h.log.clear()
    calls.update(fault=calls["n"] + 3, kind="raise")
    assert h.spin_until(lambda: errors(h))
    h.spin_for(0.3)
    assert len(errors(h)) == 1 and "the step failed (the inputs are too large (float64 overflow))" in errors(h)[0]


def test_the_likely_cause_of_a_runaway_names_a_damping_too_stiff_for_the_step(harnesses):
    """Damping D on inertia I is a time constant I/D; shorter than the step, it is named with the rate it needs."""
    damping = 1000.0
    harnesses.append(h := Harness(ForwardDynamicsNode, robot_description=FREE_PENDULUM,
                                  viscous_friction=[damping]))
    model = h.node.model
    constant = HINGE_INERTIA / damping  # 0.51 ms
    cause = likely_cause(model, np.array([0.3]), np.zeros(1), 0.01)
    assert (f"the damping of joint 'hinge', 1000 N m s/rad on an inertia of 0.51 kg m^2 there, is a time constant "
            f"of {constant:.3g} s, shorter than the step of 0.01 s: raise rate_hz above {1 / constant:.0f} Hz") in cause
    assert "a motion faster than the step" in likely_cause(model, np.array([0.3]), np.zeros(1), 0.2 * constant)
    assert "the effort command: joint 'hinge' -60 N m" in likely_cause(model, np.array([0.3]), np.array([-60.0]), 1e-3)
    # a command beyond its limit while the state already ran faster than its velocity limit: a controller's answer
    cause = likely_cause(model, np.array([0.3]), np.array([-60.0]), 1e-4, fast=(12, 0, -12.5))
    assert "effort command" not in cause and ("it began at step 12, where joint 'hinge' passed its velocity limit "
                                              "(-12.5 rad/s), and ran faster since") in cause


def test_live_exits_1_when_the_simulation_runs_away(monkeypatch, capsys):
    from rne_dynamics.tools.cli import main

    real, calls = node_model.DynamicsModel.step, {"n": 0}

    def diverging(self, q, v, tau, dt, motors=None):  # the state blows up after 1 s at 100 Hz
        calls["n"] += 1
        q, v, motors = real(self, q, v, tau, dt, motors)
        return q, (v * 1e30 if calls["n"] > 100 else v), motors
    monkeypatch.setattr(node_model.DynamicsModel, "step", diverging)
    assert main(["live", "--duration", "20", "--period", "1"]) == 1
    err = capsys.readouterr().err
    assert "rne-dynamics live: error: the simulation ran away at step" in err and "reached a velocity of" in err


def test_live_exits_1_at_once_when_the_simulator_refuses_the_robot(monkeypatch, capsys):
    """A robot whose step from the start pose does not resolve (example-robot-data's iCub: its point-mass neck) is
    refused by the simulating forward node; live says so and exits 1 at once (it waited out its duration and blamed
    the inverse node: "no torques arrived")."""
    import time

    from rne_dynamics.errors import StateError
    from rne_dynamics.tools.cli import main

    def diverging(self, q, v, tau, dt, motors=None):
        raise StateError("the simulation diverged: a step of 0.01 s from this state does not resolve the motion")
    monkeypatch.setattr(node_model.DynamicsModel, "step", diverging)
    start = time.monotonic()
    assert main(["live", "--duration", "60", "--period", "1"]) == 1
    assert time.monotonic() - start < 30.0
    err = capsys.readouterr().err
    assert ("rne-dynamics live: error: the forward_dynamics node refused the robot description from parameter "
            "robot_description: the simulation diverged: a step of 0.01 s") in err, err


def test_a_forward_node_that_does_not_simulate_serves_a_robot_whose_step_diverges(harnesses, monkeypatch):
    """The step is the simulation's: a forward node computing accelerations only takes the model."""
    def diverging(self, q, v, tau, dt, motors=None):
        raise AssertionError("a node that does not simulate stepped")
    monkeypatch.setattr(node_model.DynamicsModel, "step", diverging)
    harnesses.append(h := Harness(ForwardDynamicsNode, robot_description=FREE_PENDULUM))
    assert h.node.model is not None and not h.node.refusal


class FakeTime:
    """The forward node's wall and CPU clocks, moved by the test: a step "costs" what the test says."""

    def __init__(self, now):
        self.now = now

    def monotonic_ns(self):
        return self.now

    thread_time_ns = monotonic_ns

    @staticmethod
    def perf_counter():
        import time
        return time.perf_counter()


def test_steps_costing_a_third_of_the_period_keep_real_time_when_ticks_come_late(harnesses, monkeypatch):
    """The ticks of a node whose executor is held 40 ms every 100 ms (a loaded machine, other callbacks), a step
    costing 3 ms of a 10 ms period (a step in plain Python): the ticks after a late one catch up, nothing is dropped,
    the simulated time keeps up with the wall clock. (Before, a step over a quarter of the period made every tick
    take one step and drop the rest: 0.60 of real time here; 0.20 on a quadruped in `live`.)"""
    from rne_dynamics.nodes import forward_dynamics_node

    period, cost, held = 10_000_000, 3_000_000, 40_000_000
    harnesses.append(h := Harness(ForwardDynamicsNode, robot_description=FREE_PENDULUM, simulate=True, rate_hz=100.0,
                                  initial_positions=[0.5]))
    h.node.destroy_timer(h.node.step_timer)  # the test ticks
    clock = FakeTime(5_000_000_000)
    monkeypatch.setattr(forward_dynamics_node, "time", clock)
    real = node_model.DynamicsModel.step

    def costly(self, q, v, tau, dt, motors=None):
        clock.now += cost
        return real(self, q, v, tau, dt, motors)
    monkeypatch.setattr(node_model.DynamicsModel, "step", costly)
    start, boundary = clock.now - period, clock.now  # the clock starts a period before its first tick
    for tick in range(200):  # 2 s of timer periods
        clock.now = max(clock.now, boundary) + (held if tick % 10 == 5 else 0)
        h.node.step_simulation()
        boundary += period
    tally = h.node.clock.tally
    factor = tally.simulated_ns / (clock.now - start)
    assert tally.dropped_ns == 0 and tally.late_ticks == 0 and factor > 0.95, (factor, tally)
    assert tally.limited_ticks > 0  # the held ticks ran out of budget; the ticks after caught up
    assert tally.step_cpu_ns == cost * tally.steps
    assert real_time(Tally(*(0,) * 9), tally, period) == (pytest.approx(factor, abs=0.05), "")
