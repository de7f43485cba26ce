"""Hybrid dynamics (Featherstone, RBDA Sec. 9.2, Table 9.6; Khalil 2010 Sec. 6-7): some velocity coordinates have a
known acceleration, the others a known generalised force; one O(n) articulated-body pass gives the unknown half of
each, and the joint wrenches.

The two ends are the familiar algorithms: every acceleration known is inverse dynamics (RNEA), every force known is
forward dynamics (ABA). In between: a free-floating base (its force known: zero, or gravity and the external
wrenches only) under a joint trajectory is Khalil's inverse model with a mobile base (eqs. 86-87, recursively
89-99); a passive joint has a known force 0, an elastic one ``-K (q - q0)`` (Khalil eqs. 72-82).

It is the ABA of :mod:`rne_dynamics.algorithms.aba` with one change per motion column of known acceleration
(RBDA Table 9.6): its motion ``S_j qdd_j`` joins the velocity-product term ``c_i`` of its body, it takes no part in
``D_i``, and its body passes its whole articulated inertia on where all its columns are known. Its force comes last,
``tau_j = S_j^T f_i`` from the joint wrench ``f_i = IA_i a_i + pA_i``.
"""
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from .._jit import carve, helper, layout
from ..errors import StateError
from ..model.drive import drive_friction, drive_torque
from ..model.spatial import (add_scaled, base_acceleration, cross_motion_add, dot6, force_shift_add,
                             inertia_shift_add, matrix_times, motion_shift, rotate6, set_at_rest, set_identity)
from .aba import (aba_workspace, articulated_inertia, body_bias, body_origin_motion, column_scale, ldl_inverse,
                  one_column_articulated, pass_to_parent)
from .crba import mass_matrix
from .driver import OK, SINGULAR, Algorithm, singular
from .inputs import states
from .rnea import inverse_dynamics, joint_loads

HybridMemory = namedtuple("HybridMemory", "accelerations torques joint_wrenches base_wrench f aba")


@layout
def hybrid_memory(block, m):
    """The results (every coordinate's acceleration and force, the joint wrenches and the base's share), then the
    wrenches of every body and the ABA's workspace."""
    accelerations, o = carve(block, 0, (m.nv,))
    torques, o = carve(block, o, (m.nv,))
    joint_wrenches, o = carve(block, o, (m.nj, 6))
    base_wrench, results = carve(block, o, (6,))
    f, o = carve(block, results, (m.nb + 1, 6))
    aba, end = aba_workspace(block, o, m, m.nb, m.ncol)
    return HybridMemory(accelerations, torques, joint_wrenches, base_wrench, f, aba), results, end


