"""The Coriolis matrix ``C(q, qd)``: ``C qd = C(q, qd) qd`` is the velocity part of the bias torques and
``dM/dt - 2 C`` is skew-symmetric; ``C`` is Pinocchio's ``computeCoriolisMatrix`` (for joints of one coordinate,
the one of the Christoffel symbols of ``M``).

With ``J_k`` the Jacobian of body ``k`` and ``I_k`` its spatial inertia, ``C = sum_k J_k^T (I_k dJ_k/dt + B_k J_k)``
where ``B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) xbar*)`` and ``(h xbar*) m = m x* h`` (Echeandia & Wensing
2021, eq. 10; Niemeyer & Slotine 1988). Every joint's motion columns ``S`` are constant in its child frame, so a
column ``s`` of ``J_k`` is ``S_s`` for every body ``k`` its joint carries, and its time derivative ``dS_s = v_i x S_s``
with ``v_i`` the velocity of the column's body ``i``. As in the CRBA (RBDA Table 6.2), everything is expressed in the
root frame, where the composite ``Ic_i`` and ``Bc_i`` of the subtree of ``i`` are plain sums, and for a column ``s``
of body ``i`` and a column ``t`` of ``i`` or of an ancestor:

    C_ts = S_t^T (Ic_i dS_s + Bc_i S_s)
    C_st = S_s^T (Ic_i dS_t + Bc_i S_t) = dS_t^T (Ic_i S_s) + S_t^T (Bc_i^T S_s)     (t of a strict ancestor)

The columns of one body pair by the first line both ways round, as Pinocchio's algorithm does for joints of several
coordinates (free-flyer, planar, spherical). Mimic joints map into ``v`` as in :mod:`~rne_dynamics.algorithms.crba`
(``C = J^T C_columns J``). Drives add nothing: their inertia is constant.
"""
from .._jit import arithmetic_kernel
from ..model.memory import memory
from ..model.joints import S_times_add
from ..model.spatial import (add_scaled, cross_force_add, cross_motion_add, dot6, matrix_times, motion_to_parent,
                             rigid_inertia_matrix, rigid_inertia_to_parent)
from .driver import Algorithm
from .kinematics import world_poses


@arithmetic_kernel
def coriolis_factor(I, v, B, work):
    """``B = 1/2 (v x* I - I v x + (I v) xbar*)`` for a body of spatial inertia ``I`` moving at ``v``, built column
    by column; ``B v = v x* I v`` and ``B + B^T = d I / dt``. ``work`` is ``(3, 6)`` scratch."""
    e, vxe, Iv = work[0], work[1], work[2]
    matrix_times(I, v, Iv)
    B[:] = 0.0
    for k in range(6):
        column = B[:, k]
        e[:] = 0.0
        e[k] = 1.0
        cross_force_add(v, I[:, k], column)
        vxe[:] = 0.0
        cross_motion_add(v, e, 1.0, vxe)
        for r in range(6):
            column[r] -= dot6(I[r], vxe)
        cross_force_add(e, Iv, column)
    for r in range(6):
        for s in range(6):
            B[r, s] *= 0.5


#: ``C``, then per body and a base row last (the root, at rest) the root-frame pose ``(oR, op)`` and velocity
#: ``ov``; the joint velocity ``vJ``; per motion column, the root-frame ``S`` and ``dS``; a rigid inertia's ``h, I``
#: in the root frame; per body, the composites ``Ic`` and ``Bc``; the three column forces ``F`` and ``(3, 6)`` for
#: :func:`coriolis_factor`.
coriolis_memory = memory("coriolis_memory", results=dict(C=("nv", "nv")), oR=("nb + 1", 3, 3), op=("nb + 1", 3),
                         ov=("nb + 1", 6), vJ=(6,), oS=("ncol", 6), dS=("ncol", 6), h_o=(3,), I_o=(3, 3),
                         Ic=("nb", 6, 6), Bc=("nb", 6, 6), F=(3, 6), work=(3, 6))


