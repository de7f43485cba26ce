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


from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from ..errors import ModelError, StateError
from ..model.joints import X_up
from ..model.spatial import (add_scaled, cross, cross_motion_add, inertia_times, motion_shift, motion_to_child,
                             motion_to_parent, pose_compose, rigid_inertia_to_parent, rotate, set_at_rest,
                             set_identity, rigid_inertia_add)
from .driver import Algorithm

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


#: The kinematics arrays: per body and a world row last (index ``-1``: identity pose, at rest), the world pose
#: ``(oR, op)``, velocity ``ov``, acceleration ``oa`` and a (composite) rigid inertia in the world ``mass_c, h_c,
#: I_c``; a link's world pose ``(fR, fp)``; two 6-vectors ``x``, ``y``; per motion column the world-frame ``oS``; a
#: zero velocity ``(nv,)`` for the calls given none.
kinematics_workspace = memory("kinematics_workspace", oR=("nb + 1", 3, 3), op=("nb + 1", 3), ov=("nb + 1", 6),
                              oa=("nb + 1", 6), mass_c=("nb + 1",), h_c=("nb + 1", 3), I_c=("nb + 1", 3, 3),
                              fR=(3, 3), fp=(3,), x=(6,), y=(6,), oS=("ncol", 6), zero=("nv",))


@helper
def world_motion(m, w, q, v, a):
    """Every body's world pose, and its velocity and acceleration for ``v`` and ``a`` (zero: ``w.zero``); the world
    row at rest with the identity pose."""
    set_identity(w.oR[-1], w.op[-1])
    set_at_rest(w.ov[-1], w.oa[-1])
    w.zero[:] = 0.0
    world_poses(m, q, w.oR, w.op)
    world_columns(m, w.oR, w.op, w.oS)
    world_velocities(m, w.oS, v, w.ov)
    world_accelerations(m, w.oS, v, a, w.ov, w.oa)


@helper
def link_pose(m, w, link):
    """Link ``link``'s world pose ``(fR, fp) = oX_body (R_l, p_l)`` (the world row's identity for body ``-1``)."""
    pose_compose(w.oR[m.link_body[link]], w.op[m.link_body[link]], m.link_R[link], m.link_p[link], w.fR, w.fp)


# --- placements of links ----------------------------------------------------------------------------------------

@helper
def link_placement(m, w, link, T):
    """Link ``link``'s world pose as a homogeneous matrix ``T`` ``(4, 4)``, from the world poses in ``w``."""
    link_pose(m, w, link)
    for r in range(3):
        for c in range(3):
            T[r, c] = w.fR[r, c]
        T[r, 3] = w.fp[r]
        T[3, r] = 0.0
    T[3, 3] = 1.0


placements_memory = memory("placements_memory", results=dict(poses=("nl", 4, 4)), kinematics=kinematics_workspace)


@arithmetic_kernel
def placements_step(m, w, q):
    """Every link's world pose, ``w.poses[l]`` ``(4, 4)``."""
    world_poses(m, q, w.kinematics.oR, w.kinematics.op)
    set_identity(w.kinematics.oR[-1], w.kinematics.op[-1])
    for link in range(m.nl):
        link_placement(m, w.kinematics, link, w.poses[link])


placement_memory = memory("placement_memory", results=dict(pose=(4, 4)), kinematics=kinematics_workspace)


@arithmetic_kernel
def placement_step(m, w, q, link):
    """Link ``link``'s world pose ``w.pose`` ``(4, 4)``."""
    world_poses(m, q, w.kinematics.oR, w.kinematics.op)
    set_identity(w.kinematics.oR[-1], w.kinematics.op[-1])
    link_placement(m, w.kinematics, link, w.pose)


# --- a link's Jacobian --------------------------------------------------------------------------------------------

jacobian_memory = memory("jacobian_memory", results=dict(J=(6, "nv")), kinematics=kinematics_workspace)


@arithmetic_kernel
def jacobian_step(m, w, q, link, reference):
    """The Jacobian ``J`` ``(6, nv)`` of link ``link`` in ``reference``: the columns of its body and of every
    ancestor (its support), each ``oS_c`` expressed for the link frame and added, times ``col_mult``, into its
    coordinate's column; the other columns are zero."""
    k, J = w.kinematics, w.J
    world_poses(m, q, k.oR, k.op)
    set_identity(k.oR[-1], k.op[-1])
    link_pose(m, k, link)
    J[:] = 0.0
    j = m.link_body[link]
    while j >= 0:
        for c in range(m.col_start[j], m.col_start[j + 1]):
            motion_to_parent(k.oR[j], k.op[j], m.S[c], k.x)
            express(reference, k.fR, k.fp, k.x, k.y)
            for r in range(6):
                J[r, m.col_v[c]] += m.col_mult[c] * k.y[r]
        j = m.parent[j]


