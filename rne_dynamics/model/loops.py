"""Loop closures of a closed-chain robot: its URDF spanning tree plus one cut joint per independent loop
(Khalil 2010, Sec. 2.2), and which tree coordinates are actuated.

A closure names a frame on each side of the cut joint (a link and a fixed offset) and the cut joint's kind; the
constraint holds when the two frames meet as that joint allows. Read from the loop file (docs/loops.md, YAML or the
same as a dict) or from Isaac Sim's URDF extension ``<loop_joint>``, the one loop element of a URDF tool in real use
(MuJoCo's ``<equality>``, SDFormat's graph of joints and PyBullet's ``createConstraint`` live outside URDF;
Pinocchio reads loops from MJCF and SDFormat only)::

    <loop_joint name="coupler_rocker" type="revolute">   <!-- spherical, revolute, prismatic or fixed -->
      <link1 link="coupler" xyz="0.4 0 0" rpy="0 0 0"/>
      <link2 link="rocker" xyz="0.3 0 0" rpy="0 0 0"/>
      <axis xyz="0 0 1"/>                                <!-- revolute, prismatic: in both cut frames -->
    </loop_joint>
"""
import math
import os
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import ModelError, URDFError, yaml_problem
from .spatial import rpy_to_matrix

#: Constraints of each cut-joint kind (rows of the constraint Jacobian).
CONSTRAINTS = {"point": 3, "revolute": 5, "prismatic": 5, "weld": 6}
#: Isaac Sim's ``<loop_joint type=...>`` for each kind.
URDF_TYPES = {"spherical": "point", "revolute": "revolute", "prismatic": "prismatic", "fixed": "weld"}


@dataclass(frozen=True, eq=False)
class LoopClosure:
    """One cut joint: frame ``a`` (``R_a``, ``p_a`` in ``link_a``'s frame) meets frame ``b`` on ``link_b`` as a
    ``kind`` joint allows; ``axis`` (unit, the same in both frames) for revolute and prismatic cuts.

    ``selection`` ``(6, m)``: the directions, in the cut frame on ``link_b``, of the relative twist the cut forbids
    and of the wrench it transmits (``[linear; angular]``): all 6 for a weld, the 3 linear for a point, the 3 linear
    and the 2 angular normal to ``axis`` for a revolute cut, the 2 linear normal to ``axis`` and the 3 angular for a
    prismatic cut."""
    name: str
    kind: str
    link_a: str
    R_a: np.ndarray
    p_a: np.ndarray
    link_b: str
    R_b: np.ndarray
    p_b: np.ndarray
    axis: np.ndarray = None

    @property
    def size(self):
        return CONSTRAINTS[self.kind]

    @cached_property
    def selection(self):
        eye = np.eye(3)
        if self.kind in ("revolute", "prismatic"):
            normal = _normals(self.axis)
            linear, angular = (eye, normal) if self.kind == "revolute" else (normal, eye)
        else:
            linear, angular = eye, (eye if self.kind == "weld" else np.zeros((3, 0)))
        return np.block([[linear, np.zeros((3, angular.shape[1]))], [np.zeros((3, linear.shape[1])), angular]])


@dataclass(frozen=True, eq=False)
class Loops:
    """A robot's loop closures and its actuated joints (``actuated``, in the loop file's order)."""
    actuated: tuple
    closures: tuple

    @property
    def size(self):
        """Number of constraint equations (rows of the constraint Jacobian), redundant ones included."""
        return sum(c.size for c in self.closures)

    def closure(self, name):
        for c in self.closures:
            if c.name == name:
                return c
        raise KeyError(f"no loop closure '{name}'; the closures are {', '.join(c.name for c in self.closures)}")


def _normals(axis):
    """Two unit vectors completing ``axis`` to a right-handed orthonormal basis ``(n1, n2, axis)``, as columns."""
    helper = np.eye(3)[np.argmin(np.abs(axis))]
    n1 = np.cross(axis, helper)
    n1 /= np.linalg.norm(n1)
    return np.column_stack([n1, np.cross(axis, n1)])


