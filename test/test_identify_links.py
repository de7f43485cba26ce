"""``rne-dynamics identify ROBOT MOTION... --links``: recordings as real systems make them (uneven stamps, two joined
recordings, a CSV and a bare ``.db3`` without metadata.yaml, 125 Hz with velocities and accelerations
differentiated) of a simulated UR5 with friction; the files it writes: an identified.urdf whose inertials load as
physically consistent, a drive.yaml that ``loads --drive`` takes and with which the identified URDF reproduces the
simulated torques, identified.yaml, parameters.yaml for the nodes, the figures; bad recordings refused in one
line."""
import glob
import os
import re

import numpy as np
import pytest
import yaml
from rosbags.rosbag2 import StoragePlugin

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms.identification import FourierTrajectory
from rne_dynamics.tools import cli
from test_cli import make_example_bag, run_cli
from test_robot_identification import COULOMB_VELOCITY, motion, true_robot

UR5 = oracle.robot_path("ur_description/urdf/ur5_robot.urdf")


@pytest.fixture(scope="module")
def setup():
    robot = oracle.load_quietly(UR5)
    true, friction = true_robot(robot)
    return robot, true, friction


def write_csv(path, robot, t, q, tau, qd=None, qdd=None):
    columns, header = [t], ["time"]
    for j, joint in enumerate(robot.joint_names):
        for name, values in (("position", q), ("velocity", qd), ("acceleration", qdd), ("effort", tau)):
            if values is not None:
                columns.append(values[:, j])
                header.append(f"{joint}.{name}")
    with open(path, "w") as stream:
        stream.write(",".join(header) + "\n")
        np.savetxt(stream, np.column_stack(columns), delimiter=",", fmt="%.17g")
    return path


def uneven(samples, seed, period=10.0):
    """Stamps over two periods with gaps from 0.3 to 3 times the mean step."""
    steps = np.random.default_rng(seed).uniform(0.3, 3.0, samples - 1)
    return np.concatenate([[0.0], np.cumsum(steps) * 2 * period / steps.sum()])


def test_two_recordings_csv_and_bare_db3_to_urdf_and_drive_file(tmp_path, setup):
    robot, true, _ = setup
    parts = []
    for k, samples in enumerate((240, 200)):
        t = uneven(samples, seed=k)
        rng = np.random.default_rng(10 + k)
        trajectory = FourierTrajectory(robot.joint_names, 10.0, np.zeros(6), *(0.3 * rng.normal(size=(2, 6, 5))))
        q, qd, qdd = trajectory.sample(t)
        parts.append((t, q, qd, qdd, rd.inverse_dynamics(true, q, qd, qdd).torques))
    first = write_csv(tmp_path / "first.csv", robot, parts[0][0], parts[0][1], parts[0][4], parts[0][2], parts[0][3])
    t, q, qd, qdd, tau = parts[1]
    make_example_bag.write_joint_states_bag(tmp_path / "second", t, list(robot.joint_names), q, qd, efforts=tau,
                                            storage=StoragePlugin.SQLITE3)
    os.remove(tmp_path / "second" / "metadata.yaml")
    # a bag keeps no acceleration: the second recording's are differentiated, so give the CSV's only to compare
    code, out, err = run_cli("identify", UR5, first, tmp_path / "second" / "second.db3", "--links", "--friction",
                             "--coulomb-velocity", COULOMB_VELOCITY, "--holdout", 0.1, "-o", tmp_path / "out")
    assert code == 0, err
    assert "second.db3: 200 samples" in out and "acceleration by zero-phase local cubic fits over" in out
    assert "median rate" in out and "condition number" in out
    out_dir = tmp_path / "out"
    assert sorted(os.listdir(out_dir)) == ["drive.yaml", "holdout.png", "identified.urdf", "identified.yaml",
                                           "parameters.yaml", "residuals.png"]
    identified = rd.load_urdf(str(out_dir / "identified.urdf"))  # refuses an inconsistent inertia
    driven = rd.load_drive(identified, out_dir / "drive.yaml")
    assert driven.coulomb_velocity == pytest.approx(np.full(6, COULOMB_VELOCITY))
    document = yaml.safe_load((out_dir / "identified.yaml").read_text())
    assert set(document["rmse"]) == set(robot.joint_names) and document["condition_number"] > 1
    assert len(document["base_parameters"]) == 36 and all(p["std"] > 0 for p in document["base_parameters"])
    parameters = yaml.safe_load((out_dir / "parameters.yaml").read_text())["/**"]["ros__parameters"]
    assert parameters["drive_file"] == str(out_dir.resolve() / "drive.yaml")
    assert rd.load_urdf(parameters["robot_description"]).name == robot.name
    # loads --drive with the identified files: the simulated torques of the first (exact-derivative) recording
    code, _, err = run_cli("loads", out_dir / "identified.urdf", first, "--drive", out_dir / "drive.yaml", "-o",
                           tmp_path / "loads")
    assert code == 0, err
    table = np.genfromtxt(tmp_path / "loads" / "loads.csv", delimiter=",", names=True)
    computed = np.column_stack([table[f"{j}torque"] for j in robot.joint_names])
    assert np.abs(computed - parts[0][4]).max() < 0.05 * np.abs(parts[0][4]).max()
    # and exactly the identified robot's: the URDF and drive file carry every identified number
    np.testing.assert_allclose(computed, rd.inverse_dynamics(driven, parts[0][1], parts[0][2], parts[0][3]).torques,
                               atol=1e-6)


