"""``data.v``, ``data.a``, ``data.a_gf``, ``data.f`` after ``rd.inverse_dynamics(..., data=data)``: Pinocchio's
``data.v``, ``data.a_gf``, ``data.f`` after its ``rnea`` and its ``data.a`` after ``forwardKinematics(q, v, a)``, body
by body (matched by the name of the joint that moves it, ``robot.body_joint_names``; a floating base's body is
Pinocchio's free-flyer), on a fixed-base arm with a mimic finger (Panda) and a floating quadruped (ANYmal), whichever
engine ran the call: the robot's written machine code or the generic kernel."""
import numpy as np
import pinocchio as pin
import pytest

import oracle
import rne_dynamics as rd
from rne_dynamics.algorithms import rnea, written

TOLERANCE = 1e-12
ROBOTS = [("panda_description/urdf/panda.urdf", False), ("anymal_b_simple_description/robots/anymal.urdf", True)]
IDS = ["panda", "anymal-floating"]
GRAVITIES = [None, [1.5, -2.0, -9.0]]


def pinocchio_joint_ids(robot, model):
    """Pinocchio's joint id of each of our bodies: the joint of the same name, the free-flyer for a floating base."""
    return [model.getJointId(name) if model.existJointName(name) else model.getJointId(oracle.FREE_FLYER)
            for name in robot.body_joint_names]


def pinocchio_intermediates(robot, model, state, gravity, link_wrench=None):
    """Pinocchio's ``(v, a, a_gf, f)``, each ``(nb, 6)`` in our body order, after ``rnea`` (with ``link_wrench``
    ``(link, wrench)`` on the body of that link, whose frame is the body's) and ``forwardKinematics(q, v, a)``."""
    mapping = oracle.FloatingMapping(robot, model)
    model = oracle.with_gravity(model, gravity)
    data = model.createData()
    q, v, a = mapping.q(state[0]), mapping.v(state[1]), mapping.v(state[2])
    ids = pinocchio_joint_ids(robot, model)
    if link_wrench is None:
        pin.rnea(model, data, q, v, a)
    else:
        fext = [pin.Force.Zero() for _ in range(model.njoints)]
        body = robot.link_frames[link_wrench[0]][0]
        fext[ids[body]] = pin.Force(np.asarray(link_wrench[1], float))
        pin.rnea(model, data, q, v, a, fext)
    velocities, a_gf, f = (np.array([x[j].vector for j in ids]) for x in (data.v, data.a_gf, data.f))
    pin.forwardKinematics(model, data, q, v, a)
    return velocities, np.array([data.a[j].vector for j in ids]), a_gf, f


def assert_like_pinocchio(robot, model, data, state, gravity, link_wrench=None):
    expected = pinocchio_intermediates(robot, model, state, gravity, link_wrench)
    for name, theirs in zip(("v", "a", "a_gf", "f"), expected):
        ours = getattr(data, name)
        assert ours.shape == (robot.nb, 6), name
        assert oracle.relative_error(ours, theirs) < TOLERANCE, f"data.{name}"


def own_frame_link(robot):
    """A link whose frame is its body's (a joint's child link): Pinocchio takes a joint's external force there."""
    return next(link for link, (body, R, p) in robot.link_frames.items()
                if body == robot.nb - 1 and np.array_equal(R, np.eye(3)) and not np.any(p))


@pytest.mark.parametrize("engine", ["written machine code", "generic kernel"])
@pytest.mark.parametrize("path, floating_base", ROBOTS, ids=IDS)
def test_intermediates_equal_pinocchios_data(path, floating_base, engine, monkeypatch):
    if engine == "generic kernel":
        monkeypatch.setattr(written, "MODE", "0")  # no written code: every call runs the generic kernel
    _, model = (oracle.floating_pair if floating_base else oracle.pair)(oracle.robot_path(path))
    robot = oracle.load_quietly(oracle.robot_path(path), floating_base)  # a robot of this test's own (its engines)
    if engine == "written machine code":
        assert written.written(rnea.INVERSE_DYNAMICS_SHOWN, robot, wait=True).native
    data = robot.data()
    q, qd, qdd = oracle.random_states(robot, 3, seed=4)
    link = own_frame_link(robot)
    for gravity in GRAVITIES:
        for state in zip(q, qd, qdd):
            rd.inverse_dynamics(robot, *state, gravity=gravity, data=data)
            assert_like_pinocchio(robot, model, data, state, gravity)
        wrench = np.array([3.0, -1.0, 2.0, 0.3, 0.2, -0.5])
        rd.inverse_dynamics(robot, *state, gravity=gravity, external_wrenches={link: wrench}, data=data)
        assert_like_pinocchio(robot, model, data, state, gravity, (link, wrench))
    held = data.held[rnea.INVERSE_DYNAMICS_SHOWN]
    if engine == "written machine code":
        assert type(held.call).__name__ == "builtin_function_or_method"  # the C module's single
    else:
        assert held.call.func == rnea.INVERSE_DYNAMICS_SHOWN.typed_generic and held.call.args == (robot,)
    assert all(np.shares_memory(getattr(data, name), held.block) for name in ("v", "a_gf", "f"))  # views of data


def test_intermediates_before_inverse_dynamics_are_refused():
    robot = oracle.load_quietly(rd.bundled_robot_path())
    data = robot.data()
    rd.gravity_torques(robot, rd.neutral(robot), data=data)
    for name in ("v", "a", "a_gf", "f"):
        with pytest.raises(rd.StateError, match="none has run with this data of robot"):
            getattr(data, name)


def test_the_joint_wrenches_are_the_rows_of_f_and_the_torques_its_axis_components():
    """The contract's joint wrenches are ``data.f``'s rows of the joints' bodies, and each revolute joint's torque
    ``S^T f``, on the bundled arm with a floating base (the base body's row is ``torques[:6]``)."""
    robot = oracle.load_quietly(rd.bundled_robot_path(), floating_base=True)
    data = robot.data()
    q, qd, qdd = oracle.random_states(robot, 1, seed=2)
    result = rd.inverse_dynamics(robot, q[0], qd[0], qdd[0], data=data, drive=False)
    before = data.v.copy()
    rd.inverse_dynamics(robot, *(np.tile(x[0], (3, 1)) for x in (q, qd, qdd)), data=data)  # a batch: no intermediates
    np.testing.assert_array_equal(data.v, before)
    np.testing.assert_array_equal(data.f[list(robot.joint_bodies)], result.joint_wrenches)
    np.testing.assert_allclose(data.f[0], result.torques[:6], rtol=0, atol=1e-12)
    for name, body in zip(robot.joint_names, robot.joint_bodies):
        S = robot.bodies[body].S
        np.testing.assert_allclose(S @ data.f[body], result.torques[robot.idx_v[name]], rtol=0, atol=1e-12)
