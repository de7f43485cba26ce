"""Property-based fuzzing of the URDF model and the inverse dynamics (hypothesis; profiles in conftest.py).

(a) Random valid trees (random depth and branching; revolute, continuous, prismatic and fixed joints; random axes,
origins and physical inertias; massless links; mimic joints; joint friction) written as URDF text, loaded by
``rd.load_urdf`` and by Pinocchio: torques and joint wrenches agree to 1e-9 relative; the static joint forces carry
the weight of their subtrees; a joint wrench's component along its axis is the joint's torque less its friction.
(b) Random mutations of valid URDF texts (elements deleted, duplicated or renamed, attributes deleted or changed to
odd values, text truncated or spliced): ``rd.load_urdf`` either loads a robot whose dynamics run, or raises
``rd.URDFError``; any other exception is a bug.
"""
import copy
import math
import warnings
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np
import pinocchio as pin
from hypothesis import event, given, note
from hypothesis import strategies as st

import oracle
import rne_dynamics as rd
from rne_dynamics.robots import default_robot_path

TOLERANCE = 1e-9
UNIT_AXES = [(1, 0, 0), (0, 1, 0), (0, 0, 1), (-1, 0, 0), (0, -1, 0), (0, 0, -1)]


def reals(low, high):
    """Finite floats in ``[low, high]``, no subnormals (URDF parsers disagree on ``5e-324``)."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)


def triple(values):
    return st.tuples(values, values, values)


def text3(values):
    return " ".join(repr(float(x)) for x in values)


# --- (a) random valid trees --------------------------------------------------------------------------------------

@dataclass
class LinkSpec:
    mass: float          # 0: no <inertial>
    com: tuple
    rpy: tuple
    moments: tuple       # principal moments of a solid box, so the triangle inequality holds


@dataclass
class JointSpec:
    parent: int          # index of the parent link; the child is link (index of this joint + 1)
    kind: str
    axis: tuple          # unit
    xyz: tuple
    rpy: tuple
    mimic: tuple = None  # (source joint index, multiplier, offset)
    damping: float = 0.0
    friction: float = 0.0


@st.composite
def links(draw):
    if draw(st.integers(0, 5)) == 0:
        return LinkSpec(0.0, (0, 0, 0), (0, 0, 0), (0, 0, 0))
    mass = draw(reals(0.01, 10.0))
    a, b, c = draw(triple(reals(0.01, 1.0)))
    moments = (mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + b * b) / 12)
    return LinkSpec(mass, draw(triple(reals(-0.3, 0.3))), draw(triple(reals(-math.pi, math.pi))), moments)


@st.composite
def axes(draw):
    if draw(st.booleans()):
        return draw(st.sampled_from(UNIT_AXES))
    polar, azimuth = draw(reals(0, math.pi)), draw(reals(-math.pi, math.pi))
    return (math.sin(polar) * math.cos(azimuth), math.sin(polar) * math.sin(azimuth), math.cos(polar))


@st.composite
def trees(draw, max_links=10):
    """``(links, joints)``: link 0 is the root, joint k joins link ``joints[k].parent`` to link ``k + 1``."""
    count = draw(st.integers(2, max_links))
    link_specs = [draw(links()) for _ in range(count)]
    joints = []
    for child in range(1, count):
        parent = draw(st.one_of(st.just(child - 1), st.integers(0, child - 1)))  # chains and bushes
        joint = JointSpec(parent, draw(st.sampled_from(["revolute", "continuous", "prismatic", "fixed"])),
                          draw(axes()), draw(triple(reals(-0.5, 0.5))), draw(triple(reals(-math.pi, math.pi))))
        sources = [k for k in ancestor_joints(joints, parent)
                   if joints[k].kind in ("revolute", "prismatic") and joints[k].mimic is None]
        # Pinocchio mimics only revolute/prismatic joints already in its tree (so: ancestors), not mimics of mimics
        if joint.kind in ("revolute", "prismatic") and sources and draw(st.integers(0, 3)) == 0:
            joint.mimic = (draw(st.sampled_from(sources)), draw(reals(-2, 2)), draw(reals(-0.5, 0.5)))
        elif joint.kind != "fixed" and draw(st.booleans()):
            joint.damping, joint.friction = draw(reals(0, 2)), draw(reals(0, 2))
        joints.append(joint)
    return link_specs, joints


def ancestor_joints(joints, link):
    """Indices of the joints on the path from ``link`` up to the root."""
    out = []
    while link > 0:
        out.append(link - 1)
        link = joints[link - 1].parent
    return out


def tree_urdf(link_specs, joints):
    parts = ['<robot name="fuzz">']
    for k, spec in enumerate(link_specs):
        if spec.mass == 0:
            parts.append(f'<link name="l{k}"/>')
            continue
        ixx, iyy, izz = spec.moments
        parts.append(f'<link name="l{k}"><inertial><origin xyz="{text3(spec.com)}" rpy="{text3(spec.rpy)}"/>'
                     f'<mass value="{spec.mass!r}"/><inertia ixx="{ixx!r}" ixy="0" ixz="0" iyy="{iyy!r}" iyz="0" '
                     f'izz="{izz!r}"/></inertial></link>')
    for k, joint in enumerate(joints):
        extra = ""
        if joint.kind in ("revolute", "prismatic"):
            extra += '<limit lower="-2" upper="2" effort="100" velocity="3"/>'
        if joint.mimic is not None:
            source, multiplier, offset = joint.mimic
            extra += f'<mimic joint="j{source}" multiplier="{multiplier!r}" offset="{offset!r}"/>'
        if joint.damping or joint.friction:
            extra += f'<dynamics damping="{joint.damping!r}" friction="{joint.friction!r}"/>'
        parts.append(f'<joint name="j{k}" type="{joint.kind}"><parent link="l{joint.parent}"/>'
                     f'<child link="l{k + 1}"/><origin xyz="{text3(joint.xyz)}" rpy="{text3(joint.rpy)}"/>'
                     f'<axis xyz="{text3(joint.axis)}"/>{extra}</joint>')
    return "".join(parts) + "</robot>"


def record_features(joints):
    """Hypothesis events (shown by --hypothesis-show-statistics): how often each feature was exercised."""
    for kind in ("revolute", "continuous", "prismatic", "fixed"):
        if any(joint.kind == kind for joint in joints):
            event(f"has {kind} joints")
    if any(joint.mimic is not None for joint in joints):
        event("has mimic joints")
    if len({joint.parent for joint in joints}) < len(joints):
        event("branches")


def load_quietly(source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", rd.ModelWarning)  # massless subtrees are expected here
        return rd.load_urdf(source)


def subtree_mass(link_specs, joints, link):
    children = [k + 1 for k, joint in enumerate(joints) if joint.parent == link]
    return link_specs[link].mass + sum(subtree_mass(link_specs, joints, child) for child in children)


@given(tree=trees(), seed=st.integers(0, 2 ** 32 - 1), gravity=triple(reals(-15, 15)))
def test_random_tree_agrees_with_pinocchio(tree, seed, gravity):
    source = tree_urdf(*tree)
    note(source)
    record_features(tree[1])
    robot = load_quietly(source)
    if robot.dof == 0:  # every joint fixed: nothing to compare (oracle.Mapping needs a joint)
        assert rd.inverse_dynamics(robot, np.zeros(0), np.zeros(0), np.zeros(0)).joint_wrenches.shape == (0, 6)
        return
    model = pin.buildModelFromXML(source, mimic=True)
    model.gravity = pin.Motion(np.concatenate([gravity, np.zeros(3)]))
    mapping = oracle.Mapping(robot, model)
    q, qd, qdd = oracle.random_states(robot, 3, seed=seed, scale=2.0)
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity)
    data = model.createData()
    for n in range(len(q)):
        tau = mapping.ours(pin.rnea(model, data, mapping.q(q[n]), mapping.v(qd[n]), mapping.v(qdd[n])))
        tau += mapping.drive_torques(qd[n])
        assert oracle.relative_error(result.torques[n], tau) < TOLERANCE, f"state {n} torques"
        assert oracle.relative_error(result.joint_wrenches[n], mapping.joint_wrenches(data)) < TOLERANCE, \
            f"state {n} joint wrenches"


@given(tree=trees(), seed=st.integers(0, 2 ** 32 - 1), gravity=triple(reals(-15, 15)))
def test_random_tree_invariants(tree, seed, gravity):
    link_specs, joints = tree
    source = tree_urdf(link_specs, joints)
    note(source)
    robot = load_quietly(source)
    index = {f"j{k}": k for k in range(len(joints))}
    movable = [index[name] for name in robot.joint_names]
    assert len(movable) == sum(j.kind != "fixed" and j.mimic is None for j in joints)
    q, qd, qdd = (x[0] for x in oracle.random_states(robot, 1, seed=seed, scale=2.0))
    g = np.array(gravity)

    # Held still, each joint carries the weight of everything beyond it; the base carries every moving link.
    static = rd.inverse_dynamics(robot, q, np.zeros_like(q), np.zeros_like(q), gravity=g)
    for k, f in zip(movable, static.joint_wrenches):
        weight = subtree_mass(link_specs, joints, k + 1) * np.linalg.norm(g)
        assert abs(np.linalg.norm(f[:3]) - weight) <= 1e-9 * max(1.0, weight), f"joint j{k}"
    moving = [k + 1 for k, joint in enumerate(joints) if joint.kind != "fixed" and
              all(joints[a].kind == "fixed" for a in ancestor_joints(joints, joint.parent))]
    moving_mass = sum(subtree_mass(link_specs, joints, link) for link in moving)
    np.testing.assert_allclose(static.base_wrench[:3], -moving_mass * g, rtol=0,
                               atol=1e-9 * max(1.0, moving_mass * np.linalg.norm(g)))

    # Along its axis, a joint's wrench is its torque less friction (joints that no mimic joint follows).
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=g)
    followed = {joint.mimic[0] for joint in joints if joint.mimic is not None}
    for n, k in enumerate(movable):
        if k in followed:
            continue
        joint = joints[k]
        S = np.concatenate([joint.axis, np.zeros(3)] if joint.kind == "prismatic" else [np.zeros(3), joint.axis])
        friction = joint.damping * qd[n] + joint.friction * np.sign(qd[n])
        scale = max(1.0, np.abs(result.joint_wrenches[n]).max())
        assert abs(S @ result.joint_wrenches[n] - (result.torques[n] - friction)) <= 1e-9 * scale, f"joint j{k}"


# --- (b) mutated URDF text ---------------------------------------------------------------------------------------

SMALL_TREE = """<robot name="small">
  <link name="base"/>
  <link name="arm"><inertial><origin xyz="0 0 0.2" rpy="0.1 0 0"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0.001" ixz="0" iyy="0.02" iyz="0" izz="0.004"/></inertial></link>
  <link name="slider"><inertial><mass value="0.5"/><inertia ixx="1e-3" ixy="0" ixz="0" iyy="1e-3" iyz="0"
    izz="1e-3"/></inertial></link>
  <link name="finger"><inertial><origin xyz="0.02 0 0"/><mass value="0.1"/><inertia ixx="1e-5" ixy="0" ixz="0"
    iyy="1e-5" iyz="0" izz="1e-5"/></inertial></link>
  <link name="tool"/>
  <joint name="shoulder" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 0.1"/>
    <axis xyz="0 1 0"/><limit lower="-2" upper="2" effort="50" velocity="2"/><dynamics damping="0.1"/></joint>
  <joint name="slide" type="prismatic"><parent link="arm"/><child link="slider"/><origin xyz="0 0 0.4" rpy="0 0 1"/>
    <axis xyz="0 0 1"/><limit lower="0" upper="0.2" effort="100" velocity="0.5"/></joint>
  <joint name="grip" type="prismatic"><parent link="slider"/><child link="finger"/><axis xyz="1 0 0"/>
    <limit lower="0" upper="0.04" effort="10" velocity="0.1"/><mimic joint="slide" multiplier="0.5" offset="0"/>
  </joint>
  <joint name="spin" type="continuous"><parent link="arm"/><child link="tool"/><axis xyz="0 0 1"/></joint>