@helper
def hybrid_articulated_body(m, w, known, q, qd, qdd_given, tau_given, gravity, f_ext, qdd, tau, f):
    """Hybrid dynamics (RBDA Table 9.6) of one state of a robot whose mimic columns all follow known coordinates.
    ``known[k]``: coordinate ``k`` has a known acceleration, ``qdd_given[k]``; the others have a known force,
    ``tau_given[k]`` (the other entries are not read). Writes all of ``qdd`` and ``tau``, and the joint wrenches
    ``f`` (rows ``(nb + 1, 6)``, ``f[-1]`` the base's share, as
    :func:`~rne_dynamics.algorithms.aba.articulated_body`). Returns ``OK``, or ``SINGULAR`` plus the first
    coordinate of known force whose pivot in ``D_i`` is not positive.

    The workspace and frames are the ABA's (root axes, about each body's origin). Per body ``i``, ``F`` its columns
    of known force, ``K`` those of known acceleration:
        v_i = X_i v_λ + S_i qd_i,   c_i = v_i x S_i qd_i + S_K qdd_K,   IA_i = I_i,   pA_i = v_i x* I_i v_i - f_ext_i
        U_F = IA_i S_F,   D_i = S_F^T U_F + diag(armature_F),   u_F = tau_F - drive friction - S_F^T pA_i
        Ia_i = IA_i - U_F D_i^-1 U_F^T,   IA_λ += X_i^T Ia_i X_i,   pA_λ += X_i^T (pA_i + Ia_i c_i + U_F D_i^-1 u_F)
        a'_i = X_i a_λ + c_i,   qdd_F = D_i^-1 (u_F - U_F^T a'_i),   a_i = a'_i + S_F qdd_F
        f_i = IA_i a_i + pA_i,   tau_K = S_K^T f_i + armature_K qdd_K + drive friction
    A body with no column of known force passes ``Ia_i = IA_i`` on (Khalil's composite link, eqs. 95-96). In a joint
    of several coordinates (a floating base) the known columns of a mixed joint get the identity's row and column
    in ``D_i`` and ``U_j = 0``: they then drop out of its inverse.
    """
    R, p, oR, op, d, S, h, I, v, c, a, IA, pA, U, D, u, y, D_inv, Ia, pa, Iv = w
    nb = m.nb
    for k in range(m.nv):
        if known[k]:
            qdd[k] = qdd_given[k]
        else:
            tau[k] = tau_given[k]
    set_identity(oR[-1], op[-1])
    set_at_rest(v[-1], a[-1])
    for i in range(nb):
        body_origin_motion(m, w, i, q)
        for j in range(m.col_start[i], m.col_start[i + 1]):
            rotate6(oR[i], m.S[j], S[j])
            add_scaled(v[i], m.col_mult[j] * qd[m.col_v[j]], S[j])
        for j in range(m.col_start[i], m.col_start[i + 1]):  # v_i x S_i qd_i, once v_i is complete
            cross_motion_add(v[i], S[j], m.col_mult[j] * qd[m.col_v[j]], c[i])
            if known[m.col_v[j]]:
                add_scaled(c[i], m.col_mult[j] * qdd[m.col_v[j]], S[j])
        body_bias(m, w, i, f_ext)
    for i in range(nb - 1, -1, -1):  # children have larger indices: IA_i, pA_i are complete here
        λ = m.parent[i]
        c0, c1 = m.col_start[i], m.col_start[i + 1]
        free = 0
        for j in range(c0, c1):
            k = m.col_v[j]
            if known[k]:
                U[j] = 0.0
                u[j] = 0.0
            else:
                free += 1
                matrix_times(IA[i], S[j], U[j])
                u[j] = tau[k] - drive_friction(m, j, qd[k]) - dot6(S[j], pA[i])
        if free == 0:  # a composite body (Khalil eqs. 95-96): all of it moves with its parent
            if λ >= 0:
                matrix_times(IA[i], c[i], pa)
                add_scaled(pa, 1.0, pA[i])
                inertia_shift_add(d[i], IA[i], IA[λ])
                force_shift_add(d[i], pa, pA[λ])
            continue
        if c1 - c0 == 1:  # its one column has a known force (else the body is composite)
            if not one_column_articulated(m, w, i, c0):
                return SINGULAR + m.col_v[c0]
        else:
            for j in range(c0, c1):
                known_j = known[m.col_v[j]]
                y[j] = 1.0 if known_j else column_scale(IA[i], S[j], m.armature[j])
                for k in range(c0, j):
                    D[j - c0, k - c0] = 0.0 if known_j or known[m.col_v[k]] else dot6(S[j], U[k])
                D[j - c0, j - c0] = 1.0 if known_j else dot6(S[j], U[j]) + m.armature[j]
            bad = ldl_inverse(D, c1 - c0, y[c0:c1], D_inv[i])
            if bad >= 0:
                return SINGULAR + m.col_v[c0 + bad]
            if λ >= 0:
                articulated_inertia(w, i, c0, c1)
        if λ >= 0:
            pass_to_parent(w, i, λ, c0, c1)
    base_acceleration(gravity, a[-1])
    for i in range(nb):
        c0, c1 = m.col_start[i], m.col_start[i + 1]
        motion_shift(d[i], a[m.parent[i]], a[i])
        add_scaled(a[i], 1.0, c[i])
        for j in range(c0, c1):
            y[j] = u[j] - dot6(U[j], a[i])
        for j in range(c0, c1):
            k = m.col_v[j]
            if not known[k]:
                qdd[k] = 0.0
                for l in range(c0, c1):
                    qdd[k] += D_inv[i, j - c0, l - c0] * y[l]
                add_scaled(a[i], qdd[k], S[j])
    for j in range(m.ncol):
        if known[m.col_v[j]]:
            tau[m.col_v[j]] = 0.0
    f[-1] = 0.0
    for i in range(nb):
        matrix_times(IA[i], a[i], pa)
        add_scaled(pa, 1.0, pA[i])
        for j in range(m.col_start[i], m.col_start[i + 1]):
            k = m.col_v[j]
            if known[k]:
                tau[k] += m.col_mult[j] * dot6(S[j], pa) + drive_torque(m, j, qd[k], qdd[k])
        rotate6(oR[i].T, pa, f[i])  # to the body's axes
        if m.parent[i] < 0:
            force_shift_add(d[i], pa, f[-1])
    return OK


