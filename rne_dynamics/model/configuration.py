"""The configuration space as a Lie group: ``q ⊕ v`` and ``q1 ⊖ q0`` on the joints' manifold, Pinocchio's semantics.

A configuration ``q`` (``nq`` entries) is a point of the product of the joints' groups, a velocity ``v`` (``nv``) a
tangent vector in the child frames (:mod:`~rne_dynamics.model.joints`). ``integrate(q, v, dt)`` moves each joint
along the one-parameter subgroup of its twist for ``dt`` seconds, applied on the RIGHT (the twist is in the child
frame), and ``difference(q0, q1)`` is its inverse, the logarithm of ``q0^-1 q1`` (Murray, Li & Sastry, "A
Mathematical Introduction to Robotic Manipulation", Ch. 2; Pinocchio's ``integrate`` / ``difference``):

=============  ====================================================  ==========================================
joint          ``integrate(q, v dt)``                                ``difference(q0, q1)``
=============  ====================================================  ==========================================
revolute,      ``q + v dt``                                          ``q1 - q0`` (an angle is not wrapped)
prismatic
free-flyer     ``(p, R) exp([v; w] dt)``: ``p + R V(w dt) v dt``,    ``log6``: ``w = log3(R0^T R1)``,
               ``quat ⊗ exp(w dt)`` (sign kept in ``quat``'s         ``v = V^-1(w) R0^T (p1 - p0)``
               hemisphere, as Pinocchio), normalised
spherical      ``quat ⊗ exp(w dt)``, normalised                      ``log3(quat0^* ⊗ quat1)``, angle in [0, pi]
planar         SE(2): ``(x, y) + R(theta) V2(w dt) (vx, vy) dt``,    ``w = theta1 - theta0`` (not wrapped),
               ``theta + w dt``                                      ``(vx, vy) = V2(w)^-1 R(-theta0) (dx, dy)``
=============  ====================================================  ==========================================

``V(w) = 1 + (1 - cos t)/t^2 [w]x + (t - sin t)/t^3 [w]x^2`` (``t = |w|``) is the left Jacobian of SO(3) and
``V2(w) = [[sin w, cos w - 1], [1 - cos w, sin w]] / w`` its planar counterpart. Pinocchio stores a continuous joint
and the planar joint's angle as ``(cos, sin)``; ours are angles, so their differences are not wrapped to
``(-pi, pi]`` and ``integrate(q0, difference(q0, q1)) == q1`` holds exactly (a planar ``theta1 - theta0`` that is a
nonzero multiple of ``2 pi`` with the origin displaced has no such twist: ``V2`` is singular there).

The group exponential of each joint type has ONE implementation, the compiled :func:`integrate_configuration`
(kernels call it per state; ``rd.integrate`` runs it on each row of a batch). A Lie-group Runge-Kutta method also
needs ``dexp^-1`` (:func:`dexp_inverse`, RKMK; Munthe-Kaas, BIT 38 (1998) 92-111). The logarithms (``difference``)
are numpy, on batches. The checked public calls are in :mod:`rne_dynamics.algorithms.configuration`.
"""
import math

import numpy as np

from .._compile import called_from_python
from .._jit import helper, kernel
from .joints import REAL_LINE, SE2, SE3, SO3, configuration_group
from .buffers import model_view
from .spatial import cross, quaternion_rotation

#: Below this angle (rad) the exponential's coefficients come from their Taylor series (no cancellation; the first
#: term left out is below 1e-22 relative).
SMALL_ANGLE = 1e-3


# ------------------------------------------------------------------------------------------ compiled exponentials

@helper
def exp_quaternion(w0, w1, w2):
    """The unit quaternion ``(x, y, z, w)`` of the rotation vector ``w``: ``(sin(t/2) w / t, cos(t/2))``."""
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    t = math.sqrt(t2)
    if t < SMALL_ANGLE:
        s = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0  # sin(t/2) / t
    else:
        s = math.sin(0.5 * t) / t
    return s * w0, s * w1, s * w2, math.cos(0.5 * t)