def read_loops(source, robot, urdf_closures=(), urdf_where="<urdf>"):
    """The :class:`Loops` of ``robot`` from a loop file path, YAML text or dict (``None``: only ``urdf_closures``,
    dicts read from ``<loop_joint>`` elements of the URDF at ``urdf_where``), checked against the robot;
    :class:`ModelError` naming the closure or the field at fault."""
    where, spec = _spec(source, urdf_where)
    listed = spec.get("loops") or []
    if not isinstance(listed, list) or not all(isinstance(c, dict) for c in listed):
        raise ModelError(f"{where}: 'loops' must be a list of closures (mappings with name, kind, link_a, link_b)")
    closures = [(urdf_where, c) for c in urdf_closures] + [(where, c) for c in listed]
    if not closures:
        raise ModelError(f"{where}: no loop closure given ('loops' is empty)")
    parsed, names = [], set()
    for k, (origin, c) in enumerate(closures):
        closure = _closure(origin, k, c, robot)
        if closure.name in names:
            raise ModelError(f"{origin}: loop '{closure.name}' is defined twice")
        names.add(closure.name)
        parsed.append(closure)
    actuated = spec.get("actuated", ())
    if isinstance(actuated, str) or not all(isinstance(a, str) for a in actuated):
        raise ModelError(f"{where}: 'actuated' must be a list of joint names, got {actuated!r}")
    for name in actuated:
        if name not in robot.joint_names:
            raise ModelError(f"{where}: actuated joint '{name}' is not a movable joint of '{robot.name}' "
                             f"({', '.join(robot.joint_names)})")
        if robot.bodies[robot.joint_bodies[robot.joint_names.index(name)]].nv != 1:
            raise ModelError(f"{where}: actuated joint '{name}' has several coordinates; actuate one-coordinate "
                             "joints (revolute, prismatic, continuous)")
    if len(set(actuated)) != len(actuated):
        raise ModelError(f"{where}: 'actuated' names a joint twice: {list(actuated)}")
    if robot.has_floating_base:
        raise ModelError(f"{where}: loop closures need a fixed base; '{robot.name}' floats")
    unknown = set(spec) - {"actuated", "loops"}
    if unknown:
        raise ModelError(f"{where}: unknown key(s) {sorted(unknown)} (expected 'actuated' and 'loops')")
    loops = Loops(tuple(actuated), tuple(parsed))
    if actuated and len(actuated) + loops.size < robot.nv:
        raise ModelError(f"{where}: the actuated joints ({', '.join(actuated)}) and the {loops.size} loop constraints "
                         f"cannot determine the {robot.nv} coordinates of '{robot.name}': actuate "
                         f"{robot.nv - loops.size - len(actuated)} more joint(s)")
    return loops


def _spec(source, urdf_where):
    """``(where, dict)`` from a path, YAML text or a dict."""
    import yaml
    if source is None:
        return urdf_where, {}
    if hasattr(source, "items"):
        return "<loops dict>", dict(source)
    if not isinstance(source, (str, os.PathLike)):
        raise ModelError(f"loops: a loop file path, YAML text or a dict, not {type(source).__name__}")
    text, where = os.fspath(source), "<loops text>"
    if "\n" not in text and (os.path.exists(text) or text.endswith((".yaml", ".yml"))):
        where = text
        try:
            with open(text, encoding="utf-8") as stream:
                text = stream.read()
        except OSError as exc:
            raise ModelError(f"{where}: cannot read the loop file ({exc.strerror})") from None
    try:
        spec = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ModelError(f"{where}: not valid YAML ({yaml_problem(exc)})") from None
    if not isinstance(spec, dict):
        raise ModelError(f"{where}: a loop file is a mapping with 'actuated' and 'loops'")
    return where, spec


