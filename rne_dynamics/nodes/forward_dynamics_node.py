"""The ``forward_dynamics`` node: joint efforts in, joint accelerations out; optionally a light simulator.

``~/effort_command`` (JointState: name + effort, every joint of the robot) gives ``~/accelerations``: a
JointTrajectory with one point (positions, velocities, accelerations, effort) and the command's stamp, computed at
the state last read from ``/joint_states``. With ``simulate: true`` the node instead integrates its own state under
gravity and the last effort command (held; zero until the first), publishes it on ``/joint_states`` every
``1 / rate_hz`` s (position, velocity, and the applied effort; the ``locked_joints`` at their positions, at rest),
and computes ``~/accelerations`` at that state. The simulation keeps time (:class:`SimulationClock`): each tick
simulates the whole periods of ``1 / rate_hz`` the wall clock has passed beyond the simulated time (catching up over
later ticks what its budget leaves), and stamps its messages with the simulated time; diagnostics report the
real-time factor and WARN, with the measured reason, when it falls below 0.95 (:func:`real_time`). With
``hold_until_command`` the state stays at ``initial_positions`` until the first effort command. A sub-step that runs
away (:func:`runaway_speeds`, a non-finite state) stops the simulation with one ERROR naming the joint, the step and
the likely cause (:func:`runaway_message`). ``~/reset`` returns the simulation to ``initial_positions`` at rest with
zero effort (and restarts a stopped one).

With ``base: free_floating`` the robot gets a floating base that nothing holds (a space robot; set ``gravity`` to
zero for one in orbit): the base starts at rest at the origin, the joint efforts move it, and the simulation also
publishes its state on ``~/base_odometry`` (``nav_msgs/Odometry``: pose in ``world``, twist in the base link's frame,
as the inverse node's ``~/base_odometry`` takes it). Without ``simulate`` the base is taken at rest at the origin.

With elastic joints (parameter ``joint_stiffness``, with ``motor_inertia`` and ``gear_ratio``; fixed base) the
simulation runs the motor-link model (:func:`rne_dynamics.flexible_simulate`, one RK4 step per period): the effort
command is then the motor torques at the elastic joints (joint side), ``/joint_states`` carries the links and
``~/motor_states`` (JointState: the elastic joints, motor positions and velocities joint side, the motor torques)
the motors, which start where the springs are relaxed; ``~/accelerations`` then carries the link accelerations of
the motor-link model at the simulated link and motor state (:func:`rne_dynamics.flexible_forward_dynamics`; the
motors' own accelerations are not published). Not simulating, the node knows no motor state: ``~/accelerations``
are then the rigid robot's at the measured state under the commanded efforts.
"""
import time
from typing import NamedTuple

import numpy as np
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..errors import ModelError, StateError, one_line
from ..algorithms.driver import WARM
from .common import DynamicsNode, Publishers
from .messages import doubles, set_vectors
from .parameters import BOOL, DOUBLE, DOUBLES, STRING, Spec, joint_array
from .runner import spin
from .simulation import SimulationClock, period_ns, real_time, runaway_message, runaway_speeds, tick_budget_ns

BASE_MODES = ("fixed", "free_floating")

PARAMETERS = (
    Spec("simulate", False, BOOL, "integrate the robot under gravity and ~/effort_command and publish "
         "/joint_states, instead of reading /joint_states"),
    Spec("rate_hz", 500.0, DOUBLE, "simulation rate: one step of 1/rate_hz s and one /joint_states per period (Hz)",
         1.0, 1.0e4, rebuilds_model=True),  # the model build makes the step's code for the new period
    Spec("initial_positions", None, DOUBLES, "where the simulation starts and ~/reset returns to (rad or m)",
         constraints="empty: zero, clipped into the joint limits; else one value per joint in joint_names order, "
         "within the limits; or by joint name: initial_positions.<joint> (a map in a parameter file)",
         rebuilds_model=True, per_joint=True),
    Spec("hold_until_command", False, BOOL, "with simulate: hold the state at initial_positions (at rest; stamps "
         "advance, /joint_states published) until the first ~/effort_command since the start or ~/reset"),
    Spec("base", "fixed", STRING, "fixed (the root link is the world's) or free_floating (a floating base that "
         "nothing holds, moved by the joints)", constraints="fixed | free_floating", rebuilds_model=True),
)


