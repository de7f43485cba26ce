"""Forward dynamics ``qdd = M^-1 (tau - bias - friction)`` by the articulated-body algorithm (Featherstone, RBDA
Table 7.1), O(n), with external wrenches and, on request, the joint reaction wrenches.

Joints of any number of coordinates go through the ABA as Table 7.1 writes it: ``S_i`` is ``6 x nv_i`` and
``D_i = S_i^T IA_i S_i`` a small symmetric positive-definite matrix. A floating base is the free-flyer joint of body
0, whose parent is the world (RBDA ch. 9: its ``D_0`` is the articulated inertia of the whole robot, ``S_0`` the
identity). The pass is written once, for hybrid dynamics (:mod:`~rne_dynamics.algorithms.hybrid`: a mask of
coordinates whose acceleration is known); forward dynamics is its case of an empty mask, every force known.

Drives: the rotor inertia (armature) of joint ``i`` adds to ``D_i``'s diagonal; viscous and Coulomb friction oppose
the motion, ``tau_eff = tau - damping qd - friction sign(qd)``, exactly as :func:`rne_dynamics.inverse_dynamics`
adds them.

Mimic joints move two bodies with one coordinate, which breaks ABA's one-joint-per-body recursion; robots with
mimic joints are solved as ``M qdd = tau - rnea(q, qd, 0)`` with ``M`` from the CRBA and a Cholesky factorisation
``M = L^T L`` that skips the zeros a tree leaves in ``M`` (RBDA Sec. 6.1-6.3; O(n^3) at worst).

A movable joint that drives no mass and no rotor inertia leaves ``qdd`` undefined: a pivot of ABA's ``D_i = L D L^T``
(or of the Cholesky factorisation of ``M``) is not positive, and :class:`~rne_dynamics.errors.SingularMassMatrixError`
names the coordinate. "Not positive" is relative: a pivot ``<= 1e-12`` times the articulated inertia about (along)
its column, or ``<= 1e-12`` times the largest diagonal entry of ``M``.
"""
import numpy as np

from .._jit import OK, SINGULAR, arithmetic_kernel, carve, helper, skip_zero
from ..model.memory import memory
from .crba import composite_rigid_body, crba_workspace
from ..errors import StateError
from ..model.drive import drive_friction, drive_torque, drive_torques_add
from ..model.joints import X_up
from .driver import Algorithm
from .rnea import joint_loads, newton_euler, rnea_workspace
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, dot6, force_shift_add,
                             inertia_shift_add, inertia_times, matrix_times, motion_shift, pose_compose,
                             rigid_inertia_matrix, rotate, rotate6, rotate_inertia, set_at_rest, set_identity)

#: A pivot of ``D_i`` (or of the Cholesky factorisation of ``M``) at or below this fraction of its scale counts as zero.
SINGULAR_RATIO = 1e-12

#: The ABA's arrays. Per body and a base row: the root-frame pose ``(oR, op)`` (the root's, identity, in the base
#: row), ``v``, ``a``; per body: the origin's offset ``d`` from its parent's, ``c``, ``IA``, ``pA``, ``D_i^-1`` (its
#: top-left ``nv_i x nv_i``); per motion column: root-axes ``S``, ``U``, ``u`` and a scratch number ``y``. For the body
#: at hand: its pose in its parent ``(R, p)``, root-axes ``h``, ``I``, ``D_i`` and its factors, ``Ia``, ``pa``,
#: ``Iv``.
aba_workspace = memory("aba_workspace", R=(3, 3), p=(3,), oR=("nb + 1", 3, 3), op=("nb + 1", 3), d=("nb", 3),
                       S=("ncol", 6), h=(3,), I=(3, 3), v=("nb + 1", 6), c=("nb", 6), a=("nb + 1", 6),
                       IA=("nb", 6, 6), pA=("nb", 6), U=("ncol", 6), D=(6, 6), u=("ncol",), y=("ncol",),
                       D_inv=("nb", 6, 6), Ia=(6, 6), pa=(6,), Iv=(6,))


