"""Inverse dynamics by the recursive Newton-Euler algorithm (Featherstone, RBDA Table 5.1), in body coordinates.

Gravity enters as a fictitious acceleration of the fixed base, ``a_0 = -g`` (RBDA Sec. 5.3). The forward pass
propagates velocities ``v`` and accelerations ``a``; the backward pass accumulates the joint wrenches ``f``, each
the wrench exerted on a body by its parent across its joint, in the body (joint) frame about the joint origin.
"""
from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from .driver import Algorithm
from .inputs import NO_WRENCHES
from ..model.drive import drive_torques_add
from ..model.joints import S_times_add, S_transpose_times_add, X_up
from ..model.spatial import (add_scaled, base_acceleration, cross_force_add, cross_motion_add, force_to_parent_add,
                             inertia_times, motion_to_child, set_at_rest)


@helper
def body_motion(m, i, q, qd, qdd, R, p, v, a, vJ):
    """Pose ``X_i``, velocity and acceleration of body ``i`` from its parent's (RBDA eq. 5.7-5.8), with ``vJ`` the
    joint's velocity:
        vJ = S_i qd_i,   v_i = X_i v_λ + vJ,   a_i = X_i a_λ + S_i qdd_i + v_i x vJ
    """
    λ = m.parent[i]
    X_up(m, i, q, R[i], p[i])
    vJ[:] = 0.0
    S_times_add(m, i, qd, 1.0, vJ)
    motion_to_child(R[i], p[i], v[λ], v[i])
    add_scaled(v[i], 1.0, vJ)
    motion_to_child(R[i], p[i], a[λ], a[i])
    S_times_add(m, i, qdd, 1.0, a[i])
    cross_motion_add(v[i], vJ, 1.0, a[i])


#: RNEA's arrays: per body its pose ``X_up`` as ``(R, p)``, and ``v``, ``a``, ``f``, whose last row is the fixed
#: base's; ``I v`` and the joint velocity ``vJ`` of the body at hand.
rnea_workspace = memory("rnea_workspace", R=("nb", 3, 3), p=("nb", 3), v=("nb + 1", 6), a=("nb + 1", 6),
                        f=("nb + 1", 6), Iv=(6,), vJ=(6,))


@arithmetic_kernel
def newton_euler(m, w, q, qd, qdd, gravity, f_ext, tau, f):
    """RNEA (RBDA Table 5.1) for one state; writes the rigid-body torques ``tau`` (nv) and ``f`` (nb + 1, 6).
    Callers that model the drives add :func:`~rne_dynamics.model.drive.drive_torques_add`.

    Row ``-1`` of ``v``, ``a`` and ``f`` is the fixed base, so a parent index of -1 needs no special case:
        v_i = X_i v_λ + S_i qd_i
        a_i = X_i a_λ + S_i qdd_i + v_i x S_i qd_i          (a_base = -g: gravity as a base acceleration)
        f_i = I_i a_i + v_i x* I_i v_i - f_ext_i
        tau_i = S_i^T f_i,   f_λ += X_i^T f_i
    """
    R, p, v, a = w.R, w.p, w.v, w.a
    set_at_rest(v[-1], a[-1])
    base_acceleration(gravity, a[-1])
    f[-1] = 0.0
    for i in range(m.nb):
        body_motion(m, i, q, qd, qdd, R, p, v, a, w.vJ)
        inertia_times(m.mass[i], m.h[i], m.I[i], a[i], f[i])
        inertia_times(m.mass[i], m.h[i], m.I[i], v[i], w.Iv)
        cross_force_add(v[i], w.Iv, f[i])
        if f_ext.shape[0] > 0:  # external wrenches given
            add_scaled(f[i], -1.0, f_ext[i])
    tau[:] = 0.0
    for i in range(m.nb - 1, -1, -1):
        S_transpose_times_add(m, i, f[i], tau)
        force_to_parent_add(R[i], p[i], f[i], f[m.parent[i]])


@arithmetic_kernel
def joint_loads(m, f, wrench, base):
    """The joint wrenches of the named joints, ``(nj, 6)``, and the base's share ``f[-1]``."""
    for j in range(m.nj):
        for c in range(6):
            wrench[j, c] = f[m.joint_body[j], c]
    for c in range(6):
        base[c] = f[-1, c]


