"""Robots from Denavit-Hartenberg tables, modified (Craig, Khalil-Kleinfinger) or standard (distal).

Each row becomes a joint and a link of the same tree a URDF would give:
- modified: frame i = frame λ · RotX(alpha) · TransX(a) · RotZ(theta) · TransZ(d); the joint frame is frame i.
- standard: frame i = frame λ · RotZ(theta) · TransZ(d) · TransX(a) · RotX(alpha); the joint moves about z of
  frame λ, so its frame is frame λ · RotZ(theta) · TransZ(d), and link i sits at TransX(a) · RotX(alpha) from it
  (a fixed joint).
The joint variable adds to ``theta`` (revolute) or ``d`` (prismatic); both commute with the rest of their factor.
"""
import math
import os

import numpy as np

from ..errors import DHError, yaml_problem
from .body import JointInfo
from .tree import LinkSpec, build_robot

REQUIRED = ("type", "a", "alpha", "d", "theta", "mass", "com", "inertia")
CONVENTIONS = ("modified", "standard")


def load_dh(rows, *, convention="modified", name="dh_robot"):
    """A Robot from DH rows (a list of dicts, base to tip) or a YAML file of them; see the module docstring.

    Row fields: ``type`` (revolute | prismatic), ``a``, ``alpha``, ``d``, ``theta``, ``mass``, ``com`` (3, link
    frame), ``inertia`` (ixx ixy ixz iyy iyz izz about the COM); optional ``name``, ``armature``, ``parent`` (row
    index of the parent, default the previous row; -1 is the base). Bad rows raise :class:`DHError` naming row and
    field.
    """
    source = "<dh rows>"
    if isinstance(rows, (str, os.PathLike)):
        source = os.fspath(rows)
        rows, convention, name = _read_yaml(source, convention, name)
    if convention not in CONVENTIONS:
        raise DHError(f"{source}: convention must be 'modified' or 'standard', got {convention!r}")
    if not isinstance(rows, (list, tuple)) or not rows:
        raise DHError(f"{source}: DH rows must be a non-empty list of dicts, got {type(rows).__name__}")
    links, joints, origins, armature = [LinkSpec("base")], [], {}, {}
    link_names = []
    for i, row in enumerate(rows):
        fields = _Row(source, i, row)
        joint_name = str(row.get("name", f"joint{i + 1}"))
        link = f"{joint_name}_link" if "name" in row else f"link{i + 1}"
        parent = fields.parent(i)
        parent_link = "base" if parent < 0 else link_names[parent]
        kind = fields.type()
        a, alpha, d, theta = (fields.number(k) for k in ("a", "alpha", "d", "theta"))
        mass = fields.number("mass")
        if mass < 0:
            fields.fail("mass", f"is negative ({mass})")
        I = fields.inertia()
        links.append(LinkSpec(link, mass, fields.vector("com", 3), I))
        if convention == "modified":
            origins[joint_name] = _rot_x(alpha) @ _rot_z(theta), _rot_x(alpha) @ np.array([a, 0.0, 0.0]) + \
                _rot_x(alpha) @ _rot_z(theta) @ np.array([0.0, 0.0, d])
            joints.append(JointInfo(joint_name, kind, parent_link, link, (0.0, 0.0, 1.0)))
        else:
            moving = f"{link}_joint_frame"
            links.append(LinkSpec(moving))
            origins[joint_name] = _rot_z(theta), np.array([0.0, 0.0, d])
            joints.append(JointInfo(joint_name, kind, parent_link, moving, (0.0, 0.0, 1.0)))
            origins[f"{joint_name}_distal"] = _rot_x(alpha), np.array([a, 0.0, 0.0])
            joints.append(JointInfo(f"{joint_name}_distal", "fixed", moving, link))
        if "armature" in row:
            armature[joint_name] = fields.number("armature")
        link_names.append(link)
    robot = build_robot(name, links, joints, origins, error=DHError, source=source)
    return robot.with_drive(armature=armature) if armature else robot


def _rot_x(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def _rot_z(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _read_yaml(path, convention, name):
    """A YAML file holding the rows, or a mapping with ``rows`` and optional ``convention`` and ``name``."""
    import yaml
    try:
        with open(path, encoding="utf-8") as stream:
            content = yaml.safe_load(stream)
    except OSError as exc:
        raise DHError(f"{path}: cannot read the DH table ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        raise DHError(f"{path}: not valid YAML ({yaml_problem(exc)})") from None
    if isinstance(content, dict):
        return content.get("rows"), content.get("convention", convention), content.get("name", name)
    return content, convention, name


class _Row:
    """Typed access to one DH row; errors name the row and the field."""

    def __init__(self, source, index, row):
        self.source, self.index, self.row = source, index, row
        if not isinstance(row, dict):
            raise DHError(f"{source}: DH row {index} must be a dict, got {type(row).__name__}")
        missing = [k for k in REQUIRED if k not in row]
        if missing:
            raise DHError(f"{source}: DH row {index} is missing field(s) {', '.join(missing)}")

    def fail(self, field, message):
        raise DHError(f"{self.source}: DH row {self.index}, field '{field}': {message}")

    def number(self, field):
        value = self.row[field]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(field, f"must be a finite number, got {value!r}")
        return float(value)

    def vector(self, field, size):
        try:
            value = np.array(self.row[field], dtype=float)
        except (TypeError, ValueError):
            self.fail(field, f"must be {size} numbers, got {self.row[field]!r}")
        if value.shape != (size,) or not np.all(np.isfinite(value)):
            self.fail(field, f"must be {size} finite numbers, got {self.row[field]!r}")
        return value

    def inertia(self):
        ixx, ixy, ixz, iyy, iyz, izz = self.vector("inertia", 6)
        return np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])

    def type(self):
        kind = self.row["type"]
        if kind not in ("revolute", "prismatic"):
            self.fail("type", f"must be 'revolute' or 'prismatic', got {kind!r}")
        return kind

    def parent(self, index):
        parent = self.row.get("parent", index - 1)
        if isinstance(parent, bool) or not isinstance(parent, int) or not -1 <= parent < index:
            self.fail("parent", f"must be the index of an earlier row or -1 (the base), got {parent!r}")
        return parent
