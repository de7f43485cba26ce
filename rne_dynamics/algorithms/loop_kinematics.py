"""The loop equations as kernel steps (Khalil 2010, Secs. 2.2, 4 and 5): the closures' constraints ``phi(q)``, their
Jacobian ``J`` and ``gamma = -Jdot qd`` in one compiled call (:data:`CONSTRAINTS`, what the Python solver of
:mod:`~rne_dynamics.algorithms.loops` calls), the cut wrenches and the loads they put on the tree's joints
(:func:`cut_loads`), and the whole warm-started closed-loop inverse dynamics of one state (:data:`CLOSED_LOOP`:
Newton on the closures, ``G``, ``qd``, ``qdd``, the tree's inverse dynamics, the cut wrenches), which the robot's
written code runs as one machine-code call. The Python solver and the one-call solve run the same helpers.

The closures come as a table (one row per closure, :data:`CUT` numbers, made by ``loops._cuts``): each side's body
(``-1``: the fixed base, the last row of the body arrays) and the cut frame's pose in it, the kind, the axis and
``K^T`` padded to 6 rows. A closure's constraints take rows ``6 k`` to ``6 k + 5`` (the padding rows zero).

A module of its own: the loops' Python (``loops.py``) imports no kernel decorator, so its edits recompile nothing.
"""
import math

import numpy as np

from .._jit import OK, arithmetic_kernel, helper
from ..model.memory import memory
from ..model.spatial import cross
from .driver import Algorithm
from .kinematics import world_motion
from .rnea import inverse_dynamics_memory, inverse_dynamics_step

#: Columns of the closure table: side ``a`` (body, ``R`` row by row, ``p``) from :data:`SIDE_A`, side ``b`` from
#: :data:`SIDE_B`, the kind (:data:`KINDS`), the axis, ``K^T`` (6 x 6, row by row).
SIDE_A, SIDE_B, KIND, AXIS, SELECT, CUT = 0, 13, 26, 27, 30, 66
POINT, REVOLUTE, PRISMATIC, WELD = range(4)
KINDS = {"point": POINT, "revolute": REVOLUTE, "prismatic": PRISMATIC, "weld": WELD}
#: Loops close to this (m, rad) or better; the contract asks for 1e-10.
CLOSURE_TOLERANCE = 1e-12
#: Relative singular value below which a direction of the constraint Jacobian counts as lost (rank-revealing).
RANK_TOLERANCE = 1e-9
#: Newton steps of the one-call solve: a warm start (the previous state's ``q``, a controller at 200 Hz) takes two
#: or three; a state that needs more (a cold start) is handed back to the Python solver.
NEWTON_STEPS = 3
#: Status of a state the one-call solve hands back to the Python solver: not closed in :data:`NEWTON_STEPS`, a step
#: that does not decrease the residual (the Python solver shortens it), a singular or ill-conditioned ``J_p``.
HANDED_BACK = 1024
#: How much smaller than its column's largest entry a pivot may be (:func:`passive_lu`; sparse LU codes take 10):
#: on the Gough-Stewart platform, legs swinging 10 cm, 2 took 57% of the states, 4 77%, 8 94% (the others: a pivot
#: order far from the traced state's, handed back), agreeing with the Python solver to 1.2e-14.
PIVOT_RATIO = 8.0

#: Each closure's constraints at ``(q, qd)``: ``phi``, ``J``, ``gamma`` (6 rows per closure), the cut frames (origins
#: ``p_a``, ``p_b`` and ``b``'s axes ``R_b`` in the world, ``d``: ``a``'s origin from ``b``'s in ``b`` axes), the
#: bodies' world poses ``(oR, op)`` (row ``-1``: the fixed base); then the bodies' motion
#: (:func:`~rne_dynamics.algorithms.kinematics.world_motion`) and scratch. At most ``nl`` closures.
constraints_memory = memory("constraints_memory", results=dict(
    phi=("6 * nl",), J=("6 * nl", "nv"), gamma=("6 * nl",), p_a=("nl", 3), p_b=("nl", 3), R_b=("nl", 3, 3),
    d=("nl", 3), oR=("nb + 1", 3, 3), op=("nb + 1", 3)),
    ov=("nb + 1", 6), oa=("nb + 1", 6), oS=("ncol", 6), zero=("nv",), R_a=(3, 3), R_rel=(3, 3), KR=(6, 6),
    Jw=(6, "nv"))


