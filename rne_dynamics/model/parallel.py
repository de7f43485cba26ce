"""Builders of closed-chain mechanisms as a URDF spanning tree plus a loop description (:mod:`.loops`): a planar
four-bar and five-bar, a delta robot (3-RUU, the kinematic model of the parallelogram forearms) and a Gough-Stewart
platform (6-UPS). Each is laid out in an assembled reference configuration with every link frame aligned with the
world, so that ``q = 0`` closes every loop; links are uniform rods (``I = m L^2 / 12`` across the rod).
"""
from typing import NamedTuple

import numpy as np


class Mechanism(NamedTuple):
    """A closed-chain robot: its URDF tree (``urdf`` text) and loop description (``loops``, the loop file's
    dict). ``load()`` gives the :class:`~rne_dynamics.model.robot.Robot`."""
    urdf: str
    loops: dict

    def load(self):
        from .urdf import load_urdf
        return load_urdf(self.urdf, loops=self.loops)

    def loops_yaml(self):
        """The loop file's YAML text."""
        import yaml
        return yaml.safe_dump(self.loops, sort_keys=False)


def _rod(mass, start, end, radius=0.01):
    """``(mass, com, inertia6)`` of a uniform rod from ``start`` to ``end`` (link frame)."""
    start, end = np.asarray(start, float), np.asarray(end, float)
    axis = end - start
    length = np.linalg.norm(axis)
    u = axis / length if length > 0 else np.array([1.0, 0.0, 0.0])
    I = mass * length ** 2 / 12.0 * (np.eye(3) - np.outer(u, u)) + mass * radius ** 2 / 2.0 * np.outer(u, u)
    return mass, (start + end) / 2.0, I[[0, 0, 0, 1, 1, 2], [0, 1, 2, 1, 2, 2]]


def _disc(mass, radius):
    """A uniform disc in the xy-plane about its centre, ``(mass, com, inertia6)``."""
    return mass, np.zeros(3), (mass * radius ** 2 / 4, 0.0, 0.0, mass * radius ** 2 / 4, 0.0, mass * radius ** 2 / 2)


def _vec(x):
    return " ".join(f"{float(v):.17g}" for v in x)


def _urdf(name, links, joints):
    """URDF text: ``links`` ``{name: (mass, com, inertia6) or None}``, ``joints`` ``[(name, type, parent, child,
    xyz, axis)]`` (every frame world-aligned at ``q = 0``, so no rpy)."""
    out = [f'<robot name="{name}">']
    for link, inertial in links.items():
        if inertial is None:
            out.append(f'<link name="{link}"/>')
            continue
        mass, com, (ixx, ixy, ixz, iyy, iyz, izz) = inertial
        out.append(f'<link name="{link}"><inertial><origin xyz="{_vec(com)}"/><mass value="{mass:.17g}"/>'
                   f'<inertia ixx="{ixx:.17g}" ixy="{ixy:.17g}" ixz="{ixz:.17g}" iyy="{iyy:.17g}" iyz="{iyz:.17g}" '
                   f'izz="{izz:.17g}"/></inertial></link>')
    for joint, kind, parent, child, xyz, axis in joints:
        body = f'<parent link="{parent}"/><child link="{child}"/><origin xyz="{_vec(xyz)}"/>'
        if axis is not None:
            body += f'<axis xyz="{_vec(axis)}"/>'
        if kind in ("revolute", "prismatic"):
            body += '<limit lower="-3.1" upper="3.1" effort="1000" velocity="10"/>'
        out.append(f'<joint name="{joint}" type="{kind}">{body}</joint>')
    return "\n".join(out + ["</robot>"])


def _circle_intersection(c1, r1, c2, r2, side):
    """A point at ``r1`` from ``c1`` and ``r2`` from ``c2`` in the xy-plane (``side`` +1/-1 picks which)."""
    d = np.linalg.norm(c2 - c1)
    a = (r1 ** 2 - r2 ** 2 + d ** 2) / (2 * d)
    h = np.sqrt(max(r1 ** 2 - a ** 2, 0.0))
    e = (c2 - c1) / d
    return c1 + a * e + side * h * np.array([-e[1], e[0], 0.0])


def four_bar(ground=0.4, crank=0.1, coupler=0.35, rocker=0.3, masses=(1.0, 2.0, 1.5), crank_angle=np.pi / 3,
             cut="revolute", elbow=-1):
    """A planar four-bar in the xy-plane, joints about z: the crank (``crank`` joint, actuated) turns about the
    origin, the rocker about ``(ground, 0, 0)``; the tree's joints are ``crank``, ``crank_coupler``, ``rocker``;
    the loop is cut at the coupler-rocker pin (``cut``: ``revolute`` or ``point``). ``q = 0`` is the assembled pose
    with the crank at ``crank_angle`` and the coupler-rocker pin on the ``elbow`` side (+1: left of the line from
    the crank pin to the rocker's pivot)."""
    O2, O4 = np.zeros(3), np.array([ground, 0.0, 0.0])
    A = crank * np.array([np.cos(crank_angle), np.sin(crank_angle), 0.0])
    B = _circle_intersection(A, coupler, O4, rocker, elbow)
    links = {"ground": None, "crank": _rod(masses[0], np.zeros(3), A), "coupler": _rod(masses[1], np.zeros(3), B - A),
             "rocker": _rod(masses[2], np.zeros(3), B - O4)}
    z = (0, 0, 1)
    joints = [("crank", "revolute", "ground", "crank", O2, z), ("crank_coupler", "revolute", "crank", "coupler", A, z),
              ("rocker", "revolute", "ground", "rocker", O4, z)]
    loop = {"name": "coupler_rocker", "kind": cut, "link_a": "coupler", "xyz_a": (B - A).tolist(), "link_b": "rocker",
            "xyz_b": (B - O4).tolist()}
    if cut == "revolute":
        loop["axis"] = [0, 0, 1]
    return Mechanism(_urdf("four_bar", links, joints), {"actuated": ["crank"], "loops": [loop]})