@helper
def quaternion_product(x1, y1, z1, w1, x2, y2, z2, w2):
    """Hamilton product ``q1 ⊗ q2`` of quaternions stored scalar last."""
    return (w1 * x2 + w2 * x1 + y1 * z2 - z1 * y2,
            w1 * y2 + w2 * y1 + z1 * x2 - x1 * z2,
            w1 * z2 + w2 * z1 + x1 * y2 - y1 * x2,
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2)


@helper
def turn_quaternion(q, s, w0, w1, w2, same_hemisphere, out):
    """``out[s:s+4] = q[s:s+4] ⊗ exp(w)``, normalised; ``same_hemisphere``: negated if it has a negative dot product
    with ``q[s:s+4]`` (Pinocchio's free-flyer does so, its spherical joint does not)."""
    ex, ey, ez, ew = exp_quaternion(w0, w1, w2)
    x, y, z, w = quaternion_product(q[s], q[s + 1], q[s + 2], q[s + 3], ex, ey, ez, ew)
    norm = math.sqrt(x * x + y * y + z * z + w * w)
    if same_hemisphere and x * q[s] + y * q[s + 1] + z * q[s + 2] + w * q[s + 3] < 0.0:
        norm = -norm
    out[s], out[s + 1], out[s + 2], out[s + 3] = x / norm, y / norm, z / norm, w / norm


@helper
def integrate_free_flyer(q, k, v, c, dt, out):
    """SE(3): ``(p, R) exp([v; w] dt)`` = ``(p + R V(w dt) v dt, R exp(w dt))``, Pinocchio's ``exp6``."""
    v0, v1, v2 = dt * v[c], dt * v[c + 1], dt * v[c + 2]
    w0, w1, w2 = dt * v[c + 3], dt * v[c + 4], dt * v[c + 5]
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    if t2 < SMALL_ANGLE * SMALL_ANGLE:
        a = 0.5 - t2 / 24.0 + t2 * t2 / 720.0            # (1 - cos t) / t^2
        b = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0    # (t - sin t) / t^3
    else:
        t = math.sqrt(t2)
        half = math.sin(0.5 * t)
        a = 2.0 * half * half / t2
        b = (t - math.sin(t)) / (t2 * t)
    c0, c1, c2 = cross(w0, w1, w2, v0, v1, v2)
    d0, d1, d2 = cross(w0, w1, w2, c0, c1, c2)
    p0, p1, p2 = v0 + a * c0 + b * d0, v1 + a * c1 + b * d1, v2 + a * c2 + b * d2  # V(w dt) v dt
    R = quaternion_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6])
    for r in range(3):
        out[k + r] = q[k + r] + R[r][0] * p0 + R[r][1] * p1 + R[r][2] * p2
    turn_quaternion(q, k + 3, w0, w1, w2, True, out)


@helper
def integrate_planar(q, k, v, c, dt, out):
    """SE(2) in the joint's plane: ``(x, y) + R(theta) V2(w dt) (vx, vy) dt``, ``theta + w dt``."""
    vx, vy, phi = dt * v[c], dt * v[c + 1], dt * v[c + 2]
    p2 = phi * phi
    if abs(phi) < SMALL_ANGLE:
        sa = 1.0 - p2 / 6.0 + p2 * p2 / 120.0                   # sin(phi) / phi
        ca = phi * (0.5 - p2 / 24.0 + p2 * p2 / 720.0)           # (1 - cos(phi)) / phi
    else:
        half = math.sin(0.5 * phi)
        sa = math.sin(phi) / phi
        ca = 2.0 * half * half / phi
    tx, ty = sa * vx - ca * vy, ca * vx + sa * vy
    cos_t, sin_t = math.cos(q[k + 2]), math.sin(q[k + 2])
    out[k] = q[k] + cos_t * tx - sin_t * ty
    out[k + 1] = q[k + 1] + sin_t * tx + cos_t * ty
    out[k + 2] = q[k + 2] + phi


