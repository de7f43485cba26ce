"""Dynamic motion planning (rd.plan, rd.TrajectoryProblem, rd.retime): Barman's 2R minimum-time benchmark, minimum
effort, analytic gradients against central differences, the Panda with its URDF limits, retiming against toppra."""
import numpy as np
import pytest

import rne_dynamics as rd
from oracle import load_quietly, robot_path
from rne_dynamics.planning.limits import Limits, check_limits


def barman_link(name):
    """Barman (2020) Table 4.2: 0.5 kg, I = 0.1 kg m^2 at the COM, mid-link of a 0.4 m link."""
    return (f'<link name="{name}"><inertial><origin xyz="0.2 0 0"/><mass value="0.5"/>'
            f'<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>')


#: The planar 2R arm of Barman (2020) Sec. 4.1, in a horizontal plane (axes along gravity), |tau| <= 10 N m.
BARMAN_2R = f"""<robot name="barman_2r"><link name="base"/>{barman_link("link1")}{barman_link("link2")}
<joint name="joint1" type="revolute"><parent link="base"/><child link="link1"/><axis xyz="0 0 1"/>
  <limit lower="-3.14" upper="3.14" effort="10" velocity="100"/></joint>
<joint name="joint2" type="revolute"><parent link="link1"/><child link="link2"/><origin xyz="0.4 0 0"/>
  <axis xyz="0 0 1"/><limit lower="-3.14" upper="3.14" effort="10" velocity="100"/></joint></robot>"""
START, GOAL = np.array([0.0, -2.0]), np.array([1.0, -1.0])
TORQUE_TOLERANCE = 1e-3  # N m, on the 1 ms grid

PANDA_START = np.array([0.0, -0.5, 0.0, -2.0, 0.0, 1.5, 0.8, 0.02])
PANDA_GOAL = np.array([1.0, 0.3, -0.5, -1.2, 0.5, 2.0, -0.5, 0.02])


@pytest.fixture(scope="module")
def arm():
    return rd.load_urdf(BARMAN_2R)


@pytest.fixture(scope="module")
def fastest(arm):
    return rd.plan(arm, START, GOAL)


def fine(planned, period=1e-3):
    """Times, states and torques on a grid of ``period`` seconds; torques by a fresh inverse dynamics call."""
    t = planned.grid(period)
    q, qd, qdd = planned.spline.sample(t)
    return t, q, qd, qdd, rd.inverse_dynamics(planned.robot, q, qd, qdd).torques


def test_barman_2r_minimum_time(arm, fastest):
    """Barman: T = 0.392 s (literature 0.393-0.394); bang-bang torque on joint 1 (upper bound, then lower)."""
    assert 0.390 <= fastest.duration <= 0.395
    t, q, qd, qdd, tau = fine(fastest)
    assert np.diff(t).max() <= 1e-3 + 1e-12
    np.testing.assert_allclose(q[[0, -1]], [START, GOAL], atol=1e-12)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)
    assert np.abs(tau).max() <= 10.0 + TORQUE_TOLERANCE
    saturated = np.abs(tau[:, 0]) >= 0.99 * 10.0
    assert saturated.mean() >= 0.75
    sign = np.sign(tau[saturated, 0])
    assert sign[0] == 1 and sign[-1] == -1 and np.count_nonzero(np.diff(sign)) == 1  # one switch
    assert fastest.time_gap < 0.01
    assert fastest.check.worst <= 1e-4 and fastest.check.samples == len(t)


def test_an_excess_within_the_tolerance_is_rounding_not_a_violation(arm):
    """The check's report: 1.46e-13 rad/s over a 100 rad/s limit (what plan printed for the iiwa's joint 4) is at
    the limit within the solver's tolerance (1e-9 of the limit), not a violation; 1e-6 of the limit is one."""
    times, zero = np.array([0.0, 0.1]), np.zeros((2, 2))
    limits = Limits.of(arm)
    for excess, violated, words in ((1.46e-13, False, "e-13 over: rounding, within the tolerance of 1e-09 of the "
                                     "limit; 2 samples checked)"),  # 1.42e-13: 100 + 1.46e-13 in doubles
                                    (1e-4, True, "0.0001 over its limit (beyond the tolerance of 1e-09"),
                                    (-0.5, False, "0.5 within its limit (2 samples checked)")):
        qd = np.array([[0.0, 0.0], [100.0 + excess, 0.0]])
        check = check_limits(arm, limits, times, zero, qd, zero, tolerance=1e-9)
        assert check.violated is violated and (check.quantity, check.joint, check.time) == ("velocity", "joint1", 0.1)
        assert words in str(check), str(check)
        assert ("over its limit" in str(check)) is violated


