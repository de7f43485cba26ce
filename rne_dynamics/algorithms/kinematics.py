"""Kinematics: where every link is and how it moves, the robot's centre of mass and its centroidal momentum.

This is the one place poses are computed. The frame convention is Pinocchio's: the world is the fixed base's frame
(the root link's, or the frame the free-flyer moves the base in); each body ``i`` has its pose ``oX_i = (oR_i, op_i)``
in the world, composed from the root as ``oX_i = X_i oX_λ`` (RBDA eq. 2.20 with ``X_i`` from
:func:`~rne_dynamics.model.joints.X_up`); a link sits in its body at ``robot.link_frames[link] = (body, R, p)`` (body
``-1``: the fixed base, which does not move). Motion vectors are ``[linear; angular]``.

Velocities and accelerations are propagated in the world frame, as spatial vectors at the world origin with world
axes (RBDA Sec. 2.9, Pinocchio's ``data.ov``, ``data.oa``): with ``oS_i = oX_i^-1 S_i`` the joint's columns seen in
the world,

    ov_i = ov_λ + oS_i v_i,     oa_i = oa_λ + oS_i a_i + ov_i x oS_i v_i      (d/dt oS_i = ov_i x oS_i)

no gravity (these are the kinematic accelerations). A quantity of a link is then *expressed* in one of three
references, as ``pin.ReferenceFrame``:

- ``"world"``: spatial vector at the world origin, world axes (``ov``, ``oS``: the same for every link of a body);
- ``"local"``: the link frame's own twist, at its origin in its axes: ``fX_o m`` (RBDA eq. 2.24);
- ``"local_world_aligned"``: at the link origin, world axes: ``[v + w x p_f; w]`` (the link origin's velocity).

Mimic joints' columns move with ``col_mult`` times their source's velocity coordinate, so a Jacobian's column ``c``
adds into column ``col_v[c]`` scaled by ``col_mult[c]``; a floating base has its 6 columns (base-frame twist).
"""
import weakref
from collections import namedtuple
from typing import NamedTuple, Optional

import numpy as np

from .._jit import arithmetic_kernel, batch_kernel, batch_range, chunk_count, chunk_rows, helper, kernel
from ..errors import ModelError, StateError
from .inputs import all_finite, not_finite, states
from ..model.data import packaged, results, workspace
from ..model.joints import X_up
from ..model.robot import model_view_inline
from ..model.spatial import (add_scaled, cross, cross_motion_add, inertia_times, motion_shift, motion_to_child,
                             motion_to_parent, pose_compose, rigid_inertia_to_parent, rotate, set_at_rest,
                             set_identity, rigid_inertia_add)

#: Reference codes of the kernels, by the name the public functions take (``pin.WORLD``, ``LOCAL``,
#: ``LOCAL_WORLD_ALIGNED``).
WORLD, LOCAL, LOCAL_WORLD_ALIGNED = 0, 1, 2
REFERENCES = {"world": WORLD, "local": LOCAL, "local_world_aligned": LOCAL_WORLD_ALIGNED}


# --- the kernels' building blocks -------------------------------------------------------------------------------

@helper
def world_poses(m, q, oR, op):
    """Every body's pose in the world, ``oX_i = X_i oX_λ`` (RBDA eq. 2.20), into ``oR`` ``(nb, 3, 3)`` and ``op``
    ``(nb, 3)`` (longer arrays keep their extra rows): ``oR_i = oR_λ R_i``, ``op_i = oR_λ p_i + op_λ``. A body on
    the fixed base (``λ = -1``) has its pose in its parent as its pose in the world.

    The helper the other algorithms read the world poses from."""
    for i in range(m.nb):
        λ = m.parent[i]
        X_up(m, i, q, oR[i], op[i])
        if λ >= 0:  # pose_compose reads both poses before it writes: out may be the child's pose
            pose_compose(oR[λ], op[λ], oR[i], op[i], oR[i], op[i])


@helper
def world_columns(m, oR, op, oS):
    """Every motion column in the world, ``oS_c = oX_i^-1 S_c`` (RBDA eq. 2.24 inverted) for the columns ``c`` of
    each body ``i``: the Jacobian column of its coordinate, at the world origin in world axes."""
    for i in range(m.nb):
        for c in range(m.col_start[i], m.col_start[i + 1]):
            motion_to_parent(oR[i], op[i], m.S[c], oS[c])


