"""What the commands print: ``inspect`` draws the tree with guide lines, prints every name whole and no ``-0.000``,
and shows the drive values it read; ``demo`` prints whole joint names; ``live`` takes a xacro robot and prints the
units of its columns."""
import contextlib
import io
import os

import pytest

import rne_dynamics as rd
from rne_dynamics.tools import cli

TALOS = "talos_data/robots/talos_reduced.urdf"


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main([str(a) for a in argv])
    return code, out.getvalue(), err.getvalue()


def test_inspect_talos_tree_names_and_zeros():
    oracle = pytest.importorskip("oracle")
    path = oracle.robot_path(TALOS)
    code, out, err = run_cli("inspect", path, "--samples", 50)
    assert code == 0, err
    robot = oracle.load_quietly(path)
    lines = out.splitlines()
    start = lines.index("kinematic tree (joint axes in the joint frame)") + 1
    tree = lines[start:lines.index("", start)]
    assert tree[0] == robot.root_link and len(tree) == 1 + len(robot.joints)
    assert any(line.startswith("|-- ") for line in tree) and any(line.startswith("|   `-- ") for line in tree)
    for line in tree[1:]:  # every joint hangs from a guide line that reaches up to its parent
        depth = line.index("-- ") - 1
        assert set(line[:depth]) <= {" ", "|"} and line[depth] in "|`"
    for name in robot.joint_names:  # whole names in the body table and the envelope
        assert sum(line.split()[0] == name for line in lines if line.split()) == 2, name
    assert "-0.000" not in out and " -0 " not in out
    assert "damping 1 N m s/rad, friction 1 N m" in out  # Talos's URDF drive values, which enter the torques


def test_demo_prints_whole_joint_names():
    code, out, err = run_cli("demo")
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("torque [N m]"))
    assert header.split()[3:] == list(rd.load_urdf(rd.bundled_robot_path()).joint_names)


def test_live_takes_a_xacro_robot_and_prints_units(capsys):
    pytest.importorskip("rclpy")  # the live demo runs the nodes
    package = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "arm_description")
    arm = os.path.join(package, "urdf", "arm.urdf.xacro")
    assert cli.main(["live", arm, "--package-path", f"arm_description={package}", "--xacro-arg", "link_mass:=3.0",
                     "--duration", "2.5", "--period", "1"]) == 0
    out = capsys.readouterr().out
    assert "xacro_arm: 3 joints" in out
    header = next(line for line in out.splitlines() if line.strip().startswith("joint "))
    assert "q [rad]" in header and "torque [N m]" in header and "load [% of the effort limit]" in header
    assert out.strip().splitlines()[-1].startswith("done: ") and "after the first 1 s" in out
