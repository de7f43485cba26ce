"""rd.retime's limits between grid points (check_period), acceleration limits against the closed-form bang-bang
time, the spline through waypoints, and ``rne-dynamics retime`` (CSV and JointTrajectory YAML in, the plan layout
out, one-line errors)."""
import numpy as np
import pytest

import rne_dynamics as rd
from oracle import load_quietly, robot_path
from rne_dynamics.planning import SplinePath
from test_plan_cli import run_cli

UR5_PATH = robot_path("ur_description/urdf/ur5_robot.urdf")
WAYPOINTS = np.array([[0.0, -1.5, 1.5, -1.0, 1.2, 0.0], [0.5, -1.2, 1.2, -0.5, 1.0, 0.3],
                      [1.0, -1.0, 0.8, -0.2, 0.6, 0.8], [1.5, -0.8, 0.5, 0.0, 0.3, 1.0]])
#: A 1 kg slider on a horizontal rail: its torque limit is far away, so velocity and acceleration limits decide.
SLIDER = """<robot name="slider"><link name="rail"/>
<link name="cart"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
  </inertial></link>
<joint name="slide" type="prismatic"><parent link="rail"/><child link="cart"/><axis xyz="1 0 0"/>
  <limit lower="-5" upper="5" effort="1000" velocity="2"/></joint></robot>"""


@pytest.fixture(scope="module")
def ur5():
    return load_quietly(UR5_PATH)


def worst_share(robot, retimed, period=1e-3, acceleration=np.inf):
    """The largest |torque|, |velocity| and |acceleration| on the ``period`` grid, each as a share of its limit."""
    _, qd, qdd, tau = retimed.sample_with_torques(retimed.grid(period))
    return (np.max(np.abs(tau) / robot.effort_limits), np.max(np.abs(qd) / robot.velocity_limits),
            np.max(np.abs(qdd) / acceleration))


def test_check_period_keeps_the_limits_between_the_grid_points(ur5):
    """Collocation holds the limits at the grid points only: on the 1 ms grid the UR5's torques exceed them by
    more than 0.1% until the check lowers the limits; checked, every sample is within, and the cost in time is
    below 1%."""
    path = SplinePath(WAYPOINTS)
    plain, checked = rd.retime(ur5, path), rd.retime(ur5, path, check_period=1e-3)
    assert worst_share(ur5, plain)[0] > 1.001
    assert max(worst_share(ur5, checked)) <= 1.0
    assert max(worst_share(ur5, checked)) > 0.999  # still at a limit: time optimal
    assert plain.duration < checked.duration < 1.01 * plain.duration


def test_acceleration_limits_give_the_bang_bang_time():
    """A straight move of D = 1 m under |v| <= V = 2 m/s and |a| <= A: T = D/V + V/A when the cruise speed is
    reached (A = 8), 2 sqrt(D/A) when not (A = 2)."""
    slider = rd.load_urdf(SLIDER)
    for acceleration, expected in ((8.0, 1 / 2 + 2 / 8), (2.0, 2 * np.sqrt(1 / 2))):
        retimed = rd.retime(slider, [[0.0], [1.0]], acceleration_limits={"slide": acceleration}, stages=2000,
                            check_period=1e-3)
        assert retimed.duration == pytest.approx(expected, rel=2e-3)
        assert max(worst_share(slider, retimed, acceleration=acceleration)[1:]) <= 1.0
    with pytest.raises(rd.PlanningError, match="leaves the position limits of 'slide' by 0.15"):  # limit 5
        rd.retime(slider, SplinePath([[0.0], [4.99], [3.0]]), check_period=1e-3)  # the spline peaks at 5.15
    with pytest.raises(rd.StateError, match="acceleration limit of 'slide' must be > 0, got -1"):
        rd.retime(slider, [[0.0], [1.0]], acceleration_limits=[-1.0])


