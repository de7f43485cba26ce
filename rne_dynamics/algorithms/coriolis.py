"""The Coriolis matrix ``C(q, qd)``: ``C qd = C(q, qd) qd`` is the velocity part of the bias torques and
``dM/dt - 2 C`` is skew-symmetric; ``C`` is the one of the Christoffel symbols of ``M``, as Pinocchio's
``computeCoriolisMatrix`` returns it.

With ``J_k`` the Jacobian of body ``k`` and ``I_k`` its spatial inertia (body coordinates),
``C = sum_k J_k^T (I_k dJ_k/dt + B_k J_k)`` where ``B_k = 1/2 (v_k x* I_k - I_k v_k x + (I_k v_k) xbar*)`` and
``(h xbar*) m = m x* h`` (Echeandia & Wensing 2021, eq. 10; Niemeyer & Slotine 1988). Column ``j`` of ``J_k`` is
``S_j`` for every ``k`` that joint ``j`` carries, and its time derivative is ``v_j x S_j``. So, as in the CRBA
(RBDA Table 6.2), with composite ``Ic_i`` and ``Bc_i`` summed over the subtree of ``i`` and ``j`` an ancestor of ``i``:

    C_ji = S_j^T (Ic_i dS_i + Bc_i S_i)
    C_ij = S_i^T (Ic_i dS_j + Bc_i S_j) = dS_j^T (Ic_i S_i) + S_j^T (Bc_i^T S_i)

the three force vectors in brackets being carried from body ``i`` down to ``j``. Mimic joints map into ``q`` as in
:mod:`rne_dynamics.crba` (``C = J^T C_bodies J``). Drives add nothing: their inertia is constant.
"""
from collections import namedtuple

import numpy as np

from .._jit import batch_kernel, batch_range, chunk_count, chunk_rows, kernel
from .inputs import states
from ..model.joints import X_up, joint_coordinate
from ..model.robot import model_view
from ..model.spatial import (add_scaled, congruence_to_parent_add, cross_force_add, cross_motion_add, dot6,
                      force_to_parent_add, matrix_times, motion_to_child, rigid_inertia_matrix)


@kernel
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


CoriolisWorkspace = namedtuple("CoriolisWorkspace", "R p v dS Ic Bc F F_up work")


@kernel
def coriolis_workspace(nb):
    """Per-call arrays: body poses ``(R, p)``, ``v`` with a base row, ``dS``, composite ``Ic`` and ``Bc`` with a
    base row, the three carried forces ``F`` and their transform, 6x6 scratch."""
    return CoriolisWorkspace(np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros((nb + 1, 6)), np.empty((nb, 6)),
                             np.zeros((nb + 1, 6, 6)), np.zeros((nb + 1, 6, 6)), np.empty((3, 6)), np.empty((3, 6)),
                             np.empty((2, 6, 6)))


@kernel
def composite_coriolis(m, w, q, qd, C):
    """``C(q, qd)`` ``(dof, dof)`` for one state (see the module notes for the recursion)."""
    R, p, v, dS, Ic, Bc, F, F_up, work = w
    Ic[-1] = 0.0
    Bc[-1] = 0.0
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])
        motion_to_child(R[i], p[i], v[m.parent[i]], v[i])
        add_scaled(v[i], joint_coordinate(m, i, qd), m.S[i])
        dS[i] = 0.0
        cross_motion_add(v[i], m.S[i], 1.0, dS[i])
        rigid_inertia_matrix(m.mass[i], m.h[i], m.I[i], Ic[i])
        coriolis_factor(Ic[i], v[i], Bc[i], work[0, 0:3])
    C[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i, Bc_i are complete here
        λ = m.parent[i]
        S = m.S[i]
        matrix_times(Ic[i], dS[i], F[0])  # F[0] = Ic_i dS_i + Bc_i S_i, F[1] = Ic_i S_i, F[2] = Bc_i^T S_i
        matrix_times(Ic[i], S, F[1])
        for r in range(6):
            F[0, r] += dot6(Bc[i, r], S)
            F[2, r] = (Bc[i, 0, r] * S[0] + Bc[i, 1, r] * S[1] + Bc[i, 2, r] * S[2]
                       + Bc[i, 3, r] * S[3] + Bc[i, 4, r] * S[4] + Bc[i, 5, r] * S[5])
        k_i = m.q_index[i]
        C[k_i, k_i] += m.q_mult[i] * m.q_mult[i] * dot6(S, F[0])
        congruence_to_parent_add(R[i], p[i], Ic[i], Ic[λ], work)
        congruence_to_parent_add(R[i], p[i], Bc[i], Bc[λ], work)
        j = i
        while m.parent[j] >= 0:
            F_up[:] = 0.0
            for n in range(3):
                force_to_parent_add(R[j], p[j], F[n], F_up[n])
            F[:] = F_up
            j = m.parent[j]
            scale = m.q_mult[j] * m.q_mult[i]
            C[m.q_index[j], k_i] += scale * dot6(m.S[j], F[0])
            C[k_i, m.q_index[j]] += scale * (dot6(dS[j], F[1]) + dot6(m.S[j], F[2]))


@kernel
def coriolis(fdata, idata, q, qd, C):
    """:func:`composite_coriolis` for one state, with its own workspace."""
    m = model_view(fdata, idata)
    composite_coriolis(m, coriolis_workspace(m.nb), q, qd, C)


@batch_kernel
def coriolis_batch(fdata, idata, q, qd, C):
    """:func:`composite_coriolis` for each row of a batch, chunks in parallel, one workspace per chunk."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # made in the parallel body: numba cannot pass this namedtuple into it
        w = coriolis_workspace(m.nb)
        for n in chunk_rows(chunk, q.shape[0]):
            composite_coriolis(m, w, q[n], qd[n], C[n])


def coriolis_matrix(robot, q, qd):
    """The Coriolis matrix ``C(q, qd)`` ``(…, dof, dof)``: ``C qd = bias_torques(q, qd) - gravity_torques(q)`` and
    ``dM/dt - 2 C`` is skew-symmetric (the Christoffel-symbol ``C``, Pinocchio's convention). One state ``(dof,)``
    or a batch ``(N, dof)``."""
    q, qd = states(robot, q=q, qd=qd)
    C = np.empty(q.shape + (robot.dof,))
    (coriolis_batch if q.ndim == 2 else coriolis)(robot.fdata, robot.idata, q, qd, C)
    return C
