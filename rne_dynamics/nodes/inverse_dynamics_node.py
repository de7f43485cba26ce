"""The ``inverse_dynamics`` node: joint states in; torques, gravity feedforward, joint wrenches and loads out.

Each output of a ``/joint_states`` message carries its stamp. ``~/torques`` goes out first (what a controller waits
for), then ``~/gravity_torques``, ``~/gravity_command``, ``~/joint_wrenches/<joint>`` and, at most at
``marker_rate_hz``, ``~/load_markers``: these four only while somebody subscribes to them (:mod:`.outputs`).
``~/trajectory`` comes back on ``~/trajectory_with_efforts`` with the inverse dynamics torque of every point in
``effort`` (:mod:`.trajectories`). ``~/plan`` and ``~/retime`` requests are answered on ``~/planned_trajectory`` and
``~/retimed_trajectory`` from worker threads (:mod:`.planning`, :mod:`.retiming`). Every request of the three is
answered on ``~/request_status`` (:mod:`.trajectory_requests`), refused or not.

A closed-chain robot (parameter ``loops_file``, the loop file of :mod:`rne_dynamics.model.loops`) needs only its
actuated joints in ``/joint_states``: ``~/torques`` then carries every tree joint with its solved position and
velocity and the actuated torques (``closed_loop_inverse_dynamics``; passive joints 0), ``~/joint_wrenches/<joint>``
the whole mechanism's joint wrenches and ``~/loop_wrenches/<loop>`` each cut joint's wrench (on ``link_b`` by
``link_a``, cut frame on ``link_b``; ``frame_id`` ``link_b``). The passive positions of one message start the
Newton solve of the next (the assembly mode is kept).

Parameter ``base`` (``fixed``, ``odometry``, ``free_floating``; :mod:`~rne_dynamics.nodes.base_state`) loads the
robot with a floating base whose state comes from ``~/base_odometry`` and ``~/base_imu``, or is left free; then the
node also publishes ``~/base_wrench`` (``odometry``), ``~/base_acceleration`` (``free_floating``) and
``~/center_of_mass``, and refuses ``~/trajectory`` (its points carry no base motion). Parameter
``external_wrench_topics`` (:mod:`~rne_dynamics.nodes.wrench_inputs`) adds measured external wrenches (force/torque
sensors) to the joint-state outputs. The joint accelerations are zero or the filtered derivative of the measured
velocity (:mod:`.accelerations`); parameter ``observer_gain`` estimates external joint torques
(:mod:`.external_torques`), ``payload_estimation_link`` the payload (:mod:`.payload_estimates`).

This module wires them: each joint state goes through the modules above in the order of :meth:`answer_joint_states`.
"""
import time
from typing import NamedTuple

from sensor_msgs.msg import JointState

from . import accelerations, base_state, external_torques, outputs, payload_estimates, retiming, wrench_inputs
from .accelerations import JointAccelerations
from .base_state import BaseTopics
from .common import DynamicsNode
from .external_torques import ExternalTorques
from .messages import stamp_seconds
from .parameters import STRING, Spec
from .payload_estimates import PayloadEstimates
from .planning import PlanRequests
from .retiming import RetimeRequests
from .runner import spin
from .trajectories import TrajectoryEfforts
from .trajectory_requests import SAMPLE_PERIOD, RequestStatus
from .wrench_inputs import SensorTopics

LOOPS_FILE = Spec("loops_file", "", STRING, "loop file (YAML: actuated joints and loop closures) of a closed-chain "
                  "robot; empty: the URDF is an open tree", rebuilds_model=True)
PARAMETERS = ((outputs.COMMAND_JOINTS,) + accelerations.PARAMETERS + outputs.PUBLISHING + (SAMPLE_PERIOD, LOOPS_FILE)
              + base_state.PARAMETERS + wrench_inputs.PARAMETERS + external_torques.PARAMETERS + retiming.PARAMETERS
              + payload_estimates.PARAMETERS)


class Prepared(NamedTuple):
    """What a model's joint-state answers need besides it, made on the model worker's thread before the swap: the
    momentum observer, the payload estimator and the output messages with their publishers."""
    observer: object
    estimator: object
    messages: object