@helper
def ldl_inverse(D, n, scale, D_inv):
    """``D_inv = D^-1`` for the symmetric ``D[:n, :n]`` (lower triangle read, ``n <= 6``) by ``D = L diag(d) L^T``
    factored in place: ``d`` on the diagonal, ``L`` below it. Returns ``-1``, or the first ``j`` whose pivot ``d_j``
    is not above ``SINGULAR_RATIO * scale[j]`` (a NaN included; ``D_inv`` is then not written)."""
    for j in range(n):
        for k in range(j):
            D[j, j] -= D[j, k] * D[j, k] * D[k, k]
        if not D[j, j] > SINGULAR_RATIO * scale[j]:
            return j
        for r in range(j + 1, n):
            for k in range(j):
                D[r, j] -= D[r, k] * D[j, k] * D[k, k]
            D[r, j] /= D[j, j]
    for c in range(n):  # column c of D^-1: L y = e_c, y /= d, L^T x = y; the rows above c are zero in y
        for r in range(c, n):
            s = 1.0 if r == c else 0.0
            for k in range(c, r):
                s -= D[r, k] * D_inv[k, c]
            D_inv[r, c] = s
        for r in range(c, n):
            D_inv[r, c] /= D[r, r]
        for r in range(n - 1, c - 1, -1):
            s = D_inv[r, c]
            for k in range(r + 1, n):
                s -= D[k, r] * D_inv[k, c]
            D_inv[r, c] = s
    for r in range(n):  # the lower triangle holds all of D^-1; the upper one is its mirror, exactly symmetric
        for c in range(r + 1, n):
            D_inv[r, c] = D_inv[c, r]
    return -1


@helper
def column_scale(IA, s, armature):
    """The articulated inertia about (along) the motion column ``s``, plus its rotor's: the scale of the column's
    pivot in ``D``, for a relative test."""
    scale = armature
    for r in range(3):
        scale += (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]) * IA[r, r]
        scale += (s[3] * s[3] + s[4] * s[4] + s[5] * s[5]) * IA[3 + r, 3 + r]
    return scale


@helper
def body_origin_motion(m, w, i, q):
    """Body ``i``'s pose in root axes ``(oR_i, op_i)`` from its parent's, the offset ``d_i`` of its origin from the
    parent's and ``v_i = X_i v_λ`` (a translation in root axes: RBDA Table 7.1's first pass before the joint's own
    motion); ``c_i`` cleared for it."""
    λ = m.parent[i]
    X_up(m, i, q, w.R, w.p)
    pose_compose(w.oR[λ], w.op[λ], w.R, w.p, w.oR[i], w.op[i])
    for r in range(3):
        w.d[i, r] = w.op[i, r] - w.op[λ, r]
    motion_shift(w.d[i], w.v[λ], w.v[i])
    w.c[i] = 0.0


@helper
def body_bias(m, w, i, f_ext):
    """Body ``i``'s inertia about its origin in root axes, ``IA_i = I_i``, and bias force ``pA_i = v_i x* I_i v_i -
    f_ext_i`` (RBDA Table 7.1; ``f_ext`` in body axes, none when it has no rows)."""
    h, I, Iv = w.h, w.I, w.Iv
    h[0], h[1], h[2] = rotate(w.oR[i], m.h[i, 0], m.h[i, 1], m.h[i, 2])
    rotate_inertia(w.oR[i], m.I[i], I)
    rigid_inertia_matrix(m.mass[i], h, I, w.IA[i])
    inertia_times(m.mass[i], h, I, w.v[i], Iv)
    w.pA[i] = 0.0
    cross_force_add(w.v[i], Iv, w.pA[i])
    if f_ext.shape[0] > 0:
        rotate6(w.oR[i], f_ext[i], Iv)
        add_scaled(w.pA[i], -1.0, Iv)


@helper
def one_column_articulated(m, w, i, c0):
    """For body ``i`` of one motion column ``c0`` (most joints), RBDA Table 7.1 with a number for ``D_i``:
        D_i = S_i^T U_i + armature_i,   y = u_i / D_i,   Ia_i = IA_i - U_i U_i^T / D_i
    ``False`` when the pivot ``D_i`` is not positive (NaN included), relative to :func:`column_scale`."""
    U, IA = w.U, w.IA
    D_i = dot6(w.S[c0], U[c0]) + m.armature[c0]
    if not D_i > SINGULAR_RATIO * column_scale(IA[i], w.S[c0], m.armature[c0]):
        return False
    D_inv_i = 1.0 / D_i  # a local: the stores to Ia could alias D_inv's row for all numba knows
    w.D_inv[i, 0, 0] = D_inv_i
    w.y[c0] = w.u[c0] * D_inv_i
    for r in range(6):
        for s in range(6):
            w.Ia[r, s] = IA[i, r, s] - U[c0, r] * U[c0, s] * D_inv_i
    return True


