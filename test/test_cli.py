"""The ``rne-dynamics`` command line: inspect, loads (CSV and rosbag2 inputs, outputs equal to the library's, figure
sizes), benchmark, and one-line errors on bad input. Run in-process through ``cli.main``, once as a subprocess."""
import contextlib
import importlib.util
import io
import os
import struct
import subprocess
import sys

import numpy as np
import pytest
from rosbags.rosbag2 import StoragePlugin

import rne_dynamics as rd
from rne_dynamics.tools import benchmark, cli, live_demo, loads
from rne_dynamics.robots import DEFAULT_ROBOT

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(REPO, "examples")
MOTION_CSV = os.path.join(EXAMPLES, "arm6_motion.csv")
MOTION_BAG = os.path.join(EXAMPLES, "arm6_motion_bag")
QUANTITIES = ("position", "velocity", "acceleration", "torque", "gravity_torque", "force_norm", "moment_norm",
              "force_x", "force_y", "force_z", "moment_x", "moment_y", "moment_z")


def load_example_module(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(EXAMPLES, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_example_bag = load_example_module("make_example_bag")
make_example_motion = load_example_module("make_example_motion")


def run_cli(*argv):
    """``(exit code, stdout, stderr)`` of ``cli.main(argv)``."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def read_loads(directory):
    """``{column: values}`` of ``directory/loads.csv``."""
    path = os.path.join(directory, "loads.csv")
    with open(path, encoding="utf-8") as stream:
        header = stream.readline().strip().split(",")
    table = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
    return {name: table[:, k] for k, name in enumerate(header)}


def joint_columns(table, robot, quantity):
    return np.column_stack([table[f"{joint}.{quantity}"] for joint in robot.joint_names])


def png_size(path):
    """``(width, height)`` from a PNG's IHDR chunk."""
    with open(path, "rb") as stream:
        head = stream.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


@pytest.fixture(scope="module")
def robot():
    return rd.load_urdf(DEFAULT_ROBOT)


@pytest.fixture(scope="module")
def csv_run(tmp_path_factory):
    """The loads command on the example CSV: ``(exit code, stdout, stderr, output dir)``."""
    output = tmp_path_factory.mktemp("csv_loads")
    return (*run_cli("loads", DEFAULT_ROBOT, MOTION_CSV, "--output", output), output)


def write_csv(path, header, rows):
    with open(path, "w", encoding="utf-8") as stream:
        stream.write(",".join(header) + "\n")
        for row in rows:
            stream.write(",".join(str(x) for x in row) + "\n")
    return path


# --- loads: outputs ---------------------------------------------------------------------------------------------

def test_loads_succeeds_with_summary(csv_run, robot):
    code, out, err, _ = csv_run
    assert code == 0, err
    assert "401 samples over 4.000 s" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split() and
            line.split()[0] in robot.joint_names}
    assert set(rows) == set(robot.joint_names)
    assert rows["shoulder_lift_joint"][3] == "150.0"      # the effort limit column


def test_loads_csv_columns_and_values_equal_the_library(csv_run, robot):
    _, _, _, output = csv_run
    table = read_loads(output)
    assert list(table) == ["time"] + [f"{j}.{q}" for q in QUANTITIES for j in robot.joint_names]
    given = np.loadtxt(MOTION_CSV, delimiter=",", skiprows=1)
    assert len(table["time"]) == len(given) == 401
    np.testing.assert_allclose(table["time"], given[:, 0], rtol=0, atol=1e-12)
    q = joint_columns(table, robot, "position")
    qd = joint_columns(table, robot, "velocity")
    qdd = joint_columns(table, robot, "acceleration")
    np.testing.assert_allclose(q, given[:, 1:7], rtol=0, atol=1e-12)     # the CSV's positions and velocities, as given
    np.testing.assert_allclose(qd, given[:, 7:13], rtol=0, atol=1e-12)
    expected = rd.inverse_dynamics(robot, q, qd, qdd)
    rest = np.zeros_like(q)
    for quantity, values in (("torque", expected.torques),
                             ("gravity_torque", rd.inverse_dynamics(robot, q, rest, rest).torques),
                             ("force_norm", np.linalg.norm(expected.joint_wrenches[..., :3], axis=-1)),
                             ("moment_norm", np.linalg.norm(expected.joint_wrenches[..., 3:], axis=-1)),
                             *((name, expected.joint_wrenches[..., k]) for k, name in enumerate(QUANTITIES[7:]))):
        np.testing.assert_allclose(joint_columns(table, robot, quantity), values, rtol=1e-8, atol=1e-8,
                                   err_msg=quantity)


def test_loads_differentiated_accelerations_match_the_planned_motion(csv_run, robot):
    """The example is minimum-jerk moves with known accelerations. The local cubic fits recover them to the CSV's
    6 decimals except within half a window of a move's start or end, where the jerk jumps and the fit rounds it."""
    table = read_loads(csv_run[3])
    t = table["time"]
    exact = np.zeros((len(t), robot.dof))
    near_jerk_jump = np.zeros(len(t), bool)
    pose = np.array(make_example_motion.START)
    for start, duration, target in make_example_motion.MOVES:
        s = np.clip((t - start) / duration, 0, 1)
        exact += np.outer((60 * s - 180 * s**2 + 120 * s**3) / duration**2, np.array(target) - pose)
        pose = np.array(target)
        near_jerk_jump |= (np.abs(t - start) < 0.06) | (np.abs(t - start - duration) < 0.06)
    peak = np.abs(exact).max(axis=0)
    error = np.abs(joint_columns(table, robot, "acceleration") - exact)
    assert np.all(error[~near_jerk_jump].max(axis=0) < 1e-4 * peak), error[~near_jerk_jump].max(axis=0)
    assert np.all(error.max(axis=0) < 0.12 * peak), error.max(axis=0)


def test_loads_pngs_have_the_expected_size(csv_run, robot):
    output = csv_run[3]
    assert png_size(os.path.join(output, "torques.png")) == loads.torques_figure_size(robot.dof) == (1200, 860)
    assert png_size(os.path.join(output, "wrenches.png")) == (1200, 700)


def test_rosbag2_and_csv_give_the_same_numbers(csv_run, tmp_path):
    reference = read_loads(csv_run[3])
    mcap_file = os.path.join(MOTION_BAG, "arm6_motion_bag.mcap")
    time, names, positions, velocities = make_example_bag.read_csv(MOTION_CSV)
    db3_bag = tmp_path / "sqlite_bag"
    make_example_bag.write_joint_states_bag(db3_bag, time, names, positions, velocities,
                                            storage=StoragePlugin.SQLITE3)
    for k, motion in enumerate((MOTION_BAG, mcap_file, db3_bag / "sqlite_bag.db3")):
        code, out, err = run_cli("loads", DEFAULT_ROBOT, motion, "-o", tmp_path / f"out{k}")
        assert code == 0, err
        table = read_loads(tmp_path / f"out{k}")
        assert list(table) == list(reference)
        for name in reference:
            np.testing.assert_allclose(table[name], reference[name], rtol=1e-9, atol=1e-9, err_msg=name)


def test_positions_only_csv_and_bag_agree_and_velocities_are_differentiated(tmp_path, robot):
    """Without velocity columns both inputs differentiate the positions, the same way; bag joint order and extra
    joints do not matter."""
    time, names, positions, velocities = make_example_bag.read_csv(MOTION_CSV)
    csv_path = write_csv(tmp_path / "positions.csv", ["time"] + names, np.column_stack([time, positions]))
    order = [2, 0, 1, 5, 4, 3]
    make_example_bag.write_joint_states_bag(tmp_path / "bag", time, [names[k] for k in order] + ["gripper_joint"],
                                            np.column_stack([positions[:, order], np.ones(len(time))]),
                                            topic="/arm/joint_states")
    assert run_cli("loads", DEFAULT_ROBOT, csv_path, "-o", tmp_path / "a")[0] == 0
    code, _, err = run_cli("loads", DEFAULT_ROBOT, tmp_path / "bag", "-o", tmp_path / "b", "--topic",
                           "/arm/joint_states")
    assert code == 0, err
    from_csv, from_bag = read_loads(tmp_path / "a"), read_loads(tmp_path / "b")
    for name in from_csv:
        np.testing.assert_allclose(from_bag[name], from_csv[name], rtol=1e-9, atol=1e-9, err_msg=name)
    qd = joint_columns(from_csv, robot, "velocity")
    assert np.abs(qd - velocities).max() < 0.01 * np.abs(velocities).max()


def test_given_accelerations_are_used_as_given(tmp_path, robot):
    """All derivatives given (columns in any order, ``.position`` suffix, a spreadsheet's byte-order mark): no
    differentiation, the torques are the library's for exactly these states."""
    t = np.linspace(0, 1, 6)
    amplitude = np.arange(1, 7) * 0.1
    q, qd = np.outer(np.sin(t), amplitude), np.outer(np.cos(t), amplitude)
    qdd = -q
    header = ["time"] + [f"{j}.{kind}" for kind in ("position", "velocity", "acceleration") for j in robot.joint_names]
    path = write_csv(tmp_path / "full.csv", header[::-1], np.column_stack([t, q, qd, qdd])[:, ::-1])
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    code, out, err = run_cli("loads", DEFAULT_ROBOT, path, "-o", tmp_path / "out")
    assert code == 0, err
    assert "differentiated" not in out
    table = read_loads(tmp_path / "out")
    np.testing.assert_allclose(joint_columns(table, robot, "torque"), rd.inverse_dynamics(robot, q, qd, qdd).torques,
                               rtol=1e-8, atol=1e-8)


def test_smooth_derivatives_exact_for_cubics_on_uneven_times():
    t = np.cumsum(np.random.default_rng(1).uniform(0.005, 0.015, 300))
    y = np.column_stack([1 - 2 * t + 0.5 * t**2 - 0.3 * t**3, 3 * t**3])
    qd, qdd = loads.smooth_derivatives(t, y, 11)
    np.testing.assert_allclose(qd, np.column_stack([-2 + t - 0.9 * t**2, 9 * t**2]), rtol=0, atol=1e-7)
    np.testing.assert_allclose(qdd, np.column_stack([1 - 1.8 * t, 18 * t]), rtol=0, atol=1e-6)


@pytest.mark.parametrize("window, samples, velocity_error, acceleration_error", [(0.02, 21, 0.03, 3.0),
                                                                                (0.1, 101, 0.005, 0.06)])
def test_smooth_derivatives_window_averages_noise(window, samples, velocity_error, acceleration_error):
    """sin(2t) at 1 kHz with 0.1 mrad of position noise: the 0.1 s default window keeps the acceleration within 6%
    of its amplitude where a 20 ms one is swamped by noise."""
    t = np.arange(5001) / 1000
    y = (np.sin(2 * t) + 1e-4 * np.random.default_rng(0).standard_normal(len(t)))[:, None]
    assert loads.window_samples(t, window) == samples
    qd, qdd = loads.smooth_derivatives(t, y, samples)
    assert np.abs(qd[:, 0] - 2 * np.cos(2 * t)).max() / 2 < velocity_error
    acceleration = np.abs(qdd[:, 0] + 4 * np.sin(2 * t)).max() / 4
    assert acceleration < acceleration_error and (acceleration > 1.0) == (window < 0.1)


def test_a_gap_in_a_recording_is_not_differentiated_across(tmp_path, robot):
    """Positions at 100 Hz of sin(2 t) on every joint with 1.5 s missing (a paused recording, a driver's dropout):
    velocities and accelerations are fitted on each side of the gap alone. Fits across it joined the two sides
    (main: loads' acceleration 2.49 rad/s^2 off at the samples next to the gap, 62% of its amplitude, the velocity
    0.064 rad/s; now 0.006 and 6e-5, as at a recording's ends)."""
    t = np.concatenate([np.arange(300), np.arange(450, 800)]) / 100
    header = ["time"] + list(robot.joint_names)
    path = write_csv(tmp_path / "gap.csv", header, [[x] + [np.sin(2 * x)] * robot.dof for x in t])
    code, _, err = run_cli("loads", DEFAULT_ROBOT, path, "-o", tmp_path / "out")
    assert code == 0, err
    table = read_loads(tmp_path / "out")
    velocity, acceleration = (joint_columns(table, robot, quantity) for quantity in ("velocity", "acceleration"))
    assert np.abs(velocity - 2 * np.cos(2 * t)[:, None]).max() < 1e-4 * 2
    assert np.abs(acceleration + 4 * np.sin(2 * t)[:, None]).max() < 2e-3 * 4


def test_a_continuous_joint_wrapped_by_its_driver_is_differentiated_unwrapped(tmp_path):
    """A driver that reports a continuous joint's angle in [-pi, pi): the pendulum's 'spin' turning at 1.5 rad/s
    jumps by 2 pi at each turn. Its velocity is 1.5 and its acceleration 0 at every sample (main differentiated
    the jumps: velocities up to 162 rad/s off, accelerations up to 8,788 rad/s^2, near each wrap); the positions
    written stay the recording's."""
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM.format(lower=-1.0, effort=5.0), encoding="utf-8")
    t = np.arange(500) / 100
    wrapped = (1.5 * t + 3.0 + np.pi) % (2 * np.pi) - np.pi
    path = write_csv(tmp_path / "spin.csv", ["time", "swing", "spin"], zip(t, 0.3 * np.sin(t), wrapped))
    code, _, err = run_cli("loads", urdf, path, "-o", tmp_path / "out")
    assert code == 0, err
    table = read_loads(tmp_path / "out")
    np.testing.assert_allclose(table["spin.velocity"], 1.5, atol=1e-9)
    np.testing.assert_allclose(table["spin.acceleration"], 0.0, atol=1e-7)
    np.testing.assert_allclose(table["spin.position"], wrapped, atol=1e-9)


