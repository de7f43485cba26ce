"""Load markers for rviz: each joint's |torque| as a fraction of its URDF effort limit, readable at a glance.

Per movable joint, in its child link's frame (the joint origin): a sphere whose diameter and colour grow with the
load (green at rest, yellow at half the limit, red at and beyond it; grey without a limit), and a text label
``joint 42% (12.3 N m)`` above it. A closed chain adds, per loop closure, an arrow from its cut point on
``link_b`` along the force ``link_a`` exerts there (:data:`FORCE_SCALE` m per N, at most :data:`FORCE_SHOWN_MAX`
m long; namespace ``loop_force``). The message objects are built once per model and updated in place.
"""
import numpy as np
from geometry_msgs.msg import Point
from visualization_msgs.msg import Marker, MarkerArray

SPHERE_MIN = 0.04     # m, diameter at no load
SPHERE_GAIN = 0.08    # m per unit of load fraction
LOAD_SHOWN_MAX = 1.5  # loads beyond 150 % draw as 150 %
LABEL_HEIGHT = 0.03   # m, text size
LABEL_LIFT = 0.06     # m, text above the sphere (child frame z)
FORCE_SCALE = 0.002   # m of arrow per N of cut force
FORCE_SHOWN_MAX = 0.5  # m, longest arrow


def load_fractions(torques, effort_limits):
    """``|tau| / limit`` per joint; 0 where the URDF gives no (finite, positive) limit."""
    limited = np.isfinite(effort_limits) & (effort_limits > 0)
    return np.where(limited, np.abs(torques) / np.where(limited, effort_limits, 1.0), 0.0)


def sphere_diameter(fraction):
    return SPHERE_MIN + SPHERE_GAIN * min(fraction, LOAD_SHOWN_MAX)


def load_colour(fraction, limited=True):
    """``(r, g, b)``: green -> yellow (half the limit) -> red (the limit); grey for a joint without a limit."""
    if not limited:
        return 0.6, 0.6, 0.6
    f = min(max(fraction, 0.0), 1.0)
    return min(1.0, 2.0 * f), min(1.0, 2.0 * (1.0 - f)), 0.0


def deleting_all():
    """A MarkerArray that clears what an earlier model drew."""
    return MarkerArray(markers=[Marker(action=Marker.DELETEALL)])


class LoadMarkers:
    """The load markers of one model; :meth:`update` fills them for one set of torques."""

    def __init__(self, model, namespace="joint_load"):
        self.model = model
        self.limited = [bool(np.isfinite(e) and e > 0) for e in model.effort_limits]
        self.units = [model.joint_unit(k) for k in range(len(model.joint_names))]
        self.spheres, self.labels = [], []
        for k, joint in enumerate(model.joint_names):
            frame = model.robot.joints[joint].child
            sphere = Marker(ns=namespace, id=k, type=Marker.SPHERE, action=Marker.ADD)
            label = Marker(ns=namespace + "_label", id=k, type=Marker.TEXT_VIEW_FACING, action=Marker.ADD)
            for marker in (sphere, label):
                marker.header.frame_id = frame
                marker.pose.orientation.w = 1.0
                marker.color.a = 0.85
            label.pose.position.z = LABEL_LIFT
            label.scale.z = LABEL_HEIGHT
            label.color.r = label.color.g = label.color.b = 1.0
            self.spheres.append(sphere)
            self.labels.append(label)
        closures = model.robot.loops.closures if model.robot.loops is not None else ()
        self.arrows = []
        for k, closure in enumerate(closures):
            arrow = Marker(ns="loop_force", id=k, type=Marker.ARROW, action=Marker.ADD)
            arrow.header.frame_id = closure.link_b
            arrow.pose.orientation.w = 1.0
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.01, 0.02, 0.03  # shaft, head diameters, head length
            arrow.color.r, arrow.color.g, arrow.color.b, arrow.color.a = 0.2, 0.6, 1.0, 0.9
            self.arrows.append((closure, arrow))
        self.message = MarkerArray(markers=self.spheres + self.labels + [arrow for _, arrow in self.arrows])

    def update(self, stamp, torques, loop_wrenches=None):
        """The MarkerArray for ``torques`` (joint order) and a closed chain's ``loop_wrenches``, stamped ``stamp``."""
        for closure, arrow in self.arrows:
            force = closure.R_b @ loop_wrenches[closure.name][:3]  # link_b's axes
            length = np.linalg.norm(force) * FORCE_SCALE
            if length > FORCE_SHOWN_MAX:
                force *= FORCE_SHOWN_MAX / length
            start, end = closure.p_b, closure.p_b + FORCE_SCALE * force
            arrow.header.stamp = stamp
            arrow.points = [Point(x=float(start[0]), y=float(start[1]), z=float(start[2])),
                            Point(x=float(end[0]), y=float(end[1]), z=float(end[2]))]
        fractions = load_fractions(torques, self.model.effort_limits).tolist()
        for k, (sphere, label, fraction, tau) in enumerate(zip(self.spheres, self.labels, fractions,
                                                               torques.tolist())):
            sphere.header.stamp = label.header.stamp = stamp
            sphere.scale.x = sphere.scale.y = sphere.scale.z = sphere_diameter(fraction)
            sphere.color.r, sphere.color.g, sphere.color.b = load_colour(fraction, self.limited[k])
            load = f"{100.0 * fraction:.0f}%" if self.limited[k] else "no limit"
            label.text = f"{self.model.joint_names[k]} {load} ({tau:.1f} {self.units[k]})"
        return self.message
