"""Each robot's own code for each algorithm, derived from the algorithm's generic step: the default path of every
call.

The first call of an algorithm on a robot traces its step (:mod:`rne_dynamics._trace`: the generic equations run
once on symbolic numbers with the model's numbers as constants, zeros folded, the tree unrolled) and gets a
straight-line program of the state's inputs, which is built as C at once, in the background
(:mod:`rne_dynamics._native`, about a second for an arm); the generic kernel serves until the built module is in,
then the module serves every ``Data`` of the robot. It is cached on disk for every later process, keyed by the
model's numbers and the kernel sources. A change of an equation therefore changes the written code with it.

The written code takes the standard inputs of the driver's one-state entry (the state, then gravity, then nothing:
no external wrenches, no per-call parameters such as a link); any state it cannot serve (a guard of the trace, a
non-finite number, a bad size) returns a non-zero status and the generic kernel runs it and explains.
"""
import functools
import logging
import os
import sys
import sysconfig
import threading
from dataclasses import replace

import numpy as np

from .. import _compile, _jit, _native, _trace, _tuning
from .._jit import OK
from .._trace import Untraceable, trace, traceable
from .._tuning import MAX_NODES, QUICK_FIRST, STRICT, UNROLLED, VARIANTS
from ..model.buffers import model_view
from .configuration import random_configuration
from .inputs import NO_WRENCHES, gravity_vector

log = logging.getLogger(__name__)
#: The key of the variant that takes external wrenches.
WRENCHES = "external wrenches"
#: ``RNE_DYNAMICS_WRITTEN`` (:mod:`rne_dynamics._tuning`): ``"0"`` every call runs its generic kernel.
MODE = _tuning.WRITTEN


class EngineFailure(RuntimeError):
    """An engine failed where it should not have (a step that raised while traced, a C build that failed): raised
    with ``RNE_DYNAMICS_STRICT=1`` (the tests), else logged and counted (``rd.engine_report()``)."""


def engine_failure(algorithm, message):
    """Record that an engine of ``algorithm`` failed (``message`` says how): a warning in the log and an entry of its
    report; raised as :class:`EngineFailure` with ``RNE_DYNAMICS_STRICT=1``."""
    algorithm.failures.append(message)
    log.warning("%s: %s; the generic kernel serves", algorithm.name, message)
    if STRICT:
        raise EngineFailure(f"{algorithm.name}: {message}")


@functools.cache
def sources_stamp():
    """The hash of the kernel sources (:func:`rne_dynamics._jit._sources_hash`) and of the tracer and writers,
    computed once per process."""
    writers = [open(module.__file__, "rb").read() for module in (_trace, _native, _tuning, sys.modules[__name__])]
    return _native.digest(_jit._sources_hash(), *writers)


#: The stages of a program's machine code, each served from when it is in until the final one is: its one-state
#: module (at ``-O0`` for a program of more than :data:`QUICK_FIRST` operations, else at ``-O1``), then the final one,
#: at ``-O1`` with the batch's vector lanes: built after a quick first stage, else when a batch runs or a caller waits.
ONE_STATE, FINAL = 1, 2
#: What a first stage's module name has after the algorithm's name: at ``-O1`` (its final module built when a batch
#: runs), or at ``-O0`` (quick: a later process that loads it traces the program again for its final module).
ONE_STATE_NAME, QUICK_NAME = "_one_state", "_quick"
#: What a bridge's module name has after the algorithm's name: a program larger than :data:`UNROLLED`, whose one-state
#: module is its only stage, served only while numba has not compiled the generic kernel.
BRIDGE_NAME = "_bridge"
#: The lock of every written code's stage and build.
lock = threading.Lock()