def test_minimum_effort_is_lower_and_smooth(arm, fastest):
    """At the same duration, minimum effort beats the minimum-time motion (slowed down uniformly to that duration,
    still within the limits), with torques that change slowly."""
    T = 1.2 * fastest.duration
    gentle = rd.plan(arm, START, GOAL, objective="effort", duration=T)
    assert gentle.duration == T
    t, q, qd, qdd, tau = fine(gentle)
    slowed = fastest.spline.sample(t / 1.2)
    slowed_tau = rd.inverse_dynamics(arm, slowed[0], slowed[1] / 1.2, slowed[2] / 1.2 ** 2).torques
    slowed_effort = np.trapezoid(np.sum(slowed_tau ** 2, axis=1), t)
    assert gentle.effort < 0.8 * slowed_effort
    np.testing.assert_allclose(gentle.effort, np.trapezoid(np.sum(tau ** 2, axis=1), t), rtol=1e-12)
    assert np.abs(tau).max() <= 10.0 + TORQUE_TOLERANCE
    rate, fastest_rate = (np.abs(np.diff(x, axis=0)).max() / 1e-3 for x in (tau, fine(fastest)[4]))
    assert rate < 0.2 * fastest_rate

    # and at the minimum time itself, where (nearly) one motion is feasible: no worse (same spline size)
    fastest_20 = rd.plan(arm, START, GOAL, control_points=20)
    same = rd.plan(arm, START, GOAL, objective="effort", duration=fastest_20.duration, control_points=20)
    assert same.effort <= fastest_20.effort * (1 + 1e-6)


def central_differences(f, x, h=1e-6):
    columns = []
    for i in range(len(x)):
        step = np.zeros_like(x)
        step[i] = h
        columns.append((np.atleast_1d(f(x + step)) - np.atleast_1d(f(x - step))) / (2 * h))
    return np.column_stack(columns)


@pytest.mark.parametrize("fragment, start, goal", [
    ("ur_description/urdf/ur5_robot.urdf", [0.0, -1.2, 1.0, -1.0, 0.5, 0.0], [1.0, -0.6, 0.2, -0.4, -0.5, 1.0]),
    ("panda_description/urdf/panda.urdf", PANDA_START, PANDA_GOAL)])
@pytest.mark.parametrize("options", [
    {},                                                                # minimum time, free T
    {"objective": "effort", "duration": 0.9},                          # fixed T
    {"objective": "mixed", "effort_weight": 0.3, "start_velocity": 0.1, "goal_acceleration": 0.5, "via": "mid"},
    {"degree": 5, "start_acceleration": -0.2, "goal_velocity": -0.1},  # quintic, free T
], ids=["time", "effort", "mixed-via-boundary", "quintic"])
def test_gradients_against_central_differences(fragment, start, goal, options):
    """Every function of the program (objective, inequalities, via equalities) against central differences, at a
    perturbed warm start: 1e-6 relative to the largest entry."""
    robot = load_quietly(robot_path(fragment))
    start, goal, options = np.array(start), np.array(goal), dict(options)
    if options.get("via") == "mid":
        options["via"] = [(start + goal) / 2 + 0.01]
    for key in ("start_velocity", "goal_velocity", "start_acceleration", "goal_acceleration"):
        if key in options:
            options[key] = np.full(robot.nv, options[key])
    problem = rd.TrajectoryProblem(robot, start, goal, control_points=9, **options)
    x = problem.initial_guess()
    x = x + 1e-2 * np.random.default_rng(0).standard_normal(x.shape)
    pairs = [(problem.objective, problem.objective_gradient), (problem.constraints, problem.constraints_jacobian)]
    if "via" in options:
        pairs.append((problem.equalities, problem.equalities_jacobian))
    for f, gradient in pairs:
        analytic, numeric = np.atleast_2d(gradient(x)), central_differences(f, x)
        assert analytic.shape == numeric.shape
        assert np.abs(analytic - numeric).max() <= 1e-6 * np.abs(analytic).max(), f.__name__


def test_panda_minimum_time_with_urdf_limits():
    """Converges; positions, velocities and torques within the URDF limits on a 0.5 ms grid; the duration is no
    shorter than the slowest joint at its velocity limit and no longer than the retimed straight line."""
    panda = load_quietly(robot_path("panda_description/urdf/panda.urdf"))
    planned = rd.plan(panda, PANDA_START, PANDA_GOAL, control_points=20)
    t, q, qd, qdd, tau = fine(planned, 5e-4)
    lower, upper = panda.position_limits.T
    assert ((q >= lower - 1e-12) & (q <= upper + 1e-12)).all()
    assert (np.abs(qd) <= panda.velocity_limits * (1 + 1e-9)).all()
    assert (np.abs(tau) <= panda.effort_limits * (1 + 1e-4)).all()
    np.testing.assert_allclose(q[[0, -1]], [PANDA_START, PANDA_GOAL], atol=1e-12)
    assert planned.duration >= np.max(np.abs(PANDA_GOAL - PANDA_START) / panda.velocity_limits)
    assert planned.duration < rd.retime(panda, [PANDA_START, PANDA_GOAL]).duration
    assert 0.45 < planned.duration < 0.55  # 0.518 s with 20 control points (0.504 s with 64)