# --- a link's velocity and acceleration ---------------------------------------------------------------------------

motion_memory = memory("motion_memory", results=dict(velocity=(6,), acceleration=(6,)),
                       kinematics=kinematics_workspace)


@arithmetic_kernel
def link_motion(m, w, q, v, a, link, reference, classical):
    """The velocity ``w.velocity`` and acceleration ``w.acceleration`` (6 each) of link ``link`` in ``reference``:
    its body's world-frame motion (:func:`world_velocities`, :func:`world_accelerations`) expressed for the link frame.
    ``classical``: the linear part is the classical acceleration of the reference point, ``a_lin + w x v_lin``
    (pin.getFrameClassicalAcceleration); for ``local`` and ``local_world_aligned``, the link origin's
    ``d^2 p / dt^2`` in link or world axes."""
    k, out_v, out_a = w.kinematics, w.velocity, w.acceleration
    world_motion(m, k, q, v, a)
    body = m.link_body[link]
    link_pose(m, k, link)
    express(reference, k.fR, k.fp, k.ov[body], out_v)
    express(reference, k.fR, k.fp, k.oa[body], out_a)
    if classical:
        c0, c1, c2 = cross(out_v[3], out_v[4], out_v[5], out_v[0], out_v[1], out_v[2])
        out_a[0] += c0
        out_a[1] += c1
        out_a[2] += c2


@arithmetic_kernel
def velocity_step(m, w, q, v, link, reference):
    link_motion(m, w, q, v, w.kinematics.zero, link, reference, False)


# --- centre of mass -------------------------------------------------------------------------------------------------

com_memory = memory("com_memory", results=dict(position=(3,), velocity=(3,), acceleration=(3,)),
                    kinematics=kinematics_workspace)


@arithmetic_kernel
def com_step(m, w, q, v, a):
    """The centre of mass's ``position``, ``velocity`` and ``acceleration`` in the world, from each body's first
    moment in the world ``oh_i = oR_i h_i + m_i op_i`` (``m_i`` times its COM ``c_i``) and its world-frame motion
    ``ov_i = [v_o; w]``, ``oa_i = [a_o; α]``:

        M c = sum oh_i,   M dc = sum (m_i v_o + w x oh_i),
        M ddc = sum (m_i a_o + α x oh_i + w x (m_i v_o + w x oh_i))

    (the COM point's velocity ``v_o + w x c_i`` and classical acceleration ``a_o + α x c_i + w x (v_o + w x c_i)``).
    """
    k, position, velocity, acceleration = w.kinematics, w.position, w.velocity, w.acceleration
    world_motion(m, k, q, v, a)
    position[:] = 0.0
    velocity[:] = 0.0
    acceleration[:] = 0.0
    mass = 0.0
    for i in range(m.nb):
        mass += m.mass[i]
        h = rotate(k.oR[i], m.h[i, 0], m.h[i, 1], m.h[i, 2])
        h = (h[0] + m.mass[i] * k.op[i, 0], h[1] + m.mass[i] * k.op[i, 1], h[2] + m.mass[i] * k.op[i, 2])
        V, A = k.ov[i], k.oa[i]
        wh = cross(V[3], V[4], V[5], h[0], h[1], h[2])
        mv = (m.mass[i] * V[0] + wh[0], m.mass[i] * V[1] + wh[1], m.mass[i] * V[2] + wh[2])
        αh = cross(A[3], A[4], A[5], h[0], h[1], h[2])
        wmv = cross(V[3], V[4], V[5], mv[0], mv[1], mv[2])
        for r in range(3):
            position[r] += h[r]
            velocity[r] += mv[r]
            acceleration[r] += m.mass[i] * A[r] + αh[r] + wmv[r]
    for r in range(3):
        position[r] /= mass
        velocity[r] /= mass
        acceleration[r] /= mass


@arithmetic_kernel
def com_position_step(m, w, q):
    com_step(m, w, q, w.kinematics.zero, w.kinematics.zero)


@arithmetic_kernel
def com_velocity_step(m, w, q, v):
    com_step(m, w, q, v, w.kinematics.zero)


# --- centroidal momentum ------------------------------------------------------------------------------------------