@helper
def articulated_inertia(w, i, c0, c1):
    """``y = D_i^-1 u_i`` and ``Ia_i = IA_i - U_i D_i^-1 U_i^T`` for body ``i``'s columns ``c0:c1`` (RBDA Table 7.1),
    from ``D_i^-1``; ``D``'s rows are left holding ``U D^-1``."""
    U, D, u, y, D_inv, IA, Ia = w.U, w.D, w.u, w.y, w.D_inv, w.IA, w.Ia
    for j in range(c0, c1):  # y = D^-1 u; D's rows now hold U D^-1 (D^-1 symmetric)
        y[j] = 0.0
        D[j - c0] = 0.0
        for k in range(c0, c1):
            y[j] += D_inv[i, j - c0, k - c0] * u[k]
            add_scaled(D[j - c0], D_inv[i, j - c0, k - c0], U[k])
    for r in range(6):
        for s in range(6):
            Ia[r, s] = IA[i, r, s]
            for j in range(c0, c1):
                Ia[r, s] -= U[j, r] * D[j - c0, s]


@helper
def pass_to_parent(w, i, λ, Ia, c0, c1):
    """``IA_λ += X_i^T Ia_i X_i`` and ``pA_λ += X_i^T (pA_i + Ia_i c_i + U_i D_i^-1 u_i)`` (RBDA Table 7.1), ``X_i``
    the translation by ``d_i`` (root axes), ``Ia`` the inertia body ``i`` passes on, ``c0:c1`` its columns in the
    sum (none for a composite body: ``Ia = IA_i``)."""
    matrix_times(Ia, w.c[i], w.pa)
    add_scaled(w.pa, 1.0, w.pA[i])
    for j in range(c0, c1):
        add_scaled(w.pa, w.y[j], w.U[j])
    inertia_shift_add(w.d[i], Ia, w.IA[λ])
    force_shift_add(w.d[i], w.pa, w.pA[λ])


@helper
def acceleration_known(known, k):
    """Whether coordinate ``k`` has a known acceleration under the mask ``known`` (``nv`` flags, or none at all: an
    empty mask, every force known, forward dynamics)."""
    return known.shape[0] > 0 and known[k] != 0


@helper
def joint_motion(m, w, i, known, qd, qdd):
    """Body ``i``'s joint in its first pass: root-axes ``S_i``, ``v_i += S_i qd_i`` and ``c_i = v_i x S_i qd_i +
    S_K qdd_K`` (``K``: its columns of known acceleration; a mimic column moves with ``col_mult`` times its
    source)."""
    S, v, c = w.S, w.v, w.c
    for j in range(m.col_start[i], m.col_start[i + 1]):
        rotate6(w.oR[i], m.S[j], S[j])
        add_scaled(v[i], m.col_mult[j] * qd[m.col_v[j]], S[j])
    for j in range(m.col_start[i], m.col_start[i + 1]):  # a column at a time, once v_i is complete
        k = m.col_v[j]
        cross_motion_add(v[i], S[j], m.col_mult[j] * qd[k], c[i])
        if acceleration_known(known, k):
            add_scaled(c[i], m.col_mult[j] * qdd[k], S[j])


@helper
def column_forces(m, w, i, known, qd, tau):
    """``U_j = IA_i S_j`` and ``u_j = tau_j - friction - S_j^T pA_i`` for body ``i``'s columns of known force;
    ``U_j = 0``, ``u_j = 0`` for those of known acceleration. Returns the number of columns of known force."""
    free = 0
    for j in range(m.col_start[i], m.col_start[i + 1]):
        k = m.col_v[j]
        if acceleration_known(known, k):
            w.U[j] = 0.0
            w.u[j] = 0.0
        else:
            free += 1
            matrix_times(w.IA[i], w.S[j], w.U[j])
            w.u[j] = tau[k] - drive_friction(m, j, qd[k]) - dot6(w.S[j], w.pA[i])
    return free


