"""docs/reference.md is what scripts/make_reference.py writes from the package as it is: the API, node parameter
and command-line reference cannot drift from the code."""
import importlib.util
import os

import pytest

import rne_dynamics as rd

pytest.importorskip("rclpy", reason="the reference lists the ROS 2 nodes' parameters: needs rclpy")
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def generator():
    spec = importlib.util.spec_from_file_location("make_reference", os.path.join(REPO, "scripts", "make_reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_current():
    import rclpy.logging
    make_reference = generator()
    level = rclpy.logging.get_logger_effective_level("")
    expected = make_reference.reference()
    assert rclpy.logging.get_logger_effective_level("") == level  # the tests after it still see the nodes' warnings
    with open(make_reference.OUTPUT, encoding="utf-8") as stream:
        assert stream.read() == expected, "docs/reference.md is out of date: run python scripts/make_reference.py"
    for name in rd.__all__:  # every public name has a heading and a docstring to show
        assert f"### `rd.{name}`" in expected and make_reference.first_paragraph(getattr(rd, name)), name
    for node in ("inverse_dynamics_node", "forward_dynamics_node"):
        section = expected.split(f"### `{node}`")[1].split("\n### ")[0]
        assert "| `locked_joints` | string_array | `[]` |" in section
        assert "`/joint_states` (sensor_msgs/msg/JointState)" in section
    assert "usage: rne-dynamics inspect" in expected and "--check-inertia {error,warn}" in expected