def test_progress_bar_on_long_inputs(tmp_path, monkeypatch):
    monkeypatch.setattr(loads, "LONG_INPUT", 100)
    code, _, err = run_cli("loads", DEFAULT_ROBOT, MOTION_BAG, "-o", tmp_path)
    assert code == 0
    assert "reading /joint_states" in err and "inverse dynamics" in err and "100%" in err


def test_exceedances_are_reported(tmp_path, robot):
    """With a 100 N m shoulder limit the example's fast lift goes over it: flagged, with the time above the limit."""
    with open(DEFAULT_ROBOT, encoding="utf-8") as stream:
        text = stream.read()
    lowered = text.replace('effort="150"', 'effort="100"', 2)
    urdf = tmp_path / "low.urdf"
    urdf.write_text(lowered, encoding="utf-8")
    code, out, _ = run_cli("loads", urdf, MOTION_CSV, "-o", tmp_path / "out")
    assert code == 0
    table = read_loads(tmp_path / "out")
    over = np.abs(table["shoulder_lift_joint.torque"]) > 100
    assert over.any() and not (np.abs(table["shoulder_pan_joint.torque"]) > 100).any()
    line = next(line for line in out.splitlines() if line.startswith("shoulder_lift_joint"))
    assert line.endswith("OVER") and f"{over.sum() * 0.01:.2f}" in line.split()
    assert not next(line for line in out.splitlines() if line.startswith("elbow_joint")).endswith("OVER")


