"""The tree's kinematics that the loop constraints read (:mod:`~rne_dynamics.algorithms.loops`), in one call: every
body's world pose, velocity and velocity-product acceleration (at zero ``qdd``), and every motion column in the world
(:func:`~rne_dynamics.algorithms.kinematics.world_motion`, RBDA Sec. 2.9). One compiled call (the robot's written
code) instead of a pose, a Jacobian and an acceleration call per cut link: the closures' terms are then a few array
operations over all closures at once.

A module of its own: the loops' Python (``loops.py``) imports no kernel decorator, so its edits recompile nothing.
"""
from .._jit import helper, memory
from .driver import Algorithm
from .kinematics import world_motion

#: World pose ``(oR, op)``, velocity ``ov`` and acceleration ``oa`` (spatial, at the world origin, world axes; row
#: ``-1`` the fixed base: identity, at rest) of every body, the motion columns ``oS`` in the world, a zero ``qdd``.
body_motions_memory = memory("body_motions_memory", results=dict(oR=("nb + 1", 3, 3), op=("nb + 1", 3),
                                                                 ov=("nb + 1", 6), oa=("nb + 1", 6), oS=("ncol", 6)),
                             zero=("nv",))


@helper
def body_motions_step(m, w, q, qd):
    """Every body's world pose, velocity and its acceleration at zero ``qdd`` (``oa_i = sum ov_i x oS_c v_c``), and
    the world motion columns."""
    world_motion(m, w, q, qd, w.zero)


BODY_MOTIONS = Algorithm(body_motions_step, body_motions_memory, ("q", "qd"), "the bodies' motion",
                         body_motions_memory.results)
