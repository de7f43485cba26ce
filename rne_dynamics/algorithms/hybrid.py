"""Hybrid dynamics (Featherstone, RBDA Sec. 9.2, Table 9.6; Khalil 2010 Sec. 6-7): some velocity coordinates have a
known acceleration, the others a known generalised force; one O(n) articulated-body pass gives the unknown half of
each, and the joint wrenches.

The two ends are the familiar algorithms: every acceleration known is inverse dynamics (RNEA), every force known is
forward dynamics (ABA). In between: a free-floating base (its force known: zero, or gravity and the external
wrenches only) under a joint trajectory is Khalil's inverse model with a mobile base (eqs. 86-87, recursively
89-99); a passive joint has a known force 0, an elastic one ``-K (q - q0)`` (Khalil eqs. 72-82).

It is the ABA's one pass, :func:`rne_dynamics.algorithms.aba.articulated_body`, given a mask of known accelerations
(RBDA Table 9.6): a motion column of known acceleration adds ``S_j qdd_j`` to the velocity-product term ``c_i`` of
its body, takes no part in ``D_i``, and its body passes its whole articulated inertia on where all its columns are
known. Its force comes last, ``tau_j = S_j^T f_i`` from the joint wrench ``f_i = IA_i a_i + pA_i``.
"""
import numpy as np

from .._jit import arithmetic_kernel
from ..model.memory import memory
from ..errors import StateError
from .aba import aba_workspace, articulated_body
from .crba import mass_matrix
from .driver import Algorithm
from .inputs import singular, states
from .rnea import inverse_dynamics, joint_loads

#: The results (every coordinate's acceleration and force, the joint wrenches and the base's share), then the
#: wrenches of every body and the ABA's workspace.
hybrid_memory = memory("hybrid_memory", results=dict(accelerations=("nv",), torques=("nv",), joint_wrenches=("nj", 6),
                                                     base_wrench=(6,)), f=("nb + 1", 6), aba=aba_workspace)


@arithmetic_kernel
def hybrid_step(m, w, q, qd, qdd, tau, f_ext, gravity, known):
    """Hybrid dynamics of one state (the articulated-body pass with the mask ``known``), and the joint loads. The
    results start as the given accelerations and forces, the pass writing the others."""
    for k in range(m.nv):
        if known[k]:
            w.accelerations[k] = qdd[k]
        else:
            w.torques[k] = tau[k]
    status = articulated_body(m, w.aba, known, q, qd, w.accelerations, w.torques, gravity, f_ext, w.f)
    joint_loads(m, w.f, w.joint_wrenches, w.base_wrench)
    return status


class HybridDynamicsResult(hybrid_memory.results):
    """``accelerations`` ``(…, nv)`` and ``torques`` ``(…, nv)``: every coordinate's acceleration and generalised
    force, the given ones copied; ``joint_wrenches`` ``(…, len(joint_names), 6)`` and ``base_wrench`` ``(…, 6)``
    as in :class:`~rne_dynamics.algorithms.rnea.InverseDynamicsResult` (``inverse_dynamics`` of ``accelerations``
    gives back ``torques`` and these wrenches)."""
    __slots__ = ()


def known_coordinates(robot, known_acceleration):
    """The ``known_acceleration`` argument as a boolean array ``(nv,)``: ``True`` where the acceleration is given.
    Accepts booleans per velocity coordinate, or names: a joint of ``joint_names``, the floating base's joint
    (``robot.base_joint``: its 6 coordinates) or one coordinate of ``robot.v_names``."""
    x = np.asarray(known_acceleration)
    if x.dtype == bool:
        if x.shape != (robot.nv,):
            raise StateError(f"known_acceleration has shape {x.shape}; robot '{robot.name}' needs ({robot.nv},) "
                             f"booleans, one per velocity coordinate ({', '.join(robot.v_names)})")
        # a contiguous, writable array: the one array type the compiled call takes (the step only reads it)
        return x if x.flags.c_contiguous and x.flags.writeable else np.array(x)
    if x.ndim == 0:
        x = x.reshape(1)
    if x.ndim != 1 or not all(isinstance(name, str) for name in x.tolist()):
        raise StateError("known_acceleration must be nv booleans (True: acceleration given) or a list of joint or "
                         f"coordinate names, got {known_acceleration!r}")
    known = np.zeros(robot.nv, dtype=bool)
    for name in x.tolist():
        if name in robot.idx_v:
            body = next(b for b in robot.bodies if b.joint == name and not b.mimic)
            known[body.idx_v:body.idx_v + body.nv] = True
        elif name in robot.v_names:
            known[robot.v_names.index(name)] = True
        else:
            raise StateError(f"known_acceleration: robot '{robot.name}' has no joint or velocity coordinate "
                             f"'{name}' (joints: {', '.join(robot.joint_names)}; coordinates: "
                             f"{', '.join(robot.v_names)})")
    return known


