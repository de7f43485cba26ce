"""The payload estimated while the robot works, in the inverse dynamics node (:class:`rne_dynamics.PayloadEstimator`).

With ``payload_estimation_link`` set, each joint state's positions, velocities and measured ``effort``, with the
filtered derivative of the velocities (:class:`~.accelerations.VelocityDerivative`, cutoff ``acceleration_cutoff_hz``),
are gathered and given to the estimator in batches of :data:`BATCH`; it forgets with time constant
``payload_estimation_time_constant`` (s; 0: never). The estimate is the whole payload on that link (the
``payload.*`` parameters' one, if on that link, and what the torques show beyond it). ``~/payload_estimate``
(``geometry_msgs/InertiaStamped``, frame the link: mass, COM, inertia about the COM) carries it once mass and COM are
observable and the mass is positive; ``/diagnostics`` its standard deviations, the excitation's condition number,
what is observable and why nothing is published. The service ``~/apply_payload_estimate`` (``std_srvs/Trigger``)
sets the ``payload.*`` parameters to it (the model is rebuilt beside the data path and swapped in, the estimator
starting again on the new model), refused with the reason when it is not observable or not physically possible.
"""
import math

import numpy as np
from geometry_msgs.msg import InertiaStamped
from rclpy.parameter import Parameter
from std_srvs.srv import Trigger

import rne_dynamics as rd

from ..errors import ModelError, StateError
from .accelerations import VelocityDerivative
from .messages import stamp_seconds
from .parameters import DOUBLE, STRING, Spec, named_link

PARAMETERS = (
    Spec("payload_estimation_link", "", STRING, "link whose payload is estimated online from the measured effort "
         "of /joint_states (~/payload_estimate, ~/apply_payload_estimate); empty: off", rebuilds_model=True),
    Spec("payload_estimation_time_constant", 10.0, DOUBLE, "forgetting time constant of the payload estimate (s); "
         "0: never forget", 0.0, 1.0e6, rebuilds_model=True),
)
#: Joint states gathered before the estimator takes them (one batched regressor call).
BATCH = 20
#: Least seconds between two ``~/payload_estimate`` messages.
PUBLISH_PERIOD = 0.1


def check_names(robot, values):
    named_link("payload_estimation_link", values, robot)


