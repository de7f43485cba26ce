"""The opt-in for a link inertia no rigid body has (``load_urdf(..., check_inertia="warn")``, CLI
``--check-inertia warn``): example-robot-data's romeo_laas_small, whose LHipPitch_link has a negative principal
moment, loads with a warning naming the link and the moment, and its RNEA equals Pinocchio's (which loads it as
given); without the opt-in the error names the link, the moment and the opt-in. The CLI's model options
(``--check-inertia``, ``--lock``) on every command that loads a robot."""
import warnings

import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.tools import cli
from test_cli import run_cli

ROMEO = oracle.robot_path("romeo_description/urdf/romeo_laas_small.urdf")
MOMENT = "smallest principal moment -0.00272042 kg m^2"


def test_refused_by_default_naming_the_link_the_moment_and_the_opt_in():
    with pytest.raises(rd.URDFError) as error:
        rd.load_urdf(ROMEO)
    message = str(error.value)
    assert "link 'LHipPitch_link': inertia is not positive semi-definite" in message and MOMENT in message
    assert "check_inertia='warn'" in message and "--check-inertia warn" in message


def test_loaded_with_a_warning_and_rnea_equals_pinocchio():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = rd.load_urdf(ROMEO, check_inertia="warn")
    noted = [str(w.message) for w in caught if issubclass(w.category, rd.ModelWarning)
             and "LHipPitch_link" in str(w.message) and MOMENT in str(w.message)]
    assert len(noted) == 1 and "loaded as given (check_inertia='warn')" in noted[0]
    assert any("LHipPitch_link" in w and MOMENT in w for w in robot.warnings)
    model = pin.buildModelFromUrdf(ROMEO, mimic=True)
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    for q, v, a in zip(*oracle.random_states(robot, 3, seed=2)):
        expected = mapping.ours(pin.rnea(model, data, mapping.q(q), mapping.v(v), mapping.v(a)))
        assert oracle.relative_error(rd.inverse_dynamics(robot, q, v, a).torques,
                                     expected + mapping.drive_torques(v)) < 1e-12


def test_an_unknown_check_inertia_value_is_refused():
    with pytest.raises(rd.URDFError, match="check_inertia is one of 'error', 'warn', not 'ignore'"):
        rd.load_urdf(rd.bundled_robot_path(), check_inertia="ignore")


def test_cli_inspect_refuses_then_opts_in():
    code, out, err = run_cli("inspect", ROMEO, "--samples", 10)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "LHipPitch_link" in err and "--check-inertia warn" in err
    code, out, err = run_cli("inspect", ROMEO, "--samples", 10, "--check-inertia", "warn")
    assert code == 0 and "LHipPitch_link" in out and MOMENT in out


def test_cli_lock_removes_the_joint():
    code, out, err = run_cli("demo", "--lock", "elbow_joint=0.5")
    assert code == 0, err
    assert out.startswith("rne_arm6: 5 joints") and "elbow_joint" not in out
    code, out, err = run_cli("inspect", rd.bundled_robot_path(), "--samples", 10, "--lock", "elbow_joint=0.5")
    assert code == 0 and "elbow_joint (revolute" in out and "locked at 0.5)" in out
    code, out, err = run_cli("demo", "--lock", "elbow=0.5")
    assert code == 2 and "locked joint 'elbow': robot 'rne_arm6' has no movable joint" in err
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(["demo", "--lock", "elbow_joint=up"])


@pytest.mark.parametrize("command", ["demo", "inspect", "loads", "plan", "identify", "excite"])
def test_every_command_that_loads_a_robot_takes_the_model_options(command):
    extra = {"loads": ["motion.csv"], "identify": ["motion.csv"], "plan": ["--from", "0", "--to", "1"]}
    args = cli.build_parser().parse_args([command, "robot.urdf", *extra.get(command, []), "--check-inertia", "warn",
                                          "--lock", "a=1", "--lock", "b=0,0,0,1"])
    assert cli.robot_source(args)["check_inertia"] == "warn"
    assert cli.robot_source(args)["locked_joints"] == {"a": 1.0, "b": [0.0, 0.0, 0.0, 1.0]}

