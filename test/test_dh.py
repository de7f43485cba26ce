"""Robots from DH tables (rd.load_dh): closed forms, the same robot as a hand-written URDF, trees, YAML, armature,
bad rows.

The URDF twins are built from this file's own 4x4 products of the DH factors (world frames of every joint and
link at q = 0), never from the package. A standard table is also rewritten as a modified one by hand: TransX and
RotX commute, so standard ``RotZ(theta_i) TransZ(d_i) . TransX(a_i) RotX(alpha_i)`` regroups into modified rows
``RotX(alpha_{i-1}) TransX(a_{i-1}) RotZ(theta_i) TransZ(d_i)`` with the same joint coordinates, and link i's
inertial data moves from the distal frame to the joint frame by ``TransX(a_i) RotX(alpha_i)``.
"""
import numpy as np
import pytest

import rne_dynamics as rd
from test_rnea_closed_form import (C1, C2, G, I1, I2, L1, L2, M1, M2, PLANAR_GRAVITY, TILTED_GRAVITY, assert_close,
                                   joint, link, load, matrix_rpy, planar_arm_torques, rot_x, rot_z)

# ---------------------------------------------------------------- DH factors as 4x4 matrices


def homogeneous(R=np.eye(3), p=(0.0, 0.0, 0.0)):
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, p
    return T


def RX(alpha):
    return homogeneous(rot_x(alpha))


def RZ(theta):
    return homogeneous(rot_z(theta))


def TX(a):
    return homogeneous(p=(a, 0.0, 0.0))


def TZ(d):
    return homogeneous(p=(0.0, 0.0, d))


def tensor(six):
    ixx, ixy, ixz, iyy, iyz, izz = six
    return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])


def six(I):
    return [I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2]]


def parents(rows):
    return [row.get("parent", i - 1) for i, row in enumerate(rows)]


def standard_frames(rows, q):
    """World frames of each joint (z on its axis, origin on it) and of each link (distal), standard convention."""
    joints, links = [], []
    for row, parent, x in zip(rows, parents(rows), q):
        base = np.eye(4) if parent < 0 else links[parent]
        revolute = row["type"] == "revolute"
        joints.append(base @ RZ(row["theta"] + (x if revolute else 0)) @ TZ(row["d"] + (0 if revolute else x)))
        links.append(joints[-1] @ TX(row["a"]) @ RX(row["alpha"]))
    return joints, links


def urdf_of_standard(rows):
    """The standard-DH robot as URDF text: link frames are the joint frames, inertial data moved into them."""
    joint_frames, link_frames = standard_frames(rows, np.zeros(len(rows)))
    elements = [link("base")]
    for i, (row, parent) in enumerate(zip(rows, parents(rows))):
        origin = np.linalg.inv(joint_frames[parent]) @ joint_frames[i] if parent >= 0 else joint_frames[i]
        in_joint = np.linalg.inv(joint_frames[i]) @ link_frames[i]  # the distal frame seen from the joint frame
        com = (in_joint @ np.r_[row["com"], 1.0])[:3]
        R = in_joint[:3, :3]
        elements += [link(f"l{i}", row["mass"], com, inertia=six(R @ tensor(row["inertia"]) @ R.T)),
                     joint(f"j{i}", row["type"], "base" if parent < 0 else f"l{parent}", f"l{i}",
                           origin[:3, 3], matrix_rpy(origin[:3, :3]))]
    return load(*elements)


def standard_to_modified(rows):
    out = []
    for row, parent in zip(rows, parents(rows)):
        before = rows[parent] if parent >= 0 else {"a": 0.0, "alpha": 0.0}
        distal = TX(row["a"]) @ RX(row["alpha"])
        R = distal[:3, :3]
        out.append({**row, "a": before["a"], "alpha": before["alpha"],
                    "com": list((distal @ np.r_[row["com"], 1.0])[:3]),
                    "inertia": six(R @ tensor(row["inertia"]) @ R.T)})
    return out


def row(kind, a, alpha, d, theta, mass, com, inertia, **extra):
    return dict(type=kind, a=a, alpha=alpha, d=d, theta=theta, mass=mass, com=list(com), inertia=list(inertia),
                **extra)


# ---------------------------------------------------------------- robots

