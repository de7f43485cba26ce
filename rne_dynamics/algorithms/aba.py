"""Forward dynamics ``qdd = M^-1 (tau - bias - friction)`` by the articulated-body algorithm (Featherstone, RBDA
Table 7.1), O(n), with external wrenches and, on request, the joint reaction wrenches.

Drives: the rotor inertia (armature) of joint ``i`` adds to ``D_i``; viscous and Coulomb friction oppose the motion,
``tau_eff = tau - damping qd - friction sign(qd)``, exactly as :func:`rne_dynamics.inverse_dynamics` adds them.

Mimic joints move two bodies with one coordinate, which breaks ABA's one-coordinate-per-body recursion; robots with
mimic joints are solved as ``M qdd = tau - rnea(q, qd, 0)`` with ``M`` from the CRBA and a Cholesky factorisation
``M = L^T L`` that skips the zeros a tree leaves in ``M`` (RBDA Sec. 6.1-6.3; O(n^3) at worst).

A movable joint that drives no mass and no rotor inertia leaves ``qdd`` undefined: ABA's ``D_i`` (or the Cholesky
pivot) is not positive, and :class:`~rne_dynamics.errors.SingularMassMatrixError` names the joint. "Not positive" is
relative: ``D_i <= 1e-12`` times the articulated inertia about (along) the joint axis, or a pivot ``<= 1e-12`` times
the largest diagonal entry of ``M``.
"""
from collections import namedtuple
from typing import NamedTuple

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .crba import composite_rigid_body, crba_views
from ..errors import SingularMassMatrixError, StateError
from .inputs import NO_WRENCHES, all_finite, body_wrenches, gravity_vector, not_finite, states
from ..model.joints import X_up
from ..model.robot import model_view_inline
from .rnea import drive_torques_add, newton_euler, rnea_views
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, dot6, force_shift_add,
                      inertia_shift_add, inertia_times, matrix_times, motion_shift, pose_compose, rigid_inertia_matrix,
                      rotate, rotate6, rotate_inertia, set_at_rest, set_identity)

#: ``D_i`` (or a Cholesky pivot) at or below this fraction of its scale counts as zero.
SINGULAR_RATIO = 1e-12
#: The status of a state whose inputs or accelerations hold a NaN or an inf (other statuses: ``-1`` solved, ``k``
#: the coordinate of a joint that drives no mass).
NOT_FINITE = -2


AbaWorkspace = namedtuple("AbaWorkspace", "R p oR op d S h I v c a IA pA U D u Ia pa Iv")


@helper
def aba_views(block):
    """The arrays of the ABA as views of one ``(nb + 2, 16, 6)`` block (one allocation). Per body and a base row:
    ``IA`` (rows 0-5), the root-frame pose ``(oR, op)`` (rows 6-8 and 9 of columns 0:3; the root's, identity, in
    the base row), ``v``, ``a``, ``pA`` (rows 10-12); per body: the origin's offset ``d`` from its parent's (row 9,
    columns 3:6), ``S``, ``c``, ``U`` (rows 13-15), ``D`` and ``u`` (row 6, columns 3 and 4). For one body at a
    time, in the last row: ``Ia``, its pose in its parent ``(R, p)``, its root-axes ``I`` and ``h``, ``pa``,
    ``Iv``."""
    nb = block.shape[0] - 2
    x = block[nb + 1]
    w = AbaWorkspace(x[6:9, 0:3], x[9, 0:3], block[:nb + 1, 6:9, 0:3], block[:nb + 1, 9, 0:3], block[:nb, 9, 3:6],
                     block[:nb, 13], x[9, 3:6], x[6:9, 3:6], block[:nb + 1, 10], block[:nb, 14], block[:nb + 1, 11],
                     block[:nb + 1, 0:6], block[:nb + 1, 12], block[:nb, 15], block[:nb, 6, 3], block[:nb, 6, 4],
                     x[0:6], x[10], x[11])
    set_identity(w.oR[nb], w.op[nb])
    set_at_rest(w.v[nb], w.a[nb])
    return w


