"""README is a front page: at most ~150 lines, the two commands exactly as CI and users run them, a library example
that runs as written, and links that resolve. The long library example lives in docs/library.md: it runs as written
and its results are what the rest of the API says."""
import os
import re
import stat
import subprocess

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


#: A stand-in for ``python3`` and the venv it makes: it logs each command on stdout, and its pip writes setuptools'
#: "Editable installation" warning box to stderr for an editable install quieter than -qq (what pip 26.3 does with
#: -q; -qq hides it).
FAKE_PYTHON = """#!/usr/bin/env bash
if [[ "$1 $2" == "-m venv" ]]; then
    mkdir -p "$3/bin" && cp "$0" "$3/bin/python" && printf '#!/usr/bin/env bash\\necho "ran: rne-dynamics $*"\\n' \\
        > "$3/bin/rne-dynamics" && chmod +x "$3/bin/rne-dynamics"
fi
echo "ran: python $*"
if [[ " $* " == *" -e "* && " $* " != *" -qq "* ]]; then
    echo "BuildBackendWarning: Editable installation. ********" >&2
fi
"""


def test_setup_venv_says_what_it_does_and_shows_no_warning_box(tmp_path):
    """README's first command: a line per phase before its command (pip itself is quiet), no setuptools warning
    box; python3 and the venv stubbed (FAKE_PYTHON), the script run as written on a copy of the checkout."""
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "setup_venv.sh").write_text(read("scripts/setup_venv.sh"))
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "python3"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    done = subprocess.run(["bash", str(tmp_path / "scripts" / "setup_venv.sh"), "--runtime"], capture_output=True,
                          text=True, env=dict(os.environ, PATH=f"{tmp_path / 'bin'}:{os.environ['PATH']}"))
    assert done.returncode == 0, done.stderr
    assert "Editable installation" not in done.stderr and "*****" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    ran = [k for k, line in enumerate(lines) if line.startswith("ran: ")]
    assert len(ran) == 5, lines  # venv, pip, requirements, the package, compile
    for k in ran:  # each command comes right after the line that says what it does
        assert lines[k - 1].startswith("setup_venv.sh [") and "]: " in lines[k - 1], lines
    assert "requirements.txt" in lines[ran[2] - 1] and "editable" in lines[ran[3] - 1]
    assert lines[-1].endswith("done: .venv is ready")
