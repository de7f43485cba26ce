"""What both dynamics nodes share: the model and its parameters, joint-name matching, services and diagnostics.

The callbacks read one :class:`DynamicsModel` (the robot with payload and drive parameters applied, gravity, name
maps; never changed once built), replaced by a single assignment. A new description (topic, reload) or a parameter
set that changes the model is read and built in the builder process (:mod:`.builder`: another interpreter, so the
joint-state callbacks never wait for it), driven by one worker thread in the order the requests came, which then
loads the kernels the new model needs, makes its calls once and makes what the callbacks need beside it (the
subclass's :meth:`DynamicsNode.prepare`: messages, publishers, estimators) while the data path goes on; the new
model is swapped in on the executor's thread between two messages, by reference. A parameter set is answered at once
after the checks that need no new model (types, sizes, signs, link and joint names against the model in service);
a build that fails afterwards is refused with the reason (logged and in diagnostics), the parameters it set go back
to the last good values, and the last good model stays in service.
"""
import gc
import importlib
import math
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.callback_groups import MutuallyExclusiveCallbackGroup
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Header, String
from std_srvs.srv import Trigger

from ..errors import StateError, one_line
from .builder import BuilderProcess
from .diagnostics import Statistics
from .joint_states import MergedJointStates
from .model import DynamicsModel, read_description
from .parameters import COMMON_PARAMETERS, DOUBLE, STRUCTURE, Spec, check_common, check_names, xacro_options


#: QoS of ``/robot_description`` as robot_state_publisher offers it: the last message kept for late joiners.
DESCRIPTION_QOS = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
WARNING_PERIOD = 2.0  # s between two logs of the same input problem


def importable_name(cls):
    """``(module, qualified name)`` of ``cls`` that another process can import: a node started with ``python -m``
    runs as ``__main__``, which the builder process is not. None for a class of a script run by its path."""
    module = cls.__module__
    if module == "__main__":
        spec = sys.modules["__main__"].__spec__
        if spec is None:
            return None
        module = spec.name
    return module, cls.__qualname__


def build(node_class, specs, values, changes, text, source, good, machine_code=False):
    """``(description, model)`` of a model request (in the builder process; picklable in and out): the description
    from ``text`` (from ``source``), from a new ``robot_description`` parameter in the parameter set ``changes`` (or
    the parameter refused so far: the set may be what it needed, ``package_paths``), or the last good one (``good``:
    its text and source; read again: the robot may change between fixed and floating base; a xacro with the set's
    ``xacro_args`` and ``package_paths``); the model built from it with the parameter ``values`` and checked by
    ``node_class``'s static hooks.
    ``(None, None)``: no robot yet. A bad description or value raises :class:`ModelError` naming it.
    ``node_class`` may be given as its :func:`importable_name`.

    ``machine_code``: also run the model's calls (``node_class.check_model``) and wait for their written code's
    machine code (:meth:`~.model.DynamicsModel.machine_code`), which the node's process then loads from the disk
    cache instead of tracing the robot's code with the interpreter its callbacks need."""
    if isinstance(node_class, tuple):
        node_class = getattr(importlib.import_module(node_class[0]), node_class[1])
    floating = node_class.floating_base(values)
    if text is None and (changes.get("robot_description") or good is None and values["robot_description"]):
        text, source = values["robot_description"], "parameter robot_description"  # new, or refused until now
    if text is None and good is None:
        return None, None
    description = read_description(*((text, source) if text is not None else good), floating, **xacro_options(values))
    robot = DynamicsModel.structure(description.robot, values)
    check_names(robot, values, specs)
    node_class.check_names(robot, values)
    model = DynamicsModel.build(robot, values)
    if machine_code:
        node_class.check_model(model.prepare(), values)
        model.machine_code()
    return description, model


