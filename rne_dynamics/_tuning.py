"""Every tunable of the machine-code layer and every environment variable that steers it, with what each trades.

The modules that use a value import it from here (``driver.WARM`` is this ``WARM``); a test that changes one sets it on
the module that reads it. The figures behind each choice are in docs/performance.md.
"""
import os

# --- which engine runs a call (algorithms/driver.py, algorithms/written.py) ---------------------------------------
#: States of a robot's calls of an algorithm (with ``data=`` or not) the generic kernel serves before its written code
#: is traced and built: tracing costs about a hundred generic calls and the build a compiler run, which a robot
#: called a few times (a test, a script) never repays; a control loop reaches it in its first milliseconds.
WARM = 16
#: Written programs per algorithm with per-call parameters per robot: a caller varying a parameter (a simulator's
#: time step) would otherwise trace and keep one program per value; the values beyond run the generic kernel.
VARIANTS = 8
#: Operations a traced program may have; a larger one is not written out (its generic kernel serves). It bounds the
#: build: the first stage's -O0 compile takes 36-50 us of CPU an operation (up to 25 s: "machine code within 30 s"),
#: the tracer's 0.4 KB and 4-7 us are less. Every program of the tests' robots is within it but six of Tiago's, Tiago
#: dual's and G1-with-hands' derivatives (522,000 to 4.7 million operations; docs/performance.md).
MAX_NODES = 500_000
#: Operations above which a written program runs no faster than the generic kernel's machine code: its unrolled
#: instructions outgrow the processor's caches (forward-dynamics derivatives: Talos's 186,034 operations 40 us a call
#: written, 38 us generic; Talos-ff's 297,697: 67 us against 44; RNEA's, 47,000: 10 against 15). Such a program is
#: written only while numba has not compiled the generic kernel, and as its one-state module only (-O0): a bridge
#: from the kernel's Python, a hundred times slower, that a process finding numba's kernel in its cache goes without.
UNROLLED = 150_000

#: A configuration's quaternion whose norm is further than this from 1 is refused (``NOT_UNIT``; a float32 message
#: keeps about 1e-7); the one tolerance of the generic entry, the written code and a locked joint's position.
QUATERNION_TOLERANCE = 1e-6

# --- batches (algorithms/driver.py) -------------------------------------------------------------------------------
#: States from which a batch waits for its written code's machine code (about a second) rather than run the generic
#: kernel (a few times slower a state; its Python, until numba has it, a millisecond).
LONG_BATCH = 1000
#: Seconds such a batch waits at most (then it runs the generic kernel, the build going on).
BUILD_WAIT = 5.0
#: A batch runs on one thread unless every thread gets this many states (a thread's start costs more than fewer);
#: its threads take it in pieces of at least this many.
THREAD_ROWS = 64
#: Pieces of a batch per thread: a core that other work slows does fewer pieces rather than hold up the batch; more
#: pieces cost more hand-overs.
PIECES = 8

# --- the C (_native.py) -------------------------------------------------------------------------------------------
#: Statements per C function: the compiler's time grows faster than a function's length (50,000 statements in one
#: function took 49 s at -O1, in parts of this size a few seconds); each part costs a call.
PART = 2500
#: Operations at most in one C expression of the one-state code (an operation whose value one other uses is written
#: inside its user's expression, :func:`rne_dynamics._native.single_uses`): at -O0 an expression's intermediate values
#: stay in registers, a statement's go to the stack. Talos's forward-dynamics derivatives at -O0: 2 deep 7.0 s of
#: CPU and 112 us a call, 6 deep 6.7 s and 104 us, 16 deep 6.4 s and 102 us (a statement each: 8.9 s and 163 us).
INLINE_DEPTH = 6
#: States a batch computes at once, one in each lane of a vector: wider is fewer instructions a state, but more
#: registers spilled and a longer tail run one by one.
LANES = 4
#: Operations above which a program's first stage (its one-state module, :mod:`rne_dynamics.algorithms.written`) is
#: built at ``-O0`` rather than ``-O1``, served until its final module is in: Talos's RNEA derivatives (47,000
#: operations) in 2.2 s of the compiler's CPU against 7.2 s, 43 us a call against 9.5 us (Pinocchio 25 us); a smaller
#: program builds in a few seconds anyway.
QUICK_FIRST = 20_000
#: Seconds a build may take before it is abandoned (the generic kernel goes on serving).
TIMEOUT = 600
#: C builds run at once on the machine, whatever process asked for them (a compiler slot each: a locked file in the
#: cache): one per core (a large program takes the compiler a few hundred MB); a build a caller waits for runs at once
#: beside them.
COMPILERS = os.cpu_count() or 1
#: Builds a process runs at once (C modules and numba's kernels alike: a worker thread and a builder process each,
#: :mod:`rne_dynamics._compile`): a build started finishes when its process ends first, one still queued does not;
#: more start more processes that wait for a compiler slot. A build a caller waits for starts at once beside them.
BUILDERS = 2 * COMPILERS
#: Days a file of the cache (a model's index, a built module, numba's kernels of a version of the sources) is kept
#: after its last use (read, loaded or written): the cache is pruned by age only, so that installs or checkouts of
#: other sources sharing it keep what each uses; longer keeps more disk (a module is 20 KB to 2 MB: a development
#: machine's held 380 modules, 150 MB, and 366 kernel folders, 449 MB).
UNUSED_DAYS = 30
#: Seconds between two prunings of a cache folder (by the builder, whatever process asks: a stamp file in the cache).
PRUNE_PERIOD = 86_400

# --- environment variables ----------------------------------------------------------------------------------------
#: ``RNE_DYNAMICS_JIT=0``: every kernel runs as plain Python (read by _jit.py, which imports numba or not).
JIT = os.environ.get("RNE_DYNAMICS_JIT", "")
#: ``RNE_DYNAMICS_WRITTEN=0``: every call runs its generic kernel (no program traced, no C built).
WRITTEN = os.environ.get("RNE_DYNAMICS_WRITTEN", "")
#: ``RNE_DYNAMICS_COMPILE=caller``: numba compiles on the caller's path (a benchmark that wants machine code now)
#: rather than in the background process.
COMPILE_ON_CALLER = os.environ.get("RNE_DYNAMICS_COMPILE") == "caller"
#: ``RNE_DYNAMICS_STRICT=1`` (the tests set it): an engine that fails (a step that raises while traced, a C build
#: that fails) raises rather than being logged and counted as a fallback (``rd.engine_report()``).
STRICT = os.environ.get("RNE_DYNAMICS_STRICT") == "1"
#: ``CC``: the C compiler.
COMPILER = os.environ.get("CC", "cc")


def cache_root():
    """``RNE_DYNAMICS_CACHE``, default ``~/.cache/rne_dynamics``: the one folder of what is built, each named by the
    digest of its sources, shared by every version of the sources and pruned by age, :data:`UNUSED_DAYS` (``native/``:
    the written codes' C modules, their indexes and compiler slots; ``numba/``: numba's kernels, ``kernels-STAMP/``).
    Read at each use: a C build's when it starts, a numba kernel's when it is made (at import)."""
    return os.environ.get("RNE_DYNAMICS_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "rne_dynamics")
