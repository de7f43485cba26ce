"""Compile the dynamics kernels with numba when it is installed; otherwise they run as plain Python.

``RNE_DYNAMICS_JIT=0`` in the environment runs them as plain Python with numba installed: exact and slow, with no
compile time (a developer's test loop).

Kernels are cached on disk (``cache=True``), so only the first process on a machine pays the compile time, in the
package's one cache folder (:func:`~rne_dynamics._tuning.cache_root`, ``numba/``). numba stamps a cached kernel with
its own file only, so a kernel would keep stale machine code of a helper changed in another file; ours are cached in
one directory named by the digest of all the kernel sources (:func:`cache_directory`): an edit of any recompiles
every kernel. numba's index keys each kernel by the host's CPU as well.
"""
import functools
import glob
import hashlib
import inspect
import math
import os
import pathlib

from collections import namedtuple

from . import _trace, _tuning

try:
    import numba
    from numba.core import caching, cgutils
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


@functools.cache
def _sources_hash():
    """The digest of the kernel sources: this module and every package module that imports it (where the kernels
    and the helpers they call are), but for the :data:`NO_KERNELS` folders. Every kernel is cached under it: an edit
    of any recompiles them all (minutes for a developer; an installation compiles once)."""
    digest = hashlib.sha256()
    for path in sorted(glob.glob("**/*.py", root_dir=PACKAGE_DIR, recursive=True)):  # (no hidden file: an editor's)
        name, source = pathlib.PurePath(path).as_posix(), pathlib.Path(PACKAGE_DIR, path).read_bytes()
        if name.split("/")[0] not in NO_KERNELS and (b"_jit import" in source or name == "_jit.py"):
            digest.update(name.encode() + b"\0" + source)
    return digest.hexdigest()


#: The cache folder of this process's kernels: numba fixes a kernel's when it is made (at import), so the builder's
#: compiles for this process write there too (a test that points ``RNE_DYNAMICS_CACHE`` elsewhere meanwhile).
KERNEL_ROOT = _tuning.cache_root()


def cache_directory():
    """The directory of this version of the kernel sources' machine code: a directory per version, as numba
    unpickles an index before it checks its stamp, and an index of older sources can name classes that are gone."""
    return os.path.join(KERNEL_ROOT, "numba", "kernels-" + _sources_hash()[:16])


if numba is not None:
    # numba >= 0.61 names these without the leading underscore
    _InTree = getattr(caching, "InTreeCacheLocator", None) or getattr(caching, "_InTreeCacheLocator", None)
    _CacheImpl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if _InTree is not None and _CacheImpl is not None:
        class _PackageLocator(_InTree):
            """Caches our kernels in :func:`cache_directory`, by their module's folder in the package, stamped with
            the digest of all the kernel sources (numba's stamp is the kernel's own file only: a kernel would keep
            stale machine code of a helper changed in another file)."""
            def get_source_stamp(self):
                return _sources_hash()

            def get_cache_path(self):
                folder = os.path.relpath(os.path.dirname(os.path.abspath(self._py_file)), PACKAGE_DIR)
                return os.path.join(cache_directory(), folder)

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                    return None
                return super().from_function(py_func, py_file)

        _CacheImpl._locator_classes.insert(0, _PackageLocator)


def _compiled(**options):
    """A decorator that compiles a function with numba and ``options`` (cached on disk, releasing the interpreter),
    or leaves it as it is without numba."""
    return (lambda function: function) if numba is None else numba.njit(cache=True, nogil=True, **options)


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
