"""Analytic derivatives of inverse dynamics, of the joint reaction wrenches and of forward dynamics.

The algorithm of Carpentier & Mansard, "Analytical Derivatives of Rigid Body Dynamics Algorithms" (RSS 2018), for
RNEA: every quantity is expressed in the frame of the fixed base (the world), where the spatial inertias and forces
of a subtree simply add up, and each (torque, coordinate) pair costs a few scalar products.

The algorithm works on motion columns (:mod:`~rne_dynamics.model.joints`): column ``c`` of body ``i`` (parent λ) is
``J_c = oX_i^-1 S_c`` in the world and moves with ``theta_c = col_mult_c v[col_v_c]``. A derivative with respect to
``q`` is one along ``integrate(q, dq)``: ``dtheta_c`` turns body ``i`` by ``exp(dtheta_c S_c)`` in its own frame,
which is the world's ``exp(dtheta_c J_c)`` applied to the subtree of ``i`` (Pinocchio's convention, the free-flyer's
included). The chain rule adds each column pair into its coordinates' cell, scaled by both ``col_mult``, so a mimic's
torque reaches its source by virtual work. Forward pass, per column ``c`` of body ``i`` (all share ``v_λ, a_λ``):

    V_c = v_λ x J_c,   A_c = a_λ x J_c + v_λ x V_c,   Aqd_c = V_c + v_i x J_c     (the paper's dv/dq, da/dq, da/dv)
    v_i = v_λ + sum_c J_c qd_c,   a_i = a_λ + sum_c (J_c qdd_c + V_c qd_c)        (a_base = -g)
    f_i = I_i a_i + v_i x* I_i v_i - f_ext_i                                       (I_i: world inertia)
    B_i x = v_i x* I_i x - I_i (v_i x x) + x x* I_i v_i                            (change of f_i as v gains x)

(``sum_c V_c qd_c = v_i x sum_c J_c qd_c``: the joint's own columns cross to zero.) Backward pass: ``Ic_i``, ``Bc_i``
and ``F_i`` (the joint wrench, in the world) sum ``I``, ``B`` and ``f`` over the subtree of ``i``. Turning
``theta_c`` turns the subtree of ``i`` rigidly about ``J_c`` -- ``i``'s other columns with it -- which leaves
``J_r^T F_r`` unchanged for every column ``r`` of that subtree (power does not depend on the frame), and adds ``V_c``
to its velocities and ``A_c + V_c x v_j`` to its accelerations; ``qd_c`` adds ``J_c`` and ``Aqd_c + J_c x v_j``.
Hence, for a column ``r`` of a strict ancestor of ``i`` (both orders of the pair):

    dtau_r/dtheta_c = J_r^T (Ic_i A_c + Bc_i V_c + J_c x* F_i)   dtau_c/dtheta_r = J_c^T (Ic_i A_r + Bc_i V_r)
    dtau_r/dqd_c    = J_r^T (Ic_i Aqd_c + Bc_i J_c)              dtau_c/dqd_r    = J_c^T (Ic_i Aqd_r + Bc_i J_r)
    dtau_r/dqdd_c   = J_r^T Ic_i J_c                             dtau_c/dqdd_r   = the same (the mass matrix)

for ``r`` and ``c`` both columns of ``i``, the right-hand forms (``J_r`` turns with ``c``: no ``J_c x* F_i``; the
two forms agree for ``r = c``, as ``J_c^T (J_c x* F) = 0``), and every other pair is 0. ``B_i`` acts on the angular
part only, ``B_i = [[0, -2 (P_i x)], [0, Bw_i]]`` with ``P_i`` the linear momentum and
``Bw_i = (w x) I - I (w x) + 2 (v.h) 1 - h v^T - v h^T - (k x)`` (``v_i = [v; w]``, ``h`` the first moment of mass,
``k`` the angular momentum), so ``Bc`` is kept as ``P`` and ``Bw`` summed.

The joint wrench of a named joint moving body ``b``, ``W_b = oX_b^* F_b`` in its own frame, turns with ``b`` and its
ancestors:

    dW_b/dtheta_c = oX_b^* (Ic_i A_c + Bc_i V_c + J_c x* F_i)   for c a column of a strict descendant i of b,
                  = oX_b^* (Ic_b A_c + Bc_b V_c)                 for c a column of b or of an ancestor,

and so on for ``qd`` and ``qdd`` with the brackets of the torques; the floating base has no named joint, hence no
row. External wrenches are fixed in their bodies, so they only turn with them. The drive terms of
:func:`~rne_dynamics.model.drive.drive_torques_add` add ``armature`` to ``dtau/dqdd`` and ``damping`` plus the smooth
Coulomb law's slope to ``dtau/dqd``; ``sign(qd)`` has zero derivative wherever ``qd != 0`` (undefined at 0, taken as 0).
"""
from .._jit import OK, SINGULAR, arithmetic_kernel, helper
from ..model.memory import memory
from .aba import forward, forward_workspace, tree_cholesky, tree_solve
from .driver import Algorithm
from .kinematics import world_poses
from ..model.drive import drive_jacobians_add
from ..model.spatial import (add_scaled, base_acceleration, cross, cross_force_add, cross_motion_add, dot6,
                             force_to_child, force_to_parent_add, inertia_times, motion_to_parent, rigid_inertia_add,
                             rigid_inertia_to_parent, set_at_rest)