@helper
def hybrid_step(m, w, q, qd, qdd, tau, f_ext, gravity, known):
    """Hybrid dynamics of one state, and the joint loads."""
    status = hybrid_articulated_body(m, w.aba, known, q, qd, qdd, tau, gravity, f_ext, w.accelerations, w.torques,
                                     w.f)
    joint_loads(m, w.f, w.joint_wrenches, w.base_wrench)
    return status


class HybridDynamicsResult(NamedTuple):
    """``accelerations`` ``(…, nv)`` and ``torques`` ``(…, nv)``: every coordinate's acceleration and generalised
    force, the given ones copied; ``joint_wrenches`` ``(…, len(joint_names), 6)`` and ``base_wrench`` ``(…, 6)``
    as in :class:`~rne_dynamics.algorithms.rnea.InverseDynamicsResult` (``inverse_dynamics`` of ``accelerations``
    gives back ``torques`` and these wrenches)."""
    accelerations: np.ndarray
    torques: np.ndarray
    joint_wrenches: np.ndarray
    base_wrench: np.ndarray


def known_coordinates(robot, known_acceleration):
    """The ``known_acceleration`` argument as a boolean array ``(nv,)``: ``True`` where the acceleration is given.
    Accepts booleans per velocity coordinate, or names: a joint of ``joint_names``, the floating base's joint
    (``robot.base_joint``: its 6 coordinates) or one coordinate of ``robot.v_names``."""
    x = np.asarray(known_acceleration)
    if x.dtype == bool:
        if x.shape != (robot.nv,):
            raise StateError(f"known_acceleration has shape {x.shape}; robot '{robot.name}' needs ({robot.nv},) "
                             f"booleans, one per velocity coordinate ({', '.join(robot.v_names)})")
        return np.array(x)  # a contiguous, writable copy: the one array type the compiled call takes
    if x.ndim == 0:
        x = x.reshape(1)
    if x.ndim != 1 or not all(isinstance(name, str) for name in x.tolist()):
        raise StateError("known_acceleration must be nv booleans (True: acceleration given) or a list of joint or "
                         f"coordinate names, got {known_acceleration!r}")
    known = np.zeros(robot.nv, dtype=bool)
    for name in x.tolist():
        if name in robot.idx_v:
            body = next(b for b in robot.bodies if b.joint == name and not b.mimic)
            known[body.idx_v:body.idx_v + body.nv] = True
        elif name in robot.v_names:
            known[robot.v_names.index(name)] = True
        else:
            raise StateError(f"known_acceleration: robot '{robot.name}' has no joint or velocity coordinate "
                             f"'{name}' (joints: {', '.join(robot.joint_names)}; coordinates: "
                             f"{', '.join(robot.v_names)})")
    return known


def recursive(robot, known):
    """Whether the articulated-body recursion applies: every mimic column follows a coordinate of known acceleration
    (a mimic column of unknown acceleration couples two bodies through one coordinate)."""
    return not any(b.mimic and not known[b.idx_v] for b in robot.bodies)


