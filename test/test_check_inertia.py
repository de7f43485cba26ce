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
from test_cli import PENDULUM, run_cli

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


@pytest.mark.parametrize("command", ["demo", "inspect", "loads", "plan", "retime", "identify", "excite"])
def test_every_command_refuses_a_lock_outside_the_limits_or_twice(command, tmp_path, monkeypatch):
    """main held the bundled arm's elbow (limits +-3.1416 rad) at 4 rad, and a joint locked twice at the last
    position given: each is refused in one line, naming the joint, the value(s) and the limits."""
    monkeypatch.chdir(tmp_path)  # on main, the commands that run write their default output here
    (tmp_path / "motion.csv").write_text("")
    extra = {"inspect": ["--samples", 10], "loads": ["motion.csv"], "plan": ["--from", "0", "--to", "1"],
             "retime": ["motion.csv"], "identify": ["motion.csv", "--friction"],
             "excite": ["--iterations", 0, "--harmonics", 2]}
    for locks, message in [(["elbow_joint=4"], "--lock elbow_joint=4.0: outside the joint's position limits "
                                               "[-3.1416, 3.1416] rad"),
                           (["elbow_joint=0.5", "elbow_joint=0.7"], "--lock names joint 'elbow_joint' twice "
                                                                    "(0.5 and 0.7)")]:
        code, out, err = run_cli(command, rd.bundled_robot_path(), *extra.get(command, []),
                                 *[part for lock in locks for part in ("--lock", lock)])
        assert (code, out, err) == (2, "", f"rne-dynamics {command}: error: {message}\n")


def test_a_continuous_joint_is_locked_at_any_angle(tmp_path):
    """A continuous joint has no limits: 'spin' locked at 10 rad; the revolute 'swing' ([-1, 1] rad) is not at 1.5."""
    urdf = tmp_path / "pendulum.urdf"
    urdf.write_text(PENDULUM.format(lower=-1.0, effort=5.0))
    code, out, err = run_cli("inspect", urdf, "--samples", 10, "--lock", "spin=10")
    assert code == 0 and "spin (continuous" in out and "locked at 10)" in out, err
    code, out, err = run_cli("inspect", urdf, "--samples", 10, "--lock", "swing=1.5")
    assert code == 2 and "--lock swing=1.5: outside the joint's position limits [-1.0, 1.0] rad" in err


TIAGO = [oracle.robot_path(f"tiago_description/robots/{name}.urdf") for name in ("tiago", "tiago_dual",
                                                                                  "tiago_no_hand")]
ANTENNA = ("link 'base_antenna_left_link': inertia is not positive semi-definite (smallest principal moment "
           "-3.53486e-08 kg m^2), slightly: the rigid body it is fixed to (link 'base_footprint'")


@pytest.mark.parametrize("path", TIAGO, ids=oracle.short_name)
def test_tiago_floats_its_antennas_judged_on_the_base_they_are_fixed_to(path):
    """TIAGo's antennas (principal moment -3.5e-8 kg m^2, CAD rounding) are fixed to its 43 kg base: with a
    floating base they belong to a moving rigid body, which is physical; it loads with a warning naming each
    antenna, and its RNEA equals Pinocchio's."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = rd.load_urdf(path, floating_base=True)
    noted = [str(w.message) for w in caught if ANTENNA in str(w.message)]
    assert len(noted) == 1 and "loaded as lumped" in noted[0]
    assert any("base_antenna_right_link" in str(w.message) and "slightly" in str(w.message) for w in caught)
    model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer(), mimic=True)
    data, mapping = model.createData(), oracle.FloatingMapping(robot, model)
    for q, v, a in zip(*oracle.random_floating_states(robot, 2, seed=3)):
        expected = mapping.ours(pin.rnea(model, data, mapping.q(q), mapping.v(v), mapping.v(a)))
        assert oracle.relative_error(rd.inverse_dynamics(robot, q, v, a).torques,
                                     expected + mapping.drive_torques(v)) < 1e-12


def two_links(moment, fixed_to_big_body):
    """A moving body of link 'arm' (1 kg, 0.1 kg m^2) and a link 'tag' with principal moment ``moment``, fixed to
    it (``fixed_to_big_body``) or moved by a joint of its own."""
    tag_joint = ('<joint name="glue" type="fixed"><parent link="arm"/><child link="tag"/></joint>' if fixed_to_big_body
                 else '<joint name="tag_hinge" type="revolute"><parent link="arm"/><child link="tag"/>'
                      '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>')
    return f"""<robot name="tagged"><link name="base"/>
<link name="arm"><inertial><mass value="1"/><inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/>
  </inertial></link>
<link name="tag"><inertial><mass value="0.001"/><inertia ixx="{moment}" ixy="0" ixz="0" iyy="1e-6" iyz="0" izz="1e-6"/>
  </inertial></link>
<joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
  <limit lower="-1" upper="1" effort="1" velocity="1"/></joint>{tag_joint}</robot>"""


def test_slight_only_against_a_physical_body_it_is_fixed_to():
    """-1e-8 kg m^2 on a link fixed to a 0.1 kg m^2 body: a warning naming the link; the same link on a body of its
    own, or -1e-3 kg m^2 (beyond 1e-6 of the body's scale) fixed to it: refused as before."""
    with pytest.warns(rd.ModelWarning, match="link 'tag': inertia is not positive semi-definite .* slightly: the "
                                              "rigid body it is fixed to \\(link 'arm', 1.001 kg\\)"):
        robot = rd.load_urdf(two_links(-1e-8, True))
    assert robot.joint_names == ("hinge",)
    for moment, fixed in ((-1e-8, False), (-1e-3, True)):
        with pytest.raises(rd.URDFError, match="link 'tag': inertia is not positive semi-definite .*no rigid body "
                                               "has it"):
            rd.load_urdf(two_links(moment, fixed))
