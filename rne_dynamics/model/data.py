"""Per-call memory that a user may hold, as Pinocchio splits Model and Data: the robot is immutable, a :class:`Data`
holds the workspaces and results of its algorithms.

``data = robot.data()`` once, then ``rd.inverse_dynamics(robot, q, qd, qdd, data=data)``: the call writes into
``data`` and returns views of it, valid until the next call with the same ``data``; once each call has run with it,
nothing more is allocated. Without ``data=`` every call allocates its own results.
"""
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import StateError


@dataclass(frozen=True, slots=True)
class Held:
    """What a :class:`Data` holds for one algorithm: one state's memory ``block``, the ``result`` made of its views,
    and the ``call`` that computes a state into it, as ``call(*arguments, *state, *environment)`` returning a status
    (the robot's written code: ``arguments`` is ``(block,)``; the generic entry: ``(fdata, idata, block)``). Slots,
    not a named tuple: a held call reads three fields, and a named tuple's are slower to read (unpacking one cost
    65 ns more than a tuple, a tenth of a small arm's ``data=`` call)."""
    block: np.ndarray
    result: Any
    arguments: tuple
    call: Callable


class Engines:
    """What the machine-code layer keeps for one robot, the only mutable part of a frozen
    :class:`~rne_dynamics.model.robot.Robot` (``robot.engines``; not pickled: the receiver starts with an empty one).

    ``written``: per ``(algorithm, drive, ...)`` the robot's written code (:mod:`~rne_dynamics.algorithms.written`),
    or None where its generic kernel serves, made under ``lock``; ``datas``: the robot's live :class:`Data` objects,
    whose held calls the written code's machine code replaces when it is built; ``generic_states``: per algorithm,
    the allocating states its generic kernel served before the written code was made (the driver's warm-up);
    ``workspace_shapes``: per algorithm, its memory's measured slots (``Algorithm.slots``)."""
    __slots__ = ("written", "datas", "generic_states", "workspace_shapes", "lock")

    def __init__(self):
        self.written, self.generic_states, self.workspace_shapes = {}, {}, {}
        self.datas = weakref.WeakSet()
        self.lock = threading.Lock()


class Data:
    """The arrays of one robot's calls, each kept under a key and made again only when its shape changes (a batch of
    another size)."""
    __slots__ = ("robot", "held", "_arrays", "__weakref__")

    def __init__(self, robot):
        self.robot = robot
        self.held = {}  # per algorithm: its Held (one state's memory, its result views, the call)
        self._arrays = {}

    def array(self, key, shape):
        """The array kept under ``key``, of ``shape`` (a tuple, or a size; uninitialised when new)."""
        if shape.__class__ is not tuple:
            shape = (shape,)
        x = self._arrays.get(key)
        if x is None or x.shape != shape:
            x = self._arrays[key] = np.empty(shape)
        return x

    def __repr__(self):
        return f"Data(robot '{self.robot.name}', {len(self._arrays)} arrays)"


def owned(robot, data):
    """``data``, checked to be a Data of ``robot``."""
    if data.__class__ is not Data or data.robot is not robot:
        raise StateError("data= must come from this robot: data = robot.data() (a Data belongs to the robot that "
                         "made it; robot.with_payload(...) and the like make new robots)")
    return data


def memory(robot, data, key, shape):
    """``data``'s array under ``key`` (``data=`` given), else a new one."""
    if data is None:
        return np.empty(shape)
    return owned(robot, data).array(key, shape)


def results(robot, data, key, q, *shapes):
    """One array per ``shape`` of a single state's result, for the states of ``q`` (one or a batch): new ones, or
    ``data``'s under ``key``."""
    batch = q.shape[:-1]
    if data is None:
        return [np.empty(batch + shape) for shape in shapes] if batch else [np.empty(shape) for shape in shapes]
    return [memory(robot, data, (key, k), batch + shape) for k, shape in enumerate(shapes)]