PUMA_LIKE = [  # PUMA 560 geometry (standard DH, Corke), a few theta offsets, plausible full inertias
    row("revolute", 0.0, np.pi / 2, 0.0, 0.0, 12.0, (0, -0.05, 0.02), (0.3, 0.01, 0, 0.35, 0, 0.2)),
    row("revolute", 0.4318, 0.0, 0.0, 0.2, 17.4, (-0.3638, 0.006, 0.2275), (0.13, 0.002, -0.001, 0.524, 0.003, 0.539)),
    row("revolute", 0.0203, -np.pi / 2, 0.15005, -0.3, 4.8, (-0.0203, -0.0141, 0.07),
        (0.066, 0.001, 0, 0.07, 0.002, 0.0125)),
    row("revolute", 0.0, np.pi / 2, 0.4318, 0.0, 0.82, (0, 0.019, 0), (1.8e-3, 0, 0, 1.3e-3, 0, 1.8e-3)),
    row("revolute", 0.0, -np.pi / 2, 0.0, 0.1, 0.34, (0, 0, 0), (0.3e-3, 0, 0, 0.4e-3, 0, 0.3e-3)),
    row("revolute", 0.0, 0.0, 0.0, 0.0, 0.09, (0, 0, 0.032), (0.15e-3, 0, 0, 0.15e-3, 0, 0.04e-3)),
]

STANFORD = [  # Stanford arm (standard DH, Spong); joint 3 slides
    row("revolute", 0.0, -np.pi / 2, 0.412, 0.0, 9.29, (0, 0.0175, -0.1105), (0.276, 0, 0, 0.255, 0, 0.071)),
    row("revolute", 0.0, np.pi / 2, 0.154, 0.0, 5.01, (0, -0.1054, 0), (0.108, 0, 0, 0.018, 0, 0.1)),
    row("prismatic", 0.0, 0.0, 0.2, 0.0, 4.25, (0, 0, -0.3), (0.251, 0, 0, 0.251, 0, 0.006)),
    row("revolute", 0.0, -np.pi / 2, 0.0, 0.0, 1.08, (0, 0.02, -0.05), (0.002, 0, 0, 0.001, 0, 0.0015)),
    row("revolute", 0.0, np.pi / 2, 0.0, 0.0, 0.63, (0, 0, 0.02), (0.003, 0, 0, 0.0025, 0, 0.001)),
    row("revolute", 0.0, 0.0, 0.263, 0.0, 0.51, (0, 0, 0.06), (0.013, 0, 0, 0.013, 0, 0.0003)),
]

ROD1 = (0.01, 0, 0, I1, 0, I1)
ROD2 = (0.004, 0, 0, I2, 0, I2)


def planar_rows(convention, parent=None, armature=None):
    """The planar 2R arm of test_rnea_closed_form as DH rows (joints about z, links along x)."""
    if convention == "modified":  # link frame at the joint: com at C along x; joint 2 is a = L1 further
        rows = [row("revolute", 0.0, 0.0, 0.0, 0.0, M1, (C1, 0, 0), ROD1),
                row("revolute", L1, 0.0, 0.0, 0.0, M2, (C2, 0, 0), ROD2)]
    else:  # link frame at the far end of the rod: com at C - L along x
        rows = [row("revolute", L1, 0.0, 0.0, 0.0, M1, (C1 - L1, 0, 0), ROD1),
                row("revolute", L2, 0.0, 0.0, 0.0, M2, (C2 - L2, 0, 0), ROD2)]
    if parent is not None:
        rows[0]["parent"] = parent
    for r, value in zip(rows, armature or ()):
        r["armature"] = value
    return rows


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("convention", ["modified", "standard"])
def test_planar_arm_closed_form(convention):
    robot = rd.load_dh(planar_rows(convention), convention=convention)
    assert robot.dof == 2
    rng = np.random.default_rng(0)
    q, qd, qdd = (rng.uniform(-2, 2, (8, 2)) for _ in range(3))
    result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY)
    assert_close(result.torques, planar_arm_torques(*q.T, *qd.T, *qdd.T))


@pytest.mark.parametrize("rows", [PUMA_LIKE, STANFORD], ids=["puma_like", "stanford"])
def test_both_conventions_equal_the_urdf(rows):
    """Standard table, the hand-converted modified table and the hand-written URDF: one robot, three spellings."""
    standard = rd.load_dh(rows, convention="standard")
    modified = rd.load_dh(standard_to_modified(rows), convention="modified")
    urdf = urdf_of_standard(rows)
    assert standard.dof == modified.dof == urdf.dof == 6
    rng = np.random.default_rng(1)
    q, qd, qdd = (rng.uniform(-1.5, 1.5, (10, 6)) for _ in range(3))
    for gravity in (None, TILTED_GRAVITY):
        expected = rd.inverse_dynamics(urdf, q, qd, qdd, gravity=gravity)
        assert np.abs(expected.torques).max() > 1.0
        for robot in (standard, modified):
            result = rd.inverse_dynamics(robot, q, qd, qdd, gravity=gravity)
            assert_close(result.torques, expected.torques)
            # joint wrenches: in the joint frame (on the joint axis, about the joint origin) for both conventions
            assert_close(result.joint_wrenches, expected.joint_wrenches)


