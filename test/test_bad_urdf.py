"""The catalogue of bad URDFs: each is refused with :class:`rd.URDFError` (a ``ValueError``) whose message names the
element, joint, link, attribute or value at fault; implausible but usable models load with a :class:`rd.ModelWarning`
(also kept in ``robot.warnings``); a 1,000-link tree loads and gives finite torques that Pinocchio confirms.
"""
import warnings

import numpy as np
import pytest

import oracle
import rne_dynamics as rd

BOX_INERTIA = "0.01 0 0 0.02 0 0.03"  # ixx ixy ixz iyy iyz izz of a plausible body


def link(name, mass="1.0", inertia=BOX_INERTIA, xyz="0 0 0.1", rpy="0 0 0"):
    """A ``<link>``; ``mass=None`` gives a link without ``<inertial>``. Values are text, so tests can break them."""
    if mass is None:
        return f'<link name="{name}"/>'
    ixx, ixy, ixz, iyy, iyz, izz = inertia.split(" ")
    return (f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="{rpy}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/></inertial></link>')


def joint(name, parent, child, kind="revolute", axis="0 0 1", xyz="0 0 0.2", rpy="0 0 0", extra=""):
    """A ``<joint>``; ``kind=None`` leaves out the type attribute, ``parent``/``child`` None the element."""
    kind = "" if kind is None else f' type="{kind}"'
    parent = "" if parent is None else f'<parent link="{parent}"/>'
    child = "" if child is None else f'<child link="{child}"/>'
    return (f'<joint name="{name}"{kind}>{parent}{child}<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            f'{extra}</joint>')


def robot(*elements, tag="robot"):
    return f'<{tag} name="catalogue">' + "".join(elements) + f"</{tag}>"


def arm(link2=None, joint2=None, extra=()):
    """base -> shoulder (revolute) -> upper (revolute), with ``link2``/``joint2`` replacing the last link/joint."""
    return robot(link("base"), link("shoulder"), link2 or link("upper"), joint("shoulder_pan", "base", "shoulder"),
                 joint2 or joint("shoulder_lift", "shoulder", "upper", axis="0 1 0"), *extra)


def refusal(source, *culprits):
    """The URDFError message for ``source``, asserted to name every one of ``culprits``."""
    with pytest.raises(rd.URDFError) as caught:
        rd.load_urdf(source)
    message = str(caught.value)
    for culprit in culprits:
        assert culprit in message, f"{culprit!r} not named in: {message}"
    return message


def loaded_with_warning(source, *culprits):
    """The robot ``source`` loads to, asserting one ModelWarning (also in ``robot.warnings``) names ``culprits``."""
    with pytest.warns(rd.ModelWarning) as caught:
        loaded = rd.load_urdf(source)
    for culprit in culprits:
        assert any(culprit in str(w.message) for w in caught), f"{culprit!r} in no warning: {caught.list}"
        assert any(culprit in note for note in loaded.warnings), f"{culprit!r} not in {loaded.warnings}"
    return loaded


def test_the_reference_arm_loads_without_warnings():
    """The arm every case below breaks is itself valid, so each refusal is caused by the one change made."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = rd.load_urdf(arm())
    assert loaded.joint_names == ("shoulder_pan", "shoulder_lift") and loaded.warnings == ()
    assert issubclass(rd.URDFError, ValueError)


# --- not a URDF at all -------------------------------------------------------------------------------------------

def test_not_xml():
    refusal(arm()[:-20], "<urdf text>", "not well-formed XML")


def test_file_that_is_not_xml(tmp_path):
    path = tmp_path / "notes.urdf"
    path.write_text("this is a shopping list, not a robot\n")
    refusal(str(path), str(path), "not well-formed XML")


def test_empty_string():
    refusal("", "empty")
    refusal("  \n\t", "empty")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.urdf"
    path.write_text("\n")
    refusal(str(path), str(path), "empty")


def test_missing_file(tmp_path):
    path = str(tmp_path / "missing.urdf")
    refusal(path, path, "No such file")


def test_file_not_utf8(tmp_path):
    path = tmp_path / "latin1.urdf"
    path.write_bytes(robot(link("b\xe4se")).encode("latin-1"))
    refusal(str(path), str(path), "not UTF-8")


def test_text_with_nul_character_is_no_path():
    refusal("robot\x00.urdf", "robot\\x00.urdf", "neither URDF text", "nor a file path")


def test_source_of_wrong_type():
    refusal(42, "path or XML text", "int")


def test_root_element_not_robot():
    refusal(robot(link("base"), tag="sdf"), "<sdf>", "<robot>")


def test_no_links():
    refusal(robot(), "no <link>")


def test_link_without_name():
    refusal(robot('<link/>'), "<link>", "no name")


def test_joint_without_name():
    refusal(arm(joint2=joint("", "shoulder", "upper")), "<joint>", "no name")


# --- joint types and structure -----------------------------------------------------------------------------------

def test_unknown_joint_type():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind="revolving")),
            "joint 'shoulder_lift'", "unknown type 'revolving'")


def test_joint_without_type():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind=None)),
            "joint 'shoulder_lift'", "no type attribute")


def test_floating_joint_away_from_the_root():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind="floating")),
            "joint 'shoulder_lift'", "floating joint", "root link 'base'", "'shoulder'")


def test_two_floating_bases():
    with pytest.raises(rd.URDFError, match="floating joint 'free' and floating_base=True"):
        rd.load_urdf(robot(link("world"), link("base"), joint("free", "world", "base", kind="floating")),
                     floating_base=True)


def test_planar_joint_with_a_zero_normal():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind="planar", axis="0 0 0")),
            "joint 'shoulder_lift'", "is zero", "plane's normal")


def test_planar_and_floating_joints_load():
    planar = rd.load_urdf(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind="planar")))
    assert (planar.nq, planar.nv, planar.joint_names) == (4, 4, ("shoulder_pan", "shoulder_lift"))
    assert planar.q_names[1:] == ("shoulder_lift.x", "shoulder_lift.y", "shoulder_lift.theta")
    free = rd.load_urdf(robot(link("world"), link("base"), link("upper"),
                              joint("free", "world", "base", kind="floating"), joint("lift", "base", "upper")))
    assert (free.nq, free.nv, free.joint_names, free.base_joint) == (8, 7, ("lift",), "free")


def test_mimic_of_a_planar_joint():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", kind="planar"),
                extra=[link("finger"), joint("finger_joint", "upper", "finger",
                                             extra='<mimic joint="shoulder_lift"/>')]),
            "joint 'finger_joint'", "follows a planar joint")


@pytest.mark.parametrize("role", ["parent", "child"])
def test_missing_parent_or_child_element(role):
    ends = {"parent": "shoulder", "child": "upper", role: None}
    refusal(arm(joint2=joint("shoulder_lift", ends["parent"], ends["child"])),
            "joint 'shoulder_lift'", f"<{role} link=")


@pytest.mark.parametrize("role", ["parent", "child"])
def test_parent_or_child_link_not_defined(role):
    ends = {"parent": "shoulder", "child": "upper", role: "elbow"}
    refusal(arm(joint2=joint("shoulder_lift", ends["parent"], ends["child"])),
            "joint 'shoulder_lift'", f"{role} link 'elbow' is not defined")


def test_joint_from_a_link_to_itself():
    refusal(arm(joint2=joint("shoulder_lift", "upper", "upper")), "joint 'shoulder_lift'", "'upper'", "own parent")


def test_link_child_of_two_joints():
    refusal(arm(extra=[joint("second_way", "base", "upper")]), "link 'upper'", "'shoulder_lift'", "'second_way'")


def test_two_roots():
    refusal(robot(link("base"), link("shoulder"), link("table"), joint("shoulder_pan", "base", "shoulder")),
            "2 root links", "'base'", "'table'")


def test_cycle_through_every_link():
    refusal(robot(link("a"), link("b"), joint("ab", "a", "b"), joint("ba", "b", "a")), "cycle")


def test_cycle_detached_from_the_root():
    refusal(arm(extra=[link("c"), link("d"), joint("cd", "c", "d"), joint("dc", "d", "c")]),
            "'c'", "'d'", "not connected to the root 'base'", "cycle")


def test_duplicate_link_names():
    refusal(arm(extra=[link("upper", mass="2")]), "link 'upper'", "defined twice")


def test_duplicate_joint_names():
    refusal(arm(extra=[link("tool"), joint("shoulder_lift", "upper", "tool")]), "joint 'shoulder_lift'",
            "defined twice")


# --- numbers -----------------------------------------------------------------------------------------------------

def test_zero_axis():
    refusal(arm(joint2=joint("shoulder_lift", "shoulder", "upper", axis="0 0 0")),
            "joint 'shoulder_lift'", '<axis xyz="0 0 0">', "zero")


def test_huge_axis_components_normalised_not_zeroed():
    """``1e200`` squared overflows; the axis must still come out as the unit vector, not zero."""
    loaded = rd.load_urdf(arm(joint2=joint("shoulder_lift", "shoulder", "upper", axis="1e200 1e200 0")))
    np.testing.assert_allclose(loaded.bodies[1].axis, [2 ** -0.5, 2 ** -0.5, 0], rtol=1e-15)


LIFT = "joint 'shoulder_lift'"
UPPER = "link 'upper'"
NOT_FINITE = [  # (where, URDF, owner, culprit): NaN or inf in every number the dynamics use
    ("axis", arm(joint2=joint("shoulder_lift", "shoulder", "upper", axis="0 nan 1")), LIFT, '<axis xyz="0 nan 1">'),
    ("joint origin xyz", arm(joint2=joint("shoulder_lift", "shoulder", "upper", xyz="0 0 inf")), LIFT,
     '<origin xyz="0 0 inf">'),
    ("joint origin rpy", arm(joint2=joint("shoulder_lift", "shoulder", "upper", rpy="-inf 0 0")), LIFT,
     '<origin rpy="-inf 0 0">'),
    ("inertial origin", arm(link2=link("upper", xyz="NaN 0 0")), UPPER, '<origin xyz="NaN 0 0">'),
    ("mass", arm(link2=link("upper", mass="nan")), UPPER, '<mass value="nan">'),
    ("mass inf", arm(link2=link("upper", mass="inf")), UPPER, '<mass value="inf">'),
    ("inertia", arm(link2=link("upper", inertia="0.01 0 0 inf 0 0.03")), UPPER, '<inertia iyy="inf">'),
    ("inertia nan", arm(link2=link("upper", inertia="0.01 nan 0 0.02 0 0.03")), UPPER, '<inertia ixy="nan">'),
    ("limit", arm(joint2=joint("shoulder_lift", "shoulder", "upper",
                               extra='<limit lower="nan" upper="1" effort="10" velocity="1"/>')), LIFT,
     '<limit lower="nan">'),
    ("mimic", arm(joint2=joint("shoulder_lift", "shoulder", "upper",
                               extra='<mimic joint="shoulder_pan" multiplier="inf"/>')), LIFT,
     '<mimic multiplier="inf">'),
]


@pytest.mark.parametrize("where, source, owner, culprit", NOT_FINITE, ids=[case[0] for case in NOT_FINITE])
def test_not_finite_value(where, source, owner, culprit):
    refusal(source, owner, culprit, "not finite")


NOT_NUMBERS = [
    ("axis", arm(joint2=joint("shoulder_lift", "shoulder", "upper", axis="0 y 1")), LIFT, '<axis xyz="0 y 1">'),
    ("mass", arm(link2=link("upper", mass="heavy")), UPPER, '<mass value="heavy">'),
    ("origin", arm(joint2=joint("shoulder_lift", "shoulder", "upper", xyz="0,0,0.2")), LIFT,
     '<origin xyz="0,0,0.2">'),
    ("inertia", arm(link2=link("upper", inertia="0.01 0 0 - 0 0.03")), UPPER, '<inertia iyy="-">'),
]


@pytest.mark.parametrize("where, source, owner, culprit", NOT_NUMBERS, ids=[case[0] for case in NOT_NUMBERS])
def test_non_numeric_value(where, source, owner, culprit):
    refusal(source, owner, culprit, "is not")


WRONG_COUNTS = [
    ("axis", arm(joint2=joint("shoulder_lift", "shoulder", "upper", axis="0 1")), LIFT,
     '<axis xyz="0 1"> has 2 number(s), expected 3'),
    ("origin", arm(joint2=joint("shoulder_lift", "shoulder", "upper", rpy="0 0 0 1")), LIFT,
     '<origin rpy="0 0 0 1"> has 4 number(s), expected 3'),
    ("mass", arm(link2=link("upper", mass="1 2")), UPPER, '<mass value="1 2"> has 2 number(s), expected 1'),
    ("empty", arm(link2=link("upper", mass="")), UPPER, '<mass value=""> has 0 number(s), expected 1'),
]


@pytest.mark.parametrize("where, source, owner, culprit", WRONG_COUNTS, ids=[case[0] for case in WRONG_COUNTS])
def test_wrong_number_of_values(where, source, owner, culprit):
    refusal(source, owner, culprit)


def test_missing_mass_attribute():
    source = arm(link2='<link name="upper"><inertial><mass/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
                       'izz="1"/></inertial></link>')
    refusal(source, "link 'upper'", "<mass> needs attribute 'value'")


@pytest.mark.parametrize("missing", ["mass", "inertia"])
def test_inertial_without_mass_or_inertia(missing):
    inertial = {"mass": '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>', "inertia": '<mass value="1"/>'}
    refusal(arm(link2=f'<link name="upper"><inertial>{inertial[missing]}</inertial></link>'),
            "link 'upper'", f"<inertial> has no <{missing}>")


def test_negative_mass():
    refusal(arm(link2=link("upper", mass="-2.5")), "link 'upper'", '<mass value="-2.5">', "negative")


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_mass_that_overflows_its_body():
    refusal(arm(link2=link("upper", mass="1e200", xyz="1e200 0 0")), "link 'upper'", "1e+200 kg", "not finite")


def test_indefinite_inertia_on_a_moving_link():
    refusal(arm(link2=link("upper", inertia="0.01 0 0 0.02 0 -0.03")), "link 'upper'",
            "inertia is not positive semi-definite", "-0.03")


def test_rotated_inertia_is_checked_in_the_link_frame():
    """A tensor that is PSD only if its off-diagonal term is ignored: |ixy| > sqrt(ixx iyy)."""
    refusal(arm(link2=link("upper", inertia="0.01 0.05 0 0.02 0 0.03", rpy="0.3 0.2 0.1")), "link 'upper'",
            "not positive semi-definite")


def test_romeo_laas_small_is_refused_naming_its_bad_link():
    """example-robot-data's romeo_laas_small.urdf has an indefinite inertia on LHipPitch_link."""
    refusal(oracle.robot_path("romeo_description/urdf/romeo_laas_small.urdf"), "romeo_laas_small.urdf",
            "link 'LHipPitch_link'", "not positive semi-definite")


def test_negative_effort_limit():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper",
                              extra='<limit lower="-1" upper="1" effort="-20" velocity="1"/>'))
    refusal(source, "joint 'shoulder_lift'", '<limit effort="-20.0">', "negative")


