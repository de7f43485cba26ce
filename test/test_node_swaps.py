"""Model swaps that never hold the joint-state callbacks, over real rclpy: a new model's written code is made and
built as machine code in the builder process, so the node's own process only loads it (it never traces a robot's
code with the interpreter its callbacks need); what the callbacks need beside the model (publishers, observer,
estimator) is made on the model worker's thread, the executor's only swaps references; the builder process runs at a
lower priority than the node; and joint states that queue up while the node is held are all answered."""
import os
import threading
import types

import numpy as np
import pytest

# first: it skips the module where rclpy is missing
from ros_harness import Harness, harness_fixture, pendulum_urdf, wait_for_count

from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

import rne_dynamics as rd
from rne_dynamics.algorithms import written
from rne_dynamics.algorithms.simulate import step
from rne_dynamics.nodes import builder
from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode
from rne_dynamics.robots import DEFAULT_ROBOT

ARM = rd.load_urdf(DEFAULT_ROBOT)
EXACT = dict(rtol=0.0, atol=1e-12)
QUIET = dict(publish_wrenches=False, publish_markers=False)
#: The pendulum on a base of 1 kg: a robot that can float (a massless base could turn about the hinge for nothing).
WEIGHTED_PENDULUM = pendulum_urdf("pendulum", -3, 3, 5).replace('<link name="base"/>', '<link name="base"><inertial>'
    '<mass value="1.0"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')

harness_factory = harness_fixture(InverseDynamicsNode)


def recorded(made, what, function):
    """``function``, noting ``(what, the calling thread)`` in the list ``made`` at each call."""
    def call(*arguments, **keywords):
        made.append((what, threading.current_thread()))
        return function(*arguments, **keywords)
    return call


def recording(monkeypatch, node):
    """A list that gets ``(what, thread)`` for each publisher ``node`` makes or destroys and each robot code made
    (others added by :func:`recorded`)."""
    made = []
    monkeypatch.setattr(node, "create_publisher", recorded(made, "publisher", node.create_publisher))
    monkeypatch.setattr(node, "destroy_publisher", recorded(made, "publisher destroyed", node.destroy_publisher))
    monkeypatch.setattr(written, "make", recorded(made, "written code", written.make))
    return made


def stamp_ns(msg):
    return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec


def joint_state(q, qd, sec):
    msg = JointState(name=list(ARM.joint_names), position=q.tolist(), velocity=qd.tolist())
    msg.header.stamp.sec = sec
    return msg


