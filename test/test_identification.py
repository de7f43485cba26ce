"""Identification: synthetic recordings of the bundled arm along an exciting trajectory, a payload on the tool flange
(a fixed-joint link) and viscous + Coulomb friction, torques with noise: mass within 2%, COM within 5 mm, friction
within 5%, through the library and the ``identify`` command (recorded and differentiated derivatives); a physically
consistent constrained fit where least squares is not; the excitation within every limit on a 1 ms grid, better
conditioned than a random sum of sines; bad input refused in one line with nothing written."""
import os

import numpy as np
import pytest
import yaml

import rne_dynamics as rd
from rne_dynamics.algorithms import identification
from rne_dynamics.tools import cli

LINK = "tool_flange"
MASS, COM, INERTIA = 2.0, np.array([0.01, -0.02, 0.05]), np.array([0.004, 0.0002, -0.0001, 0.005, 0.0003, 0.003])
VISCOUS = np.array([1.0, 1.2, 0.8, 0.3, 0.3, 0.2])
COULOMB = np.array([3.0, 2.5, 2.0, 0.8, 0.7, 0.6])


@pytest.fixture(scope="module")
def robot():
    return rd.load_urdf(rd.bundled_robot_path())


@pytest.fixture(scope="module")
def excitation(robot):
    return rd.exciting_trajectory(robot, payload=LINK, iterations=12)


def recording(robot, trajectory, *, noise=0.02, dt=2e-3, payload=(MASS, COM, INERTIA), seed=3):
    """``(t, q, qd, qdd, tau)`` over two periods: the true arm's torques plus noise of ``noise`` times each joint's
    RMS torque."""
    true = robot.with_payload(LINK, *payload).with_drive(damping=VISCOUS, friction=COULOMB)
    t = np.arange(0.0, 2 * trajectory.period, dt)
    q, qd, qdd = trajectory.sample(t)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    tau += np.random.default_rng(seed).normal(size=tau.shape) * noise * np.sqrt(np.mean(tau ** 2, axis=0))
    return t, q, qd, qdd, tau


def check_estimates(payload, viscous, coulomb):
    assert abs(payload["mass"] - MASS) < 0.02 * MASS
    assert np.abs(np.asarray(payload["com"]) - COM).max() < 0.005
    np.testing.assert_allclose(viscous, VISCOUS, rtol=0.05)
    np.testing.assert_allclose(coulomb, COULOMB, rtol=0.05)


def test_library_payload_and_friction(robot, excitation):
    t, q, qd, qdd, tau = recording(robot, excitation)
    result = rd.identify(robot, q, qd, qdd, tau, payload=LINK, friction=True)
    p = result.payload
    check_estimates({"mass": p.mass, "com": p.com}, [f.viscous for f in result.friction.values()],
                    [f.coulomb for f in result.friction.values()])
    assert not p.constrained
    np.testing.assert_allclose(p.inertia, INERTIA, atol=5e-4)
    # the standard deviations are those of the errors: every estimate within 4 of them
    assert abs(p.mass - MASS) < 4 * p.mass_std and np.all(np.abs(p.com - COM) < 4 * p.com_std)
    viscous_error = [abs(f.viscous - v) / f.viscous_std for f, v in zip(result.friction.values(), VISCOUS)]
    assert max(viscous_error) < 4 and 0 < p.mass_std < 0.01
    assert np.all(result.rms_after < 0.3 * result.rms_before)
    np.testing.assert_allclose(result.torques + result.residuals, tau, atol=1e-9)


def test_payload_alone_keeps_the_model_friction(robot, excitation):
    """Without --friction the model's friction is taken as known: the arm's true friction in the model, the payload
    exact without noise."""
    t, q, qd, qdd, tau = recording(robot, excitation, noise=0.0)
    known = robot.with_drive(damping=VISCOUS, friction=COULOMB)
    p = rd.identify(known, q, qd, qdd, tau, payload=LINK).payload
    assert p.mass == pytest.approx(MASS, abs=1e-8)
    np.testing.assert_allclose(p.com, COM, atol=1e-8)
    np.testing.assert_allclose(p.inertia, INERTIA, atol=1e-8)


def test_constrained_fit_when_least_squares_is_not_consistent(robot, excitation):
    """A point mass (zero inertia about its COM: on the boundary of consistency) with noise: least squares leaves
    the consistent set, the fit does not; the result loads as a payload."""
    t, q, qd, qdd, tau = recording(robot, excitation, noise=0.05, payload=(0.5, COM, np.zeros(6)), seed=1)
    p = rd.identify(robot, q, qd, qdd, tau, payload=LINK, friction=True).payload
    assert p.constrained
    I = np.array([[p.inertia[0], p.inertia[1], p.inertia[2]], [p.inertia[1], p.inertia[3], p.inertia[4]],
                  [p.inertia[2], p.inertia[4], p.inertia[5]]])
    principal = np.linalg.eigvalsh(I)
    assert principal.min() > 0 and principal[0] + principal[1] >= principal[2] * (1 - 1e-9)
    assert p.mass > 0 and abs(p.mass - 0.5) < 0.02 and np.abs(p.com - COM).max() < 0.01
    robot.with_payload(LINK, p.mass, p.com, p.inertia)