</robot>"""
SOURCES = {
    "rne_arm6": open(default_robot_path(), encoding="utf-8").read(),
    "small": SMALL_TREE,
    "panda": open(oracle.robot_path("panda_description/urdf/panda.urdf"), encoding="utf-8").read(),
}
ODD_VALUES = ["", " ", "nan", "inf", "-inf", "-1", "0", "-0", "1e308", "-1e308", "1e-320", "abc", "1 2", "1 2 3 4",
              "0 0 0", "1,2,3", "0x10", "1_0", "planar", "floating", "fixed", "continuous", "base", "shoulder",
              "\x00", "é", "<", "&amp;"]


@st.composite
def mutated(draw):
    """A valid URDF text changed in one to four random places; ``note`` records what was done."""
    name = draw(st.sampled_from(sorted(SOURCES)))
    root = ET.fromstring(SOURCES[name])
    names = [e.get("name") for e in root.iter() if e.get("name")]
    for _ in range(draw(st.integers(1, 4))):
        elements = list(root.iter())
        element = draw(st.sampled_from(elements))
        parents = {child: parent for parent in elements for child in parent}
        action = draw(st.sampled_from(["delete", "duplicate", "rename", "drop attribute", "set attribute",
                                       "set attribute", "set attribute"]))
        if action in ("delete", "duplicate") and element in parents:
            siblings = parents[element]
            if action == "delete":
                siblings.remove(element)
            else:
                siblings.insert(list(siblings).index(element), copy.deepcopy(element))
        elif action == "rename":
            element.tag = draw(st.sampled_from(["robot", "link", "joint", "inertial", "origin", "mass", "inertia",
                                                "axis", "parent", "child", "limit", "mimic", "dynamics", "visual"]))
        elif action == "drop attribute" and element.attrib:
            del element.attrib[draw(st.sampled_from(sorted(element.attrib)))]
        elif action == "set attribute":
            attribute = draw(st.sampled_from(sorted(element.attrib) + ["name", "type", "xyz", "value", "joint"]))
            element.set(attribute, draw(st.one_of(
                st.sampled_from(ODD_VALUES), st.sampled_from(names),
                st.floats().map(repr), st.lists(st.floats(), max_size=4).map(lambda xs: " ".join(map(repr, xs))),
                st.text(max_size=6))))
        note(f"{name}: {action} on <{element.tag}>")
    text = ET.tostring(root, encoding="unicode")
    edit = draw(st.sampled_from(["none", "none", "truncate", "splice"]))
    if edit != "none":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + (draw(st.text(max_size=8)) if edit == "splice" else "") + \
            (text[draw(st.integers(at, len(text))):] if edit == "splice" else "")
        note(f"{edit} at {at}")
    return text


@given(text=mutated())
def test_mutated_urdf_loads_or_raises_urdf_error(text):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ModelWarning, and numpy's overflow warnings on 1e308 values
        try:
            robot = rd.load_urdf(text)
        except rd.URDFError as error:
            assert str(error), "an empty message names nothing"
            event("refused with URDFError")
            return
        zeros = np.zeros(robot.dof)
        result = rd.inverse_dynamics(robot, zeros, zeros, zeros)
    assert result.torques.shape == (robot.dof,)
    event("loaded" if np.isfinite(result.torques).all() else "loaded, torques not finite")


def test_mutation_sources_are_valid():
    """The fuzzed texts start from robots that load (so a refusal is caused by the mutation)."""
    for name, text in SOURCES.items():
        assert load_quietly(text).dof > 0, name