@helper
def aba_block(nb):
    """The memory of an ABA workspace (:func:`aba_views`)."""
    return np.empty((nb + 2, 16, 6))


@arithmetic_kernel
def articulated_body(m, w, q, qd, tau, gravity, f_ext, qdd, f):
    """ABA (RBDA Table 7.1) for one state of a robot without mimic joints. Writes ``qdd`` and, when ``f`` has rows
    ``(nb + 1, 6)``, the joint wrenches ``f_i = IA_i a_i + pA_i`` (``f[-1]``: the base's share). Returns ``-1``, or
    the coordinate of the first joint found with ``D_i`` not positive (``qdd`` is then not written).

    Body ``i``'s quantities are taken about its origin with the root's axes: each body's rotation is composed once,
    and ``X_i`` from its parent is a translation by ``d_i`` (the origin's offset), so no articulated inertia is
    rotated (as Pinocchio's world convention; about each body's own origin, tiny distal inertias keep their digits):
        v_i = X_i v_λ + S_i qd_i,   c_i = v_i x S_i qd_i,   IA_i = I_i,   pA_i = v_i x* I_i v_i - f_ext_i
        U_i = IA_i S_i,   D_i = S_i^T U_i + armature_i,   u_i = tau_eff_i - S_i^T pA_i
        IA_λ += X_i^T (IA_i - U_i U_i^T / D_i) X_i,   pA_λ += X_i^T (pA_i + Ia_i c_i + U_i u_i / D_i)
        a'_i = X_i a_λ + c_i,   qdd_i = (u_i - U_i^T a'_i) / D_i,   a_i = a'_i + S_i qdd_i
    """
    R, p, oR, op, d, S, h, I, v, c, a, IA, pA, U, D, u, Ia, pa, Iv = w
    nb = m.nb
    IA[-1] = 0.0
    pA[-1] = 0.0
    for i in range(nb):
        λ = m.parent[i]
        k = m.q_index[i]
        X_up(m, i, q, R, p)
        pose_compose(oR[λ], op[λ], R, p, oR[i], op[i])
        for r in range(3):
            d[i, r] = op[i, r] - op[λ, r]
        rotate6(oR[i], m.S[i], S[i])
        h[0], h[1], h[2] = rotate(oR[i], m.h[i, 0], m.h[i, 1], m.h[i, 2])
        rotate_inertia(oR[i], m.I[i], I)
        motion_shift(d[i], v[λ], v[i])
        add_scaled(v[i], qd[k], S[i])
        c[i] = 0.0
        cross_motion_add(v[i], S[i], qd[k], c[i])
        rigid_inertia_matrix(m.mass[i], h, I, IA[i])
        inertia_times(m.mass[i], h, I, v[i], Iv)
        pA[i] = 0.0
        cross_force_add(v[i], Iv, pA[i])
        if f_ext.shape[0] > 0:
            rotate6(oR[i], f_ext[i], Iv)
            add_scaled(pA[i], -1.0, Iv)
    for i in range(nb - 1, -1, -1):  # children have larger indices: IA_i, pA_i are complete here
        λ = m.parent[i]
        k = m.q_index[i]
        matrix_times(IA[i], S[i], U[i])
        D[i] = dot6(S[i], U[i]) + m.armature[k]
        scale = m.armature[k]  # the articulated inertia about (along) the joint axis, for a relative test
        for r in range(3):
            scale += (S[i, 0] * S[i, 0] + S[i, 1] * S[i, 1] + S[i, 2] * S[i, 2]) * IA[i, r, r]
            scale += (S[i, 3] * S[i, 3] + S[i, 4] * S[i, 4] + S[i, 5] * S[i, 5]) * IA[i, 3 + r, 3 + r]
        if not D[i] > SINGULAR_RATIO * scale:  # also catches NaN
            return k
        u[i] = tau[k] - m.damping[k] * qd[k] - m.friction[k] * np.sign(qd[k]) - dot6(S[i], pA[i])
        D_inv = 1.0 / D[i]
        for r in range(6):
            for s in range(6):
                Ia[r, s] = IA[i, r, s] - U[i, r] * U[i, s] * D_inv
        matrix_times(Ia, c[i], pa)
        add_scaled(pa, 1.0, pA[i])
        add_scaled(pa, u[i] * D_inv, U[i])
        inertia_shift_add(d[i], Ia, IA[λ])
        force_shift_add(d[i], pa, pA[λ])
    base_acceleration(gravity, a[-1])
    for i in range(nb):
        k = m.q_index[i]
        motion_shift(d[i], a[m.parent[i]], a[i])
        add_scaled(a[i], 1.0, c[i])
        qdd[k] = (u[i] - dot6(U[i], a[i])) / D[i]
        add_scaled(a[i], qdd[k], S[i])
    if f.shape[0] > 0:
        f[-1] = 0.0
        for i in range(nb):
            matrix_times(IA[i], a[i], pa)
            add_scaled(pa, 1.0, pA[i])
            rotate6(oR[i].T, pa, f[i])  # to the body's axes
            if m.parent[i] < 0:
                force_shift_add(d[i], pa, f[-1])
    return -1


