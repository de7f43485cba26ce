"""Khalil's lumped elasticity (2010, Sec. 6): any joint may be elastic, its generalised force a spring and damper,
``Gamma_j = -K_j (q_j - q0_j) - D_j qd_j`` (``stiffness``, ``spring_damping``, ``rest_offset`` of
:mod:`~rne_dynamics.model.drive`), added to whatever else drives it (usually nothing).

- Direct model: the rigid robot's forward dynamics with those forces (the ABA).
- Inverse model (eqs. 72-82): the rigid joints follow a given trajectory, the elastic ones move as the springs
  make them: hybrid dynamics with the rigid joints' accelerations known and the elastic joints' forces known; it
  returns the rigid joints' torques and the elastic joints' accelerations.

A flexible joint in Khalil's sense (a motor joint and an elastic joint in series about the same axis) is two
joints of the URDF (the second on a massless intermediate link, or on the link itself with a zero offset), the
second given a stiffness: ``robot.with_drive(stiffness={"elbow_spring": 2.0e4})``.
"""
import numpy as np

from ..errors import ModelError
from ..model.drive import elastic_coordinates, elastic_joints, transmission
from .aba import forward_dynamics
from .hybrid import hybrid_dynamics


def _elastic(robot, what):
    """The velocity coordinates of the elastic joints, their position coordinates and the springs ``(K, D, q0)``;
    a robot without elastic joints is refused."""
    joints = elastic_joints(robot)
    if not joints.size:
        raise ModelError(f"{what}: robot '{robot.name}' has no elastic joint; give some a stiffness with "
                         "robot.with_drive(stiffness={joint: K}) or rd.load_drive")
    drive = transmission(robot)
    v = elastic_coordinates(robot)
    q = np.array([robot.bodies[robot.joint_bodies[j]].idx_q for j in joints], dtype=np.int64)
    return v, q, drive.stiffness[joints], drive.spring_damping[joints], drive.rest_offset[joints]


def spring_forces(robot, q, qd):
    """``-K (q - q0) - D qd`` ``(…, len(elastic joints))``: the elastic joints' generalised forces, in
    ``joint_names`` order of the elastic joints."""
    v, iq, K, D, q0 = _elastic(robot, "spring_forces")
    q, qd = np.asarray(q, float), np.asarray(qd, float)
    return -K * (q[..., iq] - q0) - D * qd[..., v]


def elastic_forward_dynamics(robot, q, qd, tau, *, gravity=None, external_wrenches=None):
    """Khalil's direct model with lumped elasticity: the accelerations ``(…, nv)`` when the elastic joints' springs
    ``-K (q - q0) - D qd`` add to ``tau`` (the actuated joints' torques; usually 0 at the elastic joints). By
    :func:`rne_dynamics.forward_dynamics` (the ABA). One state or a batch."""
    v, _, _, _, _ = _elastic(robot, "elastic_forward_dynamics")
    tau = np.array(tau, dtype=float)
    tau[..., v] += spring_forces(robot, q, qd)
    return forward_dynamics(robot, q, qd, tau, gravity=gravity, external_wrenches=external_wrenches)


def elastic_inverse_dynamics(robot, q, qd, qdd, *, tau_elastic=0.0, gravity=None, external_wrenches=None):
    """Khalil's inverse model with lumped elasticity (eqs. 72-82): the rigid joints follow ``qdd``, the elastic
    ones are driven by their springs only (plus ``tau_elastic``, the other forces on them, default 0); returns
    a :class:`~rne_dynamics.algorithms.hybrid.HybridDynamicsResult`: ``accelerations`` (the rigid joints' as given,
    the elastic ones' computed), ``torques`` (the rigid joints' needed, the elastic joints' spring forces), joint
    wrenches. ``qdd`` at the elastic joints is not read (finite: zeros, say). By
    :func:`rne_dynamics.hybrid_dynamics`, O(n). One state or a batch."""
    v, _, _, _, _ = _elastic(robot, "elastic_inverse_dynamics")
    qd = np.asarray(qd, dtype=float)
    forces = np.zeros(np.broadcast_shapes(np.shape(qd), np.shape(qdd)))
    forces[..., v] = spring_forces(robot, q, qd) + tau_elastic
    known = np.ones(robot.nv, dtype=bool)
    known[v] = False
    return hybrid_dynamics(robot, q, qd, qdd, forces, known_acceleration=known, gravity=gravity,
                           external_wrenches=external_wrenches)
