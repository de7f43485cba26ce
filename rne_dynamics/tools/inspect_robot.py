"""``rne-dynamics inspect``: is this URDF's mass model sane? The tree, every body's inertia, the warnings, and the
gravity torque each joint must hold at worst (sampled over its range) against its effort limit."""
import math
import shutil
import sys
import textwrap
import warnings

import numpy as np

from ..errors import ModelError, ModelWarning
from ..algorithms.configuration import neutral, random_configuration
from ..algorithms.loops import actuation_jacobian, close_loops, mobility
from ..algorithms.gravity import gravity_torques
from ..model.joints import effort_unit, is_fixed, joint_type, position_unit
from ..model.urdf import load_urdf

ENVELOPE_SAMPLES = 20_000


def load_robot(path, **source):
    """:func:`load_urdf` (a URDF or xacro, with its loop file; ``source``: its keywords) without printing the model
    warnings: the commands report ``robot.warnings`` themselves (:func:`print_warnings`). A joint of ``--lock``
    (``source["locked_joints"]``) held outside its position limits is refused (a continuous joint has none)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ModelWarning)
        robot = load_urdf(path, **source)
    for name, position in (source.get("locked_joints") or {}).items():
        joint = robot.joints[name]
        if np.ndim(position) == 0 and not joint.lower <= position <= joint.upper:
            raise ModelError(f"--lock {name}={position!r}: outside the joint's position limits [{joint.lower!r}, "
                             f"{joint.upper!r}] {position_unit(joint.type)}")
    return robot


def print_warnings(command, robot):
    """``robot.warnings`` on stderr, a line each: ``rne-dynamics COMMAND: warning: ...``."""
    for message in robot.warnings:
        print(f"rne-dynamics {command}: warning: {message}", file=sys.stderr)


def loop_lines(robot):
    """The loop closures, actuated and passive coordinates, and the mobility two ways: Grübler-Kutzbach (every
    constraint counted) and ``nv - rank J`` at the closed reference configuration; a singular one is said."""
    loops = robot.loops
    lines = [f"loop closures ({len(loops.closures)}; {loops.size} constraint equations)"]
    for c in loops.closures:
        axis = f" about {np.round(c.axis, 4).tolist()}" if c.axis is not None else ""
        lines.append(f"  {c.name}: {c.kind}{axis} ({c.size}), {c.link_a} {np.round(c.p_a, 4).tolist()} -> "
                     f"{c.link_b} {np.round(c.p_b, 4).tolist()}")
    actuated = set(loops.actuated)
    lines.append(f"actuated coordinates ({len(loops.actuated)}): {', '.join(loops.actuated) or 'none given'}")
    passive = [n for n in robot.v_names if n.split(".")[0] not in actuated]
    lines.append(f"passive coordinates ({len(passive)}): {', '.join(passive)}")
    try:
        grubler, mobility, rank = loop_mobility(robot)
    except ModelError as exc:
        lines.append(f"mobility: cannot close the loops from the reference configuration: {exc}")
        return lines
    lines.append(f"mobility: {mobility} (nv {robot.nv} - rank {rank} of the constraint Jacobian); Grübler-Kutzbach "
                 f"count {grubler}" + ("" if grubler == mobility else
                                       f": they disagree, {mobility - grubler} constraint(s) redundant"))
    if loops.actuated and len(loops.actuated) != mobility:
        lines.append(f"  note: {len(loops.actuated)} actuated coordinate(s) for mobility {mobility}")
    try:
        actuation_jacobian(robot, reference_configuration(robot))
        lines.append("singular configurations met: none at the reference configuration")
    except ModelError as exc:
        lines.append(f"singular configuration met at the reference configuration: {exc}")
    return lines


def reference_configuration(robot):
    """The loops closed from the neutral configuration's actuated coordinates."""
    neutral_q = neutral(robot)
    return close_loops(robot, neutral_q[[robot.idx_q[n] for n in robot.loops.actuated]], q_guess=neutral_q)


def loop_mobility(robot):
    return mobility(robot, reference_configuration(robot) if robot.loops.actuated else None)


def coordinate_effort_unit(robot, name):
    """The unit of the generalised force of a coordinate of ``v`` (``robot.v_names``): a joint's, or for a coordinate
    of a joint with several, N along a linear velocity and N m about an angular one."""
    if name in robot.joints:
        return effort_unit(robot.joints[name].type)
    return "N" if name.rsplit(".", 1)[-1].startswith("v") else "N m"