inverse_dynamics_results = dict(torques=("nv",), joint_wrenches=("nj", 6), base_wrench=(6,))
inverse_dynamics_memory = memory("inverse_dynamics_memory", results=inverse_dynamics_results, rnea=rnea_workspace)
#: The same memory with RNEA's arrays among the results, which every engine then writes too (the written code
#: among its outputs): a one-state call with ``data=`` runs it, so that the ``Data`` shows its per-body ``v``,
#: ``a``, ``f`` (:class:`~rne_dynamics.model.data.Data`) as Pinocchio's ``rnea`` fills its ``data.v``,
#: ``data.a_gf``, ``data.f``. Allocating calls and batches keep the results alone: 27 more numbers a body would make
#: their blocks four times as large (a batch's per-state time 1.5-2.5x, measured).
shown_memory = memory("inverse_dynamics_shown_memory", results=dict(inverse_dynamics_results, rnea=rnea_workspace))


@arithmetic_kernel
def inverse_dynamics_step(m, w, q, qd, qdd, f_ext, gravity):
    """RNEA with the drive torques, and the joint loads."""
    newton_euler(m, w.rnea, q, qd, qdd, gravity, f_ext, w.torques, w.rnea.f)
    drive_torques_add(m, qd, qdd, w.torques)
    joint_loads(m, w.rnea.f, w.joint_wrenches, w.base_wrench)


#: The bias torques, then a zero acceleration and RNEA's workspace.
bias_memory = memory("bias_memory", results=dict(torques=("nv",)), zero=("nv",), rnea=rnea_workspace)


@arithmetic_kernel
def bias_step(m, w, q, qd, gravity):
    """RNEA at zero acceleration, rigid-body terms only (RBDA Sec. 9.2)."""
    w.zero[:] = 0.0
    newton_euler(m, w.rnea, q, qd, w.zero, gravity, NO_WRENCHES[0], w.torques, w.rnea.f)


class InverseDynamicsResult(inverse_dynamics_memory.results):
    """``torques`` ``(…, nv)``: the joint torques (N·m) or forces (N) that produce the motion; with a floating base
    the first 6 are the wrench ``[f; tau]`` the world would have to exert on the base, in the base frame.

    ``joint_wrenches`` ``(…, len(joint_names), 6)``: per movable joint, ``[f; tau]`` exerted on its child link by its
    parent link, child-link frame, about the joint origin. ``base_wrench`` ``(…, 6)``: the wrench the fixed base
    (root link and the links fixed to it; the world, for a floating base) exerts on the moving bodies, in the
    world (root) frame.
    """
    __slots__ = ()


INVERSE_DYNAMICS = Algorithm(inverse_dynamics_step, inverse_dynamics_memory, ("q", "qd", "qdd"), "the torques",
                             InverseDynamicsResult, gravity=True, wrenches=True)
#: Inverse dynamics of one state into a ``Data``, which then shows RNEA's intermediates (:data:`shown_memory`).
INVERSE_DYNAMICS_SHOWN = Algorithm(inverse_dynamics_step, shown_memory, ("q", "qd", "qdd"), "the torques",
                                   InverseDynamicsResult, gravity=True, wrenches=True, intermediates="rnea",
                                   batches=INVERSE_DYNAMICS)
BIAS = Algorithm(bias_step, bias_memory, ("q", "qd"), "the torques", gravity=True)


def inverse_dynamics(robot, q, qd, qdd, *, gravity=None, external_wrenches=None, data=None, drive=True):
    """Joint torques and joint reaction wrenches for positions ``q``, velocities ``qd``, accelerations ``qdd``.

    ``gravity``: 3-vector in the world (root-link) frame, default ``(0, 0, -9.81)``. ``external_wrenches``:
    ``{link: [fx, fy, fz, tx, ty, tz]}`` applied on the link by the environment, link frame, about its origin.
    One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, nq)``, ``(N, nv)``. ``data``: a
    ``robot.data()`` to compute in (the result's arrays are then views of it).
    ``drive``: with each drive's rotor inertia and friction (:mod:`~rne_dynamics.model.drive`; the default) or,
    ``False``, rigid-body dynamics only. After a one-state call with ``data``, ``data.v``, ``data.a``, ``data.a_gf``
    and ``data.f`` are its per-body velocities, accelerations and joint wrenches, as in Pinocchio's Data
    (:class:`~rne_dynamics.model.data.Data`).
    """
    return (INVERSE_DYNAMICS if data is None else INVERSE_DYNAMICS_SHOWN).run(robot, data, (q, qd, qdd), gravity,
                                                                              external_wrenches, drive=drive)


def bias_torques(robot, q, qd, *, gravity=None, data=None):
    """``C(q, qd) qd + g(q)``: the torques at zero acceleration, without drive friction (see
    :mod:`~rne_dynamics.algorithms.gravity`). One state or a batch (``q`` ``(…, nq)``, ``qd`` ``(…, nv)``);
    ``data``: a ``robot.data()`` to compute in.
    """
    return BIAS.run(robot, data, (q, qd), gravity)