def test_exact_recording_gives_the_true_torques_back(tmp_path, setup):
    """Every derivative in the CSV: the identified URDF and drive file reproduce the simulated torques."""
    robot, true, friction = setup
    q, qd, qdd = motion(robot, 300)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    path = write_csv(tmp_path / "m.csv", robot, uneven(300, seed=3), q, tau, qd, qdd)
    code, out, err = run_cli("identify", UR5, path, "--links", "--friction", "--coulomb-velocity", COULOMB_VELOCITY,
                             "-o", tmp_path / "out")
    assert code == 0, err
    driven = rd.load_drive(rd.load_urdf(str(tmp_path / "out" / "identified.urdf")), tmp_path / "out" / "drive.yaml")
    np.testing.assert_allclose(rd.inverse_dynamics(driven, q, qd, qdd).torques, tau, atol=1e-6)
    written = yaml.safe_load((tmp_path / "out" / "drive.yaml").read_text())
    np.testing.assert_allclose([written[j]["friction_offset"] for j in robot.joint_names], friction[2], atol=1e-6)


def test_rotor_inertias_written_to_the_transmissions_of_drive_yaml(tmp_path, setup):
    """A UR5 URDF with ros2_control transmissions (reductions 100 to 50) driving a true robot with rotor inertias:
    ``identify --links --friction`` writes each motor's rotor inertia into drive.yaml's ``transmissions`` (the
    last four to 1e-6; the first two joints' are not separable from their links', and so stay the joints' own
    armature, 0 there), and the identified URDF with that file reproduces the torques."""
    robot, true, _ = setup
    reductions = [100.0, 100.0, 80.0, 60.0, 50.0, 50.0]
    rotor = np.array([3e-5, 3e-5, 2e-5, 1e-5, 1e-5, 8e-6])
    elements = "".join(
        f'<transmission name="t{j}"><plugin>transmission_interface/SimpleTransmission</plugin>'
        f'<actuator name="motor{j}"/><joint name="{joint}"><mechanical_reduction>{n}</mechanical_reduction></joint>'
        "</transmission>" for j, (joint, n) in enumerate(zip(robot.joint_names, reductions)))
    with open(UR5) as stream:
        urdf = tmp_path / "ur5.urdf"   # its own transmissions (reduction 1) replaced by these
        urdf.write_text(re.sub(r"<transmission.*?</transmission>", "", stream.read(), flags=re.S).replace(
            "</robot>", elements + "</robot>"))
    geared = true.with_drive(transmissions={f"t{j}": {"joints": [joint], "matrix": [[n]], "rotor_inertia": [i]}
                                            for j, (joint, n, i) in enumerate(zip(robot.joint_names, reductions,
                                                                                  rotor))})
    q, qd, qdd = motion(robot, 400, seed=11)
    tau = rd.inverse_dynamics(geared, q, qd, qdd).torques
    path = write_csv(tmp_path / "m.csv", robot, uneven(400, seed=5), q, tau, qd, qdd)
    code, out, err = run_cli("identify", urdf, path, "--links", "--friction", "--coulomb-velocity", COULOMB_VELOCITY,
                             "-o", tmp_path / "out")
    assert code == 0, err
    assert "not separable in this motion (0, lumped into the terms kept): shoulder_pan_joint.armature, " \
           "shoulder_lift_joint.armature" in out
    drive_rows = [line.split() for line in out.splitlines() if line.strip().startswith("shoulder_") and "+-" in line]
    assert [row[-1] for row in drive_rows] == ["lumped", "lumped"]   # the drive table's armature column
    written = yaml.safe_load((tmp_path / "out" / "drive.yaml").read_text())
    got = np.array([written["transmissions"][f"t{j}"]["rotor_inertia"][0] for j in range(6)])
    np.testing.assert_allclose(got[2:], rotor[2:], rtol=1e-6)
    assert got[0] == 0 and got[1] == 0
    driven = rd.load_drive(rd.load_urdf(str(tmp_path / "out" / "identified.urdf")), tmp_path / "out" / "drive.yaml")
    np.testing.assert_allclose(rd.inverse_dynamics(driven, q, qd, qdd).torques, tau, atol=1e-6)


