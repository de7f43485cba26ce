"""Per-call memory that a user may hold, as Pinocchio splits Model and Data: the robot is immutable, a :class:`Data`
holds the workspaces and results of its algorithms.

``data = robot.data()`` once, then ``rd.inverse_dynamics(robot, q, qd, qdd, data=data)``: the call writes into
``data`` and returns views of it, valid until the next call with the same ``data``; once each call has run with it,
nothing more is allocated. Without ``data=`` every call allocates its own results. After it, ``data.v``,
``data.a``, ``data.a_gf`` and ``data.f`` are that call's per-body intermediates, as in Pinocchio's Data.
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
    (the robot's written code: ``arguments`` is ``(block,)``; the generic entry: ``(fdata, idata, block)``);
    ``intermediates``: the named views of ``block`` that the :class:`Data` shows (inverse dynamics: RNEA's arrays),
    or None. Slots, not a named tuple: a held call reads three fields, and a named tuple's are slower to read
    (unpacking one cost 65 ns more than a tuple, a tenth of a small arm's ``data=`` call)."""
    block: np.ndarray
    result: Any
    arguments: tuple
    call: Callable
    intermediates: Any = None


class Engines:
    """What the machine-code layer keeps for one robot, the only mutable part of a frozen
    :class:`~rne_dynamics.model.robot.Robot` (``robot.engines``; not pickled: the receiver starts with an empty one).

    ``written``: per ``(algorithm, drive, ...)`` the robot's written code (:mod:`~rne_dynamics.algorithms.written`),
    or None where its generic kernel serves, made under ``lock``; ``datas``: the robot's live :class:`Data` objects,
    whose held calls the written code's machine code replaces when it is built; ``generic_states``: per written
    code's key, the states its generic kernel served before the written code was made (the driver's warm-up);
    ``workspace_shapes``: per algorithm, its memory's measured slots (``Algorithm.slots``); ``made``: what the
    algorithms derive once from the model (:meth:`derived`)."""
    __slots__ = ("written", "datas", "generic_states", "workspace_shapes", "lock", "made")

    def __init__(self):
        self.written, self.generic_states, self.workspace_shapes, self.made = {}, {}, {}, {}
        self.datas = weakref.WeakSet()
        self.lock = threading.Lock()

    def derived(self, make, robot):
        """``make(robot)``, made once for the robot and kept under ``make`` (a value an algorithm derives from the
        model: the loops' cuts, the simulator's stop limits). Made without a lock (``make`` may take the written
        code's): two threads may both make it, and the first one kept is the one every caller gets."""
        if make not in self.made:
            self.made.setdefault(make, make(robot))
        return self.made[make]


class Data:
    """The arrays of one robot's calls, each kept under a key and made again only when its shape changes (a batch of
    another size); and, as Pinocchio's Data after ``rnea``, the per-body intermediates :attr:`v`, :attr:`a`,
    :attr:`a_gf`, :attr:`f` of the last one-state ``rd.inverse_dynamics(..., data=data)``.

    Whichever engine ran that call wrote them (the written code among its outputs), per body in
    ``robot.body_joint_names`` order (a floating base is body 0; mimic joints have their bodies), ``(nb, 6)`` each, in
    the body's frame (its joint's frame), ``[linear; angular]`` as Pinocchio's Motion and Force and the contract's
    wrenches: :attr:`v`, :attr:`a_gf` and :attr:`f` are views of ``data``, overwritten by the next such call;
    :attr:`a` is computed when read. A batch or another algorithm leaves them as they were; a call that raised,
    undefined.
    """
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

    def _rnea(self):
        """RNEA's arrays of the last one-state inverse dynamics in this data (the held entry that shows its
        intermediates: this layer does not import the algorithms); their last row is the fixed base's."""
        for held in self.held.values():
            if held.intermediates is not None:
                return held.intermediates
        raise StateError(f"data.v, data.a, data.a_gf and data.f are those of the last one-state "
                         f"rd.inverse_dynamics(robot, q, qd, qdd, data=data): none has run with this data of robot "
                         f"'{self.robot.name}'")

    @property
    def v(self):
        """``(nb, 6)``: each body's spatial velocity ``[v; w]`` (its frame origin's velocity, angular velocity) in its
        frame (Pinocchio's ``data.v[1:]``; RBDA eq. 5.7)."""
        return self._rnea().v[:-1]

    @property
    def a_gf(self):
        """``(nb, 6)``: each body's spatial acceleration ``[dv; dw]`` in its frame, gravity included as an
        acceleration ``-g`` of the fixed base (RBDA Sec. 5.3): what RNEA computes (Pinocchio's ``data.a_gf[1:]``)."""
        return self._rnea().a[:-1]

    @property
    def a(self):
        """``(nb, 6)``: each body's spatial acceleration ``[dv; dw]`` in its frame, without gravity (Pinocchio's
        ``data.a[1:]``, as its ``forwardKinematics(q, v, a)`` fills it), computed when read (a new array).

        RNEA's accelerations are linear in the base's, ``-g``, which reaches body ``i`` as the motion ``[R_0i^T (-g);
        0]`` (a pure translation rotates into each frame, RBDA eq. 2.24): ``a_i = a_gf_i - [R_0i^T (-g); 0]``, with
        ``R_0i^T = R_i^T R_0λ^T`` down the tree from the poses ``X_up`` RNEA leaves in ``data``."""
        rnea = self._rnea()
        base = np.empty((self.robot.nb, 3))  # -g in each body's frame
        for i, body in enumerate(self.robot.bodies):
            base[i] = rnea.R[i].T @ (rnea.a[-1, :3] if body.parent < 0 else base[body.parent])
        a = rnea.a[:-1].copy()
        a[:, :3] -= base
        return a

    @property
    def f(self):
        """``(nb, 6)``: the wrench ``[f; tau]`` each body's joint transmits: exerted on the body by its parent, in the
        body's frame about its origin (the contract's joint wrench; Pinocchio's ``data.f[1:]`` after ``rnea``)."""
        return self._rnea().f[:-1]

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
