"""Analytic derivatives of inverse dynamics, of the joint reaction wrenches and of forward dynamics.

The algorithm of Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms" (RSS 2018), for
RNEA: every quantity is expressed in the frame of the fixed base (the world), where the spatial inertias and forces
of a subtree simply add up, and each (torque, coordinate) pair costs a few scalar products.

Body ``i`` (parent λ; ``X_i`` takes world coordinates to its own) turns by
``theta_i = q_mult_i q[q_index_i] + q_offset_i``. The algorithm differentiates with respect to the bodies' ``theta``;
the chain rule (``dtheta_i/dq_k = q_mult_i`` when ``q_index_i == k``) adds each body pair into its coordinates' cell,
so a mimic's torque reaches its source by virtual work. Forward pass, with ``J_i = X_i^-1 S_i`` the joint's motion
subspace in the world:

    V_i = v_λ x J_i,   A_i = a_λ x J_i + v_λ x V_i                                  (the paper's dv/dq, da/dq)
    v_i = v_λ + J_i qd_i,   a_i = a_λ + J_i qdd_i + V_i qd_i                        (a_base = -g; v_i x J_i = V_i)
    f_i = I_i a_i + v_i x* I_i v_i - f_ext_i                                        (I_i: world inertia)
    B_i x = v_i x* I_i x - I_i (v_i x x) + x x* I_i v_i                             (change of f_i as v gains x)

Backward pass: ``Ic_i``, ``Bc_i`` and ``F_i`` (the joint wrench, in the world) sum ``I``, ``B`` and ``f`` over the
subtree of ``i``. Turning ``theta_c`` turns the subtree of ``c`` rigidly about ``J_c``, which leaves ``J_r^T F_r``
unchanged for every ``r`` inside it (power does not depend on the frame), and adds ``V_c`` to its velocities and
``A_c + V_c x v_j`` to its accelerations; ``qd_c`` adds ``J_c`` and ``2 V_c + J_c x v_j``. Hence, for ``r`` an
ancestor of ``c`` or ``c`` itself (each column pair below is one body pair; ``r != c`` for the second column):

    dtau_r/dtheta_c = J_r^T (Ic_c A_c + Bc_c V_c + J_c x* F_c)     dtau_c/dtheta_r = J_c^T (Ic_c A_r + Bc_c V_r)
    dtau_r/dqd_c    = J_r^T (Ic_c 2 V_c + Bc_c J_c)                dtau_c/dqd_r    = J_c^T (Ic_c 2 V_r + Bc_c J_r)
    dtau_r/dqdd_c   = J_r^T Ic_c J_c                               dtau_c/dqdd_r   = the same (the mass matrix)

and every other pair is 0. ``B_i`` acts on the angular part only, ``B_i = [[0, -2 (P_i x)], [0, Bw_i]]`` with
``P_i`` the linear momentum and ``Bw_i = (w x) I - I (w x) + 2 (v.h) 1 - h v^T - v h^T - (k x)`` (``v_i = [v; w]``,
``h`` the first moment of mass, ``k`` the angular momentum), so ``Bc`` is kept as ``P`` and ``Bw`` summed.

The joint wrench of ``r`` in its own frame, ``W_r = X_r^* F_r``, turns with ``r`` and with its ancestors:

    dW_r/dtheta_c = X_r^* (Ic_c A_c + Bc_c V_c + J_c x* F_c)   for c a descendant of r (not r),
                  = X_r^* (Ic_r A_c + Bc_r V_c)                for c = r or an ancestor of r,

and so on for ``qd`` and ``qdd`` with the brackets of the torques. External wrenches are fixed in their bodies, so
they only turn with them. The drive terms of :func:`~rne_dynamics.rnea.drive_torques_add` add ``armature`` to
``dtau/dqdd`` and ``damping`` to ``dtau/dqd``; Coulomb friction ``sign(qd)`` has zero derivative wherever
``qd != 0`` (undefined at 0, taken as 0).
"""
from collections import namedtuple

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .aba import forward_dynamics
from .inputs import all_finite, body_wrenches, gravity_vector, not_finite, states
from ..model.joints import X_up, joint_coordinate
from ..model.robot import model_view_inline
from ..model.spatial import (add_scaled, base_acceleration, cross, cross_force_add, cross_motion_add, dot6, force_to_child,
                      force_to_parent_add, inertia_times, motion_to_parent, pose_compose, rigid_inertia_to_parent,
                      scaled_sum, set_at_rest, set_identity)