class Publishers:
    """The publishers of one message type on ``node``, by topic, shared by the models that use them: a model's are
    made (:meth:`acquire`) off the executor before its swap and let go (:meth:`release`, also off the executor) when
    another replaces it; the last release destroys one."""

    def __init__(self, node, msg_type):
        self.node, self.msg_type = node, msg_type
        self.users = {}  # topic -> [publisher, number of models holding it]
        self.lock = threading.Lock()

    def acquire(self, topics):
        """The publishers of ``topics`` (a list), made where missing."""
        with self.lock:
            for topic in topics:
                entry = self.users.get(topic)
                if entry is None:
                    entry = self.users[topic] = [self.node.create_output(self.msg_type, topic), 0]
                entry[1] += 1
            return [self.users[topic][0] for topic in topics]

    def release(self, topics):
        with self.lock:
            for topic in topics:
                entry = self.users[topic]
                entry[1] -= 1
                if entry[1] == 0:
                    self.node.destroy_publisher(self.users.pop(topic)[0])


class DynamicsNode(Node):
    """Base of the dynamics nodes: parameters, the robot model, ``/robot_description``, services, diagnostics.

    A subclass creates its publishers and subscriptions, then calls :meth:`start`. It may override
    :meth:`check_parameter`, :meth:`check_names` and :meth:`check_model` (raise ValueError with the reason),
    :meth:`prepare`, :meth:`model_changed`, :meth:`parameters_changed`, :meth:`reset` and :meth:`diagnostic_values`.
    """

    def __init__(self, name, parameters, **kwargs):
        super().__init__(name, **kwargs)
        self.model = None
        self.description = None
        self.joint_states = None  # MergedJointStates of the model's input joints
        self.refusal = ""  # why the last description or model was refused; cleared by the next good one
        self.stats = Statistics()
        self._specs = {spec.name: spec for spec in COMMON_PARAMETERS + tuple(parameters)}
        self._warned = {}
        self._ready = False
        self._requests = 0  # number of the last accepted parameter set
        self._setter = {}  # parameter name -> number of the last accepted set that gave it its value
        self._reverting = False  # putting back the values of a set whose model was refused
        self._descriptions_queued = 0  # descriptions on the worker: the model in service may be about to change
        self.builds_pending = 0  # models requested and not yet swapped in or refused
        self._topic_text = None  # the last robot_description message: used once the parameter is emptied
        self._source_logged = None  # the description source last explained in the log
        self.add_on_set_parameters_callback(self._validate_parameters)
        self.add_post_set_parameters_callback(self._apply_parameters)
        for spec in self._specs.values():
            declared = self.declare_parameter(spec.name, Parameter.Type(spec.type) if spec.default is None
                                              else spec.default, spec.descriptor())
            if declared.value is None:  # an empty array (rclpy cannot infer its type from [])
                self.set_parameters([Parameter(spec.name, Parameter.Type(spec.type), [])])
        self.declare_values_by_joint()
        self._ready = True
        # Models are built on this worker, one request after the other (the data path goes on meanwhile), and
        # swapped in on the executor's thread, between two messages. The worker's own state: the parameter values
        # of the last good model (with the sets accepted since, in order) and its description.
        self._good_values, self._good_description = self.parameter_values(), None
        self._builder = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"{name}_model")
        self._process = BuilderProcess()  # started at the first request
        self._outcomes, self._outcomes_lock = [], threading.Lock()
        self._install_guard = self.create_guard_condition(self._take_outcomes)
        self.diagnostics_publisher = self.create_output(DiagnosticArray, "/diagnostics")
        self.diagnostics_timer = self.create_timer(1.0 / self.get_parameter("diagnostics_rate_hz").value,
                                                   self.publish_diagnostics)
        # relative, as ros2_control's controller manager: /robot_description without a namespace, and a namespace
        # keeps one robot's description from another's
        self.create_subscription(String, "robot_description", self._on_description_message, DESCRIPTION_QOS)
        # a group of its own: the default group would hold the swap's guard condition while the reload waits for it
        self.create_service(Trigger, "~/reload_robot_description", self._on_reload,
                            callback_group=MutuallyExclusiveCallbackGroup())
        self.create_service(Trigger, "~/reset", self._on_reset)

    def declare_values_by_joint(self):
        """Declare the values by joint name (``armature.elbow_joint``) that the start-up overrides give: a map in a
        parameter file, ``armature: {elbow_joint: 0.1}``, arrives flattened so (rclpy keeps the overrides in
        ``_parameter_overrides``; no public accessor)."""
        for name in sorted(self._parameter_overrides):
            field, _, joint = name.partition(".")
            if joint and field in self._specs and self._specs[field].per_joint and name not in self._specs:
                spec = self._specs[field]
                self._specs[name] = Spec(name, 0.0, DOUBLE, f"{field} of joint '{joint}' (wins over {field}'s array "
                                         "and drive_file)", rebuilds_model=spec.rebuilds_model)
                self.declare_parameter(name, 0.0, self._specs[name].descriptor())

    def create_output(self, msg_type, topic, depth=10):
        """A publisher without rclpy's default QoS-event handlers: each is a waitable that the executor visits on
        every wake-up, which at 1 kHz and a dozen outputs costs more than the dynamics."""
        return self.create_publisher(msg_type, topic, depth,
                                     event_callbacks=PublisherEventCallbacks(use_default_callbacks=False))

    def start(self):
        """Load the ``robot_description`` parameter if it is set (else wait for the topic); before the first message,
        so on the executor's thread."""
        text = self.get_parameter("robot_description").value
        if not text:
            self.get_logger().info("waiting for a robot description on "
                                   f"{self.resolve_topic_name('robot_description')}")
            return
        source = "parameter robot_description"
        try:
            description, model = build(type(self), self._specs, self._good_values, {}, text, source, None)
            self.check_model(model.prepare(), self._good_values)
            prepared = self.prepare(model)
        except ValueError as exc:
            self.refuse(f"the robot description from {source}", exc)
            return
        self._good_description = description
        self.install(description, model, prepared)

    # -- model -------------------------------------------------------------------------------------------------

    def parameter_values(self):
        return {name: self.get_parameter(name).value for name in self._specs}

    def beside(self, function, *arguments):
        """Run ``function(*arguments)`` on the model worker's thread, after the builds queued there: work of a swap
        that the next joint state need not wait for (the old model's publishers destroyed)."""
        self._builder.submit(function, *arguments)

    def beside_then(self, make, install):
        """``install(make())``: ``make()`` on the model worker's thread, after the builds queued there, and
        ``install`` with its result on the executor's, between two messages, as a model's swap (a parameter's
        publishers made off the executor)."""
        self._builder.submit(lambda: self._hand_over(partial(install, make())))

    def _hand_over(self, outcome):
        """Have the executor's thread run ``outcome()`` (from the worker's)."""
        with self._outcomes_lock:
            self._outcomes.append(outcome)
        self._install_guard.trigger()

    def build_elsewhere(self, *arguments):
        """:func:`build` in the builder process (:mod:`.builder`: an interpreter of its own, so the parsing and
        building never hold the one the joint-state callbacks run in)."""
        name = importable_name(type(self))
        if name is None:  # a class of a script run by path: no other process can import it
            return build(type(self), self._specs, *arguments)
        return self._process.call(build, name, self._specs, *arguments, True)

    def request_model(self, changes=None, text=None, source=None, reply=None):
        """Build a model on the worker, after the requests before it: from the description ``text`` (from
        ``source``), or from the last good description with the parameter set ``changes`` (number
        ``self._requests``) applied to the last good values; then swap it in, or refuse it, on the executor's
        thread. ``reply`` (an rclpy Future) gets ``(success, message)``."""
        changes, number = changes or {}, self._requests
        self.builds_pending += 1
        if text is not None:
            self._descriptions_queued += 1

        def build_on_worker():
            values = self._good_values | changes
            good = self._good_description
            try:
                description, model = self.build_elsewhere(values, changes, text, source,
                                                          None if good is None else (good.text, good.source))
                prepared = None
                if model is not None:  # the kernels and the Data the callbacks use, in this process
                    self.check_model(model.prepare(), values)
                    prepared = self.prepare(model)
            except Exception as exc:  # noqa: BLE001 -- any failure refuses the change; the model in service stays
                what = (f"the robot description from {source}" if text is not None
                        else f"parameters {', '.join(changes)}")
                outcome = partial(self._refused, what, exc, {n: self._good_values[n] for n in changes}, number,
                                  text is not None, reply)
            else:
                self._good_values, self._good_description = values, description or self._good_description
                outcome = partial(self._built, description, model, prepared, set(changes), text is not None, reply)
            self._hand_over(outcome)
        self._builder.submit(build_on_worker)

    def _take_outcomes(self):
        with self._outcomes_lock:
            outcomes, self._outcomes = self._outcomes, []
        for outcome in outcomes:
            outcome()

    def _built(self, description, model, prepared, names, from_text, reply):
        """On the executor's thread: swap a model in, then let the parameters of its set take effect."""
        self._descriptions_queued -= from_text
        self.builds_pending -= 1
        if model is not None:
            self.install(description, model, prepared)
        if names:
            self._parameters_take_effect(names)
        if reply is not None:
            reply.set_result((True, f"robot '{model.robot.name}' ({model.robot.dof} joints) from "
                                    f"{description.source}"))

    def _refused(self, what, reason, revert, number, from_text, reply):
        """On the executor's thread: keep the model in service; the parameters of the refused set (those no later
        set has changed) go back to the last good values."""
        self._descriptions_queued -= from_text
        self.builds_pending -= 1
        revert = [Parameter(name, Parameter.Type(self._specs[name].type), value) for name, value in revert.items()
                  if self._setter.get(name) == number]
        if revert:
            self._reverting = True
            try:
                self.set_parameters(revert)
            finally:
                self._reverting = False
        message = self.refuse(what, reason)
        if reply is not None:
            reply.set_result((False, message))

    def destroy_node(self):
        self._builder.shutdown(wait=True)
        self._process.close()
        super().destroy_node()

    def refuse(self, what, reason):
        kept = f"keeping robot '{self.model.robot.name}'" if self.model else "no model yet"
        reason = one_line(reason)
        self.refusal = f"{what}: {reason}"
        message = f"refused {what}: {reason}; {kept}"
        self.get_logger().error(message)
        return message

    def install(self, description, model, prepared=None):
        """Put ``model`` (built, its calls made) and what :meth:`prepare` made for it in service: references swapped
        on the executor's thread, between two messages."""
        previous = self.model
        locked = model.robot.locked_joints
        for note in description.warnings:
            if not any(f"joint '{joint}' moves no mass" in note for joint in locked):  # locked, it moves none
                self.get_logger().warning(f"{description.source}: {note}")
        old = self.description.robot if self.description is not None else None  # the descriptions, not the models
        if old is not None and description.text != self.description.text and (
                (old.name, old.joint_names) != (description.robot.name, description.robot.joint_names)):
            self.get_logger().warning(f"robot description changed: robot '{previous.robot.name}' "
                                      f"({len(previous.joint_names)} joints) replaced by robot '{model.robot.name}' "
                                      f"({len(model.joint_names)} joints) from {description.source}")
        self.description = description
        merged = MergedJointStates(model.input_names)
        if self.joint_states is not None:
            merged.carry_over(self.joint_states)
        self.joint_states = merged
        self.model_changed(model, previous, prepared)
        self.model = model
        self.refusal = ""
        if previous is None:
            gc.freeze()  # see spin: the first model's objects and the kernels it loaded live as long as the node
        if previous is None or previous.robot is not model.robot:
            robot = model.robot
            self.get_logger().info(f"robot '{robot.name}' from {description.source}: {robot.dof} joints, "
                                   f"{robot.total_mass:.3f} kg moving, gravity {model.gravity.tolist()}")

    # -- parameters --------------------------------------------------------------------------------------------

    def _validate_parameters(self, parameters):
        """The checks that need no new model; the model itself is built after the set (:meth:`request_model`)."""
        if self._reverting:
            return SetParametersResult(successful=True)
        try:
            for p in parameters:
                if p.type_ == Parameter.Type.NOT_SET:
                    if self._ready:
                        raise ValueError(f"{p.name} cannot be unset")
                    continue
                name, value = p.name, p.value
                field, _, joint = name.partition(".")
                if joint and field in self._specs and self._specs[field].per_joint:  # a value by joint name
                    name, value = field, [value]
                check_common(name, value)
                self.check_parameter(name, value)
            changes = {p.name: p.value for p in parameters}
            if (self._ready and self.model is not None and not self._descriptions_queued
                    and not changes.keys() & STRUCTURE):  # else the names are checked when the model is built
                values = self.parameter_values() | changes
                check_names(self.model.robot, values, self._specs)
                self.check_names(self.model.robot, values)
        except ValueError as exc:
            names, reason = ", ".join(p.name for p in parameters), one_line(exc)
            self.get_logger().warning(f"rejected parameter {names}: {reason}")
            return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _apply_parameters(self, parameters):
        if not self._ready or self._reverting:
            return
        self._requests += 1
        changes = {p.name: p.value for p in parameters}
        for name in changes:
            self._setter[name] = self._requests
        if any(self._specs[name].rebuilds_model for name in changes):
            self.request_model(changes)  # the parameters take effect with the model
            if changes.get("robot_description") == "" and self._topic_text is not None:  # back to the topic
                self._on_description_message(String(data=self._topic_text))
        else:  # in effect now; the worker notes the values, in order with the builds
            self._builder.submit(self._note_values, changes)
            self._parameters_take_effect(set(changes))

    def _note_values(self, changes):
        self._good_values = self._good_values | changes

    def _parameters_take_effect(self, names):
        if "diagnostics_rate_hz" in names:
            self.destroy_timer(self.diagnostics_timer)
            self.diagnostics_timer = self.create_timer(1.0 / self.get_parameter("diagnostics_rate_hz").value,
                                                       self.publish_diagnostics)
        self.parameters_changed(names)

    # -- topics and services -----------------------------------------------------------------------------------

    def _on_description_message(self, msg):
        source = self.resolve_topic_name("robot_description") + " topic"
        self._topic_text = msg.data
        if self.get_parameter("robot_description").value:  # an explicit parameter wins (ros2_control's rule)
            self._log_source(f"parameter robot_description is set: it is the robot description; messages on {source} "
                             "are ignored (set the parameter to '' to follow the topic)")
            return
        self._log_source(f"parameter robot_description is empty: the robot description comes from {source}")
        if not msg.data.lstrip().startswith("<"):  # a message carries the text itself, never a file path
            start = msg.data.strip()[:40]
            self.refuse(f"the robot description from {source}", f"not URDF XML (it starts {start!r}; a message "
                        "carries the URDF text, not a path)" if start else "the URDF is empty")
            return
        self.request_model(text=msg.data, source=source)

    def _log_source(self, explanation):
        """Say once (per change of source) where the robot description comes from and why."""
        if explanation != self._source_logged:
            self._source_logged = explanation
            self.get_logger().info(explanation)

    async def _on_reload(self, request, response):
        """Re-read the ``robot_description`` parameter (text, or the file it names), else the last topic message;
        built on the worker, answered when it is swapped in or refused."""
        text = self.get_parameter("robot_description").value
        source = "parameter robot_description"
        if not text and self.description is not None:
            text, source = self.description.text, self.description.source
        if not text:
            response.success, response.message = False, "no robot description yet (parameter or topic)"
            return response
        reply = Future()
        self.request_model(text=text, source=source, reply=reply)
        response.success, response.message = await reply
        return response

    def _on_reset(self, request, response):
        self.stats.reset()
        response.success, response.message = True, self.reset()
        return response

    def warn_throttled(self, text, key=None):
        """Log a problem, each distinct one (``key``, default the text) at most every :data:`WARNING_PERIOD` s."""
        key = text if key is None else key
        now = time.monotonic()
        if now - self._warned.get(key, -math.inf) >= WARNING_PERIOD:
            if len(self._warned) > 256:
                self._warned.clear()
            self._warned[key] = now
            self.get_logger().warning(text)

    def stale_joints(self):
        """The joints whose last ``/joint_states`` value is older than ``joint_state_timeout`` (logged as a WARN)."""
        if self.joint_states is None:
            return []
        stale = self.joint_states.stale(time.monotonic(), self.get_parameter("joint_state_timeout").value)
        if stale:
            self.warn_throttled(f"/joint_states: no value for over {self.get_parameter('joint_state_timeout').value:g}"
                                f" s of joints {', '.join(stale)} (a driver stopped?)", key="stale joints")
        return stale

    def take_joint_states(self, msg):
        """Merge a ``/joint_states`` message (:mod:`.joint_states`): True when ``self.joint_states`` holds a full
        state to answer it; a bad message is refused with the reason, one without the model's joints counted."""
        if self.model is None:
            self.reject_input("/joint_states", "no robot model yet")
            return False
        try:
            return self.joint_states.take(msg, time.monotonic())
        except StateError as exc:
            self.reject_input("/joint_states", exc)
            return False

    def reject_input(self, topic, reason):
        self.stats.reject(f"{topic}: {reason}", topic)
        self.warn_throttled(f"{topic}: {reason}; message ignored")

    def check_limits(self, model, torques, topic):
        """Count and report torques (one state or a trajectory's points) beyond the URDF effort limits.

        Returns how many states exceed a limit.
        """
        over = np.abs(torques) > model.effort_limits
        if not over.any():
            return 0
        over = np.atleast_2d(over)
        cells = np.argwhere(over)
        joints = sorted({model.joint_names[k] for k in cells[:, 1]})
        self.stats.exceeded(joints)
        tau = np.atleast_2d(torques)
        point = "point {} " if np.ndim(torques) == 2 else ""
        details = ", ".join(f"{point.format(n)}{model.joint_names[k]} {tau[n, k]:.5g} > "
                            f"{model.effort_limits[k]:g} {model.joint_unit(k)}" for n, k in cells[:6])
        self.warn_throttled(f"{topic}: effort limits exceeded: {details}", key=f"limits {topic} {joints}")
        return int(over.any(axis=1).sum())

    def publish_diagnostics(self):
        stats = self.stats
        elapsed = max(time.monotonic() - stats.window_start, 1e-9)
        status = DiagnosticStatus(name=f"rne_dynamics: {self.get_fully_qualified_name()}")
        model = self.model
        values = {"robot": "none", "model source": "none", "refused description": self.refusal or "none"}
        if model is None:
            status.level = DiagnosticStatus.ERROR
            status.message = "no robot model: waiting for /robot_description or parameter robot_description"
        else:
            robot = model.robot
            status.hardware_id = robot.name
            values |= {"robot": robot.name, "model source": self.description.source, "joints": robot.dof,
                       "gravity": model.gravity.tolist(), "payload": f"{model.settings['payload.mass']} kg on "
                       f"'{model.settings['payload.link']}'" if model.settings["payload.link"] else "none"}
            problems = []
            if self.refusal:
                problems.append(f"kept robot '{robot.name}', refused {self.refusal}")
            if stats.violations:
                problems.append("effort limits exceeded: " + ", ".join(sorted(stats.violating_joints)))
            if stats.rejected:
                problems.append(f"{stats.rejected} inputs rejected, last: {stats.last_rejection}")
            else:  # refused earlier, nothing good on that topic since: still news
                problems += [f"last {topic} input refused at {time.strftime('%H:%M:%S', time.localtime(when))}, "
                             f"none good since: {reason}" for topic, (when, reason) in stats.refused.items()]
            stale = self.stale_joints()
            if stale:
                problems.append(f"no /joint_states value for over {self.get_parameter('joint_state_timeout').value:g} "
                                f"s of joints {', '.join(stale)}")
            problems += self.diagnostic_problems()
            errors = self.diagnostic_errors()
            status.level = (DiagnosticStatus.ERROR if errors else DiagnosticStatus.WARN if problems
                            else DiagnosticStatus.OK)
            status.message = "; ".join(errors + problems) or f"robot '{robot.name}' OK"
        values |= {"input rate [Hz]": stats.inputs / elapsed, "inputs": stats.total_inputs,
                   "rejected inputs": stats.total_rejected, "last rejected input": stats.last_rejection or "none",
                   "compute time mean [ms]": 1e3 * stats.compute_sum / stats.inputs if stats.inputs else 0.0,
                   "compute time max [ms]": 1e3 * stats.compute_max,
                   "effort limit violations": stats.total_violations,
                   "effort limit violations (window)": stats.violations}
        if self.joint_states is not None:
            values["joint states without model joints"] = self.joint_states.foreign
        values |= self.diagnostic_values()
        status.values = [KeyValue(key=key, value=f"{v:.6g}" if isinstance(v, float) else str(v))
                         for key, v in values.items()]
        header = Header(stamp=self.get_clock().now().to_msg())
        self.diagnostics_publisher.publish(DiagnosticArray(header=header, status=[status]))
        stats.new_window()

    # -- hooks -------------------------------------------------------------------------------------------------

    def check_parameter(self, name, value):
        """Raise ValueError if ``value`` is invalid for ``name`` whatever the model."""

    @staticmethod
    def floating_base(values):
        """Whether the parameter ``values`` say how the base moves, so that the robot is loaded with a floating
        base."""
        return False

    @staticmethod
    def check_names(robot, values):
        """Raise ValueError if the parameter ``values`` do not fit ``robot``'s names, sizes or limits: checks cheap
        enough for the set-parameters callback, which runs them against the robot in service."""

    @staticmethod
    def check_model(model, values):
        """Raise ValueError if the parameter ``values`` do not fit the newly built ``model``, by making the calls the
        callbacks will make: in the builder process (their written code is built there), then in the node's process
        on the worker thread (loaded there, before the swap)."""

    def prepare(self, model):
        """What the callbacks need for ``model`` besides it (messages, publishers, estimators), made on the model
        worker's thread beside the data path (on the executor's only for the model given at start), after
        :meth:`check_model`: handed to :meth:`model_changed`."""
        return None

    def model_changed(self, model, previous, prepared):
        """Serve ``model`` (called before it replaces ``previous``, which may be None) with what :meth:`prepare`
        made for it: references to swap, nothing heavy (the joint-state callbacks wait meanwhile)."""

    def parameters_changed(self, names):
        """React to parameters that were set (after the model, if any, was swapped)."""

    def reset(self):
        """``~/reset``: return a message saying what was reset."""
        return "statistics reset"

    def diagnostic_values(self):
        return {}

    def diagnostic_problems(self):
        """Problems of the subclass's own that make the diagnostics status a WARN."""
        return []

    def diagnostic_errors(self):
        """Faults of the subclass's own that make the diagnostics status an ERROR (listed first)."""
        return []
