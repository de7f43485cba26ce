"""Bad arguments to the library's dynamics calls: each raises :class:`rd.StateError` (a ``ValueError``) naming the
argument and, where it applies, the joint, the state of a batch or the link; forward dynamics of a joint that moves
no mass raises :class:`rd.SingularMassMatrixError` naming the joint, never numpy's ``LinAlgError``; a result that
overflows is an error, not NaN.
"""
import warnings

import numpy as np
import pytest

import rne_dynamics as rd
from multi_dof import random_configuration, tree_urdf
from rne_dynamics.robots import default_robot_path

ARM = rd.load_urdf(default_robot_path())
DOF = ARM.dof
TIP = ARM.link_names[-1]

#: Every state-taking call of the contract, with the names of its joint-space arguments in order.
CALLS = {
    "inverse_dynamics": (rd.inverse_dynamics, ("q", "qd", "qdd")),
    "gravity_torques": (rd.gravity_torques, ("q",)),
    "bias_torques": (rd.bias_torques, ("q", "qd")),
    "mass_matrix": (rd.mass_matrix, ("q",)),
    "forward_dynamics": (rd.forward_dynamics, ("q", "qd", "tau")),
    "inverse_dynamics_derivatives": (rd.inverse_dynamics_derivatives, ("q", "qd", "qdd")),
    "torque_rate": (rd.torque_rate, ("q", "qd", "qdd", "qddd")),
}
ARGUMENTS = [(call, k) for call, (_, names) in CALLS.items() for k in range(len(names))]
ARGUMENT_IDS = [f"{call}-{CALLS[call][1][k]}" for call, k in ARGUMENTS]
WITH_GRAVITY = [call for call in CALLS if call != "mass_matrix"]
WITH_WRENCHES = ["inverse_dynamics", "forward_dynamics"]


def good_arguments(call, batch=None):
    """Valid joint-space arguments for ``call``: one state, or ``batch`` states."""
    shape = (DOF,) if batch is None else (batch, DOF)
    return [np.full(shape, 0.1 * (k + 1)) for k in range(len(CALLS[call][1]))]


def refusal(call, arguments, *culprits, **keywords):
    """The StateError message of ``call`` on ``arguments``, asserted to name every one of ``culprits``."""
    with pytest.raises(rd.StateError) as caught:
        CALLS[call][0](ARM, *arguments, **keywords)
    message = str(caught.value)
    for culprit in culprits:
        assert culprit in message, f"{culprit!r} not named in: {message}"
    return message


@pytest.mark.parametrize("call", CALLS)
def test_good_arguments_are_accepted(call):
    """The baseline every case below breaks in one place: one state and a batch of 3 run with finite output."""
    function = CALLS[call][0]
    for batch in (None, 3):
        out = function(ARM, *good_arguments(call, batch))
        parts = (out.torques, out.joint_wrenches) if call == "inverse_dynamics" else out
        for part in parts if isinstance(parts, tuple) else (parts,):
            assert np.isfinite(part).all()
            assert part.shape[0] == (DOF if batch is None else batch)
    assert issubclass(rd.StateError, ValueError)


@pytest.mark.parametrize("call, k", ARGUMENTS, ids=ARGUMENT_IDS)
def test_wrong_length(call, k):
    arguments = good_arguments(call)
    arguments[k] = np.zeros(DOF - 1)
    name = CALLS[call][1][k]
    refusal(call, arguments, f"{name} has shape ({DOF - 1},)", f"({DOF},) or (N, {DOF})", ARM.joint_names[0])


@pytest.mark.parametrize("call, k", ARGUMENTS, ids=ARGUMENT_IDS)
def test_three_dimensional(call, k):
    arguments = good_arguments(call, batch=2)
    arguments[k] = np.zeros((2, 2, DOF))
    refusal(call, arguments, f"{CALLS[call][1][k]} has shape (2, 2, {DOF})")


@pytest.mark.parametrize("call", [call for call in CALLS if len(CALLS[call][1]) > 1])
def test_one_state_mixed_with_a_batch(call):
    first, second = CALLS[call][1][:2]
    arguments = good_arguments(call)
    arguments[1] = np.zeros((4, DOF))
    refusal(call, arguments, f"{second} has shape (4, {DOF})", f"{first} has ({DOF},)")


@pytest.mark.parametrize("call", [call for call in CALLS if len(CALLS[call][1]) > 1])
def test_batches_of_different_sizes(call):
    last = CALLS[call][1][-1]
    arguments = good_arguments(call, batch=5)
    arguments[-1] = np.zeros((4, DOF))
    refusal(call, arguments, f"{last} has shape (4, {DOF})", f"(5, {DOF})")


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("call, k", ARGUMENTS, ids=ARGUMENT_IDS)
def test_not_finite_in_one_state(call, k, bad):
    arguments = good_arguments(call)
    arguments[k][2] = bad
    refusal(call, arguments, f"{CALLS[call][1][k]} is not finite", f"joint '{ARM.joint_names[2]}'", str(bad))