# --- loads: bad input -------------------------------------------------------------------------------------------

def bad_motions(tmp_path, robot):
    names = list(robot.joint_names)
    rows = np.column_stack([np.arange(20) * 0.01, np.zeros((20, 6))])
    nan_rows = rows.astype(object)
    nan_rows[7, 3] = "nan"
    back_in_time = rows.copy()
    back_in_time[5, 0] = 0.01
    make_example_bag.write_joint_states_bag(tmp_path / "other_topic_bag", rows[:, 0], names, rows[:, 1:],
                                            topic="/robot/joint_states")
    make_example_bag.write_joint_states_bag(tmp_path / "broken_metadata", rows[:, 0], names, rows[:, 1:])
    (tmp_path / "broken_metadata" / "metadata.yaml").write_text("rosbag2_bagfile_information: {version: 9\n")
    return {
        "missing file": (tmp_path / "nowhere.csv", "no such file"),
        "no time column": (write_csv(tmp_path / "h.csv", ["t"] + names, rows), "no 'time' column"),
        "unknown joint": (write_csv(tmp_path / "u.csv", ["time"] + names[:5] + ["knee_joint"], rows),
                          "'knee_joint' names no movable joint"),
        "missing joint": (write_csv(tmp_path / "m.csv", ["time"] + names[:5], rows[:, :6]), "wrist_3_joint"),
        "NaN": (write_csv(tmp_path / "n.csv", ["time"] + names, nan_rows), "line 9, column 'elbow_joint'"),
        "not a number": (write_csv(tmp_path / "x.csv", ["time"] + names, [["0"] + ["abc"] * 6]), "'abc'"),
        "time not increasing": (write_csv(tmp_path / "b.csv", ["time"] + names, back_in_time),
                                "time does not increase at sample 5"),
        "too short": (write_csv(tmp_path / "s.csv", ["time"] + names, rows[:4]), "4 samples"),
        "bag without the topic": (tmp_path / "other_topic_bag", "no topic '/joint_states'"),
        "bag with broken metadata": (tmp_path / "broken_metadata", "cannot read the rosbag2 (Could not load YAML "),
    }


