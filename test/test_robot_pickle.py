"""A robot is frozen: what the machine-code layer keeps for it is one object, ``robot.engines``. It pickles after
the algorithms have run on it (the nodes build their models in another process), without its caches, and computes
the same numbers after the trip."""
import dataclasses
import functools
import pickle

import numpy as np
import pytest

import oracle
import rne_dynamics as rd


def test_a_used_robot_pickles_and_computes_the_same():
    robot = oracle.load_quietly(oracle.robot_path("panda_description/urdf/panda.urdf")).with_locked_joints(
        {"panda_finger_joint1": 0.03})  # locking runs the kinematics on the robot
    rng = np.random.default_rng(3)
    q, qd, qdd = (rng.uniform(-1.0, 1.0, robot.dof) for _ in range(3))
    expected = rd.inverse_dynamics(robot, q, qd, qdd).torques
    assert robot.engines.workspace_shapes  # the machine-code layer's caches are filled
    copy = pickle.loads(pickle.dumps(robot))
    assert not copy.engines.workspace_shapes and copy.engines is not robot.engines
    # read-only as the original's (a pickle drops the flag): numba's machine code is typed by it, and a node's model,
    # built in another process, ran the simulator's step as its Python (3.5 ms a step on the bundled arm, 0.13 of
    # real time at 500 Hz) until numba had compiled the step again for writable arrays
    for name in ("fdata", "idata", "armature", "damping", "friction", "friction_offset", "coulomb_velocity"):
        assert not getattr(copy, name).flags.writeable, name
    np.testing.assert_array_equal(rd.inverse_dynamics(copy, q, qd, qdd).torques, expected)
    assert copy.joint_names == robot.joint_names and copy.locked_joints == robot.locked_joints


def test_a_robot_keeps_no_mutable_cache_but_its_engines():
    """The written codes, live Data objects, warm-up counts and workspace shapes are ``robot.engines``'s, not cached
    properties of the frozen class; a new robot (``with_payload``) starts with its own."""
    cached = {name for name, value in vars(rd.Robot).items() if isinstance(value, functools.cached_property)}
    assert not cached & {"written", "datas", "generic_states", "written_lock", "workspace_shapes", "engines"}
    robot = rd.load_urdf(rd.bundled_robot_path())
    with pytest.raises(dataclasses.FrozenInstanceError):
        robot.engines = None
    data = robot.data()
    rd.inverse_dynamics(robot, np.zeros(6), np.zeros(6), np.zeros(6), data=data)
    assert list(robot.engines.datas) == [data] and robot.engines.workspace_shapes
    heavier = robot.with_payload(robot.link_names[-1], 1.0)
    assert heavier.engines is not robot.engines and not heavier.engines.workspace_shapes


def test_a_robots_arrays_are_read_only_and_its_own():
    """A robot's arrays are its model: an edit in place would change what it reports, not what it computes (the
    kernels read the model packed when it was made), so every array is read-only; the drive arrays given to it are
    copied (the caller's stay writable)."""
    robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
    damping = np.full(len(robot.joint_names), 0.5)
    damped = robot.with_drive(damping=damping)
    damping[0] = 9.0  # the caller's array: the robot keeps its copy
    assert damping.flags.writeable and damped.damping[0] == 0.5
    arrays = {name: getattr(damped, name) for name in ("armature", "damping", "friction", "friction_offset",
                                                        "coulomb_velocity", "position_limits", "effort_limits",
                                                        "velocity_limits", "quaternions", "joint_body_indices",
                                                        "fdata", "idata", "rigid_body_fdata")}
    assert arrays["quaternions"].tolist() == [3]
    for name, array in arrays.items():
        before = array.copy()
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 7
        np.testing.assert_array_equal(getattr(damped, name), before, err_msg=name)
