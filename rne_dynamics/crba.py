"""The joint-space inertia matrix ``M(q)`` by the composite-rigid-body algorithm (Featherstone, RBDA Table 6.2).

Everything is expressed in the root (world) frame, as Pinocchio does: with each body's pose ``oX_i`` composed once,
its motion subspace ``S_i`` and rigid inertia (mass, first moment, rotational inertia: 10 numbers) are moved to the
root frame, where the composite inertia ``Ic_i`` (body ``i`` and everything it carries) is a plain sum over the
subtree and column ``i`` is the force ``F = Ic_i S_i``, the same in every frame along the chain: ``M_ji = S_j^T F``
for each ancestor ``j`` is a dot product.

Mimic joints: body ``b`` moves with ``q_mult_b * q[q_index_b]``, so ``M = J^T M_bodies J`` with
``J[b, q_index_b] = q_mult_b``; each body-pair entry is added, scaled, into its coordinates' cell (both cells of an
off-diagonal pair, as the pair appears twice in the symmetric ``M_bodies``). The rotor inertia of each drive
(armature) adds to the diagonal.
"""
from collections import namedtuple

import numpy as np

from ._jit import batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from .inputs import all_finite, not_finite, states
from .joints import X_up
from .model import model_view
from .spatial import inertia_times, motion_to_parent, pose_compose, rigid_inertia_to_parent


CrbaWorkspace = namedtuple("CrbaWorkspace", "R p oR op oS mass_c h_c I_c F")


@kernel
def crba_workspace(nb):
    """Per-call arrays of the CRBA: one body's pose in its parent ``(R, p)``; the bodies' poses ``(oR, op)`` in the
    root frame with the root's (identity) in a base row; root-frame ``S``; composite inertias (mass, first moment,
    rotational inertia) with a base row; the column force ``F``. Arrays of one shape share an allocation
    (allocations cost more than a small robot's arithmetic)."""
    frames = np.empty((nb + 1, 4, 3))  # per body: R (3 rows), p
    composites = np.empty((nb + 1, 5, 3))  # per body: I (3 rows), h, mass
    vectors = np.empty((nb + 1, 6))  # per body S, then F
    pose = np.empty((4, 3))
    oR, op = frames[:, 0:3], frames[:, 3]
    oR[-1] = 0.0
    op[-1] = 0.0
    for k in range(3):
        oR[-1, k, k] = 1.0
    return CrbaWorkspace(pose[0:3], pose[3], oR, op, vectors[:nb], composites[:, 4, 0], composites[:, 3],
                         composites[:, 0:3], vectors[nb])


@helper
def root_frame_body(m, w, i, q):
    """Body ``i``'s pose ``oX_i = X_i oX_λ`` in the root frame, its ``S_i`` and rigid inertia ``oX_i^T I_i oX_i``
    there (RBDA eq. 2.66); the rigid inertia is left in ``w``'s composite rows."""
    X_up(m, i, q, w.R, w.p)
    pose_compose(w.oR[m.parent[i]], w.op[m.parent[i]], w.R, w.p, w.oR[i], w.op[i])
    motion_to_parent(w.oR[i], w.op[i], m.S[i], w.oS[i])
    w.mass_c[i] = m.mass[i]
    rigid_inertia_to_parent(w.oR[i], w.op[i], m.mass[i], m.h[i], m.I[i], w.h_c[i], w.I_c[i])


@kernel
def composite_rigid_body(m, w, q, M):
    """CRBA (RBDA Table 6.2) for one state, in the root frame; writes ``M`` ``(dof, dof)``, both triangles.

        Ic_i = oI_i + sum over children c of Ic_c
        F = Ic_i S_i,  M_ii = S_i^T F;  for each ancestor j of i: M_ji = M_ij = S_j^T F
    """
    mass_c, h_c, I_c, oS, F = w.mass_c, w.h_c, w.I_c, w.oS, w.F
    for i in range(m.nb):
        root_frame_body(m, w, i, q)
    mass_c[-1] = 0.0  # the base row gathers the whole robot, unused
    h_c[-1] = 0.0
    I_c[-1] = 0.0
    M[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        λ = m.parent[i]
        mass_c[λ] += mass_c[i]
        for r in range(3):
            h_c[λ, r] += h_c[i, r]
            for c in range(3):
                I_c[λ, r, c] += I_c[i, r, c]
        inertia_times(mass_c[i], h_c[i], I_c[i], oS[i], F)
        F0, F1, F2, F3, F4, F5 = F[0], F[1], F[2], F[3], F[4], F[5]  # in registers while M is written
        k_i = m.q_index[i]
        j = i
        while j >= 0:  # i itself, then its ancestors
            S = oS[j]
            M_ji = m.q_mult[j] * m.q_mult[i] * (S[0] * F0 + S[1] * F1 + S[2] * F2 + S[3] * F3 + S[4] * F4 + S[5] * F5)
            M[m.q_index[j], k_i] += M_ji
            if j != i:
                M[k_i, m.q_index[j]] += M_ji
            j = m.parent[j]
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
