"""Compile the dynamics kernels with numba when it is installed; otherwise they run as plain Python.

``RNE_DYNAMICS_JIT=0`` in the environment runs them as plain Python with numba installed: exact and slow, with no
compile time (a developer's test loop).

Kernels are cached on disk (``cache=True``), so only the first process on a machine pays the compile time, in the
package's one cache folder (:func:`~rne_dynamics._tuning.cache_root`, ``numba/``). numba stamps a cached kernel with
its own file only, so a kernel would keep stale machine code of a helper changed in another file; ours are cached in
a directory named by a hash of the kernel modules it depends on (its module and those it imports, read from their
import statements): an edit recompiles the kernels of the edited module and of the modules that import it, no
others. numba's index keys each kernel by the host's CPU as well.
"""
import ast
import copy
import functools
import glob
import hashlib
import inspect
import linecache
import math
import os
import re
import sys

from collections import namedtuple

import numpy as np

from . import _trace, _tuning

try:
    import numba
    from numba.core import caching
    from numba.core import cgutils
    from numba.core.imputils import impl_ret_borrowed
    from numba.extending import intrinsic, overload
    from numba.np.arrayobj import make_array, populate_array
except ImportError:  # the same code, uncompiled: slow but exact
    numba = None
if _tuning.JIT == "0":
    numba = None

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))

#: The status codes every engine returns (a generic entry, a robot's written code as C or as Python), defined here
#: only: ``OK``; an argument of the wrong size or type; a number that is not finite; a quaternion that is not unit;
#: a result that overflowed; a state past a guard of the written code (the generic kernel runs it). A step may also
#: return ``SINGULAR + k``: velocity coordinate ``k`` drives no mass (its pivot is not positive).
OK, BAD_SHAPE, NOT_FINITE, NOT_UNIT, OVERFLOW, GUARD = range(6)
SINGULAR = 16


#: Folders whose modules import this one only to ask about the compiled kernels: their edits recompile nothing.
NO_KERNELS = ("nodes", "tools")


