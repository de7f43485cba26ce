"""The ``forward_dynamics`` node: joint efforts in, joint accelerations out; optionally a light simulator.

``~/effort_command`` (JointState: name + effort, every joint of the robot) gives ``~/accelerations``: a
JointTrajectory with one point (positions, velocities, accelerations, effort) and the command's stamp, computed at
the state last read from ``/joint_states``. With ``simulate: true`` the node instead integrates its own state under
gravity and the last effort command (held; zero until the first), publishes it on ``/joint_states`` every
``1 / rate_hz`` s (position, velocity, and the applied effort; the ``locked_joints`` at their positions, at rest),
and computes ``~/accelerations`` at that state. The simulation keeps time (:class:`SimulationClock`): each period it
simulates the whole periods of ``1 / rate_hz`` the wall clock has passed since the last, and stamps its messages
with the simulated time; diagnostics report the real-time factor and WARN when the machine cannot keep up.
``~/reset`` returns the simulation to ``initial_positions`` at rest with zero effort.

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

import numpy as np
from builtin_interfaces.msg import Time
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..errors import ModelError, StateError
from ..algorithms.driver import WARM
from .common import DynamicsNode
from .messages import doubles
from .parameters import BOOL, DOUBLE, DOUBLES, STRING, Spec, joint_array
from .runner import spin

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
    Spec("base", "fixed", STRING, "fixed (the root link is the world's) or free_floating (a floating base that "
         "nothing holds, moved by the joints)", constraints="fixed | free_floating", rebuilds_model=True),
)


#: Longest wall time (ns) one timer tick catches up with steps (a tick that came late: the scheduler of a loaded
#: machine held the node up); time beyond is dropped (the real-time factor falls below 1).
MAX_CATCH_UP_NS = 100_000_000
#: Most computing time (ns) one tick spends catching up, rather than the executor held longer.
MAX_TICK_COMPUTE_NS = 5_000_000


def catch_up_steps(period_ns, step_cost_ns):
    """Most steps one tick takes: :data:`MAX_CATCH_UP_NS` of periods within :data:`MAX_TICK_COMPUTE_NS` of
    computing; one if a step costs over a quarter of a period (a machine that slow has no time to catch up beside the
    nodes that share it, a controller closing the loop: it still publishes every period, and says it runs slower than
    real time)."""
    if 4 * step_cost_ns >= period_ns:
        return 1
    return max(1, min(MAX_CATCH_UP_NS // period_ns, int(MAX_TICK_COMPUTE_NS / max(step_cost_ns, 1.0))))
REAL_TIME_TOLERANCE = 0.95  # a real-time factor below this makes the diagnostics WARN


def period_ns(rate_hz):
    """The simulation's step (ns) at ``rate_hz``."""
    return round(1e9 / rate_hz)