@arithmetic_kernel
def cholesky_solve(M, x):
    """``x = M^-1 x`` in place by ``M = L^T L``, factorised from the last row up (RBDA Table 6.3, ``M``'s lower
    triangle is overwritten by ``L``): coordinates of a tree in topological order leave no fill-in, so the update of
    a row ``k`` skips its zeros (the coordinates that are not its ancestors). Returns ``-1``, or the last column
    whose pivot is not positive (relative to the largest diagonal entry)."""
    n = M.shape[0]
    scale = 0.0
    for k in range(n):
        scale = max(scale, M[k, k])
    for k in range(n - 1, -1, -1):
        if not M[k, k] > SINGULAR_RATIO * scale:
            return k
        M[k, k] = np.sqrt(M[k, k])
        for i in range(k):
            M[k, i] /= M[k, k]
        for i in range(k):
            L_ki = M[k, i]
            if L_ki != 0.0:
                for j in range(i + 1):
                    M[i, j] -= L_ki * M[k, j]
    for k in range(n - 1, -1, -1):  # L^T y = x
        x[k] /= M[k, k]
        y_k = x[k]
        for i in range(k):
            x[i] -= M[k, i] * y_k
    for k in range(n):  # L x = y
        for i in range(k):
            x[k] -= M[k, i] * x[i]
        x[k] /= M[k, k]
    return -1


SolveWorkspace = namedtuple("SolveWorkspace", "crba rnea M bias zero")


@helper
def solve_views(block, nb, dof):
    """The arrays of :func:`mass_matrix_dynamics` as views of one flat block (:func:`solve_block`): the CRBA's and
    RNEA's workspaces, ``M``, the bias torques, zero accelerations."""
    n_crba, n_rnea = (nb + 2) * 36, (nb + 1) * 36
    n_M = n_crba + n_rnea + dof * dof
    zero = block[n_M + dof:n_M + 2 * dof]
    zero[:] = 0.0
    return SolveWorkspace(crba_views(block[:n_crba].reshape((nb + 2, 6, 6))),
                          rnea_views(block[n_crba:n_crba + n_rnea].reshape((nb + 1, 6, 6))),
                          block[n_crba + n_rnea:n_M].reshape((dof, dof)), block[n_M:n_M + dof], zero)


@helper
def solve_block(nb, dof):
    """The memory of :func:`solve_views`."""
    return np.empty((2 * nb + 3) * 36 + dof * dof + 2 * dof)


