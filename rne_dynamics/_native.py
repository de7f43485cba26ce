"""A traced program (:mod:`rne_dynamics._trace`) as machine code: written out as C, built by the system's C compiler
into a Python extension module, cached on disk.

The module has three functions over float64 numpy arrays, each returning the driver's status codes:

- ``single(block, *inputs)``: one state; the results go into ``block[:len(outputs)]``;
- ``fresh(kind, *inputs)``: one state into a new array of the outputs; returns views of it, the first result array
  (``kind`` None) or each in a tuple of type ``kind`` (or the status, an int);
- ``batch(out, *inputs)``: ``out`` ``(N, len(outputs))``; each input holds one row per state, or one row for all;
  returns ``(status, first state at fault)``; the interpreter is released meanwhile.

Each checks every input's size and finiteness, the norms of the configuration's quaternions, the guards of the trace
and the finiteness of the results; any failure returns a non-zero status and the caller runs its generic kernel,
which explains it. Straight-line C compiles in about a second for a robot arm and is called for a tenth of a
microsecond's overhead, where the generic numba kernels take minutes to compile and a microsecond to call.
"""
import collections
import contextlib
import functools
import hashlib
import importlib.util
import os
import platform
import subprocess
import sysconfig
import tempfile
import time

import numpy as np

from . import _compile
from ._jit import BAD_SHAPE, GUARD, NOT_FINITE, NOT_UNIT, OK, OVERFLOW, is_unit
from ._trace import trace, traceable
from ._tuning import (COMPILER, COMPILERS, INLINE_DEPTH, LANES, PART, PRUNE_PERIOD, QUATERNION_TOLERANCE, TIMEOUT,
                      UNUSED_DAYS, cache_root)

#: The C compiler and its flags. ``-O1``: straight-line code gains little from more, and builds in half the time;
#: the host's instructions (``-march=native``, where the compiler has it: AVX's three-operand forms) make it 10-25%
#: faster; no fused multiply-adds (``-ffp-contract=off``), so that the C gives the bits of the generic kernels
#: (numba fuses none): a call's numbers do not depend on which of them served it. (``-O2`` with
#: fused products was 20% faster per state on ANYmal and Talos.)
FLAGS = ["-O1", "-shared", "-fPIC", "-fno-math-errno", "-ffp-contract=off", "-w"]
HOST_FLAGS = ["-march=native"]

#: Each operation of a traced program in C, its operands in the braces.
C_OPERATIONS = {"neg": "-{}", "abs": "fabs({})", "sin": "sin({})", "cos": "cos({})", "sqrt": "sqrt({})",
                "tanh": "tanh({})", "exp": "exp({})", "log": "log({})", "atan": "atan({})", "asin": "asin({})",
                "acos": "acos({})", "sign": "(double)(({0} > 0) - ({0} < 0))", "add": "{} + {}", "sub": "{} - {}",
                "mul": "{} * {}", "div": "{} / {}", "max": "fmax({}, {})", "min": "fmin({}, {})",
                "lt": "(double)({} < {})", "le": "(double)({} <= {})", "gt": "(double)({} > {})",
                "ge": "(double)({} >= {})", "eq": "(double)({} == {})", "ne": "(double)({} != {})"}


def _literal(x):
    text = {"inf": "INFINITY", "-inf": "-INFINITY", "nan": "NAN"}.get(repr(float(x)), repr(float(x)))
    return f"({text})" if text.startswith("-") else text  # (an unbounded joint's limits are infinite)


def used_nodes(program, outputs):
    """``(k, operation, operands)`` of each node that the outputs and guards use, in order."""
    used = bytearray(len(program.ops))
    pending = [k for k in outputs if type(k) is int] + [k for k, _ in program.guards]
    while pending:
        k = pending.pop()
        if not used[k]:
            used[k] = 1
            if program.ops[k][0] != "input":
                pending.extend(a for a in program.ops[k][1] if type(a) is int)
    return [(k, op, args) for k, (op, args) in enumerate(program.ops) if used[k]]


def spelled(op, args, operand):
    """An operation (not an input) in C, its operands spelled by ``operand``."""
    return C_OPERATIONS[op].format(*map(operand, args))