def test_negative_velocity_limit():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper",
                              extra='<limit lower="-1" upper="1" effort="20" velocity="-1"/>'))
    refusal(source, "joint 'shoulder_lift'", '<limit velocity="-1.0">', "negative")


def test_limit_lower_above_upper():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper",
                              extra='<limit lower="1.5" upper="-1.5" effort="20" velocity="1"/>'))
    refusal(source, "joint 'shoulder_lift'", 'lower="1.5" upper="-1.5"', "lower is above upper")


def test_negative_damping():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<dynamics damping="-0.1"/>'))
    refusal(source, "joint 'shoulder_lift'", 'damping="-0.1"', "negative")


# --- mimic joints ------------------------------------------------------------------------------------------------

def test_mimic_of_a_missing_joint():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<mimic joint="elbow"/>'))
    refusal(source, "joint 'shoulder_lift'", "<mimic joint='elbow'>", "names no movable joint")


def test_mimic_of_a_fixed_joint():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<mimic joint="flange"/>'),
                 extra=[link("tool"), joint("flange", "upper", "tool", kind="fixed")])
    refusal(source, "joint 'shoulder_lift'", "<mimic joint='flange'>", "names no movable joint")


def test_mimic_of_itself():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<mimic joint="shoulder_lift"/>'))
    refusal(source, "joint 'shoulder_lift'", "<mimic> names the joint itself")