@helper
def joint_inertia(m, w, i, known, c0, c1):
    """``D_i = S_i^T U_i + diag(armature_i)`` (lower triangle) and its pivots' scales (:func:`column_scale`, in
    ``y``) for body ``i``'s columns ``c0:c1``; a column of known acceleration gets the identity's row and column,
    and so drops out of ``D_i^-1`` (its ``U_j = 0`` makes the other rows' entries zero)."""
    D, y = w.D, w.y
    for j in range(c0, c1):
        if acceleration_known(known, m.col_v[j]):
            y[j] = 1.0
            for k in range(c0, j):
                D[j - c0, k - c0] = 0.0
            D[j - c0, j - c0] = 1.0
        else:
            y[j] = column_scale(w.IA[i], w.S[j], m.armature[j])
            for k in range(c0, j + 1):
                D[j - c0, k - c0] = dot6(w.S[j], w.U[k])
            D[j - c0, j - c0] += m.armature[j]


@helper
def joint_accelerations(m, w, i, known, qdd):
    """``qdd_F = D_i^-1 (u_F - U_F^T a'_i)`` and ``a_i = a'_i + S_F qdd_F`` for body ``i``'s columns ``F`` of known
    force (``a_i`` holds ``a'_i = X_i a_λ + c_i``)."""
    U, u, y, S, a = w.U, w.u, w.y, w.S, w.a
    c0, c1 = m.col_start[i], m.col_start[i + 1]
    if c1 - c0 == 1:
        k = m.col_v[c0]
        if not acceleration_known(known, k):
            qdd[k] = (u[c0] - dot6(U[c0], a[i])) * w.D_inv[i, 0, 0]
            add_scaled(a[i], qdd[k], S[c0])
        return
    for j in range(c0, c1):
        y[j] = u[j] - dot6(U[j], a[i])
    for j in range(c0, c1):
        k = m.col_v[j]
        if not acceleration_known(known, k):
            qdd[k] = 0.0
            for l in range(c0, c1):
                qdd[k] += w.D_inv[i, j - c0, l - c0] * y[l]
            add_scaled(a[i], qdd[k], S[j])


@helper
def body_wrenches(m, w, known, qd, qdd, tau, f):
    """Each body's ``f_i = IA_i a_i + pA_i``: into ``f`` (body axes; ``f[-1]`` the base's share) if it has rows,
    and ``tau_K = S_K^T f_i + drive torque`` for the columns of known acceleration (summed: a mimic column adds to
    its source's)."""
    pa = w.pa
    if known.shape[0] > 0:
        for j in range(m.ncol):
            if known[m.col_v[j]]:
                tau[m.col_v[j]] = 0.0
    if f.shape[0] > 0:
        f[-1] = 0.0
    for i in range(m.nb):
        matrix_times(w.IA[i], w.a[i], pa)
        add_scaled(pa, 1.0, w.pA[i])
        if known.shape[0] > 0:
            for j in range(m.col_start[i], m.col_start[i + 1]):
                k = m.col_v[j]
                if known[k]:
                    tau[k] += m.col_mult[j] * dot6(w.S[j], pa) + drive_torque(m, j, qd[k], qdd[k])
        if f.shape[0] > 0:
            rotate6(w.oR[i].T, pa, f[i])  # to the body's axes
            if m.parent[i] < 0:
                force_shift_add(w.d[i], pa, f[-1])


