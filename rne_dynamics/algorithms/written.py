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
import math
import sys
import logging
import sysconfig
import threading
import time
from dataclasses import replace

import numpy as np

from .. import _jit, _native, _trace, _tuning
from .._jit import OK
from .._trace import Untraceable, trace, traceable
from .._tuning import QUICK_FIRST, STRICT, VARIANTS
from ..model.buffers import model_view
from .configuration import random_configuration
from .inputs import NO_WRENCHES, QUATERNION_TOLERANCE, gravity_vector

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


class Written:
    """A robot's written code for one algorithm: ``single(block, *inputs)`` and ``batch(out, *inputs)``, each
    returning the driver's status codes (the batch: with the first state at fault); None until its machine code is
    built (``native``: the build starts when the program is traced; :meth:`wait` waits for it). A program of more
    than :data:`QUICK_FIRST` operations is also built without optimisation, in parallel, and served until its
    optimised module (``final``) is in."""

    def __init__(self, build):
        self.single = self.batch = self.fresh = None
        self.native = self.final = False
        self.failure = None
        self.waited_for = threading.Event()  # a caller waits: the build runs at once (not behind queued ones)
        self._build = build
        self.quick_first = False  # a large program: built without optimisation too (:data:`QUICK_FIRST`)
        self._builders = []
        self._lock = threading.Lock()

    def start(self):
        """Build the machine code in the background (once; not when it was loaded from the cache)."""
        with self._lock:
            if not self._builders and not self.final:
                self._builders = [threading.Thread(target=self._build, args=(self, quick), daemon=True, name="written")
                                  for quick in (True, False)[not self.quick_first:]]
                for builder in self._builders:
                    builder.start()

    def wait(self, timeout=None):
        """Build the machine code if it is not built yet and wait for its optimised module (at most ``timeout``
        seconds); returns whether machine code is in use."""
        if not self.final:
            self.waited_for.set()
            self.start()
            end = None if timeout is None else time.monotonic() + timeout
            for builder in self._builders:
                builder.join(None if end is None else max(0.0, end - time.monotonic()))
        return self.native


def inputs_of(algorithm, robot):
    """Sample values of the written code's inputs: a random configuration, tangent vectors, standard gravity; or
    ``algorithm.sample(robot)`` for a step that needs a particular state to take its usual branches (the
    closed-loop solve: loops that close)."""
    if hasattr(algorithm, "sample"):
        return algorithm.sample(robot)
    rng = np.random.default_rng(7)
    samples = [random_configuration(robot, rng)] + [rng.uniform(-1.0, 1.0, robot.nv)
                                                   for _ in algorithm.arguments[1:]]
    return samples + [gravity_vector(None)] * algorithm.gravity


def program_of(algorithm, robot, fdata, extras=(), wrenches=False):
    """The traced program of ``algorithm`` on the model ``(fdata, robot.idata)`` with the per-call parameters
    ``extras`` (and external wrenches as inputs, if ``wrenches``): ``(program, outputs, sizes)``."""
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

    program, outputs = trace(run, samples)
    return program, outputs, [len(s) for s in samples]


def view_spellings(slots):
    """``block[a:b]``, reshaped, for each ``(offset, shape)`` in ``slots``: the result arrays of one state's block,
    written out (a comprehension over the slots costs a fifth of a small robot's call)."""
    spellings = []
    for offset, shape in slots:
        shape = tuple(int(n) for n in shape)
        spellings.append(f"block[{int(offset)}:{int(offset) + math.prod(shape)}]"
                         + (f".reshape({shape})" if len(shape) > 1 else ""))
    return spellings


def module_name(algorithm, robot, fdata, extras=(), wrenches=False):
    """The cached module's name: the algorithm, the sources' version, and a digest of the model's numbers, the
    per-call parameters and what the machine code depends on."""
    key = _native.digest(algorithm.name, fdata.tobytes(), robot.idata.tobytes(), sources_stamp(), np.__version__,
                         sysconfig.get_config_var("EXT_SUFFIX"), _native.host(), wrenches,
                         *(e.tobytes() if isinstance(e, np.ndarray) else repr(e) for e in extras))
    return _native.module_name(algorithm.name, sources_stamp(), key)


def extras_key(extras):
    """The per-call parameters as a key of ``robot.engines.written``: an array by its bytes."""
    return tuple([e.tobytes() if e.__class__ is np.ndarray else e for e in extras])