def test_low_rate_positions_only(tmp_path, setup):
    """125 Hz and 30 Hz, positions and efforts only: the filter is chosen from the rate and said."""
    robot, true, _ = setup
    for rate, samples in ((125.0, 400), (30.0, 300)):
        t = np.arange(samples) / rate
        rng = np.random.default_rng(5)
        trajectory = FourierTrajectory(robot.joint_names, t[-1] / 2, np.zeros(6), *(0.3 * rng.normal(size=(2, 6, 4))))
        q, qd, qdd = trajectory.sample(t)
        tau = rd.inverse_dynamics(true, q, qd, qdd).torques
        path = write_csv(tmp_path / f"r{rate:g}.csv", robot, t, q, tau)
        code, out, err = run_cli("identify", UR5, path, "--links", "--friction", "-o", tmp_path / f"o{rate:g}")
        assert code == 0, err
        assert f"median rate {rate:.4g} Hz, -3 dB near {min(10.0, rate / 5):.3g} Hz" in out
        document = yaml.safe_load((tmp_path / f"o{rate:g}" / "identified.yaml").read_text())
        assert all(document["rmse"][j] < document["rmse_given"][j] for j in robot.joint_names)


def test_bad_recordings_refused_in_one_line(tmp_path, setup):
    robot, true, _ = setup
    q, qd, qdd = motion(robot, 60)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    t = np.linspace(0, 1, 60)
    no_effort = write_csv(tmp_path / "no_effort.csv", robot, t, q, None, qd, qdd)
    backwards = write_csv(tmp_path / "backwards.csv", robot, t[::-1], q, tau, qd, qdd)
    nan = write_csv(tmp_path / "nan.csv", robot, t, np.where(np.arange(60)[:, None] == 4, np.nan, q), tau, qd, qdd)
    still = write_csv(tmp_path / "still.csv", robot, t, np.zeros_like(q), tau, np.zeros_like(q), np.zeros_like(q))
    for path, reason in ((no_effort, "no measured effort for every joint"), (backwards, "time does not increase"),
                         (nan, "line 6, column 'shoulder_pan_joint.position': 'nan' is not finite"),
                         (still, "never move")):
        code, _, err = run_cli("identify", UR5, path, "--links", "--friction", "-o", tmp_path / "x")
        assert code == 2 and reason in err and len(err.strip().splitlines()) == 1, err
    assert not os.path.exists(tmp_path / "x")
    code, _, err = run_cli("identify", UR5, str(tmp_path / "none*.csv"), "--links", "-o", tmp_path / "x")
    assert code == 2 and "no file matches" in err


def test_a_directory_and_a_glob_name_the_recordings(tmp_path):
    from rne_dynamics.tools.loads import motion_paths
    for name in ("b.csv", "a.csv", "c.mcap", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "bag").mkdir()
    (tmp_path / "bag" / "metadata.yaml").write_text("")
    assert motion_paths([str(tmp_path)]) == [str(tmp_path / n) for n in ("a.csv", "b.csv", "bag", "c.mcap")]
    assert motion_paths([str(tmp_path / "*.csv"), str(tmp_path / "a.csv")]) == sorted(
        glob.glob(str(tmp_path / "*.csv")))