@pytest.mark.parametrize("rows", [PUMA_LIKE, STANFORD], ids=["puma_like", "stanford"])
def test_link_frames_for_external_wrenches(rows):
    """A standard table's link i is its distal frame i; a modified table's (and the URDF's) is the joint frame."""
    distal = TX(rows[2]["a"]) @ RX(rows[2]["alpha"])  # frame 3 in joint 3's frame
    R, p = distal[:3, :3], distal[:3, 3]
    wrench = np.array([4.0, -2.0, 7.0, 0.3, -0.6, 0.2])
    in_joint_frame = np.r_[R @ wrench[:3], R @ wrench[3:] + np.cross(p, R @ wrench[:3])]
    q, qd, qdd = (np.random.default_rng(6).uniform(-1.5, 1.5, 6) for _ in range(3))
    standard = rd.inverse_dynamics(rd.load_dh(rows, convention="standard"), q, qd, qdd,
                                   external_wrenches={"link3": wrench})
    modified = rd.inverse_dynamics(rd.load_dh(standard_to_modified(rows)), q, qd, qdd,
                                   external_wrenches={"link3": in_joint_frame})
    urdf = rd.inverse_dynamics(urdf_of_standard(rows), q, qd, qdd, external_wrenches={"l2": in_joint_frame})
    assert_close(standard.torques, urdf.torques)
    assert_close(modified.torques, urdf.torques)
    assert not np.allclose(urdf.torques, rd.inverse_dynamics(urdf_of_standard(rows), q, qd, qdd).torques)


def test_stanford_slide_holds_the_outer_weight():
    """Static: the sliding joint pushes with the weight of links 3-6 projected on its axis (world z of its frame)."""
    robot = rd.load_dh(STANFORD, convention="standard")
    outer_mass = sum(r["mass"] for r in STANFORD[2:])
    rng = np.random.default_rng(2)
    for q in rng.uniform(-1.5, 1.5, (5, 6)):
        tau = rd.inverse_dynamics(robot, q, np.zeros(6), np.zeros(6)).torques
        axis = standard_frames(STANFORD, q)[0][2][:3, 2]
        assert_close(tau[2], outer_mass * G * axis[2])


def test_puma_waist_carries_no_gravity_torque():
    """Joint 1 of the PUMA turns about the vertical: gravity alone never loads it."""
    robot = rd.load_dh(PUMA_LIKE, convention="standard")
    q = np.random.default_rng(3).uniform(-2, 2, (5, 6))
    tau = rd.inverse_dynamics(robot, q, np.zeros_like(q), np.zeros_like(q)).torques
    assert_close(tau[:, 0], np.zeros(5))
    assert np.abs(tau[:, 1]).min() > 1.0


@pytest.mark.parametrize("convention", ["modified", "standard"])
def test_tree_via_parent(convention):
    """Two planar arms on the base (the second's first row has parent -1): each follows the 2R closed form alone."""
    first = planar_rows(convention)
    second = planar_rows(convention, parent=-1)
    second[1]["parent"] = 2
    robot = rd.load_dh(first + second, convention=convention)
    assert robot.dof == 4
    parent_joint = {b.joint: robot.bodies[b.parent].joint if b.parent >= 0 else None for b in robot.bodies}
    assert parent_joint == {"joint1": None, "joint2": "joint1", "joint3": None, "joint4": "joint3"}
    rng = np.random.default_rng(4)
    q, qd, qdd = (rng.uniform(-2, 2, (6, 4)) for _ in range(3))
    tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY).torques
    for names in (("joint1", "joint2"), ("joint3", "joint4")):
        arm = [robot.joint_index(n) for n in names]
        assert_close(tau[:, arm], planar_arm_torques(*q[:, arm].T, *qd[:, arm].T, *qdd[:, arm].T))


def test_rows_order_the_coordinates():
    """``q`` follows the table: row i is coordinate i, also for a tree whose branches are listed one after the
    other (rows in depth-first order, as Pinocchio would number the same tree)."""
    first, second = planar_rows("modified"), planar_rows("modified", parent=-1)
    second[1]["parent"] = 2
    robot = rd.load_dh(first + second)
    assert robot.joint_names == ("joint1", "joint2", "joint3", "joint4")


YAML_ROWS = """\
# planar 2R arm, standard DH
- {type: revolute, a: 0.7, alpha: 0.0, d: 0.0, theta: 0.0, mass: 2.5, com: [-0.4, 0, 0],
   inertia: [0.01, 0, 0, 0.11, 0, 0.11], name: shoulder}
- type: revolute
  a: 0.5
  alpha: 0
  d: 0
  theta: 0
  mass: 1.3
  com: [-0.3, 0, 0]
  inertia: [0.004, 0, 0, 0.05, 0, 0.05]
  name: elbow
"""