@helper
def moment_about(G, f0, f1, f2):
    """``G x f``: what the moment of a force (momentum) ``f`` through the world origin loses when taken about the
    point ``G`` instead (RBDA eq. 2.25 with ``R = 1``: ``n_G = n_o - G x f``)."""
    return cross(G[0], G[1], G[2], f0, f1, f2)


centroidal_memory = memory("centroidal_memory", results=dict(h_G=(6,), A_G=(6, "nv")),
                           kinematics=kinematics_workspace)


@arithmetic_kernel
def centroidal_step(m, w, q, v):
    """The centroidal momentum ``h_G`` (6) and its matrix ``A_G`` ``(6, nv)``,
    ``h_G = A_G v`` (Orin, Goswami and Lee, Auton. Robots 2013, eq. 15-22), world axes, angular about the centre of
    mass ``G``:

        h_o = sum_i oI_i ov_i                               (each body's momentum, world frame)
        A_o[:, k] = oIc_i oS_c  for the columns c of body i  (oIc_i: the composite inertia of i's subtree, as CRBA)
    then both are moved from the world origin to ``G = sum oh_i / sum m_i``: ``n -= G x f``. Column ``c`` adds into
    ``k = col_v[c]``, scaled by ``col_mult[c]``.
    """
    k, h_G, A_G = w.kinematics, w.h_G, w.A_G
    mass_c, h_c, I_c = k.mass_c, k.h_c, k.I_c
    world_motion(m, k, q, v, k.zero)
    h_G[:] = 0.0
    mass_c[-1] = 0.0  # the world row gathers the whole robot
    h_c[-1] = 0.0
    I_c[-1] = 0.0
    for i in range(m.nb):
        mass_c[i] = m.mass[i]
        rigid_inertia_to_parent(k.oR[i], k.op[i], m.mass[i], m.h[i], m.I[i], h_c[i], I_c[i])
        inertia_times(mass_c[i], h_c[i], I_c[i], k.ov[i], k.x)
        add_scaled(h_G, 1.0, k.x)
    A_G[:] = 0.0
    for i in range(m.nb - 1, -1, -1):  # children have larger indices: Ic_i is complete here
        λ = m.parent[i]
        rigid_inertia_add(mass_c, h_c, I_c, i, λ)
        for c in range(m.col_start[i], m.col_start[i + 1]):
            inertia_times(mass_c[i], h_c[i], I_c[i], k.oS[c], k.x)
            for r in range(6):
                A_G[r, m.col_v[c]] += m.col_mult[c] * k.x[r]
    M = mass_c[-1]
    G = (h_c[-1, 0] / M, h_c[-1, 1] / M, h_c[-1, 2] / M)
    n = moment_about(G, h_G[0], h_G[1], h_G[2])
    for r in range(3):
        h_G[3 + r] -= n[r]
    for c in range(m.nv):
        n = moment_about(G, A_G[0, c], A_G[1, c], A_G[2, c])
        for r in range(3):
            A_G[3 + r, c] -= n[r]


@arithmetic_kernel
def centroidal_matrix_step(m, w, q):
    centroidal_step(m, w, q, w.kinematics.zero)


PLACEMENTS = Algorithm(placements_step, placements_memory, ("q",), "the link poses")
PLACEMENT = Algorithm(placement_step, placement_memory, ("q",), "the link pose", extras=("link",))
JACOBIAN = Algorithm(jacobian_step, jacobian_memory, ("q",), "the Jacobian entries", extras=("link", "reference"))
VELOCITY = Algorithm(velocity_step, motion_memory, ("q", "v"), "the link's velocity", extras=("link", "reference"))
ACCELERATION = Algorithm(link_motion, motion_memory, ("q", "v", "a"), "the link's acceleration",
                         lambda velocity, acceleration: acceleration, extras=("link", "reference", "classical"))
COM_POSITION = Algorithm(com_position_step, com_memory, ("q",), "the centre of mass coordinates")
COM_VELOCITY = Algorithm(com_velocity_step, com_memory, ("q", "v"), "the centre of mass coordinates",
                         lambda position, velocity, _: CenterOfMass(position, velocity, None))
COM_ACCELERATION = Algorithm(com_step, com_memory, ("q", "v", "a"), "the centre of mass coordinates",
                             lambda *motion: CenterOfMass(*motion))
MOMENTUM = Algorithm(centroidal_step, centroidal_memory, ("q", "v"), "the centroidal momentum entries")
MOMENTUM_MATRIX = Algorithm(centroidal_matrix_step, centroidal_memory, ("q",), "the centroidal momentum entries",
                            lambda h_G, A_G: A_G)