@helper
def world_velocities(m, oS, v, ov):
    """Every body's velocity in the world (spatial, at the world origin; row ``-1`` is the fixed base, at rest), with
    the world-frame columns ``oS``: ``ov_i = ov_λ + sum_c oS_c v_c``, ``v_c = col_mult[c] v[col_v[c]]``."""
    for i in range(m.nb):
        λ = m.parent[i]
        for k in range(6):
            ov[i, k] = ov[λ, k]
        for c in range(m.col_start[i], m.col_start[i + 1]):
            add_scaled(ov[i], m.col_mult[c] * v[m.col_v[c]], oS[c])


@helper
def world_accelerations(m, oS, v, a, ov, oa):
    """Every body's acceleration in the world (as :func:`world_velocities`, whose ``ov`` it reads), no gravity:
    ``oa_i = oa_λ + sum_c (oS_c a_c + ov_i x oS_c v_c)`` (``d/dt oS_c = ov_i x oS_c``)."""
    for i in range(m.nb):
        λ = m.parent[i]
        for k in range(6):
            oa[i, k] = oa[λ, k]
        for c in range(m.col_start[i], m.col_start[i + 1]):
            add_scaled(oa[i], m.col_mult[c] * a[m.col_v[c]], oS[c])
            cross_motion_add(ov[i], oS[c], m.col_mult[c] * v[m.col_v[c]], oa[i])


@helper
def express(reference, R_f, p_f, x, out):
    """``out`` = the world-frame motion vector ``x`` (at the world origin) in ``reference`` for the frame at
    ``(R_f, p_f)`` in the world: unchanged (world), ``fX_o x`` (local, RBDA eq. 2.24) or moved to the frame origin
    ``[v + w x p_f; w]`` (local world aligned: the local vector with world axes)."""
    if reference == LOCAL:
        motion_to_child(R_f, p_f, x, out)
    elif reference == LOCAL_WORLD_ALIGNED:
        motion_shift(p_f, x, out)
    else:
        for k in range(6):
            out[k] = x[k]


KinematicsWorkspace = namedtuple("KinematicsWorkspace", "oR op ov oa mass_c h_c I_c fR fp x y oS")

#: Rows of 6 numbers per body (and per motion column) of a kinematics workspace (:func:`kinematics_views`).
KINEMATICS_ROWS = 7


@helper
def kinematics_views(block, nb, ncol):
    """The arrays of the kinematics kernels as views of one flat block (:func:`kinematics_size` floats), seen as
    ``(nb + 2 + ncol, 7, 6)``: per body and a world row ``nb`` (index ``-1``: identity pose, at rest), the world pose
    ``(oR, op)`` (rows 0-2 and 3 of columns 0:3), a (composite) rigid inertia in the world ``I_c``, ``h_c`` (rows 0-2
    and 3 of columns 3:6) and ``mass_c`` (row 6, column 0), the velocity ``ov`` (row 4) and acceleration ``oa`` (row
    5); in row ``nb + 1`` a link's world pose ``(fR, fp)`` and two 6-vectors ``x``, ``y`` (rows 4 and 5); per motion
    column after it, the world-frame ``oS`` (row 0). The world row is set here, as a kept block holds old values."""
    b = block[:kinematics_size(nb, ncol)].reshape((nb + 2 + ncol, KINEMATICS_ROWS, 6))
    s = b[nb + 1]
    w = KinematicsWorkspace(b[:nb + 1, 0:3, 0:3], b[:nb + 1, 3, 0:3], b[:nb + 1, 4], b[:nb + 1, 5],
                            b[:nb + 1, 6, 0], b[:nb + 1, 3, 3:6], b[:nb + 1, 0:3, 3:6], s[0:3, 0:3], s[3, 0:3], s[4],
                            s[5], b[nb + 2:, 0])
    set_identity(w.oR[nb], w.op[nb])
    set_at_rest(w.ov[nb], w.oa[nb])
    return w


@helper
def kinematics_size(nb, ncol):
    """The number of floats of a kinematics workspace (:func:`kinematics_views`)."""
    return (nb + 2 + ncol) * KINEMATICS_ROWS * 6


@helper
def link_pose(w, body, R_l, p_l):
    """The link's world pose ``(fR, fp) = oX_body (R_l, p_l)`` (the world row's identity for body ``-1``)."""
    pose_compose(w.oR[body], w.op[body], R_l, p_l, w.fR, w.fp)


# --- placements of links ----------------------------------------------------------------------------------------