def _vector(where, owner, c, key, default):
    value = c.get(key, default)
    try:
        v = np.array(value, float).reshape(-1)
    except (TypeError, ValueError):
        v = np.array([])
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ModelError(f"{where}: {owner}: '{key}' must be 3 finite numbers, got {value!r}")
    return v


def _closure(where, k, c, robot):
    name = c.get("name")
    if not isinstance(name, str) or not name:
        raise ModelError(f"{where}: loop #{k + 1} has no name")
    owner = f"loop '{name}'"
    kind = c.get("kind")
    if kind not in CONSTRAINTS:
        raise ModelError(f"{where}: {owner}: kind must be one of {', '.join(CONSTRAINTS)}, got {kind!r}")
    sides = {}
    for side in ("a", "b"):
        link = c.get(f"link_{side}")
        if link not in robot.link_frames:
            raise ModelError(f"{where}: {owner}: link_{side} '{link}' is not a link of '{robot.name}'")
        sides[side] = (link, rpy_to_matrix(*_vector(where, owner, c, f"rpy_{side}", (0, 0, 0))),
                       _vector(where, owner, c, f"xyz_{side}", (0, 0, 0)))
    if robot.link_frames[sides["a"][0]][0] == robot.link_frames[sides["b"][0]][0]:
        raise ModelError(f"{where}: {owner}: link_a '{sides['a'][0]}' and link_b '{sides['b'][0]}' are one rigid "
                         "body; a cut joint joins two bodies")
    axis = None
    if kind in ("revolute", "prismatic"):
        if "axis" not in c:
            raise ModelError(f"{where}: {owner}: a {kind} cut needs 'axis'")
        axis = _vector(where, owner, c, "axis", None)
        if np.linalg.norm(axis) < 1e-12:
            raise ModelError(f"{where}: {owner}: 'axis' is zero")
        axis = axis / np.linalg.norm(axis)
    unknown = set(c) - {"name", "kind", "link_a", "link_b", "xyz_a", "xyz_b", "rpy_a", "rpy_b", "axis"}
    if unknown:
        raise ModelError(f"{where}: {owner}: unknown key(s) {sorted(unknown)}")
    return LoopClosure(name, kind, sides["a"][0], sides["a"][1], sides["a"][2], sides["b"][0], sides["b"][1],
                       sides["b"][2], axis)


def urdf_loop_joints(root, where):
    """Closures (dicts in the loop file's layout) from Isaac Sim's ``<loop_joint>`` elements of a URDF;
    :class:`URDFError` naming a malformed one."""
    out = []
    for element in root.findall("loop_joint"):
        name = element.get("name")
        owner = f"<loop_joint name=\"{name}\">"
        kind = URDF_TYPES.get(element.get("type"))
        if not name or kind is None:
            raise URDFError(f"{where}: {owner} needs a name and a type ({', '.join(URDF_TYPES)})")
        closure = {"name": name, "kind": kind}
        frames = element.findall("link1") + element.findall("link2")  # Isaac Sim's own examples write link1 twice
        if len(frames) != 2 or not all(f.get("link") for f in frames):
            raise URDFError(f"{where}: {owner} needs <link1 link=...> and <link2 link=...>")
        for side, frame in zip("ab", frames):
            closure[f"link_{side}"] = frame.get("link")
            for key in ("xyz", "rpy"):
                if frame.get(key) is not None:
                    closure[f"{key}_{side}"] = _numbers(where, owner, frame.get(key))
        axis = element.find("axis")
        if axis is not None:
            closure["axis"] = _numbers(where, owner, axis.get("xyz", ""))
        out.append(closure)
    return out


def _numbers(where, owner, text):
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    if len(values) != 3 or not all(math.isfinite(v) for v in values):
        raise URDFError(f"{where}: {owner}: \"{text}\" is not 3 finite numbers")
    return values