@helper
def angular_B_block(v, h, I, Iv, Bw):
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


#: The arrays of :func:`newton_euler_derivatives` (world frame). Per body and a base row last: the pose ``R0, p0``,
#: ``v``, ``a``, ``F``, the composites ``mass_c, h_c, I_c, P_c, Bw_c`` and the body's joint-wrench row (``-1``: none).
#: Per motion column: ``J``, ``V``, ``A``, ``Aqd``, ``Ic J``, ``(B^T J)[3:]``, ``dF/dtheta`` and ``dF/dqd``. Scratch:
#: a body's ``I v`` and three 6-vectors.
derivatives_workspace = memory("derivatives_workspace", R0=("nb + 1", 3, 3), p0=("nb + 1", 3), v=("nb + 1", 6),
                               a=("nb + 1", 6), F=("nb + 1", 6), mass_c=("nb + 1",), h_c=("nb + 1", 3),
                               I_c=("nb + 1", 3, 3), P_c=("nb + 1", 3), Bw_c=("nb + 1", 3, 3), row=("nb + 1",),
                               J=("ncol", 6), V=("ncol", 6), A=("ncol", 6), Aqd=("ncol", 6), IcJ=("ncol", 6),
                               BtJ=("ncol", 3), dF_dq=("ncol", 6), dF_dqd=("ncol", 6), Iv=(6,), work=(3, 6))