class Written:
    """A robot's written code for one algorithm: ``single(block, *inputs)`` and ``batch(out, *inputs)``, each
    returning the driver's status codes (the batch: with the first state at fault); None until its machine code is
    built (``native``: the build is queued when the program is traced; :meth:`wait` waits for its ``final`` module).
    The build goes in stages (``stage``, the one in), each a build of the builder's queue (:mod:`rne_dynamics._compile`;
    ``building``, the one queued or under way): first the module without the batch's vector lanes (:data:`ONE_STATE`:
    in half the compiler's time or less, its ``batch`` computing state by state), then the :data:`FINAL` one with
    them: after a ``quick`` first stage (at ``-O0``), else once a batch runs (``batched``) or a caller waits; a
    ``bridge`` (a program larger than :data:`UNROLLED`) has its first stage only. ``source(final)``:
    ``(name, source, optimise)`` of the first stage or the final one, made at its build's turn; ``ended``: set when
    the last stage is in or a build failed."""

    def __init__(self, algorithm, robot, key, source):
        self.single = self.batch = self.fresh = self.failure = self.building = self.bridge = None
        self.algorithm, self.robot, self.key, self.source, self.stage = algorithm, robot, key, source, 0
        self.waited = self.batched = self.quick = False
        self.ended, self.folder = threading.Event(), _native.cache_folder()  # (a build may outlive a test's folder)

    native = property(lambda self: self.stage > 0)
    final = property(lambda self: self.stage == FINAL)

    def start(self):
        """Queue the build of the next stage (none while one is queued or under way, or once :attr:`ended`): the
        final module if a caller waits for it (at :data:`~rne_dynamics._compile.WAITED`) or the first stage is in
        and quick or batched, decided at its turn."""
        with lock:
            if self.building is None and not self.ended.is_set() and (
                    not self.native or self.quick or self.batched or self.waited):
                priority = _compile.WAITED if self.waited else _compile.FINAL if self.native else _compile.FIRST_STAGE
                self.building = _native.build(lambda: self.source(self.waited or self.native), priority, self.built,
                                              self.key, self.folder)

    def built(self, build):
        """In the builder's worker: put in the stage ``build`` built (:func:`install`), then queue the next."""
        try:
            install(self, build)
        finally:
            with lock:
                self.building = None
        self.start()

    def lanes(self):
        """A batch runs state by state on the first stage: build the final module, with the vector lanes."""
        self.batched = True
        self.start()

    def wait(self, timeout=None):
        """Build the final module at the front of the builder's queue if it is not in, and wait for it (at most
        ``timeout`` seconds); returns whether machine code is in use."""
        self.waited = True
        self.start()
        if (building := self.building) is not None:
            _compile.hurry(building)
        self.ended.wait(timeout)
        return self.native


def inputs_of(algorithm, robot):
    """Sample values of the written code's inputs: a random configuration, tangent vectors, standard gravity; or
    ``algorithm.sample(robot)`` for a step that needs a particular state to take its usual branches (the
    closed-loop solve: loops that close)."""
    if hasattr(algorithm, "sample"):
        return algorithm.sample(robot)
    rng = np.random.default_rng(7)
    samples = [random_configuration(robot, rng)] + [rng.uniform(-1.0, 1.0, robot.nv) for _ in algorithm.arguments[1:]]
    return samples + [gravity_vector(None)] * algorithm.gravity


def program_of(algorithm, robot, fdata, extras=(), wrenches=False, limit=None):
    """The traced program of ``algorithm`` on the model ``(fdata, robot.idata)`` with the per-call parameters
    ``extras`` (and external wrenches as inputs, if ``wrenches``): ``(program, outputs, sizes)``; at most ``limit``
    operations (:func:`~rne_dynamics._trace.trace`)."""
    m = traceable(model_view)(fdata, robot.idata)
    _, results, size = algorithm.layout(None, m)
    samples = inputs_of(algorithm, robot)
    layout, step = traceable(algorithm.layout), traceable(algorithm.step)
    if wrenches:
        samples.append(np.random.default_rng(8).uniform(-1.0, 1.0, 6 * robot.nb))
    state = len(algorithm.arguments)

    def run(*inputs):
        block = np.full(size, None, object)
        w, _, _ = layout(block, m)
        f_ext = (inputs[-1].reshape(robot.nb, 6) if wrenches else NO_WRENCHES[0],) * algorithm.wrenches
        status = step(m, w, *inputs[:state], *f_ext, *inputs[state:state + algorithm.gravity], *extras)
        if status not in (None, OK):
            raise Untraceable(f"the sample state returned status {status}")
        return block[:results]

    program, outputs = trace(run, samples, limit)
    return program, outputs, [len(s) for s in samples]