@helper
def cut_frame(w, cuts, k, side, R, p):
    """The world pose ``(R, p)`` of closure ``k``'s cut frame on ``side`` (:data:`SIDE_A`, :data:`SIDE_B`):
    ``oX_body`` composed with the frame's pose in its body."""
    body = int(cuts[k, side])
    for r in range(3):
        p[r] = (w.oR[body, r, 0] * cuts[k, side + 10] + w.oR[body, r, 1] * cuts[k, side + 11]
                + w.oR[body, r, 2] * cuts[k, side + 12]) + w.op[body, r]
        for c in range(3):
            R[r, c] = (w.oR[body, r, 0] * cuts[k, side + 1 + c] + w.oR[body, r, 1] * cuts[k, side + 4 + c]
                       + w.oR[body, r, 2] * cuts[k, side + 7 + c])


@helper
def rotation_log(R):
    """The rotation vector of ``R`` (the inverse of Rodrigues' formula)."""
    angle = math.acos(min(max((R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0, -1.0), 1.0))
    w0, w1, w2 = (R[2, 1] - R[1, 2]) / 2.0, (R[0, 2] - R[2, 0]) / 2.0, (R[1, 0] - R[0, 1]) / 2.0
    if angle < 1e-6:
        return w0, w1, w2
    if angle > math.pi - 1e-6:  # the axis from the symmetric part: the column of the largest diagonal entry
        k = 0
        for j in range(1, 3):
            if R[j, j] > R[k, k]:
                k = j
        scale = angle / math.sqrt(2.0 * (1.0 + R[k, k]))
        return (R[0, k] + (k == 0)) * scale, (R[1, k] + (k == 1)) * scale, (R[2, k] + (k == 2)) * scale
    scale = angle / math.sin(angle)
    return scale * w0, scale * w1, scale * w2


@helper
def orientation_error(w, cuts, k):
    """Closure ``k``'s orientation error in ``b`` axes, with ``R_rel = R_b^T R_a``: ``axis x R_rel axis`` for a
    revolute cut (its derivative at closure is the relative angular velocity normal to the axis), else
    ``log(R_rel)``."""
    kind = int(cuts[k, KIND])
    if kind == POINT:
        return 0.0, 0.0, 0.0
    R_b, R_rel = w.R_b[k], w.R_rel
    for r in range(3):
        for c in range(3):
            R_rel[r, c] = R_b[0, r] * w.R_a[0, c] + R_b[1, r] * w.R_a[1, c] + R_b[2, r] * w.R_a[2, c]
    if kind != REVOLUTE:
        return rotation_log(R_rel)
    a0, a1, a2 = cuts[k, AXIS], cuts[k, AXIS + 1], cuts[k, AXIS + 2]
    turned = (R_rel[0, 0] * a0 + R_rel[0, 1] * a1 + R_rel[0, 2] * a2, R_rel[1, 0] * a0 + R_rel[1, 1] * a1
              + R_rel[1, 2] * a2, R_rel[2, 0] * a0 + R_rel[2, 1] * a1 + R_rel[2, 2] * a2)
    return cross(a0, a1, a2, turned[0], turned[1], turned[2])


@helper
def relative_columns(m, w, cuts, k):
    """``w.Jw`` ``(6, nv)``: the spatial Jacobian (at the world origin) of ``link_a``'s body relative to
    ``link_b``'s: the motion columns supporting one side and not the other, ``+`` for ``a``, ``-`` for ``b``."""
    w.Jw[:] = 0.0
    i, j = int(cuts[k, SIDE_A]), int(cuts[k, SIDE_B])
    while i != j:  # bodies are numbered from the root: the larger is not an ancestor of the other
        body, sign = (i, 1.0) if i > j else (j, -1.0)
        for col in range(m.col_start[body], m.col_start[body + 1]):
            for r in range(6):
                w.Jw[r, m.col_v[col]] += sign * m.col_mult[col] * w.oS[col, r]
        if i > j:
            i = m.parent[i]
        else:
            j = m.parent[j]


@helper
def point_motion(w, body, p):
    """Velocity ``v``, angular velocity, classical acceleration ``a`` and angular acceleration of the point of
    ``body`` at ``p`` (world): ``v = v_0 + w x p``, ``a = a_0 + alpha x p + w x v`` (velocity-product terms)."""
    v0, a0 = w.ov[body], w.oa[body]
    c = cross(p[0], p[1], p[2], v0[3], v0[4], v0[5])
    v = (v0[0] - c[0], v0[1] - c[1], v0[2] - c[2])
    c = cross(p[0], p[1], p[2], a0[3], a0[4], a0[5])
    t = cross(v0[3], v0[4], v0[5], v[0], v[1], v[2])
    a = (a0[0] - c[0] + t[0], a0[1] - c[1] + t[1], a0[2] - c[2] + t[2])
    return v, (v0[3], v0[4], v0[5]), a, (a0[3], a0[4], a0[5])


@helper
def closure_gamma(w, cuts, k):
    """``gamma`` of closure ``k``: the relative acceleration of the cut point seen from frame ``b``, which turns
    with ``w_b``, ``-K^T R_b^T [a_a - a_b - 2 w_b x (v_a - v_b); alpha_a - alpha_b - w_b x (w_a - w_b)]``."""
    p = w.p_a[k]
    v_a, w_a, a_a, alpha_a = point_motion(w, int(cuts[k, SIDE_A]), p)
    v_b, w_b, a_b, alpha_b = point_motion(w, int(cuts[k, SIDE_B]), p)
    t = cross(w_b[0], w_b[1], w_b[2], v_a[0] - v_b[0], v_a[1] - v_b[1], v_a[2] - v_b[2])
    s = cross(w_b[0], w_b[1], w_b[2], w_a[0] - w_b[0], w_a[1] - w_b[1], w_a[2] - w_b[2])
    x = (a_a[0] - a_b[0] - 2.0 * t[0], a_a[1] - a_b[1] - 2.0 * t[1], a_a[2] - a_b[2] - 2.0 * t[2],
         alpha_a[0] - alpha_b[0] - s[0], alpha_a[1] - alpha_b[1] - s[1], alpha_a[2] - alpha_b[2] - s[2])
    for r in range(6):
        w.gamma[6 * k + r] = -(w.KR[r, 0] * x[0] + w.KR[r, 1] * x[1] + w.KR[r, 2] * x[2] + w.KR[r, 3] * x[3]
                               + w.KR[r, 4] * x[4] + w.KR[r, 5] * x[5])


@arithmetic_kernel
def closure_constraints(m, w, q, qd, cuts):
    """Every closure's ``phi``, ``J`` and ``gamma`` at ``(q, qd)`` (Khalil eqs. 3, 4) into ``w``
    (:data:`constraints_memory`), from the bodies' world motion (RBDA Sec. 2.9).

    ``phi``: the origin of frame ``a`` from frame ``b``'s in ``b`` axes (the components ``K`` selects), plus the
    orientation error (:func:`orientation_error`). ``J``: ``K^T`` of the relative twist of the cut point on
    ``link_a`` with respect to the material point of ``link_b`` under it, in ``b`` axes (``oS`` at the world origin,
    moved to the cut point: ``v_0 - p x w``). ``gamma``: :func:`closure_gamma`."""
    world_motion(m, w, q, qd, w.zero)
    w.phi[:] = 0.0
    w.J[:] = 0.0
    w.gamma[:] = 0.0
    w.p_a[:] = 0.0
    w.p_b[:] = 0.0
    w.R_b[:] = 0.0
    w.d[:] = 0.0
    for k in range(cuts.shape[0]):
        cut_frame(w, cuts, k, SIDE_A, w.R_a, w.p_a[k])
        cut_frame(w, cuts, k, SIDE_B, w.R_b[k], w.p_b[k])
        R_b, p = w.R_b[k], w.p_a[k]
        d0, d1, d2 = p[0] - w.p_b[k, 0], p[1] - w.p_b[k, 1], p[2] - w.p_b[k, 2]
        for c in range(3):
            w.d[k, c] = R_b[0, c] * d0 + R_b[1, c] * d1 + R_b[2, c] * d2
        for r in range(6):  # KR = K^T diag(R_b^T, R_b^T): the constrained components of a world motion vector
            for half in range(2):
                s = SELECT + 6 * r + 3 * half
                for c in range(3):
                    w.KR[r, 3 * half + c] = (cuts[k, s] * R_b[c, 0] + cuts[k, s + 1] * R_b[c, 1]
                                             + cuts[k, s + 2] * R_b[c, 2])
        rotation = orientation_error(w, cuts, k)
        for r in range(6):
            s = SELECT + 6 * r + 3
            w.phi[6 * k + r] = (w.KR[r, 0] * d0 + w.KR[r, 1] * d1 + w.KR[r, 2] * d2 + cuts[k, s] * rotation[0]
                                + cuts[k, s + 1] * rotation[1] + cuts[k, s + 2] * rotation[2])
        relative_columns(m, w, cuts, k)
        for v in range(m.nv):
            c0, c1, c2 = cross(p[0], p[1], p[2], w.Jw[3, v], w.Jw[4, v], w.Jw[5, v])
            w.Jw[0, v] -= c0
            w.Jw[1, v] -= c1
            w.Jw[2, v] -= c2
            for r in range(6):
                w.J[6 * k + r, v] = (w.KR[r, 0] * w.Jw[0, v] + w.KR[r, 1] * w.Jw[1, v] + w.KR[r, 2] * w.Jw[2, v]
                                     + w.KR[r, 3] * w.Jw[3, v] + w.KR[r, 4] * w.Jw[4, v] + w.KR[r, 5] * w.Jw[5, v])
        closure_gamma(w, cuts, k)


@arithmetic_kernel
def constraints_step(m, w, q, qd, cuts):
    """The loop constraints at ``(q, qd)`` of the closures ``cuts``."""
    closure_constraints(m, w, q, qd, cuts)


CONSTRAINTS = Algorithm(constraints_step, constraints_memory, ("q", "qd"), "the loop constraints",
                        constraints_memory.results, extras=("cuts",))


@arithmetic_kernel
def cut_loads(m, cuts, c, lam, wrenches, joint_wrenches, load):
    """From the multipliers ``lam`` (6 rows per closure): each cut wrench ``w = K lambda`` on ``link_b`` by
    ``link_a`` into ``wrenches[k]`` (cut frame on ``link_b``, about its origin: ``n + d x f``), and what these
    loads add to the tree's ``joint_wrenches`` ``(nj, 6)``: each joint carries the loads applied beyond it (the
    RNEA's backward pass, RBDA Table 5.1, of these loads alone: ``f_i -= X_i^* f_ext``; the wrench on ``link_b``,
    its opposite on ``link_a``), in its child frame about its origin. ``c``: the constraints' cut frames and body
    poses (:data:`constraints_memory`); ``load`` ``(nb + 1, 6)``: scratch."""
    wrenches[:] = 0.0
    load[:] = 0.0
    for k in range(cuts.shape[0]):
        for col in range(6):
            for r in range(6):
                wrenches[k, col] += cuts[k, SELECT + 6 * r + col] * lam[6 * k + r]
        x = wrenches[k]
        t = cross(c.d[k, 0], c.d[k, 1], c.d[k, 2], x[0], x[1], x[2])
        x[3], x[4], x[5] = x[3] + t[0], x[4] + t[1], x[5] + t[2]
        R, p = c.R_b[k], c.p_b[k]
        f = (R[0, 0] * x[0] + R[0, 1] * x[1] + R[0, 2] * x[2], R[1, 0] * x[0] + R[1, 1] * x[1] + R[1, 2] * x[2],
             R[2, 0] * x[0] + R[2, 1] * x[1] + R[2, 2] * x[2])
        t = cross(p[0], p[1], p[2], f[0], f[1], f[2])
        spatial = (f[0], f[1], f[2], R[0, 0] * x[3] + R[0, 1] * x[4] + R[0, 2] * x[5] + t[0],
                   R[1, 0] * x[3] + R[1, 1] * x[4] + R[1, 2] * x[5] + t[1],
                   R[2, 0] * x[3] + R[2, 1] * x[4] + R[2, 2] * x[5] + t[2])
        i, j = int(cuts[k, SIDE_A]), int(cuts[k, SIDE_B])
        while i != j:
            if i > j:
                for e in range(6):
                    load[i, e] += spatial[e]
                i = m.parent[i]
            else:
                for e in range(6):
                    load[j, e] -= spatial[e]
                j = m.parent[j]
    for jj in range(m.nj):
        body = m.joint_body[jj]
        L, R = load[body], c.oR[body]
        t = cross(c.op[body, 0], c.op[body, 1], c.op[body, 2], L[0], L[1], L[2])
        n = (L[3] - t[0], L[4] - t[1], L[5] - t[2])
        for e in range(3):
            joint_wrenches[jj, e] += R[0, e] * L[0] + R[1, e] * L[1] + R[2, e] * L[2]
            joint_wrenches[jj, 3 + e] += R[0, e] * n[0] + R[1, e] * n[1] + R[2, e] * n[2]


# --- the one-call solve ---------------------------------------------------------------------------------------------
# ``split``: ``[N, the N actuated velocity indices, the nv - N passive ones, the constraint rows (nv - N: J_p is
# square), in the order of their pivots at the traced state]``.

@helper
def far_from_rank_loss(n, norm, inverse_norm):
    """Whether a square matrix of size ``n`` is far from losing rank, from its 1-norm and its inverse's: its 2-norm
    condition number, at most ``n`` times the 1-norm one (``cond_2 <= n cond_1``), is below ``1 / RANK_TOLERANCE``."""
    return n * norm * inverse_norm * RANK_TOLERANCE < 1.0


@helper
def positive(x):
    """1 where ``x > 0``, 0 where ``x < 0`` (0.5 at 0), as arithmetic: the written code keeps a branch on it as a
    guard, a product with it as a product."""
    return 0.5 + 0.5 * np.sign(x)


@helper
def residual_size(phi, rows):
    """``(max |phi|, |phi|^2)`` over the constraint rows."""
    largest, squares = 0.0, 0.0
    for i in range(rows.shape[0]):
        x = phi[int(rows[i])]
        largest = np.fmax(largest, abs(x))
        squares += x * x
    return largest, squares


@arithmetic_kernel
def passive_lu(J, rows, passive, lu, order, ratio):
    """LU factors of ``J_p`` (``J``'s ``rows`` and ``passive`` columns) into ``lu``, the row order into ``order``;
    :data:`HANDED_BACK` for a zero column. Threshold pivoting (Golub & Van Loan, Sec. 3.4): the pivot is the first
    row, in the order of ``rows``, within ``ratio`` of its column's largest entry (``ratio`` 1: partial pivoting),
    so the multipliers stay below the ratio. The one-call solve takes ``rows`` in the order partial pivoting gives
    at its traced state and :data:`PIVOT_RATIO`: the written code's guards on these comparisons then hold along a
    motion (partial pivoting's near-ties would flip them)."""
    n = passive.shape[0]
    for i in range(n):
        order[i] = rows[i]
        for j in range(n):
            lu[i, j] = J[int(rows[i]), int(passive[j])]
    for k in range(n):
        largest = 0.0
        for r in range(k, n):
            largest = np.fmax(largest, abs(lu[r, k]))
        if largest == 0.0:
            return HANDED_BACK
        p = k
        while ratio * abs(lu[p, k]) < largest:
            p += 1
        if p != k:
            for j in range(n):
                lu[k, j], lu[p, j] = lu[p, j], lu[k, j]
            order[k], order[p] = order[p], order[k]
        for r in range(k + 1, n):
            f = lu[r, k] / lu[k, k]
            lu[r, k] = f
            for j in range(k + 1, n):
                lu[r, j] -= f * lu[k, j]
    return OK


@arithmetic_kernel
def lu_solve(lu, order, n, b, x):
    """``x = J_p^-1 b`` from :func:`passive_lu`'s factors; ``b`` indexed by the constraint rows."""
    for i in range(n):
        x[i] = b[int(order[i])]
        for j in range(i):
            x[i] -= lu[i, j] * x[j]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            x[i] -= lu[i, j] * x[j]
        x[i] /= lu[i, i]


closed_loop_memory = memory("closed_loop_memory", results=dict(
    torques=("nv",), q=("nq",), qd=("nv",), qdd=("nv",), joint_wrenches=("nj", 6), loop_wrenches=("nl", 6),
    tree_torques=("nv",)),
    constraints=constraints_memory, tree=inverse_dynamics_memory, lu=("nv", "nv"), order=("nv",),
    inverse=("nv", "nv"), G=("nv", "nv"), rhs=("6 * nl",), x=("nv",), lam=("6 * nl",), load=("nb + 1", 6))


@arithmetic_kernel
def closed_loop_step(m, w, q, qd, qdd, f_ext, gravity, cuts, split):
    """Closed-loop inverse dynamics of one state (Khalil eqs. 55-57) from ``q`` (the guess, its actuated entries the
    actuated coordinates) and the actuated entries of ``qd`` and ``qdd``: Newton on the passive coordinates (the
    Python solver's steps, each taken only while the loops are open), ``G = d q / d q_a`` (``G_p = -J_p^-1 J_a``),
    ``qd = G qd_a``, ``qdd_p = J_p^-1 (gamma - J_a qdd_a)``, the tree's inverse dynamics, ``Gamma_a = G^T
    Gamma_tree``, the cut wrenches ``lambda = -J_p^-T Gamma_tree,p`` and the mechanism's joint wrenches.
    :data:`HANDED_BACK` for a state the Python solver must take (its results and errors are the reference)."""
    c = w.constraints
    n_a, n = int(split[0]), m.nv - int(split[0])
    actuated, passive, rows = split[1:1 + n_a], split[1 + n_a:1 + m.nv], split[1 + m.nv:]
    if m.nq != m.nv:  # Newton here adds steps to q
        return HANDED_BACK
    for k in range(m.nq):
        w.q[k] = q[k]
    c.zero[:] = 0.0
    closure_constraints(m, c, w.q, c.zero, cuts)
    error, squares = residual_size(c.phi, rows)
    for _ in range(NEWTON_STEPS):
        moving = positive(error - CLOSURE_TOLERANCE)  # 0 once closed: the later steps leave q as it is
        if passive_lu(c.J, rows, passive, w.lu, w.order, PIVOT_RATIO) != OK:
            return HANDED_BACK
        lu_solve(w.lu, w.order, n, c.phi, w.x)
        for j in range(n):
            w.q[int(passive[j])] -= moving * w.x[j]
        closure_constraints(m, c, w.q, c.zero, cuts)
        trial_error, trial_squares = residual_size(c.phi, rows)
        if moving * (1.0 - positive(squares - trial_squares)) > 0.0:  # a step the Python solver would shorten
            return HANDED_BACK
        error, squares = trial_error, trial_squares
    if not error < CLOSURE_TOLERANCE:
        return HANDED_BACK
    if passive_lu(c.J, rows, passive, w.lu, w.order, PIVOT_RATIO) != OK:
        return HANDED_BACK
    norm_J, norm_inverse = 0.0, 0.0
    for j in range(n):  # J_p^-1, column by column, and the 1-norms of J_p and of its inverse
        w.rhs[:] = 0.0
        w.rhs[int(rows[j])] = 1.0
        lu_solve(w.lu, w.order, n, w.rhs, w.x)
        column_J, column_inverse = 0.0, 0.0
        for i in range(n):
            w.inverse[i, j] = w.x[i]
            column_inverse += abs(w.x[i])
            column_J += abs(c.J[int(rows[i]), int(passive[j])])
        norm_J, norm_inverse = np.fmax(norm_J, column_J), np.fmax(norm_inverse, column_inverse)
    if not far_from_rank_loss(n, norm_J, norm_inverse):  # the Python solver's SVD decides
        return HANDED_BACK
    for j in range(n):
        for a in range(n_a):
            s = 0.0
            for i in range(n):
                s += w.inverse[j, i] * c.J[int(rows[i]), int(actuated[a])]
            w.G[j, a] = -s
    w.qd[:] = 0.0
    w.qdd[:] = 0.0
    for a in range(n_a):
        w.qd[int(actuated[a])] = qd[int(actuated[a])]
        w.qdd[int(actuated[a])] = qdd[int(actuated[a])]
    for j in range(n):
        s = 0.0
        for a in range(n_a):
            s += w.G[j, a] * qd[int(actuated[a])]
        w.qd[int(passive[j])] = s
    closure_constraints(m, c, w.q, w.qd, cuts)
    for i in range(n):
        s = c.gamma[int(rows[i])]
        for a in range(n_a):
            s -= c.J[int(rows[i]), int(actuated[a])] * qdd[int(actuated[a])]
        w.x[i] = s
    for j in range(n):
        s = 0.0
        for i in range(n):
            s += w.inverse[j, i] * w.x[i]
        w.qdd[int(passive[j])] = s
    tree = w.tree
    inverse_dynamics_step(m, tree, w.q, w.qd, w.qdd, f_ext, gravity)
    w.torques[:] = 0.0
    for a in range(n_a):
        s = tree.torques[int(actuated[a])]
        for j in range(n):
            s += w.G[j, a] * tree.torques[int(passive[j])]
        w.torques[a] = s
    w.lam[:] = 0.0
    for i in range(n):
        s = 0.0
        for j in range(n):
            s += w.inverse[j, i] * tree.torques[int(passive[j])]
        w.lam[int(rows[i])] = -s
    for i in range(m.nv):
        w.tree_torques[i] = tree.torques[i]
    for j in range(m.nj):
        for e in range(6):
            w.joint_wrenches[j, e] = tree.joint_wrenches[j, e]
    cut_loads(m, cuts, c, w.lam, w.loop_wrenches, w.joint_wrenches, w.load)
    return OK


CLOSED_LOOP = Algorithm(closed_loop_step, closed_loop_memory, ("q", "qd", "qdd"), "the closed-loop torques",
                        closed_loop_memory.results, gravity=True, wrenches=True, extras=("cuts", "split"),
                        generic=False)  # a state its written code hands back takes the Python solver
