"""numba's machine code off the caller's path: a kernel a call needs is loaded from numba's disk cache if it is
there, and otherwise compiled by the builder (:mod:`rne_dynamics._compile_child`: one at a time per caller, at low
priority, in a process that outlives its caller) into that cache; until then
the caller runs the kernel's Python (:func:`~rne_dynamics._trace.traceable`), exact and slower. numba compiles a
large kernel for minutes on a 2-core machine: no call, test or node waits for it.

A kernel is named for the background process by ``(module, function, argument)``: ``module.function(argument)``
returns its dispatcher in a new process (the algorithms' entries are made at import, not module attributes).
"""
import atexit
import functools
import importlib
import pickle
import tempfile
import threading
import warnings
from collections import deque

import numpy as np

from . import _compile_child
from ._jit import numba
from ._tuning import COMPILE_ON_CALLER as ON_CALLER
from ._trace import traceable

_lock = threading.Lock()
_queue = deque()   # (dispatcher, signature, locator) waiting for the worker
_state = {}        # (dispatcher, signature) -> "queued", "built" or "failed"
_worker = None
_ended = [0]       # background compiles ended in this process
_asked = {}        # dispatcher -> the count of ended compiles when it last had no machine code for a caller
_exiting = False
#: The background compiles that failed (numba's last line): the tests fail on any.
failures = []


def machine_code(dispatcher, arguments, locator):
    """Whether ``dispatcher`` has machine code for ``arguments``' types now: compiled in this process, or loaded
    from numba's cache here (cheap). Otherwise its compile is queued for the background process and False returned:
    the caller runs the Python meanwhile. ``locator``: ``(module, function, argument)`` naming the dispatcher."""
    if numba is None:
        return False
    if not ON_CALLER and not dispatcher.overloads and _asked.get(dispatcher) == _ended[0]:
        # none since it was last asked and no background compile has ended since: the arguments' types would cost
        # more than the Python of a small kernel (2 ms for a call of 11 arrays)
        return False
    found = _machine_code(dispatcher, arguments, locator)
    if not found:
        _asked[dispatcher] = _ended[0]
    return found


def _machine_code(dispatcher, arguments, locator):
    signature = tuple(dispatcher.typeof_pyval(a) for a in arguments)
    if signature in dispatcher.overloads:
        return True
    if ON_CALLER:
        can_compile, dispatcher._can_compile = dispatcher._can_compile, True  # (set since it was made: a test)
        try:
            dispatcher.compile(signature)
        finally:
            dispatcher._can_compile = can_compile
        return True
    key = (dispatcher, signature)
    state = _state.get(key)
    if state in ("queued", "failed"):
        return False
    if _load(dispatcher, signature):
        return True
    if state == "built":  # built, and still not in the cache: another numba or cache directory; give up
        _state[key] = "failed"
        return False
    with _lock:
        _state[key] = "queued"
        _queue.append((dispatcher, signature, locator))
        _start_worker()
    return False


#: How numba's dispatcher refuses arguments of types it has no machine code for, and may not compile for.
NO_MATCH = "No matching definition for argument type(s)"


def called_from_python(kernel):
    """``kernel`` (a numba dispatcher) for Python callers: its machine code when numba has it for the arguments'
    types (compiled here or loaded from numba's cache), else its Python (with the Python of every kernel it calls)
    while the background process compiles it.
    The call goes through a second dispatcher of the same function, which never compiles on the caller's path and
    shares the kernel's cache entries; kernels keep calling ``kernel`` itself (``.kernel``)."""
    if numba is None:
        return kernel
    function = kernel.py_func
    options = {k: v for k, v in kernel.targetoptions.items() if k != "nopython"}
    dispatcher = numba.njit(cache=True, **options)(function)
    dispatcher._can_compile = ON_CALLER  # disable_compile() as numba allows it only after a first signature
    locator = (__name__, "kernel_named", f"{function.__module__}:{function.__name__}")

    @functools.wraps(function)
    def call(*arguments):
        if dispatcher.overloads:  # (a call without machine code costs numba's matching error)
            try:
                return dispatcher(*arguments)
            except TypeError as error:  # other types than its machine code's (numba's words); else an error
                if not str(error).startswith(NO_MATCH):
                    raise
        if machine_code(dispatcher, arguments, locator):
            return dispatcher(*arguments)
        with np.errstate(all="ignore"):  # as the machine code: an inf or a NaN is an answer, not a warning
            return traceable(function)(*arguments)  # the Python all the way down: no kernel it calls compiles

    call.kernel = kernel
    return call


def kernel_named(path):
    """The kernel at ``"module:name"`` (how the background process finds a :func:`called_from_python` kernel)."""
    module, name = path.split(":")
    found = getattr(importlib.import_module(module), name)
    return getattr(found, "kernel", found)


def _load(dispatcher, signature):
    """Load ``signature`` from numba's disk cache into ``dispatcher`` (what ``Dispatcher.compile`` does before it
    compiles); False if it is not cached."""
    try:
        result = dispatcher._cache.load_overload(signature, dispatcher.targetctx)
    except Exception:  # an unreadable cache entry: numba would compile; the background process will
        return False
    if result is None:
        return False
    dispatcher.targetctx.insert_user_function(result.entry_point, result.fndesc, [result.library])
    dispatcher.add_overload(result)
    return True


def _start_worker():
    global _worker
    if _worker is None or not _worker.is_alive():
        _worker = threading.Thread(target=_work, name="rne_dynamics compile", daemon=True)
        _worker.start()


def _work():
    global _worker
    while True:
        with _lock:
            if not _queue:  # (a compile queued from now on starts a new worker)
                _worker = None
                return
            dispatcher, signature, locator = _queue.popleft()
        _state[(dispatcher, signature)] = "built" if _build(signature, locator) else "failed"
        _ended[0] += 1


def _build(signature, locator):
    module, function, argument = locator
    with tempfile.TemporaryFile() as errors:
        with _lock:
            if _exiting:  # (the worker thread runs on while the interpreter exits)
                return False
            process = _compile_child.start(["numba", module, function, argument, pickle.dumps(signature).hex()],
                                           errors)
        process.wait()
        errors.seek(0)
        lines = errors.read().decode(errors="replace").strip().splitlines()
    if process.returncode != 0:
        failure = f"{module}.{function}({argument!r}): {lines[-1] if lines else f'exit code {process.returncode}'}"
        failures.append(failure)
        warnings.warn(f"numba could not compile {failure} in the background; its Python serves", RuntimeWarning,
                      stacklevel=1)
    return process.returncode == 0


@atexit.register
def _stop():
    """A process exits without waiting for its background compile, which goes on and is cached for the next process
    (the compiles queued behind it are not started)."""
    global _exiting
    with _lock:
        _exiting = True


def wait():
    """Wait for every queued background compile (tests, ``rne-dynamics compile``)."""
    while True:
        with _lock:
            worker = _worker
        if worker is None or not worker.is_alive():
            return
        worker.join()