def five_bar(base=0.2, proximal=0.25, distal=0.3, masses=(1.0, 0.8), tip=(0.0, 0.4), cut="revolute"):
    """A planar five-bar in the xy-plane: motors ``motor_left`` and ``motor_right`` at ``(-/+ base/2, 0)`` turn
    proximal links of length ``proximal``; distal links (``elbow_left``, ``elbow_right``) of length ``distal`` meet
    at the tip, the cut (``revolute`` about z, or ``point``); ``q = 0`` has the tip at ``tip``, elbows outward."""
    P = np.array([tip[0], tip[1], 0.0])
    sides = {}
    for side, sign in (("left", -1.0), ("right", 1.0)):
        O = np.array([sign * base / 2, 0.0, 0.0])
        E = _circle_intersection(O, proximal, P, distal, -sign)
        sides[side] = O, E
    links = {"ground": None}
    joints = []
    z = (0, 0, 1)
    for side, (O, E) in sides.items():
        links[f"proximal_{side}"] = _rod(masses[0], np.zeros(3), E - O)
        links[f"distal_{side}"] = _rod(masses[1], np.zeros(3), P - E)
        joints += [(f"motor_{side}", "revolute", "ground", f"proximal_{side}", O, z),
                   (f"elbow_{side}", "revolute", f"proximal_{side}", f"distal_{side}", E - O, z)]
    loop = {"name": "tip", "kind": cut, "link_a": "distal_left", "xyz_a": (P - sides["left"][1]).tolist(),
            "link_b": "distal_right", "xyz_b": (P - sides["right"][1]).tolist()}
    if cut == "revolute":
        loop["axis"] = [0, 0, 1]
    return Mechanism(_urdf("five_bar", links, joints), {"actuated": ["motor_left", "motor_right"], "loops": [loop]})


def delta_robot(base_radius=0.2, platform_radius=0.05, arm=0.2, forearm=0.45, arm_angle=np.pi / 6,
                masses=(0.3, 0.2, 0.5), joint_mass=0.01):
    """A delta robot as a 3-RUU mechanism (the kinematic model of the parallelogram forearms): motors ``motor_i``
    about the base tangent ``t_i`` at radius ``base_radius``, arms of length ``arm``, universal joints (axes ``t_i``
    then ``n_i``) at the elbow and (``n_i`` then ``t_i``) at the platform (radius ``platform_radius``), forearms of
    length ``forearm``; masses ``(arm, forearm, platform)``, ``joint_mass`` for the cross pieces. Leg 1 carries the
    platform; legs 2 and 3 are cut at the platform's last revolute (``leg_2``, ``leg_3``, revolute about ``t_i``).
    ``q = 0`` has each arm ``arm_angle`` below the horizontal."""
    e = [np.array([np.cos(a), np.sin(a), 0.0]) for a in 2 * np.pi * np.arange(3) / 3]
    z = np.array([0.0, 0.0, 1.0])
    h = arm * np.sin(arm_angle) + np.sqrt(forearm ** 2 - (base_radius - platform_radius + arm * np.cos(arm_angle)) ** 2)
    p0 = -h * z
    links = {"base": None, "platform": _disc(masses[2], platform_radius)}
    joints, loops = [], []
    for i, ei in enumerate(e, start=1):
        t = np.cross(z, ei)
        B = base_radius * ei
        E = B + arm * (np.cos(arm_angle) * ei - np.sin(arm_angle) * z)
        P = p0 + platform_radius * ei
        n = np.cross(t, P - E)
        n /= np.linalg.norm(n)
        small = _rod(joint_mass, np.zeros(3), 0.02 * n)
        links[f"arm_{i}"] = _rod(masses[0], np.zeros(3), E - B)
        links[f"elbow_{i}"] = small
        links[f"forearm_{i}"] = _rod(masses[1], np.zeros(3), P - E)
        links[f"wrist_{i}"] = small
        joints += [(f"motor_{i}", "revolute", "base", f"arm_{i}", B, t),
                   (f"elbow_{i}_t", "revolute", f"arm_{i}", f"elbow_{i}", E - B, t),
                   (f"elbow_{i}_n", "revolute", f"elbow_{i}", f"forearm_{i}", np.zeros(3), n),
                   (f"wrist_{i}_n", "revolute", f"forearm_{i}", f"wrist_{i}", P - E, n)]
        if i == 1:
            joints.append(("wrist_1_t", "revolute", "wrist_1", "platform", p0 - P, t))
        else:
            loops.append({"name": f"leg_{i}", "kind": "revolute", "link_a": f"wrist_{i}", "xyz_a": [0.0, 0.0, 0.0],
                          "link_b": "platform", "xyz_b": (P - p0).tolist(), "axis": t.tolist()})
    return Mechanism(_urdf("delta", links, joints), {"actuated": ["motor_1", "motor_2", "motor_3"], "loops": loops})