@functools.cache
def unit_check():
    """The C expression of :func:`~rne_dynamics._jit.is_unit` on the quaternion ``u[0..3]`` at
    :data:`~rne_dynamics._tuning.QUATERNION_TOLERANCE`: its trace, spelled out."""
    program, (node,) = trace(lambda u: [traceable(is_unit)(u[0], u[1], u[2], u[3], QUATERNION_TOLERANCE)],
                             [np.array([0.0, 0.0, 0.0, 1.0])])

    def inlined(k):
        """Node ``k`` (or the constant ``k``) as one expression, its operands inlined."""
        if type(k) is not int:
            return _literal(k)
        op, args = program.ops[k]
        return f"u[{args[1]}]" if op == "input" else spelled(op, args, lambda a: f"({inlined(a)})")
    return inlined(node)


# A batch computes LANES states at once, one in each lane of a vector (GCC's and clang's vector extension: AVX's
# registers on x86-64, NEON's on arm64, pairs or single numbers elsewhere). A lane runs the one-state code's
# operations in the same order, so it gives the same bits. Per state, on one core: Talos with a floating base 1.9x
# less; ANYmal, whose twelve sines a state run lane by lane, as much on a quiet machine and 2x less on a busy one.
#: The operations of the vector instructions; the others (a sine, a comparison) run lane by lane.
VECTOR_OPERATIONS = {"add", "sub", "mul", "div", "neg", "input"}


def single_uses(program, nodes, slots, outputs):
    """The ``nodes`` whose value one operation of the same part uses and nothing else (no output, guard or later
    part), each written inside its user's expression rather than as a statement of its own, to a depth of
    :data:`INLINE_DEPTH` operations: ``-O0`` keeps an expression's intermediate values in registers but every
    statement's on the stack. Pure operations in IEEE arithmetic without contraction: the same bits."""
    uses = collections.Counter(a for _, op, args in nodes if op != "input" for a in args if type(a) is int)
    kept = set(slots) | {k for k in outputs if type(k) is int} | {k for k, _ in program.guards}
    inlined = {}  # node: the operations its expression nests
    for k, op, args in nodes:
        nested = 1 + max((inlined.get(a, 0) for a in args if op != "input" and type(a) is int), default=0)
        if uses[k] == 1 and k not in kept and nested <= INLINE_DEPTH:
            inlined[k] = nested
    return inlined


def c_parameters(inputs, lanes):
    """The parameters of ``compute`` and its parts, or with ``lanes`` > 1 of ``lanes_compute`` and its parts: each
    input's row (a row per lane), the scratch ``T`` (of vectors) and the outputs' row (a row per lane)."""
    number, row = ("double", "*") if lanes == 1 else ("vec", "*const *")
    return ", ".join([f"const double {row}restrict x{a}" for a in range(inputs)]
                     + [f"{number} *restrict T", f"double {row}restrict out"])