def test_excite_links_writes_a_whole_robot_excitation(tmp_path):
    code, out, err = run_cli("excite", rd.bundled_robot_path(), "--links", "--period", 2, "--iterations", 2,
                             "--harmonics", 3, "--sample-period", 0.01, "-o", tmp_path / "e")
    assert code == 0, err
    assert "for the base parameters and friction" in out
    assert sorted(os.listdir(tmp_path / "e")) == ["excitation.csv", "excitation.yaml"]
    code, _, err = run_cli("excite", rd.bundled_robot_path(), "--links", "--payload", "tool_flange")
    assert code == 2 and "give one of them" in err


def test_excite_shows_its_progress(tmp_path, monkeypatch):
    """``excite`` prints the iteration, evaluations and best condition number as the search goes, then the steps
    onto the effort limits (on a new robot it printed nothing for a minute): with a clock of 0.4 s per report a line
    every 3 reports (1.2 s apart, never 2 s); the condition numbers printed never rise and are the search's best so
    far."""
    from rne_dynamics.tools import identify
    ticks = iter(np.arange(10_000) * 0.4)
    monkeypatch.setattr(identify, "monotonic", lambda: next(ticks))
    seen = []
    robot = rd.load_urdf(rd.bundled_robot_path())
    rd.exciting_trajectory(robot, period=2, harmonics=3, iterations=2, progress=seen.append)
    search = [state for state in seen if state.stage == "search"]
    assert [state.evaluations for state in search] == list(range(1, len(search) + 1))
    assert search[-1].iteration == 1 and len(search) > 2 * 24  # two iterations by gradients of 24 coefficients
    shrinking = seen[len(search):]
    assert [state.step for state in shrinking] == list(range(1, 31)) or not shrinking
    code, out, err = run_cli("excite", rd.bundled_robot_path(), "--links", "--period", 2, "--iterations", 2,
                             "--harmonics", 3, "--sample-period", 0.01, "-o", tmp_path / "e")
    assert code == 0, err
    lines = re.findall(r"iteration (\d)/2, (\d+) evaluations \(24 coefficients\), condition number (\S+)", err)
    evaluations = [int(e) for _, e, _ in lines]
    assert len(lines) >= len(search) // 3 - 1 and all(b - a == 3 for a, b in zip(evaluations, evaluations[1:]))
    conditions = [float(c) for *_, c in lines]
    assert conditions == sorted(conditions, reverse=True)
    assert conditions[-1] == pytest.approx(search[evaluations[-1] - 1].condition, rel=1e-3)
    assert len(re.findall(r"effort limits: step \d+/30", err)) == len(shrinking) // 3


def test_excitation_keeps_within_every_limit_acceleration_included(tmp_path):
    """Acceleration limits tighter than the velocity limits allow: the trajectory reaches them (up to the 0.9
    margin it keeps on its 1 ms grid) and, on a 0.1 ms grid, keeps within the position, velocity, acceleration and
    effort limits."""
    robot = rd.load_urdf(rd.bundled_robot_path())
    acceleration = np.array([1.0, 1.5, 2.0, 3.0, 3.0, 3.0])
    trajectory = rd.exciting_trajectory(robot, period=4.0, harmonics=3, iterations=3, acceleration_limits=acceleration)
    grid = np.arange(0.0, trajectory.period, 1e-4)
    q, qd, qdd = trajectory.sample(grid)
    limits = robot.position_limits
    assert np.all(q > limits[:, 0]) and np.all(q < limits[:, 1])
    assert np.all(np.abs(qd) <= robot.velocity_limits)
    assert np.all(np.abs(qdd) <= acceleration)
    assert np.all(np.abs(rd.inverse_dynamics(robot, q, qd, qdd).torques) <= robot.effort_limits)
    assert np.max(np.abs(qdd) / acceleration) > 0.85   # the acceleration limits bind: without them it is faster
    free = rd.exciting_trajectory(robot, period=4.0, harmonics=3, iterations=3)
    assert np.max(np.abs(free.sample(grid)[2]) / acceleration) > 1.5
    code, _, err = run_cli("excite", rd.bundled_robot_path(), "--links", "--period", 4, "--iterations", 3,
                           "--harmonics", 3, "--acceleration-limits", "2", "-o", tmp_path / "e")
    assert code == 0, err
    table = np.genfromtxt(tmp_path / "e" / "excitation.csv", delimiter=",", names=True)
    assert max(np.abs(table[f"{joint}acceleration"]).max() for joint in robot.joint_names) <= 2.0