def written(algorithm, robot, drive=True, extras=(), wrenches=False, wait=False):
    """The written code of ``algorithm`` for ``robot`` (with its drive terms, or ``drive=False`` rigid-body
    dynamics) and the per-call parameters ``extras`` (a link, a reference frame: written in as constants), made on
    first use and kept by the robot under ``(algorithm, drive, *extras)``; None where the step cannot be written
    out, or while its machine code is being built. With ``wrenches``, the variant that takes external body wrenches
    ``(nb, 6)``, flat, after gravity (kept under ``(algorithm, drive, WRENCHES, *extras)``). ``wait``: seconds to
    wait for the machine code (``True``: until it is in use or has failed)."""
    if wrenches and not algorithm.wrenches or not algorithm.writable:
        return None
    key = (algorithm, drive, *((WRENCHES,) if wrenches else ()), *extras_key(extras))
    made = robot.engines.written.get(key, False)
    if made is False:
        with robot.engines.lock:
            made = robot.engines.written.get(key, False)
            if made is False:
                # a caller varying an extra (a simulator's time step) would trace and keep one program per value
                if extras and sum(other[0] is algorithm for other in robot.engines.written) >= VARIANTS:
                    algorithm.not_written[f"more than VARIANTS={VARIANTS} values of its parameters"] += 1
                    return None
                fdata = robot.fdata if drive else robot.rigid_body_fdata
                made = robot.engines.written[key] = make(algorithm, robot, fdata, extras, wrenches)
    if wait is not False and made is not None and not made.final:
        made.wait(None if wait is True else wait)
    return made if made is not None and made.single is not None else None  # (None while its build is under way)


def make(algorithm, robot, fdata, extras, wrenches):
    """Load the machine code from the cache, else trace the program and start its build (the generic kernel serves
    until it is in); None where the step cannot be written out (the reason counted in ``algorithm.not_written``)."""
    if MODE == "0":
        algorithm.not_written["RNE_DYNAMICS_WRITTEN=0"] += 1
        return None
    key = module_name(algorithm, robot, fdata, extras, wrenches)
    made = Written(lambda made, quick: install(made, key, name, source, algorithm, robot, quick))
    if use(made, key, algorithm):
        return made
    try:
        program, outputs, sizes = program_of(algorithm, robot, fdata, extras, wrenches)
    except Untraceable as error:  # a program too large, or a step that computes what a program cannot record
        algorithm.not_written[f"cannot be written out: {error}"] += 1
        return None
    except (ArithmeticError, TypeError, ValueError, IndexError, AttributeError) as error:  # a step's bug
        algorithm.not_written["tracing failed"] += 1
        engine_failure(algorithm, f"tracing it on robot '{robot.name}' raised {error!r}")
        return None
    quaternions = [int(s) for s in robot.quaternions]
    slots = algorithm.slots(robot)[0]
    name, source = _native.named_source(algorithm.name, _native.c_source(_native.UNNAMED, program, outputs, sizes,
                                                                         quaternions, QUATERNION_TOLERANCE, slots))
    if use(made, name, algorithm):  # the sources changed, this program did not: built already
        _native.index(key, name)
        return made
    made.quick_first = len(program.ops) > QUICK_FIRST
    made.start()
    return made


def use(made, name, algorithm):
    """Put the cached module ``name`` in ``made``; whether there is one."""
    try:
        module = _native.load(name)
    except ImportError:  # a damaged file: built again
        return False
    if module is None:
        return False
    put(made, module, algorithm)
    return True


def put(made, module, algorithm, final=True):
    """Serve ``made`` by the built ``module`` (its optimised one if ``final``), whose states ``algorithm``'s report
    counts."""
    made.single, made.batch, made.fresh, made.native = module.single, module.batch, module.fresh, True
    made.final = final
    algorithm.native_modules[module.__file__] = module  # (one counter per file: robots of one program share it)


def install(made, key, name, source, algorithm, robot, quick=False):
    """Build the C module ``name``, index it under the model's ``key``, then put it in ``made`` and in the held
    entries of the robot's ``Data`` objects. A failed build is an engine failure (the generic kernel serves on).
    ``quick``: the same program built without optimisation as ``name_quick`` (in a third of the time, a few times
    slower a call), not indexed, served until the optimised module is in."""
    if quick:
        source = source.replace(f"#define MODULE_NAME {name}\n", f"#define MODULE_NAME {name}_quick\n")
        name, key = name + "_quick", None
    try:
        _native.build(name, source, made.waited_for, key, optimise=not quick)
        module = _native.load(name)
    except (OSError, RuntimeError, ImportError) as error:
        made.failure = str(error)
        engine_failure(algorithm, f"its C on robot '{robot.name}' did not build: {made.failure}")
        return
    if module is None:  # removed since it was built: someone cleared the cache folder (pruning keeps a new module)
        made.failure = f"{name} was removed from {_native.cache_folder()} as soon as it was built"
        return
    with made._lock:
        if quick and made.final:  # the optimised module came first
            return
        put(made, module, algorithm, not quick)
        if made is robot.engines.written.get((algorithm, True)):  # the held call of a Data
            for data in list(robot.engines.datas):
                held = data.held.get(algorithm)
                if held is not None:
                    data.held[algorithm] = replace(held, arguments=(held.block,), call=module.single)