def gough_stewart(base_radius=0.5, platform_radius=0.3, base_spread=np.radians(15), platform_spread=np.radians(15),
                  height=0.8, masses=(2.0, 1.0, 10.0), cardan_mass=0.05, ball="spherical"):
    """A Gough-Stewart platform (6-UPS): leg ``i`` is a universal joint at the base anchor ``B_i`` (radius
    ``base_radius``, pairs at ``+/- base_spread`` about 0, 120 and 240 degrees), a cylinder, the actuated
    prismatic joint ``leg_i`` (extension from the reference length) and a piston ending at the platform anchor
    ``P_i`` (radius ``platform_radius``, pairs about 60, 180 and 300 degrees) with a spherical joint. The platform
    (link ``platform``, its frame at the platform's centre, ``height`` above the base at ``q = 0``) hangs on leg 1's
    spherical joint; legs 2-6 are cut there (``point`` closures ``leg_2`` ... ``leg_6``). ``masses``: ``(cylinder,
    piston, platform)``; ``cardan_mass`` for the universal joints' cross pieces. ``ball="gimbal"`` makes leg 1's
    spherical joint three revolute joints about x, y, z (``ball_1_x``, ``ball_1_y``, ``ball_1_z``; singular when
    the platform pitches by 90 degrees): every joint then has one coordinate, as a ``JointState`` and the nodes
    want."""
    angles_b = np.concatenate([[a - base_spread, a + base_spread] for a in np.radians([0, 120, 240])])
    angles_p = np.concatenate([[a - platform_spread, a + platform_spread] for a in np.radians([60, 180, 300])])
    angles_p = np.roll(angles_p, 1)  # leg i joins B_i to the nearest platform anchor
    B = [base_radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in angles_b]
    p0 = np.array([0.0, 0.0, height])
    P = [p0 + platform_radius * np.array([np.cos(a), np.sin(a), 0.0]) for a in angles_p]
    z = np.array([0.0, 0.0, 1.0])
    links = {"base": None, "platform_ball": None}
    joints, loops = [], []
    for i in range(6):
        k = i + 1
        u = (P[i] - B[i]) / np.linalg.norm(P[i] - B[i])
        L0 = np.linalg.norm(P[i] - B[i])
        a1 = np.cross(z, u)
        a1 /= np.linalg.norm(a1)
        a2 = np.cross(u, a1)
        links[f"cardan_{k}"] = _rod(cardan_mass, -0.02 * a1, 0.02 * a1)
        links[f"cylinder_{k}"] = _rod(masses[0], np.zeros(3), 0.5 * L0 * u, 0.03)
        links[f"piston_{k}"] = _rod(masses[1], 0.5 * L0 * u, L0 * u, 0.02)
        joints += [(f"universal_{k}_a", "revolute", "base", f"cardan_{k}", B[i], a1),
                   (f"universal_{k}_b", "revolute", f"cardan_{k}", f"cylinder_{k}", np.zeros(3), a2),
                   (f"leg_{k}", "prismatic", f"cylinder_{k}", f"piston_{k}", np.zeros(3), u)]
        if k == 1:  # the spherical joint at P_1; the platform's frame at its centre, fixed to it
            if ball == "gimbal":
                links["gimbal_x"], links["gimbal_y"] = (_rod(cardan_mass, -0.02 * a, 0.02 * a) for a in np.eye(3)[:2])
                joints += [("ball_1_x", "revolute", "piston_1", "gimbal_x", P[0] - B[0], (1, 0, 0)),
                           ("ball_1_y", "revolute", "gimbal_x", "gimbal_y", np.zeros(3), (0, 1, 0)),
                           ("ball_1_z", "revolute", "gimbal_y", "platform_ball", np.zeros(3), (0, 0, 1))]
            else:
                joints.append(("ball_1", "spherical", "piston_1", "platform_ball", P[0] - B[0], None))
            joints.append(("platform_centre", "fixed", "platform_ball", "platform", p0 - P[0], None))
        else:
            loops.append({"name": f"leg_{k}", "kind": "point", "link_a": f"piston_{k}", "xyz_a": (L0 * u).tolist(),
                          "link_b": "platform", "xyz_b": (P[i] - p0).tolist()})
    links["platform"] = _disc(masses[2], platform_radius)
    return Mechanism(_urdf("gough_stewart", links, joints),
                     {"actuated": [f"leg_{k}" for k in range(1, 7)], "loops": loops})