@arithmetic_kernel
def articulated_body(m, w, known, q, qd, qdd, tau, gravity, f_ext, f):
    """The articulated-body pass of forward and hybrid dynamics (RBDA Table 7.1, with Table 9.6's known
    accelerations) for one state of a robot whose mimic columns all have a known acceleration.

    ``known``: ``nv`` flags, coordinate ``k`` having a known acceleration ``qdd[k]`` where set and a known force
    ``tau[k]`` elsewhere; or an empty mask: every force known (forward dynamics: ``tau`` is then only read). Writes
    the unknown entries of ``qdd`` and ``tau`` and, when ``f`` has rows ``(nb + 1, 6)``, the joint wrenches ``f_i =
    IA_i a_i + pA_i`` (``f[-1]``: the base's share). Returns ``OK``, or ``SINGULAR`` plus the first coordinate of
    known force whose pivot in ``D_i`` is not positive (``qdd`` is then not written).

    Body ``i``'s quantities are taken about its origin with the root's axes: each body's rotation is composed once,
    and ``X_i`` from its parent is a translation by ``d_i`` (the origin's offset), so no articulated inertia is
    rotated (as Pinocchio's world convention; about each body's own origin, tiny distal inertias keep their digits).
    ``S_i`` (``6 x nv_i``, root axes) has a column per coordinate of the joint; ``F`` are its columns of known force,
    ``K`` those of known acceleration:
        v_i = X_i v_λ + S_i qd_i,   c_i = v_i x S_i qd_i + S_K qdd_K,   IA_i = I_i,   pA_i = v_i x* I_i v_i - f_ext_i
        U_F = IA_i S_F,   D_i = S_F^T U_F + diag(armature_F),   u_F = tau_F - drive friction - S_F^T pA_i
        Ia_i = IA_i - U_F D_i^-1 U_F^T,   IA_λ += X_i^T Ia_i X_i,   pA_λ += X_i^T (pA_i + Ia_i c_i + U_F D_i^-1 u_F)
        a'_i = X_i a_λ + c_i,   qdd_F = D_i^-1 (u_F - U_F^T a'_i),   a_i = a'_i + S_F qdd_F
        f_i = IA_i a_i + pA_i,   tau_K = S_K^T f_i + armature_K qdd_K + drive friction
    A body with no column of known force passes ``Ia_i = IA_i`` on (Khalil's composite link, eqs. 95-96). Most
    joints have one coordinate: their ``D_i`` is a number and they take a branch without the loops over columns and
    the ``LDL^T`` inverse (those cost a quarter more on a fixed-base robot). A body whose parent is the world passes
    nothing on. The mask costs forward dynamics one test of its length per column and per body.
    """
    nb, IA, a = m.nb, w.IA, w.a
    set_identity(w.oR[-1], w.op[-1])
    set_at_rest(w.v[-1], a[-1])
    for i in range(nb):
        body_origin_motion(m, w, i, q)
        joint_motion(m, w, i, known, qd, qdd)
        body_bias(m, w, i, f_ext)
    for i in range(nb - 1, -1, -1):  # children have larger indices: IA_i, pA_i are complete here
        λ = m.parent[i]
        c0, c1 = m.col_start[i], m.col_start[i + 1]
        free = column_forces(m, w, i, known, qd, tau)
        if free == 0:  # a composite body (Khalil eqs. 95-96): all of it moves with its parent
            if λ >= 0:
                pass_to_parent(w, i, λ, IA[i], c0, c0)
            continue
        if c1 - c0 == 1:  # its one column has a known force
            if not one_column_articulated(m, w, i, c0):
                return SINGULAR + m.col_v[c0]
        else:
            joint_inertia(m, w, i, known, c0, c1)
            bad = ldl_inverse(w.D, c1 - c0, w.y[c0:c1], w.D_inv[i])
            if bad >= 0:
                return SINGULAR + m.col_v[c0 + bad]
            if λ >= 0:  # (else a floating base: nothing to pass on to the world)
                articulated_inertia(w, i, c0, c1)
        if λ >= 0:  # the world takes what a root joint transmits
            pass_to_parent(w, i, λ, w.Ia, c0, c1)
    base_acceleration(gravity, a[-1])
    for i in range(nb):
        motion_shift(w.d[i], a[m.parent[i]], a[i])
        add_scaled(a[i], 1.0, w.c[i])
        joint_accelerations(m, w, i, known, qdd)
    if known.shape[0] > 0 or f.shape[0] > 0:
        body_wrenches(m, w, known, qd, qdd, tau, f)
    return OK