def test_spline_path_passes_every_waypoint():
    path = SplinePath(np.vstack([WAYPOINTS[:2], WAYPOINTS[1:]]))  # a repeated waypoint counts once
    q, dq, _ = path(path.breaks)
    np.testing.assert_allclose(q, WAYPOINTS, atol=1e-12)
    assert len(path.breaks) == 4 and np.all(np.linalg.norm(dq, axis=1) > 0)  # no stop at the waypoints
    line = SplinePath(WAYPOINTS[[0, -1]])
    q, dq, ddq = line(np.linspace(0, 1, 7))
    np.testing.assert_allclose(q, WAYPOINTS[0] + np.linspace(0, 1, 7)[:, None] * (WAYPOINTS[-1] - WAYPOINTS[0]),
                               atol=1e-12)
    np.testing.assert_allclose(ddq, 0.0, atol=1e-12)
    with pytest.raises(ValueError, match="at least two different waypoints"):
        SplinePath(WAYPOINTS[[0, 0]])


def test_retime_command(ur5, tmp_path):
    """A CSV (its time column, ignored, all 0) and the same path as a JointTrajectory YAML (``ros2 topic echo``'s
    form, joints in another order) give the same trajectory.csv: the plan layout, equal to rd.retime, within the
    limits."""
    csv_path = tmp_path / "path.csv"
    np.savetxt(csv_path, np.column_stack([np.zeros(4), WAYPOINTS]), delimiter=",", comments="",
               header=",".join(["time", *ur5.joint_names]))
    order = [5, 2, 0, 1, 4, 3]
    yaml_path = tmp_path / "path.yaml"
    yaml_path.write_text("header:\n  frame_id: ''\njoint_names:\n" + "".join(f"- {ur5.joint_names[j]}\n"
                                                                            for j in order)
                         + "points:\n" + "".join("- positions:\n" + "".join(f"  - {q[j]}\n" for j in order)
                                                 + "  velocities: []\n  time_from_start:\n    sec: 0\n"
                                                 for q in WAYPOINTS) + "---\n")
    expected = rd.retime(ur5, SplinePath(WAYPOINTS), check_period=1e-3)
    times = expected.grid(2e-3)
    written = []
    for source, output in ((csv_path, tmp_path / "from_csv"), (yaml_path, tmp_path / "from_yaml")):
        code, out, err = run_cli("retime", UR5_PATH, source, "--sample-period", "0.002", "--output", output)
        assert code == 0, err
        assert f"takes {expected.duration:.4f} s" in out
        header = (output / "trajectory.csv").read_text().splitlines()[0].split(",")
        assert header == ["time"] + [f"{j}.{quantity}" for quantity in ("position", "velocity", "acceleration",
                                                                        "torque") for j in ur5.joint_names]
        written.append(np.loadtxt(output / "trajectory.csv", delimiter=",", skiprows=1))
        assert (output / "torques.png").stat().st_size > 10_000
    np.testing.assert_array_equal(written[0], written[1])
    np.testing.assert_allclose(written[0], np.column_stack([times, *expected.sample_with_torques(times)]),
                               rtol=0, atol=1e-12)
    tau = written[0][:, 19:]
    assert np.all(np.abs(tau) <= ur5.effort_limits)


def test_retime_command_errors(tmp_path):
    weak = tmp_path / "weak.urdf"
    weak.write_text(SLIDER.replace('xyz="1 0 0"', 'xyz="0 0 1"').replace('effort="1000"', 'effort="5"'))
    # 1 kg lifted along z by at most 5 N: impossible
    path = tmp_path / "path.csv"
    path.write_text("time,slide\n0,0\n1,1\n")
    code, _, err = run_cli("retime", weak, path, "--output", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1
    assert "rne-dynamics retime: error: no timing: retime: no speed along the path at s = " in err
    bad = tmp_path / "bad.yaml"
    bad.write_text("joint_names: [slide]\npoints:\n- positions: [0.0, 1.0]\n")
    code, _, err = run_cli("retime", weak, bad)
    assert code == 2 and "point 0: expected 1 finite positions, got [0.0, 1.0]" in err
    code, _, err = run_cli("retime", weak, tmp_path / "missing.csv")
    assert code == 2 and "missing.csv: no such file" in err