class SimulationClock:
    """The simulated time of the forward node: it follows the wall clock (``time.monotonic_ns``), in integer
    nanoseconds since the start, and gives the stamps (``start_stamp_ns``, the ROS time of the start, plus the
    simulated time). Each timer tick simulates the whole periods of ``period_ns`` the wall clock has passed since the
    last (the rest of a period waits for the next tick: every step is exactly one period, so the library's written
    code of the step, which takes ``dt`` as a constant, is made once), at most :func:`catch_up_steps`: periods beyond
    (a machine too slow for the rate, an executor held up) are dropped."""

    def __init__(self, period_ns, start_stamp_ns, wall_ns):
        self.period_ns, self.start_stamp_ns = period_ns, start_stamp_ns
        self.simulated_ns = 0
        self.dropped_ns = 0  # wall time the simulation did not follow
        self.wall_start = wall_ns
        self.window = (wall_ns, 0)  # (wall, simulated) at the start of the diagnostics window
        self.last_factor = 1.0

    def advance(self, wall_ns, substeps):
        """The number of periods to simulate now, at most ``substeps``, already added to ``simulated_ns``."""
        behind = (wall_ns - self.wall_start - self.dropped_ns - self.simulated_ns) // self.period_ns
        periods = min(max(behind, 0), substeps)
        self.dropped_ns += (behind - periods) * self.period_ns if behind > periods else 0
        self.simulated_ns += periods * self.period_ns
        return periods

    def stamp(self):
        sec, nanosec = divmod(self.start_stamp_ns + self.simulated_ns, 1_000_000_000)
        return Time(sec=sec, nanosec=nanosec)

    def window_factor(self):
        """Simulated over wall time since the last call (the diagnostics window); kept in ``last_factor``."""
        wall, simulated = time.monotonic_ns(), self.simulated_ns
        if wall > self.window[0]:
            self.last_factor = (simulated - self.window[1]) / (wall - self.window[0])
        self.window = (wall, simulated)
        return self.last_factor


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
        self.odometry_publisher = self.motor_states_publisher = None  # a floating base's, elastic joints'
        self.motors = None    # (theta, thetad) of the elastic joints' motors in the simulation
        self.steps = 0
        self.clock = None  # SimulationClock while simulating
        self.step_cost_ns = 0.0  # the computing time of one sub-step, averaged (the thread's CPU time: a loaded
        # machine's scheduler taking the core away mid-step is no cost of the step)
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
            self.command = tau
            q, qd = self.state
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
        out = self.accelerations
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
        model = self.model
        if model is None:
            return
        substeps = self.clock.advance(time.monotonic_ns(), catch_up_steps(self.clock.period_ns, self.step_cost_ns))
        if substeps == 0:
            return
        dt = 1e-9 * self.clock.period_ns
        q, qd = self.state
        started = time.thread_time_ns()
        try:
            for _ in range(substeps):
                q, qd, self.motors = model.step(q, qd, self.command, dt, self.motors)
        except ValueError as exc:
            self.warn_throttled(f"simulation step failed: {exc}; state held")
            return
        self.step_cost_ns += 0.2 * ((time.thread_time_ns() - started) / substeps - self.step_cost_ns)
        self.state = (q, qd)
        self.steps += substeps
        out = self.simulated
        out.header.stamp = self.clock.stamp()
        positions, zeros = self.locked_tail
        out.position = doubles(np.concatenate((model.joints_part(q), positions)))
        out.velocity = doubles(np.concatenate((model.joints_part(qd), zeros)))
        out.effort = doubles(np.concatenate((self.command, zeros)))
        self.joint_states_publisher.publish(out)
        if self.motors is not None:  # the motors' state of the same step, joint side
            self.motor_states.header.stamp = out.header.stamp
            self.motor_states.position, self.motor_states.velocity = (doubles(x) for x in self.motors)
            self.motor_states.effort = doubles(self.command[model.elastic])
            self.motor_states_publisher.publish(self.motor_states)
        if model.robot.has_floating_base:
            self.publish_base(out.header.stamp, q[:7], qd[:6])

    def publish_base(self, stamp, pose, twist):
        """The simulated base on ``~/base_odometry``: its pose in ``world``, its twist in its own frame."""
        msg = self.odometry
        msg.header.stamp = stamp
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        p.x, p.y, p.z, o.x, o.y, o.z, o.w = pose.tolist()
        v, w = msg.twist.twist.linear, msg.twist.twist.angular
        v.x, v.y, v.z, w.x, w.y, w.z = twist.tolist()
        self.odometry_publisher.publish(msg)

    def configure_mode(self):
        """Subscribe ``/joint_states``, or (simulating) publish it from a timer at ``rate_hz``."""
        for handle, destroy in ((self.joint_states_subscription, self.destroy_subscription),
                                (self.joint_states_publisher, self.destroy_publisher),
                                (self.step_timer, self.destroy_timer)):
            if handle is not None:
                destroy(handle)
        self.joint_states_subscription = self.joint_states_publisher = self.step_timer = None
        self.simulating = self.get_parameter("simulate").value
        if self.simulating:
            rate = self.get_parameter("rate_hz").value
            self.clock = SimulationClock(period_ns(rate), self.get_clock().now().nanoseconds, time.monotonic_ns())
            self.joint_states_publisher = self.create_output(JointState, "/joint_states")
            self.step_timer = self.create_timer(1.0 / rate, self.step_simulation)
        else:
            self.joint_states_subscription = self.create_subscription(
                JointState, "/joint_states", self.on_joint_states, self.get_parameter("joint_states_depth").value)

    def initial_state(self, model):
        self.state = model.full_state(initial_positions(model.robot, model.settings))
        self.command = model.zeros.copy()
        self.motors = None
        if model.robot.elastic_joints:  # motors where the springs are relaxed, at rest
            rest = model.robot.transmission.rest_offset[model.elastic]
            self.motors = (self.state[0][model.elastic] - rest, np.zeros(len(model.elastic)))

    # -- model, parameters, services ---------------------------------------------------------------------------

    @staticmethod
    def check_model(model, values):
        """The start positions must fit, and the forward dynamics be defined (a massless joint makes it singular);
        the call also compiles or loads the kernels before the first message."""
        q0, v0 = model.full_state(initial_positions(model.robot, values))
        elastic = model.robot.elastic_joints
        if elastic and model.robot.has_floating_base:
            raise ModelError("joint_stiffness: the simulation of elastic joints takes a fixed base")
        tau = model.zeros
        model.forward_dynamics(q0, v0, tau)
        motors = (q0[model.elastic], v0[model.elastic]) if elastic else None
        if elastic:  # the motor-link model needs the motors' inertia
            model.forward_dynamics(q0, v0, tau, motors)
        dt = 1e-9 * period_ns(values["rate_hz"])
        for _ in range(WARM + 1):  # the step's written code (made after WARM calls) is made here, not in a tick
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

    def model_changed(self, model, previous):
        names = model.joint_names
        self.accelerations = JointTrajectory(joint_names=names, points=[JointTrajectoryPoint()])
        # the locked joints at their positions too: robot_state_publisher needs every joint for the links' poses
        self.simulated = JointState(name=names + list(model.locked))
        self.locked_tail = np.array(list(model.locked.values())), np.zeros(len(model.locked))
        self.motor_states = JointState(name=list(model.robot.elastic_joints))
        self.odometry_publisher = self.sync_output(self.odometry_publisher, model.robot.has_floating_base, Odometry,
                                                   "~/base_odometry")
        self.motor_states_publisher = self.sync_output(self.motor_states_publisher, bool(model.robot.elastic_joints),
                                                       JointState, "~/motor_states")
        self.odometry = Odometry(child_frame_id=model.robot.root_link)
        self.odometry.header.frame_id = "world"
        if previous is None or previous.joint_names != names:
            self.measured = None
            self.initial_state(model)
        elif previous.robot.elastic_joints != model.robot.elastic_joints:  # motors added or taken away
            self.initial_state(model)

    def sync_output(self, publisher, wanted, msg_type, topic):
        """The publisher of ``topic`` if the model ``wanted`` it, else none (only the topics the robot uses)."""
        if wanted and publisher is None:
            return self.create_output(msg_type, topic)
        if not wanted and publisher is not None:
            self.destroy_publisher(publisher)
            return None
        return publisher

    def parameters_changed(self, names):
        if names & {"simulate", "rate_hz"}:
            if "simulate" in names and self.model is not None:
                self.initial_state(self.model)
            self.configure_mode()

    def reset(self):
        if self.model is None:
            return "statistics reset (no model yet)"
        self.initial_state(self.model)
        self.steps = 0
        return "simulation back at the initial state at rest, zero effort; statistics reset"

    def diagnostic_values(self):
        values = {"mode": "simulating" if self.simulating else "reading /joint_states"}
        if self.simulating:
            values |= {"simulation steps": self.steps, "simulated time [s]": 1e-9 * self.clock.simulated_ns,
                       "real-time factor": self.clock.last_factor}
        return values

    def diagnostic_problems(self):
        factor = self.clock.window_factor() if self.simulating else 1.0
        if factor < REAL_TIME_TOLERANCE:
            return [f"the simulation ran at {factor:.2f} of real time (a step costs more than 1/rate_hz on this "
                    "machine): lower rate_hz"]
        return []


def main(args=None):
    return spin(ForwardDynamicsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