@arithmetic_kernel
def composite_coriolis(m, w, q, qd):
    """``C(q, qd)`` ``(nv, nv)`` for one state (see the module notes for the recursion).

        oX_i = oX_λ X_i,   ov_i = ov_λ + oX_i S_i qd_i,   oS = oX_i S,   dS = ov_i x oS   (each column of i)
        Ic_i = oI_i + sum over children of Ic_c,   Bc_i = B(oI_i, ov_i) + sum over children of Bc_c
    """
    C, oR, op, ov, vJ, oS, dS, Ic, Bc, F = w.C, w.oR, w.op, w.ov, w.vJ, w.oS, w.dS, w.Ic, w.Bc, w.F
    world_poses(m, q, oR, op)
    ov[-1] = 0.0
    for i in range(m.nb):
        λ = m.parent[i]
        vJ[:] = 0.0
        S_times_add(m, i, qd, 1.0, vJ)
        motion_to_parent(oR[i], op[i], vJ, ov[i])
        add_scaled(ov[i], 1.0, ov[λ])
        for c in range(m.col_start[i], m.col_start[i + 1]):
            motion_to_parent(oR[i], op[i], m.S[c], oS[c])
            dS[c] = 0.0
            cross_motion_add(ov[i], oS[c], 1.0, dS[c])
        rigid_inertia_to_parent(oR[i], op[i], m.mass[i], m.h[i], m.I[i], w.h_o, w.I_o)
        rigid_inertia_matrix(m.mass[i], w.h_o, w.I_o, Ic[i])
        coriolis_factor(Ic[i], ov[i], Bc[i], w.work)
    C[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i, Bc_i are complete here
        for s in range(m.col_start[i], m.col_start[i + 1]):
            S = oS[s]
            matrix_times(Ic[i], dS[s], F[0])  # F[0] = Ic_i dS_s + Bc_i S_s, F[1] = Ic_i S_s, F[2] = Bc_i^T S_s
            matrix_times(Ic[i], S, F[1])
            for r in range(6):
                F[0, r] += dot6(Bc[i, r], S)
                F[2, r] = (Bc[i, 0, r] * S[0] + Bc[i, 1, r] * S[1] + Bc[i, 2, r] * S[2]
                           + Bc[i, 3, r] * S[3] + Bc[i, 4, r] * S[4] + Bc[i, 5, r] * S[5])
            k_s = m.col_v[s]
            for t in range(m.col_start[i], m.col_start[i + 1]):  # the body's own columns: the first rule
                C[m.col_v[t], k_s] += m.col_mult[t] * m.col_mult[s] * dot6(oS[t], F[0])
            j = m.parent[i]
            while j >= 0:  # the columns of i's ancestors: both rules
                for t in range(m.col_start[j], m.col_start[j + 1]):
                    scale = m.col_mult[t] * m.col_mult[s]
                    k_t = m.col_v[t]
                    C[k_t, k_s] += scale * dot6(oS[t], F[0])
                    C[k_s, k_t] += scale * (dot6(dS[t], F[1]) + dot6(oS[t], F[2]))
                j = m.parent[j]
        λ = m.parent[i]
        if λ >= 0:
            for r in range(6):
                for c in range(6):
                    Ic[λ, r, c] += Ic[i, r, c]
                    Bc[λ, r, c] += Bc[i, r, c]


CORIOLIS = Algorithm(composite_coriolis, coriolis_memory, ("q", "qd"), "the Coriolis matrix entries")


def coriolis_matrix(robot, q, qd, *, data=None):
    """The Coriolis matrix ``C(q, qd)`` ``(…, nv, nv)``: ``C qd = bias_torques(q, qd) - gravity_torques(q)`` and
    ``dM/dt - 2 C`` is skew-symmetric (Pinocchio's ``computeCoriolisMatrix``; for joints of one coordinate the
    Christoffel-symbol ``C``); rigid-body terms only (no drive friction). One state (``q`` ``(nq,)``, ``qd``
    ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``; ``data``: a ``robot.data()`` to compute in."""
    return CORIOLIS.run(robot, data, (q, qd))
