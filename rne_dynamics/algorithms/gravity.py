"""Gravity torques ``g(q)`` and bias torques ``C(q, qd) qd + g(q)`` (Featherstone, RBDA Sec. 5.3 and 9.2).

``gravity_torques`` is the static Newton-Euler pass: with ``qd = qdd = 0`` every velocity and velocity product
vanishes, so the forward pass only carries the fictitious base acceleration ``a_0 = -g`` out to each body
(``a_i = X_i a_λ``, a linear acceleration) and the backward pass sums the forces ``f_i = I_i a_i`` of each subtree
through its mass and first moment, the only parts of its composite inertia that a linear acceleration meets.

Drive friction (URDF ``<dynamics damping friction>``, :meth:`Robot.with_drive`) is not part of ``C qd + g``: the
full joint torque is ``tau = M(q) qdd + bias_torques(q, qd) + damping qd + friction sign(qd)``, with the rotor
inertia (armature) inside ``M``; this is what :func:`rne_dynamics.inverse_dynamics` returns.
"""
from collections import namedtuple

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from ..model.data import results, workspace
from .inputs import all_finite, gravity_vector, not_finite, states
from ..model.joints import X_up
from ..model.robot import S_transpose_times_add, model_view_inline
from .rnea import newton_euler_call
from ..model.spatial import base_acceleration, cross


GravityWorkspace = namedtuple("GravityWorkspace", "R p a mass_c h_c f")


@helper
def gravity_views(block):
    """The arrays of the static pass as views of one ``(nb + 1, 4, 6)`` block (one allocation): per body, the pose
    as ``R`` (rows 0-2, columns 0:3) and ``p`` (row 0, columns 3:6), the linear acceleration ``a`` and the subtree's
    first moment ``h_c`` (rows 1, 2, columns 3:6) and mass ``mass_c`` (row 3, column 0), whose last row is the fixed
    base's; one force ``f`` in the base's row 0."""
    nb = block.shape[0] - 1
    return GravityWorkspace(block[:nb, 0:3, 0:3], block[:nb, 0, 3:6], block[:, 1, 3:6], block[:, 3, 0],
                            block[:, 2, 3:6], block[nb, 0])


@helper
def gravity_shape(nb):
    """The shape of a static-pass workspace (:func:`gravity_views`)."""
    return (nb + 1, 4, 6)


@arithmetic_kernel
def static_newton_euler(m, w, q, gravity, tau):
    """Static RNEA for one state (RBDA Table 5.1 with ``qd = qdd = 0``).

    Every acceleration stays linear: ``a_0 = [-g; 0]`` and ``X_i [a; 0] = [R_i^T a; 0]``. A subtree's forces
    ``f_i = I_i a_i + sum_children X_c^T f_c`` then sum to its composite inertia times ``a_i`` (RBDA Sec. 6.2), of
    which only the mass and first moment act on a linear acceleration:
        a_i = R_i^T a_λ,   f_i = I^c_i [a_i; 0] = [mass^c_i a_i; h^c_i x a_i],   tau_i = S_i^T f_i,
        mass^c_λ += mass^c_i,   h^c_λ += R_i h^c_i + mass^c_i p_i   (RBDA eq. 2.66)
    """
    R, p, a, mass_c, h_c, f = w.R, w.p, w.a, w.mass_c, w.h_c, w.f
    base_acceleration(gravity, a[-1])
    mass_c[-1] = 0.0
    h_c[-1] = 0.0
    for i in range(m.nb):
        X_up(m, i, q, R[i], p[i])
        λ = m.parent[i]
        for k in range(3):
            a[i, k] = R[i, 0, k] * a[λ, 0] + R[i, 1, k] * a[λ, 1] + R[i, 2, k] * a[λ, 2]
            h_c[i, k] = m.h[i, k]
        mass_c[i] = m.mass[i]
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        λ = m.parent[i]
        a0, a1, a2 = a[i, 0], a[i, 1], a[i, 2]
        f[0], f[1], f[2] = mass_c[i] * a0, mass_c[i] * a1, mass_c[i] * a2
        f[3], f[4], f[5] = cross(h_c[i, 0], h_c[i, 1], h_c[i, 2], a0, a1, a2)
        S_transpose_times_add(m, i, f, tau)
        mass_c[λ] += mass_c[i]
        for k in range(3):
            h_c[λ, k] += R[i, k, 0] * h_c[i, 0] + R[i, k, 1] * h_c[i, 1] + R[i, k, 2] * h_c[i, 2] + mass_c[i] * p[i, k]