@pytest.mark.parametrize("call, k", ARGUMENTS, ids=ARGUMENT_IDS)
def test_not_finite_in_a_batch_names_the_state(call, k):
    arguments = good_arguments(call, batch=6)
    arguments[k][4, DOF - 1] = np.nan
    refusal(call, arguments, f"{CALLS[call][1][k]} is not finite", f"joint '{ARM.joint_names[-1]}'", "state 4")


@pytest.mark.parametrize("value", ["0 0 0 0 0 0", [[0.0] * DOF, [0.0] * (DOF - 1)], {"q": 1}, None],
                         ids=["text", "ragged", "dict", "None"])
def test_not_numbers(value):
    message = refusal("inverse_dynamics", [value] + good_arguments("inverse_dynamics")[1:], "q ")
    assert "not an array of numbers" in message or "has shape" in message


@pytest.mark.parametrize("gravity", [(0, -9.81), (0, 0, 0, -9.81), [[0, 0, -9.81]], (0, np.nan, -9.81),
                                     (np.inf, 0, 0), "down", 9.81],
                         ids=["2 numbers", "4 numbers", "matrix", "nan", "inf", "text", "scalar"])
@pytest.mark.parametrize("call", WITH_GRAVITY)
def test_bad_gravity(call, gravity):
    refusal(call, good_arguments(call), "gravity", gravity=gravity)


@pytest.mark.parametrize("call", WITH_WRENCHES)
def test_external_wrench_on_unknown_link(call):
    refusal(call, good_arguments(call), "external_wrenches", "no link 'gripper_finger'", f"robot '{ARM.name}'",
            external_wrenches={TIP: np.ones(6), "gripper_finger": np.ones(6)})


@pytest.mark.parametrize("wrench", [np.ones(5), np.ones(7), np.ones((2, 6)), np.ones((3, 3)), "push"],
                         ids=["5", "7", "2x6", "3x3", "text"])
@pytest.mark.parametrize("call", WITH_WRENCHES)
def test_external_wrench_of_wrong_shape(call, wrench):
    refusal(call, good_arguments(call), f"external_wrenches['{TIP}']", external_wrenches={TIP: wrench})


@pytest.mark.parametrize("bad", [np.nan, np.inf], ids=["nan", "inf"])
@pytest.mark.parametrize("call", WITH_WRENCHES)
def test_external_wrench_not_finite(call, bad):
    wrench = np.ones(6)
    wrench[4] = bad
    refusal(call, good_arguments(call), f"external_wrenches['{TIP}']", "finite", external_wrenches={TIP: wrench})


@pytest.mark.parametrize("call", WITH_WRENCHES)
def test_batch_wrench_for_another_batch_size(call):
    refusal(call, good_arguments(call, batch=4), f"external_wrenches['{TIP}']", "(4, 6)", "(3, 6)",
            external_wrenches={TIP: np.ones((3, 6))})


@pytest.mark.parametrize("call", WITH_WRENCHES)
def test_external_wrenches_not_a_mapping(call):
    refusal(call, good_arguments(call), "external_wrenches must be a mapping", external_wrenches=[np.ones(6)])


# --- forward dynamics of a joint that moves nothing ---------------------------------------------------------------

MASSLESS_WRIST = """<robot name="massless_wrist">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 0.2"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.004"/></inertial></link>
  <link name="wrist"/>
  <link name="camera"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><axis xyz="0 1 0"/>
    <limit lower="-2" upper="2" effort="50" velocity="2"/></joint>
  <joint name="wrist_roll" type="continuous"><parent link="arm"/><child link="wrist"/><origin xyz="0 0 0.4"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="camera_mount" type="fixed"><parent link="wrist"/><child link="camera"/></joint>
</robot>"""


@pytest.fixture(scope="module")
def massless_wrist():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # "moves no mass": tested in test_bad_urdf
        return rd.load_urdf(MASSLESS_WRIST)


def test_forward_dynamics_of_massless_subtree_one_state(massless_wrist):
    with pytest.raises(rd.SingularMassMatrixError) as caught:
        rd.forward_dynamics(massless_wrist, np.zeros(2), np.zeros(2), np.array([1.0, 0.5]))
    message = str(caught.value)
    assert "joint 'wrist_roll'" in message and "massless_wrist" in message
    assert isinstance(caught.value, ValueError) and not isinstance(caught.value, np.linalg.LinAlgError)


