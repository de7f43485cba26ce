"""``rne-dynamics plan``: Barman's 2R from the command line (trajectory.csv exact and within the limits, readable by
``loads``, figures), minimum effort over a given duration, and one-line errors."""
import contextlib
import io
import os

import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.tools import cli
from test_planning import BARMAN_2R

PENDULUM = """<robot name="pendulum"><link name="base"/>
<link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="1"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
  <limit lower="-3" upper="3" effort="1" velocity="5"/></joint></robot>"""


def run_cli(*argv):
    """``(exit code, stdout, stderr)`` of ``cli.main(argv)``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def error_lines(stderr):
    """The lines of ``stderr`` that are not the solver's progress (``plan: 16 control points: iteration ...``)."""
    return [line for line in stderr.splitlines() if not (line.startswith("plan: ") and ": iteration " in line)]


@pytest.fixture(scope="module")
def urdfs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robots")
    paths = {}
    for name, text in (("barman_2r", BARMAN_2R), ("pendulum", PENDULUM)):
        paths[name] = folder / f"{name}.urdf"
        paths[name].write_text(text)
    return paths


def read_trajectory(path, robot):
    with open(path) as stream:
        header = stream.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1)
    columns = {name: table[:, k] for k, name in enumerate(header)}
    return header, columns["time"], [np.column_stack([columns[f"{j}.{quantity}"] for j in robot.joint_names])
                                      for quantity in ("position", "velocity", "acceleration", "torque")]


def test_minimum_time_2r(urdfs, tmp_path):
    out = tmp_path / "plan"
    code, stdout, stderr = run_cli("plan", urdfs["barman_2r"], "--from", "0,-2", "--to", "1,-1", "--output", out)
    assert code == 0, stderr
    robot = rd.load_urdf(str(urdfs["barman_2r"]))
    header, t, (q, qd, qdd, tau) = read_trajectory(out / "trajectory.csv", robot)
    assert header == ["time"] + [f"{j}.{x}" for x in ("position", "velocity", "acceleration", "torque")
                                 for j in ("joint1", "joint2")]
    assert t[0] == 0 and 0.390 <= t[-1] <= 0.395 and np.diff(t).max() <= 1e-3 + 1e-12
    assert f"motion of {t[-1]:.4f} s" in stdout
    # the progress (not a terminal: a line at each solve's first iteration) says which refinement it is in
    firsts = [line.split("  T =")[0] for line in stderr.splitlines() if "iteration    1 " in line]
    assert firsts[:2] == ["plan: 16 control points: iteration    1", "plan: 32 control points: iteration    1"], stderr
    np.testing.assert_allclose(q[[0, -1]], [[0, -2], [1, -1]], atol=1e-12)
    np.testing.assert_allclose(tau, rd.inverse_dynamics(robot, q, qd, qdd).torques, rtol=0, atol=1e-9)
    assert np.abs(tau).max() <= 10.0
    # velocities and accelerations are the derivatives of the positions: per step, the cubic Hermite rule (exact
    # for the piecewise cubic q up to the steps holding a knot) and the trapezoid rule for the piecewise linear qdd
    h = np.diff(t)[:, None]
    hermite = np.abs(np.diff(q, axis=0) - h / 2 * (qd[1:] + qd[:-1]) - h ** 2 / 12 * (qdd[:-1] - qdd[1:]))
    trapezoid = np.abs(np.diff(qd, axis=0) - h / 2 * (qdd[1:] + qdd[:-1]))
    exact = (hermite.max(axis=1) < 1e-12) & (trapezoid.max(axis=1) < 1e-9)
    assert exact.mean() > 0.9 and hermite.max() < 1e-6 and trapezoid.max() < 1e-2
    for name in ("positions.png", "torques.png", "convergence.png"):
        assert (out / name).stat().st_size > 10_000
    # the layout loads reads: the same torques, none over the limit
    code, stdout, stderr = run_cli("loads", urdfs["barman_2r"], out / "trajectory.csv", "--output", tmp_path / "l")
    assert code == 0, stderr
    assert "OVER" not in stdout
    loads = np.loadtxt(tmp_path / "l" / "loads.csv", delimiter=",", skiprows=1)
    np.testing.assert_allclose(loads[:, 7:9], tau, atol=1e-6)


def test_minimum_effort_over_a_duration(urdfs, tmp_path):
    code, stdout, stderr = run_cli("plan", urdfs["barman_2r"], "--from", "0,-2", "--to", "1,-1", "--objective",
                                   "effort", "--duration", "0.5", "--sample-period", "0.002", "--output", tmp_path)
    assert code == 0, stderr
    robot = rd.load_urdf(str(urdfs["barman_2r"]))
    _, t, (q, qd, qdd, tau) = read_trajectory(tmp_path / "trajectory.csv", robot)
    assert t[-1] == pytest.approx(0.5, abs=1e-12) and np.diff(t).max() <= 2e-3 + 1e-12
    assert np.abs(tau).max() <= 10.0


@pytest.mark.parametrize("argv, message", [
    (("--from", "0,-2", "--to", "4,-1"), "goal: joint 'joint1' at 4 is outside its limits [-3.14, 3.14]"),
    (("--from", "0,-2,0", "--to", "1,-1"), "--from: 3 values for the 2 joints of 'barman_2r' (joint1, joint2)"),
    (("--from", "0,-2", "--to", "1,-1", "--objective", "effort"), "--objective effort needs --duration"),
])
def test_bad_requests_give_one_line(urdfs, tmp_path, argv, message):
    code, stdout, stderr = run_cli("plan", urdfs["barman_2r"], *argv, "--output", tmp_path)
    assert code == 2 and message in stderr and len(error_lines(stderr)) == 1 and "Traceback" not in stderr
    assert not os.listdir(tmp_path)


def test_infeasible_limits_give_a_reason(urdfs, tmp_path):
    """A 1 kg pendulum 0.5 m out needs 4.9 N m against gravity; its motor has 1 N m."""
    code, stdout, stderr = run_cli("plan", urdfs["pendulum"], "--from", "0", "--to", "1", "--output", tmp_path)
    [error] = error_lines(stderr)  # one line after the solver's progress
    assert code == 2 and "rne-dynamics plan: error: no plan:" in error
    assert "the 1 effort limit of 'hinge' cannot hold the start against gravity, 4.91 needed" in stderr
    assert not os.listdir(tmp_path)