def module_name(algorithm, robot, fdata, extras=(), wrenches=False):
    """The cached module's name: the algorithm, the sources' version, and a digest of the model's numbers, the
    per-call parameters and what the machine code depends on."""
    key = _native.digest(algorithm.name, fdata.tobytes(), robot.idata.tobytes(), sources_stamp(), np.__version__,
                         sysconfig.get_config_var("EXT_SUFFIX"), _native.host(), wrenches, *extras_key(extras))
    return f"{algorithm.name}_{sources_stamp()[:8]}_{key[:16]}"


def variant(algorithm, drive, extras, wrenches):
    """The key of a written code in ``robot.engines.written``: ``(algorithm, drive, [WRENCHES,] *extras)``."""
    return (algorithm, drive, *((WRENCHES,) if wrenches else ()), *extras_key(extras))


def extras_key(extras):
    """The per-call parameters as a key of ``robot.engines.written``: an array by its bytes."""
    return tuple([e.tobytes() if e.__class__ is np.ndarray else e for e in extras])


def written(algorithm, robot, drive=True, extras=(), wrenches=False, wait=False, new=True):
    """The written code of ``algorithm`` for ``robot`` (with its drive terms, or ``drive=False`` rigid-body
    dynamics) and the per-call parameters ``extras`` (a link, a reference frame: written in as constants), made on
    first use and kept by the robot under ``(algorithm, drive, *extras)``; None where the step cannot be written
    out, or while its machine code is being built. With ``wrenches``, the variant that takes external body wrenches
    ``(nb, 6)``, flat, after gravity (kept under ``(algorithm, drive, WRENCHES, *extras)``). ``wait``: seconds to
    wait for the machine code (``True``: until it is in use or has failed). ``new=False``: only one made before."""
    if not algorithm.writable:
        return None
    key = variant(algorithm, drive, extras, wrenches)
    made = robot.engines.written.get(key, False)
    if made is False:
        if not new:
            return None
        with robot.engines.lock:
            made = robot.engines.written.get(key, False)
            if made is False:
                # a caller varying an extra (a simulator's time step) would trace and keep one program per value
                if extras and sum(other[0] is algorithm for other in robot.engines.written) >= VARIANTS:
                    algorithm.not_written[f"more than VARIANTS={VARIANTS} values of its parameters"] += 1
                    return None
                fdata = robot.fdata if drive else robot.rigid_body_fdata
                made = robot.engines.written[key] = make(algorithm, robot, fdata, extras, wrenches)
                if made is not None and made.single is not None:  # from the cache
                    serve_held(made)
    if wait is not False and made is not None and not made.final:
        made.wait(None if wait is True else wait)
    return made if made is not None and made.single is not None else None  # (None while its build is under way)