@helper
def integrate_body(m, i, q, v, dt, out):
    """The coordinates of body ``i``'s joint in ``out = q ⊕ v dt``, by the group of its configuration (a mimic body
    rewrites its source's, the same value; an unknown joint code: NaN)."""
    group = configuration_group(m.jtype[i])
    k = m.idx_q[i]
    c = m.col_v[m.col_start[i]]
    if group == REAL_LINE:
        out[k] = q[k] + dt * v[c]
    elif group == SE3:
        integrate_free_flyer(q, k, v, c, dt, out)
    elif group == SO3:
        turn_quaternion(q, k, dt * v[c], dt * v[c + 1], dt * v[c + 2], False, out)
    elif group == SE2:
        integrate_planar(q, k, v, c, dt, out)
    else:
        out[k] = math.nan


@helper
def integrate_configuration(m, q, v, dt, out):
    """``out = q ⊕ v dt`` (``out`` must not be ``q``: a mimic body rewrites its source's coordinate from ``q``)."""
    for i in range(m.nb):
        integrate_body(m, i, q, v, dt, out)


@helper
def joint_twist(m, i, x):
    """``S_i x_i``: the 6-vector of body ``i``'s joint for the tangent vector ``x``, as 6 numbers."""
    t0 = t1 = t2 = t3 = t4 = t5 = 0.0
    for c in range(m.col_start[i], m.col_start[i + 1]):
        s = x[m.col_v[c]]
        S = m.S[c]
        t0 += S[0] * s
        t1 += S[1] * s
        t2 += S[2] * s
        t3 += S[3] * s
        t4 += S[4] * s
        t5 += S[5] * s
    return t0, t1, t2, t3, t4, t5


@helper
def bracket(a, b):
    """The Lie bracket of se(3), ``[a, b] = a x b`` (the spatial cross product of motion vectors, RBDA eq. 2.31)."""
    a0, a1, a2 = cross(a[3], a[4], a[5], b[0], b[1], b[2])
    b0, b1, b2 = cross(a[0], a[1], a[2], b[3], b[4], b[5])
    c0, c1, c2 = cross(a[3], a[4], a[5], b[3], b[4], b[5])
    return a0 + b0, a1 + b1, a2 + b2, c0, c1, c2


@helper
def dexp_inverse(m, u, x, out):
    """``out = dexp^-1_{-u}(x) = x + [u, x]/2 + [u, [u, x]]/12`` (the series truncated after the terms RK4 needs:
    the ``ad_u^3`` term is zero and ``ad_u^4 x / 720`` is O(dt^4), entering a step times dt): the velocity ``x`` at
    ``q ⊕ u`` as the rate of ``u``, for right-trivialised
    ``dq/dt = q v`` (``q(t) = q0 exp(u(t))``, ``du/dt = dexp^-1_{-u}(v)``; Iserles et al., Acta Numerica 9
    (2000)). The bracket of a joint's group is se(3)'s restricted to its orthonormal motion columns; the groups
    of one-coordinate joints are commutative (nothing to add)."""
    for k in range(m.nv):
        out[k] = x[k]
    for i in range(m.nb):
        if m.col_start[i + 1] - m.col_start[i] > 1:
            U = joint_twist(m, i, u)
            B1 = bracket(U, joint_twist(m, i, x))
            B2 = bracket(U, B1)
            for c in range(m.col_start[i], m.col_start[i + 1]):
                S = m.S[c]
                correction = 0.0
                for r in range(6):
                    correction += S[r] * (0.5 * B1[r] + B2[r] / 12.0)
                out[m.col_v[c]] += correction


@called_from_python
@kernel
def integrate_rows(fdata, idata, q, v, dt, out):
    """:func:`integrate_configuration` on each row of ``(N, nq)``, ``(N, nv)`` arrays."""
    m = model_view(fdata, idata)
    for n in range(q.shape[0]):
        integrate_configuration(m, q[n], v[n], dt, out[n])


def neutral_configuration(robot, out=None):
    """The neutral configuration ``(nq,)`` (into ``out``): every coordinate 0, identity quaternions
    (``[0, 0, 0, 1]``)."""
    q = np.empty(robot.nq) if out is None else out
    q[...] = 0.0
    q[robot.quaternions + 3] = 1.0
    return q


