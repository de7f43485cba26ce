"""README's library example runs as written and its results are what the rest of the API says."""
import os
import re

import numpy as np

import rne_dynamics as rd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def readme_python_blocks():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as readme:
        return re.findall(r"```python\n(.*?)```", readme.read(), flags=re.S)


def test_library_example_runs_and_agrees(monkeypatch):
    monkeypatch.chdir(ROOT)
    (block,) = readme_python_blocks()
    names = {}
    exec(compile(block, "README.md", "exec"), names)
    robot, result, q = names["robot"], names["result"], names["q"]
    assert np.allclose(result.torques, rd.gravity_torques(robot, q), rtol=0, atol=1e-12)
    assert np.isclose(result.base_wrench[2], robot.total_mass * 9.81, rtol=1e-12)
    assert names["heavier"].total_mass == robot.total_mass + 2.0
    assert names["trajectory"].q.shape[-1] == robot.dof
