"""What the command line says (issue 27, item 10): ``plan``'s progress where stderr is no terminal, ``live``'s
start-up line, ``inspect``'s bodies table within the terminal width, ``JointInfo``'s repr in plain numbers,
``identify`` on a recording without a payload, the residual figure without the differentiating filter's edges, and
the missing-xacro remedy naming this Python."""
import sys

import numpy as np
import pytest

import rne_dynamics as rd
from oracle import load_quietly, robot_path
from rne_dynamics.tools.identify import residual_plot
from rne_dynamics.tools.inspect_robot import body_lines
from rne_dynamics.tools.loads import read_motion, smooth_derivatives, window_samples
from test_identification import LINK, write_csv
from test_plan_cli import run_cli
from test_planning import BARMAN_2R
from test_xacro import ARM, PATHS, one_line_error

TIAGO = robot_path("tiago_description/robots/tiago.urdf")


def test_plan_reports_progress_where_stderr_is_no_terminal(tmp_path):
    urdf = tmp_path / "barman.urdf"
    urdf.write_text(BARMAN_2R)
    code, _, err = run_cli("plan", urdf, "--from", "0,-2", "--to", "1,-1", "--output", tmp_path / "out")
    assert code == 0, err
    first = err.splitlines()[0]
    assert first.startswith("plan: 16 control points: iteration    1  T = ") and " objective " in first
    assert "violation" in first  # the refinement (its control points) named before its iterations
    assert "\r" not in err  # whole lines in a log, not a terminal's rewritten one


def test_live_says_what_it_does_at_start(capsys):
    pytest.importorskip("rclpy")
    from rne_dynamics.tools.cli import main

    assert main(["live", "--duration", "1", "--period", "1"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.endswith("(starting the nodes)") and "compile" not in first  # nothing it does not do


@pytest.mark.parametrize("columns", [140, 200])
def test_inspect_bodies_table_fits_the_terminal(columns):
    """TIAGo's base body joins 24 links (437 characters unwrapped): wrapped, every line fits and every link is
    still listed once."""
    robot = load_quietly(TIAGO)
    lines = body_lines(robot, columns)
    assert max(map(len, lines)) <= columns
    text = " ".join(lines).replace("+", " ").replace(",", " ").replace("(", " ").replace(")", " ")
    for link in robot.link_names:
        assert text.split().count(link) == 1, link


def test_inspect_command_uses_the_terminal_width(monkeypatch):
    monkeypatch.setenv("COLUMNS", "150")
    code, out, err = run_cli("inspect", TIAGO, "--samples", 10)
    assert code == 0, err
    table = out[out.index("moved by joint"):]
    table = table[:table.index("\n\n")].splitlines()
    assert len(table) > 20 and max(map(len, table)) <= 150


def test_joint_info_repr_shows_plain_numbers():
    robot = rd.load_urdf(rd.bundled_robot_path())
    text = repr(robot.joints["shoulder_pan_joint"])
    assert "axis=(0.0, 0.0, 1.0)" in text and "np.float64" not in text
    assert all("np." not in repr(joint) for joint in robot.joints.values())


@pytest.fixture(scope="module")
def arm():
    return rd.load_urdf(rd.bundled_robot_path())


def sines(arm, tmp_path, derivatives):
    """A CSV of the arm without a payload moving along sines (torques with 2% noise): positions, torques and, with
    ``derivatives``, the exact velocities and accelerations."""
    t = np.arange(0.0, 4.0, 2e-3)[:, None]
    w = 2 * np.pi * np.array([0.5, 0.7, 0.9, 1.1, 1.3, 1.7])
    q, qd, qdd = 0.5 * np.sin(w * t), 0.5 * w * np.cos(w * t), -0.5 * w ** 2 * np.sin(w * t)
    tau = rd.inverse_dynamics(arm, q, qd, qdd).torques
    tau += np.random.default_rng(3).normal(size=tau.shape) * 0.02 * np.sqrt(np.mean(tau ** 2, axis=0))
    path = tmp_path / "motion.csv"
    write_csv(path, arm, t[:, 0], q, tau, *((qd, qdd) if derivatives else ()), effort_suffix="torque")
    return path


def test_identify_without_a_payload_says_there_is_none(arm, tmp_path):
    code, out, err = run_cli("identify", rd.bundled_robot_path(), sines(arm, tmp_path, True), "--payload", LINK,
                             "--output", tmp_path / "out")
    assert code == 0, err
    [line] = [line for line in out.splitlines() if line.startswith(f"payload on '{LINK}'")]
    assert line.startswith(f"payload on '{LINK}': none found (mass ") and "2 standard deviations" in line
    assert not [line for line in out.splitlines() if line.startswith(("  com", "  inertia"))]


def test_residual_figure_leaves_out_the_filter_edges(arm, tmp_path):
    """The cubic fits that differentiate positions are one-sided within half a window of either end, where they
    amplify position noise into accelerations 6 times more than inside: the figure leaves those samples out and
    says so."""
    t = np.arange(0.0, 2.0, 2e-3)
    samples = window_samples(t, 0.1)
    edge = samples // 2
    # the filter is linear: its rows (the response to unit impulses) give each sample's noise gain exactly
    gain = np.linalg.norm(smooth_derivatives(t, np.eye(len(t)), samples)[1], axis=1)
    inside = gain[len(t) // 2]
    assert gain[0] > 5 * inside and (gain[:edge] > inside * (1 + 1e-9)).all()
    assert gain[edge] == pytest.approx(inside, rel=1e-9)  # the first sample shown is an interior one

    motion = read_motion(arm, str(sines(arm, tmp_path, False)))
    assert motion.derived == ("velocity", "acceleration")
    result = rd.identify(arm, motion.q, motion.qd, motion.qdd, motion.effort, payload=LINK)
    figure = residual_plot(arm, motion, result, edge)
    shown = figure.axes[0].lines[0].get_xdata()
    assert shown[0] == motion.time[edge] and shown[-1] == motion.time[-1 - edge]
    assert f"first and last {edge} samples not shown" in figure._suptitle.get_text()


def test_missing_xacro_names_this_python(monkeypatch):
    monkeypatch.setitem(sys.modules, "xacro", None)
    one_line_error(lambda: rd.load_urdf(ARM, package_paths=PATHS), f"({sys.executable} -m pip install xacro)")