@arithmetic_kernel
def tree_cholesky(M):
    """``M = L^T L`` in place (``M``'s lower triangle is overwritten by ``L``), factorised from the last row up (RBDA
    Table 6.3): coordinates of a tree in topological order leave no fill-in, so the update of a row ``k`` skips its
    zeros (the coordinates that are not its ancestors). Returns ``-1``, or the last column whose pivot is not
    positive (relative to the largest diagonal entry)."""
    n = M.shape[0]
    scale = 0.0
    for k in range(n):
        scale = np.maximum(scale, M[k, k])  # (numpy's: a traced maximum, not a branch)
    for k in range(n - 1, -1, -1):
        if not M[k, k] > SINGULAR_RATIO * scale:
            return k
        M[k, k] = np.sqrt(M[k, k])
        for i in range(k):
            M[k, i] /= M[k, k]
        for i in range(k):
            L_ki = M[k, i]
            if not skip_zero(L_ki):
                for j in range(i + 1):
                    M[i, j] -= L_ki * M[k, j]
    return -1


@arithmetic_kernel
def tree_solve(L, X):
    """``X = M^-1 X`` in place for ``M = L^T L`` from :func:`tree_cholesky` (RBDA Table 6.4), ``X`` ``(n, m)``: row
    operations that skip the zeros of ``L``, each along a contiguous row of ``X`` (several columns per SIMD
    instruction); a tree's ``L`` has a row's ancestors only, so ``m`` right-hand sides cost ``O(n d m)`` for a tree
    of depth ``d`` instead of a dense ``O(n^2 m)``."""
    n, m = X.shape
    for k in range(n - 1, -1, -1):  # L^T Y = X
        pivot = L[k, k]
        for c in range(m):
            X[k, c] /= pivot
        for i in range(k):
            L_ki = L[k, i]
            if not skip_zero(L_ki):
                for c in range(m):
                    X[i, c] -= L_ki * X[k, c]
    for k in range(n):  # L X = Y
        for i in range(k):
            L_ki = L[k, i]
            if not skip_zero(L_ki):
                for c in range(m):
                    X[k, c] -= L_ki * X[i, c]
        pivot = L[k, k]
        for c in range(m):
            X[k, c] /= pivot


@arithmetic_kernel
def cholesky_solve(M, x):
    """``x = M^-1 x`` in place by :func:`tree_cholesky` (``M`` is overwritten) and :func:`tree_solve`. Returns
    ``-1``, or the last column whose pivot is not positive."""
    bad = tree_cholesky(M)
    if bad < 0:
        tree_solve(M, carve(x, 0, (x.shape[0], 1))[0])
    return bad


#: The arrays of :func:`mass_matrix_dynamics` (``n``: ``nv``, or zero for an empty one): the CRBA's and RNEA's
#: workspaces, ``M``, the bias torques, zero accelerations.
solve_workspace = memory("solve_workspace", parameters=("n",), crba=crba_workspace, rnea=rnea_workspace,
                         M=("n", "n"), bias=("n",), zero=("n",))


@arithmetic_kernel
def mass_matrix_dynamics(m, w, q, qd, tau, gravity, f_ext, qdd, f):
    """Forward dynamics for any tree, mimic joints and coupled motors included: ``M qdd = tau - rnea(q, qd, 0)`` (the
    RNEA term holds bias, external wrenches and drive friction), ``M`` by the CRBA (rotor inertias included), solved
    by Cholesky. Same outputs and return value as :func:`forward`; the joint wrenches come from a second RNEA pass
    with the solved ``qdd``."""
    w.zero[:] = 0.0
    composite_rigid_body(m, w.crba, q, w.M)
    newton_euler(m, w.rnea, q, qd, w.zero, gravity, f_ext, w.bias, w.rnea.f)
    drive_torques_add(m, qd, w.zero, w.bias)
    for k in range(m.nv):
        qdd[k] = tau[k] - w.bias[k]
    bad = cholesky_solve(w.M, qdd)
    if bad >= 0:
        return SINGULAR + bad
    if f.shape[0] > 0:
        newton_euler(m, w.rnea, q, qd, qdd, gravity, f_ext, w.bias, f)
    return OK