@helper
def link_placement(w, body, R_l, p_l, T):
    """The link's world pose as a homogeneous matrix ``T`` ``(4, 4)``, from the world poses in ``w``."""
    link_pose(w, body, R_l, p_l)
    for r in range(3):
        for c in range(3):
            T[r, c] = w.fR[r, c]
        T[r, 3] = w.fp[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0


@arithmetic_kernel
def placements_state(fdata, idata, block, link_body, link_R, link_p, q, T):
    """The world pose of each link of ``(link_body, link_R, link_p)`` as a homogeneous matrix ``T`` ``(n, 4, 4)``."""
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    world_poses(m, q, w.oR, w.op)
    for n in range(link_body.shape[0]):
        link_placement(w, link_body[n], link_R[n], link_p[n], T[n])


@kernel
def placements(fdata, idata, block, link_body, link_R, link_p, q, T):
    """:func:`placements_state`; False if ``q`` or ``T`` is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    placements_state(fdata, idata, block, link_body, link_R, link_p, q, T)
    return all_finite(q) and all_finite(T)


@arithmetic_kernel
def placements_rows(fdata, idata, block, rows, link_body, link_R, link_p, q, T):
    """:func:`placements_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        placements_state(fdata, idata, block, link_body, link_R, link_p, q[n], T[n])


@batch_kernel
def placements_batch(fdata, idata, link_body, link_R, link_p, q, T):
    """:func:`placements_state` for each row of a batch, chunks in parallel; returns what :func:`placements` does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        placements_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]),
                        link_body, link_R, link_p, q, T)
    return all_finite(q) and all_finite(T)


@arithmetic_kernel
def placement_state(fdata, idata, block, link_body, link_R, link_p, k, q, T):
    """The world pose of link ``k`` of ``(link_body, link_R, link_p)`` as a homogeneous matrix ``T`` ``(4, 4)``."""
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    world_poses(m, q, w.oR, w.op)
    link_placement(w, link_body[k], link_R[k], link_p[k], T)


@kernel
def placement(fdata, idata, block, link_body, link_R, link_p, k, q, T):
    """:func:`placement_state`; False if ``q`` or ``T`` is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    placement_state(fdata, idata, block, link_body, link_R, link_p, k, q, T)
    return all_finite(q) and all_finite(T)


@arithmetic_kernel
def placement_rows(fdata, idata, block, rows, link_body, link_R, link_p, k, q, T):
    """:func:`placement_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        placement_state(fdata, idata, block, link_body, link_R, link_p, k, q[n], T[n])


@batch_kernel
def placement_batch(fdata, idata, link_body, link_R, link_p, k, q, T):
    """:func:`placement_state` for each row of a batch, chunks in parallel; returns what :func:`placement` does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        placement_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]),
                       link_body, link_R, link_p, k, q, T)
    return all_finite(q) and all_finite(T)


# --- a link's Jacobian --------------------------------------------------------------------------------------------

@arithmetic_kernel
def jacobian_state(fdata, idata, block, link_body, link_R, link_p, k, reference, q, J):
    """The Jacobian ``J`` ``(6, nv)`` of link ``k`` of ``(link_body, link_R, link_p)`` in ``reference``: the columns
    of its body and of every ancestor (its support), each ``oS_c`` expressed for the link frame and added, times
    ``col_mult``, into its coordinate's column; the other columns are zero."""
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    world_poses(m, q, w.oR, w.op)
    body = link_body[k]
    link_pose(w, body, link_R[k], link_p[k])
    J[:] = 0.0
    j = body
    while j >= 0:
        for c in range(m.col_start[j], m.col_start[j + 1]):
            motion_to_parent(w.oR[j], w.op[j], m.S[c], w.x)
            express(reference, w.fR, w.fp, w.x, w.y)
            for r in range(6):
                J[r, m.col_v[c]] += m.col_mult[c] * w.y[r]
        j = m.parent[j]


@kernel
def jacobian(fdata, idata, block, link_body, link_R, link_p, k, reference, q, J):
    """:func:`jacobian_state`; False if ``q`` or ``J`` is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    jacobian_state(fdata, idata, block, link_body, link_R, link_p, k, reference, q, J)
    return all_finite(q) and all_finite(J)


@arithmetic_kernel
def jacobian_rows(fdata, idata, block, rows, link_body, link_R, link_p, k, reference, q, J):
    """:func:`jacobian_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        jacobian_state(fdata, idata, block, link_body, link_R, link_p, k, reference, q[n], J[n])


@batch_kernel
def jacobian_batch(fdata, idata, link_body, link_R, link_p, k, reference, q, J):
    """:func:`jacobian_state` for each row of a batch, chunks in parallel; returns what :func:`jacobian` does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        jacobian_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]),
                      link_body, link_R, link_p, k, reference, q, J)
    return all_finite(q) and all_finite(J)


# --- a link's velocity and acceleration ---------------------------------------------------------------------------

@arithmetic_kernel
def link_motion_state(fdata, idata, block, link_body, link_R, link_p, k, reference, classical, q, v, a, out_v,
                      out_a):
    """The velocity ``out_v`` and acceleration ``out_a`` (6 each) of link ``k`` of ``(link_body, link_R, link_p)``
    in ``reference``: its body's world-frame motion (:func:`world_velocities`, :func:`world_accelerations`) expressed
    for the link frame. ``classical``: the linear part is the classical acceleration of the reference point,
    ``a_lin + w x v_lin`` (pin.getFrameClassicalAcceleration); for ``local`` and ``local_world_aligned``, the link
    origin's ``d^2 p / dt^2`` in link or world axes."""
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    world_poses(m, q, w.oR, w.op)
    world_columns(m, w.oR, w.op, w.oS)
    world_velocities(m, w.oS, v, w.ov)
    world_accelerations(m, w.oS, v, a, w.ov, w.oa)
    body = link_body[k]
    link_pose(w, body, link_R[k], link_p[k])
    express(reference, w.fR, w.fp, w.ov[body], out_v)
    express(reference, w.fR, w.fp, w.oa[body], out_a)
    if classical:
        c0, c1, c2 = cross(out_v[3], out_v[4], out_v[5], out_v[0], out_v[1], out_v[2])
        out_a[0] += c0
        out_a[1] += c1
        out_a[2] += c2


@kernel
def link_motion(fdata, idata, block, link_body, link_R, link_p, k, reference, classical, q, v, a, out_v, out_a):
    """:func:`link_motion_state`; False if an input or a result is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    link_motion_state(fdata, idata, block, link_body, link_R, link_p, k, reference, classical, q, v, a, out_v, out_a)
    return all_finite(q) and all_finite(v) and all_finite(a) and all_finite(out_v) and all_finite(out_a)


@arithmetic_kernel
def link_motion_rows(fdata, idata, block, rows, link_body, link_R, link_p, k, reference, classical, q, v, a, out_v,
                     out_a):
    """:func:`link_motion_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        link_motion_state(fdata, idata, block, link_body, link_R, link_p, k, reference, classical, q[n], v[n], a[n],
                          out_v[n], out_a[n])


@batch_kernel
def link_motion_batch(fdata, idata, link_body, link_R, link_p, k, reference, classical, q, v, a, out_v, out_a):
    """:func:`link_motion_state` for each row of a batch, chunks in parallel; returns what :func:`link_motion`
    does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        link_motion_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]),
                         link_body, link_R, link_p, k, reference, classical, q, v, a, out_v, out_a)
    return all_finite(q) and all_finite(v) and all_finite(a) and all_finite(out_v) and all_finite(out_a)


# --- centre of mass -------------------------------------------------------------------------------------------------

@arithmetic_kernel
def com_state(fdata, idata, block, q, v, a, position, velocity, acceleration):
    """The centre of mass's ``position``, ``velocity`` and ``acceleration`` in the world (3 each), from each body's
    first moment in the world ``oh_i = oR_i h_i + m_i op_i`` (``m_i`` times its COM ``c_i``) and its world-frame
    motion ``ov_i = [v_o; w]``, ``oa_i = [a_o; α]``:

        M c = sum oh_i,   M dc = sum (m_i v_o + w x oh_i),
        M ddc = sum (m_i a_o + α x oh_i + w x (m_i v_o + w x oh_i))

    (the COM point's velocity ``v_o + w x c_i`` and classical acceleration ``a_o + α x c_i + w x (v_o + w x c_i)``).
    """
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    world_poses(m, q, w.oR, w.op)
    world_columns(m, w.oR, w.op, w.oS)
    world_velocities(m, w.oS, v, w.ov)
    world_accelerations(m, w.oS, v, a, w.ov, w.oa)
    position[:] = 0.0
    velocity[:] = 0.0
    acceleration[:] = 0.0
    mass = 0.0
    for i in range(m.nb):
        mass += m.mass[i]
        h = rotate(w.oR[i], m.h[i, 0], m.h[i, 1], m.h[i, 2])
        h = (h[0] + m.mass[i] * w.op[i, 0], h[1] + m.mass[i] * w.op[i, 1], h[2] + m.mass[i] * w.op[i, 2])
        V, A = w.ov[i], w.oa[i]
        wh = cross(V[3], V[4], V[5], h[0], h[1], h[2])
        mv = (m.mass[i] * V[0] + wh[0], m.mass[i] * V[1] + wh[1], m.mass[i] * V[2] + wh[2])
        αh = cross(A[3], A[4], A[5], h[0], h[1], h[2])
        wmv = cross(V[3], V[4], V[5], mv[0], mv[1], mv[2])
        for k in range(3):
            position[k] += h[k]
            velocity[k] += mv[k]
            acceleration[k] += m.mass[i] * A[k] + αh[k] + wmv[k]
    for k in range(3):
        position[k] /= mass
        velocity[k] /= mass
        acceleration[k] /= mass


@kernel
def com(fdata, idata, block, q, v, a, position, velocity, acceleration):
    """:func:`com_state`; False if an input or a result is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    com_state(fdata, idata, block, q, v, a, position, velocity, acceleration)
    return (all_finite(q) and all_finite(v) and all_finite(a) and all_finite(position) and all_finite(velocity)
            and all_finite(acceleration))


@arithmetic_kernel
def com_rows(fdata, idata, block, rows, q, v, a, position, velocity, acceleration):
    """:func:`com_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        com_state(fdata, idata, block, q[n], v[n], a[n], position[n], velocity[n], acceleration[n])


@batch_kernel
def com_batch(fdata, idata, q, v, a, position, velocity, acceleration):
    """:func:`com_state` for each row of a batch, chunks in parallel; returns what :func:`com` does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        com_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]), q, v, a,
                 position, velocity, acceleration)
    return (all_finite(q) and all_finite(v) and all_finite(a) and all_finite(position) and all_finite(velocity)
            and all_finite(acceleration))


