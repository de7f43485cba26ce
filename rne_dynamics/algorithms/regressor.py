"""Identification: the joint torque regressor ``Y(q, qd, qdd)`` with ``tau_rigid = Y pi``, and the base parameters.

Each body has 10 inertial parameters, in Pinocchio's order (``Inertia.toDynamicParameters``)::

    pi_i = [m, m c_x, m c_y, m c_z, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz]

in the body (joint) frame, the rotational inertia ``I`` about the body origin (not the centre of mass), so that the
spatial inertia (RBDA eq. 2.63) and hence the body's RNEA wrench ``f_i = I_i a_i + v_i x* I_i v_i`` are linear in
``pi_i``: ``I_i m = K(m) pi_i`` and ``f_i = (K(a_i) + v_i x* K(v_i)) pi_i``. The wrench reaches joint ``j`` through
the ancestors' force transforms, ``tau_j = S_j^T X^T ... f_i``, so column block ``i`` of ``Y`` collects
``S_j^T (X_j^T ... X_i^T) (K(a_i) + v_i x* K(v_i))`` over body ``i`` and its ancestors ``j``, one row per velocity
coordinate (a mimic joint's column adds ``q_mult`` times it into its source's row).

``Y pi`` is the rigid-body torque only: the drive terms (armature, viscous and Coulomb friction) are not inertial
parameters of a body and are left out (``inverse_dynamics(...).torques - Y pi`` is exactly those terms).
"""
from dataclasses import dataclass

import numpy as np

from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from .configuration import random_configuration
from .driver import Algorithm
from ..model.joints import S_transpose_times_add
from .rnea import body_motion
from ..model.spatial import base_acceleration, cross_force_add, force_to_parent_add, set_at_rest

#: Names of the 10 parameters of a body, in the order of ``pi``.
PARAMETER_NAMES = ("m", "mc_x", "mc_y", "mc_z", "I_xx", "I_xy", "I_yy", "I_xz", "I_yz", "I_zz")


@helper
def inertia_regressor(m, out):
    """``out[c]`` = column ``c`` of ``K(m)``, the ``6 x 10`` matrix with ``I m = K(m) pi`` for the spatial inertia
    ``I`` of parameters ``pi`` acting on the motion vector ``m = [v; w]``: ``I m = [mass v + w x h; I_o w + h x v]``
    (RBDA eq. 2.63 with ``h = mass c``)."""
    out[:] = 0.0
    v0, v1, v2, w0, w1, w2 = m[0], m[1], m[2], m[3], m[4], m[5]
    out[0, 0], out[0, 1], out[0, 2] = v0, v1, v2                              # m
    out[1, 1], out[1, 2], out[1, 4], out[1, 5] = w2, -w1, -v2, v1             # m c_x: w x e_x, e_x x v
    out[2, 0], out[2, 2], out[2, 3], out[2, 5] = -w2, w0, v2, -v0             # m c_y
    out[3, 0], out[3, 1], out[3, 3], out[3, 4] = w1, -w0, -v1, v0             # m c_z
    out[4, 3] = w0                     # I_xx
    out[5, 3], out[5, 4] = w1, w0      # I_xy
    out[6, 4] = w1                     # I_yy
    out[7, 3], out[7, 5] = w2, w0      # I_xz
    out[8, 4], out[8, 5] = w2, w1      # I_yz
    out[9, 5] = w2                     # I_zz


#: ``Y``, then per body the pose ``(R, p)``; per body and a base row last, ``v`` and ``a`` (the base at rest,
#: gravity added to its ``a`` by the step); the joint velocity ``vJ``, a body's 10 wrench columns ``F`` (and ``F_up``,
#: moved to the parent) and ``K(v)``.
regressor_memory = memory("regressor_memory", results=dict(Y=("nv", "10 * nb")), R=("nb", 3, 3), p=("nb", 3),
                          v=("nb + 1", 6), a=("nb + 1", 6), vJ=(6,), F=(10, 6), F_up=(10, 6), Kv=(10, 6))


@arithmetic_kernel
def regressor_newton_euler(m, w, q, qd, qdd, gravity):
    """``Y`` ``(nv, 10 nb)`` for one state (module docstring): body ``i``'s 10 wrench columns
    ``F = K(a_i) + v_i x* K(v_i)`` reach each joint ``j`` from ``i`` down to the root as ``S_j^T F``, moved to
    ``j``'s frame on the way."""
    Y, R, p, v, a, vJ, F, F_up, Kv = w.Y, w.R, w.p, w.v, w.a, w.vJ, w.F, w.F_up, w.Kv
    set_at_rest(v[-1], a[-1])
    base_acceleration(gravity, a[-1])
    Y[:] = 0.0
    Y_by_parameter = Y.T  # the column of parameter c of body i is a row here: tau_j = S_j^T F accumulates into it
    for i in range(m.nb):
        body_motion(m, i, q, qd, qdd, R, p, v, a, vJ)
        inertia_regressor(a[i], F)
        inertia_regressor(v[i], Kv)
        for c in range(10):
            cross_force_add(v[i], Kv[c], F[c])
        j = i
        while j >= 0:
            for c in range(10):
                S_transpose_times_add(m, j, F[c], Y_by_parameter[10 * i + c])
            if m.parent[j] >= 0:
                F_up[:] = 0.0
                for c in range(10):
                    force_to_parent_add(R[j], p[j], F[c], F_up[c])
                for c in range(10):  # element by element: numba copies an array through a temporary
                    for k in range(6):
                        F[c, k] = F_up[c, k]
            j = m.parent[j]