#: The workspace of the algorithm :func:`forward` runs for this model, the other one's empty: the ABA's, or a
#: mass-matrix solve's when mimic joints (more motion columns than coordinates) or coupled motors (rotor inertia
#: between joints, off the ABA's per-joint pivots) break the ABA's one-joint-per-body recursion; and the ABA's empty
#: known-acceleration mask (every force known).
forward_workspace = memory("forward_workspace",
                           aba=aba_workspace.sized(nb="0 if ncol != nv or nm > 0 else nb",
                                                   ncol="0 if ncol != nv or nm > 0 else ncol"),
                           solve=solve_workspace.sized(n="nv if ncol != nv or nm > 0 else 0"), every_force=(0,))


@arithmetic_kernel
def forward(m, w, q, qd, tau, gravity, f_ext, qdd, f):
    """Forward dynamics of one state in the :func:`forward_workspace` ``w``: the articulated-body pass with every
    force known, or the mass-matrix solve with mimic joints or coupled motors. Writes ``qdd`` and, if ``f`` has rows,
    the joint wrenches; returns ``OK`` or ``SINGULAR`` plus a coordinate that drives no mass
    (:func:`articulated_body`)."""
    if m.ncol == m.nv and m.nm == 0:
        return articulated_body(m, w.aba, w.every_force, q, qd, qdd, tau, gravity, f_ext, f)
    return mass_matrix_dynamics(m, w.solve, q, qd, tau, gravity, f_ext, qdd, f)


#: The results of :func:`forward_dynamics` (the joint wrenches only with ``joint_wrenches=True``), then the wrenches
#: of every body (likewise) and the forward workspace.
accelerations_memory = memory("accelerations_memory", results=dict(
    accelerations=("nv",), joint_wrenches=(0, 6), base_wrench=(0,)), f=(0, 6), forward=forward_workspace)
wrenches_memory = memory("wrenches_memory", results=dict(
    accelerations=("nv",), joint_wrenches=("nj", 6), base_wrench=(6,)), f=("nb + 1", 6), forward=forward_workspace)


@arithmetic_kernel
def forward_step(m, w, q, qd, tau, f_ext, gravity):
    """Forward dynamics, and the joint loads if the memory has room for them."""
    status = forward(m, w.forward, q, qd, tau, gravity, f_ext, w.accelerations, w.f)
    if w.f.shape[0] > 0:
        joint_loads(m, w.f, w.joint_wrenches, w.base_wrench)
    return status


class ForwardDynamicsResult(wrenches_memory.results):
    """``accelerations`` ``(…, nv)``: ``qdd``. ``joint_wrenches`` ``(…, len(joint_names), 6)`` and ``base_wrench``
    ``(…, 6)``: the joint reaction wrenches of that motion, as in :class:`~rne_dynamics.rnea.InverseDynamicsResult`."""
    __slots__ = ()


ACCELERATIONS = Algorithm(forward_step, accelerations_memory, ("q", "qd", "tau"), "the accelerations",
                          gravity=True, wrenches=True)
WITH_WRENCHES = Algorithm(forward_step, wrenches_memory, ("q", "qd", "tau"), "the accelerations",
                          ForwardDynamicsResult, gravity=True, wrenches=True)


def forward_dynamics(robot, q, qd, tau, *, gravity=None, external_wrenches=None, joint_wrenches=False, data=None,
                     drive=True):
    """Joint accelerations ``qdd`` for positions ``q``, velocities ``qd`` and joint torques/forces ``tau``.

    ``gravity``: 3-vector in the root-link frame, default ``(0, 0, -9.81)``. ``external_wrenches``:
    ``{link: [fx, fy, fz, tx, ty, tz]}`` applied on the link by the environment, link frame, about its origin.
    Returns ``qdd`` ``(…, dof)``; with ``joint_wrenches=True`` a :class:`ForwardDynamicsResult` that also holds the
    joint reaction wrenches of that motion. One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch;
    ``data``: a ``robot.data()`` to compute in. Raises :class:`~rne_dynamics.errors.SingularMassMatrixError` naming a
    joint that drives no mass.
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only.
    """
    if joint_wrenches is False:
        return ACCELERATIONS.run(robot, data, (q, qd, tau), gravity, external_wrenches, drive=drive)
    if joint_wrenches is not True:
        raise StateError(f"joint_wrenches must be True or False, got {joint_wrenches!r}")
    return WITH_WRENCHES.run(robot, data, (q, qd, tau), gravity, external_wrenches, drive=drive)