def recursive(robot, known):
    """Whether the articulated-body recursion applies: no coupled motor (its rotor inertia and friction tie several
    joints, which the per-column drive terms of the recursion do not hold) and every mimic column follows a
    coordinate of known acceleration (a mimic column of unknown acceleration couples two bodies through one
    coordinate)."""
    return not robot.coupled_motors and not any(b.mimic and not known[b.idx_v] for b in robot.bodies)


HYBRID = Algorithm(hybrid_step, hybrid_memory, ("q", "qd", "qdd", "tau"), "the accelerations and forces",
                   HybridDynamicsResult, gravity=True, wrenches=True, extras=("known",))


def hybrid_dynamics(robot, q, qd, qdd, tau, *, known_acceleration, gravity=None, external_wrenches=None, data=None,
                    drive=True):
    """Hybrid dynamics: the accelerations of the coordinates whose force is known and the forces of those whose
    acceleration is known, in one O(n) pass (Featherstone, RBDA Sec. 9.2; Khalil 2010 Sec. 6-7).

    ``known_acceleration``: ``nv`` booleans, ``True`` where the acceleration is given (in ``qdd``), ``False`` where
    the generalised force is (in ``tau``); or the names of the joints (or of coordinates of ``robot.v_names``) whose
    acceleration is given. The other entries of ``qdd`` and ``tau`` are not read, but must be finite (zeros, say).
    Everything known is an inverse-dynamics call, nothing known a forward-dynamics one. Examples: a free-floating
    base under a joint trajectory (``known_acceleration=robot.joint_names``, the base's 6 forces 0: see
    :func:`free_floating_inverse_dynamics`), a passive joint (its force 0), an elastic joint (``-K (q - q0)``).

    ``gravity``, ``external_wrenches``, drives (rotor inertia, friction; none with ``drive=False``) and the joint
    wrenches as in :func:`rne_dynamics.inverse_dynamics`: ``tau`` is the drive's torque, so friction is part of the
    balance.
    One state (``q`` ``(nq,)``, the others ``(nv,)``) or a batch ``(N, …)``, one mask for all; ``data``: a
    ``robot.data()`` to compute in. Returns a :class:`HybridDynamicsResult`. Raises
    :class:`~rne_dynamics.errors.SingularMassMatrixError` when a coordinate of known force drives no mass.

    Robots whose mimic joints follow a coordinate of known force, and robots with coupled motors
    (:attr:`Robot.coupled_motors <rne_dynamics.model.robot.Robot.coupled_motors>`), are solved as the partitioned
    system ``M_FF qdd_F = tau_F - (M qdd_K + bias)_F`` (``M`` by the CRBA, Khalil eq. 88), then inverse dynamics.
    """
    known = known_coordinates(robot, known_acceleration)
    if not recursive(robot, known):
        return partitioned(robot, known, q, qd, qdd, tau, gravity, external_wrenches, data, drive)
    return HYBRID.run(robot, data, (q, qd, qdd, tau), gravity, external_wrenches, extras=(known,), drive=drive)


def partitioned(robot, known, q, qd, qdd, tau, gravity, external_wrenches, data, drive):
    """:func:`hybrid_dynamics` by the partitioned system (Khalil eq. 83-88) with ``M`` from the CRBA and the rest
    from inverse dynamics: ``h = ID(q, qd, [qdd_K; 0])``, ``M_FF qdd_F = tau_F - h_F``, then ``ID(q, qd, qdd)``."""
    q, qd, qdd, tau = states(robot, q=q, qd=qd, qdd=qdd, tau=tau)
    free = ~known
    accelerations = np.where(known, qdd, 0.0)
    h = inverse_dynamics(robot, q, qd, accelerations, gravity=gravity, external_wrenches=external_wrenches,
                         drive=drive).torques
    M = mass_matrix(robot, q, drive=drive)[..., free[:, None] & free[None, :]].reshape(q.shape[:-1] + (free.sum(),) * 2)
    try:
        accelerations[..., free] = np.linalg.solve(M, (tau[..., free] - h[..., free])[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a coordinate that drives nothing has a zero row: name the first one
        pivots = np.diagonal(M, axis1=-2, axis2=-1).reshape(-1, M.shape[-1]).min(axis=0)
        raise singular(robot, int(np.flatnonzero(free)[np.argmin(pivots)]), "") from None
    result = inverse_dynamics(robot, q, qd, accelerations, gravity=gravity, external_wrenches=external_wrenches,
                              data=data, drive=drive)
    torques = result.torques.copy()
    torques[..., free] = tau[..., free]  # the given forces as given, not as recomputed
    return HybridDynamicsResult(accelerations, torques, result.joint_wrenches, result.base_wrench)