REGRESSOR = Algorithm(regressor_newton_euler, regressor_memory, ("q", "qd", "qdd"), "the regressor entries",
                      gravity=True)


def joint_torque_regressor(robot, q, qd, qdd, *, gravity=None, data=None):
    """``Y`` ``(…, nv, 10 nb)`` with ``tau_rigid = Y @ inertial_parameters(robot)`` (module docstring), ``nb`` the
    bodies of ``robot.body_joint_names`` (mimic bodies included; a floating base is body 0, its joint the base's
    free-flyer), 10 columns each. The columns of Pinocchio's ``computeJointTorqueRegressor``, up to the body order.
    One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``; ``data``: a
    ``robot.data()`` to compute in."""
    return REGRESSOR.run(robot, data, (q, qd, qdd), gravity)


def inertial_parameters(robot):
    """``pi`` ``(10 nb,)``: the 10 parameters of each body (module docstring), bodies in ``robot.bodies`` order.
    A body is every link moved by one joint (links joined by fixed joints are lumped)."""
    return np.concatenate([[b.mass, *b.h, b.I[0, 0], b.I[0, 1], b.I[1, 1], b.I[0, 2], b.I[1, 2], b.I[2, 2]]
                           for b in robot.bodies]) if robot.bodies else np.zeros(0)


def parameter_names(robot):
    """``'<joint>.<parameter>'`` for each entry of ``pi``, the body named by the joint that moves it."""
    return tuple(f"{joint}.{name}" for joint in robot.body_joint_names for name in PARAMETER_NAMES)


@dataclass(frozen=True)
class BaseParameters:
    """The identifiable combinations of the inertial parameters (Gautier's numerical QR method).

    ``indices``: the columns of ``Y`` kept (the base columns); ``combination`` ``(r, 10 nb)``: ``pi_base =
    combination @ pi`` for any parameters ``pi``; ``values``: ``pi_base`` of the robot; ``names``: the parameter
    name of each base column (each base parameter is that parameter plus the ``combination`` row's others).
    ``tau_rigid = regressor(Y) @ pi_base`` for every state.
    """
    indices: np.ndarray
    combination: np.ndarray
    values: np.ndarray
    names: tuple

    def regressor(self, Y):
        """The base regressor: the base columns of a full regressor ``Y`` ``(…, nv, 10 nb)``."""
        return np.asarray(Y)[..., self.indices]


def base_parameters(robot, *, samples=None, seed=0, gravity=None, tolerance=None):
    """The base parameters of ``robot`` (:class:`BaseParameters`), from ``Y`` stacked over random states.

    Gautier's method: QR with column pivoting of ``W = [Y(x_1); ...; Y(x_n)]`` (``samples`` states, default enough
    for four times as many rows as parameters; positions within the joint limits, anywhere in ``±pi`` for a range of
    no width (a URDF's default ``lower = upper = 0``: the generic rank, whatever the motion), random unit
    quaternions), rank
    ``r`` where ``|R_kk|`` drops below ``tolerance`` (default ``max(W.shape) * eps * |R_00|``). With
    ``W P = Q [R1 R2]``, the first ``r`` pivoted columns are independent and the others are ``W_2 = W_1 R1^-1 R2``,
    so ``W pi = W_1 (pi_1 + R1^-1 R2 pi_2)``. Gravity matters: a different direction can make other combinations
    identifiable.
    """
    import scipy.linalg  # QR with column pivoting; only this function needs scipy

    n_params = 10 * len(robot.bodies)
    if robot.nv == 0:
        return BaseParameters(np.zeros(0, int), np.zeros((0, n_params)), np.zeros(0), ())
    if samples is None:
        samples = max(20, -(-4 * n_params // robot.nv))
    rng = np.random.default_rng(seed)
    q = random_configuration(robot, rng, size=samples)
    qd, qdd = rng.normal(size=(2, samples, robot.nv))
    lower, upper = robot.position_limits.T
    stuck = np.flatnonzero(lower >= upper)  # <limit lower="0" upper="0">, the URDF's defaults: not the motion's range
    q[:, stuck] = rng.uniform(-np.pi, np.pi, size=(samples, len(stuck)))
    W = joint_torque_regressor(robot, q, qd, qdd, gravity=gravity).reshape(-1, n_params)
    _, Rw, order = scipy.linalg.qr(W, mode="economic", pivoting=True)
    diagonal = np.abs(np.diag(Rw))
    if tolerance is None:
        tolerance = max(W.shape) * np.finfo(float).eps * (diagonal[0] if diagonal.size else 0.0)
    rank = int(np.sum(diagonal > tolerance))
    beta = scipy.linalg.solve_triangular(Rw[:rank, :rank], Rw[:rank, rank:])
    combination = np.zeros((rank, n_params))
    combination[:, order[:rank]] = np.eye(rank)
    combination[:, order[rank:]] = beta
    names = parameter_names(robot)
    indices = order[:rank]
    return BaseParameters(indices, combination, combination @ inertial_parameters(robot),
                          tuple(names[k] for k in indices))
