"""``rne-dynamics flexible``: the bundled arm with elastic joints follows a fast trajectory open loop, once under the
rigid robot's torques and once under the exact flexible feedforward (:func:`rne_dynamics.flexible_feedforward`);
prints the worst link errors and writes a PNG of both errors over time.

The elastic joints are the shoulder and elbow (``K`` = 3000 N m/rad, a 1e-4 kg m^2 motor behind a 100:1 gear:
``B`` = 1 kg m^2 at the joint, no spring damping); every joint follows ``q_c + 0.3 sin(2 pi t + phase)``; the
motor-link model is integrated by RK4 at 0.5 ms from the feedforward's consistent initial state.
"""
import numpy as np

from ..robots import bundled_robot_path

STIFFNESS, MOTOR_INERTIA, GEAR_RATIO = 3000.0, 1e-4, 100.0
AMPLITUDE, FREQUENCY, DURATION, STEP = 0.3, 1.0, 2.0, 5e-4


def elastic_arm(rd):
    """The bundled arm with its shoulder and elbow elastic."""
    robot = rd.load_urdf(bundled_robot_path())
    elastic = robot.joint_names[1:3]
    return robot.with_drive(stiffness=dict.fromkeys(elastic, STIFFNESS),
                            motor_inertia=dict.fromkeys(elastic, MOTOR_INERTIA),
                            gear_ratio=dict.fromkeys(elastic, GEAR_RATIO))


def sinusoid(q_center, amplitude, omega):
    """``q(t) = q_c + A sin(omega t + phase)`` per joint (phases spread over one radian): ``at(t)`` gives ``q`` and
    its four time derivatives for a batch of times."""
    phase = np.linspace(0.0, 1.0, len(q_center))

    def at(t):
        t = np.asarray(t, float)[..., None]
        s, c = np.sin(omega * t + phase), np.cos(omega * t + phase)
        return (q_center + amplitude * s, amplitude * omega * c, -amplitude * omega ** 2 * s,
                -amplitude * omega ** 3 * c, amplitude * omega ** 4 * s)
    return at


def tracking_errors(rd, robot, desired, rigid):
    """``(t, |q - q_desired|)`` of the open-loop motor-link simulation under the exact feedforward (or the rigid
    torques), from the feedforward's consistent initial state."""
    stages = STEP / 2 * np.arange(int(round(2 * DURATION / STEP)) + 1)  # RK4 stage times
    feedforward = rd.flexible_feedforward(robot, *desired(stages))
    torques = rd.inverse_dynamics(robot, *desired(stages)[:3]).torques if rigid else feedforward.motor_torques
    q, qd = (x[0] for x in desired(stages[:1])[:2])
    result = rd.flexible_simulate(robot, q, qd, feedforward.motor_positions[0], feedforward.motor_velocities[0],
                                  lambda t: torques[int(round(t / (STEP / 2)))], DURATION, STEP)
    return result.t, np.abs(result.q - desired(result.t)[0])


def run(output="rne_flexible.png", out=print):
    """Simulate both feedforwards, print the worst errors, write ``output``. Returns the exit code."""
    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    import rne_dynamics as rd
    robot = elastic_arm(rd)
    center = np.mean(np.clip(robot.position_limits, -1.5, 1.5), axis=1)
    desired = sinusoid(center, AMPLITUDE, 2 * np.pi * FREQUENCY)
    figure, axes = pyplot.subplots(figsize=(8, 4.5))
    out(f"bundled arm, elastic {', '.join(robot.elastic_joints)} (K {STIFFNESS:g} N m/rad, B "
        f"{MOTOR_INERTIA * GEAR_RATIO ** 2:g} kg m^2), {FREQUENCY:g} Hz {AMPLITUDE:g} rad sinusoid, {DURATION:g} s, "
        f"RK4 {STEP * 1e3:g} ms, open loop")
    for rigid, label in ((True, "rigid feedforward"), (False, "exact flexible feedforward")):
        t, error = tracking_errors(rd, robot, desired, rigid)
        worst = error.max(axis=1)
        axes.semilogy(t, np.maximum(worst, 1e-16), label=f"{label} (worst {worst.max():.1e} rad)")
        out(f"  {label:<28} worst link error {worst.max():.2e} rad")
    axes.set_xlabel("time [s]")
    axes.set_ylabel("worst link error [rad]")
    axes.set_title("Elastic shoulder and elbow: link tracking, open loop")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend()
    figure.tight_layout()
    figure.savefig(output, dpi=100)
    out(f"wrote {output}")
    return 0
