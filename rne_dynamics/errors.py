"""Errors and warnings raised by rne_dynamics; every message names the element, joint or value at fault."""


class ModelError(ValueError):
    """A robot description that cannot be turned into a dynamics model."""


class URDFError(ModelError):
    """A URDF that is not a valid, physically possible robot; the message names the element at fault."""


class PackageNotFoundError(URDFError):
    """A xacro ``$(find package)`` that no package directory resolves, at ``place`` (the file); ``remedy`` says how
    to give the directory (a caller with its own way, a node's parameter, gives its own)."""

    def __init__(self, place, package, remedy=None):
        self.place, self.package = place, package
        self.remedy = remedy or f"package_paths={{'{package}': DIR}} (command line: --package-path {package}=DIR)"
        super().__init__(f"{place}: xacro: package '{package}' not found ($(find {package})): give its share "
                         f"directory with {self.remedy} or source the ROS workspace that has it")

    def __reduce__(self):  # pickled by its fields (a node's builder process sends it)
        return type(self), (self.place, self.package, self.remedy)


class DHError(ModelError):
    """A Denavit-Hartenberg table that is incomplete or inconsistent; the message names the row and field."""


class IdentificationError(ModelError):
    """Recordings from which no physically consistent model could be fitted; the message names the link at fault."""


class StateError(ValueError):
    """Arguments of a dynamics call (joint state, wrenches, gravity) of the wrong shape or not finite."""


class SingularMassMatrixError(ValueError):
    """Forward dynamics is undefined: a movable joint drives no mass and no rotor inertia."""


class ModelWarning(UserWarning):
    """A model that loads but is probably not what its author meant (CAD inertia, massless subtree)."""


def one_line(reason):
    """A reason (an exception, a message) on one line."""
    return " ".join(str(reason).split())


def yaml_problem(exc):
    """A YAML parser's error in one line: where and what (``line 3, column 9: expected ',' or ']', but got ':'``)."""
    mark, problem = getattr(exc, "problem_mark", None), getattr(exc, "problem", None)
    if mark is None or problem is None:
        return one_line(exc)
    return f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
