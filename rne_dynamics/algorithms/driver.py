"""The one driver of every algorithm: from its *step* (the equations for one state) and its *memory* layout, the
compiled one-state entry and the Python side of a call (checks, held ``Data``, batches, errors).

An algorithm module declares two things:

- its memory, declared by :func:`~rne_dynamics.model.memory.memory` (the arrays of one state by name and shape, results
  first), whose layout ``(block, m)`` returns their views of one flat ``block``, ``(arrays, end_of_results, end)``.
- ``step(m, w, q, t_1, ..., t_k, *parameters)``: the equations, writing the results into ``w``; ``q`` is a
  configuration (``nq``), the ``t`` tangent vectors (``nv``: ``qd``, ``qdd``, ``tau``, ...); the parameters
  (external wrenches, gravity, a link, a reference frame) were checked by the caller. It returns nothing, or a
  status code (``OK``).

The one-state entry checks sizes, finiteness and unit quaternions inside the compiled call and returns a status
code; Python builds an error message only when the code says something is wrong. It takes gravity and the external
wrenches as one *environment* array, ``[gravity; the body wrenches, if any]``: a numba call of eight arguments costs
a third more than one of seven. With a held ``data`` the call is one compiled call whose results are views of
``data`` (nothing is allocated). A batch runs the robot's written code (:mod:`.written`), or the entry state by
state, on every core once it is machine code, copying each state's results into its row of the output.

numba compiles an entry off the caller's path (:mod:`rne_dynamics._compile`): until its machine code is in numba's
cache, the entry's Python serves.
"""
import collections
import concurrent.futures
import functools
import os
import weakref
from dataclasses import replace

import numpy as np

from .._compile import machine_code, python_calls
from .._jit import (BAD_SHAPE, NOT_FINITE, NOT_UNIT, OK, OVERFLOW, Slot, arithmetic_kernel, carve, helper, numba,
                    status_of)
from .._trace import traceable
from .._tuning import BUILD_WAIT, LONG_BATCH, PIECES, THREAD_ROWS, WARM
from ..model.data import Data, Held, memory, owned
from ..model.joints import unit_quaternions
from ..model.buffers import model_view, model_view_inline
from .written import extras_key, inputs_of, lock, variant, written
from .inputs import (NO_WRENCHES, QUATERNION_TOLERANCE, all_finite, body_wrenches, gravity_vector, one_state_arrays,
                     states, status_error)

#: The statuses of a robot's written code that say all there is to say: any other (a guard) runs the generic kernel.
EXPLAINED = (OK, NOT_FINITE, NOT_UNIT, OVERFLOW)


def environment_of(gravity, f_ext, out=None):
    """The ``environment`` array ``[gravity; the body wrenches]`` (into ``out``), as :func:`environment_parts` reads
    it."""
    out = np.empty(3 + f_ext.size) if out is None else out
    out[:3], out[3:] = gravity, f_ext.ravel()
    return out