# ------------------------------------------------------------------------------------------ logarithms (numpy)

def quaternion_multiply(a, b):
    """Hamilton products of ``(..., 4)`` quaternions, scalar last (:func:`quaternion_product` on arrays)."""
    product = getattr(quaternion_product, "py_func", quaternion_product)  # the Python function under numba's
    return np.stack(product(*np.moveaxis(a, -1, 0), *np.moveaxis(b, -1, 0)), axis=-1)


def quaternion_conjugate(a):
    return a * np.array([-1.0, -1.0, -1.0, 1.0])


def quaternion_rotate(quat, x):
    """``R(quat) x`` for unit quaternions ``(..., 4)`` and vectors ``(..., 3)``: ``x + 2 w u x x + 2 u x (u x x)``."""
    u, w = quat[..., :3], quat[..., 3:]
    c = np.cross(u, x)
    return x + 2.0 * w * c + 2.0 * np.cross(u, c)


def log_quaternion(quat):
    """``(w, theta, alpha)`` of unit quaternions ``(..., 4)``: the rotation vector ``w`` (angle ``theta`` in
    ``[0, pi]``: the quaternion is taken with ``qw >= 0``, as Pinocchio's ``log3``) and ``alpha = (theta / 2)
    cot(theta / 2)`` (for ``V^-1``), computed without cancellation from the half-angle's sine ``s`` and cosine."""
    quat = np.where(quat[..., 3:] < 0.0, -quat, quat)
    s = np.linalg.norm(quat[..., :3], axis=-1, keepdims=True)
    c = quat[..., 3:]
    half = np.arctan2(s, c)
    ratio = np.divide(2.0 * half, s, out=2.0 / np.maximum(c, 1e-300), where=s > 0.0)  # theta / s (-> 2 / c)
    return ratio * quat[..., :3], 2.0 * half, 0.5 * ratio * c


def log_se3(a, b):
    """Pinocchio's ``log6(M0^-1 M1)`` for free-flyer coordinates ``(..., 7)``: ``[V^-1(w) t; w]`` with
    ``V^-1 = 1 - [w]x / 2 + beta [w]x^2``, ``beta = (1 - alpha) / theta^2``."""
    q0 = a[..., 3:]
    w, theta, alpha = log_quaternion(quaternion_multiply(quaternion_conjugate(q0), b[..., 3:]))
    t = quaternion_rotate(quaternion_conjugate(q0), b[..., :3] - a[..., :3])
    t2 = theta * theta
    safe = np.where(t2 < 1e-4, 1.0, t2)
    beta = np.where(t2 < 1e-4, 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0, (1.0 - alpha) / safe)
    # [w]x^2 t = w (w . t) - theta^2 t
    v = alpha * t - 0.5 * np.cross(w, t) + beta * np.sum(w * t, axis=-1, keepdims=True) * w
    return np.concatenate([v, w], axis=-1)


def log_se2(a, b):
    """SE(2) logarithm for our planar coordinates ``(..., 3)``: ``w = theta1 - theta0`` and
    ``(vx, vy) = V2(w)^-1 R(-theta0) (p1 - p0)``, ``V2^-1 = [[alpha, w / 2], [-w / 2, alpha]]``."""
    theta = b[..., 2] - a[..., 2]
    dx, dy = b[..., 0] - a[..., 0], b[..., 1] - a[..., 1]
    c, s = np.cos(a[..., 2]), np.sin(a[..., 2])
    tx, ty = c * dx + s * dy, -s * dx + c * dy
    half = 0.5 * theta
    small = np.abs(theta) < SMALL_ANGLE
    safe = np.where(small, 1.0, half)
    t2 = theta * theta
    alpha = np.where(small, 1.0 - t2 / 12.0 - t2 * t2 / 720.0, safe * np.cos(safe) / np.sin(safe))
    return np.stack([alpha * tx + half * ty, -half * tx + alpha * ty, theta], axis=-1)