@helper
def coriolis_block(v, h, I, Iv, Bw):
    """``Bw = (w x) I - I (w x) + 2 (v.h) 1 - h v^T - v h^T - (k x)``: the angular block of ``B`` (module
    docstring) for velocity ``v = [v; w]``, first moment ``h``, inertia ``I`` and momentum ``Iv = [P; k]``."""
    for c in range(3):  # (w x) I, then its transpose added: I is symmetric, so -I (w x) = ((w x) I)^T
        Bw[0, c], Bw[1, c], Bw[2, c] = cross(v[3], v[4], v[5], I[0, c], I[1, c], I[2, c])
    vh = v[0] * h[0] + v[1] * h[1] + v[2] * h[2]
    for r in range(3):
        for c in range(r, 3):
            Bw[r, c] = Bw[c, r] = Bw[r, c] + Bw[c, r] - h[r] * v[c] - v[r] * h[c]
        Bw[r, r] += 2.0 * vh
    Bw[0, 1] += Iv[5]
    Bw[1, 0] -= Iv[5]
    Bw[0, 2] -= Iv[4]
    Bw[2, 0] += Iv[4]
    Bw[1, 2] += Iv[3]
    Bw[2, 1] -= Iv[3]


@helper
def coriolis_times_add(P, Bw, x, out):
    """``out += B x`` for ``B = [[0, -2 (P x)], [0, Bw]]``."""
    c0, c1, c2 = cross(P[0], P[1], P[2], x[3], x[4], x[5])
    out[0] -= 2.0 * c0
    out[1] -= 2.0 * c1
    out[2] -= 2.0 * c2
    for r in range(3):
        out[3 + r] += Bw[r, 0] * x[3] + Bw[r, 1] * x[4] + Bw[r, 2] * x[5]


@helper
def coriolis_transpose_times(P, Bw, J, out):
    """``out = (B^T J)[3:]``, the only nonzero part: ``2 P x J_lin + Bw^T J_ang``."""
    c0, c1, c2 = cross(P[0], P[1], P[2], J[0], J[1], J[2])
    out[0] = 2.0 * c0 + Bw[0, 0] * J[3] + Bw[1, 0] * J[4] + Bw[2, 0] * J[5]
    out[1] = 2.0 * c1 + Bw[0, 1] * J[3] + Bw[1, 1] * J[4] + Bw[2, 1] * J[5]
    out[2] = 2.0 * c2 + Bw[0, 2] * J[3] + Bw[1, 2] * J[4] + Bw[2, 2] * J[5]


@helper
def dot_angular(x3, m):
    """``x3 . m[3:]``: a 3-vector against the angular part of a motion vector."""
    return x3[0] * m[3] + x3[1] * m[4] + x3[2] * m[5]


@helper
def load_change(Ic_mass, Ic_h, Ic_I, P, Bw, dv, da, out):
    """``out = Ic da + Bc dv``: the change of a subtree's loads when its velocities gain ``dv`` and its
    accelerations ``da + dv x v_j`` (module docstring)."""
    inertia_times(Ic_mass, Ic_h, Ic_I, da, out)
    coriolis_times_add(P, Bw, dv, out)


DerivativesWorkspace = namedtuple("DerivativesWorkspace", "R p R0 p0 J v a V A mass_c h_c I_c P_c Bw_c F IcJ BtJ "
                                                          "dF_dq dF_dqd Iv work")


@helper
def derivatives_views(block):
    """The arrays of :func:`newton_euler_derivatives` as views of one ``(18, nb + 1, 6)`` block (one allocation),
    world frame, a row per body and the base's last, each array contiguous: ``v``, ``a``, ``F``, ``J``, ``V``, ``A``,
    ``Ic J``, ``dF/dtheta``, ``dF/dqd`` (planes 0-8); the pose ``R0``, the composites ``I_c``, ``Bw_c`` and ``X_up``'s
    ``R`` (planes 9-14); ``p0``, the composites ``h_c``, ``P_c`` and ``(B^T J)[3:]`` (planes 15-16); the composite mass
    and ``X_up``'s ``p`` (plane 17). The base rows of ``J`` and ``V`` to ``Ic J``, unused, hold one body's ``I v`` and
    three 6-vectors of scratch. Only the base rows of the pose and the motion are read before they are written: the
    base is the world, at rest.
    """
    nb = block.shape[1] - 1
    matrices = block[9:15].reshape((4, nb + 1, 3, 3))
    points = block[15:17].reshape((4, nb + 1, 3))
    scalars = block[17].reshape(6 * (nb + 1))
    w = DerivativesWorkspace(matrices[3, 0], scalars[nb + 1:nb + 4], matrices[0], points[0], block[3, :nb], block[0],
                             block[1], block[4, :nb], block[5, :nb], scalars[:nb + 1], points[1], matrices[1],
                             points[2], matrices[2], block[2], block[6, :nb], points[3, :nb], block[7, :nb],
                             block[8, :nb], block[3, nb], block[4:7, nb])
    set_identity(w.R0[nb], w.p0[nb])
    set_at_rest(w.v[nb], w.a[nb])
    return w