class InverseDynamicsNode(DynamicsNode):
    """Subscribes ``/joint_states`` and the requests; publishes the inverse dynamics of each (see module doc)."""

    def __init__(self, **kwargs):
        super().__init__("inverse_dynamics", PARAMETERS, **kwargs)
        depth = self.get_parameter("joint_states_depth").value
        self.outputs = outputs.JointStateOutputs(self, depth)
        self.request_status = RequestStatus(self)
        self.trajectories = TrajectoryEfforts(self)
        self.base = BaseTopics(self)
        self.sensors = SensorTopics(self)
        self.accelerations = JointAccelerations(self)
        self.external = ExternalTorques(self)
        self.payloads = PayloadEstimates(self)
        self.joint_states_subscription = self.create_subscription(JointState, "/joint_states", self.on_joint_states,
                                                                  depth)
        self.plans = PlanRequests(self)
        self.retimes = RetimeRequests(self)
        self.start()

    def destroy_node(self):
        self.plans.close()
        self.retimes.close()
        super().destroy_node()

    def on_joint_states(self, msg):
        """Answer a joint state, then those queued behind it (a backlog: the node was held), each without the
        executor's pass over its wait set, which costs as much as the answer: a backlog is caught up twice as fast.
        At most a queue's depth at a time: the other callbacks (a swap, services, timers) come between."""
        self.answer_joint_states(msg)
        subscription = self.joint_states_subscription
        with subscription.handle:
            for _ in range(subscription.qos_profile.depth):
                taken = subscription.handle.take_message(JointState, False)
                if taken is None:
                    return
                self.answer_joint_states(taken[0])

    def answer_joint_states(self, msg):
        start = time.perf_counter()
        if not self.take_joint_states(msg):
            return
        model, stamp, base = self.model, msg.header.stamp, self.base.state
        q, qd = self.joint_states.q, self.joint_states.qd
        try:
            motion = base.motion(model, stamp_seconds(stamp), q) if base is not None else None
            qdd, unused = self.accelerations.of(model, stamp, qd)
            result = model.inverse_dynamics(q, qd, qdd, motion, self.sensors.wrenches(model, q))
        except ValueError as exc:  # the torques overflow; a loop that cannot close; a stale or missing base state
            self.reject_input("/joint_states", exc)
            return
        if unused:
            self.warn_throttled(unused)
        self.outputs.publish_torques(stamp, result)
        if motion is not None:
            self.base.publish(stamp, result, model.robot.root_link)
        problem = self.external.update(model, msg, q, qd) if self.external.observer is not None else None
        if problem:
            self.warn_throttled(problem)
        problem = self.payloads.update(model, msg, q, qd)
        if problem:
            self.warn_throttled(problem)
        self.outputs.publish_listened(model, stamp, q, result, base.pose() if base is not None else None)
        self.check_limits(model, result.torques, "/joint_states")
        self.stats.computed(time.perf_counter() - start)
        self.stats.accepted("/joint_states")

    # -- model, parameters, services ---------------------------------------------------------------------------

    def check_parameter(self, name, value):
        outputs.check_parameter(name, value)
        accelerations.check_parameter(name, value)
        if name == "external_wrench_topics":
            wrench_inputs.parse(value)
        base_state.check_parameter(name, value)
        external_torques.check_parameter(name, value)

    @staticmethod
    def floating_base(values):
        return values["base"] != "fixed"

    @staticmethod
    def check_names(robot, values):
        outputs.check_names(robot, values)
        wrench_inputs.check_links(robot, values["external_wrench_topics"])
        external_torques.check_names(robot, values)
        payload_estimates.check_names(robot, values)

    @staticmethod
    def check_model(model, values):
        model.warm_up()

    def prepare(self, model):
        return Prepared(self.external.prepare(model), self.payloads.prepare(model), self.outputs.prepare(model))

    def model_changed(self, model, previous, prepared):
        self.outputs.configure(model, previous, prepared.messages)
        if previous is None or previous.joint_names != model.joint_names:
            self.accelerations.configure(model)
        self.external.configure(model, prepared.observer)
        self.payloads.configure(model, prepared.estimator)

    def parameters_changed(self, names):
        self.outputs.parameters_changed(names, self.model)
        if names & {"acceleration_source", "acceleration_cutoff_hz"}:
            self.accelerations.configure(self.model)
        if names & {p.name for p in base_state.PARAMETERS}:
            self.base.configure()
        if names & {p.name for p in wrench_inputs.PARAMETERS}:
            self.sensors.configure()

    def reset(self):
        self.accelerations.configure(self.model)
        if self.model is not None:
            self.model.loop_guess = None
        self.outputs.reset()
        self.trajectories.reset()
        self.external.reset()
        if self.model is not None:
            self.payloads.configure(self.model, self.payloads.prepare(self.model))
        return "statistics, the acceleration filter, the observer and the payload estimate reset"

    def diagnostic_values(self):
        return ({"acceleration source": self.get_parameter("acceleration_source").value,
                 "base": self.get_parameter("base").value, "silent wrench sensors": self.sensors.silent()}
                | self.trajectories.diagnostic_values() | self.plans.diagnostic_values()
                | self.retimes.diagnostic_values() | self.external.diagnostic_values()
                | self.payloads.diagnostic_values())

    def diagnostic_problems(self):
        return self.external.diagnostic_problems() + self.payloads.diagnostic_problems()


def main(args=None):
    return spin(InverseDynamicsNode, args)


if __name__ == "__main__":
    raise SystemExit(main())