def test_free_path_is_not_slower_than_the_retimed_straight_line(arm, fastest):
    line = rd.retime(arm, [START, GOAL])
    assert fastest.duration <= line.duration
    assert line.duration == pytest.approx(0.4233, abs=1e-4)


@pytest.mark.parametrize("case", ["2r-line", "ur5-line", "ur5-curve"])
def test_retiming_equals_toppra(arm, case):
    """Same path, same torque limits, same grid: the same duration within 1% (1e-6 measured)."""
    ta = pytest.importorskip("toppra")
    from scipy.interpolate import CubicSpline
    if case == "2r-line":
        robot, waypoints = arm, np.array([START, GOAL])
    else:
        robot = load_quietly(robot_path("ur_description/urdf/ur5_robot.urdf"))
        waypoints = np.array([[0.0, -1.2, 1.0, -1.0, 0.5, 0.0], [0.5, -0.9, 0.4, -0.6, 0.0, 0.4],
                              [1.0, -0.6, 0.2, -0.4, -0.5, 1.0]])[::(2 if case == "ur5-line" else 1)]
    spline = CubicSpline(np.linspace(0, 1, len(waypoints)), waypoints, bc_type="natural")
    ours = rd.retime(robot, lambda s: (spline(s), spline(s, 1), spline(s, 2)), stages=500, velocity_limits=np.full(
        robot.nv, np.inf))
    torque = ta.constraint.JointTorqueConstraint(
        lambda q, qd, qdd: rd.inverse_dynamics(robot, q, qd, qdd).torques,
        np.column_stack([-robot.effort_limits, robot.effort_limits]), np.zeros(robot.nv))
    path = ta.SplineInterpolator(np.linspace(0, 1, len(waypoints)), waypoints, bc_type="natural")
    theirs = ta.algorithm.TOPPRA([torque], path, gridpoints=np.linspace(0, 1, 501), solver_wrapper="seidel")
    trajectory = theirs.compute_trajectory(0, 0)
    assert trajectory is not None
    assert ours.duration == pytest.approx(trajectory.duration, rel=0.01)
    assert ours.duration == pytest.approx(trajectory.duration, rel=1e-4)


def test_retimed_motion_is_consistent(arm):
    """The retimed straight line: exact ends, at rest there, torques at the grid points within the limits and
    joint 1 or 2 on its limit (time-optimal: some constraint is always active)."""
    retimed = rd.retime(arm, [START, GOAL], stages=400)
    q, qd, qdd = retimed.sample(retimed.t)
    np.testing.assert_allclose(q[[0, -1]], [START, GOAL], atol=1e-12)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)
    tau = rd.inverse_dynamics(arm, q[:-1], qd[:-1], retimed.sample(retimed.t[:-1] + 1e-12)[2]).torques
    assert np.abs(tau).max() <= 10 * (1 + 1e-6)
    assert (np.abs(tau).max(axis=1) >= 10 * (1 - 1e-3)).mean() > 0.95


def test_bad_requests(arm):
    with pytest.raises(rd.StateError, match="goal: joint 'joint1' at 4 is outside its limits"):
        rd.plan(arm, START, [4.0, 0.0])
    with pytest.raises(rd.StateError, match="needs a duration"):
        rd.TrajectoryProblem(arm, START, GOAL, objective="effort")
    with pytest.raises(rd.StateError, match="expected 2 values"):
        rd.TrajectoryProblem(arm, START, [1.0])
    with pytest.raises(rd.ModelError, match="nq 9 != nv 8"):  # a floating base: not joint space
        rd.TrajectoryProblem(rd.load_urdf(BARMAN_2R, floating_base=True), np.zeros(9), np.zeros(9))
    ur5 = load_quietly(robot_path("ur_description/urdf/ur5_robot.urdf"))
    with pytest.raises(rd.PlanningError, match="limit"):  # 1 N m cannot hold the arm against gravity
        rd.plan(ur5, np.zeros(6), np.full(6, 0.5), effort_limits=np.ones(6), control_points=8, max_iterations=50)