PUCK = ('<robot name="puck"><link name="world"/><link name="puck"><inertial><mass value="1"/><inertia ixx="1" '
        'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="free" type="floating"><parent '
        'link="world"/><child link="puck"/></joint></robot>')


@pytest.mark.parametrize("arguments, message", [
    (["--acceleration-limits", "1,2"], "acceleration limits: one positive value, or one per joint (6), got [1.0, 2.0]"),
    (["--period", "1", "--sample-period", "2"], "--sample-period 2 s is longer than --period 1 s"),  # main: traceback
    (["--output", "{file}"], "is a file, not a directory"),  # main: after the search
    (["--output", "{file}/e"], "is a file, not a directory"),
    (["{puck}"], "takes a fixed-base robot whose joints have one coordinate each; robot 'puck' has nq=7, nv=6"),
], ids=["acceleration limits", "sample period", "output a file", "output in a file", "floating robot"])
def test_excite_checks_every_argument_before_it_starts(tmp_path, arguments, message):
    """An argument excite cannot use is refused in one line, with nothing before it (main printed 'optimising...'
    first, and refused an --output that is a file or a --sample-period longer than the period after minutes of
    search: a traceback for the latter) and nothing written."""
    (tmp_path / "file").write_text("")
    (tmp_path / "puck.urdf").write_text(PUCK)
    arguments = [a.format(file=tmp_path / "file", puck=tmp_path / "puck.urdf") for a in arguments]
    robot = [] if arguments[0].endswith(".urdf") else [rd.bundled_robot_path()]
    code, out, err = run_cli("excite", *robot, *arguments, "--iterations", 0, "--harmonics", 2,
                             *[] if "--output" in arguments else ["-o", tmp_path / "never"])
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith("rne-dynamics excite: error: "), err
    assert message in err and not (tmp_path / "never").exists()


def test_excite_refuses_a_negative_seed(capsys):
    """numpy's generator takes none: on main its ValueError was a traceback once the search was set up."""
    with pytest.raises(SystemExit) as exit_:
        cli.build_parser().parse_args(["excite", "robot.urdf", "--seed", "-1"])
    assert exit_.value.code == 2 and "argument --seed: -1 is below 0" in capsys.readouterr().err


