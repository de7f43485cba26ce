"""Without numba the kernels run as plain Python (rne_dynamics/_jit.py): the same code, the same numbers.

A subprocess imports rne_dynamics with numba unavailable and writes its results; they must equal the compiled ones.
"""
import inspect
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import rne_dynamics as rd
from oracle import random_states, robot_path

ROBOTS = ["ur_description/urdf/ur5_robot.urdf",      # plain serial arm
          "panda_description/urdf/panda.urdf",        # a mimic finger: the mass-matrix forward dynamics
          "talos_data/robots/talos_reduced.urdf"]     # a branched tree

NO_NUMBA = """
import sys
sys.modules["numba"] = None  # 'import numba' now raises ImportError, as on a machine without it
import warnings
import numpy as np
import rne_dynamics as rd
from rne_dynamics import _jit
assert _jit.numba is None
"""
RUN = """
warnings.simplefilter("ignore")
np.savez(sys.argv[3], **results(rd.load_urdf(sys.argv[1]), *np.load(sys.argv[2])))
"""


def results(robot, q, qd, qdd):
    """Every public dynamics call, one state and a batch of two."""
    out = {}
    for tag, args in (("one", (q[0], qd[0], qdd[0])), ("batch", (q, qd, qdd))):
        inverse = rd.inverse_dynamics(robot, *args)
        out[f"tau_{tag}"], out[f"wrench_{tag}"] = inverse.torques, inverse.joint_wrenches
        out[f"gravity_{tag}"] = rd.gravity_torques(robot, args[0])
        out[f"bias_{tag}"] = rd.bias_torques(robot, *args[:2])
        out[f"M_{tag}"] = rd.mass_matrix(robot, args[0])
        out[f"qdd_{tag}"] = rd.forward_dynamics(robot, *args)
        out[f"C_{tag}"] = rd.coriolis_matrix(robot, *args[:2])
        for name, value in zip(("dq", "dqd", "dqdd"), rd.inverse_dynamics_derivatives(robot, *args)):
            out[f"{name}_{tag}"] = value
    return out


@pytest.mark.parametrize("fragment", ROBOTS, ids=lambda f: os.path.basename(f))
def test_plain_python_matches_compiled(fragment, tmp_path):
    path = robot_path(fragment)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        robot = rd.load_urdf(path)
    states = np.stack(random_states(robot, 2, seed=3))
    np.save(tmp_path / "states.npy", states)
    source = NO_NUMBA + inspect.getsource(results) + RUN
    subprocess.run([sys.executable, "-c", source, path, str(tmp_path / "states.npy"), str(tmp_path / "out.npz")],
                   check=True, timeout=600)
    plain = np.load(tmp_path / "out.npz")
    compiled = results(robot, *states)
    assert set(plain.files) == set(compiled)
    for name, value in compiled.items():
        np.testing.assert_allclose(plain[name], value, rtol=1e-12, atol=1e-10, err_msg=name)

