"""Dynamics written out for one robot: the tree unrolled and the model's numbers as constants, Khalil &
Kleinfinger's "customized symbolic" models (as RobCoGen and GRiD generate in C++).

:func:`kernel_source` writes the Python source of one function per call for a robot of any joints and base:
inverse dynamics (RNEA, RBDA Table 5.1, with the drive terms and the joint loads), gravity torques (the same pass at
rest), the mass matrix (CRBA, RBDA Table 6.2, with the rotor inertias) and forward dynamics (``M qdd = tau - bias``
solved by the tree's ``L^T L`` factorisation, RBDA Tables 6.3-6.4). Each computes what the generic kernel computes,
in the same body frames and into the same result layout, returning the driver's status codes: every product with a
zero of the model is left out and every product of two constants is folded, so a 6-joint arm's inverse dynamics is
a few hundred multiply-adds in registers, about a fifth of the generic kernel's time (measured, see README); numba
compiles it like any kernel. The generic kernels stay the reference: the tests hold these to them on every
example-robot-data robot. :func:`specialised_data` puts them in a ``Data``.
"""
import glob
import hashlib
import importlib.util
import os
import re
import sys
from types import SimpleNamespace

import numpy as np


from .._jit import numba
from ..model.joints import FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE_UNIT, SPHERICAL, is_revolute
from ..model.robot import model_view
from .aba import ACCELERATIONS, SINGULAR_RATIO
from .configuration import neutral
from .crba import MASS_MATRIX
from .derivatives import AT_ACCELERATION, FORWARD_DERIVATIVES
from .driver import CHUNK, BAD_SHAPE, NOT_FINITE, NOT_UNIT, OK, OVERFLOW, SINGULAR
from .gravity import GRAVITY
from .inputs import QUATERNION_TOLERANCE
from .rnea import INVERSE_DYNAMICS


class Unsupported(ValueError):
    """A robot this module cannot write out (say why: the generic kernel serves it)."""


class Straight:
    """Straight-line code with constants folded: a value is a float (a constant) or a str (a local variable)."""

    def __init__(self):
        self.lines = []
        self.count = 0

    def let(self, expression, prefix="t"):
        """A new local holding ``expression``."""
        name = f"{prefix}{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {expression}")
        return name

    def sum(self, terms, constant=0.0):
        """``constant + sum of k a b`` over ``terms`` ``(a, b)`` or ``(a, b, k)``: products with a zero left out,
        products of constants folded; a local, a constant, or a bare variable when that is the whole sum."""
        products = []
        for a, b, *k in terms:
            k = k[0] if k else 1.0
            if isinstance(a, float) and isinstance(b, float):
                constant += k * a * b
            elif isinstance(a, float) or isinstance(b, float):
                c, x = (a, b) if isinstance(a, float) else (b, a)
                if k * c != 0.0:
                    products.append((k * c, x))
            else:
                products.append((k, f"{a} * {b}"))
        if not products:
            return constant
        if len(products) == 1 and products[0][0] == 1.0 and constant == 0.0 and " " not in products[0][1]:
            return products[0][1]
        text = ""
        for k, x in products:
            term = x if abs(k) == 1.0 else f"{abs(k)!r} * {x}"
            text = (f"-{term}" if k < 0 else term) if not text else f"{text} {'-' if k < 0 else '+'} {term}"
        if constant != 0.0:
            text += f" {'-' if constant < 0 else '+'} {abs(constant)!r}"
        return self.let(text)


def is_zero(x):
    """``x`` is the constant zero (a product with it is left out)."""
    return isinstance(x, float) and x == 0.0


def negated(terms):
    """The terms of ``-sum(terms)``."""
    return [(a, b, -k[0] if k else -1.0) for a, b, *k in terms]


def cross_terms(a, b):
    """The terms of ``a x b``, per component, for :meth:`Straight.sum`."""
    return ([(a[1], b[2]), (a[2], b[1], -1.0)], [(a[2], b[0]), (a[0], b[2], -1.0)],
            [(a[0], b[1]), (a[1], b[0], -1.0)])