HYBRID = Algorithm(hybrid_step, hybrid_memory, ("q", "qd", "qdd", "tau"), "the accelerations and forces",
                   HybridDynamicsResult, gravity=True, wrenches=True, extras=("known",))


def hybrid_dynamics(robot, q, qd, qdd, tau, *, known_acceleration, gravity=None, external_wrenches=None, data=None,
                    drive=True):
    """Hybrid dynamics: the accelerations of the coordinates whose force is known and the forces of those whose
    acceleration is known, in one O(n) pass (Featherstone, RBDA Sec. 9.2; Khalil 2010 Sec. 6-7).

    ``known_acceleration``: ``nv`` booleans, ``True`` where the acceleration is given (in ``qdd``), ``False`` where
    the generalised force is (in ``tau``); or the names of the joints (or of coordinates of ``robot.v_names``) whose
    acceleration is given. The other entries of ``qdd`` and ``tau`` are not read, but must be finite (zeros, say).
    Everything known is an inverse-dynamics call, nothing known a forward-dynamics one. Examples: a free-floating
    base under a joint trajectory (``known_acceleration=robot.joint_names``, the base's 6 forces 0: see
    :func:`free_floating_inverse_dynamics`), a passive joint (its force 0), an elastic joint (``-K (q - q0)``).

    ``gravity``, ``external_wrenches``, drives (rotor inertia, friction; none with ``drive=False``) and the joint
    wrenches as in :func:`rne_dynamics.inverse_dynamics`: ``tau`` is the drive's torque, so friction is part of the
    balance.
    One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, …)``, one mask for all; ``data``: a
    ``robot.data()`` to compute in. Returns a :class:`HybridDynamicsResult`. Raises
    :class:`~rne_dynamics.errors.SingularMassMatrixError` when a coordinate of known force drives no mass.

    Robots whose mimic joints follow a coordinate of known force are solved as the partitioned system
    ``M_FF qdd_F = tau_F - (M qdd_K + bias)_F`` (``M`` by the CRBA, Khalil eq. 88), then inverse dynamics.
    """
    known = known_coordinates(robot, known_acceleration)
    if robot.has_mimic and not recursive(robot, known):
        return partitioned(robot, known, q, qd, qdd, tau, gravity, external_wrenches, data, drive)
    return HYBRID.run(robot, data, (q, qd, qdd, tau), gravity, external_wrenches, extras=(known,), drive=drive)


def partitioned(robot, known, q, qd, qdd, tau, gravity, external_wrenches, data, drive):
    """:func:`hybrid_dynamics` by the partitioned system (Khalil eq. 83-88) with ``M`` from the CRBA and the rest
    from inverse dynamics: ``h = ID(q, qd, [qdd_K; 0])``, ``M_FF qdd_F = tau_F - h_F``, then ``ID(q, qd, qdd)``."""
    q, qd, qdd, tau = states(robot, q=q, qd=qd, qdd=qdd, tau=tau)
    free = ~known
    accelerations = np.where(known, qdd, 0.0)
    h = inverse_dynamics(robot, q, qd, accelerations, gravity=gravity, external_wrenches=external_wrenches,
                         drive=drive).torques
    M = mass_matrix(robot, q, drive=drive)[..., free[:, None] & free[None, :]].reshape(q.shape[:-1] + (free.sum(),) * 2)
    try:
        accelerations[..., free] = np.linalg.solve(M, (tau[..., free] - h[..., free])[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a coordinate that drives nothing has a zero row: name the first one
        pivots = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, M.shape[-1]).min(axis=0)
        raise singular(robot, int(np.flatnonzero(free)[np.argmin(pivots)]), "") from None
    result = inverse_dynamics(robot, q, qd, accelerations, gravity=gravity, external_wrenches=external_wrenches,
                              data=data, drive=drive)
    torques = result.torques.copy()
    torques[..., free] = tau[..., free]  # the given forces as given, not as recomputed
    return HybridDynamicsResult(accelerations, torques, result.joint_wrenches, result.base_wrench)