@helper
def derivatives_block(nb):
    """The memory of a derivatives workspace (:func:`derivatives_views`)."""
    return np.empty((18, nb + 1, 6))


@arithmetic_kernel
def newton_euler_derivatives(m, w, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd,
                             dw_dqdd):
    """Derivatives of RNEA for one state (module docstring): writes the three ``(dof, dof)`` torque Jacobians and,
    when ``dw_dq.shape[0] > 0``, the ``(dof, 6, dof)`` joint-wrench Jacobians (``dw[j, :, k]``: joint ``j``'s
    wrench in its child link's frame, with respect to coordinate ``k``)."""
    nb = m.nb
    R, p, R0, p0, J, v, a, V, A = w.R, w.p, w.R0, w.p0, w.J, w.v, w.a, w.V, w.A
    mass_c, h_c, I_c, P_c, Bw_c, F, IcJ, BtJ, dF_dq, dF_dqd, Iv = (w.mass_c, w.h_c, w.I_c, w.P_c, w.Bw_c, w.F,
                                                                    w.IcJ, w.BtJ, w.dF_dq, w.dF_dqd, w.Iv)
    f_ext_world, twice_V = w.work[0], w.work[1]  # scratch
    base_acceleration(gravity, a[-1])
    for i in range(nb):
        λ = m.parent[i]
        qd_i = joint_coordinate(m, i, qd)
        X_up(m, i, q, R, p)
        pose_compose(R0[λ], p0[λ], R, p, R0[i], p0[i])
        motion_to_parent(R0[i], p0[i], m.S[i], J[i])
        V[i] = 0.0
        cross_motion_add(v[λ], J[i], 1.0, V[i])
        scaled_sum(v[λ], qd_i, J[i], v[i])
        scaled_sum(a[λ], joint_coordinate(m, i, qdd), J[i], a[i])
        add_scaled(a[i], qd_i, V[i])
        A[i] = 0.0
        cross_motion_add(a[λ], J[i], 1.0, A[i])
        cross_motion_add(v[λ], V[i], 1.0, A[i])
        mass_c[i] = m.mass[i]  # the body's own world inertia; its subtree is added in the backward pass
        rigid_inertia_to_parent(R0[i], p0[i], m.mass[i], m.h[i], m.I[i], h_c[i], I_c[i])
        inertia_times(mass_c[i], h_c[i], I_c[i], v[i], Iv)
        inertia_times(mass_c[i], h_c[i], I_c[i], a[i], F[i])
        cross_force_add(v[i], Iv, F[i])
        if f_ext.shape[0] > 0:  # external wrenches given: body-fixed, seen in the world
            f_ext_world[:] = 0.0
            force_to_parent_add(R0[i], p0[i], f_ext[i], f_ext_world)
            add_scaled(F[i], -1.0, f_ext_world)
        P_c[i, 0], P_c[i, 1], P_c[i, 2] = Iv[0], Iv[1], Iv[2]  # the linear momentum
        coriolis_block(v[i], h_c[i], I_c[i], Iv, Bw_c[i])

    dtau_dq[:] = 0.0
    dtau_dqd[:] = 0.0
    dtau_dqdd[:] = 0.0
    for c in range(nb - 1, -1, -1):  # children have larger indices: the composites of c are complete here
        inertia_times(mass_c[c], h_c[c], I_c[c], J[c], IcJ[c])
        coriolis_transpose_times(P_c[c], Bw_c[c], J[c], BtJ[c])
        load_change(mass_c[c], h_c[c], I_c[c], P_c[c], Bw_c[c], V[c], A[c], dF_dq[c])
        cross_force_add(J[c], F[c], dF_dq[c])
        for k in range(6):
            twice_V[k] = 2.0 * V[c, k]
        load_change(mass_c[c], h_c[c], I_c[c], P_c[c], Bw_c[c], J[c], twice_V, dF_dqd[c])
        k_c = m.q_index[c]
        r = c
        while r >= 0:  # r: c and its ancestors
            k_r = m.q_index[r]
            scale = m.q_mult[r] * m.q_mult[c]
            dtau_dq[k_r, k_c] += scale * dot6(J[r], dF_dq[c])
            dtau_dqd[k_r, k_c] += scale * dot6(J[r], dF_dqd[c])
            M_rc = scale * dot6(J[r], IcJ[c])
            dtau_dqdd[k_r, k_c] += M_rc
            if r != c:
                dtau_dq[k_c, k_r] += scale * (dot6(IcJ[c], A[r]) + dot_angular(BtJ[c], V[r]))
                dtau_dqd[k_c, k_r] += scale * (2.0 * dot6(IcJ[c], V[r]) + dot_angular(BtJ[c], J[r]))
                dtau_dqdd[k_c, k_r] += M_rc
            r = m.parent[r]
        λ = m.parent[c]
        if λ < 0:  # the fixed base needs no composite
            continue
        mass_c[λ] += mass_c[c]
        for k in range(3):
            h_c[λ, k] += h_c[c, k]
            P_c[λ, k] += P_c[c, k]
            for n in range(3):
                I_c[λ, k, n] += I_c[c, k, n]
                Bw_c[λ, k, n] += Bw_c[c, k, n]
        add_scaled(F[λ], 1.0, F[c])
    for k in range(m.dof):
        dtau_dqd[k, k] += m.damping[k]
        dtau_dqdd[k, k] += m.armature[k]
    if dw_dq.shape[0] > 0:
        joint_wrench_terms(m, w, dw_dq, dw_dqd, dw_dqdd)


