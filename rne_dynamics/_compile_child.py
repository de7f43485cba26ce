"""The builder: a process of its own session (it outlives its caller: a build that was started finishes and is
cached for the next process) that builds one thing into the cache. Run as a script, so that a C build imports
nothing but the standard library.

``python _compile_child.py c REQUEST DESTINATION TIMEOUT COMPILERS COMMAND...``: compile the C file ``REQUEST.c``
(:func:`build_c`). ``python _compile_child.py numba MODULE FUNCTION ARGUMENT SIGNATURE``: ``MODULE.FUNCTION(ARGUMENT)``
is a dispatcher, ``SIGNATURE`` its argument types, pickled, in hexadecimal; compiled into numba's cache at ``nice``
10, after the callers' work (:mod:`rne_dynamics._compile`), one build per kernel on the machine (:func:`build_numba`).
``python _compile_child.py prune SECONDS FOLDER...``: remove from each cache folder ``FOLDER`` what no process used
for ``SECONDS`` (:func:`prune`).
"""
import contextlib
import fcntl
import importlib
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time


def start(arguments, errors, **environment):
    """Start the builder on ``arguments`` (above) in a session of its own (a Ctrl-C of the caller's terminal, or the
    caller's end, leaves it running), with ``environment`` added to the caller's and its standard error into the file
    ``errors``: a pipe would break when the caller ends first."""
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.pathsep.join([package_parent, os.environ.get("PYTHONPATH", "")])
    return subprocess.Popen([sys.executable, os.path.abspath(__file__), *arguments],
                            env=dict(os.environ, PYTHONPATH=path, **environment), stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=errors, start_new_session=True)


def compiler_slot(folder, compilers, hurry):
    """One of the machine's ``compilers`` slots (an open file locked in ``folder``; closing it frees the slot),
    waited for in turn with every builder's process; or, at once when the file ``hurry`` exists (a caller waits for
    this build), a slot that holds none."""
    os.makedirs(folder, exist_ok=True)
    pause = 0.05
    while not os.path.exists(hurry):
        for k in range(compilers):
            slot = open(os.path.join(folder, str(k)), "a")
            try:
                fcntl.flock(slot, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return slot
            except BlockingIOError:
                slot.close()
        time.sleep(pause)
        pause = min(2 * pause, 1.0)  # hundreds of queued builds (a test session's) polling at 10 Hz loaded 2 cores
    return contextlib.nullcontext()


def build_c(request, destination, timeout, compilers, *command):
    """Compile ``request.c`` by ``command`` (the compiler and its flags) into ``destination`` (under a temporary name,
    then renamed, so a concurrent reader never sees half a file), in a compiler slot of the cache folder's
    ``compilers/`` unless ``request.hurry`` exists; exits with the compiler's message if it fails. A second builder of
    the same request waits for the first's module."""
    folder, name = os.path.split(request)
    with alone(request):
        if not os.path.exists(destination):
            with tempfile.TemporaryDirectory(dir=folder) as scratch:
                target = os.path.join(scratch, "module.so")
                with compiler_slot(os.path.join(folder, "compilers"), int(compilers), request + ".hurry"):
                    try:
                        done = subprocess.run([*command, request + ".c", "-o", target, "-lm"], capture_output=True,
                                              text=True, timeout=float(timeout))
                    except subprocess.TimeoutExpired:
                        sys.exit(f"{command[0]} took more than {timeout} s on {name}")
                if done.returncode != 0:
                    sys.exit(f"{command[0]} failed on {name}: {done.stderr.strip()[-2000:]}")
                os.replace(target, destination)
        for leftover in (".c", ".hurry"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(request + leftover)


@contextlib.contextmanager
def alone(request):
    """Build ``request`` alone: a second builder of it (another process asked for it too) waits here for the first,
    then finds what it built (a C module; numba's kernel in numba's cache, which its compile loads first)."""
    with open(request + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
        with contextlib.suppress(FileNotFoundError):
            os.remove(request + ".lock")


def build_numba(module, function, argument, signature):
    """Compile the dispatcher ``module.function(argument)`` for the argument types ``signature`` (pickled, in
    hexadecimal): :func:`compile_alone`."""
    compile_alone(getattr(importlib.import_module(module), function)(argument), pickle.loads(bytes.fromhex(signature)))


def compile_alone(dispatcher, signature):
    """Compile ``dispatcher`` for the argument types ``signature`` into numba's cache, alone on the machine (the
    kernel's index file is the request): every process that needs a kernel not yet cached compiles it (a CI's test
    processes and ``rne-dynamics compile --generic`` compiled one side by side); a second waits for the first and
    loads what it cached."""
    os.makedirs(dispatcher._cache._cache_path, exist_ok=True)
    with alone(dispatcher._cache._cache_file._index_path):
        dispatcher.compile(signature)


def prune(unused_seconds, *folders):
    """Remove from each of the cache's ``folders`` what no process has used (read, loaded or written: its
    modification time, :func:`rne_dynamics._compile.mark_used`) for ``unused_seconds``, whatever sources made it: in
    ``native/``, models' indexes, built modules, and what killed builders left (requests, locks, scratch folders),
    the compiler slots staying; in ``numba/``, the kernels of a version of the kernel sources (``kernels-DIGEST/``,
    marked by each process that looks for its kernels there). A process that loaded a module or a kernel that long
    ago and still runs keeps it (the file goes, its machine code stays in memory)."""
    cutoff = time.time() - float(unused_seconds)
    for folder in folders:
        with contextlib.suppress(FileNotFoundError), os.scandir(folder) as entries:  # (no numba/ without numba)
            for entry in entries:
                with contextlib.suppress(OSError):  # removed by another pruning; another user's
                    if entry.name == "compilers" or entry.stat(follow_symlinks=False).st_mtime >= cutoff:
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        shutil.rmtree(entry.path)
                    else:
                        os.remove(entry.path)


if __name__ == "__main__":
    kind, *arguments = sys.argv[1:]
    if kind != "c":
        os.nice(10)  # numba's compiles and the pruning: after the callers' work
    {"c": build_c, "numba": build_numba, "prune": prune}[kind](*arguments)
