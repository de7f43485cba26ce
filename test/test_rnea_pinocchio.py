"""Inverse dynamics against Pinocchio on every example-robot-data URDF both libraries load.

Torques (``pin.rnea`` plus the URDF ``<dynamics>`` friction Pinocchio leaves out), joint wrenches (``data.f``,
the wrench on each joint's child body by its parent, joint frame, about the joint origin: the contract's
definition) and the base wrench (root frame) must agree to 1e-9 relative, for one state and for a batch compared
state by state, under the default gravity, a tilted gravity and external wrenches on every link.
"""
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd

TOLERANCE = 1e-9
PATHS = oracle.comparable_paths()
IDS = [oracle.short_name(p) for p in PATHS]
TILTED_GRAVITY = np.array([1.7, -2.3, -9.1])
BATCH = 20


def reference(robot, model, q, qd, qdd, gravity=None, link_wrenches=None):
    """Pinocchio's torques, movable-joint wrenches and base wrench for one state, in our ordering.

    The base wrench is the sum of the wrenches of the joints on the world, each moved to the root frame.

    ``link_wrenches``: ``{link: [f; n]}`` in the link frame, moved to the frame of the Pinocchio joint that carries
    the link (a link merged into a body by fixed joints sits at ``link_frames[link]`` in that body).
    """
    if gravity is not None:
        model = oracle.with_gravity(model, gravity)  # the oracle's model is shared: change gravity on a copy
    data = model.createData()
    mapping = oracle.Mapping(robot, model)
    args = (model, data, mapping.q(q), mapping.v(qd), mapping.v(qdd))
    if link_wrenches is None:
        tau = pin.rnea(*args)
    else:
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        for link, wrench in link_wrenches.items():
            body, R, p = robot.link_frames[link]
            if body >= 0:  # a link fixed to the world: the base carries its wrench
                joint = model.getJointId(robot.bodies[body].joint)
                fext[joint] += pin.SE3(R, p).act(pin.Force(np.asarray(wrench)))
        tau = pin.rnea(*args, fext)
    base = sum((data.liMi[j].act(data.f[j]) for j in range(1, model.njoints) if model.parents[j] == 0),
               pin.Force.Zero())
    return mapping.ours(tau) + mapping.drive_torques(qd), mapping.joint_wrenches(data), base.vector


def assert_agrees(ours, reference_torques, reference_wrenches, reference_base, label=""):
    for name, error in (("torques", oracle.relative_error(ours.torques, reference_torques)),
                        ("joint wrenches", oracle.relative_error(ours.joint_wrenches, reference_wrenches)),
                        ("base wrench", oracle.relative_error(ours.base_wrench, reference_base))):
        assert error < TOLERANCE, f"{label} {name}: relative error {error:.3g}"


def random_link_wrenches(robot, rng, batch=None):
    """A random wrench on every link (fixed-base links included), ``(6,)`` each or ``(batch, 6)``."""
    shape = (6,) if batch is None else (batch, 6)
    return {link: rng.normal(scale=20.0, size=shape) for link in robot.link_names}


def one_state(result, n):
    """Row ``n`` of a batch result."""
    return SimpleNamespace(torques=result.torques[n], joint_wrenches=result.joint_wrenches[n],
                           base_wrench=result.base_wrench[n])


def test_every_loadable_robot_is_compared():
    """61 robots at example-robot-data 6; romeo_laas_small alone is refused (a non-PSD link inertia)."""
    assert len(PATHS) >= 61
    refused = []
    for path in oracle.urdf_paths():
        try:
            oracle.pair(path)
        except rd.URDFError as error:
            assert "LHipPitch_link" in str(error)
            refused.append(oracle.short_name(path))
    assert refused == ["romeo_description/urdf/romeo_laas_small.urdf"]