def inertia_terms(mass, h, I, x):
    """The terms of ``I x = [mass x_lin - h x x_ang; I_rot x_ang + h x x_lin]`` (``spatial.inertia_times``)."""
    return ([[(mass, x[r])] + negated(cross_terms(h, x[3:])[r]) for r in range(3)]
            + [[(I[r][c], x[3 + c]) for c in range(3)] + cross_terms(h, x[:3])[r] for r in range(3)])


def rotated(out, R, x):
    """``R x`` for a 3 x 3 ``R`` of expressions."""
    return [out.sum([(R[r][c], x[c]) for c in range(3)]) for r in range(3)]


def quaternion_rotation(out, x, y, z, w):
    """The rows of the rotation of the quaternion ``(x, y, z, w)`` (scalar last) scaled to unit norm on the way,
    ``R = 1 + 2 w [u]x + 2 [u]x^2`` with ``2 / |q|^2`` in place of 2 (``spatial.quaternion_rotation``)."""
    s = out.let(f"2.0 / ({x} * {x} + {y} * {y} + {z} * {z} + {w} * {w})", "s")
    sx, sy, sz = (out.sum([(s, u)]) for u in (x, y, z))
    xx, yy, zz, xy, xz, yz = (out.sum([(a, b)]) for a, b in ((sx, x), (sy, y), (sz, z), (sx, y), (sx, z), (sy, z)))
    xw, yw, zw = (out.sum([(a, w)]) for a in (sx, sy, sz))
    return ([out.sum([(yy, -1.0), (zz, -1.0)], 1.0), out.sum([(xy, 1.0), (zw, -1.0)]), out.sum([(xz, 1.0), (yw, 1.0)])],
            [out.sum([(xy, 1.0), (zw, 1.0)]), out.sum([(xx, -1.0), (zz, -1.0)], 1.0), out.sum([(yz, 1.0), (xw, -1.0)])],
            [out.sum([(xz, 1.0), (yw, -1.0)]), out.sum([(yz, 1.0), (xw, 1.0)]), out.sum([(xx, -1.0), (yy, -1.0)], 1.0)])


def body_pose(m, i, q, out):
    """``(R, p)`` of body ``i`` in its parent at configuration ``q`` (``joints.X_up``: ``R = R_tree R_J``,
    ``p = p_tree + R_tree p_J``), as expressions."""
    code, k = int(m.jtype[i]), int(m.idx_q[i])
    R_tree, p_tree = [[float(x) for x in row] for row in m.R_tree[i]], [float(x) for x in m.p_tree[i]]
    if code == PRISMATIC or is_revolute(code):
        q_i = out.sum([(q[k], float(m.q_mult[i]))], float(m.q_offset[i]))
    if code == PRISMATIC:
        return R_tree, [out.sum([(q_i, float(x))], p_r) for x, p_r in zip(m.R_tree[i] @ m.axis[i], p_tree)]
    if code >= REVOLUTE_UNIT:  # about ±e_k: columns k1, k2 of R_tree turn, column k stays
        s, c = out.let(f"math.sin({q_i})", "s"), out.let(f"math.cos({q_i})", "c")
        k, sign = code - REVOLUTE_UNIT, float(m.axis[i, code - REVOLUTE_UNIT])
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        R = [row[:] for row in R_tree]
        for r in range(3):
            R[r][k1] = out.sum([(c, R_tree[r][k1]), (s, sign * R_tree[r][k2])])
            R[r][k2] = out.sum([(c, R_tree[r][k2]), (s, -sign * R_tree[r][k1])])
        return R, p_tree
    if is_revolute(code) or code == PLANAR:  # Rodrigues: R_tree + sin R_sin + (1 - cos) R_versine
        angle = q_i if code != PLANAR else q[k + 2]
        s, c = out.let(f"math.sin({angle})", "s"), out.let(f"math.cos({angle})", "c")
        versine = out.let(f"1.0 - {c}", "u")
        R = [[out.sum([(s, float(m.R_sin[i, r, c_])), (versine, float(m.R_versine[i, r, c_]))], R_tree[r][c_])
              for c_ in range(3)] for r in range(3)]
        if code != PLANAR:
            return R, p_tree
        e1, e2 = m.S[m.col_start[i], :3], m.S[m.col_start[i] + 1, :3]
        p_J = [out.sum([(q[k], float(e1[r])), (q[k + 1], float(e2[r]))]) for r in range(3)]
    else:  # FREE_FLYER, SPHERICAL: a unit quaternion, scalar last
        qs = k + 3 if code == FREE_FLYER else k
        R_J = quaternion_rotation(out, *q[qs:qs + 4])
        R = [[out.sum([(R_tree[r][j], R_J[j][c]) for j in range(3)]) for c in range(3)] for r in range(3)]
        p_J = q[k:k + 3] if code == FREE_FLYER else [0.0] * 3
    return R, [out.sum([(R_tree[r][c], p_J[c]) for c in range(3)], p_tree[r]) for r in range(3)]