@arithmetic_kernel
def newton_euler_derivatives(m, w, q, qd, qdd, gravity, f_ext, dtau_dq, dtau_dqd, dtau_dqdd, dw_dq, dw_dqd,
                             dw_dqdd):
    """Derivatives of RNEA for one state (module docstring): writes the three ``(nv, nv)`` torque Jacobians and,
    when ``dw_dq.shape[0] > 0``, the ``(nj, 6, nv)`` joint-wrench Jacobians (``dw[j, :, k]``: named joint ``j``'s
    wrench in its child link's frame, with respect to velocity coordinate ``k``)."""
    nb = m.nb
    R0, p0, v, a, F = w.R0, w.p0, w.v, w.a, w.F
    J, V, A, Aqd, IcJ, BtJ, dF_dq, dF_dqd = w.J, w.V, w.A, w.Aqd, w.IcJ, w.BtJ, w.dF_dq, w.dF_dqd
    mass_c, h_c, I_c, P_c, Bw_c, Iv = w.mass_c, w.h_c, w.I_c, w.P_c, w.Bw_c, w.Iv
    f_ext_world = w.work[0]  # scratch
    world_poses(m, q, R0, p0)
    set_at_rest(v[-1], a[-1])  # the base is the world, at rest
    base_acceleration(gravity, a[-1])
    for i in range(nb):
        λ = m.parent[i]
        for k in range(6):
            v[i, k] = v[λ, k]
            a[i, k] = a[λ, k]
        for c in range(m.col_start[i], m.col_start[i + 1]):
            motion_to_parent(R0[i], p0[i], m.S[c], J[c])
            V[c] = 0.0
            cross_motion_add(v[λ], J[c], 1.0, V[c])
            A[c] = 0.0
            cross_motion_add(a[λ], J[c], 1.0, A[c])
            cross_motion_add(v[λ], V[c], 1.0, A[c])
            qd_c = m.col_mult[c] * qd[m.col_v[c]]
            add_scaled(v[i], qd_c, J[c])
            add_scaled(a[i], m.col_mult[c] * qdd[m.col_v[c]], J[c])
            add_scaled(a[i], qd_c, V[c])
        for c in range(m.col_start[i], m.col_start[i + 1]):  # v_i complete: Aqd_c = (v_λ + v_i) x J_c
            for k in range(6):
                Aqd[c, k] = V[c, k]
            cross_motion_add(v[i], J[c], 1.0, Aqd[c])
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
        angular_B_block(v[i], h_c[i], I_c[i], Iv, Bw_c[i])

    dtau_dq[:] = 0.0
    dtau_dqd[:] = 0.0
    dtau_dqdd[:] = 0.0
    for i in range(nb - 1, -1, -1):  # children have larger indices: the composites of i are complete here
        first, end = m.col_start[i], m.col_start[i + 1]
        for c in range(first, end):
            inertia_times(mass_c[i], h_c[i], I_c[i], J[c], IcJ[c])
            coriolis_transpose_times(P_c[i], Bw_c[i], J[c], BtJ[c])
            load_change(mass_c[i], h_c[i], I_c[i], P_c[i], Bw_c[i], V[c], A[c], dF_dq[c])
            load_change(mass_c[i], h_c[i], I_c[i], P_c[i], Bw_c[i], J[c], Aqd[c], dF_dqd[c])
            k_c = m.col_v[c]
            for r in range(first, end):  # the columns of i turn with c: only the motion's change counts
                k_r = m.col_v[r]
                scale = m.col_mult[r] * m.col_mult[c]
                dtau_dq[k_r, k_c] += scale * dot6(J[r], dF_dq[c])
                dtau_dqd[k_r, k_c] += scale * dot6(J[r], dF_dqd[c])
                dtau_dqdd[k_r, k_c] += scale * dot6(J[r], IcJ[c])
            cross_force_add(J[c], F[i], dF_dq[c])  # the ancestors' columns stay: they see F_i turn
            j = m.parent[i]
            while j >= 0:
                for r in range(m.col_start[j], m.col_start[j + 1]):
                    k_r = m.col_v[r]
                    scale = m.col_mult[r] * m.col_mult[c]
                    dtau_dq[k_r, k_c] += scale * dot6(J[r], dF_dq[c])
                    dtau_dqd[k_r, k_c] += scale * dot6(J[r], dF_dqd[c])
                    M_rc = scale * dot6(J[r], IcJ[c])
                    dtau_dqdd[k_r, k_c] += M_rc
                    dtau_dqdd[k_c, k_r] += M_rc
                    dtau_dq[k_c, k_r] += scale * (dot6(IcJ[c], A[r]) + dot_angular(BtJ[c], V[r]))
                    dtau_dqd[k_c, k_r] += scale * (dot6(IcJ[c], Aqd[r]) + dot_angular(BtJ[c], J[r]))
                j = m.parent[j]
        λ = m.parent[i]
        if λ < 0:  # the fixed base needs no composite
            continue
        rigid_inertia_add(mass_c, h_c, I_c, i, λ)
        for k in range(3):  # and the Coriolis factor B = [[0, -2 (P x)], [0, Bw]]
            P_c[λ, k] += P_c[i, k]
            for n in range(3):
                Bw_c[λ, k, n] += Bw_c[i, k, n]
        add_scaled(F[λ], 1.0, F[i])
    drive_jacobians_add(m, qd, dtau_dqd, dtau_dqdd)
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
    """The ``(nj, 6, nv)`` joint-wrench Jacobians from the quantities :func:`newton_euler_derivatives` left in ``w``
    (module docstring). Each named joint's body ``b`` has row ``j``: with respect to the columns of ``b`` and of its
    ancestors, which turn its frame, and to the columns of its descendants, whose ``dF`` it carries."""
    R0, p0, J, V, A, Aqd, mass_c, h_c, I_c, P_c, Bw_c = (w.R0, w.p0, w.J, w.V, w.A, w.Aqd, w.mass_c, w.h_c, w.I_c,
                                                         w.P_c, w.Bw_c)
    IcJ, dF_dq, dF_dqd, row = w.IcJ, w.dF_dq, w.dF_dqd, w.row
    dF, scratch = w.work[1], w.work[2]  # unpacked once: field access in the loop costs
    dw_dq[:] = 0.0
    dw_dqd[:] = 0.0
    dw_dqdd[:] = 0.0
    for b in range(m.nb):
        row[b] = -1.0
    for j in range(m.nj):
        row[m.joint_body[j]] = j
    for b in range(m.nb):
        j = int(row[b])
        i = b if j >= 0 else -1
        while i >= 0:  # the columns of b and of its ancestors: b's frame turns with them
            for c in range(m.col_start[i], m.col_start[i + 1]):
                k_c, s = m.col_v[c], m.col_mult[c]
                load_change(mass_c[b], h_c[b], I_c[b], P_c[b], Bw_c[b], V[c], A[c], dF)
                wrench_in_body_add(R0[b], p0[b], dF, s, dw_dq[j, :, k_c], scratch)
                load_change(mass_c[b], h_c[b], I_c[b], P_c[b], Bw_c[b], J[c], Aqd[c], dF)
                wrench_in_body_add(R0[b], p0[b], dF, s, dw_dqd[j, :, k_c], scratch)
                inertia_times(mass_c[b], h_c[b], I_c[b], J[c], dF)
                wrench_in_body_add(R0[b], p0[b], dF, s, dw_dqdd[j, :, k_c], scratch)
            i = m.parent[i]
        r = m.parent[b]
        while r >= 0:  # the columns of b change the wrenches of its strict ancestors by their whole dF
            j = int(row[r])
            if j >= 0:
                for c in range(m.col_start[b], m.col_start[b + 1]):
                    k_c, s = m.col_v[c], m.col_mult[c]
                    wrench_in_body_add(R0[r], p0[r], dF_dq[c], s, dw_dq[j, :, k_c], scratch)
                    wrench_in_body_add(R0[r], p0[r], dF_dqd[c], s, dw_dqd[j, :, k_c], scratch)
                    wrench_in_body_add(R0[r], p0[r], IcJ[c], s, dw_dqdd[j, :, k_c], scratch)
            r = m.parent[r]