def write_messages(path, messages, topic="/joint_states"):
    """A rosbag2 (MCAP) of JointState ``messages`` in the order given: ``(stamp in s, names, positions, velocities,
    efforts)``, an empty array for a field left out."""
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore
    typestore = get_typestore(Stores.ROS2_KILTED)
    JointState, Header, Time = (typestore.types[name] for name in (
        "sensor_msgs/msg/JointState", "std_msgs/msg/Header", "builtin_interfaces/msg/Time"))
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection(topic, JointState.__msgtype__, typestore=typestore)
        for t, names, *fields in messages:
            stamp = make_example_bag.EPOCH_NS + round(t * 1e9)
            message = JointState(header=Header(stamp=Time(sec=stamp // 10 ** 9, nanosec=stamp % 10 ** 9), frame_id=""),
                                 name=list(names), **{key: np.asarray(value, float) for key, value in
                                                      zip(("position", "velocity", "effort"), fields)})
            writer.write(connection, stamp, typestore.serialize_cdr(message, JointState.__msgtype__))
    return path


def test_a_bag_as_drivers_record_it_identifies_as_the_clean_one(tmp_path, setup):
    """A real /joint_states bag: a gripper driver's messages between the arm's (none of the arm's joints), every
    tenth message recorded twice, two messages arriving late, the names in another order in every message. The
    gripper's messages are skipped and a repeat is one sample, so identify --links writes the same numbers as for
    the clean bag; on main the first gripper message was refused ("message 2 on '/joint_states' has no position for
    joint 'shoulder_pan_joint'"), and so was a repeated message ("time does not increase at sample ...")."""
    robot, true, _ = setup
    names = list(robot.joint_names)
    q, qd, qdd = motion(robot, 400)
    t = np.linspace(0.0, 20.0, 400)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    clean = [(t[k], names, q[k], qd[k], tau[k]) for k in range(400)]
    rng = np.random.default_rng(7)
    damaged = []
    for k, (stamp, _, *fields) in enumerate(clean):
        order = rng.permutation(6)
        arm = (stamp, [names[j] for j in order], *(field[order] for field in fields))
        damaged += [arm] * (2 if k % 10 == 0 else 1) + [(stamp, ["gripper_finger_joint"], [0.01], [0.0], [1.5])]
    damaged[50], damaged[53] = damaged[53], damaged[50]
    outputs = []
    for label, messages in (("clean", clean), ("damaged", damaged)):
        bag = write_messages(tmp_path / label, messages)
        code, out, err = run_cli("identify", UR5, bag, "--links", "--friction", "--coulomb-velocity",
                                 COULOMB_VELOCITY, "-o", tmp_path / f"out_{label}")
        assert code == 0, err
        assert f"{label}: 400 samples" in out
        outputs.append((tmp_path / f"out_{label}" / "identified.yaml").read_text())
    assert outputs[0] == outputs[1]
    document = yaml.safe_load(outputs[0])
    assert max(document["rmse"].values()) < 0.02 * np.sqrt(np.mean(tau ** 2))   # velocities given, accelerations
    assert min(document["rmse_given"].values()) > 0.3                              # differentiated


def with_nan(values, k):
    values = np.array(values, float)
    values[k] = np.nan
    return values


def test_a_bag_that_cannot_be_one_motion_is_refused_naming_the_message(tmp_path, setup):
    """Two different states at one stamp, a message without efforts among others with them, a message with some of
    the arm's joints, a NaN position among a gripper driver's messages: one line naming the message by its number in
    the bag (main: 'time does not increase at sample 8 (np.float64(...)'; 'no measured effort for every joint'; no
    remedy; a value that is not finite by its number among the samples kept, not the bag's), exit code 2; loads,
    which needs no effort, reads the second."""
    robot, true, _ = setup
    names = list(robot.joint_names)
    q, qd, qdd = motion(robot, 60)
    t = 0.05 * np.arange(60)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    messages = [(t[k], names, q[k], qd[k], tau[k]) for k in range(60)]
    two_states = write_messages(tmp_path / "two_states", messages[:8] + [(t[7], names, q[8], qd[8], tau[8])]
                                + messages[8:])
    no_effort = write_messages(tmp_path / "no_effort", messages[:30] + [(t[30], names, q[30], qd[30], [])]
                               + messages[31:])
    part = write_messages(tmp_path / "part", messages[:5] + [(t[5], names[:3], q[5, :3], qd[5, :3], tau[5, :3])]
                          + messages[6:])
    nan = [m for k, arm in enumerate(messages) for m in (arm, (t[k] + 0.01, ["gripper_finger_joint"], [0.01], [0.0],
                                                              [1.5]))]
    nan[8] = (t[4], names, with_nan(q[4], 1), qd[4], tau[4])   # the 5th sample, the bag's 9th message
    nan = write_messages(tmp_path / "nan", nan)
    for bag, reason in ((two_states, "messages 7 and 8 on '/joint_states' have the same stamp (1767225600.350000000 "
                                     "s) but different joint states"),
                        (no_effort, "message 30 on '/joint_states' has no effort for every joint, though 59 of 60 "
                                    "have"),
                        (part, "message 5 on '/joint_states' has no position for joint 'wrist_1_joint' (a joint "
                               "another driver publishes: each message must carry every joint; --lock JOINT=POSITION "
                               "holds one out of the model)"),
                        (nan, "message 8 on '/joint_states': the position of joint 'shoulder_lift_joint' is nan")):
        code, _, err = run_cli("identify", UR5, bag, "--links", "--friction", "-o", tmp_path / "x")
        assert code == 2 and reason in err and len(err.strip().splitlines()) == 1, err
    assert not os.path.exists(tmp_path / "x")
    code, out, err = run_cli("loads", UR5, no_effort, "-o", tmp_path / "loads")
    assert code == 0 and "60 samples" in out, err


def test_efforts_that_are_not_finite_stop_identify_not_loads(tmp_path, setup):
    """A driver that publishes NaN for an effort it does not measure: loads, which computes the torques, reads the
    bag and the CSV as if the efforts were not there (main refused both: "the effort of joint 'elbow_joint' is not
    finite at sample 4", "line 6, column 'elbow_joint.effort': 'nan' is not finite"); identify refuses them naming
    the sample."""
    robot, true, _ = setup
    names = list(robot.joint_names)
    q, qd, qdd = motion(robot, 60)
    t = 0.05 * np.arange(60)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    tau[4, 2] = np.nan
    bag = write_messages(tmp_path / "bag", [(t[k], names, q[k], qd[k], tau[k]) for k in range(60)])
    csv = write_csv(tmp_path / "nan_effort.csv", robot, t, q, tau, qd, qdd)
    clean = write_csv(tmp_path / "clean.csv", robot, t, q, None, qd, qdd)
    code, _, err = run_cli("loads", UR5, clean, "-o", tmp_path / "clean")
    assert code == 0, err
    expected = (tmp_path / "clean" / "loads.csv").read_text()
    for recording, reason in ((bag, "bag: message 4 on '/joint_states': the effort of joint 'elbow_joint' is nan"),
                              (csv, "line 6, column 'elbow_joint.effort': 'nan' is not finite")):
        code, _, err = run_cli("loads", UR5, recording, "-o", tmp_path / f"loads_{recording.name}")
        assert code == 0, err
        if recording == csv:  # a bag's velocities are read, its accelerations differentiated: the CSV's are given
            assert (tmp_path / f"loads_{recording.name}" / "loads.csv").read_text() == expected
        code, _, err = run_cli("identify", UR5, recording, "--links", "-o", tmp_path / "x")
        assert code == 2 and reason in err and len(err.strip().splitlines()) == 1, err


def test_a_csv_reads_a_repeated_sample_as_one_as_a_bag_does(tmp_path, setup):
    """A CSV whose logger wrote every tenth row twice (same time, same values; one of them with a driver's NaN
    effort) is read as one sample per time, as a bag's repeated message is (one rule, NaN equal to NaN): loads
    writes loads.csv byte for byte that of the CSV without the repeats (main refused the CSV: 'time does not increase
    at sample 1 (0.0 then 0.0)', and the bag: its repeat with the NaN effort had 'different joint states').
    Two different rows at one time are refused naming both lines and the time, for loads and identify."""
    robot, true, _ = setup
    q, qd, qdd = motion(robot, 60)
    t = np.arange(60) / 20
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    nan_effort = tau.copy()
    nan_effort[20, 2] = np.nan  # loads leaves efforts that are not all finite unread
    twice = np.repeat(np.arange(60), [2 if k % 10 == 0 else 1 for k in range(60)])
    clean = write_csv(tmp_path / "clean.csv", robot, t, q, nan_effort, qd)
    repeated = write_csv(tmp_path / "repeated.csv", robot, t[twice], q[twice], nan_effort[twice], qd[twice])
    bag = write_messages(tmp_path / "bag", [(t[k], robot.joint_names, q[k], qd[k], nan_effort[k]) for k in twice])
    for recording in (clean, repeated, bag):  # main refused the bag too: 'messages 20 and 21 ... different states'
        code, out, err = run_cli("loads", UR5, recording, "-o", tmp_path / f"out_{recording.stem}")
        assert code == 0 and "60 samples" in out, err
    assert (tmp_path / "out_clean" / "loads.csv").read_bytes() == (tmp_path / "out_repeated" / "loads.csv").read_bytes()
    clash = np.insert(np.arange(60), 8, 8)
    t_clash = t[clash]
    t_clash[8] = t[7]  # rows 7 and 8 (lines 9 and 10): the samples at 0.35 s and 0.4 s, both stamped 0.35 s
    two_states = write_csv(tmp_path / "two_states.csv", robot, t_clash, q[clash], tau[clash], qd[clash])
    reason = "two_states.csv: lines 9 and 10 have the same time (0.35 s) but different values"
    for command in (["loads"], ["identify", "--links"]):
        code, out, err = run_cli(*command, UR5, two_states, "-o", tmp_path / "x")
        assert (code, out) == (2, "") and reason in err and err.count("\n") == 1, err
    assert not os.path.exists(tmp_path / "x")