def test_mimic_without_joint_attribute():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<mimic multiplier="2"/>'))
    refusal(source, "joint 'shoulder_lift'", "<mimic> has no joint attribute")


def test_mimic_loop():
    source = arm(joint2=joint("shoulder_lift", "shoulder", "upper", extra='<mimic joint="elbow"/>'),
                 extra=[link("fore"), joint("elbow", "upper", "fore", extra='<mimic joint="shoulder_lift"/>')])
    refusal(source, "mimic joints form a loop", "shoulder_lift -> elbow -> shoulder_lift")


# --- warnings: the model loads, the user is told -----------------------------------------------------------------

def test_inertia_breaking_the_triangle_inequality_warns():
    """Principal moments 0.01, 0.02, 0.05: 0.05 > 0.01 + 0.02, as in many CAD exports."""
    loaded = loaded_with_warning(arm(link2=link("upper", inertia="0.01 0 0 0.02 0 0.05")), "link 'upper'",
                                 "triangle inequality")
    assert loaded.dof == 2


def test_movable_joint_with_massless_subtree_warns():
    source = arm(extra=[link("tool", mass=None), link("tip", mass=None), joint("wrist", "upper", "tool"),
                        joint("tip_mount", "tool", "tip", kind="fixed")])
    loaded = loaded_with_warning(source, "joint 'wrist'", "moves no mass")
    assert loaded.joint_names == ("shoulder_pan", "shoulder_lift", "wrist")
    assert not any("shoulder_lift" in note for note in loaded.warnings)  # its subtree has the upper link's mass