def joint_poses(m, out, q):
    """Every body's ``(R, p)`` in its parent (two lists)."""
    poses = [body_pose(m, i, q, out) for i in range(int(m.nb))]
    return [R for R, _ in poses], [p for _, p in poses]


def column_terms(m, i, x):
    """The terms of ``S_i x_i`` per component: body ``i``'s joint motion for the velocity-space ``x`` (a mimic column
    reads its source's entry, times ``q_mult``)."""
    columns = range(m.col_start[i], m.col_start[i + 1])
    return [[(x[m.col_v[c]], float(m.col_mult[c] * m.S[c, j])) for c in columns] for j in range(6)]


def force_to_parent(out, R, p, f, into):
    """``into + X^T f = into + [R f_lin; R f_ang + p x R f_lin]`` (``spatial.force_to_parent_add``)."""
    R_f = rotated(out, R, f[:3])
    return ([out.sum([(into[r], 1.0), (R_f[r], 1.0)]) for r in range(3)]
            + [out.sum([(into[3 + r], 1.0)] + [(R[r][c], f[3 + c]) for c in range(3)] + cross_terms(p, R_f)[r])
               for r in range(3)])


def newton_euler(m, out, R, p, qd, qdd, environment):
    """RNEA (RBDA Table 5.1) with gravity as the base's acceleration ``a_0 = -g`` (RBDA Sec. 5.3), ``g`` the
    ``environment``'s first three entries: ``(tau, f, f_base)``, the terms of the rigid-body torques per
    coordinate, each body's joint wrench and the base's:
        v_i = X_i v_λ + S_i qd_i,   a_i = X_i a_λ + S_i qdd_i + v_i x S_i qd_i,   f_i = I_i a_i + v_i x* I_i v_i
        tau_i = S_i^T f_i,   f_λ += X_i^T f_i
    """
    nb = int(m.nb)
    v, a, f = [None] * nb, [None] * nb, [None] * nb
    a_base = [out.sum([(g, -1.0)]) for g in environment[:3]] + [0.0] * 3
    for i in range(nb):
        out.lines.append(f"# body {i}")
        λ = int(m.parent[i])
        vJ = [out.sum(terms) for terms in column_terms(m, i, qd)]

        def to_child(x, plus):
            """``X_i x + plus`` (``spatial.motion_to_child``): the parent's motion at the child's origin, in its
            axes."""
            moved = [out.sum([(x[r], 1.0)] + cross_terms(x[3:], p[i])[r]) for r in range(3)]
            return ([out.sum([(R[i][r][k], moved[r]) for r in range(3)] + plus[k]) for k in range(3)]
                    + [out.sum([(R[i][r][k], x[3 + r]) for r in range(3)] + plus[3 + k]) for k in range(3)])

        v[i] = to_child([0.0] * 6 if λ < 0 else v[λ], [[(vJ[j], 1.0)] for j in range(6)])
        w, lin = v[i][3:], v[i][:3]
        v_x_vJ = ([cross_terms(w, vJ[:3])[r] + cross_terms(lin, vJ[3:])[r] for r in range(3)]
                  + [cross_terms(w, vJ[3:])[r] for r in range(3)])
        a[i] = to_child(a_base if λ < 0 else a[λ], [aJ + c for aJ, c in zip(column_terms(m, i, qdd), v_x_vJ)])
        inertia = float(m.mass[i]), [float(x) for x in m.h[i]], [[float(x) for x in row] for row in m.I[i]]
        Iv = [out.sum(terms) for terms in inertia_terms(*inertia, v[i])]
        Ia = inertia_terms(*inertia, a[i])
        # f_i = I a_i + v_i x* I v_i, with v x* f = [w x f_lin; w x f_ang + v_lin x f_lin]
        f[i] = ([out.sum(Ia[r] + cross_terms(w, Iv[:3])[r]) for r in range(3)]
                + [out.sum(Ia[3 + r] + cross_terms(w, Iv[3:])[r] + cross_terms(lin, Iv[:3])[r]) for r in range(3)])
    out.lines.append("# backward pass")
    tau = [[] for _ in range(int(m.nv))]
    f_base = [0.0] * 6
    for i in range(nb - 1, -1, -1):
        for c in range(m.col_start[i], m.col_start[i + 1]):
            tau[m.col_v[c]] += [(float(m.col_mult[c] * m.S[c, j]), f[i][j]) for j in range(6)]
        λ = int(m.parent[i])
        moved = force_to_parent(out, R[i], p[i], f[i], f_base if λ < 0 else f[λ])
        if λ < 0:
            f_base = moved
        else:
            f[λ] = moved
    return tau, f, f_base