def c_parts(program, outputs, inputs, lanes=1):
    """``(functions, temporaries)``: the C functions ``part0 ... partN``, computing ``outputs`` into ``out[]`` from
    ``x0[] ...`` and checking the guards, :data:`PART` statements each, and ``compute``, calling them in turn; and the
    size of the array ``T`` through which a value passes to a later part (the caller's: a batch allocates it once).
    Inputs are read where they are used.

    With ``lanes`` > 1, ``lanes_part0 ...`` and ``lanes_compute``, of ``lanes`` states at once: every number a vector
    ``vec`` of one per state, input ``a`` read from the states' rows ``xa[lane][]``, each output written to its
    state's row ``out[lane][]``, a guard failing if it fails in any lane. Of the operations without a vector
    instruction, those on inputs only (a joint angle's sine) are computed first, lane by lane, into ``T``: the
    vectors' arithmetic never waits for them."""
    nodes = used_nodes(program, outputs)
    size = PART  # read once: a test may set it while a build queued earlier writes its C in a worker thread
    part_of = {k: i // size for i, (k, _, _) in enumerate(nodes)}
    slots = {}
    for k, op, args in nodes:
        for a in args if op != "input" else ():
            if type(a) is int and part_of[a] < part_of[k] and program.ops[a][0] != "input":
                slots.setdefault(a, len(slots))
    ahead = {} if lanes == 1 else {k: len(slots) + j for j, k in enumerate(
        k for k, op, args in nodes if op not in VECTOR_OPERATIONS
        and all(type(a) is not int or program.ops[a][0] == "input" for a in args))}
    inlined = {} if lanes > 1 else single_uses(program, nodes, slots, outputs)
    written_out, guards = {}, {}  # by part (a constant output: None)
    for n, k in enumerate(outputs):
        written_out.setdefault(part_of[k] if type(k) is int else None, []).append((n, k))
    for k, side in program.guards:
        guards.setdefault(part_of[k], []).append((k, side))
    number, prefix = ("double", "") if lanes == 1 else ("vec", "lanes_")
    each_lane = [""] if lanes == 1 else [f"[{i}]" for i in range(lanes)]

    def read(a, lane=None):
        """Input node ``a``: of the one state, of lane ``lane``, or of every lane."""
        argument, element = program.ops[a][1]
        if lanes == 1 or lane is not None:
            return f"x{argument}{'' if lane is None else f'[{lane}]'}[{element}]"
        return "(vec){" + ", ".join(read(a, i) for i in range(lanes)) + "}"

    def function(name, lines):
        """The C function ``name`` (of the lanes, if any) of :func:`c_parameters`: ``lines``, then OK."""
        head = f"static int {prefix}{name}({c_parameters(inputs, lanes)})"
        return head + "\n{\n" + "\n".join(lines) + f"\n    return {OK};\n}}\n"

    functions = []
    for p in range(-(-len(nodes) // size)):
        def operand(a):
            if type(a) is not int:
                return _literal(a)
            if a in inlined:
                return f"({expression(a, *program.ops[a])})"
            if part_of[a] == p:
                return f"t{a}"
            if program.ops[a][0] == "input":
                return read(a)
            return f"T[{slots[a]}]"

        def expression(k, op, args):
            if op == "input":
                return read(k)
            if k in ahead:
                return f"T[{ahead[k]}]"
            if lanes == 1 or op in VECTOR_OPERATIONS:
                return spelled(op, args, operand)
            return "(vec){" + ", ".join(spelled(op, args, lambda a: operand(a) + lane if type(a) is int
                                                else _literal(a)) for lane in each_lane) + "}"

        lines = []
        for k, op, args in (node for node in nodes[p * size:(p + 1) * size] if node[0] not in inlined):
            lines.append(f"    const {number} t{k} = {expression(k, op, args)};")
            if k in slots:
                lines.append(f"    T[{slots[k]}] = t{k};")
        lines += [f"    out{lane}[{n}] = t{k}{lane};" for n, k in written_out.get(p, ()) for lane in each_lane]
        lines += [f"    if ({' || '.join(f'(t{k}{lane} != 0.0) != {int(side)}' for lane in each_lane)}) return {GUARD};"
                  for k, side in guards.get(p, ())]
        functions.append(function(f"part{p}", lines))

    def in_lane(a):
        return read(a, "s") if type(a) is int else _literal(a)

    arguments = ", ".join([f"x{a}" for a in range(inputs)] + ["T", "out"])
    body = [f"    out{lane}[{n}] = {_literal(k)};" for n, k in written_out.get(None, ()) for lane in each_lane]
    if ahead:
        body += [f"    for (int s = 0; s < {lanes}; s++) {{",
                 *(f"        T[{j}][s] = {spelled(*program.ops[k], in_lane)};" for k, j in ahead.items()), "    }"]
    body += [f"    if ({prefix}part{p}({arguments}) != {OK}) return {GUARD};" for p in range(len(functions))]
    return "\n".join(functions + [function("compute", body)]), max(len(slots) + len(ahead), 1)


@functools.cache
def module_c():
    """The fixed part of every module (``_written_module.c``), which :func:`c_source` completes with the program's
    macros and functions."""
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "_written_module.c")) as f:
        return f.read()


def c_source(name, program, outputs, sizes, quaternions=(), slots=(), lanes=True):
    """The extension module ``name`` computing ``outputs`` from inputs of ``sizes`` elements; ``quaternions``: the
    first index in input 0 of each unit quaternion; ``slots``: ``(offset, shape)`` of each result array in the
    outputs, for ``fresh``: the macros :func:`module_c` names, its text, then the program. ``lanes=False``: without
    the batch's vector lanes (a ``lanes_compute`` that hands every state back: ``batch`` computes them one by one), in
    half the compiler's time (:func:`rne_dynamics.algorithms.written.make`)."""
    inputs = len(sizes)
    functions, temporaries = c_parts(program, outputs, inputs)
    lanes_functions, lane_temporaries = (c_parts(program, outputs, inputs, LANES) if lanes else (
        f"static int lanes_compute(LANES_PARAMETERS)\n{{\n    return {GUARD};\n}}\n", 1))
    table = [(offset, tuple(shape)) for offset, shape in slots] + [(0, ())]  # (an array of C is never empty)
    macros = dict(
        MODULE_NAME=f'"{name}"', INIT_FUNCTION=f"PyInit_{name}", INPUTS=inputs, OUTPUTS=len(outputs),
        SIZES=", ".join(map(str, sizes)) or "0", QUATERNIONS=", ".join(map(str, list(quaternions) + [-1])),
        SLOTS=len(slots), SLOT_TABLE=", ".join("{%d, %d, {%s}}" % (offset, len(shape), ", ".join(map(str, shape)) or 0)
                                               for offset, shape in table),
        TEMPORARIES=temporaries, LANES=LANES, LANE_TEMPORARIES=lane_temporaries, PARAMETERS=c_parameters(inputs, 1),
        LANES_PARAMETERS=c_parameters(inputs, LANES), STATUS_OK=OK, STATUS_BAD_SHAPE=BAD_SHAPE,
        STATUS_NOT_FINITE=NOT_FINITE, STATUS_NOT_UNIT=NOT_UNIT, STATUS_OVERFLOW=OVERFLOW)
    macros["INPUT_ROWS(x)"] = ", ".join(f"x[{k}]" for k in range(inputs))
    macros["IS_UNIT(u)"] = f"({unit_check()})"
    return "\n".join([f"#define {macro} {value}" for macro, value in macros.items()]
                     + [module_c(), functions, lanes_functions])


def cache_folder():
    """Where built modules are kept: ``$RNE_DYNAMICS_CACHE/native``, else ``~/.cache/rne_dynamics/native``."""
    return os.path.join(cache_root(), "native")


def path_of(name, folder=None):
    """The file of the built module ``name`` in the cache ``folder`` (default: the cache folder now)."""
    return os.path.join(folder or cache_folder(), name + sysconfig.get_config_var("EXT_SUFFIX"))


def load(name, folder=None):
    """The built module ``name`` from the cache (``folder``, default: the cache folder now), or None. ``name`` is a
    program's module, or a model's key whose index (:func:`index_path`) names one. The files read are marked used
    (:func:`~rne_dynamics._compile.mark_used`)."""
    path = path_of(name, folder)
    if not os.path.exists(path):
        pointer = index_path(name, folder)
        try:
            with open(pointer) as f:
                name = f.read().strip()
        except OSError:
            return None
        path = path_of(name, folder)
        if not os.path.exists(path):
            return None
        _compile.mark_used(pointer)
    spec = importlib.util.spec_from_file_location(name, path)  # (its suffix: an extension module's loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _compile.mark_used(path)
    return module


def start_pruning(folder):
    """Queue the builder on removing from the cache ``folder`` and from numba's folder beside it (its kernels, a
    folder per version of the kernel sources) what no process used for :data:`UNUSED_DAYS` days
    (:func:`rne_dynamics._compile_child.prune`; last in the queue), at most once per :data:`PRUNE_PERIOD` s for the
    folder, whatever process asks (the time of its file ``pruned``). Called when a build starts: never on a caller's
    path. Returns the :class:`~rne_dynamics._compile.Build`, or None."""
    stamp = os.path.join(folder, "pruned")
    with contextlib.suppress(FileNotFoundError):
        if time.time() - os.stat(stamp).st_mtime < PRUNE_PERIOD:
            return None
    write_atomically(stamp, "")
    kernels = os.path.join(os.path.dirname(folder), "numba")
    return _compile.submit(lambda: ["prune", str(UNUSED_DAYS * 86_400), folder, kernels], _compile.FINAL)


#: The module name in :func:`c_source`'s text until the text's digest names it (:func:`named_source`).
UNNAMED = "rne_dynamics_unnamed_module"


def named_source(call, source):
    """``(name, source)``: the module of ``call`` named by the digest of its code (``source`` written with the name
    :data:`UNNAMED`) and of what its machine code depends on. A program that an edit of the sources leaves as it was
    keeps its name, and its built module serves again without a compiler run."""
    key = digest(source, np.__version__, sysconfig.get_config_var("EXT_SUFFIX"), COMPILER, *FLAGS, *HOST_FLAGS, host())
    name = f"{call}_program_{key[:16]}"
    return name, source.replace(UNNAMED, name)


def index_path(key, folder=None):
    """The file that records which program module the model's ``key`` runs (its name; :func:`build` writes it). The
    indexes of other versions of the sources stay: an install or a checkout of them may share the cache folder
    (:func:`start_pruning` removes what none has used for :data:`UNUSED_DAYS` days)."""
    return os.path.join(folder or cache_folder(), key + ".program")


@functools.cache
def host():
    """The CPU the machine code is built for (its name and features): part of every cache key, so that a cache folder
    shared by two machines never runs one's instructions on the other."""
    try:
        from llvmlite import binding  # (numba's: the host as LLVM sees it)
    except ImportError:  # without numba: the kernel's view, where it has one
        try:
            with open("/proc/cpuinfo") as info:
                return platform.machine() + " " + str(sorted({line for line in info if line.startswith("flags")}))
        except OSError:
            return platform.machine() + " " + platform.processor()
    return f"{binding.get_host_cpu_name()} {binding.get_host_cpu_features().flatten()}"


@functools.cache
def host_flags():
    """:data:`HOST_FLAGS` if the compiler takes them (gcc and clang on x86-64 and arm64 do), else none."""
    try:
        probe = subprocess.run([COMPILER, *HOST_FLAGS, "-x", "c", "-c", "-o", os.devnull, "-"], input="int x;\n",
                               capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return HOST_FLAGS if probe.returncode == 0 else []


def build(named, priority=_compile.FIRST_STAGE, then=None, key=None, folder=None):
    """Queue the build of a C module by the builder (:mod:`rne_dynamics._compile`'s queue; the builder's process,
    :mod:`rne_dynamics._compile_child`, is of its own session, so the build finishes and is cached when its caller
    ends first). At its turn, ``named()`` gives ``(name, source, optimise)`` (``optimise=False``: at ``-O0``,
    :data:`QUICK_FIRST`), indexed under the model's ``key`` if given (:func:`index_path`, written first: a process
    that finds the index before the module builds nothing more) and written as the request ``name.c`` in the cache
    ``folder`` (default: the one now): a build never started leaves no request and costs no source. The day's first
    build also starts the cache's pruning (:func:`start_pruning`). ``then(build)`` runs when it ended (its
    ``failure``: the compiler's message). Returns the :class:`~rne_dynamics._compile.Build`."""
    folder = folder or cache_folder()  # now: the cache may be another when the build starts

    def arguments():
        name, source, optimise = named()
        os.makedirs(folder, exist_ok=True)
        request = os.path.join(folder, name)
        if key:
            write_atomically(index_path(key, folder), name)
        write_atomically(request + ".c", source)
        start_pruning(folder)
        flags = FLAGS if optimise else ["-O0", *FLAGS[1:]]
        return ["c", request, path_of(name, folder), str(TIMEOUT), str(COMPILERS), COMPILER, *flags, *host_flags(),
                f"-I{sysconfig.get_paths()['include']}", f"-I{np.get_include()}"]
    return _compile.submit(arguments, priority, then)


def write_atomically(path, text):
    """Write ``text`` to ``path`` under a temporary name, then rename it: a reader never sees half a file."""
    with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path), delete=False) as f:
        f.write(text)
    os.replace(f.name, path)


def digest(*parts):
    """The cache key of a module from everything its code depends on (bytes or text): ``parts``, and the fixed C of
    every module (:func:`module_c`), which is not among the Python sources."""
    h = hashlib.sha256(module_c().encode())
    for part in parts:
        h.update(part if isinstance(part, bytes) else str(part).encode())
        h.update(b"\0")
    return h.hexdigest()