def initial_positions(robot, values):
    """The simulation's start positions for ``robot`` (the joints the parameter leaves out: zero, clipped into their
    limits); :class:`ModelError` if the parameter does not fit it."""
    names = robot.joint_names
    limits = robot.position_limits[robot.nq - len(names):]  # a base's 7 first
    given = values["initial_positions"]
    if len(given) not in (0, len(names)):
        raise ModelError(f"initial_positions has {len(given)} values; robot '{robot.name}' has "
                         f"{len(names)} joints ({', '.join(names)})")
    rest = np.clip(0.0, limits[:, 0], limits[:, 1])
    q0 = joint_array("initial_positions", values, robot, rest)
    if q0 is None:
        return rest
    if not np.isfinite(q0).all():
        k = np.flatnonzero(~np.isfinite(q0))[0]
        raise ModelError(f"initial_positions: {names[k]} = {q0[k]} is not finite")
    outside = np.flatnonzero((q0 < limits[:, 0]) | (q0 > limits[:, 1]))
    if outside.size:
        k = outside[0]
        raise ModelError(f"initial_positions: {names[k]} = {q0[k]} is outside its limits "
                         f"[{limits[k, 0]}, {limits[k, 1]}]")
    return q0


def rest_state(model):
    """The simulation's start for ``model``: ``((q, v), command, motors)``, at ``initial_positions`` at rest under
    zero effort, the elastic joints' motors ``(theta, thetad)`` where their springs are relaxed, at rest (None
    without)."""
    state = model.full_state(initial_positions(model.robot, model.settings))
    motors = None
    if model.robot.elastic_joints:
        rest = model.robot.transmission.rest_offset[model.elastic]
        motors = (state[0][model.elastic] - rest, np.zeros(len(model.elastic)))
    return state, model.zeros.copy(), motors


def coordinates(model):
    """What the simulated state's coordinates depend on: a new model that changes it starts again at rest."""
    return model.joint_names, model.robot.elastic_joints, model.robot.has_floating_base


class Outputs:
    """What the node publishes for one model: the messages (refilled per output) and the publishers the model
    holds, ``~/base_odometry`` with a floating base and ``~/motor_states`` with elastic joints (taken from
    ``publishers``, the node's :class:`~.common.Publishers` of the two, shared by topic with the model in service).
    Made on the model worker's thread before the model's swap; let go (:meth:`release`) there after the next."""

    def __init__(self, model, publishers):
        names, robot = model.joint_names, model.robot
        self.accelerations = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint()])
        # the locked joints at their positions too: robot_state_publisher needs every joint for the links' poses
        self.simulated = JointState(name=names + list(model.locked))
        self.locked_tail = np.array(list(model.locked.values())), np.zeros(len(model.locked))
        self.motor_states = JointState(name=list(robot.elastic_joints))
        self.odometry = Odometry(child_frame_id=robot.root_link)
        self.odometry.header.frame_id = "world"
        self.publishers = publishers
        self.topics = (["~/base_odometry"] if robot.has_floating_base else [],
                       ["~/motor_states"] if robot.elastic_joints else [])
        self.odometry_publisher, self.motor_states_publisher = (
            (shared.acquire(topics) + [None])[0] for shared, topics in zip(publishers, self.topics))

    def release(self):
        """Let go of the publishers (the model is out of service)."""
        for shared, topics in zip(self.publishers, self.topics):
            shared.release(topics)


class Prepared(NamedTuple):
    """What the callbacks need for a model besides it, made on the model worker's thread before its swap: its
    :class:`Outputs`, the speeds of a runaway (:func:`runaway_speeds`), the URDF's velocity limits (inf where none,
    or 0, is given) and the simulation's start (:func:`rest_state`)."""
    outputs: Outputs
    speeds: np.ndarray
    velocity_limits: np.ndarray
    start: tuple


