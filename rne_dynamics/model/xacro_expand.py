"""Expand a xacro robot description into URDF text with the ``xacro`` package (PyPI), imported only when needed.

``$(find pkg)`` (and ``${find('pkg')}``) resolve through ``package_paths`` ``{pkg: share directory}`` first, then the
ament index (``ament_index_python``) when it imports; a package found by neither raises :class:`URDFError` naming it.
``package://`` URIs only name meshes in a URDF, which dynamics never reads: they are left as they are.
xacro keeps its state in module globals, so one expansion runs at a time (a lock), and its ``find`` is swapped for
ours only while it runs.
"""
import os
import sys
import threading

from ..errors import PackageNotFoundError, URDFError

XACRO_NAMESPACE = "http://www.ros.org/wiki/xacro"
_LOCK = threading.Lock()


class _PackageNotFound(Exception):
    """Raised inside xacro's evaluation; caught around it and turned into a URDFError."""


def argument_entry(entry):
    """``NAME:=VALUE`` (xacro's command-line form: ``--xacro-arg``, a node's ``xacro_args``) as ``(NAME, VALUE)``;
    ValueError naming the entry otherwise."""
    name, sep, value = entry.partition(":=")
    if not sep or not name:
        raise ValueError(f"{entry!r} is not name:=value")
    return name, value


def package_entry(entry):
    """``NAME=DIR`` (``--package-path``, a node's ``package_paths``) as ``(NAME, DIR)``, DIR an existing directory;
    ValueError naming the entry otherwise."""
    name, sep, directory = entry.partition("=")
    if not sep or not name or not directory:
        raise ValueError(f"{entry!r} is not NAME=DIR")
    if not os.path.isdir(directory):
        raise ValueError(f"{directory!r} (package '{name}') is not a directory")
    return name, directory


def is_xacro(root, where):
    """Whether a parsed description needs xacro: a ``.xacro`` file, an element of the xacro namespace, or a
    ``${...}`` / ``$(...)`` substitution in an attribute (xacro expands those even without the namespace)."""
    if where.endswith(".xacro"):
        return True
    for element in root.iter():
        if element.tag.startswith("{" + XACRO_NAMESPACE + "}"):
            return True
        if any("${" in value or "$(" in value for value in element.attrib.values()):
            return True
    return False


def expand(text, where, xacro_args=None, package_paths=None):
    """The URDF text of the xacro ``text`` read from ``where`` (a file path, or ``"<xacro text>"``: its relative
    includes resolve against the current directory). ``xacro_args``: ``{name: value}``, given as ``str(value)``."""
    try:
        import xacro
        from xacro import substitution_args
    except ImportError:
        raise URDFError(f"{where}: a xacro description; install the 'xacro' package into this Python to read it "
                        f"({sys.executable} -m pip install xacro), or expand it first (xacro robot.urdf.xacro > "
                        "robot.urdf)") from None
    mappings = {str(name): str(value) for name, value in (xacro_args or {}).items()}
    paths = {str(name): os.path.abspath(os.fspath(path)) for name, path in (package_paths or {}).items()}
    filename = None if where == "<xacro text>" else where

    def find(package):
        if package in paths:
            return paths[package]
        try:
            from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
        except ImportError:
            raise _PackageNotFound(package) from None
        try:
            return get_package_share_directory(package)
        except (PackageNotFoundError, LookupError, ValueError, OSError):  # OSError: no AMENT_PREFIX_PATH
            raise _PackageNotFound(package) from None

    with _LOCK:
        saved = substitution_args._eval_find, substitution_args._eval_dict["find"]
        substitution_args._eval_find = substitution_args._eval_dict["find"] = find
        xacro.init_stacks(filename)
        try:
            document = xacro.parse(text, filename)
            xacro.process_doc(document, mappings=mappings, verbosity=0)
            return document.toxml()
        except Exception as exc:  # xacro raises its own and Python's exceptions alike: each becomes one line
            raise _error(exc, where, xacro.filestack) from None
        finally:
            substitution_args._eval_find, substitution_args._eval_dict["find"] = saved


def _error(exc, where, filestack):
    """A URDFError naming the file being expanded (and the included one where xacro failed) and xacro's message."""
    cause = exc
    while cause is not None and not isinstance(cause, _PackageNotFound):
        cause = getattr(cause, "exc", None) or cause.__cause__ or cause.__context__
    innermost = next((f for f in reversed(filestack or []) if f), None)
    place = where if innermost in (None, where) else f"{where} (in {innermost})"
    if cause is not None:
        return PackageNotFoundError(place, cause.args[0])
    opened = getattr(exc, "exc", None)
    if isinstance(opened, OSError) and opened.filename:  # xacro's message repeats the OSError's
        return URDFError(f"{place}: xacro: cannot open {opened.filename} ({opened.strerror})")
    message = " ".join(str(exc).split()) or type(exc).__name__
    return URDFError(f"{place}: xacro: {message}")

