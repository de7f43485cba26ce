"""The momentum observer on a simulated arm with armature and viscous + Coulomb friction (in the model and in the
simulation): an external wrench switched on mid-motion is estimated as ``J^T w`` within 2% after ``5/gain``
seconds and the estimate is near zero before contact; per-joint gains follow ``1 - exp(-K t)``; a floating base;
collision flags; bad gains, torques and time steps refused."""
import numpy as np
import pytest

import rne_dynamics as rd

DT = 1e-3          # s, the observer's sample period (a 1 kHz joint-state stream)
SUBSTEPS = 4       # simulation steps per sample: the torque is held for DT / SUBSTEPS
LINK = "tool_flange"
WRENCH = np.array([12.0, -6.0, 20.0, 1.5, 0.8, -1.0])   # N, N m on the tool, in its frame
CONTACT = 0.4      # s, the wrench is switched on


def drive_robot():
    robot = rd.load_urdf(rd.bundled_robot_path())
    return robot.with_drive(armature=[0.3, 0.3, 0.2, 0.05, 0.05, 0.05], damping=[2.0, 2.0, 1.5, 0.5, 0.5, 0.5],
                            friction=[3.0, 3.0, 2.0, 0.8, 0.8, 0.8])


HOME = np.array([0.0, -1.2, 1.0, -1.4, -1.57, 0.0])


def sweep(t):
    """Every joint moving one way at 0.2 to 0.6 rad/s (Coulomb friction on, never changing sign): rad, rad/s,
    rad/s^2."""
    w = 2 * np.pi * np.array([0.7, 0.5, 0.6, 0.8, 0.9, 1.0])
    a = 0.2 / w
    sign = np.array([1, -1, 1, -1, 1, 1])
    phase = w * t + np.arange(6) * 0.9
    return (HOME + sign * (0.4 * t + a * np.sin(phase)), sign * (0.4 + a * w * np.cos(phase)),
            -sign * a * w * w * np.sin(phase))


def swing(t):
    """Every joint swinging at up to 5 rad/s: the velocities cross zero (Coulomb friction steps)."""
    w = 2 * np.pi * np.array([0.7, 0.5, 0.6, 0.8, 0.9, 1.0])
    a = np.array([0.6, 0.4, 0.5, 0.6, 0.6, 0.8])
    phase = w * t + np.arange(6) * 0.9
    return HOME + a * np.sin(phase), a * w * np.cos(phase), -a * w * w * np.sin(phase)


def simulate(robot, gain, duration, wrench_on=CONTACT, reference=sweep, floating=False):
    """Computed-torque tracking of ``reference`` (the torque refreshed every simulation step), the external
    wrench on from ``wrench_on``; the observer sees (q, qd, tau) at each sample. Returns times, estimates and the
    true external torques (``J^T w`` once on: ``inverse_dynamics`` without minus with the wrench)."""
    observer = rd.MomentumObserver(robot, gain)
    q, qd = (rd.neutral(robot), np.zeros(robot.nv)) if floating else reference(0.0)[:2]

    def control(t, q, qd):
        if floating:  # the arm's joints driven, the base free
            tau = np.zeros(robot.nv)
            tau[6:] = 2.0 * np.sin(2 * np.pi * t + np.arange(robot.nv - 6))
            return tau
        q_ref, qd_ref, qdd_ref = reference(t)
        return rd.inverse_dynamics(robot, q, qd, qdd_ref + 2500.0 * (q_ref - q) + 100.0 * (qd_ref - qd)).torques

    h = DT / SUBSTEPS
    times, estimates, truth = [], [], []
    for k in range(int(round(duration / DT)) + 1):
        t = k * DT
        wrenches = {LINK: WRENCH} if t >= wrench_on - 1e-12 else None
        tau = control(t, q, qd)
        estimates.append(observer.update(q, qd, tau, DT).copy())
        times.append(t)
        qdd = np.zeros(robot.nv)
        truth.append(rd.inverse_dynamics(robot, q, qd, qdd).torques
                     - rd.inverse_dynamics(robot, q, qd, qdd, external_wrenches=wrenches).torques)
        for s in range(SUBSTEPS):
            q, qd = rd.step(robot, q, qd, control(t + s * h, q, qd), h, external_wrenches=wrenches)
    return np.array(times), np.array(estimates), np.array(truth)


def test_wrench_estimated_within_2_percent_after_5_over_gain():
    robot = drive_robot()
    gain = 100.0
    t, estimate, truth = simulate(robot, gain, duration=1.0)
    before, after = t < CONTACT, t >= CONTACT + 5.0 / gain
    assert np.abs(estimate[before]).max() < 0.01     # N m: friction and armature are in the model
    scale = np.abs(truth[after]).max(axis=1)
    assert scale.min() > 5.0
    error = np.abs(estimate[after] - truth[after]).max(axis=1) / scale
    assert error.max() < 0.02, error.max()
    # the delay: 63% of the step after 1/gain (first order)
    k1 = np.searchsorted(t, CONTACT + 1.0 / gain)
    reached = np.abs(estimate[k1]).max() / np.abs(truth[k1]).max()
    assert 0.6 < reached < 0.67, reached