@pytest.mark.parametrize("case", ["missing file", "no time column", "unknown joint", "missing joint", "NaN",
                                  "not a number", "time not increasing", "too short", "bag without the topic",
                                  "bag with broken metadata"])  # main: the YAML error's 7 lines
def test_bad_motion_is_a_one_line_error(case, tmp_path, robot):
    path, phrase = bad_motions(tmp_path, robot)[case]
    code, out, err = run_cli("loads", DEFAULT_ROBOT, path, "-o", tmp_path / "out")
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("rne-dynamics loads: error: "), err
    assert phrase in err
    assert not os.path.exists(tmp_path / "out" / "loads.csv")


def test_binary_file_as_csv_is_a_one_line_error(tmp_path):
    path = tmp_path / "motion.csv"
    path.write_bytes(bytes(range(256)) * 4)
    code, _, err = run_cli("loads", DEFAULT_ROBOT, path, "-o", tmp_path / "out")
    assert code == 2 and err.count("\n") == 1 and "not a text CSV" in err


@pytest.mark.parametrize("command", ["loads", "inspect"])
def test_bad_urdf_is_a_one_line_error(command, tmp_path):
    urdf = tmp_path / "broken.urdf"
    urdf.write_text("<robot name='r'><link name='a'/><joint name='j' type='revolute'>", encoding="utf-8")
    code, _, err = run_cli(command, urdf, *([MOTION_CSV] if command == "loads" else []))
    assert code == 2
    assert err.count("\n") == 1 and err.startswith(f"rne-dynamics {command}: error: ") and "not well-formed" in err
    code, _, err = run_cli(command, tmp_path / "missing.urdf", *([MOTION_CSV] if command == "loads" else []))
    assert code == 2 and err.count("\n") == 1 and "cannot read the URDF" in err


