"""The joint-space inertia matrix ``M(q)`` by the composite-rigid-body algorithm (Featherstone, RBDA Table 6.2).

Composite inertias ``Ic_i`` (body ``i`` and everything it carries) are accumulated tip to base as rigid inertias
(mass, first moment, rotational inertia: 10 numbers); column ``i`` is the force ``F = Ic_i S_i`` carried down the
chain of ancestors ``j``, giving ``M_ji = S_j^T F``.

Mimic joints: body ``b`` moves with ``q_mult_b * q[q_index_b]``, so ``M = J^T M_bodies J`` with
``J[b, q_index_b] = q_mult_b``; each body-pair entry is added, scaled, into its coordinates' cell (both cells of an
off-diagonal pair, as the pair appears twice in the symmetric ``M_bodies``). The rotor inertia of each drive
(armature) adds to the diagonal.
"""
from collections import namedtuple

import numpy as np

from ._jit import batch_kernel, batch_range, chunk_count, chunk_rows, kernel
from .inputs import all_finite, not_finite, states
from .joints import X_up
from .model import model_view
from .spatial import dot6, force_to_parent_add, inertia_times, rigid_inertia_to_parent_add


CrbaWorkspace = namedtuple("CrbaWorkspace", "R p mass_c h_c I_c F F_up")


@kernel
def crba_workspace(nb):
    """Per-call arrays of the CRBA: body poses ``(R, p)``, composite inertias (mass, first moment, rotational
    inertia) with a base row, the column force ``F`` and its transform ``F_up``."""
    return CrbaWorkspace(np.empty((nb, 3, 3)), np.empty((nb, 3)), np.zeros(nb + 1), np.zeros((nb + 1, 3)),
                         np.zeros((nb + 1, 3, 3)), np.empty(6), np.empty(6))


@kernel
def composite_rigid_body(m, w, q, M):
    """CRBA (RBDA Table 6.2) for one state; writes ``M`` ``(dof, dof)``, both triangles.

        Ic_i = I_i + sum over children c of X_c^T Ic_c X_c
        F = Ic_i S_i,  M_ii = S_i^T F;  for each ancestor j of i: F = X^T F,  M_ji = M_ij = S_j^T F
    """
    R, p, mass_c, h_c, I_c, F, F_up = w
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])
        mass_c[i] = m.mass[i]
        h_c[i] = m.h[i]
        I_c[i] = m.I[i]
    M[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        λ = m.parent[i]
        mass_c[λ] += mass_c[i]
        rigid_inertia_to_parent_add(R[i], p[i], mass_c[i], h_c[i], I_c[i], h_c[λ], I_c[λ])
        inertia_times(mass_c[i], h_c[i], I_c[i], m.S[i], F)
        k_i = m.q_index[i]
        M[k_i, k_i] += m.q_mult[i] * m.q_mult[i] * dot6(m.S[i], F)
        j = i
        while m.parent[j] >= 0:
            F_up[:] = 0.0
            force_to_parent_add(R[j], p[j], F, F_up)
            F[:] = F_up
            j = m.parent[j]
            M_ji = m.q_mult[j] * m.q_mult[i] * dot6(m.S[j], F)
            M[m.q_index[j], k_i] += M_ji
            M[k_i, m.q_index[j]] += M_ji
    for k in range(m.dof):
        M[k, k] += m.armature[k]


@kernel
def crba(fdata, idata, q, M):
    """:func:`composite_rigid_body` for one state, with its own workspace; False if ``q`` or an entry of ``M`` is
    not finite."""
    m = model_view(fdata, idata)
    composite_rigid_body(m, crba_workspace(m.nb), q, M)
    return all_finite(q) and all_finite(M)


@batch_kernel
def crba_batch(fdata, idata, q, M):
    """:func:`composite_rigid_body` for each row of a batch, chunks in parallel, one workspace per chunk; returns
    what :func:`crba` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        m = model_view(fdata, idata)  # made in the parallel body: numba cannot pass this namedtuple into it
        w = crba_workspace(m.nb)
        for n in chunk_rows(chunk, q.shape[0]):
            composite_rigid_body(m, w, q[n], M[n])
    return all_finite(q) and all_finite(M)


def mass_matrix(robot, q):
    """The joint-space inertia matrix ``M(q)`` ``(…, dof, dof)``, symmetric positive definite for a well-posed
    robot, with each drive's rotor inertia (armature) on the diagonal. One state ``(dof,)`` or a batch ``(N, dof)``.
    """
    (q,) = states(robot, finite=False, q=q)
    M = np.empty(q.shape + (robot.dof,))
    if not (crba_batch if q.ndim == 2 else crba)(robot.fdata, robot.idata, q, M):
        raise not_finite(robot, "the mass matrix entries", q=q)
    return M