class PayloadEstimates:
    """The estimator of one model, its message and service (module docstring)."""

    def __init__(self, node):
        self.node = node
        self.publisher = node.create_output(InertiaStamped, "~/payload_estimate")
        node.create_service(Trigger, "~/apply_payload_estimate", self.on_apply)
        self.estimator = self.latest = None
        self.problem = ""

    @staticmethod
    def prepare(model):
        """A new estimator for ``model``, made (its regressor's code loaded) beside the data path: None without
        ``payload_estimation_link``, the reason (a string) where the link cannot carry one."""
        settings = model.settings
        link = settings["payload_estimation_link"]
        if not link:
            return None
        carried = None
        if settings["payload.link"] == link:
            carried = (settings["payload.mass"], settings["payload.com"], settings["payload.inertia"])
        try:
            return rd.PayloadEstimator(model.robot, link, carried=carried, gravity=model.gravity)
        except (ModelError, StateError) as exc:
            return f"payload estimation off: {exc}"

    def configure(self, model, estimator):
        """Serve ``model`` with the ``estimator`` :meth:`prepare` made."""
        settings = model.settings
        link = settings["payload_estimation_link"]
        self.estimator, self.latest, self.problem = None, None, ""
        self.samples, self.derivative = [], None  # derivative: a VelocityDerivative from the first joint state on
        self.last_published = -math.inf
        if not link:
            return
        self.rate = None  # samples per second, from the stamps: sets lambda = exp(-1 / (rate T))
        self.time_constant = settings["payload_estimation_time_constant"]
        if isinstance(estimator, str):
            self.problem = estimator
        else:
            self.estimator = estimator
        self.message = InertiaStamped()
        self.message.header.frame_id = link
        self.cutoff = self.node.get_parameter("acceleration_cutoff_hz").value

    def update(self, model, msg, q, qd):
        """Take one joint state; a reason to warn about, or None."""
        if self.estimator is None:
            return None
        if len(msg.effort) == 0:
            self.problem = "payload estimation on but /joint_states carry no effort"
            return self.problem
        try:
            tau = model.gather(msg.name, msg.effort, "effort")
        except StateError as exc:
            return f"payload estimation: {exc}"
        t = stamp_seconds(msg.header.stamp)
        if self.derivative is None:
            self.derivative = VelocityDerivative(len(qd), self.cutoff)
        last = self.derivative.t
        unused = self.derivative.update(t, qd)
        if unused:
            self.samples, self.derivative = [], None
            return f"payload estimation: the acceleration filter {unused}; it restarts"
        if last is not None:
            self.rate = 1.0 / (t - last) if self.rate is None else 0.99 * self.rate + 0.01 / (t - last)
        self.samples.append((np.array(q), np.array(qd), self.derivative.qdd.copy(), np.array(tau)))
        if len(self.samples) < BATCH:
            return None
        if self.time_constant > 0 and self.rate:
            self.estimator.forgetting = math.exp(-1.0 / (self.rate * self.time_constant))
        batch, self.samples = [np.array(x) for x in zip(*self.samples)], []
        try:
            self.estimator.update(*batch)
        except StateError as exc:  # the estimate keeps the samples before
            return f"payload estimation: {exc}"
        now = t
        if now - self.last_published < PUBLISH_PERIOD:
            return None
        self.last_published = now
        self.latest = self.estimator.estimate()
        self.problem = "" if self.latest.applicable else f"payload estimate not published: {self.latest.reason}"
        if self.latest.applicable:
            e, m = self.latest, self.message
            m.header.stamp = msg.header.stamp
            m.inertia.m = e.mass
            m.inertia.com.x, m.inertia.com.y, m.inertia.com.z = (float(x) for x in e.com)
            inertia = e.inertia if e.inertia is not None else np.zeros(6)
            (m.inertia.ixx, m.inertia.ixy, m.inertia.ixz, m.inertia.iyy, m.inertia.iyz,
             m.inertia.izz) = (float(x) for x in inertia)
            self.publisher.publish(m)
        return None

    def on_apply(self, request, response):
        e = self.latest
        if self.estimator is None:
            response.success, response.message = False, "payload_estimation_link is not set: nothing estimated"
        elif e is None:
            response.success, response.message = False, "no payload estimate yet"
        elif not e.applicable:
            response.success, response.message = False, e.reason
        else:
            inertia = e.inertia if e.inertia is not None else np.zeros(6)
            result = self.node.set_parameters([
                Parameter("payload.link", value=e.link), Parameter("payload.mass", value=float(e.mass)),
                Parameter("payload.com", value=[float(x) for x in e.com]),
                Parameter("payload.inertia", value=[float(x) for x in inertia])])
            refused = [r.reason for r in result if not r.successful]
            response.success = not refused
            response.message = refused[0] if refused else (
                f"payload on '{e.link}': {e.mass:.4g} kg, COM {np.round(e.com, 4).tolist()} m; the model is rebuilt "
                "with it")
        return response

    def diagnostic_problems(self):
        return [self.problem] if self.problem else []

    def diagnostic_values(self):
        e = self.latest
        if e is None:
            return {}
        values = {"payload estimate samples": e.samples, "payload estimate mass [kg]": e.mass,
                  "payload estimate mass std [kg]": e.mass_std,
                  "payload excitation condition number": e.condition_number,
                  "payload observable": ", ".join(k for k, v in e.observable.items() if v) or "nothing"}
        if e.com is not None:
            values["payload estimate com [m]"] = np.round(e.com, 5).tolist()
            values["payload estimate com std [m]"] = np.round(e.com_std, 5).tolist()
        if e.inertia is not None:
            values["payload estimate inertia std [kg m^2]"] = np.round(e.inertia_std, 6).tolist()
        return values