# --- public functions ---------------------------------------------------------------------------------------------

def _link(robot, link):
    """The row of ``link`` in ``robot.link_names``; a clear error for an unknown link."""
    k = robot.link_index.get(link) if isinstance(link, str) else None
    if k is None:
        raise StateError(f"robot '{robot.name}' has no link '{link}'; its links are {', '.join(robot.link_names)}")
    return k


def _reference(reference):
    try:
        return REFERENCES[reference]
    except (KeyError, TypeError):
        raise StateError(f"reference must be one of {', '.join(repr(r) for r in REFERENCES)}, got {reference!r}") \
            from None


def _with_mass(robot):
    if robot.total_mass <= 0.0:
        raise ModelError(f"robot '{robot.name}': its moving bodies have no mass, so no centre of mass")


def forward_kinematics(robot, q, *, data=None):
    """Every link's pose in the world as homogeneous matrices ``(…, n_links, 4, 4)``, in ``robot.link_names``
    order (``pin.framesForwardKinematics``, ``data.oMf``). The world is the fixed base's frame (the root link's for
    a fixed base); links fixed to it have their constant pose. One state ``q`` ``(nq,)`` or a batch ``(N, nq)``;
    ``data``: a ``robot.data()`` to compute in."""
    return PLACEMENTS.run(robot, data, (q,))


def frame_placement(robot, q, link, *, data=None):
    """The pose of ``link`` in the world, a homogeneous matrix ``(…, 4, 4)`` (as :func:`forward_kinematics`);
    ``data``: a ``robot.data()`` to compute in."""
    return PLACEMENT.run(robot, data, (q,), extras=(_link(robot, link),))


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
    return JACOBIAN.run(robot, data, (q,), extras=(_link(robot, link), _reference(reference)))


def frame_velocity(robot, q, v, link, reference="local_world_aligned", *, data=None):
    """The velocity of ``link`` ``(…, 6)``, ``[linear; angular]`` in ``reference`` (as :func:`frame_jacobian`;
    ``pin.getFrameVelocity``), for the configuration ``q`` and velocity ``v``; ``data``: a ``robot.data()`` to
    compute in."""
    return VELOCITY.run(robot, data, (q, v), extras=(_link(robot, link), _reference(reference)))


def frame_acceleration(robot, q, v, a, link, reference="local_world_aligned", classical=True, *, data=None):
    """The acceleration of ``link`` ``(…, 6)`` in ``reference`` for ``q``, ``v`` and the acceleration ``a`` (no
    gravity: kinematics). ``classical=True`` (default): the linear part is the classical acceleration of the
    link origin, ``d^2 p / dt^2`` in world (``local_world_aligned``) or link (``local``) axes
    (``pin.getFrameClassicalAcceleration``); ``False``: the spatial acceleration (``pin.getFrameAcceleration``).
    The angular part is the angular acceleration either way. ``data``: a ``robot.data()`` to compute in."""
    return ACCELERATION.run(robot, data, (q, v, a), extras=(_link(robot, link), _reference(reference), bool(classical)))


class CenterOfMass(com_memory.results):
    """The centre of mass in the world (m), its velocity (m/s) and acceleration (m/s^2), each ``(…, 3)``;
    ``acceleration`` is ``None`` when no acceleration was given."""
    __slots__ = ()


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
    _with_mass(robot)
    if v is None:
        return COM_POSITION.run(robot, data, (q,))
    if a is None:
        return COM_VELOCITY.run(robot, data, (q, v))
    return COM_ACCELERATION.run(robot, data, (q, v, a))


def centroidal_momentum(robot, q, v, *, data=None):
    """The centroidal momentum ``(…, 6)``: ``[linear; angular]`` momentum of the moving bodies, the angular about
    the centre of mass (:func:`center_of_mass`), world axes (``pin.computeCentroidalMomentum(...).vector``, kg m/s
    and kg m^2/s). One state or a batch of ``q`` ``(nq,)`` and ``v`` ``(nv,)``; ``data``: a ``robot.data()`` to
    compute in."""
    _with_mass(robot)
    return MOMENTUM.run(robot, data, (q, v))


def centroidal_momentum_matrix(robot, q, *, data=None):
    """The centroidal momentum matrix ``A_G`` ``(…, 6, nv)``: ``A_G v`` is :func:`centroidal_momentum`
    (``pin.computeCentroidalMap``, ``data.Ag`` of ``pin.ccrba``); ``data``: a ``robot.data()`` to compute in."""
    _with_mass(robot)
    return MOMENTUM_MATRIX.run(robot, data, (q,))
