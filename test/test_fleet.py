"""A fleet's recordings through Dask: ``loads`` and ``identify --links`` on several recordings (a directory, a glob)
run one task per recording on a local cluster of 2 processes, or on an existing cluster (``--scheduler``), and give
the numbers of one process: loads.csv's columns, and its numbers to their 10 written digits (a process's first calls
may run on the generic kernel before its robot's C is in: the two engines agree to rounding, not to the bit), the
identification to 1e-12; the fleet summary's peaks, RMS and joints nearest their limits equal to inverse dynamics
computed here; a bad recording refused in one line naming it; one recording imports no Dask. UR5 recordings simulated
with friction (test_identify_links)."""
import csv
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml

import rne_dynamics as rd
from rne_dynamics.algorithms.identification import FourierTrajectory
from rne_dynamics.tools import loads
from rne_dynamics.tools.loads import read_motion, recording_names
from test_cli import run_cli
from test_identify_links import UR5, setup, uneven, write_csv  # noqa: F401 (setup: the module's fixture)
from test_robot_identification import COULOMB_VELOCITY

AMPLITUDES = (0.2, 0.35, 0.5)   # the third recording moves fastest: nearest the velocity limits


def read_table(path):
    """A CSV file of numbers as ``(header, array)``."""
    with open(path) as stream:
        header = stream.readline().strip().split(",")
    return header, np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)


@pytest.fixture(scope="module")
def cluster():
    """A Dask cluster of 2 worker processes, as a user's existing one: ``(client, scheduler address)``."""
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local, \
            Client(local) as client:
        yield client, local.scheduler_address


@pytest.fixture(scope="module")
def fleet(setup, tmp_path_factory):  # noqa: F811
    """Three recordings with every derivative and efforts, in a directory: ``(directory, paths, arrays)``."""
    robot, true, _ = setup
    directory = tmp_path_factory.mktemp("fleet")
    paths, arrays = [], []
    for k, amplitude in enumerate(AMPLITUDES):
        t = uneven(300 + 40 * k, seed=20 + k)
        rng = np.random.default_rng(30 + k)
        trajectory = FourierTrajectory(robot.joint_names, 10.0, np.zeros(6),
                                       *(amplitude * rng.normal(size=(2, 6, 5))))
        q, qd, qdd = trajectory.sample(t)
        tau = rd.inverse_dynamics(true, q, qd, qdd).torques
        paths.append(str(write_csv(directory / f"robot{k}.csv", robot, t, q, tau, qd, qdd)))
        arrays.append((t, q, qd, qdd, tau))
    return directory, paths, arrays


def test_loads_fleet_on_two_processes_equals_one_process_with_its_summary(setup, fleet, tmp_path,  # noqa: F811
                                                                          monkeypatch):
    robot, _, _ = setup
    directory, paths, arrays = fleet
    code, out, err = run_cli("loads", UR5, directory, "--workers", 2, "-o", tmp_path / "fleet")
    assert code == 0, err
    assert out.count("samples over") == 3 and "joints nearest their limits" in out
    for plot in ("plot_torques", "plot_wrenches"):  # one process's numbers only: its figures are 90% of its time
        monkeypatch.setattr(loads, plot, lambda *_: None)
    for path in paths:
        name = os.path.splitext(os.path.basename(path))[0]
        code, _, err = run_cli("loads", UR5, path, "-o", tmp_path / "one" / name)
        assert code == 0, err
        assert sorted(os.listdir(tmp_path / "fleet" / name)) == ["loads.csv", "torques.png", "wrenches.png"]
        fleet_table, one_table = (read_table(tmp_path / run / name / "loads.csv") for run in ("fleet", "one"))
        assert fleet_table[0] == one_table[0]
        np.testing.assert_allclose(fleet_table[1], one_table[1], rtol=2e-9, atol=1e-12)  # written to 10 digits
    # the summary: per recording and joint, peak and RMS torque of inverse dynamics along the recording
    with open(tmp_path / "fleet" / "summary.csv") as stream:
        rows = list(csv.DictReader(stream))
    assert len(rows) == 3 * 6
    shares = {}
    for k, (t, q, qd, qdd, _) in enumerate(arrays):
        tau = rd.inverse_dynamics(robot, q, qd, qdd).torques
        for j, joint in enumerate(robot.joint_names):
            row = rows[6 * k + j]
            assert (row["recording"], row["joint"], int(row["samples"])) == (f"robot{k}", joint, len(t))
            assert float(row["peak_torque"]) == pytest.approx(np.abs(tau[:, j]).max(), rel=1e-9)
            assert float(row["rms_torque"]) == pytest.approx(np.sqrt(np.mean(tau[:, j] ** 2)), rel=1e-9)
            lower, upper = robot.position_limits[j]
            shares[joint, f"robot{k}"] = {
                "effort": np.abs(tau[:, j]).max() / robot.effort_limits[j],
                "velocity": np.abs(qd[:, j]).max() / robot.velocity_limits[j],
                "position": 1 - np.minimum(q[:, j] - lower, upper - q[:, j]).min() / ((upper - lower) / 2)}
    nearest = yaml.safe_load((tmp_path / "fleet" / "summary.yaml").read_text())["nearest_limits"]
    expected = []
    for joint in robot.joint_names:
        (recording, kind), share = max((((r, kind), s) for (j, r), d in shares.items() if j == joint
                                        for kind, s in d.items()), key=lambda item: item[1])
        expected.append((joint, recording, kind, share))
    expected.sort(key=lambda e: -e[3])
    assert [(e["joint"], e["recording"], e["limit"]) for e in nearest] == [e[:3] for e in expected]
    np.testing.assert_allclose([e["share"] for e in nearest], [e[3] for e in expected], rtol=1e-12)
    assert {e["recording"] for e in nearest[:3]} == {"robot2"}  # the fastest recording is nearest its limits


