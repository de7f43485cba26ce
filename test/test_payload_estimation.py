"""Online payload estimation (``PayloadEstimator``: recursive least squares with forgetting on the payload
regressor): a 2 kg payload on the bundled arm's flange from 10 s of an exciting motion at 500 Hz with noisy torques
and accelerations, fed in 20 ms batches: mass within 2%, COM within 5 mm, inside 3 standard deviations; a still
robot sees the mass and says the COM is not observable; forgetting follows a payload that is put down; an estimate
no body has (negative mass) is refused with its reason, and ``apply`` refuses it."""
import numpy as np
import pytest

import rne_dynamics as rd
from rne_dynamics.algorithms.identification import FourierTrajectory
from rne_dynamics.algorithms.payload_estimation import PayloadEstimator

LINK = "tool_flange"
MASS, COM, INERTIA = 2.0, np.array([0.02, -0.01, 0.05]), np.array([0.004, 0.0, 0.0, 0.005, 0.0, 0.003])
RATE = 500.0


def exciting(robot, seconds, seed=1):
    rng = np.random.default_rng(seed)
    limits = robot.position_limits
    q0 = np.where(np.isfinite(limits).all(axis=1), limits.mean(axis=1), 0.0)
    a, b = 0.4 * rng.normal(size=(2, robot.nv, 5))
    return FourierTrajectory(robot.joint_names, 10.0, q0, a, b).sample(np.arange(0, seconds, 1 / RATE))


def measured(true, q, qd, qdd, seed=2):
    """Torques with noise of 2% of each joint's RMS, from accelerations with noise of 0.2 rad/s^2 (what the node
    feeds: differentiated velocities)."""
    rng = np.random.default_rng(seed)
    tau = rd.inverse_dynamics(true, q, qd, qdd).torques
    tau += 0.02 * np.sqrt(np.mean(tau ** 2, axis=0)) * rng.normal(size=tau.shape)
    return qdd + 0.2 * rng.normal(size=qdd.shape), tau


def feed(estimator, *arrays, batch=10):
    for k in range(0, len(arrays[0]), batch):
        estimator.update(*(x[k:k + batch] for x in arrays))


@pytest.fixture(scope="module")
def robot():
    return rd.load_urdf(rd.bundled_robot_path())