@arithmetic_kernel
def mass_matrix_dynamics(m, w, q, qd, tau, gravity, f_ext, qdd, f):
    """Forward dynamics for any tree, mimic joints included: ``M qdd = tau - rnea(q, qd, 0)`` (the RNEA term holds
    bias, external wrenches and drive friction), ``M`` by the CRBA, solved by Cholesky. Same outputs and return value
    as :func:`articulated_body`; the joint wrenches come from a second RNEA pass with the solved ``qdd``."""
    composite_rigid_body(m, w.crba, q, w.M)
    newton_euler(m, w.rnea, q, qd, w.zero, gravity, f_ext, w.bias, w.rnea.f)
    drive_torques_add(m, qd, w.zero, w.bias)
    for k in range(m.dof):
        qdd[k] = tau[k] - w.bias[k]
    bad = cholesky_solve(w.M, qdd)
    if bad >= 0:
        return bad
    if f.shape[0] > 0:
        newton_euler(m, w.rnea, q, qd, qdd, gravity, f_ext, w.bias, f)
    return -1


@helper
def forward_block(nb, dof):
    """The memory of the workspace of the algorithm :func:`forward` runs for this model: an ABA workspace
    (:func:`aba_views`) or a mass-matrix solve's (:func:`solve_views`), flat."""
    if nb == dof:
        return np.empty((nb + 2) * 96)
    return solve_block(nb, dof)


@kernel
def forward_workspace(nb, dof):
    """:func:`forward_block`, for callers that keep a workspace."""
    return forward_block(nb, dof)


@arithmetic_kernel
def forward(m, block, q, qd, tau, gravity, f_ext, qdd, f):
    """Forward dynamics of one state in the workspace ``block`` (:func:`forward_block`): ABA, or the mass-matrix
    solve when mimic joints make bodies outnumber coordinates. Outputs and return value of :func:`articulated_body`.
    """
    if m.nb == m.dof:
        return articulated_body(m, aba_views(block.reshape((m.nb + 2, 16, 6))), q, qd, tau, gravity, f_ext, qdd, f)
    return mass_matrix_dynamics(m, solve_views(block, m.nb, m.dof), q, qd, tau, gravity, f_ext, qdd, f)


@kernel
def finite_status(status, q, qd, tau, qdd):
    """:data:`NOT_FINITE` if an input, or the solved ``qdd``, is not finite (a NaN can pass for a singular joint);
    else ``status``."""
    if not (all_finite(q) and all_finite(qd) and all_finite(tau)) or (status < 0 and not all_finite(qdd)):
        return NOT_FINITE
    return status


@arithmetic_kernel
def forward_state(fdata, idata, block, q, qd, tau, gravity, f_ext, qdd, f):
    """:func:`forward` for one state, on the model's buffers."""
    return forward(model_view_inline(fdata, idata), block, q, qd, tau, gravity, f_ext, qdd, f)


@kernel
def forward_pass(fdata, idata, q, qd, tau, gravity, f_ext, qdd, f):
    """:func:`forward_state` with its own workspace; its status, or :data:`NOT_FINITE`."""
    status = forward_state(fdata, idata, forward_block(idata[0], idata[1]), q, qd, tau, gravity, f_ext, qdd, f)
    return finite_status(status, q, qd, tau, qdd)


@arithmetic_kernel
def forward_rows(fdata, idata, block, rows, q, qd, tau, gravity, f_ext, qdd, f, status):
    """:func:`forward_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        status[n] = forward_state(fdata, idata, block, q[n], qd[n], tau[n], gravity, f_ext[n], qdd[n], f[n])


@batch_kernel
def forward_pass_batch(fdata, idata, q, qd, tau, gravity, f_ext, qdd, f, status):
    """:func:`forward_pass` for each row of a batch, chunks in parallel, one workspace per chunk; ``status[n]`` is
    the row's return value."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        rows = chunk_rows(chunk, q.shape[0])
        forward_rows(fdata, idata, forward_block(idata[0], idata[1]), rows, q, qd, tau, gravity, f_ext, qdd, f,
                     status)
        for n in rows:
            status[n] = finite_status(status[n], q[n], qd[n], tau[n], qdd[n])


