#!/usr/bin/env python3
"""Write docs/reference.md from the package itself: the Python API (every name of ``rne_dynamics.__all__``: its
signature and its docstring's first paragraph; a class's public methods and properties too), the ROS 2 nodes (their
parameters as declared: type, default, description and constraints; topics; services) and the command line's
``--help``. test/test_reference.py fails while the committed file differs from what this writes.

    python scripts/make_reference.py          # rewrite docs/reference.md
"""
import argparse
import inspect
import os
import re
from functools import cached_property

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTPUT = os.path.join(REPO, "docs", "reference.md")
ROLE = re.compile(r":[a-z]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`")  # :func:`x`, :meth:`Robot.y <target>` -> `x`
#: What rclpy gives every node: not the node's own interface.
STANDARD = ("/rosout", "/parameter_events", "describe_parameters", "get_parameter_types", "get_parameters",
            "list_parameters", "set_parameters", "set_parameters_atomically", "get_type_description", "use_sim_time",
            "start_type_description_service")


def first_paragraph(obj):
    return ROLE.sub(r"`\1`", (inspect.getdoc(obj) or "").split("\n\n")[0])


def signature(name, obj):
    try:
        return name + str(inspect.signature(obj))
    except (TypeError, ValueError):
        return name


def members(cls):
    """The public methods and properties a class defines itself."""
    lines = []
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (property, cached_property)):
            entry = f"- `.{name}`"
        elif inspect.isfunction(member) or isinstance(member, (classmethod, staticmethod)):
            entry = f"- `.{signature(name, getattr(cls, name))}`"
        else:
            continue
        doc = first_paragraph(member)
        lines.append(entry + (": " + doc.replace("\n", "\n  ") if doc else ""))
    return lines


def python_api():
    import rne_dynamics as rd
    lines = ["## Python API", "", "`import rne_dynamics as rd`; the names of `rd.__all__`, in its order."]
    for name in rd.__all__:
        obj = getattr(rd, name)
        is_error = inspect.isclass(obj) and issubclass(obj, BaseException)
        lines += ["", f"### `rd.{name}`", ""]
        lines += [] if is_error else ["```python", ("class " if inspect.isclass(obj) else "") + signature(name, obj),
                                      "```", ""]
        lines.append(first_paragraph(obj))
        if inspect.isclass(obj) and not is_error and members(obj):
            lines += [""] + members(obj)
    return lines


def cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def interface_name(kind):
    """``sensor_msgs/msg/JointState`` for a message or service class."""
    package, group = kind.__module__.split(".")[:2]
    return f"{package}/{group}/{kind.__name__}"


def ros_nodes():
    import rclpy
    import rclpy.logging
    from rclpy.context import Context
    from rclpy.parameter import Parameter

    from rne_dynamics.nodes.forward_dynamics_node import ForwardDynamicsNode
    from rne_dynamics.nodes.gough_stewart_demo import GoughStewartDemo
    from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

    lines = ["## ROS 2 nodes", "", "Each node as `ros2 run rne_dynamics <executable>` starts it, with default "
             "parameters and no robot description: topics made once a model is loaded (one per joint or sensor) are "
             "described with the parameter that makes them."]
    context = Context()
    default_level = rclpy.logging.get_logger_effective_level("")
    rclpy.init(context=context, args=["--ros-args", "--log-level", "fatal"])
    try:
        for executable, node_class in (("inverse_dynamics_node", InverseDynamicsNode),
                                       ("forward_dynamics_node", ForwardDynamicsNode),
                                       ("gough_stewart_demo", GoughStewartDemo)):
            node = node_class(context=context)
            try:
                module = inspect.getmodule(node_class)
                lines += ["", f"### `{executable}` (node `{node.get_fully_qualified_name()}`)", "",
                          first_paragraph(module), "", "| parameter | type | default | description |",
                          "|---|---|---|---|"]
                names = [n for n in node.list_parameters([], 0).names if n not in STANDARD]
                for name, d in zip(names, node.describe_parameters(names)):
                    value = node.get_parameter(name).value
                    value = f'"{value}"' if isinstance(value, str) else list(value) if hasattr(value, "__len__") \
                        else value
                    notes = [d.description] + ([d.additional_constraints] if d.additional_constraints else [])
                    notes += [f"range [{r.from_value:g}, {r.to_value:g}]" for r in
                              (*d.floating_point_range, *d.integer_range)]
                    notes += ["read-only"] * d.read_only
                    lines.append(f"| `{name}` | {Parameter.Type(d.type).name.lower()} | `{cell(value)}` | "
                                 f"{cell('; '.join(notes))} |")
                for title, endpoints in (
                        ("publishes", [(p.topic_name, p.msg_type) for p in node.publishers]),
                        ("subscribes", [(s.topic_name, s.msg_type) for s in node.subscriptions]),
                        ("services", [(node.resolve_service_name(s.srv_name), s.srv_type) for s in node.services])):
                    own = ", ".join(f"`{n}` ({interface_name(t)})" for n, t in sorted(endpoints, key=lambda e: e[0])
                                    if n not in STANDARD and n.rsplit("/", 1)[-1] not in STANDARD)
                    lines += ["", f"{title.capitalize()}: {own or 'none'}."]
            finally:
                node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
        # --log-level sets the process's level, which outlives the context: later nodes' warnings would be lost
        rclpy.logging.set_logger_level("", default_level)
    return lines


def command_line():
    from rne_dynamics.tools.cli import build_parser
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "110"  # argparse wraps help to the terminal: a fixed width, the same file everywhere
    try:
        lines = ["## Command line", "", "```text", parser.format_help().rstrip(), "```"]
        for name, command in commands.items():
            lines += ["", f"### `rne-dynamics {name}`", "", "```text", command.format_help().rstrip(), "```"]
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns
    return lines


def reference():
    """The text of docs/reference.md."""
    lines = ["# rne_dynamics reference", "", "Generated by `scripts/make_reference.py` from the package's docstrings, "
             "the nodes' parameter descriptors and the command line's parser: do not edit; run "
             "`python scripts/make_reference.py` after changing them (`test/test_reference.py` checks it is current). "
             "Conventions (units, frames, coordinates) are in docs/library.md.", ""]
    lines += python_api() + [""] + ros_nodes() + [""] + command_line()
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    os.makedirs(os.path.dirname(OUTPUT), exist_ok=True)
    with open(OUTPUT, "w", encoding="utf-8") as stream:
        stream.write(reference())
    print(f"wrote {os.path.relpath(OUTPUT)}")
