"""The builder's queue: every build a process asks for, a robot's C module (:mod:`rne_dynamics._native`) or a numba
kernel's machine code, waits in one queue, the most urgent first (:data:`WAITED` ... :data:`FINAL`), for one of
:data:`~rne_dynamics._tuning.BUILDERS` worker threads, each running the builder (:mod:`rne_dynamics._compile_child`:
a process of its own session, so a build that was started finishes and is cached when its caller ends first) on one
build at a time. A build still queued when the process exits is not started.

numba's machine code is off the caller's path: a kernel a call needs is loaded from numba's disk cache if it is
there, and otherwise queued for the builder, which compiles it into that cache at ``nice`` 10; until then the caller
runs the kernel's Python (:func:`~rne_dynamics._trace.traceable`), exact and slower. numba compiles a large kernel
for minutes on a 2-core machine: no call, test or node waits for it.

A kernel is named for the builder's process by ``(module, function, argument)``: ``module.function(argument)``
returns its dispatcher in a new process (the algorithms' entries are made at import, not module attributes).
"""
import atexit
import collections
import contextlib
import importlib
import os
import pickle
import sys
import tempfile
import threading
import time
import warnings
from functools import partial, wraps

import numpy as np

from . import _compile_child
from ._jit import KERNEL_ROOT, cache_directory, numba
from ._tuning import BUILDERS, PRUNE_PERIOD
from ._tuning import COMPILE_ON_CALLER as ON_CALLER
from ._trace import traceable

#: The queue's priorities, the most urgent first: a build a caller waits for (a long batch, ``rne-dynamics
#: compile``: a queued one is raised to it, and a C build already started takes no compiler slot); a program's first
#: stage (its one-state module: every call of the robot on machine code soonest); a numba kernel whose Python a caller
#: runs meanwhile (minutes of compiling, for what the written code mostly spares); a program's final module (the
#: batch's vector lanes: a batch runs state by state on the first stage until then).
WAITED, FIRST_STAGE, KERNEL, FINAL = range(4)
#: The started builds' priorities a queued build of a priority waits for: numba's kernels one at a time (minutes and
#: hundreds of MB each: more would hold every worker), final modules after the first stages (a robot's programs all
#: run machine code before any batch gets its lanes).
APART = {KERNEL: {KERNEL}, FINAL: {FIRST_STAGE}}

_changed = threading.Condition()  # held to change the queue, the started builds or the workers; notified after
_queue, _started = [], []  # in the order queued
_workers = 0
#: numba's builds by ``(dispatcher, signature)``, and by dispatcher the one it was last found waiting for.
_kernels, _asked = {}, {}
#: The numba compiles that failed (numba's last line): the tests fail on any.
failures = []
#: The calls of each :func:`called_from_python` kernel (``"module:name"``) that ran its Python while numba compiled it.
python_calls = collections.Counter()


class Build:
    """A build in the queue: ``make_arguments()`` gives the builder's arguments at its turn
    (:mod:`rne_dynamics._compile_child`; ``arguments`` once started), ``then(build)`` runs in the worker when it
    ended; ``state``: ``"queued"``, ``"started"``, ``"built"`` or ``"failed"`` (``failure``: the builder's standard
    error, or the error that kept it from starting)."""

    def __init__(self, make_arguments, priority, then):
        self.make_arguments, self.priority, self.then = make_arguments, priority, then
        self.arguments, self.state, self.failure, self.ended = None, "queued", None, threading.Event()


def submit(make_arguments, priority, then=None):
    """Queue a :class:`Build` of ``priority``; returns it."""
    build = Build(make_arguments, priority, then)
    with _changed:
        _queue.append(build)
        _start_worker(priority)
        _changed.notify_all()
    return build


def hurry(build):
    """A caller waits for ``build``: queued, it goes first (:data:`WAITED`; in a worker of its own if all are busy);
    a C build takes no compiler slot (:func:`_hurried`)."""
    with _changed:
        build.priority = WAITED
        _start_worker(WAITED)
        _changed.notify_all()
        _hurried(build)


