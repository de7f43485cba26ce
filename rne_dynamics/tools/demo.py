"""The library's main job on the bundled arm: torques, gravity torques and joint wrenches along a sample motion."""
import numpy as np

from ..robots import DEFAULT_ROBOT
from ..algorithms.rnea import inverse_dynamics
from .inspect_robot import load_robot, print_warnings


def sample_motion(robot, duration=2.0, samples=5):
    """A smooth motion: each joint swings ``0.5 sin(2 pi t / duration + k)``, with exact derivatives."""
    t = np.linspace(0.0, duration, samples)
    w = 2 * np.pi / duration
    phase = w * t[:, None] + np.arange(robot.dof)
    return t, 0.5 * np.sin(phase), 0.5 * w * np.cos(phase), -0.5 * w * w * np.sin(phase)


def run(urdf=DEFAULT_ROBOT, print_=print, **source):
    """``source``: :func:`load_urdf`'s keywords (xacro arguments, package paths, locked joints, check_inertia)."""
    robot = load_robot(urdf, **source)
    print_warnings("demo", robot)
    t, q, qd, qdd = sample_motion(robot)
    loads = inverse_dynamics(robot, q, qd, qdd)
    gravity = inverse_dynamics(robot, q, np.zeros_like(q), np.zeros_like(q)).torques
    print_(f"{robot.name}: {robot.dof} joints, {robot.total_mass:.2f} kg moving; gravity (0, 0, -9.81) m/s^2")
    widths = [max(len(name), 9) + 2 for name in robot.joint_names]
    header = "".join(f"{name:>{w}}" for name, w in zip(robot.joint_names, widths))
    for label, values in (("torque [N m]", loads.torques), ("gravity [N m]", gravity)):
        print_(f"\n{label:<14}{header}")
        for k in range(len(t)):
            print_(f"t = {t[k]:4.2f} s    " + "".join(f"{x + 0.0:{w}.3f}" for x, w in zip(values[k], widths)))
    print_(f"\njoint wrenches at t = {t[-1]:.2f} s  [fx fy fz (N) | tx ty tz (N m)], child-link frame, about the joint")
    for name, w in zip(robot.joint_names, loads.joint_wrenches[-1]):
        print_(f"{name:<{max(widths)}}" + "".join(f"{x:10.2f}" for x in w[:3]) + "  |"
               + "".join(f"{x:9.2f}" for x in w[3:]))
    return 0