@helper
def wrench_in_body_add(R, p, dF, scale, out, work):
    """``out += scale X^* dF``: a change of a world-frame joint wrench seen in the body frame ``(R, p)``."""
    force_to_child(R, p, dF, work)
    for k in range(6):
        out[k] += scale * work[k]


@arithmetic_kernel
def joint_wrench_terms(m, w, dw_dq, dw_dqd, dw_dqdd):
    """The ``(dof, 6, dof)`` joint-wrench Jacobians from the quantities :func:`newton_euler_derivatives` left in
    ``w`` (module docstring). For each body pair ``(r, c)``, ``r`` an ancestor of ``c`` or ``c`` itself: ``W_c``
    with respect to ``theta_r`` and, if ``r != c``, ``W_r`` with respect to ``theta_c``. Only a body moved by its
    own coordinate (not a mimic) has a row."""
    R0, p0, J, V, A, mass_c, h_c, I_c, P_c, Bw_c = w.R0, w.p0, w.J, w.V, w.A, w.mass_c, w.h_c, w.I_c, w.P_c, w.Bw_c
    IcJ, dF_dq, dF_dqd = w.IcJ, w.dF_dq, w.dF_dqd
    dF, twice_V, scratch = w.work[0], w.work[1], w.work[2]  # unpacked once: field access in the loop costs
    dw_dq[:] = 0.0
    dw_dqd[:] = 0.0
    dw_dqdd[:] = 0.0
    for c in range(m.nb):
        k_c = m.q_index[c]
        has_row_c = m.dof_body[k_c] == c
        r = c
        while r >= 0:
            k_r = m.q_index[r]
            if has_row_c:
                load_change(mass_c[c], h_c[c], I_c[c], P_c[c], Bw_c[c], V[r], A[r], dF)
                wrench_in_body_add(R0[c], p0[c], dF, m.q_mult[r], dw_dq[k_c, :, k_r], scratch)
                for k in range(6):
                    twice_V[k] = 2.0 * V[r, k]
                load_change(mass_c[c], h_c[c], I_c[c], P_c[c], Bw_c[c], J[r], twice_V, dF)
                wrench_in_body_add(R0[c], p0[c], dF, m.q_mult[r], dw_dqd[k_c, :, k_r], scratch)
                inertia_times(mass_c[c], h_c[c], I_c[c], J[r], dF)
                wrench_in_body_add(R0[c], p0[c], dF, m.q_mult[r], dw_dqdd[k_c, :, k_r], scratch)
            if r != c and m.dof_body[k_r] == r:
                wrench_in_body_add(R0[r], p0[r], dF_dq[c], m.q_mult[c], dw_dq[k_r, :, k_c], scratch)
                wrench_in_body_add(R0[r], p0[r], dF_dqd[c], m.q_mult[c], dw_dqd[k_r, :, k_c], scratch)
                wrench_in_body_add(R0[r], p0[r], IcJ[c], m.q_mult[c], dw_dqdd[k_r, :, k_c], scratch)
            r = m.parent[r]