def test_a_2kg_payload_from_10s_of_exciting_motion(robot):
    true = robot.with_payload(LINK, MASS, COM, INERTIA)
    q, qd, qdd = exciting(robot, 10.0)
    noisy_qdd, tau = measured(true, q, qd, qdd)
    estimator = PayloadEstimator(robot, LINK)
    feed(estimator, q, qd, noisy_qdd, tau)
    e = estimator.estimate()
    assert e.samples == 5000 and e.applicable and e.reason is None
    assert e.observable == {"mass": True, "com": True, "inertia": True}
    assert abs(e.mass - MASS) < 0.02 * MASS and np.all(np.abs(e.com - COM) < 0.005)
    # the inertia (0.003-0.005 kg m^2) is what 2% torque noise and noisy accelerations leave least determined:
    # its least-squares value breaks the triangle inequality, the nearest consistent one is applied
    ixx, ixy, ixz, iyy, iyz, izz = e.inertia
    principal = np.linalg.eigvalsh([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    assert e.inertia_moved > 0 and principal[0] > 0 and principal[2] <= principal[0] + principal[1]
    assert 1 < e.condition_number < 100
    carried = e.apply(robot)
    assert carried.total_mass == pytest.approx(robot.total_mass + e.mass)


def test_a_still_robot_sees_the_mass_not_the_com(robot):
    true = robot.with_payload(LINK, MASS, COM, INERTIA)
    q = np.repeat(exciting(robot, 1.0)[0][100:101], 500, axis=0)
    still = np.zeros_like(q)
    _, tau = measured(true, q, still, still)
    estimator = PayloadEstimator(robot, LINK)
    feed(estimator, q, still, still, tau)
    e = estimator.estimate()
    assert e.observable == {"mass": True, "com": False, "inertia": False}
    assert abs(e.mass - MASS) < 0.02 * MASS and e.com is None and e.inertia is None
    assert e.condition_number == np.inf and not e.applicable
    assert "COM is not observable" in e.reason
    with pytest.raises(rd.ModelError, match="payload estimate on 'tool_flange' not applied: the COM is not observable"):
        e.apply(robot)


def test_forgetting_follows_a_payload_put_down(robot):
    """Two seconds' time constant: 10 s with 2 kg, then 10 s with 0.5 kg: the estimate is 0.5 kg within 2%
    (without forgetting it stays between the two)."""
    q, qd, qdd = exciting(robot, 20.0)
    half = len(q) // 2
    torques = [measured(robot.with_payload(LINK, m, COM, INERTIA), q[s], qd[s], qdd[s])[1]
               for m, s in ((MASS, slice(0, half)), (0.5, slice(half, None)))]
    forgetting, remembering = PayloadEstimator(robot, LINK, forgetting=np.exp(-1 / (2.0 * RATE))), \
        PayloadEstimator(robot, LINK)
    for estimator in (forgetting, remembering):
        feed(estimator, q, qd, qdd, np.concatenate(torques), batch=50)
    assert abs(forgetting.estimate().mass - 0.5) < 0.01
    assert 0.6 < remembering.estimate().mass < 1.9
    assert forgetting.estimate().effective == pytest.approx(2.0 * RATE, rel=0.01)


def test_the_estimate_is_the_whole_payload_beside_one_the_model_carries(robot):
    """The model already carries 0.5 kg there (a payload.* parameter): the estimate is the whole 2 kg payload, its
    COM and inertia, noise-free to 1e-8, as from the bare robot (``payload_parameters``: first moments ``m c``)."""
    from rne_dynamics.algorithms.payload_estimation import payload_parameters
    carried = (0.5, np.array([0.0, 0.03, 0.01]), np.array([0.001, 0.0, 0.0, 0.002, 0.0, 0.002]))
    q, qd, qdd = exciting(robot, 4.0)
    tau = rd.inverse_dynamics(robot.with_payload(LINK, MASS, COM, INERTIA), q, qd, qdd).torques
    estimator = PayloadEstimator(robot.with_payload(LINK, *carried), LINK, carried=carried)
    feed(estimator, q, qd, qdd, tau, batch=100)
    e = estimator.estimate()
    np.testing.assert_allclose([e.mass, *e.com, *e.inertia], [MASS, *COM, *INERTIA], atol=1e-8)
    np.testing.assert_allclose(payload_parameters(*carried)[1:4], 0.5 * carried[1])


def test_an_impossible_estimate_is_refused(robot):
    """The model carries more than the robot: the torques say a negative mass."""
    q, qd, qdd = exciting(robot, 4.0)
    estimator = PayloadEstimator(robot.with_payload(LINK, MASS, COM, INERTIA), LINK)
    feed(estimator, q, qd, qdd, rd.inverse_dynamics(robot, q, qd, qdd).torques, batch=100)
    e = estimator.estimate()
    assert not e.applicable and e.mass == pytest.approx(-MASS, abs=1e-6)
    assert e.reason.startswith("mass -2 kg is not positive")
    with pytest.raises(rd.ModelError, match="not applied: mass -2 kg is not positive"):
        e.apply(robot)


def test_bad_arguments_refused(robot):
    with pytest.raises(rd.ModelError, match="no link 'nope'"):
        PayloadEstimator(robot, "nope")
    with pytest.raises(rd.StateError, match=r"forgetting must be in \(0, 1\]"):
        PayloadEstimator(robot, LINK, forgetting=0.0)
    estimator = PayloadEstimator(robot, LINK)
    with pytest.raises(rd.StateError, match=r"tau must be finite \(N, 6\) like q"):
        estimator.update(np.zeros(6), np.zeros(6), np.zeros(6), np.full(6, np.nan))
    # finite but overflowing (a corrupt sensor reading): refused, the sums as they were (main: inf, then NaN)
    q, qd, qdd = exciting(robot, 0.1)
    tau = rd.inverse_dynamics(robot, q, qd, qdd).torques
    estimator.update(q, qd, qdd, tau)
    before = estimator.estimate()
    with pytest.raises(rd.StateError, match=r"the samples overflow the estimate \(\|tau\| up to 1e\+300\); not taken"):
        estimator.update(q, qd, qdd, np.where(np.arange(6) == 5, 1e300, tau))
    after = estimator.estimate()
    assert after.samples == before.samples == len(q) and after.mass == before.mass and np.isfinite(after.mass)