@arithmetic_kernel
def gravity_state(fdata, idata, block, q, gravity, tau):
    """:func:`static_newton_euler` for one state in the workspace ``block``."""
    static_newton_euler(model_view_inline(fdata, idata), gravity_views(block), q, gravity, tau)


@kernel
def gravity_pass(fdata, idata, block, q, gravity, tau):
    """:func:`gravity_state`; False if ``q`` or a torque is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(gravity_shape(idata[0]))
    gravity_state(fdata, idata, block, q, gravity, tau)
    return all_finite(q) and all_finite(tau)


@arithmetic_kernel
def gravity_rows(fdata, idata, block, rows, q, gravity, tau):
    """:func:`static_newton_euler` for the states ``rows`` of a batch, in one workspace ``block``."""
    m = model_view_inline(fdata, idata)
    w = gravity_views(block)
    for n in rows:
        static_newton_euler(m, w, q[n], gravity, tau[n])


@batch_kernel
def gravity_pass_batch(fdata, idata, q, gravity, tau):
    """:func:`static_newton_euler` for each row of a batch, chunks in parallel, one workspace per chunk; returns
    what :func:`gravity_pass` returns, for the whole batch."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        gravity_rows(fdata, idata, np.empty(gravity_shape(idata[0])), chunk_rows(chunk, q.shape[0]), q, gravity, tau)
    return all_finite(q) and all_finite(tau)


def gravity_torques(robot, q, *, gravity=None, data=None):
    """``g(q)``: the joint torques that hold the robot still at ``q`` (``inverse_dynamics(q, 0, 0).torques``).

    ``gravity``: 3-vector in the world (root-link) frame, default ``(0, 0, -9.81)``. One state or a batch (``q``
    ``(…, nq)``); ``data``: a ``robot.data()`` to compute in.
    """
    (q,) = states(robot, finite=False, q=q)
    g = gravity_vector(gravity)
    (tau,) = results(robot, data, "gravity_torques", q, (robot.nv,))
    if q.ndim == 2:
        finite = gravity_pass_batch(robot.fdata, robot.idata, q, g, tau)
    else:
        block = workspace(robot, data, "gravity", gravity_shape, robot.nb)
        finite = gravity_pass(robot.fdata, robot.idata, block, q, g, tau)
    if not finite:
        raise not_finite(robot, "the torques", q=q)
    return tau


def bias_torques(robot, q, qd, *, gravity=None, data=None):
    """``C(q, qd) qd + g(q)``: the torques at zero acceleration, without drive friction (see the module notes).

    Computed by RNEA with ``qdd = 0`` (RBDA Sec. 9.2), rigid-body terms only.
    One state or a batch (``q`` ``(…, nq)``, ``qd`` ``(…, nv)``); ``data``: a ``robot.data()`` to compute in.
    """
    q, qd = states(robot, finite=False, q=q, qd=qd)
    tau, wrench, base, qdd = results(robot, data, "bias_torques", q, (robot.nv,), (len(robot.joint_names), 6), (6,),
                                     (robot.nv,))
    qdd[...] = 0.0
    if not newton_euler_call(robot, data, q, qd, qdd, gravity, None, False, tau, wrench, base):
        raise not_finite(robot, "the torques", q=q, qd=qd)
    return tau