# --- inspect ----------------------------------------------------------------------------------------------------

PENDULUM = """<robot name="pendulum">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0.5 0 0"/><mass value="2"/>
    <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <link name="tip"/>
  <joint name="swing" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="{lower}" upper="1.0" effort="{effort}" velocity="2"/></joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="tip"/><axis xyz="1 0 0"/></joint>
</robot>"""


@pytest.mark.parametrize("lower, effort", [(-1.0, 5.0), (0.5, 20.0)])
def test_inspect_pendulum_closed_form(lower, effort, tmp_path):
    """A 2 kg mass 0.5 m from a horizontal axis: the largest gravity torque over [lower, 1] rad is
    m g l cos(q) at the q nearest 0; a massless continuous joint with no effort limit is warned about."""
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM.format(lower=lower, effort=effort), encoding="utf-8")
    code, out, err = run_cli("inspect", urdf)
    assert code == 0 and err == ""
    peak = 2 * 9.81 * 0.5 * np.cos(max(lower, 0.0))
    row = next(line.split() for line in out.splitlines() if line.startswith("swing ") and "%" in line)
    assert float(row[1]) == pytest.approx(peak, abs=0.006)
    assert row[7] == f"{100 * peak / effort:.0f}%"
    assert ("EXCEEDS" in out) == (peak > effort)
    assert "joint 'spin' moves no mass" in out and "joint 'spin' has no effort limit" in out
    assert "`-- swing (revolute, axis (0 1 0), limits" in out and "-> arm" in out
    body = next(line.split() for line in out.splitlines() if line.startswith("swing") and "arm" in line.split())
    assert body[2:7] == ["2.000", "(", "0.500", "0.000", "0.000)"]
    assert "total moving mass 2.000 kg" in out


