"""Robots and configurations with joints of several coordinates for the tests of the Coriolis matrix, the torque
regressor and the torque rate (``test_*_floating.py``) and of bad calls: example-robot-data robots to put on a
free-flyer, a small tree of planar, spherical, revolute and prismatic joints built the same way here and in Pinocchio,
and random configurations on the joints' groups."""
import numpy as np
import pinocchio as pin

import oracle
import rne_dynamics as rd

FRAGMENTS = [
    "ur_description/urdf/ur5_robot.urdf", "panda_description/urdf/panda.urdf", "talos_data/robots/talos_reduced.urdf",
    "anymal_c_simple_description/urdf/anymal.urdf", "icub_description/robots/icub_reduced.urdf",
    "solo_description/robots/solo12.urdf", "go1_description/urdf/go1.urdf", "romeo_description/urdf/romeo_small.urdf",
    "human_description/robots/human.urdf", "centauro_description/urdf/centauro.urdf",
    "g1_description/urdf/g1_29dof_rev_1_0.urdf", "double_pendulum_description/urdf/double_pendulum_continuous.urdf",
    "baxter_description/urdf/baxter.urdf", "pr2_description/urdf/pr2.urdf",
]
PATHS = [oracle.robot_path(f) for f in FRAGMENTS]
IDS = [f.split("/")[0].replace("_description", "") + "/" + f.rsplit("/", 1)[1] for f in FRAGMENTS]


def random_configuration(robot, rng):
    """Within the joint limits (±pi where unbounded or placeholders), random unit quaternions."""
    lo, hi = robot.position_limits.T
    q = rng.uniform(np.where(lo > -2 * np.pi, lo, -np.pi), np.where(hi < 2 * np.pi, hi, np.pi))
    for start in robot.quaternions:
        q[start:start + 4] /= np.linalg.norm(q[start:start + 4])
    return q


# ---------------------------------------------------------------- a small tree of planar and spherical joints

def _link(name, mass, com, inertia):
    return (f'<link name="{name}"><inertial><origin xyz="{" ".join(map(str, com))}"/><mass value="{mass}"/>'
            '<inertia ixx="{}" ixy="{}" ixz="{}" iyy="{}" iyz="{}" izz="{}"/></inertial></link>'.format(*inertia))


LINKS = {  # mass, com, (ixx ixy ixz iyy iyz izz) about the com
    "base": (3.0, (0.02, -0.01, 0.05), (0.3, 0.01, -0.02, 0.4, 0.03, 0.5)),
    "a": (2.0, (0.1, 0.2, -0.1), (0.3, 0.01, 0.02, 0.4, 0.03, 0.5)),
    "b": (1.5, (0.05, -0.1, 0.2), (0.2, 0.01, -0.02, 0.3, 0.01, 0.25)),
    "c": (0.8, (0.2, 0.0, 0.05), (0.05, -0.01, 0.0, 0.08, 0.02, 0.06)),
    "d": (1.2, (-0.1, 0.1, 0.1), (0.1, 0.0, 0.01, 0.12, -0.02, 0.09)),
    "e": (0.6, (0.0, 0.05, -0.15), (0.04, 0.005, 0.0, 0.03, 0.0, 0.05)),
    "f": (0.4, (0.03, 0.03, 0.03), (0.02, 0.0, 0.001, 0.02, 0.0, 0.01)),
}
JOINTS = [  # name, type, parent, child, xyz, rpy, axis
    ("plane", "planar", "base", "a", (0.1, 0.2, 0.3), (0.1, 0.2, 0.3), (0, 0, 1)),
    ("ball", "spherical", "a", "b", (0.3, -0.1, 0.2), (0.4, -0.2, 0.1), None),
    ("hinge", "revolute", "b", "c", (0.0, 0.2, 0.25), (0.0, 0.3, 0.0), (0.6, 0.0, 0.8)),
    ("slide", "prismatic", "a", "d", (-0.2, 0.1, 0.0), (0.2, 0.0, -0.5), (0, 1, 0)),
    ("ball2", "spherical", "d", "e", (0.0, 0.0, -0.3), (0.0, 0.0, 0.0), None),
    ("elbow", "revolute", "e", "f", (0.1, 0.0, -0.2), (-0.3, 0.1, 0.2), (1, 0, 0)),
]


def tree_urdf():
    joints = "".join(
        f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{" ".join(map(str, xyz))}" rpy="{" ".join(map(str, rpy))}"/>'
        + (f'<axis xyz="{" ".join(map(str, axis))}"/>' if axis else "")
        + ('<limit lower="-2" upper="2" effort="10" velocity="5"/>' if kind in ("revolute", "prismatic") else "")
        + "</joint>" for name, kind, parent, child, xyz, rpy, axis in JOINTS)
    return f'<robot name="tree">{"".join(_link(n, *v) for n, v in LINKS.items())}{joints}</robot>'


def tree_model(floating_base):
    """The same tree built by hand in Pinocchio (its URDF reader knows no spherical joint)."""
    def inertia(link):
        mass, com, (xx, xy, xz, yy, yz, zz) = LINKS[link]
        return pin.Inertia(mass, np.array(com), np.array([[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]))

    model = pin.Model()
    ids = {"base": 0}
    if floating_base:
        ids["base"] = model.addJoint(0, pin.JointModelFreeFlyer(), pin.SE3.Identity(), "root_joint")
        model.appendBodyToJoint(ids["base"], inertia("base"), pin.SE3.Identity())
    for name, kind, parent, child, xyz, rpy, axis in JOINTS:
        joint = {"planar": pin.JointModelPlanar, "spherical": pin.JointModelSpherical}.get(kind)
        if joint is not None:
            joint = joint()
        elif kind == "revolute":
            joint = pin.JointModelRevoluteUnaligned(np.array(axis, float) / np.linalg.norm(axis))
        else:
            joint = pin.JointModelPrismaticUnaligned(np.array(axis, float))
        placement = pin.SE3(pin.rpy.rpyToMatrix(*rpy), np.array(xyz, float))
        ids[child] = model.addJoint(ids[parent], joint, placement, name)
        model.appendBodyToJoint(ids[child], inertia(child), pin.SE3.Identity())
    return model


def tree_pair(floating_base):
    return rd.load_urdf(tree_urdf(), floating_base=floating_base), tree_model(floating_base)
