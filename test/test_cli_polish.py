"""What a newcomer saw in the command line output, fixed: ``inspect`` draws the tree with guide lines, prints every
name whole and no ``-0.000``, and shows the drive values it read; ``demo`` prints whole joint names."""
import contextlib
import io

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