def test_yaml_file(tmp_path):
    """A YAML list of rows (convention as argument), or a mapping with ``convention`` and ``rows``."""
    as_list = tmp_path / "arm.yaml"
    as_list.write_text(YAML_ROWS)
    as_mapping = tmp_path / "arm_mapping.yaml"
    as_mapping.write_text("convention: standard\nrows:\n" + "".join(f"  {line}\n" for line in YAML_ROWS.splitlines()))
    q, qd, qdd = np.array([0.3, -0.9]), np.array([1.1, 0.4]), np.array([-0.5, 2.0])
    for robot in (rd.load_dh(str(as_list), convention="standard"), rd.load_dh(as_mapping)):
        assert robot.joint_names == ("shoulder", "elbow")
        tau = rd.inverse_dynamics(robot, q, qd, qdd, gravity=PLANAR_GRAVITY).torques
        assert_close(tau, planar_arm_torques(*q, *qd, *qdd))


def test_armature_adds_rotor_inertia():
    armature = (0.2, 0.05)
    plain = rd.load_dh(planar_rows("modified"))
    geared = rd.load_dh(planar_rows("modified", armature=armature))
    assert_close(geared.armature, armature)
    rng = np.random.default_rng(5)
    q, qd, qdd = (rng.uniform(-2, 2, (6, 2)) for _ in range(3))
    difference = (rd.inverse_dynamics(geared, q, qd, qdd).torques - rd.inverse_dynamics(plain, q, qd, qdd).torques)
    assert_close(difference, qdd * armature)


@pytest.mark.skipif(not hasattr(rd, "mass_matrix"), reason="rd.mass_matrix not exported yet")
def test_armature_on_mass_matrix_diagonal():
    armature = (0.2, 0.05)
    plain = rd.load_dh(planar_rows("modified"))
    geared = rd.load_dh(planar_rows("modified", armature=armature))
    q = np.array([[0.3, -0.9], [1.2, 2.0]])
    assert_close(rd.mass_matrix(geared, q) - rd.mass_matrix(plain, q), np.broadcast_to(np.diag(armature), (2, 2, 2)))


# ---------------------------------------------------------------- bad rows

def spoiled(index, **changes):
    rows = [dict(r) for r in planar_rows("modified")]
    for key, value in changes.items():
        if value is None:
            del rows[index][key]
        else:
            rows[index][key] = value
    return rows


@pytest.mark.parametrize("changes, field", [
    (dict(mass=None), "mass"),
    (dict(alpha=None), "alpha"),
    (dict(a="0.4"), "a"),
    (dict(d=float("nan")), "d"),
    (dict(theta=True), "theta"),
    (dict(mass=-1.0), "mass"),
    (dict(com=[0.1, 0.0]), "com"),
    (dict(com="centre"), "com"),
    (dict(inertia=[0.1, 0, 0, 0.1, 0]), "inertia"),
    (dict(type="helical"), "type"),
    (dict(parent=3), "parent"),
    (dict(parent=1.0), "parent"),
    (dict(armature="lots"), "armature"),
], ids=lambda x: x if isinstance(x, str) else "-".join(f"{k}={v!r}" for k, v in x.items()))
def test_bad_row_names_row_and_field(changes, field):
    with pytest.raises(rd.DHError) as error:
        rd.load_dh(spoiled(1, **changes))
    message = str(error.value)
    assert "row 1" in message and field in message, message


def test_a_file_that_is_not_yaml_is_named_with_the_place(tmp_path):
    path = tmp_path / "arm.yaml"
    path.write_text("rows:\n  - [revolute, 0, 0, 0\n  - [revolute: 1]\n")
    with pytest.raises(rd.DHError) as error:
        rd.load_dh(str(path))
    assert str(error.value).startswith(f"{path}: not valid YAML (line 3, column ") and "\n" not in str(error.value)


def test_bad_table_shapes():
    with pytest.raises(rd.DHError, match="row 1"):
        rd.load_dh([planar_rows("modified")[0], ["revolute", 0, 0, 0, 0]])
    with pytest.raises(rd.DHError, match="non-empty list"):
        rd.load_dh([])
    with pytest.raises(rd.DHError, match="convention"):
        rd.load_dh(planar_rows("modified"), convention="distal")


def test_impossible_inertia_is_a_dh_error():
    """An inertia that is not positive semi-definite is refused (the message names the link and the inertia)."""
    with pytest.raises(rd.DHError, match="inertia") as error:
        rd.load_dh(spoiled(1, inertia=[0.1, 0, 0, 0.1, 0, -0.5]))
    assert "link2" in str(error.value)


def test_bad_yaml_file_names_the_file(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text("- {type: revolute, a: [\n")
    with pytest.raises(rd.DHError, match="broken.yaml"):
        rd.load_dh(str(broken))
    with pytest.raises(rd.DHError, match="missing.yaml"):
        rd.load_dh(str(tmp_path / "missing.yaml"))