def tree_lines(robot):
    """The kinematic tree from the root link, one joint per line (type, axis, limits, effort, child link)."""
    children = {}
    for joint in robot.joints.values():
        children.setdefault(joint.parent, []).append(joint)
    lines = [robot.root_link]

    def visit(link, indent):
        below = children.get(link, [])
        for k, joint in enumerate(below):
            last = k == len(below) - 1
            details = [joint.type]
            if not is_fixed(joint.type):
                details.append("axis (" + " ".join(f"{x:g}" for x in joint.axis) + ")")
                if math.isfinite(joint.lower):
                    details.append(f"limits [{joint.lower:g}, {joint.upper:g}] {position_unit(joint.type)}")
                details.append(f"effort {joint.effort:g} {effort_unit(joint.type)}" if math.isfinite(joint.effort)
                               else "no effort limit")
                if joint.damping or joint.friction:  # the drive terms that enter inverse_dynamics' torques
                    details.append(f"damping {joint.damping:g} {effort_unit(joint.type)} s/{position_unit(joint.type)}"
                                   f", friction {joint.friction:g} {effort_unit(joint.type)}")
            if joint.mimic:
                details.append(f"mimics {joint.mimic[0]} (x{joint.mimic[1]:g} {joint.mimic[2]:+g})")
            if joint.name in robot.locked_joints:
                details.append("locked at " + " ".join(f"{x:g}" for x in robot.locked_joints[joint.name]))
            lines.append(f"{indent}{'`' if last else '|'}-- {joint.name} ({', '.join(details)}) -> {joint.child}")
            visit(joint.child, indent + ("    " if last else "|   "))

    visit(robot.root_link, "")
    return lines


DEFAULT_COLUMNS = 160  # the table's width where the terminal's is unknown (a pipe, a file)
MIN_LINKS_WIDTH = 24
NUMBERS_WIDTH = 13 + 28 + 37  # mass, COM and principal inertia columns of the bodies table


def body_properties(body):
    """``(com, principal inertias about the com)`` of a body, in its joint frame (RBDA eq. 2.63 reversed)."""
    com = body.h / body.mass if body.mass > 0 else np.zeros(3)
    I_com = body.I - body.mass * (com @ com * np.eye(3) - np.outer(com, com))
    return com, np.linalg.eigvalsh(I_com)


def body_lines(robot, columns=None):
    """Per body (a joint's child link with the links fixed to it): mass, COM and principal inertias. A body's links
    wrap onto more lines so that the table fits ``columns`` characters (default: the terminal's width)."""
    columns = columns or shutil.get_terminal_size((DEFAULT_COLUMNS, 24)).columns
    links = {}
    for link, (body, _, _) in robot.link_frames.items():
        links.setdefault(body, []).append(link)
    width = name_width(list(robot.body_joint_names) + ["moved by joint"])
    joined = ["+".join(links.get(i, [])) for i in range(len(robot.bodies))]
    links_width = max(MIN_LINKS_WIDTH, min(name_width(joined + ["links"]), columns - width - NUMBERS_WIDTH))
    lines = [f"{'moved by joint':<{width}}{'links':<{links_width}}{'mass [kg]':>10}   {'COM in joint frame [m]':<28}"
             "principal inertias about COM [kg m^2]"]
    for i, body in enumerate(robot.bodies):
        com, principal = body_properties(body)
        first, *more = wrap_names(links.get(i, []), links_width - 2) or [""]
        lines.append(f"{body.joint:<{width}}{first:<{links_width}}{body.mass:10.3f}   "
                     f"({' '.join(number(c, '7.3f') for c in com)})   "
                     + "".join(number(m, "11.4g") for m in principal))
        lines += [" " * width + line for line in more]
    lines += textwrap.wrap(f"total moving mass {robot.total_mass:.3f} kg (fixed to the world, not counted: "
                           f"{', '.join(links.get(-1, []))})", columns, subsequent_indent="  ",
                           break_on_hyphens=False, break_long_words=False)
    return lines


def wrap_names(names, width):
    """``names`` joined by ``+`` into lines of at most ``width`` characters (a longer name keeps a line of its own);
    every line but the last ends with the ``+``."""
    lines = []
    for name in names:
        if lines and len(lines[-1]) + 1 + len(name) <= width:
            lines[-1] += "+" + name
        else:
            if lines:
                lines[-1] += "+"
            lines.append(name)
    return lines