def test_log_cholesky_round_trip():
    phi = np.concatenate([[MASS], MASS * COM, [0.01, 0.001, 0.012, -0.0005, 0.0008, 0.009]])
    theta = identification.parameters_to_log_cholesky(phi, floor=0.0)
    np.testing.assert_allclose(identification.log_cholesky_to_parameters(theta), phi, atol=1e-12)


def test_excitation_within_limits_and_better_than_random(robot, excitation):
    grid = np.arange(0.0, excitation.period + 1e-9, 1e-3)
    q, qd, qdd = excitation.sample(grid)
    limits = robot.position_limits
    assert np.all(q >= limits[:, 0]) and np.all(q <= limits[:, 1])
    assert np.all(np.abs(qd) <= robot.velocity_limits)
    assert np.all(np.abs(rd.inverse_dynamics(robot, q, qd, qdd).torques) <= robot.effort_limits)
    np.testing.assert_allclose(qd[[0, -1]], 0.0, atol=1e-12)   # starts and ends at rest
    np.testing.assert_allclose(qdd[[0, -1]], 0.0, atol=1e-12)
    assert np.abs(qd).max(axis=0).max() > 0.8 * robot.velocity_limits.min()  # and uses the room it has
    rng = np.random.default_rng(7)
    random_conditions = []
    for _ in range(5):  # random sums of sines, scaled onto the same limits
        a, b = rng.normal(size=(2,) + excitation.a.shape)
        candidate = rd.FourierTrajectory(robot.joint_names, excitation.period, excitation.q0, a, b)
        candidate = candidate.scaled(1.0 / identification.limit_usage(robot, candidate, grid))
        random_conditions.append(identification.condition_number(robot, candidate, payload=LINK))
    optimised = identification.condition_number(robot, excitation, payload=LINK)
    assert optimised < min(random_conditions), (optimised, random_conditions)


def write_csv(path, robot, t, q, tau, qd=None, qdd=None, effort_suffix="effort"):
    columns, header = [t], ["time"]
    for j, joint in enumerate(robot.joint_names):
        columns += [q[:, j]]
        header += [f"{joint}.position"]
        for values, suffix in ((qd, "velocity"), (qdd, "acceleration"), (tau, effort_suffix)):
            if values is not None:
                columns.append(values[:, j])
                header.append(f"{joint}.{suffix}")
    np.savetxt(path, np.column_stack(columns), delimiter=",", header=",".join(header), comments="", fmt="%.12g")


def run_cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("derivatives", ["recorded", "differentiated"])
def test_identify_command(robot, excitation, tmp_path, capsys, derivatives):
    t, q, qd, qdd, tau = recording(robot, excitation)
    motion = tmp_path / "motion.csv"
    if derivatives == "recorded":
        write_csv(motion, robot, t, q, tau, qd, qdd)
    else:  # positions and torques only (plan's ".torque" name): velocities and accelerations by the cubic fits
        write_csv(motion, robot, t, q, tau, effort_suffix="torque")
    out_dir = tmp_path / "out"
    code, out, err = run_cli(capsys, "identify", rd.bundled_robot_path(), motion, "--payload", LINK, "--friction",
                             "--output", out_dir)
    assert code == 0, err
    assert "mass" in out and "+-" in out and "residual" in out
    identified = yaml.safe_load((out_dir / "identified.yaml").read_text())
    assert set(identified) == {"payload", "friction"}
    payload = identified["payload"]
    assert payload["link"] == LINK and set(payload) == {"link", "mass", "com", "inertia"}
    assert all(set(payload[k]) == {"value", "std"} for k in ("mass", "com", "inertia"))
    assert list(identified["friction"]) == list(robot.joint_names)
    check_estimates({"mass": payload["mass"]["value"], "com": payload["com"]["value"]},
                    [identified["friction"][j]["viscous"] for j in robot.joint_names],
                    [identified["friction"][j]["coulomb"] for j in robot.joint_names])
    parameters = yaml.safe_load((out_dir / "parameters.yaml").read_text())["/**"]["ros__parameters"]
    assert parameters["payload.mass"] == payload["mass"]["value"] and len(parameters["coulomb_friction"]) == 6
    assert (out_dir / "residuals.png").read_bytes().startswith(b"\x89PNG")