def derivatives_memory(name, joints):
    """The torque Jacobians, then the joint-wrench Jacobians of ``joints`` joints (``"nj"``, or 0: none), then the
    workspace."""
    return memory(name, results=dict(dtau_dq=("nv", "nv"), dtau_dqd=("nv", "nv"), dtau_dqdd=("nv", "nv"),
                                     dw_dq=(joints, 6, "nv"), dw_dqd=(joints, 6, "nv"), dw_dqdd=(joints, 6, "nv")),
                  derivatives=derivatives_workspace)


torque_derivatives_memory = derivatives_memory("torque_derivatives_memory", 0)
wrench_derivatives_memory = derivatives_memory("wrench_derivatives_memory", "nj")


@arithmetic_kernel
def derivatives_step(m, w, q, qd, qdd, f_ext, gravity):
    newton_euler_derivatives(m, w.derivatives, q, qd, qdd, gravity, f_ext, w.dtau_dq, w.dtau_dqd, w.dtau_dqdd,
                             w.dw_dq, w.dw_dqd, w.dw_dqdd)


TORQUE_DERIVATIVES = Algorithm(derivatives_step, torque_derivatives_memory, ("q", "qd", "qdd"), "the derivatives",
                               lambda *jacobians: jacobians[:3], gravity=True, wrenches=True)
WRENCH_DERIVATIVES = Algorithm(derivatives_step, wrench_derivatives_memory, ("q", "qd", "qdd"), "the derivatives",
                               lambda *jacobians: jacobians[3:], gravity=True, wrenches=True)


