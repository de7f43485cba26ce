"""The one integrator on the joints' manifold: classical fourth-order Runge-Kutta as a Runge-Kutta-Munthe-Kaas method
(RKMK; Munthe-Kaas, BIT 38 (1998) 92-111; Iserles, Munthe-Kaas, Norsett & Zanna, Acta Numerica 9 (2000)). It steps
:func:`~rne_dynamics.simulate` (compiled, with forward dynamics at each stage),
:func:`~rne_dynamics.simulate_closed_loop` (the constrained dynamics) and :func:`~rne_dynamics.flexible_simulate`
(the motor-link model).

The state is ``(q, x)``: ``q`` (``nq``) on the joints' Lie group, moving with the child-frame velocity ``v =
x[:nv]`` (right-trivialised: ``dq/dt = q v``, ``q(t + dt) ≈ q(t) ⊕ v dt``, see
:func:`~rne_dynamics.model.configuration.integrate_configuration`), and ``x`` a vector: ``v`` first, then any other
states (the motors' positions and velocities), ``dx/dt = f(t, q, x)``. With ``c = (0, 1/2, 1/2, 1)`` and ``b = (1, 2,
2, 1) / 6``, stage ``s`` evaluates ``f_s`` at ``(q ⊕ u_s, x + c_s dt f_{s-1})``, ``u_s = c_s dt K_{s-1}``, and takes
``K_s = dexp^-1_{-u_s}(v_s)`` (the stage velocity as the rate of the stage's tangent coordinates, the series
truncated after ``[u, [u, v]] / 12``; ``K_1 = v_1``); the step is ``q ⊕ dt sum b_s K_s``, ``x + dt sum b_s f_s``.

Order 4 on every joint type: halving ``dt`` divides the error by 14.4 to 16.1 on a tumbling free-flyer and on a
spherical joint, for each of the three users (``test/test_integrator.py``; loops need a fixed base, so
``simulate_closed_loop`` has the spherical joint only). Freezing the stages in the tangent space at ``q_n`` (``K_s =
v_s``, no ``dexp^-1``) is only of order 2 there (ratios 4.0 to 4.7): it misses the ``dt^3 [v, dv/dt] / 12`` of the
Magnus expansion. On one-coordinate joints both are the classical RK4.
"""
import numpy as np

from .._compile import called_from_python
from .._jit import arithmetic_kernel, helper
from ..model.memory import memory
from ..model.configuration import dexp_inverse, integrate_configuration
from ..model.buffers import model_view_inline

#: Classical RK4's nodes ``c`` and weights ``b``.
NODES = (0.0, 0.5, 0.5, 1.0)
WEIGHTS = (1.0 / 6.0, 1.0 / 3.0, 1.0 / 3.0, 1.0 / 6.0)
STAGES = 4

#: A stage's point ``q`` (``nq``) and ``x`` (``n``), its tangent coordinates ``u`` and rate ``K``, the step's tangent
#: increment (``nv`` each).
stages_workspace = memory("stages_workspace", parameters=("n",), q=("nq",), x=("n",), u=("nv",), K=("nv",),
                          increment=("nv",))


@helper
def rkmk4_stage(m, q, x, s, dt, f, w, q_next, x_next):
    """Stage ``s`` (0 to 3) of the step from ``(q, x)``, given its rate ``f`` (``dx/dt`` at its point: ``(q, x)``
    for ``s = 0``, else ``(w.q, w.x)`` as the previous stage left them): adds ``b_s K_s`` and ``b_s f_s`` to the
    step's sums (``w.increment``, ``x_next``), then writes stage ``s + 1``'s point into ``(w.q, w.x)``, or after
    the last stage the step's end ``q_next`` (``x_next`` is then complete)."""
    n = x.shape[0]
    b = WEIGHTS[s] * dt
    if s == 0:  # K_1 = v_1: the step's sums start
        for k in range(m.nv):
            w.K[k] = x[k]
            w.increment[k] = b * x[k]
        for k in range(n):
            x_next[k] = x[k] + b * f[k]
    else:
        dexp_inverse(m, w.u, w.x, w.K)
        for k in range(m.nv):
            w.increment[k] += b * w.K[k]
        for k in range(n):
            x_next[k] += b * f[k]
    if s + 1 < STAGES:
        c = NODES[s + 1] * dt
        for k in range(m.nv):
            w.u[k] = c * w.K[k]
        for k in range(n):
            w.x[k] = x[k] + c * f[k]
        integrate_configuration(m, q, w.u, 1.0, w.q)
    else:
        integrate_configuration(m, q, w.increment, 1.0, q_next)


@called_from_python
@arithmetic_kernel
def stage_of_step(fdata, idata, q, x, s, dt, f, block, q_next, x_next):
    """:func:`rkmk4_stage` for Python callers, its workspace the :data:`stages_workspace` of ``block``."""
    m = model_view_inline(fdata, idata)
    w, _, _ = stages_workspace(block, m, x.shape[0])
    rkmk4_stage(m, q, x, s, dt, f, w, q_next, x_next)


def rkmk4_step(robot, q, x, rate, t, dt):
    """One step of ``dt`` seconds from ``(q, x)`` at time ``t`` (module notes): ``q`` ``(nq,)`` on the joints'
    manifold with velocity ``x[:nv]``, ``dx/dt = rate(t, q, x)`` (called at the four stages with arrays of its own).
    Returns ``(q_next, x_next)``."""
    q, x = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(x, dtype=float)
    block = np.empty(stages_workspace(None, robot, len(x))[2])
    w, _, _ = stages_workspace(block, robot, len(x))
    q_next, x_next = np.empty_like(q), np.empty_like(x)
    for s in range(STAGES):
        point = (q.copy(), x.copy()) if s == 0 else (w.q.copy(), w.x.copy())
        f = np.ascontiguousarray(rate(t + NODES[s] * dt, *point), dtype=float)
        stage_of_step(robot.fdata, robot.idata, q, x, s, dt, f, block, q_next, x_next)
    return q_next, x_next