class ForwardDynamicsNode(DynamicsNode):
    """Effort commands in, accelerations out; with ``simulate`` a light simulator (see the module doc)."""

    def __init__(self, **kwargs):
        super().__init__("forward_dynamics", PARAMETERS, **kwargs)
        self.accelerations_publisher = self.create_output(JointTrajectory, "~/accelerations")
        self.create_subscription(JointState, "~/effort_command", self.on_effort_command, 10)
        self.measured = None  # (q, qd) last read from /joint_states (not simulating)
        self.state = None     # (q, qd) of the simulation
        self.command = None   # effort applied in the simulation
        self.simulating = False
        self.joint_states_subscription = self.joint_states_publisher = self.step_timer = None
        # a model's ~/base_odometry and ~/motor_states, shared by topic with the next (see Outputs)
        self.model_publishers = Publishers(self, Odometry), Publishers(self, JointState)
        self.outputs = None  # Outputs of the model in service
        self.motors = None    # (theta, thetad) of the elastic joints' motors in the simulation
        self.steps = 0
        self.clock = None  # SimulationClock while simulating
        self.real_time = (1.0, "")  # real-time factor and its reason, of the last diagnostics window
        self.step_cost_ms = 0.0  # the thread's computing time per step in the last window with steps
        self.window = None  # the clock's Tally at the start of the diagnostics window
        self.holding = False  # hold_until_command: at initial_positions until the first effort command
        self.runaway = ""  # why the simulation stopped (a runaway), until ~/reset
        self.fast = None  # (step, coordinate, velocity) where the state passed a URDF velocity limit, while beyond
        self.speeds = self.velocity_limits = None  # of the model in service: see Prepared
        self.start()
        self.configure_mode()

    # -- effort commands ---------------------------------------------------------------------------------------

    def on_effort_command(self, msg):
        model = self.model
        if model is None:
            self.reject_input("~/effort_command", "no robot model yet")
            return
        start = time.perf_counter()
        try:
            tau = model.gather(msg.name, msg.effort, "effort")
        except StateError as exc:
            self.reject_input("~/effort_command", exc)
            return
        if self.simulating:
            if self.runaway:
                self.reject_input("~/effort_command", "the simulation ran away and stopped: ~/reset restarts it")
                return
            self.command = tau
            q, qd = self.state
            if self.holding:
                self.holding = False
                self.get_logger().info("first ~/effort_command: the simulation runs")
        elif self.measured is None:
            self.reject_input("~/effort_command", "no /joint_states received yet")
            return
        else:
            q, qd = model.full_state(*self.measured)
        try:
            qdd = model.forward_dynamics(q, qd, tau, self.motors if self.simulating else None)
        except ValueError as exc:  # a joint that moves no mass: the accelerations are undefined
            self.reject_input("~/effort_command", exc)
            return
        out = self.outputs.accelerations
        out.header.stamp = msg.header.stamp
        point = out.points[0]
        point.positions, point.velocities = doubles(model.joints_part(q)), doubles(model.joints_part(qd))
        point.accelerations, point.effort = doubles(model.joints_part(qdd)), doubles(tau)
        self.accelerations_publisher.publish(out)
        self.check_limits(model, tau, "~/effort_command")
        self.stats.computed(time.perf_counter() - start)
        self.stats.accepted("~/effort_command")

    def on_joint_states(self, msg):
        if self.take_joint_states(msg):
            self.measured = (self.joint_states.q, self.joint_states.qd)
            self.stats.accepted("/joint_states")

    # -- simulation --------------------------------------------------------------------------------------------

    def step_simulation(self):
        """A tick: the sub-steps due (:class:`SimulationClock`), each checked for a runaway, then one message."""
        model, clock = self.model, self.clock
        if model is None or self.runaway:
            return
        start = time.monotonic_ns()
        due = clock.due(start)
        if due == 0:
            return
        if self.holding:
            clock.hold(due)
            self.publish_state(model)
            return
        dt = 1e-9 * clock.period_ns
        end = start + tick_budget_ns(clock.period_ns)
        q, qd, motors = *self.state, self.motors
        taken, cpu = 0, time.thread_time_ns()
        with np.errstate(all="ignore"):  # a diverging step's overflows are caught below, not printed
            while taken < due:
                try:
                    q_next, qd_next, motors_next = model.step(q, qd, self.command, dt, motors)
                except (ValueError, ArithmeticError) as exc:  # a state the step refuses (its error says why)
                    self.stop(model, taken, q, q, qd, dt, one_line(exc))
                    break
                speed = np.abs(qd_next)
                if not ((speed <= self.speeds).all() and np.isfinite(q_next).all()
                        and (motors_next is None or np.isfinite(motors_next).all())):
                    self.stop(model, taken, q, q_next, qd_next, dt)
                    break
                if (speed <= self.velocity_limits).all():
                    self.fast = None
                elif self.fast is None:  # where a runaway would have begun
                    k = int(np.argmax(speed / self.velocity_limits))
                    self.fast = (self.steps + taken + 1, k, qd_next[k])
                q, qd, motors = q_next, qd_next, motors_next
                taken += 1
                if time.monotonic_ns() >= end:
                    break
        clock.advanced(taken, due, time.thread_time_ns() - cpu, time.monotonic_ns() - start)
        self.state, self.motors = (q, qd), motors
        self.steps += taken
        if taken:
            self.publish_state(model)

    def stop(self, model, taken, q, q_bad, qd_bad, dt, failure=""):
        """Stop the simulation after a runaway from ``q`` (sub-step ``taken`` of this tick) and say why, once."""
        seconds = 1e-9 * (self.clock.simulated_ns + (taken + 1) * self.clock.period_ns)
        self.runaway = runaway_message(model, self.steps + taken + 1, seconds, q, q_bad, qd_bad, self.command, dt,
                                       self.speeds, failure, self.fast)
        self.get_logger().error(self.runaway)

    def publish_state(self, model):
        """The simulated state on ``/joint_states`` (and the motors', a floating base's), stamped with the
        simulated time."""
        q, qd = self.state
        outputs = self.outputs
        out = outputs.simulated
        out.header.stamp = self.clock.stamp()
        positions, zeros = outputs.locked_tail
        out.position = doubles(np.concatenate((model.joints_part(q), positions)))
        out.velocity = doubles(np.concatenate((model.joints_part(qd), zeros)))
        out.effort = doubles(np.concatenate((self.command, zeros)))
        self.joint_states_publisher.publish(out)
        if self.motors is not None:  # the motors' state of the same step, joint side
            motor_states = outputs.motor_states
            motor_states.header.stamp = out.header.stamp
            motor_states.position, motor_states.velocity = (doubles(x) for x in self.motors)
            motor_states.effort = doubles(self.command[model.elastic])
            outputs.motor_states_publisher.publish(motor_states)
        if model.robot.has_floating_base:
            self.publish_base(out.header.stamp, q[:7], qd[:6])

    def publish_base(self, stamp, pose, twist):
        """The simulated base on ``~/base_odometry``: its pose in ``world``, its twist in its own frame."""
        msg = self.outputs.odometry
        msg.header.stamp = stamp
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z, o.x, o.y, o.z, o.w = pose.tolist()
        set_vectors(msg.twist.twist.linear, msg.twist.twist.angular, twist.tolist())
        self.outputs.odometry_publisher.publish(msg)

    def configure_mode(self):
        """Subscribe ``/joint_states``, or (simulating) publish it from a timer at ``rate_hz``; a new rate makes a new
        timer and clock only, the publisher stays."""
        self.simulating = self.get_parameter("simulate").value
        if self.step_timer is not None:
            self.destroy_timer(self.step_timer)
            self.step_timer = None
        if (self.joint_states_publisher if self.simulating else self.joint_states_subscription) is None:  # a new mode
            for handle, destroy in ((self.joint_states_subscription, self.destroy_subscription),
                                    (self.joint_states_publisher, self.destroy_publisher)):
                if handle is not None:
                    destroy(handle)
            self.joint_states_subscription = self.joint_states_publisher = None
            if self.simulating:
                self.joint_states_publisher = self.create_output(JointState, "/joint_states")
            else:
                self.joint_states_subscription = self.create_subscription(
                    JointState, "/joint_states", self.on_joint_states, self.get_parameter("joint_states_depth").value)
        if self.simulating:
            rate = self.get_parameter("rate_hz").value
            self.clock = SimulationClock(period_ns(rate), self.get_clock().now().nanoseconds)
            self.window, self.real_time = self.clock.tally, (1.0, "")
            self.step_timer = self.create_timer(1.0 / rate, self.step_simulation)

    def initial_state(self, model, start=None):
        """At ``initial_positions``, at rest, zero effort (``start``: its :func:`rest_state`, if made already); held
        there until the first command with ``hold_until_command``; a stopped simulation goes on from now."""
        self.state, self.command, self.motors = rest_state(model) if start is None else start
        self.fast = None
        if self.runaway:
            self.runaway = ""
            self.clock.resume(time.monotonic_ns())
        self.holding = self.get_parameter("hold_until_command").value
        if self.holding and self.get_parameter("simulate").value:
            self.get_logger().info("holding the robot at initial_positions until the first ~/effort_command "
                                   "(hold_until_command)")

    # -- model, parameters, services ---------------------------------------------------------------------------

    @staticmethod
    def check_model(model, values):
        """The start positions must fit, the forward dynamics be defined (a massless joint makes it singular) and,
        simulating, a step from them resolve the motion; the call also compiles or loads the kernels before the first
        message."""
        q0, v0 = model.full_state(initial_positions(model.robot, values))
        elastic = model.robot.elastic_joints
        if elastic and model.robot.has_floating_base:
            raise ModelError("joint_stiffness: the simulation of elastic joints takes a fixed base")
        tau, dt = model.zeros, 1e-9 * period_ns(values["rate_hz"])
        motors = (q0[model.elastic], v0[model.elastic]) if elastic else None
        for _ in range(WARM + 1):  # the calls' written code (made after WARM calls) is made here, not in a tick
            model.forward_dynamics(q0, v0, tau)
            if elastic:  # the motor-link model needs the motors' inertia
                model.forward_dynamics(q0, v0, tau, motors)
            if values["simulate"]:  # (a node that does not simulate serves a model whose step diverges there)
                model.step(q0, v0, tau, dt, motors)

    @staticmethod
    def check_names(robot, values):
        initial_positions(robot, values)

    def check_parameter(self, name, value):
        if name == "base" and value not in BASE_MODES:
            raise ValueError(f"base must be one of {', '.join(BASE_MODES)} for the forward node, got '{value}'")

    @staticmethod
    def floating_base(values):
        return values["base"] == "free_floating"

    def prepare(self, model):
        limits = model.robot.velocity_limits
        return Prepared(Outputs(model, self.model_publishers), runaway_speeds(model.robot),
                        np.where(limits > 0, limits, np.inf), rest_state(model))

    def model_changed(self, model, previous, prepared):
        self.speeds, self.velocity_limits = prepared.speeds, prepared.velocity_limits
        old, self.outputs = self.outputs, prepared.outputs
        if old is not None:
            self.beside(old.release)
        if previous is None or previous.joint_names != model.joint_names:
            self.measured = None
        if previous is None or coordinates(previous) != coordinates(model):  # joints, motors or a base changed
            self.initial_state(model, prepared.start)

    def parameters_changed(self, names):
        if "hold_until_command" in names and not self.get_parameter("hold_until_command").value:
            self.holding = False  # released now; set, it holds from the next start or ~/reset
        if names & {"simulate", "rate_hz"}:
            if "simulate" in names and self.model is not None:
                self.initial_state(self.model)
            self.configure_mode()

    def reset(self):
        if self.model is None:
            return "statistics reset (no model yet)"
        restarted = " (restarted after it ran away)" if self.runaway else ""
        self.initial_state(self.model)
        self.steps = 0
        held = ", held until the first ~/effort_command" if self.holding else ""
        return f"simulation back at the initial state at rest, zero effort{held}{restarted}; statistics reset"

    def diagnostic_values(self):
        if not self.simulating:
            return {"mode": "reading /joint_states"}
        mode = ("stopped: the simulation ran away (~/reset restarts it)" if self.runaway else
                "simulating, holding initial_positions until the first ~/effort_command" if self.holding else
                "simulating")
        factor, reason = self.real_time
        return {"mode": mode, "simulation steps": self.steps, "simulated time [s]": 1e-9 * self.clock.simulated_ns,
                "real-time factor": factor, "real-time factor below 0.95 because": reason or "none",
                "step cost [ms]": self.step_cost_ms}

    def diagnostic_problems(self):
        if not self.simulating:
            return []
        now = self.clock.since(self.window, time.monotonic_ns())
        self.real_time = real_time(self.window, now, self.clock.period_ns)
        if now.steps > self.window.steps:
            self.step_cost_ms = 1e-6 * (now.step_cpu_ns - self.window.step_cpu_ns) / (now.steps - self.window.steps)
        self.window = now
        factor, reason = self.real_time
        return [f"the simulation ran at {factor:.2f} of real time: {reason}"] if reason and not self.runaway else []

    def diagnostic_errors(self):
        return [self.runaway] if self.runaway and self.simulating else []


def main(args=None):
    return spin(ForwardDynamicsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