def inverse_dynamics_derivatives(robot, q, qd, qdd, *, gravity=None, external_wrenches=None, data=None, drive=True):
    """``(dtau_dq, dtau_dqd, dtau_dqdd)`` of :func:`~rne_dynamics.inverse_dynamics`, each ``(…, nv, nv)``, row =
    torque, column = velocity coordinate; ``dtau_dqdd`` is the mass matrix (armature included).

    ``dtau_dq`` is the derivative along ``integrate(q, dq)``, ``dq`` in ``v``'s coordinates (for a joint of one
    coordinate, along ``q`` itself; a floating base's or spherical joint's rotation turns in its child frame), as
    Pinocchio's ``computeRNEADerivatives``. Exact (Carpentier & Mansard's algorithm, see the module docstring),
    drive terms included: ``damping`` on the diagonal of ``dtau_dqd``; Coulomb friction contributes nothing (its
    derivative is 0 for ``qd != 0``). External wrenches, as in ``inverse_dynamics``, are fixed in their links'
    frames. One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    return TORQUE_DERIVATIVES.run(robot, data, (q, qd, qdd), gravity, external_wrenches, drive=drive)


def joint_wrench_derivatives(robot, q, qd, qdd, *, gravity=None, external_wrenches=None, data=None):
    """``(dW_dq, dW_dqd, dW_dqdd)``, each ``(…, len(joint_names), 6, nv)``: ``dW_dq[..., j, :, k]`` is the
    derivative of the joint wrench of joint ``j`` (``inverse_dynamics(...).joint_wrenches[..., j, :]``: child-link
    frame, about the joint origin) with respect to velocity coordinate ``k`` (``q`` along ``integrate``, as in
    :func:`inverse_dynamics_derivatives`). Rigid-body loads only, as the joint wrenches are (drive friction and
    armature act inside the drive, not across the joint)."""
    return WRENCH_DERIVATIVES.run(robot, data, (q, qd, qdd), gravity, external_wrenches)


@helper
def negated(A, out):
    """``out = -A``."""
    for r in range(A.shape[0]):
        for c in range(A.shape[1]):
            out[r, c] = -A[r, c]


#: The three Jacobians of forward dynamics, then ``qdd`` and the memories of forward dynamics and of the torque
#: Jacobians.
forward_derivatives_memory = memory("forward_derivatives_memory", results=dict(
    dqdd_dq=("nv", "nv"), dqdd_dqd=("nv", "nv"), M_inv=("nv", "nv")), qdd=("nv",), no_wrenches=(0, 6),
    forward=forward_workspace, torque=torque_derivatives_memory)


@arithmetic_kernel
def forward_derivatives_step(m, w, q, qd, tau, f_ext, gravity):
    """``dqdd/dx = -M^-1 dtau/dx`` for ``x`` in ``q, qd`` at ``qdd = FD(q, qd, tau)``, and ``dqdd/dtau = M^-1``
    (differentiating ``ID(q, qd, FD(q, qd, tau)) = tau``; ``M = dtau/dqdd``, armature included)."""
    status = forward(m, w.forward, q, qd, tau, gravity, f_ext, w.qdd, w.no_wrenches)
    if status != OK:
        return status
    return derivatives_at_acceleration(m, w, q, qd, w.qdd, f_ext, gravity)


@helper
def derivatives_at_acceleration(m, w, q, qd, qdd, f_ext, gravity):
    """:func:`forward_derivatives_step` once ``qdd = FD(q, qd, tau)`` is known. ``M = L^T L`` factorised along the
    tree (RBDA Sec. 6.5), so each right-hand side costs what the tree's sparsity needs."""
    derivatives_step(m, w.torque, q, qd, qdd, f_ext, gravity)
    L = w.torque.dtau_dqdd  # M, factorised in place
    bad = tree_cholesky(L)
    if bad >= 0:
        return SINGULAR + bad
    negated(w.torque.dtau_dq, w.dqdd_dq)
    tree_solve(L, w.dqdd_dq)
    negated(w.torque.dtau_dqd, w.dqdd_dqd)
    tree_solve(L, w.dqdd_dqd)
    w.M_inv[:] = 0.0
    for k in range(m.nv):
        w.M_inv[k, k] = 1.0
    tree_solve(L, w.M_inv)
    return OK


FORWARD_DERIVATIVES = Algorithm(forward_derivatives_step, forward_derivatives_memory, ("q", "qd", "tau"),
                                "the derivatives", lambda *jacobians: jacobians, gravity=True, wrenches=True)


def forward_dynamics_derivatives(robot, q, qd, tau, *, gravity=None, external_wrenches=None, data=None, drive=True):
    """``(dqdd_dq, dqdd_dqd, dqdd_dtau)`` of :func:`~rne_dynamics.forward_dynamics`, each ``(…, nv, nv)`` (``q``
    along ``integrate``, as in :func:`inverse_dynamics_derivatives`; ``dqdd_dtau = M^-1``, ``M`` with armature).
    Friction as in :func:`inverse_dynamics_derivatives`. One compiled call: forward dynamics, the torque Jacobians
    at its ``qdd`` and ``M^-1`` (:func:`forward_derivatives_step`). ``data``: a ``robot.data()`` to compute in.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    return FORWARD_DERIVATIVES.run(robot, data, (q, qd, tau), gravity, external_wrenches, drive=drive)
