"""README is a front page: at most ~150 lines, the two commands exactly as CI and users run them, a library example
that runs as written, and links that resolve. The long library example lives in docs/library.md: it runs as written
and its results are what the rest of the API says."""
import os
import re

import numpy as np

import rne_dynamics as rd

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAIN_COMMAND = "bash scripts/setup_venv.sh --runtime && .venv/bin/rne-dynamics live --duration 5"
TEST_COMMAND = "bash scripts/setup_venv.sh && .venv/bin/python -m pytest test -q"


def read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as stream:
        return stream.read()


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", read(path), flags=re.S)


def example_names(path, monkeypatch):
    """The names the one Python example of ``path`` defines, run as written from the repository's root; its torques
    at rest are the gravity torques."""
    monkeypatch.chdir(ROOT)
    (block,) = python_blocks(path)
    names = {}
    exec(compile(block, path, "exec"), names)
    robot, result, q = names["robot"], names["result"], names["q"]
    assert np.allclose(result.torques, rd.gravity_torques(robot, q), rtol=0, atol=1e-12)
    assert names["heavier"].total_mass == robot.total_mass + 2.0
    return names


def test_front_page_example_runs_and_agrees(monkeypatch):
    names = example_names("README.md", monkeypatch)
    assert np.allclose(names["M"], rd.mass_matrix(names["robot"], names["q"]), rtol=0, atol=1e-15)


def test_library_guide_example_runs_and_agrees(monkeypatch):
    names = example_names("docs/library.md", monkeypatch)
    robot = names["robot"]
    assert np.isclose(names["result"].base_wrench[2], robot.total_mass * 9.81, rtol=1e-12)
    assert names["trajectory"].q.shape[-1] == robot.dof


def test_front_page_is_short_with_the_two_commands_ci_runs():
    readme = read("README.md")
    assert len(readme.splitlines()) <= 150
    assert MAIN_COMMAND in readme and TEST_COMMAND in readme
    ci = read(".ci/run")
    assert "bash scripts/setup_venv.sh\n" in ci and ".venv/bin/python -m pytest test -q" in ci
    assert "rne-dynamics live" in readme[readme.index("## Command line"):]  # the main job in the command list
    assert "a few minutes" not in readme and "compiles the kernels" not in readme


def test_every_guide_is_linked_and_every_link_resolves():
    readme = read("README.md")
    guides = sorted(name for name in os.listdir(os.path.join(ROOT, "docs")) if name.endswith(".md"))
    for guide in guides:
        assert f"(docs/{guide})" in readme, guide
    for path in ["README.md"] + [f"docs/{guide}" for guide in guides]:
        for target in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", read(path)):
            assert os.path.exists(os.path.join(ROOT, os.path.dirname(path), target)), (path, target)
