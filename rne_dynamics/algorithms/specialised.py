"""Inverse dynamics written out for one robot: RNEA (RBDA Table 5.1) with the tree unrolled and the model's numbers
as constants, Khalil & Kleinfinger's "customized symbolic" models (as RobCoGen and GRiD generate in C++).

:func:`inverse_dynamics_source` writes the Python source of one function for a fixed-base robot of revolute and
prismatic joints (mimic joints included); numba compiles it like any kernel. It computes what
:func:`~rne_dynamics.algorithms.rnea.inverse_dynamics_step` computes, in the same body frames and the same result
layout (torques, joint wrenches, base wrench), with the drive terms: every product with a zero of the model is left
out and every product of two constants is folded, so a 6-joint arm's pass is a few hundred multiply-adds in
registers, about a fifth of the generic kernel's time (measured, see README). The generic kernel stays the
reference: the tests hold this one to it on every example-robot-data robot it can write.
"""
import math

import numpy as np

try:
    import numba
except ImportError:
    numba = None

from ..model.joints import PRISMATIC, REVOLUTE, REVOLUTE_UNIT
from ..model.robot import model_view
from .driver import BAD_SHAPE, NOT_FINITE, OK, OVERFLOW

#: The joint types written out; a robot with another (or a floating base) keeps the generic kernel.
WRITTEN = "fixed base; revolute, continuous, prismatic and mimic joints"


class Unsupported(ValueError):
    """A robot this module cannot write out (say why: the generic kernel serves it)."""


class Straight:
    """Straight-line code with constants folded: a value is a float (a constant) or a str (a local variable)."""

    def __init__(self):
        self.lines = []

    def let(self, expression, prefix="t"):
        """A new local holding ``expression``."""
        name = f"{prefix}{len(self.lines)}"
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


def cross_terms(a, b):
    """The terms of ``a x b``, per component, for :meth:`Straight.sum`."""
    return ([(a[1], b[2]), (a[2], b[1], -1.0)], [(a[2], b[0]), (a[0], b[2], -1.0)],
            [(a[0], b[1]), (a[1], b[0], -1.0)])


def inertia_terms(mass, h, I, x):
    """The terms of ``I x = [mass x_lin - h x x_ang; I_rot x_ang + h x x_lin]`` (``spatial.inertia_times``)."""
    h_x_ang, h_x_lin = cross_terms(h, x[3:]), cross_terms(h, x[:3])
    return ([[(mass, x[r])] + [(a, b, -k[0] if k else -1.0) for a, b, *k in h_x_ang[r]] for r in range(3)]
            + [[(float(I[r, c]), x[3 + c]) for c in range(3)] + h_x_lin[r] for r in range(3)])


def body_pose(code, m, i, q_i, out):
    """``(R, p)`` of body ``i`` in its parent at joint coordinate ``q_i`` (``joints.X_up``), as expressions."""
    R_tree, p_tree = m.R_tree[i], [float(x) for x in m.p_tree[i]]
    if code == PRISMATIC:
        moved = R_tree @ m.axis[i]
        return ([[float(R_tree[r, c]) for c in range(3)] for r in range(3)],
                [out.sum([(q_i, float(moved[r]))], p_tree[r]) for r in range(3)])
    s, c = out.let(f"math.sin({q_i})", "s"), out.let(f"math.cos({q_i})", "c")
    if code >= REVOLUTE_UNIT:  # about ±e_k: columns k1, k2 of R_tree turn, column k stays
        k = code - REVOLUTE_UNIT
        k1, k2, sign = (k + 1) % 3, (k + 2) % 3, float(m.axis[i, k])
        R = [[0.0] * 3 for _ in range(3)]
        for r in range(3):
            R[r][k] = float(R_tree[r, k])
            R[r][k1] = out.sum([(c, float(R_tree[r, k1])), (s, sign * float(R_tree[r, k2]))])
            R[r][k2] = out.sum([(c, float(R_tree[r, k2])), (s, -sign * float(R_tree[r, k1]))])
        return R, p_tree
    versine = out.let(f"1.0 - {c}", "u")  # Rodrigues: R_tree + sin R_sin + (1 - cos) R_versine
    return ([[out.sum([(s, float(m.R_sin[i, r, c_])), (versine, float(m.R_versine[i, r, c_]))], float(R_tree[r, c_]))
              for c_ in range(3)] for r in range(3)], p_tree)


