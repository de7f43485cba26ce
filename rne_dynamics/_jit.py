"""Compile the dynamics kernels with numba when it is installed; otherwise they run as plain Python.

Kernels are cached on disk (``cache=True``), so only the first process on a machine pays the compile time. numba
stamps a cached kernel with its own file only, so a kernel would keep stale machine code of a helper changed in
another file; ours are cached in a directory named by a hash of every kernel module of the package instead.
"""
import hashlib
import os

try:
    import numba
    from numba.core import caching
except ImportError:  # the same code, uncompiled: slow but exact
    numba = None

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))


def _sources_hash():
    """Hash of the modules that define kernels (those importing this one)."""
    digest = hashlib.sha256()
    for folder, _, names in sorted(os.walk(PACKAGE_DIR)):
        for name in sorted(names):
            if name.endswith(".py"):
                with open(os.path.join(folder, name), "rb") as source:
                    text = source.read()
                if b"_jit import" in text or name == "_jit.py":
                    digest.update(os.path.relpath(os.path.join(folder, name), PACKAGE_DIR).encode() + text)
    return digest.hexdigest()


if numba is not None:
    # numba >= 0.61 names these without the leading underscore
    _InTree = getattr(caching, "InTreeCacheLocator", None) or getattr(caching, "_InTreeCacheLocator", None)
    _CacheImpl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    if _InTree is not None and _CacheImpl is not None:
        class _PackageLocator(_InTree):
            """Caches our kernels in the package's __pycache__, in a directory named by the hash of all package
            sources."""
            stamp = _sources_hash()

            def get_source_stamp(self):
                return self.stamp

            def get_cache_path(self):
                # a directory per source version: numba unpickles an index before it checks the stamp, and an
                # index of older sources can name classes that no longer exist
                return os.path.join(super().get_cache_path(), "kernels-" + self.stamp[:16])

            @classmethod
            def from_function(cls, py_func, py_file):
                if not os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep):
                    return None
                return super().from_function(py_func, py_file)

        _CacheImpl._locator_classes.insert(0, _PackageLocator)


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


def batch_kernel(function):
    """Like :func:`kernel`, for loops over a batch of states that may run on all cores."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True, parallel=True)(function)


#: ``range`` over the chunks of a batch: numba's parallel range where compiled.
batch_range = range if numba is None else numba.prange

#: States per chunk of a batch: each chunk allocates its workspace once.
CHUNK = 64


@kernel
def chunk_count(n):
    """Number of chunks of :data:`CHUNK` states in a batch of ``n``."""
    return (n + CHUNK - 1) // CHUNK


@kernel
def chunk_rows(chunk, n):
    """The states of chunk ``chunk``."""
    return range(chunk * CHUNK, min(n, (chunk + 1) * CHUNK))