def test_indefinite_inertia_on_a_link_fixed_to_the_root_is_ignored():
    source = arm(extra=[link("pedestal", inertia="0.01 0 0 0.02 0 -0.03"),
                        joint("bolted", "base", "pedestal", kind="fixed")])
    loaded = loaded_with_warning(source, "link 'pedestal'", "not positive semi-definite", "ignored")
    reference = rd.load_urdf(arm())
    state = np.array([0.3, -0.7])
    np.testing.assert_array_equal(rd.inverse_dynamics(loaded, state, state, state).torques,
                                  rd.inverse_dynamics(reference, state, state, state).torques)


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning", "ignore:invalid value:RuntimeWarning")
def test_inertia_overflowing_on_rotation_at_the_root_is_ignored():
    """Finite as written, infinite once rotated into the link frame: on a base link, a warning and no crash."""
    huge = "1.7e308 1.7e308 0 1.7e308 0 1.7e308"
    source = arm(extra=[link("pedestal", inertia=huge, rpy="0.5 0.5 0.5"),
                        joint("bolted", "base", "pedestal", kind="fixed")])
    loaded_with_warning(source, "link 'pedestal'", "not finite", "ignored")


def test_mimic_on_a_fixed_joint_is_ignored():
    source = arm(extra=[link("tool"), joint("flange", "upper", "tool", kind="fixed",
                                            extra='<mimic joint="shoulder_pan"/>')])
    loaded = loaded_with_warning(source, "joint 'flange'", "<mimic> is ignored")
    assert loaded.joint_names == ("shoulder_pan", "shoulder_lift")


