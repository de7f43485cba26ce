"""Spatial vector algebra (Featherstone, RBDA ch. 2) on 6-vectors ordered ``[linear; angular]``.

A motion vector is ``[v; w]`` (velocity of the frame origin, angular velocity), a force vector ``[f; n]``
(force, moment about the frame origin), as Pinocchio orders them and as the contract orders wrenches.
A transform between a parent frame and a child frame is given as the child's pose in the parent: rotation ``R``
(child axes in parent coordinates) and origin ``p`` (parent coordinates); this is ``X_up`` of RBDA.

The helpers write into preallocated rows instead of returning arrays, so compiled kernels never allocate.
"""
import math

import numpy as np

from .._jit import helper


@helper
def cross(a0, a1, a2, b0, b1, b2):
    """The 3-vector cross product ``a x b`` on components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@helper
def motion_to_child(R, p, m, out):
    """``out = X m``: a parent-frame motion vector seen in the child frame (RBDA eq. 2.24).

    The origin velocity moves from the parent origin to the child's (``v + w x p``), then both rotate by ``R^T``.
    """
    w0, w1, w2 = m[3], m[4], m[5]
    c0, c1, c2 = cross(w0, w1, w2, p[0], p[1], p[2])
    v0, v1, v2 = m[0] + c0, m[1] + c1, m[2] + c2
    for k in range(3):
        out[k] = R[0, k] * v0 + R[1, k] * v1 + R[2, k] * v2
        out[3 + k] = R[0, k] * w0 + R[1, k] * w1 + R[2, k] * w2


@helper
def force_to_parent_add(R, p, f, out):
    """``out += X^T f``: a child-frame force vector added to a parent-frame one (RBDA eq. 2.25)."""
    f0 = R[0, 0] * f[0] + R[0, 1] * f[1] + R[0, 2] * f[2]
    f1 = R[1, 0] * f[0] + R[1, 1] * f[1] + R[1, 2] * f[2]
    f2 = R[2, 0] * f[0] + R[2, 1] * f[1] + R[2, 2] * f[2]
    c0, c1, c2 = cross(p[0], p[1], p[2], f0, f1, f2)
    out[0] += f0
    out[1] += f1
    out[2] += f2
    for k in range(3):
        out[3 + k] += R[k, 0] * f[3] + R[k, 1] * f[4] + R[k, 2] * f[5]
    out[3] += c0
    out[4] += c1
    out[5] += c2


@helper
def cross_motion_add(v, m, scale, out):
    """``out += scale * (v x m)``, the spatial cross product of motion vectors (RBDA eq. 2.31)."""
    a0, a1, a2 = cross(v[3], v[4], v[5], m[0], m[1], m[2])
    b0, b1, b2 = cross(v[0], v[1], v[2], m[3], m[4], m[5])
    c0, c1, c2 = cross(v[3], v[4], v[5], m[3], m[4], m[5])
    out[0] += scale * (a0 + b0)
    out[1] += scale * (a1 + b1)
    out[2] += scale * (a2 + b2)
    out[3] += scale * c0
    out[4] += scale * c1
    out[5] += scale * c2


@helper
def cross_force_add(v, f, out):
    """``out += v x* f``, the spatial cross product of a motion and a force vector (RBDA eq. 2.32)."""
    a0, a1, a2 = cross(v[3], v[4], v[5], f[0], f[1], f[2])
    b0, b1, b2 = cross(v[3], v[4], v[5], f[3], f[4], f[5])
    c0, c1, c2 = cross(v[0], v[1], v[2], f[0], f[1], f[2])
    out[0] += a0
    out[1] += a1
    out[2] += a2
    out[3] += b0 + c0
    out[4] += b1 + c1
    out[5] += b2 + c2


@helper
def inertia_times(mass, h, I, m, out):
    """``out = I m`` for the spatial inertia of mass ``mass``, first moment ``h = mass * com`` and rotational
    inertia ``I`` about the frame origin (RBDA eq. 2.63): ``[mass v - h x w; I w + h x v]``."""
    a0, a1, a2 = cross(h[0], h[1], h[2], m[3], m[4], m[5])
    b0, b1, b2 = cross(h[0], h[1], h[2], m[0], m[1], m[2])
    out[0] = mass * m[0] - a0
    out[1] = mass * m[1] - a1
    out[2] = mass * m[2] - a2
    for k in range(3):
        out[3 + k] = I[k, 0] * m[3] + I[k, 1] * m[4] + I[k, 2] * m[5]
    out[3] += b0
    out[4] += b1
    out[5] += b2


@helper
def dot6(a, b):
    """The scalar product of two 6-vectors (a motion and a force vector: power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@helper
def add_scaled(out, scale, x):
    """``out += scale * x`` for 6-vectors."""
    for k in range(6):
        out[k] += scale * x[k]


@helper
def matrix_times(A, x, out):
    """``out = A x`` for a 6x6 matrix (an articulated inertia: motion in, force out)."""
    for r in range(6):
        out[r] = (A[r, 0] * x[0] + A[r, 1] * x[1] + A[r, 2] * x[2]
                  + A[r, 3] * x[3] + A[r, 4] * x[4] + A[r, 5] * x[5])


@helper
def rigid_inertia_matrix(mass, h, I, out):
    """``out`` = the 6x6 spatial inertia ``[[mass 1, -h x], [h x, I]]`` (RBDA eq. 2.63, ``[linear; angular]``)."""
    out[:] = 0.0
    for k in range(3):
        out[k, k] = mass
        for c in range(3):
            out[3 + k, 3 + c] = I[k, c]
    out[0, 4], out[0, 5], out[1, 5] = h[2], -h[1], h[0]
    out[1, 3], out[2, 3], out[2, 4] = -h[2], h[1], -h[0]
    for r in range(3):  # symmetric
        for c in range(3):
            out[3 + c, r] = out[r, 3 + c]


@helper
def rows3(R):
    """The rows of a 3x3 matrix as tuples: read once, kept in registers while the caller writes arrays."""
    return ((R[0, 0], R[0, 1], R[0, 2]), (R[1, 0], R[1, 1], R[1, 2]), (R[2, 0], R[2, 1], R[2, 2]))


@helper
def pose_compose(R_a, p_a, R_b, p_b, R, p):
    """``(R, p) = (R_a R_b, R_a p_b + p_a)``: the pose of frame ``b`` in frame ``o`` from frame ``a``'s pose in ``o``
    and ``b``'s in ``a`` (``X_b^o = X_b^a X_a^o``, RBDA eq. 2.20)."""
    A = rows3(R_a)
    B = rows3(R_b)
    pa = (p_a[0], p_a[1], p_a[2])
    pb0, pb1, pb2 = p_b[0], p_b[1], p_b[2]
    for r in range(3):
        p[r] = A[r][0] * pb0 + A[r][1] * pb1 + A[r][2] * pb2 + pa[r]
        for c in range(3):
            R[r, c] = A[r][0] * B[0][c] + A[r][1] * B[1][c] + A[r][2] * B[2][c]


@helper
def motion_to_parent(R, p, m, out):
    """``out = X^-1 m``: a child-frame motion vector seen in the parent frame (RBDA eq. 2.24 inverted): both
    rotate by ``R``, then the origin velocity moves from the child origin to the parent's (``v + p x w``)."""
    A = rows3(R)
    w = (A[0][0] * m[3] + A[0][1] * m[4] + A[0][2] * m[5], A[1][0] * m[3] + A[1][1] * m[4] + A[1][2] * m[5],
         A[2][0] * m[3] + A[2][1] * m[4] + A[2][2] * m[5])
    c = cross(p[0], p[1], p[2], w[0], w[1], w[2])
    for k in range(3):
        out[k] = A[k][0] * m[0] + A[k][1] * m[1] + A[k][2] * m[2] + c[k]
        out[3 + k] = w[k]


@helper
def rotate(R, x0, x1, x2):
    """``R x`` for a 3x3 matrix and a 3-vector on components."""
    return (R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2, R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2,
            R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2)


@helper
def rotate6(R, x, out):
    """``out = diag(R, R) x``: a motion or force vector with its axes turned by ``R``, about the same point."""
    out[0], out[1], out[2] = rotate(R, x[0], x[1], x[2])
    out[3], out[4], out[5] = rotate(R, x[3], x[4], x[5])


@helper
def rotate_inertia(R, I, out):
    """``out = R I R^T`` for a symmetric 3x3 ``I`` (a rotational inertia with its axes turned), on one triangle."""
    RI = (rotate(R, I[0, 0], I[1, 0], I[2, 0]), rotate(R, I[0, 1], I[1, 1], I[2, 1]),
          rotate(R, I[0, 2], I[1, 2], I[2, 2]))  # columns of R I
    for r in range(3):
        for c in range(r, 3):
            out[r, c] = RI[0][r] * R[c, 0] + RI[1][r] * R[c, 1] + RI[2][r] * R[c, 2]
            out[c, r] = out[r, c]


@helper
def rigid_inertia_to_parent(R, p, mass, h, I, h_out, I_out):
    """``h_out, I_out = X^T (mass, h, I) X``: a rigid inertia (symmetric ``I``) in the parent frame (RBDA eq. 2.66),
    mass unchanged. With ``hr = R h``: ``h' = hr + mass p``,
    ``I' = R I R^T + ((p.p) mass + 2 p.hr) 1 - h' p^T - p hr^T`` (parallel axes)."""
    hr = rotate(R, h[0], h[1], h[2])
    diagonal = mass * (p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) + 2.0 * (p[0] * hr[0] + p[1] * hr[1] + p[2] * hr[2])
    for r in range(3):
        h_out[r] = hr[r] + mass * p[r]
    rotate_inertia(R, I, I_out)
    for r in range(3):
        for c in range(3):
            I_out[r, c] -= h_out[r] * p[c] + p[r] * hr[c]
        I_out[r, r] += diagonal


@helper
def motion_shift(d, m, out):
    """``out = X m`` for a pure translation: a motion vector moved from a point to another at ``d`` from it, axes
    unchanged (RBDA eq. 2.24 with ``R = 1``): ``[v + w x d; w]``."""
    c0, c1, c2 = cross(m[3], m[4], m[5], d[0], d[1], d[2])
    out[0], out[1], out[2] = m[0] + c0, m[1] + c1, m[2] + c2
    out[3], out[4], out[5] = m[3], m[4], m[5]


@helper
def force_shift_add(d, f, out):
    """``out += X^T f`` for a pure translation: a force vector at a point ``d`` from another, moved there and added
    (RBDA eq. 2.25 with ``R = 1``): ``[f; n + d x f]``."""
    c0, c1, c2 = cross(d[0], d[1], d[2], f[0], f[1], f[2])
    out[0] += f[0]
    out[1] += f[1]
    out[2] += f[2]
    out[3] += f[3] + c0
    out[4] += f[4] + c1
    out[5] += f[5] + c2


@helper
def inertia_shift_add(d, A, out):
    """``out += X^T A X`` for a pure translation: a symmetric 6x6 force-from-motion matrix (articulated inertia) about
    a point ``d`` from another, moved there and added (RBDA eq. 7.23 with ``R = 1``). With ``X = [[1, -d x], [0, 1]]``
    and ``A = [[A11, A12], [A12^T, A22]]``: ``A12' = A12 - A11 dx``, ``A22' = A22 + dx A12' - A12^T dx``."""
    r0 = cross(A[0, 0], A[0, 1], A[0, 2], d[0], d[1], d[2])  # rows of A11 dx: row x d
    r1 = cross(A[1, 0], A[1, 1], A[1, 2], d[0], d[1], d[2])
    r2 = cross(A[2, 0], A[2, 1], A[2, 2], d[0], d[1], d[2])
    B = ((A[0, 3] - r0[0], A[0, 4] - r0[1], A[0, 5] - r0[2]), (A[1, 3] - r1[0], A[1, 4] - r1[1], A[1, 5] - r1[2]),
         (A[2, 3] - r2[0], A[2, 4] - r2[1], A[2, 5] - r2[2]))  # A12'
    for c in range(3):
        dB = cross(d[0], d[1], d[2], B[0][c], B[1][c], B[2][c])  # column c of dx A12'
        Ad = cross(A[0, 3 + c], A[1, 3 + c], A[2, 3 + c], d[0], d[1], d[2])  # row c of A12^T dx
        for r in range(3):
            out[r, c] += A[r, c]
            out[r, 3 + c] += B[r][c]
            out[3 + c, r] += B[r][c]
            out[3 + r, 3 + c] += A[3 + r, 3 + c] + dB[r]
            out[3 + c, 3 + r] -= Ad[r]


@helper
def force_to_child(R, p, f, out):
    """``out = X^-T f``: a parent-frame force vector seen in the child frame, ``[R^T f; R^T (n - p x f)]``."""
    c0, c1, c2 = cross(p[0], p[1], p[2], f[0], f[1], f[2])
    n0, n1, n2 = f[3] - c0, f[4] - c1, f[5] - c2
    for k in range(3):
        out[k] = R[0, k] * f[0] + R[1, k] * f[1] + R[2, k] * f[2]
        out[3 + k] = R[0, k] * n0 + R[1, k] * n1 + R[2, k] * n2


@helper
def base_acceleration(gravity, out):
    """``out[0:3] = -g``: gravity as a fictitious acceleration of the fixed base (RBDA Sec. 5.3), written element
    by element (``-gravity`` would allocate an array)."""
    for k in range(3):
        out[k] = -gravity[k]


@helper
def set_identity(R, p):
    """``(R, p) = (1, 0)``: a frame's pose in itself (the root's, in the base row of root-frame poses)."""
    for r in range(3):
        p[r] = 0.0
        for c in range(3):
            R[r, c] = 1.0 if r == c else 0.0


@helper
def set_at_rest(v, a):
    """``v = a = 0``: the motion of the fixed base (gravity is added to ``a`` by :func:`base_acceleration`)."""
    for c in range(6):
        v[c] = 0.0
        a[c] = 0.0


@helper
def quaternion_rotation(x, y, z, w):
    """The rows of the rotation of the quaternion ``(x, y, z, w)`` (scalar last), scaled to unit norm on the way:
    ``R = 1 + 2 w [u]x + 2 [u]x^2`` for ``u = (x, y, z)``, with ``2 / |q|^2`` in place of 2."""
    s = 2.0 / (x * x + y * y + z * z + w * w)
    return ((1.0 - s * (y * y + z * z), s * (x * y - z * w), s * (x * z + y * w)),
            (s * (x * y + z * w), 1.0 - s * (x * x + z * z), s * (y * z - x * w)),
            (s * (x * z - y * w), s * (y * z + x * w), 1.0 - s * (x * x + y * y)))


@helper
def rigid_inertia_add(mass, h, I, i, j):
    """Row ``i``'s rigid inertia (mass, first moment, rotational inertia about one origin, in one frame) added into
    row ``j``'s: the composite inertia of a subtree is the sum of its bodies' (RBDA eq. 6.12, in a common frame)."""
    mass[j] += mass[i]
    for r in range(3):
        h[j, r] += h[i, r]
        for c in range(3):
            I[j, r, c] += I[i, r, c]


def rpy_to_matrix(roll, pitch, yaw):
    """URDF's fixed-axis roll-pitch-yaw: ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    cr, sr, cp, sp, cy, sy = (math.cos(roll), math.sin(roll), math.cos(pitch), math.sin(pitch),
                              math.cos(yaw), math.sin(yaw))
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])