def test_forward_dynamics_of_massless_subtree_in_a_batch_names_the_state(massless_wrist):
    q = np.zeros((3, 2))
    with pytest.raises(rd.SingularMassMatrixError, match=r"at state 0.*joint 'wrist_roll'"):
        rd.forward_dynamics(massless_wrist, q, q, q)


def test_massless_subtree_still_has_inverse_dynamics(massless_wrist):
    """Inverse dynamics needs no inverse: the massless wrist needs no torque; the shoulder holds the arm (2 kg, centre
    of mass r = 0.2 m along z, turned q = 0.5 rad about y): gravity's moment about y is r_z F_x - r_x F_z =
    0.2 sin(q) m g, so the holding torque is -0.2 sin(q) m g."""
    result = rd.inverse_dynamics(massless_wrist, np.array([0.5, 1.0]), np.zeros(2), np.zeros(2))
    np.testing.assert_allclose(result.torques, [-0.2 * np.sin(0.5) * 2 * 9.81, 0.0], atol=1e-12)


# -- finite inputs whose results overflow float64 ------------------------------------------------------------------


def test_inverse_dynamics_overflow_is_an_error_not_nan():
    robot = rd.load_urdf(default_robot_path())
    with pytest.raises(rd.StateError, match="torques are not finite although every input is"):
        rd.inverse_dynamics(robot, np.zeros(6), np.full(6, 1e200), np.zeros(6))


def test_forward_dynamics_overflow_is_an_error_not_nan():
    robot = rd.load_urdf(default_robot_path())
    with pytest.raises(rd.StateError, match="accelerations are not finite although every input is"):
        rd.forward_dynamics(robot, np.zeros(6), np.zeros(6), np.full(6, 1e308))


def test_payload_that_no_real_body_has_is_refused():
    robot = rd.load_urdf(default_robot_path())
    with pytest.raises(rd.ModelError, match="payload on 'tool_flange'.*triangle inequality"):
        robot.with_payload("tool_flange", 1.0, inertia=(0.01, 0.0, 0.0, 0.01, 0.0, 0.05))


# ---------------------------------------------------------------- joints of several coordinates: inputs and results
# that are not finite

NOT_FINITE_CALLS = {  # call(robot, q, v, a, jerk) and the names of its joint-space arguments
    "coriolis_matrix": (lambda robot, q, v, a, j: rd.coriolis_matrix(robot, q, v), ("q", "qd")),
    "joint_torque_regressor": (lambda robot, q, v, a, j: rd.joint_torque_regressor(robot, q, v, a),
                               ("q", "qd", "qdd")),
    "torque_rate": (lambda robot, q, v, a, j: rd.torque_rate(robot, q, v, a, j), ("q", "qd", "qdd", "qddd")),
}


@pytest.mark.parametrize("batch", [None, 3], ids=["one state", "batch"])
@pytest.mark.parametrize("call", NOT_FINITE_CALLS)
def test_not_finite_input_is_named(call, batch):
    """The kernels check their inputs (the calls do not beforehand): a NaN or an inf names the argument, the
    coordinate and, in a batch, the state."""
    function, names = NOT_FINITE_CALLS[call]
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    rng = np.random.default_rng(43)
    q = np.array([random_configuration(robot, rng) for _ in range(batch or 1)])
    good = [q] + list(rng.uniform(-1.0, 1.0, size=(3, batch or 1, robot.nv)))
    for k, name in enumerate(names):
        coordinate_names = robot.q_names if name == "q" else robot.v_names
        # the planar joint's second coordinate and the last joint's: not in a quaternion, whose norm is checked first
        for bad, coordinate in ((np.nan, 8), (np.inf, len(coordinate_names) - 1)):
            x = [np.array(a) for a in good]
            x[k][-1, coordinate] = bad
            with pytest.raises(rd.StateError) as caught:
                function(robot, *(x if batch else [a[0] for a in x]))
            message = str(caught.value)
            culprits = [f"{name} is not finite", f"joint '{coordinate_names[coordinate]}'", str(bad)]
            for culprit in culprits + ([f"state {batch - 1}"] if batch else []):
                assert culprit in message, f"{culprit!r} not named in: {message}"


@pytest.mark.parametrize("call", ["joint_torque_regressor", "torque_rate"])
def test_overflow_is_an_error_not_nan(call):
    """Finite inputs whose results overflow float64 (``v x* I v`` at ``qd = 1e200``)."""
    robot = rd.load_urdf(tree_urdf(), floating_base=True)
    q = random_configuration(robot, np.random.default_rng(44))
    zero = np.zeros(robot.nv)
    with pytest.raises(rd.StateError, match="not finite although every input is"):
        NOT_FINITE_CALLS[call][0](robot, q, np.full(robot.nv, 1e200), zero, zero)