@arithmetic_kernel
def derivatives_state(fdata, idata, block, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd,
                      dw_dqdd):
    """:func:`newton_euler_derivatives` for one state in the workspace ``block``."""
    newton_euler_derivatives(model_view_inline(fdata, idata), derivatives_views(block), q, qd, qdd, gravity, f_ext,
                             dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd, dw_dqdd)


@kernel
def rnea_derivatives(fdata, idata, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd, dw_dqdd):
    """:func:`derivatives_state` with its own workspace; False if an input or a derivative is not finite."""
    derivatives_state(fdata, idata, derivatives_block(idata[0]), q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd,
                      dtau_dqdd, dw_dq, dw_dqd, dw_dqdd)
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(dtau_dq) and all_finite(dtau_dqd)


@arithmetic_kernel
def derivatives_rows(fdata, idata, block, rows, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq,
                     dw_dqd, dw_dqdd):
    """:func:`newton_euler_derivatives` for the states ``rows`` of a batch, in one workspace ``block``."""
    m = model_view_inline(fdata, idata)
    w = derivatives_views(block)
    for n in rows:
        newton_euler_derivatives(m, w, q[n], qd[n], qdd[n], gravity, f_ext[n], dtau_dq[n], dtau_dqd[n],
                                 dtau_dqdd[n], dw_dq[n], dw_dqd[n], dw_dqdd[n])


@batch_kernel
def rnea_derivatives_batch(fdata, idata, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd,
                           dw_dq, dw_dqd, dw_dqdd):
    """:func:`newton_euler_derivatives` for each row of a batch; chunks of states in parallel, one workspace
    each. Returns what :func:`rnea_derivatives` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        derivatives_rows(fdata, idata, derivatives_block(idata[0]), chunk_rows(chunk, q.shape[0]), q, qd, qdd,
                         gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd, dw_dqdd)
    return all_finite(q) and all_finite(qd) and all_finite(qdd) and all_finite(dtau_dq) and all_finite(dtau_dqd)


def _derivatives(robot, q, qd, qdd, gravity, external_wrenches, wrenches):
    """Run the kernel; returns the torque Jacobians and, if ``wrenches``, the joint-wrench Jacobians."""
    q, qd, qdd = states(robot, finite=False, q=q, qd=qd, qdd=qdd)
    g = gravity_vector(gravity)
    batch = q.shape[:-1]
    dof = robot.dof
    f_ext = body_wrenches(robot, external_wrenches, q.shape[0] if batch else 1)
    jacobians = [np.empty(batch + (dof, dof)) for _ in range(3)]
    if wrenches:
        wrench_jacobians = [np.empty(batch + (dof, 6, dof)) for _ in range(3)]
    else:
        wrench_jacobians = [np.empty(batch + (0, 6, 0))] * 3  # nothing is written to them
    if batch:
        finite = rnea_derivatives_batch(robot.fdata, robot.idata, q, qd, qdd, g,
                                        np.broadcast_to(f_ext, (len(q),) + f_ext.shape[1:]), *jacobians,
                                        *wrench_jacobians)
    else:
        finite = rnea_derivatives(robot.fdata, robot.idata, q, qd, qdd, g, f_ext[0], *jacobians, *wrench_jacobians)
    if not finite:
        raise not_finite(robot, "the derivatives", q=q, qd=qd, qdd=qdd)
    return tuple(jacobians), tuple(wrench_jacobians)


def inverse_dynamics_derivatives(robot, q, qd, qdd, *, gravity=None, external_wrenches=None):
    """``(dtau_dq, dtau_dqd, dtau_dqdd)`` of :func:`~rne_dynamics.inverse_dynamics`, each ``(…, dof, dof)``, row =
    torque, column = coordinate; ``dtau_dqdd`` is the mass matrix (armature included).

    Exact (Carpentier & Mansard's algorithm, see the module docstring), drive terms included: ``damping`` on the
    diagonal of ``dtau_dqd``; Coulomb friction contributes nothing (its derivative is 0 for ``qd != 0``). External
    wrenches, as in ``inverse_dynamics``, are fixed in their links' frames. One state ``(dof,)`` or a batch
    ``(N, dof)``.
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