def test_identify_fleet_on_a_cluster_equals_one_process(setup, fleet, cluster, tmp_path):  # noqa: F811
    robot, _, _ = setup
    directory, paths, _ = fleet
    motions = [read_motion(robot, path, window=None) for path in paths]
    # as the command fits: friction and rotor inertias
    alone = rd.identify_robot(robot, motions, coulomb_velocity=COULOMB_VELOCITY, holdout=0.2, armature=True)
    client, address = cluster
    # the library with a client: the recordings' tasks on the 2 worker processes
    distributed = rd.identify_robot(robot, motions, coulomb_velocity=COULOMB_VELOCITY, holdout=0.2, armature=True,
                                    client=client)
    for key in ("parameters", "base_values", "base_least_squares", "base_std", "rmse", "holdout_rmse"):
        np.testing.assert_allclose(getattr(distributed, key), getattr(alone, key), rtol=1e-12, atol=0)
    assert distributed.condition_number == pytest.approx(alone.condition_number, rel=1e-12)
    # the command on the existing cluster, the recordings named by a glob
    code, out, err = run_cli("identify", UR5, str(directory / "robot*.csv"), "--links", "--friction",
                             "--coulomb-velocity", COULOMB_VELOCITY, "--holdout", 0.2, "--scheduler", address,
                             "-o", tmp_path / "out")
    assert code == 0, err
    assert out.count("samples over") == 3
    document = yaml.safe_load((tmp_path / "out" / "identified.yaml").read_text())
    expected = alone.as_dict()
    np.testing.assert_allclose([p["value"] for p in document["base_parameters"]],
                               [p["value"] for p in expected["base_parameters"]], rtol=1e-12)
    for joint in robot.joint_names:
        for term in ("viscous", "coulomb", "offset"):
            assert document["friction"][joint][term] == pytest.approx(expected["friction"][joint][term], rel=1e-12)
        assert document["holdout_rmse"][joint] == pytest.approx(expected["holdout_rmse"][joint], rel=1e-12)
    assert document["samples"] == alone.samples and document["holdout_samples"] == alone.holdout_samples


def test_a_bad_recording_in_a_fleet_is_refused_in_one_line(setup, fleet, cluster, tmp_path):  # noqa: F811
    robot, _, _ = setup
    _, paths, (t, q, qd, qdd, tau) = fleet[0], fleet[1], fleet[2][0]
    bad = write_csv(tmp_path / "bad.csv", robot, t[::-1], q, tau, qd, qdd)
    _, address = cluster
    for command in (("loads",), ("identify", "--links")):
        code, _, err = run_cli(command[0], UR5, *paths[:2], bad, *command[1:], "--scheduler", address,
                               "-o", tmp_path / "x")
        assert code == 2, err
        assert len(err.strip().splitlines()) == 1 and "bad.csv: time does not increase" in err, err


def test_recording_names_are_unique_directories():
    assert recording_names(["/a/x/run.csv", "/a/y/run.csv"]) == ["x__run", "y__run"]
    assert recording_names(["/a/run.csv", "/a/run.mcap", "/a/b.db3"]) == ["run.csv", "run.mcap", "b"]


def test_one_recording_starts_no_cluster(fleet, tmp_path):
    """A single recording runs in the command's process: Dask is not even imported."""
    _, paths, _ = fleet
    script = ("import sys; from rne_dynamics.tools import cli; "
              f"code = cli.main(['loads', {UR5!r}, {paths[0]!r}, '-o', {str(tmp_path)!r}]); "
              "print(code, 'distributed' in sys.modules, 'dask' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert done.stdout.splitlines()[-1] == "0 False False", done.stderr
    assert sorted(os.listdir(tmp_path)) == ["loads.csv", "torques.png", "wrenches.png"]
