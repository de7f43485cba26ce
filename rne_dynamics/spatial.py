"""Spatial vector algebra (Featherstone, RBDA ch. 2) on 6-vectors ordered ``[linear; angular]``.

A motion vector is ``[v; w]`` (velocity of the frame origin, angular velocity), a force vector ``[f; n]``
(force, moment about the frame origin), as Pinocchio orders them and as the contract orders wrenches.
A transform between a parent frame and a child frame is given as the child's pose in the parent: rotation ``R``
(child axes in parent coordinates) and origin ``p`` (parent coordinates); this is ``X_up`` of RBDA.

The helpers write into preallocated rows instead of returning arrays, so compiled kernels never allocate.
"""
import math

from ._jit import kernel


@kernel
def cross(a0, a1, a2, b0, b1, b2):
    """The 3-vector cross product ``a x b`` on components."""
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@kernel
def rotation_about_axis(u, angle):
    """Rows of the rotation by ``angle`` about the unit axis ``u`` (Rodrigues' formula; RBDA eq. 2.49 gives its
    transpose, the coordinate transform)."""
    c = math.cos(angle)
    s = math.sin(angle)
    t = 1.0 - c
    x, y, z = u[0], u[1], u[2]
    return ((t * x * x + c, t * x * y - s * z, t * x * z + s * y),
            (t * x * y + s * z, t * y * y + c, t * y * z - s * x),
            (t * x * z - s * y, t * y * z + s * x, t * z * z + c))


@kernel
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


@kernel
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


@kernel
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


@kernel
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


@kernel
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


@kernel
def dot6(a, b):
    """The scalar product of two 6-vectors (a motion and a force vector: power)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@kernel
def add_scaled(out, scale, x):
    """``out += scale * x`` for 6-vectors."""
    for k in range(6):
        out[k] += scale * x[k]