def _hurried(build):
    """A started C build a caller waits for takes no compiler slot: its request's hurry file
    (:func:`_compile_child.compiler_slot`)."""
    if build.priority == WAITED and build.state == "started" and (build.arguments or [""])[0] == "c":
        open(build.arguments[1] + ".hurry", "a").close()


def _start_worker(priority):
    """A worker more when more builds are queued than workers idle, up to :data:`BUILDERS`, and beyond for a build a
    caller waits for (that worker ends when it finds no such build to start)."""
    global _workers
    if len(_queue) > _workers - len(_started) and (_workers < BUILDERS or priority == WAITED):
        _workers += 1
        threading.Thread(target=_work, name="rne_dynamics builder", daemon=True).start()


def _next():
    """The queued build to start now: the most urgent, first come first served, unless it waits for a started one
    (:data:`APART`)."""
    started = {build.priority for build in _started}
    ready = [build for build in _queue if not started & APART.get(build.priority, set())]
    return min(ready, key=lambda build: build.priority, default=None)  # (the first of the most urgent)


def _work():
    """A worker thread: runs the builder on the next build (:func:`_next`), waits for it, then calls its ``then``."""
    global _workers
    while True:
        with _changed:
            while (build := _next()) is None or build.priority != WAITED and _workers > BUILDERS:
                if _workers > BUILDERS:
                    _workers -= 1
                    return
                _changed.wait()
            _queue.remove(build)
            _started.append(build)
            build.state = "started"
        with tempfile.TemporaryFile("w+") as errors:
            try:
                build.arguments = build.make_arguments()
                with _changed:  # (held for good once the process exits: atexit below)
                    process = _compile_child.start(build.arguments, errors, RNE_DYNAMICS_CACHE=KERNEL_ROOT)
                    _hurried(build)
                process.wait()
                errors.seek(0)
                build.failure = (errors.read().strip() or f"exit code {process.returncode}" if process.returncode
                                 else None)
            except Exception as error:  # a request the cache folder refused, a source not made: the build failed
                build.failure = repr(error)
        build.state = "failed" if build.failure else "built"
        try:
            if build.then is not None:
                build.then(build)
        except Exception:  # (RNE_DYNAMICS_STRICT's EngineFailure) reported as a thread's error; the worker goes on
            threading.excepthook(threading.ExceptHookArgs((*sys.exc_info(), threading.current_thread())))
        with _changed:
            _started.remove(build)
            _changed.notify_all()
        build.ended.set()


#: A process exits without waiting for its started builds, which go on and are cached for the next process: the
#: queue's lock, held from then on, keeps its worker threads from starting the builds queued behind them.
atexit.register(_changed.acquire)


def wait():
    """Wait for every queued build (tests, ``rne-dynamics compile``, benchmarks)."""
    with _changed:
        while _queue or _started:
            _changed.wait()


def machine_code(dispatcher, arguments, locator, queue=True, then=None):
    """Whether ``dispatcher`` has machine code for ``arguments``' types now: compiled in this process, or loaded
    from numba's cache here (cheap). Otherwise its compile is queued for the builder (unless ``queue`` is False: a
    caller that only asks) and False returned: the caller runs the Python meanwhile; ``then()`` is called in the
    builder's worker once the compile queued here is cached. ``locator``: ``(module, function, argument)`` naming the
    dispatcher."""
    if numba is None:
        return False
    if not ON_CALLER and not dispatcher.overloads and getattr(_asked.get(dispatcher), "state", "built") != "built":
        # its build queued, started or failed: the arguments' types would cost more than the Python of a small kernel
        # (2 ms for a call of 11 arrays)
        return False
    signature = tuple(dispatcher.typeof_pyval(a) for a in arguments)
    if signature in dispatcher.overloads:
        return True
    mark_used(cache_directory())  # what follows loads from it or compiles into it: the pruning keeps it
    if ON_CALLER and queue:
        can_compile, dispatcher._can_compile = dispatcher._can_compile, True  # (set since it was made: a test)
        try:
            _compile_child.compile_alone(dispatcher, signature)
        finally:
            dispatcher._can_compile = can_compile
        return True
    build = _kernels.get((dispatcher, signature))
    if build is None or build.state == "built":
        if _load(dispatcher, signature):
            return True
        if build is not None:  # built, and still not in the cache: a failure (its Python serves on)
            build.state, build.failure = "failed", "built, but not in numba's cache (the builder ran another numba?)"
            _kernel_built(None, build)
        elif not queue:
            return False
        else:
            request = ["numba", *locator, pickle.dumps(signature).hex()]
            build = _kernels[(dispatcher, signature)] = submit(lambda: request, KERNEL, partial(_kernel_built, then))
    _asked[dispatcher] = build
    return False