def test_inspect_bundled_arm(robot):
    code, out, err = run_cli("inspect", DEFAULT_ROBOT)
    assert code == 0 and err == ""
    for joint in robot.joint_names:
        assert f"`-- {joint} (revolute" in out
    assert "`-- tool_flange_joint (fixed) -> tool_flange" in out
    assert "wrist_3_link+tool_flange" in out             # the flange is lumped into the last body
    assert f"moving mass {robot.total_mass:.3f} kg" in out and "warnings (0)" in out
    envelope = {line.split()[0]: float(line.split()[1]) for line in out.splitlines()
                if line.split() and line.split()[0] in robot.joint_names and "%" in line}
    q = np.zeros(robot.dof)
    lift = abs(rd.inverse_dynamics(robot, q, q, q).torques[1])   # arm stretched horizontally
    assert 0.98 * lift <= envelope["shoulder_lift_joint"] <= 1.02 * lift
    assert envelope["shoulder_pan_joint"] < 1e-9                  # vertical axis: gravity never loads it


# --- benchmark and the module entry point -----------------------------------------------------------------------

def test_benchmark_runs_the_suite_main_with_the_arguments(tmp_path, monkeypatch):
    script = tmp_path / "bench_dynamics.py"
    script.write_text("def main(argv):\n    print('suite', argv)\n    return 0\n", encoding="utf-8")
    monkeypatch.setattr(benchmark, "SCRIPT", str(script))
    assert run_cli("benchmark", "--quick")[:2] == (0, "suite ['--quick']\n")
    monkeypatch.setattr(benchmark, "SCRIPT", str(tmp_path / "absent.py"))
    code, _, err = run_cli("benchmark")
    assert code == 2 and err.count("\n") == 1 and "source checkout" in err


def test_python_dash_m_entry_point(tmp_path):
    result = subprocess.run([sys.executable, "-m", "rne_dynamics", "loads", DEFAULT_ROBOT, MOTION_BAG,
                             "--output", str(tmp_path)], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert "shoulder_lift_joint" in result.stdout and "Traceback" not in result.stderr
    assert png_size(tmp_path / "torques.png") == (1200, 860)


def test_unknown_options_are_refused_except_for_the_benchmark(tmp_path):
    with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(io.StringIO()) as err:
        cli.main(["loads", DEFAULT_ROBOT, MOTION_CSV, "-o", str(tmp_path), "--bogus"])
    assert exit_info.value.code == 2 and "unrecognized arguments: --bogus" in err.getvalue()
    assert not os.path.exists(tmp_path / "loads.csv")


@pytest.mark.parametrize("argv, message", [
    (["live", "--rate", "nan"], "argument --rate: nan is not finite"),
    (["live", "--duration", "-1"], "argument --duration: -1.0 is below 0.001"),
    (["loads", DEFAULT_ROBOT, MOTION_CSV, "--window", "inf"], "argument --window: inf is not finite"),
])
def test_a_number_option_that_is_not_finite_or_too_small_is_refused(argv, message):
    """Number options are refused when NaN or infinite (``float`` takes both), by the parser, before any work; the
    ``live`` command's and ``python -m rne_dynamics.tools.live_demo``'s are the same options."""
    for parse in (cli.main, *([live_demo.main] if argv[0] == "live" else [])):
        with pytest.raises(SystemExit) as exit_info, contextlib.redirect_stderr(io.StringIO()) as err:
            parse(argv if parse is cli.main else argv[1:])
        assert exit_info.value.code == 2 and err.getvalue().strip().endswith(message), err.getvalue()