def make(algorithm, robot, fdata, extras, wrenches):
    """Load the machine code from the cache, else trace the program and start its build (the generic kernel serves
    until it is in): its one-state module first, then the ``final`` one with the batch's vector lanes, after a quick
    first stage or once a batch runs (a robot's first calls wait for half the compiler's time or less; a batch
    before the lanes are in runs state by state; a program of calls one state at a time never needs them); None where
    the step cannot be written out (the reason counted in ``algorithm.not_written``), or where it is larger than
    :data:`UNROLLED` and the generic kernel is numba's machine code (else such a program is a bridge)."""
    if MODE == "0":
        algorithm.not_written["RNE_DYNAMICS_WRITTEN=0"] += 1
        return None
    key = module_name(algorithm, robot, fdata, extras, wrenches)

    traced = []  # (program, outputs, sizes): traced here, or at the final's turn for a first stage from the cache

    def source(final):
        if not traced:
            traced.append(program_of(algorithm, robot, fdata, extras, wrenches))
        program, outputs, sizes = traced[0]
        final = final and not made.bridge  # (a bridge's one-state module is its only stage)
        optimise = final or len(program.ops) <= QUICK_FIRST
        stage = "" if final else BRIDGE_NAME if made.bridge else ONE_STATE_NAME if optimise else QUICK_NAME
        return (*_native.named_source(algorithm.name + stage, _native.c_source(
            _native.UNNAMED, program, outputs, sizes, [int(s) for s in robot.quaternions], algorithm.slots(robot)[0],
            final)), optimise)
    made = Written(algorithm, robot, key, source)
    try:
        module = _native.load(key, made.folder)
    except ImportError:  # a damaged file: built again
        module = None
    if module is not None:
        put(made, module)
        if not made.quick and not made.bridge:  # (a final module, or a first stage at -O1: its lanes when asked)
            return made
    compiled = algorithm.generic_compiled(robot, fdata, extras)  # (asked only where it decides)
    if made.bridge and not compiled:
        return made
    try:  # (a quick first stage: its process ended before its final build; traced again for it)
        if made.bridge:  # (its name says it is larger than UNROLLED) and numba's kernel is in
            raise Untraceable(f"the program has more than {UNROLLED} operations")
        traced.append(program_of(algorithm, robot, fdata, extras, wrenches, UNROLLED if compiled else MAX_NODES))
    except Untraceable as error:  # a program too large, or a step that computes what a program cannot record
        algorithm.not_written[f"cannot be written out: {error}"] += 1
        return None
    except (ArithmeticError, TypeError, ValueError, IndexError, AttributeError) as error:  # a step's bug
        algorithm.not_written["tracing failed"] += 1
        engine_failure(algorithm, f"tracing it on robot '{robot.name}' raised {error!r}")
        return None
    made.bridge = len(traced[0][0].ops) > UNROLLED
    made.start()  # (its modules found in the cache if the sources changed and this program did not)
    return made


def put(made, module):
    """Serve ``made`` by the built ``module`` (its stage by its name), whose states its algorithm's report counts."""
    made.single, made.batch, made.fresh = module.single, module.batch, module.fresh
    made.bridge, made.quick = BRIDGE_NAME in module.__name__, QUICK_NAME in module.__name__
    made.stage = ONE_STATE if made.bridge or made.quick or ONE_STATE_NAME in module.__name__ else FINAL
    made.algorithm.native_modules[module.__file__] = module  # (one counter per file: robots of one program share it)
    if made.bridge:
        made.algorithm.bridges.add(made)  # (until numba has the generic entry: Algorithm.kernel_built)
    if made.final or made.bridge:
        made.ended.set()


def install(made, build):
    """Load the C module that ``build`` built (a large program's first stage at ``-O0``: in a third of the time, a few
    times slower a call, under the one-state module's name), then put it in ``made`` and in the held entries of the
    robot's ``Data`` objects. A failed build ends ``made``'s stages and is an engine failure (the generic kernel serves
    on), as is a module removed as soon as it was built (someone cleared the cache folder: pruning keeps a new one)."""
    algorithm, robot, name = made.algorithm, made.robot, os.path.basename(build.arguments[1])
    try:
        if build.failure:
            raise RuntimeError(build.failure)
        module = _native.load(name, made.folder)
        if module is None:
            raise FileNotFoundError(f"{name} was removed from {made.folder} as soon as it was built")
    except (OSError, RuntimeError, ImportError) as error:
        made.failure = str(error)
        made.ended.set()
        engine_failure(algorithm, f"its C on robot '{robot.name}' did not build: {made.failure}")
        return
    with lock:
        put(made, module)
        serve_held(made)
    if made.bridge and algorithm.kernel_cached:  # (built while numba compiled the generic entry, which serves now)
        algorithm.kernel_built()


def serve_held(made):
    """Make ``made``'s machine code the held call of its algorithm in every live ``Data`` of its robot, if it is the
    held calls' written code (with the drive terms, no parameters)."""
    algorithm, engines = made.algorithm, made.robot.engines
    if made is not engines.written.get(variant(algorithm, True, (), False)):
        return
    for data in list(engines.datas):
        if (held := data.held.get(algorithm)) is not None:
            data.held[algorithm] = replace(held, arguments=(held.block,), call=made.single)