def test_identify_from_a_rosbag_with_efforts(robot, excitation, tmp_path, capsys):
    """JointState messages with positions, velocities and efforts; accelerations from the velocities."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("make_example_bag", os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples", "make_example_bag.py"))
    bags = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bags)
    t, q, qd, qdd, tau = recording(robot, excitation, dt=5e-3)
    bag = tmp_path / "recording"
    bags.write_joint_states_bag(str(bag), t, robot.joint_names, q, qd, efforts=tau)
    code, out, err = run_cli(capsys, "identify", rd.bundled_robot_path(), bag, "--payload", LINK, "--friction",
                             "--output", tmp_path / "out")
    assert code == 0, err
    assert "acceleration differentiated" in out
    identified = yaml.safe_load((tmp_path / "out" / "identified.yaml").read_text())
    check_estimates({"mass": identified["payload"]["mass"]["value"], "com": identified["payload"]["com"]["value"]},
                    [identified["friction"][j]["viscous"] for j in robot.joint_names],
                    [identified["friction"][j]["coulomb"] for j in robot.joint_names])


def test_excite_command_writes_what_loads_and_identify_read(robot, tmp_path, capsys):
    out_dir = tmp_path / "excite"
    code, out, err = run_cli(capsys, "excite", rd.bundled_robot_path(), "--payload", LINK, "--iterations", 0,
                             "--period", 2, "--harmonics", 3, "--output", out_dir)
    assert code == 0, err
    assert "condition number" in out
    table = np.genfromtxt(out_dir / "excitation.csv", delimiter=",", names=True)
    assert np.allclose(np.diff(table["time"]), 1e-3) and table["time"][-1] == pytest.approx(2.0)
    message = yaml.safe_load((out_dir / "excitation.yaml").read_text())
    assert message["joint_names"] == list(robot.joint_names) and len(message["points"]) == 201
    assert message["points"][150]["time_from_start"] == {"sec": 1, "nanosec": 500_000_000}
    code, out, err = run_cli(capsys, "loads", rd.bundled_robot_path(), out_dir / "excitation.csv", "--output",
                             tmp_path / "loads")
    assert code == 0, err
    loads = np.genfromtxt(tmp_path / "loads" / "loads.csv", delimiter=",", names=True)
    np.testing.assert_allclose(loads["shoulder_lift_jointtorque"], table["shoulder_lift_jointtorque"], atol=1e-6)


def test_bad_input_one_line_nothing_written(robot, excitation, tmp_path, capsys):
    t, q, qd, qdd, tau = recording(robot, excitation, dt=0.05)
    no_effort, backwards, good = tmp_path / "no_effort.csv", tmp_path / "backwards.csv", tmp_path / "good.csv"
    write_csv(no_effort, robot, t, q, None, qd, qdd)
    t_back = t.copy()
    t_back[10] = t_back[9]
    write_csv(backwards, robot, t_back, q, tau, qd, qdd)
    write_csv(good, robot, t, q, tau, qd, qdd)
    still = tmp_path / "still.csv"  # the arm held in one pose: no velocity, so no friction column, no inertia seen
    write_csv(still, robot, t, np.repeat(q[:1], len(t), axis=0), np.repeat(tau[:1], len(t), axis=0), 0 * qd, 0 * qdd)
    cases = [((no_effort, "--friction"), "no measured effort"),
             ((still, "--friction"), "does not excite every unknown (condition number inf)"),  # main: LinAlgError
             ((still, "--payload", LINK), "does not excite every unknown (condition number inf)"),  # and a warning
             ((backwards, "--friction"), "lines 11 and 12 have the same time ("),  # and different values
             ((good, "--payload", "no_such_link"), "has no link 'no_such_link'"),
             ((good,), "nothing to identify")]
    for arguments, message in cases:
        out_dir = tmp_path / "never"
        code, out, err = run_cli(capsys, "identify", rd.bundled_robot_path(), *arguments, "--output", out_dir)
        assert code == 2 and err.count("\n") == 1 and message in err, err
        assert not out_dir.exists()
    code, out, err = run_cli(capsys, "excite", rd.bundled_robot_path(), "--payload", "no_such_link", "--output",
                             tmp_path / "never")
    assert code == 2 and "no link 'no_such_link'" in err and not (tmp_path / "never").exists()
    with pytest.raises(rd.ModelError, match="nothing to identify"):
        rd.identify(robot, q, qd, qdd, tau)
    with pytest.raises(rd.ModelError, match="does not excite"):  # standing still: no inertia is seen
        still = np.repeat(q[:1], 50, axis=0)
        rd.identify(robot, still, 0 * still, 0 * still, np.repeat(tau[:1], 50, axis=0), payload=LINK)
