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
import functools
import glob
import hashlib
import inspect
import math
import os
import re

from collections import namedtuple

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


def _compiled(**options):
    """A decorator that compiles a function with numba and ``options`` (cached on disk, releasing the interpreter),
    or leaves it as it is without numba."""
    def decorate(function):
        return function if numba is None else numba.njit(cache=True, nogil=True, **options)(function)
    return decorate


#: A numerical kernel: flat numpy arrays in, arrays written in place.
kernel = _compiled()
#: A kernel that only computes into arrays it is given and calls only helpers and other such kernels (it cannot
#: allocate): compiled without numba's reference counting, whose atomic increments and decrements of the array views
#: that helpers take cost a quarter of a small robot's RNEA and contend between the threads of a batch.
arithmetic_kernel = _compiled(_nrt=False)
#: A kernel called from other kernels and inlined into them: a call would cost more than a small helper's
#: arithmetic, and a reference count on every array it reads from a tuple (an algorithm reading the model).
helper = _compiled(inline="always")
#: An :data:`arithmetic_kernel` whose sum may be reordered (``fastmath`` reassociation only: NaN and inf keep their
#: meaning), so that the compiler vectorises it.
finite_check = _compiled(_nrt=False, fastmath={"reassoc"})


#: Where :func:`carve` puts an array when it only measures a layout: its offset in the block and its shape.
Slot = namedtuple("Slot", "offset shape")


def carve(block, offset, shape):
    """The array of ``shape`` at ``offset`` in the flat ``block``, and the offset after it. With ``block`` None (in
    Python, to measure a layout) the array is its :class:`Slot`."""
    end = offset + math.prod(shape)
    if block is None:
        return Slot(offset, shape), end
    return block[offset:end].reshape(shape), end


def compiled_layout(function):
    """Register a memory's layout function for numba: compiled without reference counting (as numba inlines it,
    a layout of forty arrays costs minutes of compilation), it may only be called from an
    :data:`arithmetic_kernel`."""
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


def status_of(returned):
    """A step's return value as a status: 0 (success) for a step that returns nothing."""
    return 0 if returned is None else returned


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
        # the size spelled out for the shape's length: a product of constants once compiled
        size = " * ".join(f"shape[{k}]" for k in range(len(shape)))
        namespace = {"_array_at": _array_at}
        exec(f"def carve(block, offset, shape):\n    return _array_at(block, offset, shape), offset + {size}\n",
             namespace)
        return namespace["carve"]

    @overload(skip_zero, inline="always")
    def _skip_zero(x):
        return lambda x: x == 0.0

    @overload(status_of, inline="always")
    def _status_of(returned):
        return (lambda returned: 0) if returned is numba.types.none else (lambda returned: returned)
