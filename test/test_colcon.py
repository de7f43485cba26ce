"""``colcon build`` of the package into a temporary workspace; the installed executables start and the share files
are where ament_index_python (as ``ros2 launch`` and ``ros2 run``) looks for them."""
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.dirname(sys.executable)
COLCON = os.path.join(BIN, "colcon")
PACKAGE = "rne_dynamics"
SHARE_FILES = ["package.xml", "launch/dynamics.launch.py", "launch/simulation.launch.py",
               "launch/gough_stewart.launch.py", "config/rne_dynamics.yaml", "config/rne_dynamics.rviz",
               "urdf/rne_arm6.urdf", "urdf/gough_stewart.urdf", "urdf/gough_stewart_loops.yaml"]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """``(install prefix of the package, environment to run it)`` after a colcon build of a copy of the sources."""
    if not os.path.exists(COLCON):
        pytest.skip(f"colcon is not installed next to {sys.executable}")
    work = tmp_path_factory.mktemp("colcon")
    shutil.copytree(ROOT, work / "src" / PACKAGE, ignore=shutil.ignore_patterns(
        ".*", "__pycache__", "*.egg-info", "build", "install", "log", "test", "rne_loads"))
    env = dict(os.environ, PATH=BIN + os.pathsep + os.environ.get("PATH", ""))
    build = subprocess.run([COLCON, "--log-base", str(work / "log"), "build", "--base-paths", str(work / "src"),
                            "--build-base", str(work / "build"), "--install-base", str(work / "install")],
                           cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    prefix = work / "install" / PACKAGE
    site = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    env.update(AMENT_PREFIX_PATH=str(prefix), PYTHONPATH=str(site))
    return prefix, env


def test_share_files_are_where_ament_index_finds_them(workspace, monkeypatch):
    prefix, env = workspace
    monkeypatch.setenv("AMENT_PREFIX_PATH", env["AMENT_PREFIX_PATH"])
    from ament_index_python.packages import get_package_prefix, get_package_share_directory

    share = get_package_share_directory(PACKAGE)
    assert os.path.realpath(share) == os.path.realpath(prefix / "share" / PACKAGE)
    for name in SHARE_FILES:
        installed = os.path.join(share, name)
        assert os.path.isfile(installed), name
        source = os.path.join(ROOT, "rne_dynamics/data/" + name[len("urdf/"):] if name.startswith("urdf/") else name)
        with open(installed, "rb") as a, open(source, "rb") as b:
            assert a.read() == b.read(), name
    for executable in ("inverse_dynamics_node", "forward_dynamics_node", "gough_stewart_demo",
                       "rne-dynamics"):  # where `ros2 run` looks
        assert os.access(os.path.join(get_package_prefix(PACKAGE), "lib", PACKAGE, executable), os.X_OK), executable


@pytest.mark.parametrize("executable, node", [("inverse_dynamics_node", "inverse_dynamics"),
                                              ("forward_dynamics_node", "forward_dynamics")])
def test_installed_node_starts_and_stops_on_sigint(workspace, executable, node, tmp_path):
    prefix, env = workspace
    log = tmp_path / "node.log"
    with open(log, "w") as out:
        process = subprocess.Popen([str(prefix / "lib" / PACKAGE / executable)], cwd=tmp_path, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
        try:
            end = time.monotonic() + 60.0
            while "waiting for a robot description" not in log.read_text() and process.poll() is None:
                assert time.monotonic() < end, log.read_text()
                time.sleep(0.05)
            assert process.poll() is None, log.read_text()
            process.send_signal(signal.SIGINT)
            assert process.wait(timeout=20) == 0, log.read_text()
        finally:
            if process.poll() is None:
                process.kill()
    text = log.read_text()
    assert f"[{node}]" in text
    assert "Traceback" not in text, text


def test_installed_command_line_runs(workspace):
    prefix, env = workspace
    result = subprocess.run([str(prefix / "lib" / PACKAGE / "rne-dynamics"), "--help"], env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "live" in result.stdout, result.stderr
    where = subprocess.run([sys.executable, "-c", "import rne_dynamics.nodes; print(rne_dynamics.nodes.__file__)"],
                           env=env, cwd=prefix, capture_output=True, text=True, timeout=60)
    assert where.stdout.startswith(str(prefix)), where.stdout + where.stderr  # the installed copy, not the sources