def drive_terms(m, out, qd, qdd, tau):
    """Adds each drive's ``armature qdd + damping qd + friction sign(qd)`` to the terms ``tau``."""
    for c in range(int(m.ncol)):
        k = m.col_v[c]
        tau[k] += [(float(m.armature[c]), qdd[k]), (float(m.damping[c]), qd[k])]
        if m.friction[c] != 0.0:
            tau[k].append((float(m.friction[c]), out.let(f"np.sign({qd[k]})", "sign")))


def rigid_inertia_to_parent(out, R, p, mass, h, I):
    """The terms of ``h', I' = X^T (mass, h, I) X`` (RBDA eq. 2.66, ``spatial.rigid_inertia_to_parent``): with
    ``hr = R h``, ``h' = hr + mass p``, ``I' = R I R^T + ((p.p) mass + 2 p.hr) 1 - h' p^T - p hr^T``; ``I'``'s
    upper triangle."""
    hr = rotated(out, R, h)
    h_parent = [out.sum([(hr[r], 1.0), (mass, p[r])]) for r in range(3)]
    R_I = [[out.sum([(R[r][k], I[k][c]) for k in range(3)]) for c in range(3)] for r in range(3)]
    diagonal = [(p[r], p[r], mass) for r in range(3)] + [(p[r], hr[r], 2.0) for r in range(3)]
    I_parent = {(r, c): [(R_I[r][k], R[c][k]) for k in range(3)] + [(h_parent[r], p[c], -1.0), (p[r], hr[c], -1.0)]
                + (diagonal if r == c else []) for r in range(3) for c in range(r, 3)}
    return [[(x, 1.0)] for x in h_parent], I_parent


