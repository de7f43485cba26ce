"""Compile the dynamics kernels with numba when it is installed; otherwise they run as plain Python.

Kernels are cached on disk (``cache=True``), so only the first process on a machine pays the compile time.
"""
try:
    import numba
except ImportError:  # the same code, uncompiled: slow but exact
    numba = None


def kernel(function):
    """Mark a numerical kernel: flat numpy arrays in, arrays written in place."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True)(function)


def batch_kernel(function):
    """Like :func:`kernel`, for loops over a batch of states that may run on all cores."""
    if numba is None:
        return function
    return numba.njit(cache=True, nogil=True, parallel=True)(function)


#: ``range`` over the states of a batch: numba's parallel range where compiled.
batch_range = range if numba is None else numba.prange
