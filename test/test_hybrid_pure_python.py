"""Without numba the hybrid-dynamics kernel runs as plain Python (rne_dynamics/_jit.py): the same numbers, on a
floating robot with a mimic finger (recursive: the finger's source has a known acceleration) and on the mixed robot
of test_hybrid (a free-flyer, planar and spherical joints split between known accelerations and known forces)."""
import inspect
import subprocess
import sys

import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.algorithms.hybrid import recursive
from oracle import load_quietly, random_states, robot_path
from test_hybrid import MIXED
from test_pure_python import NO_NUMBA

RUN = """
warnings.simplefilter("ignore")
np.savez(sys.argv[3], **results(rd.load_urdf(sys.argv[1], floating_base=True), **np.load(sys.argv[2])))
"""


def results(robot, q, qd, qdd, tau, known):
    result = rd.hybrid_dynamics(robot, q, qd, qdd, tau, known_acceleration=known)
    return {"qdd": result.accelerations, "tau": result.torques, "f": result.joint_wrenches}


@pytest.mark.parametrize("name", ["panda", "mixed"])
def test_plain_python_matches_compiled(name, tmp_path):
    path = robot_path("panda_description/urdf/panda.urdf") if name == "panda" else str(tmp_path / "mixed.urdf")
    if name == "mixed":
        (tmp_path / "mixed.urdf").write_text(MIXED)
    robot = load_quietly(path, floating_base=True)
    q, qd, qdd = random_states(robot, 2, seed=71)
    known = np.random.default_rng(72).random(robot.nv) < 0.5
    known[robot.idx_v["elbow" if name == "mixed" else "panda_finger_joint1"]] = True  # the mimic joints' sources
    states = dict(q=q, qd=qd, qdd=qdd, tau=10 * qdd[::-1], known=known)
    np.savez(tmp_path / "states.npz", **states)
    source = NO_NUMBA + inspect.getsource(results) + RUN
    subprocess.run([sys.executable, "-c", source, path, str(tmp_path / "states.npz"), str(tmp_path / "out.npz")],
                   check=True, timeout=600)
    plain = np.load(tmp_path / "out.npz")
    compiled = results(robot, **states)
    assert robot.has_mimic and recursive(robot, known)  # the kernel, not the partitioned solve
    assert set(plain.files) == set(compiled)
    for key, value in compiled.items():
        np.testing.assert_allclose(plain[key], value, rtol=1e-12, atol=1e-10, err_msg=key)