@pytest.mark.parametrize("fragment, feature", [
    ("panda_description/urdf/panda.urdf", "mimic"), ("baxter_description/urdf/baxter.urdf", "mimic"),
    ("pr2_description/urdf/pr2.urdf", "mimic"), ("tiago_pro_description/robots/tiago_pro.urdf", "mimic"),
    ("kinova_description/robots/kinova.urdf", "continuous"), ("pr2_description/urdf/pr2.urdf", "continuous"),
    ("tiago_description/robots/tiago.urdf", "continuous"), ("panda_description/urdf/panda.urdf", "prismatic"),
    ("pr2_description/urdf/pr2.urdf", "prismatic"),
])
def test_compared_robots_cover_joint_kinds(fragment, feature):
    """The comparison below exercises mimic, continuous and prismatic joints (so a loader change that drops
    them from the compared set fails here)."""
    path = oracle.robot_path(fragment)
    assert path in PATHS
    robot, _ = oracle.pair(path)
    joints = [robot.joints[name] for name in robot.body_joint_names]
    if feature == "mimic":
        assert any(j.mimic is not None for j in joints)
    else:
        assert any(j.type == feature for j in joints)


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_one_state(path):
    robot, model = oracle.pair(path)
    q, qd, qdd = (x[0] for x in oracle.random_states(robot, 1, seed=1))
    assert_agrees(rd.inverse_dynamics(robot, q, qd, qdd), *reference(robot, model, q, qd, qdd))


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_batch(path):
    robot, model = oracle.pair(path)
    q, qd, qdd = oracle.random_states(robot, BATCH, seed=2, scale=3.0)
    result = rd.inverse_dynamics(robot, q, qd, qdd)
    assert result.torques.shape == (BATCH, robot.dof)
    assert result.joint_wrenches.shape == (BATCH, robot.dof, 6)
    for n in range(BATCH):
        assert_agrees(one_state(result, n), *reference(robot, model, q[n], qd[n], qdd[n]), f"state {n}")


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_tilted_gravity(path):
    robot, model = oracle.pair(path)
    q, qd, qdd = oracle.random_states(robot, BATCH, seed=3)
    single = rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], gravity=TILTED_GRAVITY)
    assert_agrees(single, *reference(robot, model, q[0], qd[0], qdd[0], TILTED_GRAVITY), "one state")
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY)
    for n in range(BATCH):
        expected = reference(robot, model, q[n], qd[n], qdd[n], TILTED_GRAVITY)
        assert_agrees(one_state(result, n), *expected, f"state {n}")


@pytest.mark.parametrize("path", PATHS, ids=IDS)
def test_external_wrenches(path):
    robot, model = oracle.pair(path)
    rng = np.random.default_rng(4)
    q, qd, qdd = oracle.random_states(robot, BATCH, seed=4)
    wrenches = random_link_wrenches(robot, rng)
    single = rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], external_wrenches=wrenches)
    assert_agrees(single, *reference(robot, model, q[0], qd[0], qdd[0], link_wrenches=wrenches), "one state")
    without = rd.inverse_dynamics(robot, q[0], qd[0], qdd[0])
    assert oracle.relative_error(single.torques, without.torques) > TOLERANCE  # the wrenches do load the joints

    wrenches = random_link_wrenches(robot, rng, BATCH)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=TILTED_GRAVITY, external_wrenches=wrenches)
    for n in range(BATCH):
        expected = reference(robot, model, q[n], qd[n], qdd[n], TILTED_GRAVITY,
                             {link: w[n] for link, w in wrenches.items()})
        assert_agrees(one_state(result, n), *expected, f"state {n}")


def test_pinocchio_loadable_robots_without_joints_load():
    """Robots with no movable joint (a quadrotor body) load with dof 0 and give empty results."""
    empty = [oracle.pair(p)[0] for p in oracle.urdf_paths()
             if p not in PATHS and not p.endswith("romeo_laas_small.urdf") and oracle.pair(p) is not None]
    assert empty and all(robot.dof == 0 for robot in empty)
    result = rd.inverse_dynamics(empty[0], np.zeros(0), np.zeros(0), np.zeros(0))
    assert result.torques.shape == (0,) and result.joint_wrenches.shape == (0, 6)