def test_near_zero_without_contact_through_coulomb_steps():
    """Velocities crossing zero: each Coulomb step inside a sample period moves the estimate by at most
    ``gain * friction * dt / 2`` (the sample grid), 0.15 N m here, decaying at the rate ``gain``."""
    robot = drive_robot()
    gain = 100.0
    t, estimate, _ = simulate(robot, gain, duration=1.0, wrench_on=np.inf, reference=swing)
    velocities = np.array([swing(s)[1] for s in t])
    assert np.sum(np.diff(np.sign(velocities), axis=0) != 0) >= 6
    bound = gain * robot.friction * DT / 2 + 0.02
    assert np.all(np.abs(estimate) <= bound), (np.abs(estimate).max(axis=0), bound)


def first_order(truth, gains):
    """``dr/dt = K (truth - r)`` run on the sampled truth (bilinear, as the observer), the input on from the sample
    period after its first nonzero sample."""
    filtered = np.zeros_like(truth)
    a = np.asarray(gains) * DT / 2
    for k in range(1, len(truth)):
        held = (truth[k - 1] + truth[k]) if truth[k - 1].any() else 0.0
        filtered[k] = ((1 - a) * filtered[k - 1] + a * held) / (1 + a)
    return filtered


def test_per_joint_gains_follow_first_order():
    """Each coordinate's estimate is ``J^T w`` through ``dr/dt = K_j (J^T w - r)`` with its own gain ``K_j``."""
    robot = drive_robot()
    gains = np.array([20.0, 40.0, 60.0, 80.0, 100.0, 120.0])
    t, estimate, truth = simulate(robot, gains, duration=0.4, wrench_on=0.2)
    error = np.abs(estimate - first_order(truth, gains)).max(axis=0) / np.abs(truth).max(axis=0)
    assert error.max() < 0.01, error  # each coordinate within 1% of its own J^T w (a swapped gain: 10% or more)


def test_floating_base():
    """A free-floating arm (gravity on, joints driven, viscous friction): the 6 base coordinates estimate the
    wrench's load on the base, the joints theirs; each within 1% of ``J^T w`` through the first-order filter."""
    robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
    robot = robot.with_drive(armature=[0.3, 0.3, 0.2, 0.05, 0.05, 0.05], damping=[0.5] * 6)
    gain = 150.0
    t, estimate, truth = simulate(robot, gain, duration=0.3, wrench_on=0.1, floating=True)
    assert np.abs(estimate[t < 0.1]).max() < 0.005
    error = np.abs(estimate - first_order(truth, gain)).max(axis=0) / np.abs(truth).max(axis=0)
    assert error.max() < 0.01, error


def test_collision_flag():
    robot = drive_robot()
    q, qd = HOME, np.zeros(6)
    observer = rd.MomentumObserver(robot, 50.0, thresholds=[5.0, 5.0, 5.0, 1.0, 1.0, 1.0])
    tau = rd.inverse_dynamics(robot, q, qd, np.zeros(6)).torques
    observer.update(q, qd, tau, DT)
    assert not observer.in_collision and not observer.collision.any()
    for _ in range(200):  # standing still, with 2 N m less than gravity needs on joint 4: something holds it
        r = observer.update(q, qd, tau - np.array([0, 0, 0, 2.0, 0, 0]), DT)
    np.testing.assert_allclose(r, [0, 0, 0, 2.0 * (1 - np.exp(-50 * 0.2)), 0, 0], atol=1e-3)
    assert observer.in_collision and observer.collision.tolist() == [False, False, False, True, False, False]
    observer.reset()
    assert not observer.in_collision and observer.update(q, qd, tau, DT).tolist() == [0.0] * 6


@pytest.mark.parametrize("gain", [0.0, -1.0, float("nan"), float("inf"), [1.0, 2.0], [1, 1, 1, 1, 1, 0]])
def test_bad_gains_refused(gain):
    robot = drive_robot()
    with pytest.raises(rd.StateError, match="observer gain") as caught:
        rd.MomentumObserver(robot, gain)
    assert "\n" not in str(caught.value)


def test_bad_updates_refused():
    robot = drive_robot()
    observer = rd.MomentumObserver(robot, 10.0)
    q, qd = sweep(0.0)[:2]
    observer.update(q, qd, np.zeros(6), 0.0)  # the first update's dt is ignored
    for tau, dt, match in ((np.zeros(5), DT, "tau must be 6"), ([np.nan] * 6, DT, "tau must be 6"),
                           (np.zeros(6), 0.0, "dt must be"), (np.zeros(6), float("nan"), "dt must be")):
        with pytest.raises(rd.StateError, match=match):
            observer.update(q, qd, tau, dt)
    with pytest.raises(rd.StateError, match="thresholds"):
        rd.MomentumObserver(robot, 10.0, thresholds=-1.0)