# --- huge trees --------------------------------------------------------------------------------------------------

def huge_tree(parents, seed):
    """URDF text of a tree with ``len(parents) + 1`` links; link k > 0 hangs from link ``parents[k - 1]``."""
    rng = np.random.default_rng(seed)
    kinds = ("revolute", "continuous", "prismatic", "fixed")
    elements = [link("l0")]
    for k, parent in enumerate(parents, start=1):
        a, b, c = rng.uniform(0.02, 0.2, 3)
        mass = rng.uniform(0.1, 2.0)
        inertia = f"{mass * (b * b + c * c) / 12} 0 0 {mass * (a * a + c * c) / 12} 0 {mass * (a * a + b * b) / 12}"
        axis = rng.normal(size=3)
        elements.append(link(f"l{k}", mass=f"{mass}", inertia=inertia, xyz="{} {} {}".format(*rng.uniform(-.1, .1, 3)),
                             rpy="{} {} {}".format(*rng.uniform(-3, 3, 3))))
        elements.append(joint(f"j{k}", f"l{parent}", f"l{k}", kind=kinds[rng.integers(4)],
                              axis="{} {} {}".format(*axis), xyz="{} {} {}".format(*rng.uniform(-.1, .1, 3)),
                              rpy="{} {} {}".format(*rng.uniform(-3, 3, 3)),
                              extra='<limit lower="-2" upper="2" effort="100" velocity="3"/>'))
    return robot(*elements)


HUGE = {"chain": list(range(1000 - 1)),
        "random tree": [int(np.random.default_rng(7).integers(k)) for k in range(1, 1000)]}


@pytest.mark.parametrize("shape", HUGE)
def test_huge_tree_loads_and_gives_finite_consistent_loads(shape):
    """1,000 links with random joint types load (0.2-0.3 s of CPU, measured, not asserted) and give finite torques;
    each joint wrench's axis component is its torque and the static base force carries the total weight.
    (Pinocchio is not run here: its Data holds dof^3 kinematic Hessians, 16 GB at 700 joints; the fuzz tests compare
    smaller random trees with it.)"""
    loaded = rd.load_urdf(huge_tree(HUGE[shape], seed=len(shape)))
    assert len(loaded.link_names) == 1000 and loaded.dof > 600  # about 3/4 of the joints move
    q, qd, qdd = (x[0] for x in oracle.random_states(loaded, 1, seed=5, scale=0.3))
    result = rd.inverse_dynamics(loaded, q, qd, qdd)
    assert np.isfinite(result.torques).all() and np.isfinite(result.joint_wrenches).all()
    S = np.array([loaded.bodies[b].S[0] for b in loaded.joint_bodies])  # each joint: one motion column
    np.testing.assert_allclose(np.einsum("kj,kj->k", result.joint_wrenches, S), result.torques, rtol=1e-12,
                               atol=1e-9 * np.abs(result.torques).max())
    static = rd.inverse_dynamics(loaded, q, np.zeros_like(q), np.zeros_like(q))
    np.testing.assert_allclose(static.base_wrench[:3], [0, 0, 9.81 * loaded.total_mass], rtol=1e-9, atol=1e-9)
