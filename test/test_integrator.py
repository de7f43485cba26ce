"""The one integrator on the joints' manifold (RKMK4, ``algorithms/integrator.py``) is of order 4 for each of its three
users, ``simulate``, ``flexible_simulate`` and ``simulate_closed_loop``, on a free-flyer and on a spherical joint:
halving the step divides the error by 16. The error ratio is Richardson's, ``|x(dt) ⊖ x(dt/2)| / |x(dt/2) ⊖
x(dt/4)|`` at the final time (``⊖`` on the manifold for ``q``), with no reference solution. Freezing the stages in the
tangent space at ``q_n`` (the RK4 that ``flexible_simulate`` and ``simulate_closed_loop`` had) measured 4.7, 4.1 and
4.0 on these cases: order 2. Loop closures need a fixed base, so ``simulate_closed_loop`` runs on the Gough-Stewart
platform's spherical joint only."""
import warnings

import numpy as np
import pytest

import rne_dynamics as rd
from test_configuration_sim import CHAIN, inertial, joint

ZERO_GRAVITY = np.zeros(3)

#: A spherical pendulum with a link on a hinge below it (the hinge takes the elastic drive).
PENDULUM = ('<robot name="ball"><link name="ceiling"/><link name="bob">'
            + inertial(1.5, "0.05 0.02 -0.3", (0.02, 0.03, 0.01)) + '</link><link name="tip">'
            + inertial(0.5, "0.1 0 0", (0.01, 0.02, 0.02)) + '</link>'
            + joint("ball", "spherical", "ceiling", "bob", xyz="0 0 0")
            + joint("hinge", "continuous", "bob", "tip", "0 1 0", xyz="0 0 -0.4") + '</robot>')


def tumbling():
    """``(robot, q0, v0, gravity)``: the free-flying torso and arm of test_configuration_sim, tumbling (5.4 rad/s
    off its principal axes) in zero gravity."""
    robot = rd.load_urdf(CHAIN, floating_base=True)
    q0 = rd.normalize(robot, np.array([0.3, -0.2, 0.5, 0.1, 0.2, -0.3, 0.9, 0.4]))
    return robot, q0, np.array([0.3, -0.2, 0.5, 2.0, -3.0, 4.0, 2.0]), ZERO_GRAVITY


def swinging():
    """``(robot, q0, v0, gravity)``: the spherical pendulum swinging and spinning in gravity."""
    robot = rd.load_urdf(PENDULUM)
    q0 = np.r_[rd.normalize(robot, [0.2, -0.1, 0.3, 0.9, 0.0])[:4], 0.3]
    return robot, q0, np.array([1.5, -2.0, 3.0, 1.0]), None


CASES = {"free-flyer": tumbling, "spherical": swinging}


def error_ratio(robot, final, dts):
    """Richardson's error ratio of ``final(dt)`` (a tuple: ``q``, then vectors) for ``dt`` and ``dt / 2`` against
    ``dt / 2`` and ``dt / 4``."""
    finals = [final(dt) for dt in dts]
    steps = [np.linalg.norm(np.concatenate([rd.difference(robot, a[0], b[0])] + [x - y for x, y in zip(a[1:], b[1:])]))
             for a, b in zip(finals, finals[1:])]
    return steps[0] / steps[1]


@pytest.mark.parametrize("case", CASES)
def test_simulate_is_fourth_order(case):
    """Measured: 14.8 (free-flyer), 16.1 (spherical)."""
    robot, q0, v0, gravity = CASES[case]()
    ratio = error_ratio(robot, lambda dt: (rd.simulate(robot, q0, v0, np.zeros(robot.nv), 0.5, dt,
                                                       gravity=gravity).q[-1],), (0.01, 0.005, 0.0025))
    assert 0.75 * 16 < ratio < 1.25 * 16


@pytest.mark.parametrize("case", CASES)
def test_flexible_simulate_is_fourth_order(case):
    """The last joint elastic (the motors' state integrated with the links'). Measured: 15.8 (free-flyer), 14.4
    (spherical); 4.7 and 4.1 with the stages frozen in the tangent space."""
    robot, q0, v0, gravity = CASES[case]()
    elastic = robot.joint_names[-1]
    robot = robot.with_drive(stiffness={elastic: 4.0}, motor_inertia={elastic: 1e-3}, gear_ratio={elastic: 10.0})

    def final(dt):
        motion = rd.flexible_simulate(robot, q0, v0, [q0[-1] + 0.1], [0.5], np.zeros(robot.nv), 0.5, dt,
                                      gravity=gravity)
        return motion.q[-1], motion.qd[-1], motion.theta[-1], motion.thetad[-1]

    assert 0.75 * 16 < error_ratio(robot, final, (0.01, 0.005, 0.0025)) < 1.25 * 16


@pytest.mark.parametrize("project", [True, False], ids=["projected", "free"])
def test_simulate_closed_loop_is_fourth_order(project):
    """The Gough-Stewart platform in zero gravity, every joint moving (up to 4.5 rad/s, the platform turning on its
    spherical joint), with and without the projection on the loops after each step. Measured: 15.2 and 15.7; 4.00
    and 3.99 with the stages frozen in the tangent space."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # massless ground links
        robot = rd.gough_stewart().load()
    q0 = rd.close_loops(robot, [0.05, -0.03, 0.02, 0.04, -0.02, 0.01])
    J = rd.loop_constraints(robot, q0).jacobian
    qd0 = 5.0 * np.random.default_rng(1).normal(size=robot.nv)
    qd0 -= np.linalg.pinv(J) @ (J @ qd0)  # a motion the loops allow
    ratio = error_ratio(robot, lambda dt: (rd.simulate_closed_loop(robot, q0, qd0, 0.1, dt, gravity=ZERO_GRAVITY,
                                                                   project=project).q[-1],), (0.02, 0.01, 0.005))
    assert 0.75 * 16 < ratio < 1.25 * 16
