"""Analytic derivatives of inverse dynamics, of the joint reaction wrenches and of forward dynamics.

Forward-mode differentiation of the recursive Newton-Euler algorithm (RBDA Table 5.1): after one RNEA pass, one
forward and one backward sweep per joint coordinate ``x_k`` (``x`` is ``q``, ``qd`` or ``qdd``, all three at once).
Body ``i`` moves by ``theta_i = q_mult_i x[q_index_i] + q_offset_i`` (a mimic follows its source), so
``dtheta_i/dx_k = q_mult_i`` when ``q_index_i == k`` and 0 otherwise; call it ``delta_i``.

The one non-obvious derivative is that of the joint transform. ``X_i = X_J(theta_i) X_T`` with ``S_i`` constant in
the body frame, so ``dX_i/dtheta_i = -S_i x X_i`` and, for the force transform, ``d(X_i^T f)/dtheta_i =
X_i^T (S_i x* f)``. With ``X_i v_λ = v_i - S_i qd_i`` and ``S_i x S_i = 0``, differentiating every RNEA line gives

    w.r.t. q_k:   dv_i = X_i dv_λ + delta_i v_i x S_i
                  da_i = X_i da_λ + delta_i (X_i a_λ) x S_i + dv_i x S_i qd_i
    w.r.t. qd_k:  dv_i = X_i dv_λ + delta_i S_i
                  da_i = X_i da_λ + dv_i x S_i qd_i + delta_i v_i x S_i
    w.r.t. qdd_k: dv_i = 0,  da_i = X_i da_λ + delta_i S_i
    then          df_i = I_i da_i + dv_i x* I_i v_i + v_i x* I_i dv_i       (external wrenches: body-fixed, constant)
    backwards     dtau[q_index_i] += q_mult_i S_i^T df_i
                  df_λ += X_i^T df_i + delta_i X_i^T (S_i x* f_i)          (q only; f_i the accumulated joint wrench)

``df_i`` are the derivatives of the joint reaction wrenches themselves. A sweep visits only the bodies ``x_k`` can
change: the subtrees of the bodies it drives (their motion) and, backwards, their ancestors (their loads).
The drive terms of :func:`~rne_dynamics.rnea.drive_torques_add` add ``armature`` to ``dtau/dqdd`` and ``damping`` to
``dtau/dqd``; Coulomb friction ``sign(qd)`` has zero derivative wherever ``qd != 0`` (undefined at 0, taken as 0).
"""
from collections import namedtuple

import numpy as np

from ._jit import batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .aba import forward_dynamics
from .inputs import body_wrenches, gravity_vector, states
from .joints import X_up, joint_coordinate
from .model import model_view
from .spatial import (add_scaled, cross_force_add, cross_motion_add, dot6, force_to_parent_add, inertia_times,
                      motion_to_child)


@helper
def wrench_of_motion(m, i, v, dv, a_i, out, Iv, Idv):
    """``out = I_i a_i + dv x* I_i v + v x* I_i dv``: the first-order change of ``I a + v x* I v``."""
    inertia_times(m.mass[i], m.h[i], m.I[i], a_i, out)
    inertia_times(m.mass[i], m.h[i], m.I[i], dv, Idv)
    cross_force_add(dv, Iv, out)
    cross_force_add(v, Idv, out)


DerivativesWorkspace = namedtuple("DerivativesWorkspace", "R p v a Xa f Iv qd_body dv_q da_q df_q dv_qd da_qd df_qd "
                                                          "da_qdd df_qdd Idv Sf moves loads")


@kernel
def derivatives_workspace(nb):
    """Per-call arrays: the RNEA quantities (with a base row), ``X_i a_λ``, and one coordinate's derivatives."""
    return DerivativesWorkspace(
        np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros((nb + 1, 6)), np.zeros((nb + 1, 6)), np.empty((nb, 6)),
        np.zeros((nb + 1, 6)), np.empty((nb, 6)), np.empty(nb),
        np.empty((nb + 1, 6)), np.empty((nb + 1, 6)), np.empty((nb + 1, 6)), np.empty((nb + 1, 6)),
        np.empty((nb + 1, 6)), np.empty((nb + 1, 6)), np.empty((nb + 1, 6)), np.empty((nb + 1, 6)),
        np.empty(6), np.empty(6), np.zeros(nb + 1, dtype=np.bool_), np.zeros(nb + 1, dtype=np.bool_))