# --- centroidal momentum ------------------------------------------------------------------------------------------

@helper
def moment_about(G, f0, f1, f2):
    """``G x f``: what the moment of a force (momentum) ``f`` through the world origin loses when taken about the
    point ``G`` instead (RBDA eq. 2.25 with ``R = 1``: ``n_G = n_o - G x f``)."""
    return cross(G[0], G[1], G[2], f0, f1, f2)


@arithmetic_kernel
def centroidal_state(fdata, idata, block, q, v, h_G, A_G):
    """The centroidal momentum ``h_G`` (6) and its matrix ``A_G`` ``(6, nv)``, ``h_G = A_G v`` (Orin, Goswami and
    Lee, Auton. Robots 2013, eq. 15-22), world axes, angular about the centre of mass ``G``:

        h_o = sum_i oI_i ov_i                               (each body's momentum, world frame)
        A_o[:, k] = oIc_i oS_c  for the columns c of body i  (oIc_i: the composite inertia of i's subtree, as CRBA)
    then both are moved from the world origin to ``G = sum oh_i / sum m_i``: ``n -= G x f``. Column ``c`` adds into
    ``k = col_v[c]``, scaled by ``col_mult[c]``.
    """
    m = model_view_inline(fdata, idata)
    w = kinematics_views(block, m.nb, m.ncol)
    mass_c, h_c, I_c = w.mass_c, w.h_c, w.I_c
    world_poses(m, q, w.oR, w.op)
    world_columns(m, w.oR, w.op, w.oS)
    world_velocities(m, w.oS, v, w.ov)
    h_G[:] = 0.0
    mass_c[-1] = 0.0  # the world row gathers the whole robot
    h_c[-1] = 0.0
    I_c[-1] = 0.0
    for i in range(m.nb):
        mass_c[i] = m.mass[i]
        rigid_inertia_to_parent(w.oR[i], w.op[i], m.mass[i], m.h[i], m.I[i], h_c[i], I_c[i])
        inertia_times(mass_c[i], h_c[i], I_c[i], w.ov[i], w.x)
        add_scaled(h_G, 1.0, w.x)
    A_G[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        λ = m.parent[i]
        rigid_inertia_add(mass_c, h_c, I_c, i, λ)
        for c in range(m.col_start[i], m.col_start[i + 1]):
            inertia_times(mass_c[i], h_c[i], I_c[i], w.oS[c], w.x)
            for r in range(6):
                A_G[r, m.col_v[c]] += m.col_mult[c] * w.x[r]
    M = mass_c[-1]
    G = (h_c[-1, 0] / M, h_c[-1, 1] / M, h_c[-1, 2] / M)
    n = moment_about(G, h_G[0], h_G[1], h_G[2])
    for r in range(3):
        h_G[3 + r] -= n[r]
    for k in range(m.nv):
        n = moment_about(G, A_G[0, k], A_G[1, k], A_G[2, k])
        for r in range(3):
            A_G[3 + r, k] -= n[r]


@kernel
def centroidal(fdata, idata, block, q, v, h_G, A_G):
    """:func:`centroidal_state`; False if an input or a result is not finite."""
    if block.size == 0:  # no held Data: a workspace of its own
        block = np.empty(kinematics_size(idata[0], idata[4]))
    centroidal_state(fdata, idata, block, q, v, h_G, A_G)
    return all_finite(q) and all_finite(v) and all_finite(h_G) and all_finite(A_G)


@arithmetic_kernel
def centroidal_rows(fdata, idata, block, rows, q, v, h_G, A_G):
    """:func:`centroidal_state` for the states ``rows`` of a batch, in one workspace ``block``."""
    for n in rows:
        centroidal_state(fdata, idata, block, q[n], v[n], h_G[n], A_G[n])


@batch_kernel
def centroidal_batch(fdata, idata, q, v, h_G, A_G):
    """:func:`centroidal_state` for each row of a batch, chunks in parallel; returns what :func:`centroidal` does."""
    for chunk in batch_range(chunk_count(q.shape[0])):
        centroidal_rows(fdata, idata, np.empty(kinematics_size(idata[0], idata[4])), chunk_rows(chunk, q.shape[0]),
                        q, v, h_G, A_G)
    return all_finite(q) and all_finite(v) and all_finite(h_G) and all_finite(A_G)


# --- public functions ---------------------------------------------------------------------------------------------

class LinkTables(NamedTuple):
    """Every link of ``robot.link_names``, in that order, as the kernels take them: its body ``(n,)``, its pose in
    the body ``R`` ``(n, 3, 3)`` and ``p`` ``(n, 3)``; ``index[link]`` is its row."""
    body: np.ndarray
    R: np.ndarray
    p: np.ndarray
    index: dict


_LINK_TABLES = weakref.WeakKeyDictionary()


def link_tables(robot):
    """The robot's :class:`LinkTables`, built once per robot: a call then looks a link up without making arrays."""
    tables = _LINK_TABLES.get(robot)
    if tables is None:
        frames = [robot.link_frames[name] for name in robot.link_names]
        tables = LinkTables(np.array([f[0] for f in frames], dtype=np.int64).reshape(-1),
                            np.array([f[1] for f in frames], dtype=float).reshape(-1, 3, 3),
                            np.array([f[2] for f in frames], dtype=float).reshape(-1, 3),
                            {name: k for k, name in enumerate(robot.link_names)})
        _LINK_TABLES[robot] = tables
    return tables


def _link(robot, link):
    """The robot's link tables and the row of ``link`` in them; a clear error for an unknown link."""
    tables = link_tables(robot)
    k = tables.index.get(link) if isinstance(link, str) else None
    if k is None:
        raise StateError(f"robot '{robot.name}' has no link '{link}'; its links are {', '.join(robot.link_names)}")
    return tables, k


def _reference(reference):
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise StateError(f"reference must be one of {', '.join(repr(r) for r in REFERENCES)}, got {reference!r}") \
            from None


def _workspace(robot, data):
    """The kinematics workspace of a single-state kernel: ``data``'s (one for every function here), or a new one."""
    return workspace(robot, data, "kinematics", kinematics_size, robot.nb, robot.ncol)


def _zero_velocities(robot, data, key, q):
    """Joint-space zeros for the states of ``q``, in ``data`` under ``key`` if given (zeroed on every call)."""
    (zero,) = results(robot, data, key, q, (robot.nv,))
    zero.fill(0.0)
    return zero


def forward_kinematics(robot, q, *, data=None):
    """Every link's pose in the world as homogeneous matrices ``(…, n_links, 4, 4)``, in ``robot.link_names``
    order (``pin.framesForwardKinematics``, ``data.oMf``). The world is the fixed base's frame (the root link's for
    a fixed base); links fixed to it have their constant pose. One state ``q`` ``(nq,)`` or a batch ``(N, nq)``;
    ``data``: a ``robot.data()`` to compute in."""
    (q,) = states(robot, finite=False, q=q)
    links = link_tables(robot)
    (T,) = results(robot, data, "forward_kinematics", q, (len(links.body), 4, 4))
    if q.ndim == 2:
        finite = placements_batch(robot.fdata, robot.idata, links.body, links.R, links.p, q, T)
    else:
        finite = placements(robot.fdata, robot.idata, _workspace(robot, data), links.body, links.R, links.p, q, T)
    if not finite:
        raise not_finite(robot, "the link poses", q=q)
    return T


def frame_placement(robot, q, link, *, data=None):
    """The pose of ``link`` in the world, a homogeneous matrix ``(…, 4, 4)`` (as :func:`forward_kinematics`);
    ``data``: a ``robot.data()`` to compute in."""
    (q,) = states(robot, finite=False, q=q)
    links, k = _link(robot, link)
    (T,) = results(robot, data, "frame_placement", q, (4, 4))
    if q.ndim == 2:
        finite = placement_batch(robot.fdata, robot.idata, links.body, links.R, links.p, k, q, T)
    else:
        finite = placement(robot.fdata, robot.idata, _workspace(robot, data), links.body, links.R, links.p, k, q, T)
    if not finite:
        raise not_finite(robot, "the link pose", q=q)
    return T


def frame_jacobian(robot, q, link, reference="local_world_aligned", *, data=None):
    """The Jacobian of ``link`` ``(…, 6, nv)``, rows ``[linear; angular]``, columns the velocity coordinates:
    ``J v`` is the link's velocity in ``reference`` (``pin.computeFrameJacobian`` with ``pin.WORLD``, ``LOCAL``,
    ``LOCAL_WORLD_ALIGNED``):

    - ``"world"``: the spatial velocity at the world origin, world axes;
    - ``"local"``: the link frame's twist in its own axes;
    - ``"local_world_aligned"`` (default): the link origin's velocity and the angular velocity, world axes.

    A mimic joint adds into its source's column, scaled by its multiplier; a floating base has 6 columns (the
    base's twist in its own frame). One state ``q`` ``(nq,)`` or a batch ``(N, nq)``; ``data``: a ``robot.data()``
    to compute in.
    """
    (q,) = states(robot, finite=False, q=q)
    links, k = _link(robot, link)
    ref = _reference(reference)
    (J,) = results(robot, data, "frame_jacobian", q, (6, robot.nv))
    if q.ndim == 2:
        finite = jacobian_batch(robot.fdata, robot.idata, links.body, links.R, links.p, k, ref, q, J)
    else:
        finite = jacobian(robot.fdata, robot.idata, _workspace(robot, data), links.body, links.R, links.p, k, ref, q,
                          J)
    if not finite:
        raise not_finite(robot, "the Jacobian entries", q=q)
    return J


def _link_motion(robot, q, v, a, link, reference, classical, data, key):
    """The link's velocity and acceleration (``a = None``: zero) by :func:`link_motion`, one state or a batch, in
    ``data`` under ``key`` if given."""
    if a is None:
        q, v = states(robot, finite=False, q=q, v=v)
        a = _zero_velocities(robot, data, key + ".a", q)
    else:
        q, v, a = states(robot, finite=False, q=q, v=v, a=a)
    links, k = _link(robot, link)
    ref = _reference(reference)
    out_v, out_a = results(robot, data, key, q, (6,), (6,))
    if q.ndim == 2:
        finite = link_motion_batch(robot.fdata, robot.idata, links.body, links.R, links.p, k, ref, bool(classical),
                                   q, v, a, out_v, out_a)
    else:
        finite = link_motion(robot.fdata, robot.idata, _workspace(robot, data), links.body, links.R, links.p, k, ref,
                             bool(classical), q, v, a, out_v, out_a)
    if not finite:
        raise not_finite(robot, "the link's velocity and acceleration", q=q, v=v, a=a)
    return out_v, out_a


def frame_velocity(robot, q, v, link, reference="local_world_aligned", *, data=None):
    """The velocity of ``link`` ``(…, 6)``, ``[linear; angular]`` in ``reference`` (as :func:`frame_jacobian`;
    ``pin.getFrameVelocity``), for the configuration ``q`` and velocity ``v``; ``data``: a ``robot.data()`` to
    compute in."""
    return _link_motion(robot, q, v, None, link, reference, False, data, "frame_velocity")[0]


def frame_acceleration(robot, q, v, a, link, reference="local_world_aligned", classical=True, *, data=None):
    """The acceleration of ``link`` ``(…, 6)`` in ``reference`` for ``q``, ``v`` and the acceleration ``a`` (no
    gravity: kinematics). ``classical=True`` (default): the linear part is the classical acceleration of the
    link origin, ``d^2 p / dt^2`` in world (``local_world_aligned``) or link (``local``) axes
    (``pin.getFrameClassicalAcceleration``); ``False``: the spatial acceleration (``pin.getFrameAcceleration``).
    The angular part is the angular acceleration either way. ``data``: a ``robot.data()`` to compute in."""
    return _link_motion(robot, q, v, a, link, reference, classical, data, "frame_acceleration")[1]


class CenterOfMass(NamedTuple):
    """The centre of mass in the world (m), its velocity (m/s) and acceleration (m/s^2), each ``(…, 3)``;
    ``acceleration`` is ``None`` when no acceleration was given."""
    position: np.ndarray
    velocity: np.ndarray
    acceleration: Optional[np.ndarray]


def center_of_mass(robot, q, v=None, a=None, *, data=None):
    """The centre of mass of the moving bodies in the world ``(…, 3)`` (``pin.centerOfMass``); with ``v`` (and
    ``a``), a :class:`CenterOfMass` of its position, velocity and acceleration (no gravity: kinematics). ``data``:
    a ``robot.data()`` to compute in.

    The mass counted is ``robot.total_mass``: every moving body, the floating base included. Links fixed to the world
    (the fixed base) are left out, as ``pin.centerOfMass`` leaves out ``model.inertias[0]`` where Pinocchio keeps
    them: the centre of mass is that of the mass the joints move.
    """
    if a is not None and v is None:
        raise StateError("center_of_mass: an acceleration a needs the velocity v")
    if v is None:
        (q,) = arrays = states(robot, finite=False, q=q)
        v = a = _zero_velocities(robot, data, "center_of_mass.zero", q)
        given = ("q",)
    elif a is None:
        q, v = arrays = states(robot, finite=False, q=q, v=v)
        a = _zero_velocities(robot, data, "center_of_mass.zero", q)
        given = ("q", "v")
    else:
        q, v, a = arrays = states(robot, finite=False, q=q, v=v, a=a)
        given = ("q", "v", "a")
    if robot.total_mass <= 0.0:
        raise ModelError(f"robot '{robot.name}': its moving bodies have no mass, so no centre of mass")
    position, velocity, acceleration = results(robot, data, "center_of_mass", q, (3,), (3,), (3,))
    if q.ndim == 2:
        finite = com_batch(robot.fdata, robot.idata, q, v, a, position, velocity, acceleration)
    else:
        finite = com(robot.fdata, robot.idata, _workspace(robot, data), q, v, a, position, velocity, acceleration)
    if not finite:
        raise not_finite(robot, "the centre of mass coordinates", **dict(zip(given, arrays)))
    if len(given) == 1:
        return position
    if len(given) == 2:
        return packaged(data, "center_of_mass.velocity", CenterOfMass, position, velocity, None)
    return packaged(data, "center_of_mass", CenterOfMass, position, velocity, acceleration)


def _centroidal(robot, q, v, data, key):
    """The centroidal momentum and its matrix, in ``data`` under ``key`` if given."""
    if robot.total_mass <= 0.0:
        raise ModelError(f"robot '{robot.name}': its moving bodies have no mass, so no centre of mass")
    h_G, A_G = results(robot, data, key, q, (6,), (6, robot.nv))
    if q.ndim == 2:
        finite = centroidal_batch(robot.fdata, robot.idata, q, v, h_G, A_G)
    else:
        finite = centroidal(robot.fdata, robot.idata, _workspace(robot, data), q, v, h_G, A_G)
    if not finite:
        raise not_finite(robot, "the centroidal momentum entries", q=q, v=v)
    return h_G, A_G


def centroidal_momentum(robot, q, v, *, data=None):
    """The centroidal momentum ``(…, 6)``: ``[linear; angular]`` momentum of the moving bodies, the angular about
    the centre of mass (:func:`center_of_mass`), world axes (``pin.computeCentroidalMomentum(...).vector``, kg m/s
    and kg m^2/s). One state or a batch of ``q`` ``(nq,)`` and ``v`` ``(nv,)``; ``data``: a ``robot.data()`` to
    compute in."""
    q, v = states(robot, finite=False, q=q, v=v)
    return _centroidal(robot, q, v, data, "centroidal_momentum")[0]


def centroidal_momentum_matrix(robot, q, *, data=None):
    """The centroidal momentum matrix ``A_G`` ``(…, 6, nv)``: ``A_G v`` is :func:`centroidal_momentum`
    (``pin.computeCentroidalMap``, ``data.Ag`` of ``pin.ccrba``); ``data``: a ``robot.data()`` to compute in."""
    (q,) = states(robot, finite=False, q=q)
    v = _zero_velocities(robot, data, "centroidal_momentum_matrix.v", q)
    return _centroidal(robot, q, v, data, "centroidal_momentum_matrix")[1]