def mass_matrix(m, out, R, p):
    """CRBA (RBDA Table 6.2) in body coordinates: ``M`` as rows of expressions, with the rotor inertias.
        Ic_i = I_i + sum over children c of X_c^T Ic_c X_c
        for each column s of S_i:  F = Ic_i s;  M_ts = S_t^T F, F = X_j^T F up the chain of ancestors j
    A column pair adds into its coordinates' cells scaled by the columns' ``q_mult`` (mimic joints), both ways round
    unless ``t`` is ``s``."""
    nb, nv = int(m.nb), int(m.nv)
    M = [[[] for _ in range(nv)] for _ in range(nv)]
    h_c = [[[(float(x), 1.0)] for x in m.h[i]] for i in range(nb)]
    I_c = [{(r, c): [(float(m.I[i, r, c]), 1.0)] for r in range(3) for c in range(r, 3)} for i in range(nb)]
    mass_c = [float(x) for x in m.mass[:nb]]
    for i in range(nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        h = [out.sum(terms) for terms in h_c[i]]
        upper = {rc: out.sum(terms) for rc, terms in I_c[i].items()}
        I = [[upper[min(r, c), max(r, c)] for c in range(3)] for r in range(3)]
        for s in range(m.col_start[i], m.col_start[i + 1]):
            F = [out.sum(terms) for terms in inertia_terms(mass_c[i], h, I, [float(x) for x in m.S[s]])]
            t, j = s, i
            while True:  # s itself and the columns before it in i, then the columns of i's ancestors
                scale = float(m.col_mult[t] * m.col_mult[s])
                M_ts = [(float(m.S[t, k]) * scale, F[k]) for k in range(6)]
                M[m.col_v[t]][m.col_v[s]] += M_ts
                if t != s:
                    M[m.col_v[s]][m.col_v[t]] += M_ts
                t -= 1
                if t < m.col_start[j]:
                    if m.parent[j] < 0:
                        break
                    F = force_to_parent(out, R[j], p[j], F, [0.0] * 6)
                    j = int(m.parent[j])
                    t = m.col_start[j + 1] - 1
        λ = int(m.parent[i])
        if λ >= 0:
            mass_c[λ] += mass_c[i]
            h_moved, I_moved = rigid_inertia_to_parent(out, R[i], p[i], mass_c[i], h, I)
            for r in range(3):
                h_c[λ][r] += h_moved[r]
            for rc, terms in I_moved.items():
                I_c[λ][rc] += terms
    for c in range(int(m.ncol)):
        M[m.col_v[c]][m.col_v[c]].append((float(m.armature[c]), 1.0))
    return [[out.sum(terms) for terms in row] for row in M]


def cholesky_solve(out, M, b):
    """``x = M^-1 b`` by ``M = L^T L``, factorised from the last row up (RBDA Tables 6.3-6.4: a tree's coordinates in
    topological order leave no fill-in, and the zeros of ``M`` fold away). Each pivot is checked as
    ``aba.tree_cholesky`` does (``SINGULAR + k`` if not positive relative to the largest diagonal entry)."""
    n = len(b)
    L = [row[:] for row in M]  # the lower triangle becomes L
    diagonal = [L[k][k] for k in range(n)]
    if all(isinstance(x, float) for x in diagonal):
        scale = max(diagonal)
    else:
        scale = out.let(f"max({', '.join(str(x) for x in diagonal)})" if n > 1 else str(diagonal[0]), "scale")
    inverse = [0.0] * n
    for k in range(n - 1, -1, -1):
        out.lines += [f"if not {L[k][k]} > {SINGULAR_RATIO!r} * {scale}:", f"    return {SINGULAR + k}"]
        inverse[k] = out.let(f"1.0 / math.sqrt({L[k][k]})", "d")
        for i in range(k):
            L[k][i] = out.sum([(L[k][i], inverse[k])])
        for i in range(k):
            if not is_zero(L[k][i]):
                for j in range(i + 1):
                    L[i][j] = out.sum([(L[i][j], 1.0), (L[k][i], L[k][j], -1.0)])
    x = list(b)
    for k in range(n - 1, -1, -1):  # L^T y = b
        x[k] = out.sum([(x[k], inverse[k])])
        for i in range(k):
            x[i] = out.sum([(x[i], 1.0), (L[k][i], x[k], -1.0)])
    for k in range(n):  # L x = y
        x[k] = out.sum([(out.sum([(x[k], 1.0)] + [(L[k][i], x[i], -1.0) for i in range(k)]), inverse[k])])
    return x


def inverse_dynamics_results(m, out, x):
    """:func:`~rne_dynamics.algorithms.rnea.inverse_dynamics`: torques with the drive terms, joint wrenches, base
    wrench."""
    R, p = joint_poses(m, out, x.q)
    tau, f, f_base = newton_euler(m, out, R, p, x.qd, x.qdd, x.environment)
    drive_terms(m, out, x.qd, x.qdd, tau)
    return [out.sum(terms) for terms in tau] + [y for j in range(int(m.nj)) for y in f[m.joint_body[j]]] + f_base


def gravity_results(m, out, x):
    """:func:`~rne_dynamics.algorithms.gravity.gravity_torques`: the same pass at rest (every velocity product
    folds away)."""
    R, p = joint_poses(m, out, x.q)
    at_rest = [0.0] * int(m.nv)
    tau, _, _ = newton_euler(m, out, R, p, at_rest, at_rest, x.environment)
    return [out.sum(terms) for terms in tau]


def mass_matrix_results(m, out, x):
    """:func:`~rne_dynamics.algorithms.crba.mass_matrix`, row by row."""
    return [entry for row in mass_matrix(m, out, *joint_poses(m, out, x.q)) for entry in row]


def forward_dynamics_results(m, out, x):
    """:func:`~rne_dynamics.algorithms.aba.forward_dynamics`: ``M qdd = tau - bias``, the bias being RNEA at zero
    acceleration with the drives' damping and friction (``aba.mass_matrix_dynamics``)."""
    R, p = joint_poses(m, out, x.q)
    at_rest = [0.0] * int(m.nv)
    bias, _, _ = newton_euler(m, out, R, p, x.qd, at_rest, x.environment)
    drive_terms(m, out, x.qd, at_rest, bias)
    out.lines.append("# mass matrix")
    M = mass_matrix(m, out, R, p)
    out.lines.append("# M qdd = tau - bias")
    return cholesky_solve(out, M, [out.sum([(t, 1.0)] + negated(terms)) for t, terms in zip(x.tau, bias)])


#: The calls written out: their held algorithm, the inputs after the block and the writer of their results.
KERNELS = {
    "inverse_dynamics": (INVERSE_DYNAMICS, ("q", "qd", "qdd", "environment"), inverse_dynamics_results),
    "gravity_torques": (GRAVITY, ("q", "environment"), gravity_results),
    "mass_matrix": (MASS_MATRIX, ("q",), mass_matrix_results),
    "forward_dynamics": (ACCELERATIONS, ("q", "qd", "tau", "environment"), forward_dynamics_results),
}


#: What a written kernel's module imports.
PRELUDE = "import math\n\nimport numpy as np\n" + ("from numba import prange" if numba else "prange = range") + "\n\n\n"

#: The batch of a written kernel: each state's results written straight into its row of ``out``, the states in
#: parallel unless they are too few to wake the threads for (``_jit.CHUNK``, as the driver's batches).
BATCH = """

def {call}_batch(out, {inputs}, status):
    if out.shape[0] <= {chunk}:
        for n in range(out.shape[0]):
            status[n] = {call}(out[n], {rows})
    else:
        for n in prange(out.shape[0]):
            status[n] = {call}(out[n], {rows})
"""


def kernel_source(robot, call):
    """The source of ``call(block, *inputs)`` (:data:`KERNELS`) for ``robot``: its results written into ``block``'s
    first entries (the generic kernel's result layout), returning the driver's status code: the inputs' sizes and
    finiteness and the quaternions' norms checked first, the results' finiteness last. ``environment``: gravity
    only (the held call's; external wrenches go through the generic kernel). Raises :class:`Unsupported`."""
    if robot.loops is not None:
        raise Unsupported(f"robot '{robot.name}': closed loops are not written out")
    m = model_view(robot.fdata, robot.idata)
    _, inputs, writer = KERNELS[call]
    sizes = {name: {"q": int(m.nq), "environment": 3}.get(name, int(m.nv)) for name in inputs}
    out = Straight()
    x = SimpleNamespace(**{name: [out.let(f"{name}[{k}]", name[0]) for k in range(size)]
                           for name, size in sizes.items()})
    loads = out.lines[:]
    out.lines.clear()
    results = writer(m, out, x)
    shapes = " or ".join([f"{name}.shape[0] != {size}" for name, size in sizes.items()]
                         + [f"block.shape[0] < {len(results)}"])
    every_input = " + ".join(value for name in inputs for value in getattr(x, name))
    body = [f"if {shapes}:", f"    return {BAD_SHAPE}"] + loads
    body += [f"if not ({every_input}) * 0.0 == 0.0:  # a NaN or an infinity anywhere", f"    return {NOT_FINITE}"]
    for i in range(int(m.nb)):
        if m.jtype[i] in (FREE_FLYER, SPHERICAL):
            k = int(m.idx_q[i]) + (3 if m.jtype[i] == FREE_FLYER else 0)
            norm = " + ".join(f"{u} * {u}" for u in x.q[k:k + 4])
            body += [f"if not abs(math.sqrt({norm}) - 1.0) <= {QUATERNION_TOLERANCE!r}:", f"    return {NOT_UNIT}"]
    body += out.lines + [f"block[{k}] = {y}" for k, y in enumerate(results)]
    variables = " + ".join(y for y in results if not isinstance(y, float)) or "0.0"
    body += [f"if not ({variables}) * 0.0 == 0.0:", f"    return {OVERFLOW}", f"return {OK}"]
    header = [f"# {call} of robot '{robot.name}': {int(m.nb)} bodies, {int(m.nv)} coordinates; generated by "
              "rne_dynamics.algorithms.specialised", f"def {call}(block, {', '.join(inputs)}):"]
    return "\n".join(header + ["    " + line for line in body]) + "\n"


def cache_folder():
    """Where the written kernels and numba's machine code of them are kept: ``$RNE_DYNAMICS_CACHE``, else
    ``rne_dynamics/specialised`` in the user's cache directory (``$XDG_CACHE_HOME``, ``~/.cache``)."""
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.environ.get("RNE_DYNAMICS_CACHE") or os.path.join(user, "rne_dynamics", "specialised")


with open(__file__, "rb") as _writer_source:
    #: The version of this writer: a module it wrote is kept under its stamp, and those of other versions removed.
    WRITER = hashlib.sha256(_writer_source.read()).hexdigest()[:8]
#: The name of a module this writer kept: ``<call>_<writer version>_<hash of the source>``.
KEPT = re.compile(rf"({'|'.join(KERNELS)})_([0-9a-f]{{8}})_[0-9a-f]{{24}}")


def cached_module(source, stem):
    """The module of ``source``, kept in :func:`cache_folder` as ``<stem>_<writer>_<hash of source>.py`` (the source
    holds every number of the model, so its hash keys the model) and imported by that name (numba's disk cache
    finds a function by its module); ``None`` if the folder cannot be written. Writing one removes the modules of
    other versions of this writer, with their machine code."""
    name = f"{stem}_{WRITER}_{hashlib.sha256(source.encode()).hexdigest()[:24]}"
    if name in sys.modules:
        return sys.modules[name]
    folder = cache_folder()
    path = os.path.join(folder, name + ".py")
    try:
        if not os.path.exists(path):
            os.makedirs(folder, exist_ok=True)
            remove_other_versions(folder)
            partial = f"{path}.{os.getpid()}"
            with open(partial, "w") as file:
                file.write(source)
            os.replace(partial, path)  # whole or not at all, for another process reading it
    except OSError:
        return None
    spec = importlib.util.spec_from_file_location(name, path)
    module = sys.modules[name] = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def remove_other_versions(folder):
    """Removes the modules that another version of this writer left in ``folder``, and numba's files of them (only
    files named as it names them: ``$RNE_DYNAMICS_CACHE`` may be a folder of other files)."""
    for path in glob.glob(os.path.join(folder, "*.py")):
        name = os.path.basename(path)[:-3]
        kept = KEPT.fullmatch(name)
        if kept is not None and kept.group(2) != WRITER:
            for stale in [path] + glob.glob(os.path.join(folder, "__pycache__", name + ".*")):
                try:
                    os.remove(stale)
                except OSError:
                    pass  # another process removed it first


def compiled(robot, call, jit=True, batch=False):
    """The function of :func:`kernel_source`, compiled by numba for its one signature, contiguous float64 vectors
    (another argument type raises TypeError and the caller's generic kernel serves it, instead of numba compiling
    again at a call); its machine code cached on disk (:func:`cached_module`), so that only the first process for a
    model compiles it. Plain Python without numba or with ``jit=False``. With ``batch``, also its :data:`BATCH`
    function ``(out, *inputs, status)`` (the state inputs ``(N, n)``; ``status`` ``(N,)`` int64), as a pair."""
    inputs = KERNELS[call][1]
    source = PRELUDE + kernel_source(robot, call)
    if batch:
        source += BATCH.format(call=call, inputs=", ".join(inputs), chunk=CHUNK,
                               rows=", ".join(x if x == "environment" else f"{x}[n]" for x in inputs))
    module = cached_module(source, call) if numba is not None and jit else None
    namespace = vars(module) if module is not None else {}
    if module is None:
        exec(compile(source, f"<{call} of {robot.name}>", "exec"), namespace)
    if numba is None or not jit:
        return (namespace[call], namespace[f"{call}_batch"]) if batch else namespace[call]
    if "COMPILED" not in namespace:  # once per process: the module stays imported
        namespace["COMPILED"] = jitted(namespace, call, inputs, batch, cache=module is not None)
    return namespace["COMPILED"]


def jitted(namespace, call, inputs, batch, cache):
    """The compiled ``call`` of a written module's ``namespace`` (with its batch, as a pair, if ``batch``)."""
    one = numba.njit(f"int64({', '.join(['float64[::1]'] * (1 + len(inputs)))})", nogil=True, _nrt=False,
                     cache=cache)(namespace[call])
    if not batch:
        return one
    namespace[call] = one  # what the batch calls
    states = ", ".join("float64[::1]" if x == "environment" else "float64[:, ::1]" for x in inputs)
    return one, numba.njit(f"void(float64[:, ::1], {states}, int64[::1])", nogil=True, parallel=True,
                           cache=cache)(namespace[f"{call}_batch"])


def specialised_data(robot, calls=tuple(KERNELS)):
    """A ``robot.data()`` whose ``calls`` (default: :func:`~rne_dynamics.inverse_dynamics`,
    :func:`~rne_dynamics.gravity_torques`, :func:`~rne_dynamics.mass_matrix`, :func:`~rne_dynamics.forward_dynamics`)
    with standard gravity, no external wrenches and the drive terms on run the robot's own written-out kernels
    (about a fifth of the generic kernels' arithmetic; a batch of inverse dynamics runs it per state, in parallel),
    and :func:`~rne_dynamics.forward_dynamics_derivatives` the generic Jacobians at the written-out forward
    dynamics' ``qdd``. Compiled here, in about a second a call for a 6-joint arm the first time, then loaded from
    the disk cache (:func:`cache_folder`) in milliseconds. Other calls with it run the generic kernels, into the
    same arrays, with the same errors. Raises :class:`Unsupported` for a robot it cannot write out (closed
    loops)."""
    data = robot.data()
    for call in calls:
        algorithm = KERNELS[call][0]
        block, result, _, _ = algorithm.held(robot, data)
        if call == "inverse_dynamics":  # and its batches
            one, data.held[algorithm, "batch"] = compiled(robot, call, batch=True)
        else:
            one = compiled(robot, call)
        data.held[algorithm] = (block, result, (block,), one)
    if "forward_dynamics" in calls:
        data.held[FORWARD_DERIVATIVES] = derivatives_after(robot, data, data.held[ACCELERATIONS][3])
    return data


def derivatives_after(robot, data, forward):
    """The held entry of :func:`~rne_dynamics.forward_dynamics_derivatives` in ``data``: the compiled ``forward``
    dynamics into the block's ``qdd``, then the generic Jacobians at it (``derivatives.AT_ACCELERATION``), loaded
    now (the set-up compiles it)."""
    block, result, _, _ = FORWARD_DERIVATIVES.held(robot, data)
    qdd = FORWARD_DERIVATIVES.layout(block, model_view(robot.fdata, robot.idata))[0].qdd
    jacobians, model = AT_ACCELERATION.single, (robot.fdata, robot.idata)

    def forward_dynamics_derivatives(block, q, qd, tau, environment):
        status = forward(qdd, q, qd, tau, environment)
        return status if status != OK else jacobians(*model, block, q, qd, qdd, environment)

    at_rest = np.zeros(robot.nv)
    jacobians(*model, block, neutral(robot), at_rest, at_rest, np.zeros(3))
    return block, result, (block,), forward_dynamics_derivatives