def _kernel_built(then, build):
    """A numba compile that failed is a warning, and one of :data:`failures` (its Python serves on); one cached calls
    ``then()``."""
    if build.failure is None and then is not None:
        then()
    elif build.failure:
        _, module, function, argument, _ = build.arguments
        failures.append(f"{module}.{function}({argument!r}): {build.failure.splitlines()[-1]}")
        warnings.warn(f"numba could not compile {failures[-1]} in the background; its Python serves", RuntimeWarning)


#: How numba's dispatcher refuses arguments of types it has no machine code for, and may not compile for.
NO_MATCH = "No matching definition for argument type(s)"


def called_from_python(kernel):
    """``kernel`` (a numba dispatcher) for Python callers: its machine code when numba has it for the arguments'
    types (compiled here or loaded from numba's cache), else its Python (with the Python of every kernel it calls)
    while the builder compiles it.
    The call goes through a second dispatcher of the same function, which never compiles on the caller's path and
    shares the kernel's cache entries; kernels keep calling ``kernel`` itself (``.kernel``)."""
    if numba is None:
        return kernel
    function = kernel.py_func
    options = {k: v for k, v in kernel.targetoptions.items() if k != "nopython"}
    dispatcher = numba.njit(cache=True, **options)(function)
    dispatcher._can_compile = ON_CALLER  # disable_compile() as numba allows it only after a first signature
    locator = (__name__, "kernel_named", f"{function.__module__}:{function.__name__}")

    @wraps(function)
    def call(*arguments):
        if dispatcher.overloads:  # (a call without machine code costs numba's matching error)
            try:
                return dispatcher(*arguments)
            except TypeError as error:  # other types than its machine code's (numba's words); else an error
                if not str(error).startswith(NO_MATCH):
                    raise
        if machine_code(dispatcher, arguments, locator):
            return dispatcher(*arguments)
        python_calls[locator[2]] += 1
        with np.errstate(all="ignore"):  # as the machine code: an inf or a NaN is an answer, not a warning
            return traceable(function)(*arguments)  # the Python all the way down: no kernel it calls compiles

    call.kernel = kernel
    return call


def kernel_named(path):
    """The kernel at ``"module:name"`` (how the builder's process finds a :func:`called_from_python` kernel)."""
    module, name = path.split(":")
    found = getattr(importlib.import_module(module), name)
    return getattr(found, "kernel", found)


#: When this process last marked each cache file or folder used (:func:`mark_used`; ``time.monotonic()``).
_marked = {}


def mark_used(path):
    """Mark the cache file or folder ``path`` (a C module, a model's index, this process's numba kernels) used now,
    at most once per :data:`~rne_dynamics._tuning.PRUNE_PERIOD` in a process (a node that runs for months and loads
    it again keeps it): its modification time is the age that the builder's pruning reads
    (:func:`rne_dynamics._compile_child.prune`). A file the process may not change (another user's, a read-only
    cache, a folder numba has not made yet) stays as it is."""
    now, last = time.monotonic(), _marked.get(path)
    if last is None or now - last >= PRUNE_PERIOD:
        _marked[path] = now
        with contextlib.suppress(OSError):
            os.utime(path)


def _load(dispatcher, signature):
    """Load ``signature`` from numba's disk cache into ``dispatcher`` (what ``Dispatcher.compile`` does before it
    compiles); False if it is not cached."""
    try:
        result = dispatcher._cache.load_overload(signature, dispatcher.targetctx)
    except Exception:  # an unreadable cache entry: numba would compile; the builder will
        return False
    if result is None:
        return False
    dispatcher.targetctx.insert_user_function(result.entry_point, result.fndesc, [result.library])
    dispatcher.add_overload(result)
    return True
