"""Per-call memory that a user may hold, as Pinocchio splits Model and Data: the robot is immutable, a :class:`Data`
holds the workspaces and results of its algorithms.

``data = robot.data()`` once, then ``rd.inverse_dynamics(robot, q, qd, qdd, data=data)``: the call writes into
``data`` and returns views of it, valid until the next call with the same ``data``; once each call has run with it,
nothing more is allocated. Without ``data=`` every call allocates its own results.
"""
import numpy as np

from ..errors import StateError


class Data:
    """The arrays of one robot's calls, each kept under a key and made again only when its shape changes (a batch of
    another size)."""
    __slots__ = ("robot", "_arrays", "_results")

    def __init__(self, robot):
        self.robot = robot
        self._arrays = {}
        self._results = {}

    def array(self, key, shape):
        """The array kept under ``key``, of ``shape`` (a tuple, or a size; uninitialised when new)."""
        if shape.__class__ is not tuple:
            shape = (shape,)
        x = self._arrays.get(key)
        if x is None or x.shape != shape:
            x = self._arrays[key] = np.empty(shape)
        return x

    def result(self, key, make, *arrays):
        """The result object ``make(*arrays)`` kept under ``key``, made again only when its arrays are new ones."""
        kept = self._results.get(key)
        if kept is None or any(a is not b for a, b in zip(kept, arrays)):
            kept = self._results[key] = make(*arrays)
        return kept

    def __repr__(self):
        return f"Data(robot '{self.robot.name}', {len(self._arrays)} arrays)"


def memory(robot, data, key, shape):
    """``data``'s array under ``key`` (``data=`` given), else a new one."""
    if data is None:
        return np.empty(shape)
    if data.__class__ is not Data or data.robot is not robot:
        raise StateError("data= must come from this robot: data = robot.data() (a Data belongs to the robot that "
                         "made it; robot.with_payload(...) and the like make new robots)")
    return data.array(key, shape)


def results(robot, data, key, q, *shapes):
    """One array per ``shape`` of a single state's result, for the states of ``q`` (one or a batch): new ones, or
    ``data``'s under ``key``."""
    batch = q.shape[:-1]
    if data is None:
        return [np.empty(batch + shape) for shape in shapes] if batch else [np.empty(shape) for shape in shapes]
    return [memory(robot, data, (key, k), batch + shape) for k, shape in enumerate(shapes)]


#: Without ``data=``, an empty workspace of each dimension: the kernel then makes its own (cheaper there).
OWN_WORKSPACE = {1: np.empty(0), 3: np.empty((0, 6, 6))}


def workspace(robot, data, key, shape_of, *sizes):
    """An algorithm's workspace, ``shape_of(*sizes)`` (a numba helper, asked once per robot): ``data``'s under
    ``key``, or an empty one that the kernel replaces with its own."""
    shape = robot.workspace_shapes.get(key)
    if shape is None:
        shape = robot.workspace_shapes[key] = shape_of(*sizes)
    if data is None:
        return OWN_WORKSPACE[len(shape) if shape.__class__ is tuple else 1]
    return memory(robot, data, key, shape)


def packaged(data, key, make, *arrays):
    """``make(*arrays)``: a result tuple, kept in ``data`` so a call with ``data=`` makes no new object."""
    return make(*arrays) if data is None else data.result(key, make, *arrays)