@helper
def environment_parts(environment):
    """``(f_ext, gravity)`` of an ``environment`` array: gravity ``(3,)``, then the external body wrenches ``(nb, 6)``
    or nothing (``f_ext`` ``(0, 6)``: none)."""
    f_ext, _ = carve(environment, 3, ((environment.shape[0] - 3) // 6, 6))
    return f_ext, environment[:3]


#: The compiled entry of every algorithm, written out for each with its step, layout and explicit arguments: numba's
#: ``*arguments`` would cost a fifth of a small robot's call, and a closure over the step would miss numba's disk
#: cache in every new process (its key pickles the closure's cells). It checks the state's sizes (``q``: ``nq``, the
#: tangent vectors: ``nv``; a batch reaches here only uncompiled, without numba's types), finiteness (the state's
#: arrays; the other parameters were checked by the caller) and unit quaternions, runs the step and checks that its
#: results are finite. It calls the step (an ``arithmetic_kernel``) as a function: numba's IR inlining of a step into
#: the entry left results unwritten (hybrid dynamics, the simulator's step, ``M^-1``). A batch calls it per state
#: (:meth:`Algorithm.generic_batch`): a compiled batch entry would double numba's time for each algorithm.
ENTRY = """
def single_{name}(fdata, idata, block, {inputs}):
    {unpack}
    m = model_view_inline(fdata, idata)
    if {q}.ndim != 1 or {sizes}:
        return BAD_SHAPE
    if not ({finite}):
        return NOT_FINITE
    if not unit_quaternions(m, {q}, QUATERNION_TOLERANCE):
        return NOT_UNIT
    w, results, _ = layout(block, m)
    status = status_of(step(m, w, {arguments}))
    if status == OK and not all_finite(block[:results]):
        return OVERFLOW
    return status
"""


def entry_point(name, step, layout, state, parameters):
    """The compiled entry ``single_name`` of the algorithm ``step`` with memory ``layout``: ``single(fdata, idata,
    block, *inputs)``, the inputs being the ``state`` (``q``, then the tangent vectors) and the ``parameters``, with
    ``f_ext, gravity`` as one ``environment`` (the state's, for finiteness); returning a status code."""
    inputs, unpack, per_state = state + parameters, "", state
    if "f_ext" in parameters:  # (gravity follows it)
        inputs, per_state = state + ("environment",) + parameters[2:], state + ("environment",)
        unpack = "f_ext, gravity = environment_parts(environment)"
    sizes = " or ".join([f"{state[0]}.shape[0] != m.nq"] + [f"{t}.shape[-1] != m.nv" for t in state[1:]])
    namespace = dict(__name__=__name__, OK=OK, BAD_SHAPE=BAD_SHAPE, NOT_FINITE=NOT_FINITE, NOT_UNIT=NOT_UNIT,
                     OVERFLOW=OVERFLOW, QUATERNION_TOLERANCE=QUATERNION_TOLERANCE, all_finite=all_finite,
                     model_view_inline=model_view_inline, unit_quaternions=unit_quaternions, status_of=status_of,
                     environment_parts=environment_parts, step=step, layout=layout)
    source = ENTRY.format(name=name, inputs=", ".join(inputs), unpack=unpack, q=state[0], sizes=sizes,
                          finite=" and ".join(f"all_finite({x})" for x in per_state),
                          arguments=", ".join(state + parameters))
    exec(compile(source, __file__, "exec"), namespace)
    return arithmetic_kernel(namespace[f"single_{name}"])


def entry(name):
    """The compiled entry of the algorithm named ``name`` (how a background compile finds it)."""
    return next(algorithm.single for algorithm in ALGORITHMS if algorithm.name == name)


def _batch_views(out, slots):
    """The result arrays at ``slots`` of each row of a batch's ``(N, size)`` block."""
    return [out[:, s.offset:s.offset + int(np.prod(s.shape))].reshape((len(out),) + s.shape) for s in slots]


def result_maker(result, slots):
    """``block -> result``: ``result`` of the views at ``slots`` of one state's block, written out as one expression
    (``block[a:b]``, reshaped; a comprehension over the slots costs a fifth of a small robot's call)."""
    views = [f"block[{offset}:{offset + int(np.prod(shape))}]"
             + (f".reshape({tuple(map(int, shape))})" if len(shape) > 1 else "") for offset, shape in slots]
    return eval(f"lambda block: result({', '.join(views)})", {"result": result})


@functools.cache
def _threads():
    return concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="rne_dynamics batch")


def in_threads(rows, count):
    """``rows(first, last)``, returning ``(status, state)``, over ``count`` states: the calling thread and the pool's
    threads take pieces of them in turn, once there are :data:`THREAD_ROWS` states for each; the first state at
    fault."""
    threads = _threads()._max_workers
    if count < 2 * THREAD_ROWS or threads < 2:
        return rows(0, count)
    size = max(THREAD_ROWS, -(-count // (PIECES * threads)))
    pieces = iter(range(0, count, size))  # shared by the threads (the next piece is taken under the interpreter lock)

    def take():
        for first in pieces:
            status, n = rows(first, min(first + size, count))
            if status != OK:  # the pieces not taken yet are all later
                return status, n
        return OK, 0
    helpers = [_threads().submit(take) for _ in range(threads - 1)]
    done = [take()] + [helper.result() for helper in helpers if not helper.cancel()]  # (a pool busy elsewhere)
    return min((d for d in done if d[0] != OK), key=lambda d: d[1], default=(OK, 0))


#: Every algorithm, in the order of their modules' import.
ALGORITHMS = []


def engine_report():
    """Per algorithm that has run (by its name, ``step_memory``), where its states were computed and why:
    ``{"states": {engine: count}, "fallbacks": {reason: count}, "not written": {reason: count}, "failures": [...]}``.

    The engines: ``"written machine code"`` (the robot's written code, built as C), ``"generic machine code"`` and
    ``"generic Python"`` (the generic entry, as numba compiled it or as its Python until numba has it).
    ``fallbacks``: the states the generic entry computed, by why (a robot's first allocating states, a state past a
    guard, no written code, its build under way; the closed-loop solve's states past a guard: its Python solver's),
    and a batch's states the written code computed one by one before its vector lanes were built; ``not written``:
    the written codes not made, by why (counted once per robot and variant); ``failures``: what failed in an engine
    (a step that raised while traced, a C build), each also logged (``RNE_DYNAMICS_STRICT=1`` raises it). Counts
    since the process started; only states computed without error are counted. The kernels called from Python around
    the algorithms (the argument checks, ``integrate``: ``"module:name"``) are reported by their calls that ran their
    Python while numba compiled them."""
    report = {}
    for algorithm in ALGORITHMS:
        held, served = algorithm.held_generic_states, sum(m.served() for m in algorithm.native_modules.values())
        engine = GENERIC_MACHINE_CODE if numba is not None else GENERIC_PYTHON
        states = dict(collections.Counter({MACHINE_CODE: served, engine: held}) + algorithm.generic_runs)  # (only > 0)
        fallbacks = dict(algorithm.fallbacks + collections.Counter({NOT_WRITTEN: held}))
        if states or fallbacks or algorithm.not_written or algorithm.failures:
            report[algorithm.name] = {"states": states, "fallbacks": fallbacks,
                                      "not written": dict(algorithm.not_written), "failures": list(algorithm.failures)}
    for kernel, calls in python_calls.items():  # (the argument checks and integrate: no written code, no failures)
        report[kernel] = {"states": {GENERIC_PYTHON: calls}, "fallbacks": {COMPILING: calls}, "not written": {},
                          "failures": []}
    return report


def _first(array, *_):
    return array


#: The held entry of an algorithm that a ``Data`` has not run yet: its call says so (the run path then makes one).
NOT_HELD = Held(None, None, (), lambda *_: BAD_SHAPE)


#: The engines a state runs on, as :func:`engine_report` names them.
MACHINE_CODE, GENERIC_MACHINE_CODE, GENERIC_PYTHON = "written machine code", "generic machine code", "generic Python"
#: Why a state ran on the generic kernel (:meth:`Algorithm.why_generic`).
WARMING = f"warm-up: a robot's first WARM={WARM} states"
PAST_GUARD = "a state past a guard of the written code"
NOT_WRITTEN = "no written code (why: not_written)"
BUILDING = "its written code's machine code is being built"
COMPILING = "numba is compiling it"
#: Why a robot's written code was dropped (counted in ``not written``): :meth:`Algorithm.kernel_built`.
RETIRED = "a bridge (more than UNROLLED operations): numba's machine code of the generic entry serves"
#: Why a batch's states ran one by one on the written code (counted as its states too).
ONE_BY_ONE = "a batch state by state: its written code's vector lanes are being built"


class Algorithm:
    """An algorithm's compiled entries and the Python side of its calls.

    ``arguments``: the names of ``q`` and the tangent vectors, for error messages; ``what``: the results, in words;
    ``result``: makes the caller's result from the result arrays (default: the first array). The step takes, after
    the state, the external body wrenches if ``wrenches`` (``(nb, 6)``, or ``(0, 6)`` for none), gravity if
    ``gravity``, and the parameters named ``extras`` (numbers or arrays shared by every state of a batch).
    ``generic=False``: the algorithm runs only as a robot's written code (its caller has another path for a state
    the code hands back), so it has no compiled entry; ``writable=False``: only its compiled entry, never a written
    code (a step whose branches on the state, an iterative solve, would make the written code's guards hand most
    states back after a long trace and build). ``intermediates``: the memory nested among its results whose arrays
    a held ``Data`` shows (RNEA's, for ``data.v``, ``data.a``, ``data.f``); ``batches``: the algorithm that runs its
    batches (the same step without them: a batch has no ``Data`` to show them in, and its rows stay small).

    Two engines run a state: the robot's written code (its machine code, once built) and the generic entry (numba's
    machine code, or its Python until numba has it). Which ran, and why the generic one did, is counted
    (:func:`engine_report`).
    """

    def __init__(self, step, layout, arguments, what, result=_first, *, gravity=False, wrenches=False, extras=(),
                 generic=True, writable=True, intermediates=None, batches=None):
        self.step, self.layout, self.arguments, self.what, self.result = step, layout, arguments, what, result
        self.intermediates, self.batches = intermediates, batches
        self.gravity, self.wrenches, self.extras, self.writable = gravity, wrenches, tuple(extras), writable
        self.name = f"{step.__name__}_{layout.__name__}"
        # what the written code's fresh makes of the result arrays (kind None: the first; a tuple type: all of them
        # in one), and the function that makes the result of that tuple, if any
        named = isinstance(result, type) and issubclass(result, tuple)
        self.kind = None if result is _first else result if named else tuple
        self.finish = None if result is _first or named else result
        ALGORITHMS.append(self)
        self.defaults = (gravity_vector(None),) * gravity  # standard gravity: also the environment without wrenches
        parameters = ("f_ext",) * wrenches + ("gravity",) * gravity + tuple(extras)
        self.single = entry_point(self.name, step, layout, arguments, parameters) if generic else None
        # the one compiled call is tried first once it has its one signature (else numba would compile another)
        self.ready = generic and not hasattr(self.single, "disable_compile")
        # the report (engine_report): states by engine and by reason, written codes not made, engine failures; the
        # written code's states are counted by its C modules; the states a Data's held generic entry computed (no
        # written code: typed_generic)
        self.generic_runs, self.fallbacks = collections.Counter(), collections.Counter()
        self.not_written, self.failures = collections.Counter(), []
        self.native_modules, self.held_generic_states = {}, 0
        # the written codes served only until numba has the entry (weakly: a robot dropped meanwhile, a model swap's)
        self.bridges, self.kernel_cached = weakref.WeakSet(), False

    def run(self, robot, data, state, gravity=None, external_wrenches=None, extras=(), drive=True):
        """Run on one state or a batch (``state``: the arrays named by ``arguments``), in ``data`` if given; with the
        drives' armature and friction, or (``drive=False``) rigid-body dynamics only. (A method, not ``__call__``:
        calling an instance with keywords costs a tenth of a small robot's call.)

        Each engine takes what it can check itself: the written code any arguments (it returns ``BAD_SHAPE`` for
        what is not a float64 vector of one state's size: a batch of one is a batch); the generic entry only arrays
        of numba's types (:func:`~rne_dynamics.algorithms.inputs.one_state_arrays`); :meth:`checked` converts
        anything else and explains every error."""
        tried = None  # the held call, made on this state already (not again below)
        if data is not None:
            if type(data) is not Data or data.robot is not robot:
                owned(robot, data)  # raises: what data= must be
            if gravity is None and drive and not external_wrenches and not extras:
                # the fewest steps: the held memory and call (the robot's written code, once made) and gravity
                held = data.held.get(self, NOT_HELD)
                if held.call(*held.arguments, *state, *self.defaults) == OK:
                    return held.result
                tried = held.call
        environment = self.defaults if gravity is None else (gravity_vector(gravity),)
        code = (None if external_wrenches or not self.writable
                else robot.engines.written.get((self, drive, *extras_key(extras)), False))
        counted = code is False  # (a state counted towards WARM here: not again by checked)
        if counted:
            code = self.written(robot, drive, extras)
        if code is not None and code.single is not None:  # (none while its machine code is being built)
            if data is None:
                result = code.fresh(self.kind, *state, *environment)  # the result in new memory, or a status
                if result.__class__ is not int:
                    return result if self.finish is None else self.finish(*result)
            else:
                held = self.held(robot, data)
                if code.single is not tried and code.single(held.block, *state, *environment) == OK:
                    return held.result
        # the generic entry on arguments of its types, its one compiled call once numba has it (a batch: numba would
        # type its arguments to refuse them, 0.25 ms); the written code has had these arrays
        fdata = robot.fdata if drive else robot.rigid_body_fdata
        if not external_wrenches and one_state_arrays(state):
            held = self.held(robot, data)
            generic = self.single if self.ready else self.generic
            if generic(fdata, robot.idata, held.block, *state, *environment, *extras) == OK:
                self.generic_ran(1, self.why_generic(robot, drive, extras, False, code))
                return held.result
        return self.checked(robot, fdata, data, state, gravity, external_wrenches, extras, counted)

    def written(self, robot, drive, extras, wrenches=False, states=1, wait=False):
        """The robot's written code for a call of ``states`` states (:func:`~rne_dynamics.algorithms.written.written`),
        or None: the first :data:`WARM` states of each variant (the parameters ``extras``: a link) run the generic
        kernel unless it was made (its machine code, or its Python until numba has it): tracing costs about a
        hundred of its calls and the build a compiler run, which a variant called a few times (a test, a script, a
        sweep over the links) never repays. ``wait``: as :func:`~rne_dynamics.algorithms.written.written`'s."""
        key = variant(self, drive, extras, wrenches)
        served = robot.engines.generic_states[key] = robot.engines.generic_states.get(key, 0) + states
        return written(self, robot, drive, extras, wrenches, wait, new=served > WARM)

    def why_generic(self, robot, drive, extras, wrenches, code):
        """Why a state of ``robot`` ran on the generic kernel, given the written ``code`` that the call had (None if
        it had none)."""
        if code is not None and code.single is not None:
            return PAST_GUARD
        key = variant(self, drive, extras, wrenches)
        if robot.engines.generic_states.get(key, 0) <= WARM:
            return WARMING
        return BUILDING if robot.engines.written.get(key) is not None else NOT_WRITTEN

    def generic_compiled(self, robot, fdata, extras):
        """Whether the generic entry runs ``robot``'s calls as numba's machine code: compiled here, or loaded from
        numba's cache now (:func:`~rne_dynamics._compile.machine_code`; its compile is not queued from here: a call
        that runs the generic entry queues it, not one that only builds written code, ``rne-dynamics compile``)."""
        if self.single is None or self.ready:
            return self.ready
        samples = inputs_of(self, robot)[:len(self.arguments)]
        arguments = (fdata, robot.idata, np.empty(self.slots(robot)[2]), *samples, *self.defaults, *extras)
        return machine_code(self.single, arguments, (__name__, "entry", self.name), queue=False)

    def generic_ran(self, states, why):
        """Count ``states`` that the generic entry computed, by engine and by ``why`` it ran (:meth:`why_generic`)."""
        self.generic_runs[GENERIC_MACHINE_CODE if self.ready and numba is not None else GENERIC_PYTHON] += states
        self.fallbacks[why] += states

    def checked(self, robot, fdata, data, state, gravity, external_wrenches, extras, counted):
        """The call on the model ``(fdata, robot.idata)`` with its arguments converted and checked, and every error
        explained. Finiteness and unit quaternions are checked per state by the call that runs (the written code's and
        the generic kernel's status), not here again. ``counted``: one state was counted towards
        :data:`WARM` already."""
        state = states(robot, finite=False, unit_quaternions=False, **dict(zip(self.arguments, state)))
        batch = len(state[0]) if state[0].ndim == 2 else 0
        if batch and self.batches is not None:
            return self.batches.checked(robot, fdata, data, state, gravity, external_wrenches, extras, counted)
        # the checked gravity and external body wrenches ((states, nb, 6): none, (1, 0, 6)), if the step takes them
        g = (gravity_vector(gravity),) * self.gravity
        f_ext = body_wrenches(robot, external_wrenches, max(batch, 1), data) if self.wrenches else NO_WRENCHES
        drive, wrenches = fdata is robot.fdata, f_ext.size > 0
        # a long batch waits for its written code's machine code, built now: about a second (unless other builds
        # hold the compilers), against a few times the time a state on the generic kernel
        wait = BUILD_WAIT if batch >= LONG_BATCH else False
        code = self.written(robot, drive, extras, wrenches, max(batch, 1) - counted, wait)
        # the written code takes the body wrenches after gravity, flat; its statuses but a guard's need no generic run
        inputs = (*state, *g, f_ext.reshape(*state[0].shape[:-1], -1)) if wrenches else (*state, *g)
        if batch:
            slots, results, size, _ = self.slots(robot)
            out = memory(robot, data, (self, "batch"), (batch, results))

            def rows(first, last):  # of in_threads: the written code's batch (it releases the interpreter) on them
                status, n = code.batch(out[first:last], *(x[first:last] if x.ndim == 2 else x for x in inputs))
                return status, first + n
            status, row = in_threads(rows, batch) if code is not None else (None, 0)
            if status == OK and not code.final:  # (state by state on its first stage: its lanes are built now)
                self.fallbacks[ONE_BY_ONE] += batch
                code.lanes()
            if status not in EXPLAINED:  # the generic kernel, which also says what is wrong
                status, row = self.generic_batch(fdata, robot.idata, size, out, state, f_ext, g, extras)
                self.generic_ran(batch if status == OK else row, self.why_generic(robot, drive, extras, wrenches, code))
            result = self.result(*_batch_views(out, slots))
        else:
            row, held = None, self.held(robot, data)
            result = held.result
            status = code.single(held.block, *inputs) if code is not None else None
            if status not in EXPLAINED:
                environment = g
                if wrenches:
                    out = memory(robot, data, "environment", (3 + f_ext[0].size,))
                    environment = (environment_of(g[0], f_ext[0], out),)
                status = self.generic(fdata, robot.idata, held.block, *state, *environment, *extras)
                self.generic_ran(int(status == OK), self.why_generic(robot, drive, extras, wrenches, code))
        if status != OK:
            raise self.error(robot, status, state, "" if row is None else f" at state {row}")
        return result

    def held(self, robot, data):
        """The :class:`~rne_dynamics.model.data.Held` of one state: its memory, the result made of its views, and
        the call (the robot's written code, else the generic entry on arguments of its types) with its first
        arguments that the held call with the standard environment makes; kept in ``data`` if given (the written
        code's build swaps its machine code in). Without ``data``, new memory."""
        if data is not None and (held := data.held.get(self)) is not None:
            return held
        _, _, size, make = self.slots(robot)
        block = np.empty(size)
        # the written code for a held call, once made and built (an algorithm with extras: its written code is by
        # them; an allocating call takes only the memory from here)
        code = None if self.extras or data is None else written(self, robot, new=False)
        shown = None if self.intermediates is None or data is None else getattr(
            self.layout(block, traceable(model_view)(robot.fdata, robot.idata))[0], self.intermediates)
        arguments, call = ((block,), code.single) if code is not None else self.generic_held_call(robot, block)
        held = Held(block, make(block), arguments, call, shown)
        if data is not None:
            data.held[self] = held
        return held

    def generic_held_call(self, robot, block):
        """``(arguments, call)`` of a held call of ``robot`` on the generic entry (:meth:`typed_generic`), into
        ``block``: until the written code is in, or once a bridge gave way."""
        return (robot.fdata, robot.idata, block), functools.partial(self.typed_generic, robot)

    def typed_generic(self, robot, *arguments):
        """The generic entry as ``robot``'s held call until its written code is built: on arguments of its types only
        (any other: ``BAD_SHAPE``, and the caller converts them); its states counted, a robot's first :data:`WARM`
        towards its written code (then made: its build swaps itself in for this call)."""
        if not one_state_arrays(arguments[3:3 + len(self.arguments)]):
            return BAD_SHAPE
        status = self.single(*arguments) if self.ready else self.generic(*arguments)  # (its Python until numba has it)
        if status != OK:
            return status
        if self.writable and robot.engines.written.get(variant(self, True, (), False), False) is False:  # not made
            self.written(robot, True, ())  # (made past WARM: it puts itself in as this held call once built)
            self.generic_ran(1, self.why_generic(robot, True, (), False, None))
        elif self.ready:
            self.held_generic_states += 1  # (an int: a Counter's item costs a tenth of a microsecond more)
        else:
            self.generic_ran(1, NOT_WRITTEN)
        return status

    def generic(self, *arguments):
        """The generic entry on ``arguments``: its machine code when numba has it (loaded from numba's cache, or
        compiled by the background process :mod:`~rne_dynamics._compile` starts), its Python meanwhile."""
        if self.ready:
            return self.single(*arguments)
        if not machine_code(self.single, arguments, (__name__, "entry", self.name), then=self.kernel_built):
            return traceable(self.single)(*arguments)
        status = self.single(*arguments)
        if status == OK:
            self.single.disable_compile()  # its one signature is compiled: other types go through here
            self.ready = True
        return status

    def kernel_built(self):
        """numba has cached the generic entry's machine code: each robot's bridge (a written program of more than
        :data:`~rne_dynamics._tuning.UNROLLED` operations, slower than the entry as machine code) gives way to it, in
        its variant and in the held calls of the robot's ``Data`` objects (a bridge built later, as soon as it is
        in)."""
        bridges, self.bridges, self.kernel_cached = self.bridges, weakref.WeakSet(), True
        for made in bridges:
            self.not_written[RETIRED] += 1
            engines = made.robot.engines
            with lock:  # (as the written code's build swaps itself in)
                engines.written.update({key: None for key, code in list(engines.written.items()) if code is made})
                for data in list(engines.datas):
                    if (held := data.held.get(self)) is not None and held.call is made.single:
                        arguments, call = self.generic_held_call(made.robot, held.block)
                        data.held[self] = replace(held, arguments=arguments, call=call)

    def generic_batch(self, fdata, idata, size, out, state, f_ext, gravity, extras):
        """A batch on the generic entry, state by state (numba's machine code runs them on every core, as it
        releases the interpreter): ``(status, state)``, the first state at fault."""
        def rows(first, last):
            block = np.empty(size)
            for n in range(first, last):
                environment = (environment_of(gravity[0], f_ext[n]),) if f_ext.size else gravity
                status = self.generic(fdata, idata, block, *(x[n] for x in state), *environment, *extras)
                out[n] = block[:out.shape[1]]
                if status != OK:
                    return status, n
            return OK, 0
        return in_threads(rows, len(out)) if self.ready else rows(0, len(out))

    def slots(self, robot):
        """``(result slots, end of results, size, result maker)`` of this algorithm's memory for ``robot``,
        measured once; the maker (:func:`result_maker`) makes the result of one state's block."""
        shape = robot.engines.workspace_shapes.get(self)
        if shape is None:
            w, results, size = self.layout(None, traceable(model_view)(robot.fdata, robot.idata))  # Python: no compile
            slots = tuple(s for s in w if isinstance(s, Slot) and s.offset + int(np.prod(s.shape)) <= results)
            shape = robot.engines.workspace_shapes[self] = (slots, results, size, result_maker(self.result, slots))
        return shape

    def error(self, robot, status, state, where):
        """The error for a status code (:func:`~rne_dynamics.algorithms.inputs.status_error`)."""
        return status_error(robot, status, dict(zip(self.arguments, state)), self.what, where)
