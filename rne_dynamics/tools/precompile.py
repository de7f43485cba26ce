"""``rne-dynamics compile``: compile every kernel ahead of its first use (``scripts/setup_venv.sh`` runs it).

numba compiles a kernel the first time it runs and caches the machine code on disk, keyed by the types of its
arguments, which are the same for every robot (the model is two arrays). One pass over the public calls on the
bundled arm, one state and a batch, therefore serves every later process and every robot: a new process then loads
each kernel it uses from the cache in milliseconds instead of compiling it for seconds.
"""
import glob
import os
import shutil
import time

import numpy as np

from .._jit import cache_directories
from ..robots import bundled_robot_path


def calls(rd, robot, batch):
    """``(name, call)`` for every public call of ``rd`` on ``robot``, at one state (``batch`` 0) or a batch."""
    rng = np.random.default_rng(0)
    shape = (batch,) if batch else ()
    q = rd.random_configuration(robot, rng, size=batch) if batch else rd.random_configuration(robot, rng)
    qd, qdd, qddd = (rng.uniform(-1, 1, shape + (robot.nv,)) for _ in range(3))
    link = robot.link_names[-1]
    wrench = {link: rng.uniform(-1, 1, shape + (6,))}
    data = robot.data()
    joint = robot.joint_names[0]
    elastic = robot.with_drive(stiffness={joint: 100.0}, motor_inertia={joint: 1e-4}, gear_ratio={joint: 10.0})
    return [
        ("inverse_dynamics", lambda: rd.inverse_dynamics(robot, q, qd, qdd, data=data)),
        ("inverse_dynamics (external wrenches)", lambda: rd.inverse_dynamics(robot, q, qd, qdd,
                                                                            external_wrenches=wrench)),
        ("gravity_torques", lambda: rd.gravity_torques(robot, q)),
        ("bias_torques", lambda: rd.bias_torques(robot, q, qd)),
        ("mass_matrix", lambda: rd.mass_matrix(robot, q)),
        ("coriolis_matrix", lambda: rd.coriolis_matrix(robot, q, qd)),
        ("forward_dynamics", lambda: rd.forward_dynamics(robot, q, qd, qdd)),
        ("forward_dynamics (joint wrenches)", lambda: rd.forward_dynamics(robot, q, qd, qdd, joint_wrenches=True,
                                                                         external_wrenches=wrench)),
        ("inverse_dynamics_derivatives", lambda: rd.inverse_dynamics_derivatives(robot, q, qd, qdd)),
        ("joint_wrench_derivatives", lambda: rd.joint_wrench_derivatives(robot, q, qd, qdd)),
        ("forward_dynamics_derivatives", lambda: rd.forward_dynamics_derivatives(robot, q, qd, qdd)),
        ("torque_rate", lambda: rd.torque_rate(robot, q, qd, qdd, qddd)),
        ("torque_acceleration", lambda: rd.torque_acceleration(robot, q, qd, qdd, qddd, qd)),
        ("joint_torque_regressor", lambda: rd.joint_torque_regressor(robot, q, qd, qdd)),
        ("forward_kinematics", lambda: rd.forward_kinematics(robot, q)),
        ("frame_placement", lambda: rd.frame_placement(robot, q, link)),
        ("frame_jacobian", lambda: rd.frame_jacobian(robot, q, link)),
        ("frame_velocity", lambda: rd.frame_velocity(robot, q, qd, link)),
        ("frame_acceleration", lambda: rd.frame_acceleration(robot, q, qd, qdd, link)),
        ("center_of_mass", lambda: (rd.center_of_mass(robot, q), rd.center_of_mass(robot, q, qd),
                                    rd.center_of_mass(robot, q, qd, qdd))),
        ("centroidal_momentum", lambda: (rd.centroidal_momentum(robot, q, qd),
                                         rd.centroidal_momentum_matrix(robot, q))),
        ("configuration", lambda: (rd.integrate(robot, q, qd, 0.01), rd.difference(robot, q, q),
                                   rd.normalize(robot, q))),
        ("hybrid_dynamics", lambda: rd.hybrid_dynamics(robot, q, qd, qdd, qddd, known_acceleration=robot.joint_names)),
        ("step", lambda: (rd.step(robot, q, qd, qdd, 0.001), rd.step(robot, q, qd, qdd, 0.001,
                                                                     method="semi_implicit"))),
    ] + [("specialised_data", lambda: rd.specialised_data(robot)),
         ("flexible_simulate", lambda: rd.flexible_simulate(elastic, q, qd, [0.0], [0.0], qdd, 0.001, 0.001))
         ] * (not batch)


def run(robot_path=None, out=print):
    """Compile (or load from the cache) every kernel, the bundled arm with a floating base (which takes every code
    path a fixed base takes, and the quaternions'); prints one line per call. Returns the exit code."""
    import rne_dynamics as rd

    robot = rd.load_urdf(robot_path or bundled_robot_path(), floating_base=True)
    start = time.perf_counter()
    out(f"compiling the kernels of rne_dynamics (once per installation; cached in {cache_directories()})")
    for batch in (0, 3):
        for name, call in calls(rd, robot, batch):
            t = time.perf_counter()
            call()
            out(f"  {name + (' batch' if batch else ''):<44} {time.perf_counter() - t:6.1f} s")
    removed = remove_stale_caches()
    out(f"done in {time.perf_counter() - start:.0f} s" + (f"; removed {removed} caches of older sources" if removed
                                                          else ""))
    return 0


def remove_stale_caches():
    """Delete the kernel caches of older versions of the sources; returns how many."""
    current = cache_directories()
    stale = [path for path in glob.glob(current.rsplit("kernels-", 1)[0] + "kernels-*", recursive=True)
             if os.path.basename(path) != os.path.basename(current)]
    for path in stale:
        shutil.rmtree(path, ignore_errors=True)
    return len(stale)
