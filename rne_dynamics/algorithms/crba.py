"""The joint-space inertia matrix ``M(q)`` by the composite-rigid-body algorithm (Featherstone, RBDA Table 6.2).

Everything is expressed in the root (world) frame, as Pinocchio does: with each body's pose ``oX_i`` composed once,
its motion subspace ``S_i`` and rigid inertia (mass, first moment, rotational inertia: 10 numbers) are moved to the
root frame, where the composite inertia ``Ic_i`` (body ``i`` and everything it carries) is a plain sum over the
subtree and column ``i`` is the force ``F = Ic_i S_i``, the same in every frame along the chain: ``M_ji = S_j^T F``
for each ancestor ``j`` is a dot product.

Joints of several coordinates have a column of ``S`` each; mimic joints a column that moves with ``q_mult`` times
its source's coordinate, so ``M = J^T M_columns J`` with ``J[column, coordinate] = q_mult``: each column-pair entry
is added, scaled, into its coordinates' cell (both cells of an off-diagonal pair, as the pair appears twice in the
symmetric ``M_columns``). The rotor inertia of each drive (armature) adds to the diagonal.
"""
from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from .driver import Algorithm
from .kinematics import world_poses
from ..model.drive import rotor_inertia_add
from ..model.spatial import inertia_times, motion_to_parent, rigid_inertia_add, rigid_inertia_to_parent


#: The CRBA's arrays: per body and a base row, the root-frame pose ``(oR, op)`` and composite inertia ``mass_c``,
#: ``h_c``, ``I_c`` (the base row gathers the whole robot); per motion column its root-frame ``S``; the column force
#: ``F``.
crba_workspace = memory("crba_workspace", oR=("nb + 1", 3, 3), op=("nb + 1", 3), oS=("ncol", 6), mass_c=("nb + 1",),
                        h_c=("nb + 1", 3), I_c=("nb + 1", 3, 3), F=(6,))
mass_matrix_memory = memory("mass_matrix_memory", results=dict(M=("nv", "nv")), crba=crba_workspace)


@helper
def root_frame_body(m, w, i):
    """Body ``i``'s motion columns ``S_i`` and rigid inertia ``oX_i^T I_i oX_i`` in the root frame (RBDA eq. 2.66),
    from its pose ``oX_i`` there; the rigid inertia is left in ``w``'s composite rows."""
    for c in range(m.col_start[i], m.col_start[i + 1]):
        motion_to_parent(w.oR[i], w.op[i], m.S[c], w.oS[c])
    w.mass_c[i] = m.mass[i]
    rigid_inertia_to_parent(w.oR[i], w.op[i], m.mass[i], m.h[i], m.I[i], w.h_c[i], w.I_c[i])


@arithmetic_kernel
def composite_rigid_body(m, w, q, M):
    """CRBA (RBDA Table 6.2) for one state, in the root frame; writes ``M`` ``(nv, nv)``, both triangles.

        Ic_i = oI_i + sum over children c of Ic_c
        for each column s of S_i:  F = Ic_i s;  M_ts = S_t^T F  for the columns t of i and of its ancestors
    A column pair ``(t, s)`` adds into the cells of their coordinates, scaled by their ``q_mult`` (mimic joints:
    ``M = J^T M_columns J``), both ways round unless ``t`` is ``s``.
    """
    mass_c, h_c, I_c, oS, F = w.mass_c, w.h_c, w.I_c, w.oS, w.F
    world_poses(m, q, w.oR, w.op)
    for i in range(m.nb):
        root_frame_body(m, w, i)
    mass_c[-1] = 0.0  # the base row gathers the whole robot, unused
    h_c[-1] = 0.0
    I_c[-1] = 0.0
    M[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        λ = m.parent[i]
        rigid_inertia_add(mass_c, h_c, I_c, i, λ)
        for s in range(m.col_start[i], m.col_start[i + 1]):
            inertia_times(mass_c[i], h_c[i], I_c[i], oS[s], F)
            F0, F1, F2, F3, F4, F5 = F[0], F[1], F[2], F[3], F[4], F[5]  # in registers while M is written
            k_s = m.col_v[s]
            t = s
            j = i
            while j >= 0:  # s itself and the columns before it in i, then the columns of i's ancestors
                S = oS[t]
                M_ts = m.col_mult[t] * m.col_mult[s] * (S[0] * F0 + S[1] * F1 + S[2] * F2 + S[3] * F3 + S[4] * F4
                                                        + S[5] * F5)
                M[m.col_v[t], k_s] += M_ts
                if t != s:
                    M[k_s, m.col_v[t]] += M_ts
                t -= 1
                if t < m.col_start[j]:
                    j = m.parent[j]
                    if j >= 0:
                        t = m.col_start[j + 1] - 1
    rotor_inertia_add(m, M)


@arithmetic_kernel
def mass_matrix_step(m, w, q):
    composite_rigid_body(m, w.crba, q, w.M)


MASS_MATRIX = Algorithm(mass_matrix_step, mass_matrix_memory, ("q",), "the mass matrix entries")


def mass_matrix(robot, q, *, data=None, drive=True):
    """The joint-space inertia matrix ``M(q)`` ``(…, nv, nv)``, symmetric positive definite for a well-posed
    robot, with each drive's rotor inertia (armature) on the diagonal. One state ``q`` ``(nq,)`` or a batch
    ``(N, nq)``; ``data``: a ``robot.data()`` to compute in.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    return MASS_MATRIX.run(robot, data, (q,), drive=drive)