def inverse_dynamics_source(robot, name="inverse_dynamics"):
    """The source of ``name(block, q, qd, qdd, environment)``: RNEA with the drive terms and the joint loads for
    ``robot``, written into ``block``'s first ``nv + 6 nj + 6`` entries (``rnea.inverse_dynamics_memory``'s
    results), returning :mod:`~rne_dynamics.algorithms.driver`'s status code. ``environment``: gravity only (the
    held call's standard one; external wrenches go through the generic kernel). Raises :class:`Unsupported`."""
    if robot.has_floating_base or robot.loops is not None:
        raise Unsupported(f"robot '{robot.name}': {WRITTEN} only")
    m = model_view(robot.fdata, robot.idata)
    nb, nv, nj = int(m.nb), int(m.nv), int(m.nj)
    out = Straight()
    q, qd, qdd = ([out.let(f"{x}[{k}]", x) for k in range(nv)] for x in ("q", "qd", "qdd"))
    v_base = [0.0] * 6
    a_base = [out.let(f"-environment[{r}]", "g") for r in range(3)] + [0.0] * 3  # a_0 = -g (RBDA Sec. 5.3)
    R, p, v, a, f = [], [], [], [], []
    for i in range(nb):
        code = int(m.jtype[i])
        if not (code == REVOLUTE or code == PRISMATIC or code >= REVOLUTE_UNIT):
            raise Unsupported(f"robot '{robot.name}': joint '{robot.bodies[i].joint}' is not written out ({WRITTEN})")
        out.lines.append(f"# body {i}, joint {robot.bodies[i].joint}")
        R_i, p_i = body_pose(code, m, i, out.sum([(q[m.idx_q[i]], float(m.q_mult[i]))], float(m.q_offset[i])), out)
        columns = range(m.col_start[i], m.col_start[i + 1])
        vJ = [out.sum([(qd[m.col_v[c]], float(m.col_mult[c] * m.S[c, j])) for c in columns]) for j in range(6)]
        aJ = [[(qdd[m.col_v[c]], float(m.col_mult[c] * m.S[c, j])) for c in columns] for j in range(6)]

        def to_child(x, plus):
            """``X_i x + plus`` (``spatial.motion_to_child``): the parent's motion moved to the child's origin, in
            its axes."""
            moved = [out.sum([(x[r], 1.0)] + cross_terms(x[3:], p_i)[r]) for r in range(3)]
            return ([out.sum([(R_i[r][k], moved[r]) for r in range(3)] + plus[k]) for k in range(3)]
                    + [out.sum([(R_i[r][k], x[3 + r]) for r in range(3)] + plus[3 + k]) for k in range(3)])

        parent = int(m.parent[i])
        v_i = to_child(v_base if parent < 0 else v[parent], [[(vJ[j], 1.0)] for j in range(6)])
        w, lin = v_i[3:], v_i[:3]
        v_x_vJ = ([cross_terms(w, vJ[:3])[r] + cross_terms(lin, vJ[3:])[r] for r in range(3)]
                  + [cross_terms(w, vJ[3:])[r] for r in range(3)])
        a_i = to_child(a_base if parent < 0 else a[parent], [aJ[j] + v_x_vJ[j] for j in range(6)])
        mass, h, I = float(m.mass[i]), [float(x) for x in m.h[i]], m.I[i]
        Iv = [out.sum(terms) for terms in inertia_terms(mass, h, I, v_i)]
        Ia = inertia_terms(mass, h, I, a_i)
        # f_i = I a_i + v_i x* I v_i, with v x* f = [w x f_lin; w x f_ang + v_lin x f_lin]
        f_i = ([out.sum(Ia[r] + cross_terms(w, Iv[:3])[r]) for r in range(3)]
               + [out.sum(Ia[3 + r] + cross_terms(w, Iv[3:])[r] + cross_terms(lin, Iv[:3])[r]) for r in range(3)])
        R.append(R_i), p.append(p_i), v.append(v_i), a.append(a_i), f.append(f_i)
    out.lines.append("# backward pass: tau_i = S_i^T f_i, f_parent += X_i^T f_i")
    tau = [[] for _ in range(nv)]
    f_base = [0.0] * 6
    for i in range(nb - 1, -1, -1):
        for c in range(m.col_start[i], m.col_start[i + 1]):
            tau[m.col_v[c]] += [(float(m.col_mult[c] * m.S[c, j]), f[i][j]) for j in range(6)]
        R_f = [out.sum([(R[i][r][c], f[i][c]) for c in range(3)]) for r in range(3)]
        into = f_base if m.parent[i] < 0 else f[m.parent[i]]
        moved = ([out.sum([(into[r], 1.0), (R_f[r], 1.0)]) for r in range(3)]
                 + [out.sum([(into[3 + r], 1.0)] + [(R[i][r][c], f[i][3 + c]) for c in range(3)]
                            + cross_terms(p[i], R_f)[r]) for r in range(3)])
        if m.parent[i] < 0:
            f_base = moved
        else:
            f[m.parent[i]] = moved
    for c in range(int(m.ncol)):  # the drives: armature qdd + damping qd + friction sign(qd)
        k = m.col_v[c]
        tau[k] += [(float(m.armature[c]), qdd[k]), (float(m.damping[c]), qd[k])]
        if m.friction[c] != 0.0:
            tau[k].append((float(m.friction[c]), out.let(f"np.sign({qd[k]})", "sign")))
    results = [out.sum(terms) for terms in tau] + [x for j in range(nj) for x in f[m.joint_body[j]]] + f_base
    inputs = " + ".join(f"{x}[{k}]" for x in ("q", "qd", "qdd") for k in range(nv)) + " + environment[0]"
    inputs += " + environment[1] + environment[2]"
    variables = " + ".join(str(x) for x in results if not isinstance(x, float)) or "0.0"
    body = [f"if q.shape[0] != {nv} or qd.shape[0] != {nv} or qdd.shape[0] != {nv} or environment.shape[0] != 3 "
            f"or block.shape[0] < {len(results)}:",
            f"    return {BAD_SHAPE}",
            f"if not ({inputs}) * 0.0 == 0.0:  # a NaN or an infinity anywhere",
            f"    return {NOT_FINITE}"]
    body += out.lines + [f"block[{k}] = {x!r}" if isinstance(x, float) else f"block[{k}] = {x}"
                         for k, x in enumerate(results)]
    body += [f"if not ({variables}) * 0.0 == 0.0:", f"    return {OVERFLOW}", f"return {OK}"]
    header = [f"# inverse dynamics of robot '{robot.name}': {nb} bodies, {nv} coordinates; generated by "
              "rne_dynamics.algorithms.specialised", f"def {name}(block, q, qd, qdd, environment):"]
    return "\n".join(header + ["    " + line for line in body]) + "\n"


#: The one signature compiled: contiguous float64 vectors (other arguments raise TypeError, and the caller's generic
#: kernel serves them, instead of numba compiling again at a call).
SIGNATURE = "int64(float64[::1], float64[::1], float64[::1], float64[::1], float64[::1])"


def compiled_inverse_dynamics(robot):
    """The function of :func:`inverse_dynamics_source`, compiled by numba now (plain Python without numba)."""
    namespace = {"math": math, "np": np}
    exec(compile(inverse_dynamics_source(robot), f"<inverse dynamics of {robot.name}>", "exec"), namespace)
    function = namespace["inverse_dynamics"]
    return function if numba is None else numba.njit(SIGNATURE, nogil=True, _nrt=False)(function)