class ForwardDynamicsResult(NamedTuple):
    """``accelerations`` ``(…, dof)``: ``qdd``. ``joint_wrenches`` ``(…, dof, 6)`` and ``base_wrench`` ``(…, 6)``:
    the joint reaction wrenches of that motion, as in :class:`~rne_dynamics.rnea.InverseDynamicsResult`."""
    accelerations: np.ndarray
    joint_wrenches: np.ndarray
    base_wrench: np.ndarray


def accelerations(robot, q, qd, tau, g, f_ext, with_wrenches=False):
    """Forward dynamics on shaped arrays (``f_ext`` from :func:`~rne_dynamics.inputs.body_wrenches`): ``qdd``, or
    ``(qdd, f)`` with ``f`` ``(…, nb + 1, 6)``. Raises :class:`SingularMassMatrixError`, or a
    :class:`~rne_dynamics.errors.StateError` for a NaN or an inf."""
    if with_wrenches or q.ndim == 2:
        f = np.empty(q.shape[:-1] + ((robot.nb + 1) if with_wrenches else 0, 6))
    else:
        f = NO_WRENCHES[0]  # no rows: nothing is written
    qdd = np.empty(q.shape)
    if q.ndim == 2:
        status = np.empty(len(q), np.int64)
        forward_pass_batch(robot.fdata, robot.idata, q, qd, tau, g, np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]),
                           qdd, f, status)
        bad = np.flatnonzero(status != -1)
        state, status = (bad[0], status[bad[0]]) if bad.size else (None, -1)
    else:
        state, status = None, forward_pass(robot.fdata, robot.idata, q, qd, tau, g, f_ext[0], qdd, f)
    if status == NOT_FINITE:
        raise not_finite(robot, "the accelerations", q=q, qd=qd, tau=tau)
    if status >= 0:
        raise singular(robot, status, "" if state is None else f" at state {state}")
    return (qdd, f) if with_wrenches else qdd


def singular(robot, k, where):
    """The error for joint coordinate ``k`` driving no mass."""
    joint = robot.joint_names[k]
    return SingularMassMatrixError(
        f"forward dynamics of robot '{robot.name}' is undefined{where}: joint '{joint}' drives no mass and no rotor "
        f"inertia (its mass-matrix pivot is zero); give the links it moves mass, set its rotor inertia with "
        f"robot.with_drive(armature={{'{joint}': ...}}), or make it a fixed joint")


def forward_dynamics(robot, q, qd, tau, *, gravity=None, external_wrenches=None, joint_wrenches=False):
    """Joint accelerations ``qdd`` for positions ``q``, velocities ``qd`` and joint torques/forces ``tau``.

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. ``external_wrenches``:
    ``{link: [fx, fy, fz, tx, ty, tz]}`` applied on the link by the environment, link frame, about its origin.
    Returns ``qdd`` ``(…, dof)``; with ``joint_wrenches=True`` a :class:`ForwardDynamicsResult` that also holds the
    joint reaction wrenches of that motion. One state ``(dof,)`` or a batch ``(N, dof)``.
    Raises :class:`~rne_dynamics.errors.SingularMassMatrixError` naming a joint that drives no mass.
    """
    q, qd, tau = states(robot, finite=False, q=q, qd=qd, tau=tau)
    if not isinstance(joint_wrenches, bool):
        raise StateError(f"joint_wrenches must be True or False, got {joint_wrenches!r}")
    g = gravity_vector(gravity)
    f_ext = body_wrenches(robot, external_wrenches, q.shape[0] if q.ndim == 2 else 1)
    if not joint_wrenches:
        return accelerations(robot, q, qd, tau, g, f_ext)
    qdd, f = accelerations(robot, q, qd, tau, g, f_ext, with_wrenches=True)
    return ForwardDynamicsResult(qdd, np.take(f, robot.dof_body, axis=-2), f[..., -1, :])