#: A package import: ``from .x import a, b`` (any number of dots) or ``from rne_dynamics.x import a``.
_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+|rne_dynamics\b\.?)([\w.]*)[ \t]+import[ \t]+\(?([\w, \t]+)", re.M)


@functools.cache
def _package_modules():
    """``(sources, imports)``: each module's source (dotted name under the package, ``""`` for its ``__init__``),
    but for the :data:`NO_KERNELS` folders, and the package modules it imports."""
    sources = {}
    for folder, _, names in os.walk(PACKAGE_DIR):
        if os.path.basename(folder) in NO_KERNELS:
            continue
        for name in names:
            if name.endswith(".py"):
                path = os.path.relpath(os.path.join(folder, name), PACKAGE_DIR)[:-3].replace(os.sep, ".")
                with open(os.path.join(folder, name), "rb") as source:
                    sources[path.removesuffix("__init__").rstrip(".")] = source.read()
    imports = {}
    for module, text in sources.items():
        package = module if os.path.isdir(os.path.join(PACKAGE_DIR, *module.split("."))) else module.rpartition(".")[0]
        found = set()
        for dots, target, names in _IMPORT.findall(text.decode()):
            if dots.startswith("rne_dynamics"):
                base = target
            else:
                parts = package.split(".") if package else []
                base = ".".join(parts[:len(parts) - (len(dots) - 1)] + [target] * bool(target))
            for name in names.replace("(", " ").split(","):
                submodule = ".".join(filter(None, (base, name.split()[0] if name.split() else "")))
                found.add(submodule if submodule in sources else base)  # a module imported from its package
        imports[module] = found & sources.keys()
    return sources, imports


def _sources_hash(modules=None):
    """Hash of the kernel modules (those importing this one) that ``modules`` (dotted names under the package; all
    modules if None) import, directly or through others, themselves included."""
    sources, imports = _package_modules()
    reached, todo = set(), list(sources if modules is None else modules)
    while todo:
        module = todo.pop()
        if module in sources and module not in reached:
            reached.add(module)
            todo += imports[module]
    digest = hashlib.sha256()
    for module in sorted(reached):
        if b"_jit import" in sources[module] or module == "_jit":
            digest.update(module.encode() + b"\0" + sources[module])
    return digest.hexdigest()


#: The stamps of the kernels made in this process: their cache directories are this version's.
_stamps = set()


def _stamp_of(function):
    """The hash of the sources ``function`` depends on: its module's (:func:`_sources_hash`) and, for a function the
    package writes out (an algorithm's entry, which calls the step it was made with), those of the package's
    functions its globals name."""
    package = __name__.rpartition(".")[0]
    modules = {function.__module__}
    for name in function.__code__.co_names:
        value = getattr(function.__globals__.get(name), "py_func", function.__globals__.get(name))
        modules.add(getattr(value, "__module__", None) or "")
    return _sources_hash(m[len(package) + 1:] for m in modules if m.startswith(package + "."))


if numba is not None:
    # numba >= 0.61 names these without the leading underscore
    _InTree = getattr(caching, "InTreeCacheLocator", None) or getattr(caching, "_InTreeCacheLocator", None)
    _CacheImpl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if _InTree is not None and _CacheImpl is not None:
        class _PackageLocator(_InTree):
            """Caches our kernels in the cache folder's ``numba/``, in a directory named by the hash of the sources
            each depends on (:func:`_stamp_of`), then by the module's folder in the package."""
            def __init__(self, py_func, py_file):
                super().__init__(py_func, py_file)
                self.stamp = _stamp_of(py_func)
                _stamps.add(self.stamp)

            def get_source_stamp(self):
                return self.stamp

            def get_cache_path(self):
                # a directory per source version: numba unpickles an index before it checks the stamp, and an
                # index of older sources can name classes that no longer exist
                folder = os.path.relpath(os.path.dirname(os.path.abspath(self._py_file)), PACKAGE_DIR)
                return os.path.join(_tuning.cache_root(), "numba", "kernels-" + self.stamp[:16], folder)

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                    return None
                return super().from_function(py_func, py_file)

        _CacheImpl._locator_classes.insert(0, _PackageLocator)


def cache_directories():
    """The directories that hold the compiled kernels of this version of the sources (of the kernels made so far:
    every one once the package's algorithms are imported)."""
    current = {"kernels-" + stamp[:16] for stamp in _stamps}
    return [path for path in glob.glob(os.path.join(_tuning.cache_root(), "numba", "kernels-*"))
            if os.path.basename(path) in current]


def compiled():
    """Whether this version of the kernels has been compiled here (``rne-dynamics compile``, or earlier runs)."""
    return numba is None or any(glob.glob(os.path.join(path, "**", "*.nbi"), recursive=True)
                                for path in cache_directories())


def kernel(function):
    """Mark a numerical kernel: flat numpy arrays in, arrays written in place."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True)(function)


def arithmetic_kernel(function):
    """Like :func:`kernel`, for a kernel that only computes into arrays it is given and calls only helpers and other
    such kernels (it cannot allocate): compiled without numba's reference counting, whose atomic increments and
    decrements of the array views that helpers take cost a quarter of a small robot's RNEA and contend between the
    threads of a batch."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True, _nrt=False)(function)


def helper(function):
    """A kernel called from other kernels and inlined into them: a call would cost more than a small helper's
    arithmetic, and a reference count on every array it reads from a tuple (an algorithm reading the model)."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True, inline="always")(function)


def finite_check(function):
    """Like :func:`arithmetic_kernel`, for a sum that may be reordered (``fastmath`` reassociation only: NaN and inf
    keep their meaning), so that the compiler vectorises it."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True, _nrt=False, fastmath={"reassoc"})(function)


#: Where :func:`carve` puts an array when it only measures a layout: its offset in the block and its shape.
Slot = namedtuple("Slot", "offset shape")


def carve(block, offset, shape):
    """The array of ``shape`` at ``offset`` in the flat ``block``, and the offset after it. With ``block`` None (in
    Python, to measure a layout) the array is its :class:`Slot`."""
    end = offset + _product(shape)
    if block is None:
        return Slot(offset, shape), end
    return block[offset:end].reshape(shape), end


def _product(shape):
    n = 1
    for s in shape:
        n *= s
    return n


#: The model's sizes a memory declaration names (fields of :class:`~rne_dynamics.model.buffers.ModelView`).
SIZES = ("nb", "nv", "nq", "nj", "ncol", "nl", "nm")


def memory(name, results=None, parameters=(), **arrays):
    """The memory of an algorithm, declared as data: the named arrays of one state, ``results`` first (a dict, in
    order), then ``arrays`` (in order). A shape is a tuple of numbers and expressions of the model's sizes
    (:data:`SIZES`: ``"nb + 1"``, ``"0 if ncol != nv else nb"``) and of the declared ``parameters``; an array may
    also be another memory, nested by name (``rnea=rnea_workspace``), with sizes of its own given by
    ``.sized(nb="0", ...)`` (expressions of this memory's sizes).

    Returns the *layout*, ``layout(block, m, *parameters) -> (arrays, end_of_results, end)``: ``arrays`` a named
    tuple of views of the flat ``block`` (nested memories as named tuples of theirs), made without allocation in a
    compiled kernel; with ``block`` None (in Python) its arrays are :class:`Slot`, which measures the block. Its
    attribute ``results`` is the named tuple of the results alone (a public result type derives from it). Every
    engine writes all of ``block[:end_of_results]``: a memory nested among the results (an algorithm's
    intermediates that a ``Data`` shows) is written too, but is not a field of ``results``."""
    fields = [(field, _declared(field, spec, name)) for field, spec in [*(results or {}).items(), *arrays.items()]]
    declaration = _Declaration(name, fields, len(results or ()), tuple(parameters),
                               sys._getframe(1).f_globals.get("__name__", __name__))
    for field, spec in fields:
        declaration.check(field, spec)
    return declaration.layout()


class _Nested:
    """A memory nested in another, its sizes ``bindings`` (name: expression of the enclosing memory's sizes)."""

    def __init__(self, declaration, bindings):
        self.declaration, self.bindings = declaration, {k: _expression(v) for k, v in bindings.items()}


def _declared(field, spec, memory_name):
    """A field's declaration: a nested memory (a layout, or one :meth:`_Declaration.sized`), or a shape as a tuple
    of expressions."""
    if isinstance(spec, _Nested):
        return spec
    if hasattr(spec, "declaration"):
        return _Nested(spec.declaration, {})
    if not isinstance(spec, tuple):
        raise TypeError(f"memory {memory_name!r}: {field} must be a shape tuple or a memory, got {spec!r}")
    return tuple(_expression(n) for n in spec)


def _expression(n):
    """A size as an expression tree: a number, or the text of an expression of sizes."""
    if isinstance(n, int):
        return ast.Constant(n)
    return ast.parse(str(n), mode="eval").body


def _names(expression):
    return {node.id for node in ast.walk(expression) if isinstance(node, ast.Name)}


class _Declaration:
    """A declared memory: its name, its fields (a shape, or a :class:`_Nested`), how many are results, its
    parameters and its named tuples."""

    def __init__(self, name, fields, results, parameters, module):
        self.name, self.fields, self.results, self.parameters = name, fields, results, parameters
        title = "".join(part.title() for part in name.split("_"))
        self.type = namedtuple(title, [field for field, _ in fields], module=module)
        self.results_type = namedtuple(title + "Results", [field for field, spec in fields[:results]
                                                           if not isinstance(spec, _Nested)], module=module)
        self.results_type.__annotations__ = {field: np.ndarray for field in self.results_type._fields}  # (docs)
        self.results_type.__new__.__annotations__ = dict(self.results_type.__annotations__)
        self.module = module

    def check(self, field, spec):
        """Every name a field uses is a size of the model or a parameter; a nested memory's parameters are given."""
        known = set(SIZES) | set(self.parameters)
        if field in ("block", "m", "o", "results") + self.parameters:
            raise TypeError(f"memory {self.name!r}: {field!r} names an argument of its layout")
        if isinstance(spec, _Nested):
            inner = spec.declaration
            used = set().union(*(_names(e) for e in spec.bindings.values()))
            missing = set(inner.parameters) - set(spec.bindings)
            if missing:
                raise TypeError(f"memory {self.name!r}: {field} ({inner.name}) needs sizes for {sorted(missing)}")
            foreign = set(spec.bindings) - set(SIZES) - set(inner.parameters)
            if foreign:
                raise TypeError(f"memory {self.name!r}: {field} ({inner.name}) has no size {sorted(foreign)}")
        else:
            used = set().union(set(), *(_names(e) for e in spec))
        unknown = used - known
        if unknown:
            raise TypeError(f"memory {self.name!r}: {field} names {sorted(unknown)}, neither a model size "
                            f"{SIZES} nor a parameter {self.parameters}")

    def sized(self, **bindings):
        """This memory nested with its sizes ``bindings`` (expressions of the enclosing memory's sizes)."""
        return _Nested(self, bindings)

    def layout(self):
        """The layout function of the declaration (:func:`memory`), written out and compiled once."""
        lines, namespace = [], {"carve": carve, "__name__": self.module}
        made = self._source(lines, namespace, "", [])
        if self.results == 0:
            lines.insert(0, "    results = 0")
        source = (f"def {self.name}(block, m{''.join(', ' + p for p in self.parameters)}):\n    o = 0\n"
                  + "\n".join(lines) + f"\n    return {made}, results, o\n")
        filename = f"<memory {self.name}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)  # for tracebacks
        exec(compile(source, filename, "exec"), namespace)
        function = namespace[self.name]
        function.declaration, function.results, function.sized = self, self.results_type, self.sized
        return _layout(function)

    def _source(self, lines, namespace, prefix, scopes):
        """Append the statements that carve this memory's arrays to ``lines``; return the expression that makes
        its named tuple. ``scopes``: the bindings of the enclosing memories, innermost first."""
        made = []
        for k, (field, spec) in enumerate(self.fields):
            local = prefix + field
            if isinstance(spec, _Nested):
                made.append(spec.declaration._source(lines, namespace, local + "__", [spec.bindings] + scopes))
            else:
                shape = ", ".join(ast.unparse(_resolved(e, scopes)) for e in spec) + ("," if len(spec) == 1 else "")
                lines.append(f"    {local}, o = carve(block, o, ({shape}))")
                made.append(local)
            if not prefix and k + 1 == self.results:
                lines.append("    results = o")
        type_name = f"_{self.name}_type"
        namespace[type_name] = self.type
        return f"{type_name}({', '.join(made)})"


def _resolved(expression, scopes):
    """``expression`` in terms of the outermost memory's arguments: each name replaced by its binding in the
    innermost scope that binds it, the model's sizes read from ``m``."""
    class Replace(ast.NodeTransformer):
        def visit_Name(self, node):
            for depth, bindings in enumerate(scopes):
                if node.id in bindings:
                    return _resolved(bindings[node.id], scopes[depth + 1:])
            if node.id in SIZES:
                return ast.Attribute(ast.Name("m", ast.Load()), node.id, ast.Load())
            return node  # a parameter of the outermost memory
    return Replace().visit(copy.deepcopy(expression))


def _layout(function):
    """Register a memory's layout function for numba: compiled without reference counting (as numba inlines it,
    a layout of forty arrays costs minutes of compilation), it may only be called from an
    :func:`arithmetic_kernel`."""
    if numba is not None:
        def typing(*arguments):
            return function
        typing.__signature__ = inspect.signature(function)
        overload(function, jit_options={"_nrt": False})(typing)
    return function


@helper
def is_unit(a, b, c, d, tolerance):
    """The quaternion ``(a, b, c, d)`` has a norm within ``tolerance`` of 1: the one definition of the check, which
    the kernels call and the written code spells out, in C and in Python, from its trace
    (:func:`rne_dynamics._native.unit_check`)."""
    return abs(math.sqrt(a * a + b * b + c * c + d * d) - 1.0) <= tolerance


def skip_zero(x):
    """``x == 0.0`` for a branch that only skips work adding nothing: a traced number (:mod:`rne_dynamics._trace`)
    is taken as nonzero, so the written code does that work instead of guarding on the value."""
    return x == 0.0 if x.__class__ is not _trace.Value else False


def apply(function, head, arguments):
    """``function(*head, *arguments)``; numba cannot call a compiled function with ``*`` arguments."""
    return function(*head, *arguments)


def all_of(test, arguments):
    """``test(a)`` holds for every array ``a`` of the tuple ``arguments`` (which may mix shapes and numbers)."""
    return all(test(a) for a in arguments if hasattr(a, "shape"))


def status_of(returned):
    """A step's return value as a status: 0 (success) for a step that returns nothing."""
    return 0 if returned is None else returned


def last_sizes(arguments):
    """The last dimension of each array of the tuple ``arguments`` (numbers skipped), as a tuple of integers."""
    return tuple(a.shape[-1] for a in arguments if hasattr(a, "shape"))


def _generated(arguments, body, namespace=None):
    """A function ``impl(arguments)`` whose ``return`` expression is ``body`` (source text, with the globals
    ``namespace``), compiled by numba in the caller: how one definition serves tuples of any length and element
    types."""
    namespace = dict(namespace or {})
    exec(f"def impl({arguments}):\n    return {body}\n", namespace)
    return namespace["impl"]


if numba is not None:
    @intrinsic
    def _array_at(typingctx, block, offset, shape):
        """The C-contiguous array of ``shape`` whose first element is ``block[offset]``, sharing ``block``'s memory:
        numba's ``reshape`` checks and computes what a layout already knows, at the cost of a small robot's
        arithmetic."""
        array = numba.types.Array(numba.types.float64, len(shape), "C")

        def codegen(context, builder, signature, arguments):
            source = make_array(signature.args[0])(context, builder, arguments[0])
            view = make_array(array)(context, builder)
            sizes = cgutils.unpack_tuple(builder, arguments[2], len(shape))
            strides = [context.get_constant(numba.types.intp, 8)]
            for size in reversed(sizes[1:]):
                strides.insert(0, builder.mul(strides[0], size))
            populate_array(view, data=builder.gep(source.data, [arguments[1]]), shape=sizes, strides=strides,
                           itemsize=context.get_constant(numba.types.intp, 8), meminfo=source.meminfo,
                           parent=source.parent)
            return impl_ret_borrowed(context, builder, array, view._getvalue())
        return array(block, offset, shape), codegen

    @overload(carve, inline="always")
    def _carve(block, offset, shape):
        size = " * ".join(f"shape[{k}]" for k in range(len(shape)))
        return _generated("block, offset, shape", f"_array_at(block, offset, shape), offset + {size}",
                          {"_array_at": _array_at})

    @overload(skip_zero, inline="always")
    def _skip_zero(x):
        return lambda x: x == 0.0

    @overload(apply, inline="always")
    def _apply(function, head, arguments):
        return _generated("function, head, arguments", "function(" + "".join(
            [f"head[{k}], " for k in range(len(head))] + [f"arguments[{k}], " for k in range(len(arguments))]) + ")")

    def _arrays(arguments):
        return [k for k, a in enumerate(arguments) if isinstance(a, numba.types.Array)]

    @overload(all_of, inline="always")
    def _all_of(test, arguments):
        return _generated("test, arguments", " and ".join(f"test(arguments[{k}])" for k in _arrays(arguments))
                          or "True")

    @overload(status_of, inline="always")
    def _status_of(returned):
        return _generated("returned", "0" if returned is numba.types.none else "returned")

    @overload(last_sizes, inline="always")
    def _last_sizes(arguments):
        return _generated("arguments", "(" + "".join(f"arguments[{k}].shape[-1], " for k in _arrays(arguments)) + ")")
