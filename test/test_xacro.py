"""xacro robots: ``load_urdf`` of a macro-built arm (arguments, a ``$(find pkg)`` include and a relative one) equals
loading the xacro command's own expansion; unresolved packages, includes and arguments and xacro's own errors are
one-line URDFErrors naming the file; unexpanded xacro never loads as an empty robot; the CLI takes xacro robots."""
import os
import subprocess
import sys

import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.tools import cli

pytest.importorskip("xacro")

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.join(HERE, "data", "arm_description")
ARM = os.path.join(PACKAGE, "urdf", "arm.urdf.xacro")
PATHS = {"arm_description": PACKAGE}
SETTINGS = ({}, {"link_length": 0.55, "link_mass": 3.5, "tool": "false"})


def xacro_command(path, args):
    """The xacro command's expansion (its own process; ``$(find)`` through a throw-away ament index)."""
    prefix = os.path.join(os.environ.get("PYTEST_TMP", "/tmp"), f"ament_{os.getpid()}")
    os.makedirs(os.path.join(prefix, "share", "ament_index", "resource_index", "packages"), exist_ok=True)
    open(os.path.join(prefix, "share", "ament_index", "resource_index", "packages", "arm_description"), "w").close()
    share = os.path.join(prefix, "share", "arm_description")
    if not os.path.exists(share):
        os.symlink(PACKAGE, share)
    env = dict(os.environ, AMENT_PREFIX_PATH=prefix)
    command = [sys.executable, "-c", "import sys, xacro; sys.exit(xacro.main())", path]
    command += [f"{name}:={value}" for name, value in args.items()]
    return subprocess.run(command, env=env, capture_output=True, text=True, check=True).stdout


@pytest.mark.parametrize("args", SETTINGS)
def test_load_equals_xacros_expansion(args):
    expected = rd.load_urdf(xacro_command(ARM, args))
    robot = rd.load_urdf(ARM, xacro_args=args, package_paths=PATHS)
    assert robot.joint_names == expected.joint_names == ("joint1", "joint2", "joint3")
    assert robot.link_names == expected.link_names
    assert ("tool" in robot.link_names) == (args.get("tool", "true") == "true")
    length = args.get("link_length", 0.4)
    assert np.allclose(rd.frame_placement(robot, np.zeros(3), "link3")[:3, 3], [0, 0, 0.1 + 1.9 * length])
    assert robot.total_mass == pytest.approx(expected.total_mass)
    assert robot.total_mass > 1.0
    np.testing.assert_allclose(rd.inertial_parameters(robot), rd.inertial_parameters(expected), rtol=0, atol=1e-12)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-2, 2, (3, 20, 3))
    for call in (lambda r: rd.inverse_dynamics(r, q, qd, qdd).torques, lambda r: rd.mass_matrix(r, q)):
        np.testing.assert_allclose(call(robot), call(expected), rtol=0, atol=1e-12)
    np.testing.assert_array_equal(robot.damping, [0.2] * 3)
    np.testing.assert_array_equal(robot.friction, [0.5] * 3)


def test_xacro_text_and_arguments_not_modified(monkeypatch):
    monkeypatch.chdir(os.path.join(PACKAGE, "urdf"))  # xacro text: relative includes from the current directory
    with open(ARM, encoding="utf-8") as stream:
        text = stream.read()
    args = {"link_mass": 3}
    robot = rd.load_urdf(text, xacro_args=args, package_paths=PATHS)
    assert args == {"link_mass": 3}
    assert robot.total_mass == pytest.approx(3 * (1 + 0.8 + 0.5 + 0.25))
    urdf = rd.expand_xacro(text, xacro_args=args, package_paths=PATHS)
    assert "xacro:" not in urdf and np.allclose(rd.inertial_parameters(rd.load_urdf(urdf)),
                                                rd.inertial_parameters(robot), atol=1e-15)
    with open(rd.bundled_robot_path(), encoding="utf-8") as stream:  # plain URDF passes through unchanged
        assert rd.expand_xacro(rd.bundled_robot_path()) == stream.read()


def one_line_error(call, *fragments):
    with pytest.raises(rd.URDFError) as caught:
        call()
    message = str(caught.value)
    assert "\n" not in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


def test_unresolved_package_include_and_argument(monkeypatch, tmp_path):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    one_line_error(lambda: rd.load_urdf(ARM), ARM, "package 'arm_description' not found", "--package-path")
    one_line_error(lambda: rd.load_urdf(ARM, package_paths={"arm_description": tmp_path}), ARM,
                   str(tmp_path / "urdf" / "link.xacro"), "No such file")
    bad = tmp_path / "bad.urdf.xacro"
    bad.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                   '<link name="${undefined_name}"/></robot>')
    one_line_error(lambda: rd.load_urdf(bad), str(bad), "xacro:", "undefined_name")
    one_line_error(lambda: rd.load_urdf('<robot name="r"><link name="$(arg who)"/></robot>'), "<xacro text>",
                   "who")
    inner = tmp_path / "inner.xacro"
    inner.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="m" params="a">'
                     '<link name="${a}"/></xacro:macro><xacro:bogus/></robot>')
    outer = tmp_path / "outer.xacro"
    outer.write_text('<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
                     f'<xacro:include filename="{inner.name}"/></robot>')
    one_line_error(lambda: rd.load_urdf(outer), str(outer), str(inner), "bogus")
    one_line_error(lambda: rd.load_urdf(ARM, xacro_args=["link_mass:=2"]), "xacro_args is a mapping")


def test_unexpanded_xacro_is_never_an_empty_robot(monkeypatch):
    """Without the xacro package a xacro source is refused with the remedy, not loaded as 0 joints and 0 kg."""
    monkeypatch.setitem(sys.modules, "xacro", None)
    for source in (ARM, open(ARM, encoding="utf-8").read()):
        one_line_error(lambda: rd.load_urdf(source, package_paths=PATHS), "pip install xacro")


def run_cli(capsys, *argv):
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_takes_xacro(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("AMENT_PREFIX_PATH", raising=False)
    code, out, err = run_cli(capsys, "inspect", ARM, "--xacro-arg", "link_mass:=4", "--package-path",
                             f"arm_description={PACKAGE}", "--samples", "10")
    assert code == 0, err
    assert "robot 'xacro_arm'" in out and "moving mass 10.200 kg" in out
    code, out, err = run_cli(capsys, "demo", ARM, "--package-path", f"arm_description={PACKAGE}")
    assert code == 0 and "xacro_arm: 3 joints" in out, err
    motion = tmp_path / "motion.csv"
    t = np.linspace(0, 1, 50)
    np.savetxt(motion, np.column_stack([t, np.sin(t), np.cos(t), t]), delimiter=",",
               header="time,joint1,joint2,joint3", comments="")
    code, out, err = run_cli(capsys, "loads", ARM, str(motion), "--output", str(tmp_path / "out"),
                             "--package-path", f"arm_description={PACKAGE}", "--xacro-arg", "tool:=false")
    assert code == 0, err
    assert os.path.exists(tmp_path / "out" / "loads.csv")
    code, out, err = run_cli(capsys, "inspect", ARM)
    assert code == 2 and err.count("\n") == 1 and "package 'arm_description' not found" in err
    with pytest.raises(SystemExit):
        cli.main(["inspect", ARM, "--xacro-arg", "link_mass=4"])
    assert "is not name:=value" in capsys.readouterr().err