def name_width(names):
    """A column wide enough for every name, and two spaces."""
    return max(len(name) for name in names) + 2


def number(x, spec):
    """``x`` formatted, without the minus of a value that rounds to zero (``-0.000``)."""
    text = format(x, spec)
    return format(0.0, spec) if float(text) == 0.0 else text


def model_warnings(robot):
    """The loader's warnings (triangle inequality, massless subtrees, ...) and the missing effort limits."""
    missing = [name for name in robot.joint_names if not 0 < robot.joints[name].effort < math.inf]
    extra = [f"joint '{name}' has no effort limit (<limit effort> absent or 0)" for name in missing]
    return list(robot.warnings) + extra


def sample_configurations(robot, samples, seed=0):
    """``(samples, nq)`` configurations uniform within the position limits; an unbounded revolute joint
    (continuous) over one turn, an unbounded prismatic joint held at 0 (joints of several coordinates and a floating
    base: :func:`~rne_dynamics.random_configuration`)."""
    if robot.nq != len(robot.joint_names):
        return random_configuration(robot, seed, size=samples)
    lower, upper = robot.position_limits.T.copy()
    unbounded = ~(np.isfinite(lower) & np.isfinite(upper))
    linear = np.array([joint_type(robot.joints[n].type).linear for n in robot.joint_names], bool)
    lower[unbounded] = np.where(linear[unbounded], 0.0, -np.pi)
    upper[unbounded] = np.where(linear[unbounded], 0.0, np.pi)
    return np.random.default_rng(seed).uniform(lower, upper, size=(samples, robot.dof))


def gravity_envelope(robot, samples=ENVELOPE_SAMPLES):
    """Per joint, the largest ``|gravity torque|`` over sampled configurations (a lower bound of the true one)."""
    return np.abs(gravity_torques(robot, sample_configurations(robot, samples))).max(axis=0)


def envelope_lines(robot, envelope, samples):
    width = name_width(list(robot.v_names) + ["joint"])
    lines = [f"gravity torque envelope: largest |gravity torque| over {samples} configurations sampled within the "
             "limits (g = 9.81 m/s^2 along -z of the root link)",
             f"{'joint':<{width}}{'peak |g|':>12}{'effort limit':>16}{'% of limit':>12}"]
    for name, peak, limit in zip(robot.v_names, envelope, robot.effort_limits):
        unit = coordinate_effort_unit(robot, name)
        if limit > 0 and math.isfinite(limit):
            share = 100 * peak / limit
            verdict = "  EXCEEDS: cannot hold itself" if share > 100 else ""
            lines.append(f"{name:<{width}}{peak:8.2f} {unit:<3}{limit:12.1f} {unit:<3}{share:11.0f}%{verdict}")
        else:
            lines.append(f"{name:<{width}}{peak:8.2f} {unit:<3}{'none':>16}{'-':>12}")
    return lines


def run(path, samples=ENVELOPE_SAMPLES, print_=print, **source):
    """The ``inspect`` command: print the model summary of the URDF or xacro at ``path`` (with its loop file)."""
    robot = load_robot(path, **source)
    kinds = [robot.joints[n].type for n in robot.joint_names]
    counts = ", ".join(f"{kinds.count(k)} {k}" for k in sorted(set(kinds)))
    print_(f"robot '{robot.name}' from {path}")
    print_(f"root link {robot.root_link}; {len(robot.link_names)} links, {len(robot.joints)} joints, "
           f"{robot.dof} joint coordinates ({counts or 'none'}); moving mass {robot.total_mass:.3f} kg\n")
    print_("kinematic tree (joint axes in the joint frame)")
    print_("\n".join(tree_lines(robot)) + "\n")
    print_("bodies (a movable joint's child link and the links fixed to it)")
    print_("\n".join(body_lines(robot)) + "\n")
    found = model_warnings(robot)
    print_(f"warnings ({len(found)})")
    print_("\n".join(f"  - {message}" for message in found) if found else "  none")
    if robot.loops is not None:
        print_("")
        print_("\n".join(loop_lines(robot)))
    elif robot.dof:  # a closed chain's tree configurations do not close its loops: no envelope over them
        print_("")
        print_("\n".join(envelope_lines(robot, gravity_envelope(robot, samples), samples)))
    return 0