@kernel
def differentiate_newton_euler(m, w, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd,
                               dw_dqdd):
    """Derivatives of RNEA for one state (module docstring): writes the three ``(dof, dof)`` torque Jacobians and,
    when ``dw_dq.shape[0] > 0``, the ``(dof, 6, dof)`` joint-wrench Jacobians.

    One RNEA pass for ``v, a, f``, then one forward and one backward sweep per coordinate ``k`` over the bodies it
    moves (``moves``: its bodies' subtrees) and loads (``loads``: those and their ancestors); rows outside
    ``moves``/``loads`` are never read.
    """
    nb, dof = m.nb, m.dof
    R, p, v, a, Xa, f, Iv, qd_body = w.R, w.p, w.v, w.a, w.Xa, w.f, w.Iv, w.qd_body
    dv_q, da_q, df_q, dv_qd, da_qd, df_qd, da_qdd, df_qdd = (w.dv_q, w.da_q, w.df_q, w.dv_qd, w.da_qd, w.df_qd,
                                                             w.da_qdd, w.df_qdd)
    moves, loads = w.moves, w.loads
    a[-1, 0:3] = -gravity
    f[-1] = 0.0
    for i in range(nb):
        λ = m.parent[i]
        qd_body[i] = joint_coordinate(m, i, qd)
        X_up(m, i, q, R[i], p[i])
        motion_to_child(R[i], p[i], v[λ], v[i])
        add_scaled(v[i], qd_body[i], m.S[i])
        motion_to_child(R[i], p[i], a[λ], Xa[i])
        a[i] = Xa[i]
        add_scaled(a[i], joint_coordinate(m, i, qdd), m.S[i])
        cross_motion_add(v[i], m.S[i], qd_body[i], a[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], v[i], Iv[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
        cross_force_add(v[i], Iv[i], f[i])
        if f_ext.shape[0] > 0:
            add_scaled(f[i], -1.0, f_ext[i])
    for i in range(nb - 1, -1, -1):
        force_to_parent_add(R[i], p[i], f[i], f[m.parent[i]])

    dtau_dq[:] = 0.0
    dtau_dqd[:] = 0.0
    dtau_dqdd[:] = 0.0
    for k in range(dof):
        moves[:] = False
        for i in range(nb):
            λ = m.parent[i]
            drives = m.q_index[i] == k
            moves[i] = moves[λ] or drives
            loads[i] = moves[i]
            if not moves[i]:
                continue
            if moves[λ]:
                motion_to_child(R[i], p[i], dv_q[λ], dv_q[i])
                motion_to_child(R[i], p[i], da_q[λ], da_q[i])
                motion_to_child(R[i], p[i], dv_qd[λ], dv_qd[i])
                motion_to_child(R[i], p[i], da_qd[λ], da_qd[i])
                motion_to_child(R[i], p[i], da_qdd[λ], da_qdd[i])
            else:  # the first body coordinate k moves
                dv_q[i] = 0.0
                da_q[i] = 0.0
                dv_qd[i] = 0.0
                da_qd[i] = 0.0
                da_qdd[i] = 0.0
            if drives:
                cross_motion_add(v[i], m.S[i], m.q_mult[i], dv_q[i])
                cross_motion_add(Xa[i], m.S[i], m.q_mult[i], da_q[i])
                add_scaled(dv_qd[i], m.q_mult[i], m.S[i])
                cross_motion_add(v[i], m.S[i], m.q_mult[i], da_qd[i])
                add_scaled(da_qdd[i], m.q_mult[i], m.S[i])
            cross_motion_add(dv_q[i], m.S[i], qd_body[i], da_q[i])
            cross_motion_add(dv_qd[i], m.S[i], qd_body[i], da_qd[i])
            wrench_of_motion(m, i, v[i], dv_q[i], da_q[i], df_q[i], Iv[i], w.Idv)
            wrench_of_motion(m, i, v[i], dv_qd[i], da_qd[i], df_qd[i], Iv[i], w.Idv)
            inertia_times(m.mass[i], m.h[i], m.I[i], da_qdd[i], df_qdd[i])
        loads[nb] = False
        for i in range(nb - 1, -1, -1):
            if not loads[i]:
                continue
            λ = m.parent[i]
            j = m.q_index[i]
            dtau_dq[j, k] += m.q_mult[i] * dot6(m.S[i], df_q[i])
            dtau_dqd[j, k] += m.q_mult[i] * dot6(m.S[i], df_qd[i])
            dtau_dqdd[j, k] += m.q_mult[i] * dot6(m.S[i], df_qdd[i])
            if not loads[λ]:  # the parent's first load from coordinate k
                df_q[λ] = 0.0
                df_qd[λ] = 0.0
                df_qdd[λ] = 0.0
                loads[λ] = True
            force_to_parent_add(R[i], p[i], df_q[i], df_q[λ])
            force_to_parent_add(R[i], p[i], df_qd[i], df_qd[λ])
            force_to_parent_add(R[i], p[i], df_qdd[i], df_qdd[λ])
            if j == k:  # the joint transform itself turns with q_k
                Sf = w.Sf
                Sf[:] = 0.0
                cross_force_add(m.S[i], f[i], Sf)
                for c in range(6):
                    Sf[c] *= m.q_mult[i]
                force_to_parent_add(R[i], p[i], Sf, df_q[λ])
        if dw_dq.shape[0] > 0:
            for jj in range(dof):
                b = m.dof_body[jj]
                for c in range(6):
                    dw_dq[jj, c, k] = df_q[b, c] if loads[b] else 0.0
                    dw_dqd[jj, c, k] = df_qd[b, c] if loads[b] else 0.0
                    dw_dqdd[jj, c, k] = df_qdd[b, c] if loads[b] else 0.0
    for k in range(dof):
        dtau_dqd[k, k] += m.damping[k]
        dtau_dqdd[k, k] += m.armature[k]


@kernel
def rnea_derivatives(fdata, idata, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd, dw_dqdd):
    """:func:`differentiate_newton_euler` for one state, with its own workspace."""
    m = model_view(fdata, idata)
    differentiate_newton_euler(m, derivatives_workspace(m.nb), q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd,
                               dtau_dqdd, dw_dq, dw_dqd, dw_dqdd)


@batch_kernel
def rnea_derivatives_batch(fdata, idata, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd,
                           dw_dq, dw_dqd, dw_dqdd):
    """:func:`differentiate_newton_euler` for each row of a batch; chunks of states in parallel, one workspace
    each."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # per chunk: numba's parallel loops cannot take a named tuple from outside
        w = derivatives_workspace(m.nb)
        for n in chunk_rows(chunk, q.shape[0]):
            differentiate_newton_euler(m, w, q[n], qd[n], qdd[n], gravity, f_ext[n], dtau_dq[n], dtau_dqd[n],
                                       dtau_dqdd[n], dw_dq[n], dw_dqd[n], dw_dqdd[n])


def _derivatives(robot, q, qd, qdd, gravity, external_wrenches, wrenches):
    """Run the kernel; returns the torque Jacobians and, if ``wrenches``, the joint-wrench Jacobians."""
    q, qd, qdd = states(robot, q=q, qd=qd, qdd=qdd)
    g = gravity_vector(gravity)
    batch = q.shape[:-1]
    dof = robot.dof
    f_ext = body_wrenches(robot, external_wrenches, q.shape[0] if batch else 1)
    jacobians = [np.empty(batch + (dof, dof)) for _ in range(3)]
    wrench_shape = (dof, 6, dof) if wrenches else (0, 6, 0)
    wrench_jacobians = [np.empty(batch + wrench_shape) for _ in range(3)]
    if batch:
        rnea_derivatives_batch(robot.fdata, robot.idata, q, qd, qdd, g,
                               np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]), *jacobians, *wrench_jacobians)
    else:
        rnea_derivatives(robot.fdata, robot.idata, q, qd, qdd, g, f_ext[0], *jacobians, *wrench_jacobians)
    return tuple(jacobians), tuple(wrench_jacobians)


def inverse_dynamics_derivatives(robot, q, qd, qdd, *, gravity=None, external_wrenches=None):
    """``(dtau_dq, dtau_dqd, dtau_dqdd)`` of :func:`~rne_dynamics.inverse_dynamics`, each ``(…, dof, dof)``, row =
    torque, column = coordinate; ``dtau_dqdd`` is the mass matrix (armature included).

    Exact (forward-mode RNEA, see the module docstring), drive terms included: ``damping`` on the diagonal of
    ``dtau_dqd``; Coulomb friction contributes nothing (its derivative is 0 for ``qd != 0``). External wrenches, as
    in ``inverse_dynamics``, are fixed in their links' frames. One state ``(dof,)`` or a batch ``(N, dof)``.
    """
    return _derivatives(robot, q, qd, qdd, gravity, external_wrenches, wrenches=False)[0]


def joint_wrench_derivatives(robot, q, qd, qdd, *, gravity=None, external_wrenches=None):
    """``(dW_dq, dW_dqd, dW_dqdd)``, each ``(…, dof, 6, dof)``: ``dW_dq[..., j, :, k]`` is the derivative of the
    joint wrench of joint ``j`` (``inverse_dynamics(...).joint_wrenches[..., j, :]``: child-link frame, about the
    joint origin) with respect to ``q[k]``. Rigid-body loads only, as the joint wrenches are (drive friction and
    armature act inside the drive, not across the joint)."""
    return _derivatives(robot, q, qd, qdd, gravity, external_wrenches, wrenches=True)[1]


def forward_dynamics_derivatives(robot, q, qd, tau, *, gravity=None, external_wrenches=None):
    """``(dqdd_dq, dqdd_dqd, dqdd_dtau)`` of :func:`~rne_dynamics.forward_dynamics`, each ``(…, dof, dof)``.

    Differentiating ``ID(q, qd, FD(q, qd, tau)) = tau`` gives ``dqdd/dx = -M^-1 dtau/dx`` for ``x`` in ``q, qd``
    (evaluated at ``qdd = FD(q, qd, tau)``) and ``dqdd/dtau = M^-1``, ``M`` with armature. Friction as in
    :func:`inverse_dynamics_derivatives`.
    """
    qdd = forward_dynamics(robot, q, qd, tau, gravity=gravity, external_wrenches=external_wrenches)
    dtau_dq, dtau_dqd, M = inverse_dynamics_derivatives(robot, q, qd, qdd, gravity=gravity,
                                                        external_wrenches=external_wrenches)
    M_inv = np.linalg.inv(M)
    return -M_inv @ dtau_dq, -M_inv @ dtau_dqd, M_inv