def test_a_model_of_new_numbers_is_swapped_in_with_machine_code_and_nothing_traced_in_the_node(
        harness_factory, monkeypatch, tmp_path):
    """A payload set (new model numbers, none cached: an empty cache folder): the model swapped in holds machine
    code in every call its callbacks make before any joint state arrives, and the node's process traced nothing;
    the torques are the library's for the robot with that payload."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))  # for this process and the builder it starts
    h = harness_factory(robot_description=DEFAULT_ROBOT, **QUIET)
    traced = []
    trace = written.program_of
    monkeypatch.setattr(written, "program_of", lambda algorithm, *rest, **keywords: (
        traced.append(algorithm.name), trace(algorithm, *rest, **keywords))[1])
    payload = ("wrist_3_link", 1.7, [0.0, 0.01, 0.05], [0.003, 0.0, 0.0, 0.003, 0.0, 0.002])
    assert h.set_parameters(*(Parameter(f"payload.{name}", value=value) for name, value in
                              zip(("link", "mass", "com", "inertia"), payload))).successful
    model = h.node.model
    assert model.settings["payload.mass"] == 1.7 and traced == []
    made = [code for code in model.robot.engines.written.values() if code is not None]
    assert made and all(code.native for code in made)
    held = [h.call for data in (model.data, model.gravity_data) for h in data.held.values()]
    assert held and all(isinstance(call, types.BuiltinFunctionType) for call in held)  # C, not the traced Python

    torques = []
    h.probe.create_subscription(JointState, "/inverse_dynamics/torques", torques.append, 10)
    q, qd = np.linspace(-0.6, 0.6, 6), np.linspace(0.4, -0.4, 6)
    h.publish(JointState, "/joint_states", joint_state(q, qd, 1))
    assert h.spin_until(lambda: torques)
    expected = rd.inverse_dynamics(ARM.with_payload(*payload), q, qd, np.zeros(6)).torques
    np.testing.assert_allclose(torques[0].effort, expected, **EXACT)
    assert traced == []


def test_a_burst_of_joint_states_during_a_swap_is_answered_in_full(harness_factory):
    """80 joint states published at once while a parameter set's model is being built and the node's executor is
    not taking them (as when a swap or the machine holds it) are all answered, in order: ``/joint_states`` is kept
    ``joint_states_depth`` (100) deep."""
    h = harness_factory(robot_description=DEFAULT_ROBOT, **QUIET)
    torques = h.collect(JointState, "/inverse_dynamics/torques", qos=1000)
    q, qd = np.linspace(-0.5, 0.5, 6), np.zeros(6)
    h.publish(JointState, "/joint_states", joint_state(q, qd, 1), qos=1000)
    assert h.spin_until(lambda: len(torques) == 1)
    h.node.set_parameters([Parameter("gravity", value=[0.0, 0.3, -9.7])])
    assert h.node.builds_pending == 1
    for sec in range(2, 82):
        h.publishers["/joint_states"].publish(joint_state(q, qd, sec))
    assert h.spin_until(lambda: len(torques) >= 81 and h.node.builds_pending == 0)
    h.spin_for(0.2)
    assert [msg.header.stamp.sec for msg in torques] == list(range(1, 82))
    assert h.node.model.gravity.tolist() == [0.0, 0.3, -9.7]
    assert h.node.get_parameter("joint_states_depth").value == 100


def test_a_new_robot_is_prepared_off_the_executor_and_swapped_in_by_reference(harness_factory, monkeypatch):
    """A description of another robot, with the momentum observer and the payload estimator on: its joint-wrench
    publishers, observer (with its first update) and estimator are made, any robot code made or loaded, and the old
    robot's publishers destroyed, on the model worker's thread; the executor's thread (this test's: the harness spins
    here) does none of it. The builder process runs :data:`builder.NICENESS` below the node."""
    h = harness_factory(robot_description=DEFAULT_ROBOT, observer_gain=5.0, payload_estimation_link="wrist_3_link")
    assert h.node._process.process is None  # the builder process starts at the first change
    made = recording(monkeypatch, h.node)
    monkeypatch.setattr(rd, "MomentumObserver", recorded(made, "observer", rd.MomentumObserver))
    monkeypatch.setattr(rd, "PayloadEstimator", recorded(made, "estimator", rd.PayloadEstimator))
    pendulum = pendulum_urdf("pendulum", -3, 3, 5)
    assert h.set_parameters(Parameter("payload_estimation_link", value="bob"),
                            Parameter("robot_description", value=pendulum)).successful
    assert h.node.model.robot.name == "pendulum" and h.node.external.observer is not None
    assert h.node.payloads.estimator is not None
    assert h.probe.count_publishers("/inverse_dynamics/joint_wrenches/hinge") == 1
    assert h.spin_until(lambda: h.probe.count_publishers("/inverse_dynamics/joint_wrenches/elbow_joint") == 0)
    assert {what for what, _ in made} == {"publisher", "publisher destroyed", "observer", "estimator",
                                          "written code"}, made
    on_executor = [what for what, thread in made if thread is threading.main_thread()]
    assert on_executor == [], on_executor
    assert os.getpriority(os.PRIO_PROCESS, h.node._process.process.pid) == min(
        19, os.getpriority(os.PRIO_PROCESS, 0) + builder.NICENESS)


def test_the_forward_nodes_new_model_is_prepared_off_the_executor_and_swapped_in_by_reference(monkeypatch):
    """The simulating forward node given a floating base (parameter ``base``): the new model's messages, its
    ``~/base_odometry`` publisher and its robot code are made on the model worker's thread, and back on a fixed base
    the publisher is destroyed there; the executor's thread does none of it. The simulation starts again at rest
    from the new model's start: the free-floating pendulum falls under zero effort as one body, its base's height
    ``z = -v^2 / (2 g)`` at every message, without turning."""
    h = Harness(ForwardDynamicsNode, robot_description=WEIGHTED_PENDULUM, simulate=True, rate_hz=100.0)
    try:
        made = recording(monkeypatch, h.node)
        for message in (JointState, JointTrajectory):  # (the probe receives neither)
            monkeypatch.setattr(message, "__init__", recorded(made, "message", message.__init__))
        odometry = []
        h.probe.create_subscription(Odometry, "/forward_dynamics/base_odometry", odometry.append, 100)
        assert h.set_parameters(Parameter("base", value="free_floating")).successful
        assert h.node.model.robot.has_floating_base
        assert h.spin_until(lambda: len(odometry) >= 10)
        g = 9.81
        for msg in odometry:
            p, o = msg.pose.pose.position, msg.pose.pose.orientation
            v, w = msg.twist.twist.linear, msg.twist.twist.angular
            assert v.z < 0.0 and p.z == pytest.approx(-v.z ** 2 / (2 * g), rel=1e-9, abs=1e-12)
            np.testing.assert_allclose([p.x, p.y, v.x, v.y, o.x, o.y, o.z, o.w, w.x, w.y, w.z],
                                       [0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0], rtol=0.0, atol=1e-12)
        assert h.set_parameters(Parameter("base", value="fixed")).successful
        assert h.spin_until(lambda: h.probe.count_publishers("/forward_dynamics/base_odometry") == 0)
        assert {what for what, _ in made} == {"publisher", "publisher destroyed", "message", "written code"}, made
        on_executor = [what for what, thread in made if thread is threading.main_thread()]
        assert on_executor == [], on_executor
    finally:
        h.close()


def test_publish_wrenches_makes_and_destroys_its_publishers_off_the_executor(harness_factory, monkeypatch):
    """Set on, ``publish_wrenches`` comes with a model whose ``~/joint_wrenches/<joint>`` publishers are made on the
    model worker's thread, and the next joint state's wrenches are the library's; set off, the publishers are
    destroyed there too: the executor's thread makes and destroys none."""
    h = harness_factory(robot_description=DEFAULT_ROBOT, **QUIET)
    made = recording(monkeypatch, h.node)
    assert h.set_parameters(Parameter("publish_wrenches", value=True)).successful
    wrenches = h.collect(WrenchStamped, "/inverse_dynamics/joint_wrenches/elbow_joint")
    assert h.spin_until(lambda: h.node.outputs.messages.wrenches_on)  # made, then swapped in
    q, qd = np.linspace(-0.6, 0.6, 6), np.linspace(0.4, -0.4, 6)
    h.publish(JointState, "/joint_states", joint_state(q, qd, 1))
    msg = wait_for_count(h, wrenches, 1)
    expected = rd.inverse_dynamics(ARM, q, qd, np.zeros(6)).joint_wrenches[ARM.joint_names.index("elbow_joint")]
    received = [msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z,
                msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z]
    np.testing.assert_allclose(received, expected, **EXACT)
    assert h.set_parameters(Parameter("publish_wrenches", value=False)).successful
    assert h.spin_until(lambda: h.probe.count_publishers("/inverse_dynamics/joint_wrenches/elbow_joint") == 0)
    assert {"publisher", "publisher destroyed"} <= {what for what, _ in made}, made
    on_executor = [what for what, thread in made if thread is threading.main_thread()]
    assert on_executor == [], on_executor


def test_a_new_rate_keeps_the_simulations_publisher_and_steps_at_its_period(monkeypatch):
    """``rate_hz`` set on the simulating forward node: a new timer and clock, the ``/joint_states`` publisher kept
    (none made or destroyed on the executor: a millisecond or more each); the states then go on one step of the new
    period apart, the library's steps."""
    h = Harness(ForwardDynamicsNode, robot_description=pendulum_urdf("pendulum", -3, 3, 5), simulate=True,
                rate_hz=100.0, initial_positions=[1.0])
    try:
        publisher = h.node.joint_states_publisher
        states = h.collect(JointState, "/joint_states", qos=1000)
        made = recording(monkeypatch, h.node)
        assert h.set_parameters(Parameter("rate_hz", value=200.0)).successful
        h.spin_for(0.5)
        assert h.node.joint_states_publisher is publisher
        assert not [what for what, _ in made if what.startswith("publisher")], made
        robot, period = h.node.model.robot, 5_000_000
        for a, b in zip(states[-6:], states[-5:]):
            elapsed = stamp_ns(b) - stamp_ns(a)
            assert elapsed > 0 and elapsed % period == 0, elapsed
            q, qd = np.array(a.position), np.array(a.velocity)
            for _ in range(elapsed // period):
                q, qd = step(robot, q, qd, np.zeros(1), 1e-9 * period)
            np.testing.assert_allclose(b.position, q, **EXACT)
            np.testing.assert_allclose(b.velocity, qd, **EXACT)
    finally:
        h.close()
