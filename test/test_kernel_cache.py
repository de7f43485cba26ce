"""The on-disk kernel cache (rne_dynamics/_jit.py): one directory per version of the kernel sources (one digest of
them all), under the package's one cache folder (RNE_DYNAMICS_CACHE)."""
import glob
import os
import shutil
import subprocess
import sys
import time

import pytest

from rne_dynamics import _jit, _tuning

pytestmark = pytest.mark.skipif(_jit.numba is None, reason="numba is not installed: nothing is compiled or cached")

#: Two kernels of two folders, neither module importing the other, compiled in seconds: their numbers, then their
#: cache folders.
RUN = """
import numpy as np
from rne_dynamics.algorithms.inputs import all_finite, all_finite_from_python
from rne_dynamics.model.spatial import cross
print(repr(cross(1.0, 2.0, 3.0, 4.0, 5.0, 6.0)))
print(all_finite_from_python(np.array([1.0, np.inf])), all_finite_from_python(np.array([1.0, 2.0])))
print(all_finite._cache._cache_path)
print(cross._cache._cache_path)
"""


def append_an_edit(path):
    assert path.is_file(), path  # (not a new file)
    with open(path, "a") as source:
        source.write("\n# an edit\n")


def test_kernels_are_cached_under_the_digest_of_every_kernel_source(tmp_path, monkeypatch):
    """One directory per version of the kernel sources: the same sources (another checkout) give the same one; an
    edit of any module that holds kernels (imports ``_jit``) gives another; an edit of a module without kernels (the
    tools, the nodes, a module that does not import ``_jit``) does not."""
    from rne_dynamics.algorithms.gravity import GRAVITY
    locator = GRAVITY.single._cache._impl.locator
    assert isinstance(locator, _jit._PackageLocator)
    assert locator.get_source_stamp() == _jit._sources_hash()
    assert locator.get_cache_path() == os.path.join(_tuning.cache_root(), "numba",
                                                    "kernels-" + _jit._sources_hash()[:16], "algorithms")
    copy = tmp_path / "rne_dynamics"
    shutil.copytree(_jit.PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(_jit, "PACKAGE_DIR", str(copy))

    def digest_after(edited):
        if edited:
            append_an_edit(copy / edited)
        _jit._sources_hash.cache_clear()
        return _jit._sources_hash()

    try:
        digest = digest_after(None)
        assert digest == locator.get_source_stamp()  # the same sources elsewhere: the same kernels
        # an editor's hidden files (Emacs's lock, a broken link; a notebook's checkpoint copies) are no sources
        (copy / "algorithms" / ".#rnea.py").symlink_to("user@host.4242:1700000000")
        (copy / "algorithms" / ".ipynb_checkpoints").mkdir()
        (copy / "algorithms" / ".ipynb_checkpoints" / "rnea-checkpoint.py").write_text("from .._jit import kernel\n")
        assert digest_after(None) == digest
        for without_kernels in ("tools/cli.py", "nodes/model.py", "errors.py", "planning/retime.py"):
            assert digest_after(without_kernels) == digest, without_kernels
        for with_kernels in ("model/spatial.py", "algorithms/aba.py", "_jit.py"):
            assert digest_after(with_kernels) != digest, with_kernels
            digest = _jit._sources_hash()
    finally:
        monkeypatch.undo()
        _jit._sources_hash.cache_clear()
    assert _jit._sources_hash() == locator.get_source_stamp()


def test_an_edit_recompiles_every_kernel_and_an_edit_without_kernels_none(tmp_path):
    """An edit of a kernel module moves every kernel's cache to a new directory (an old index can name classes that
    are gone; a kernel inlines helpers of other modules), and the numbers stay right; an edit of a tool recompiles
    nothing: the kernels load their machine code."""
    shutil.copytree(_jit.PACKAGE_DIR, tmp_path / "rne_dynamics", ignore=shutil.ignore_patterns("__pycache__"))
    env = dict(os.environ, PYTHONPATH=str(tmp_path), RNE_DYNAMICS_COMPILE="caller",  # numba compiles, and caches
               RNE_DYNAMICS_CACHE=str(tmp_path / "cache"))

    def run_after(edited):
        if edited:
            append_an_edit(tmp_path / "rne_dynamics" / edited)
        out = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=tmp_path, capture_output=True, text=True,
                             timeout=600)
        assert out.returncode == 0, out.stderr
        product, finite, *caches = out.stdout.splitlines()
        assert product == repr((-3.0, 6.0, -3.0)) and finite == "False True"  # (1, 2, 3) x (4, 5, 6); an inf
        return caches, {path: os.path.getmtime(path) for cache in caches for path in glob.glob(cache + "/*.nbc")}

    caches, compiled = run_after(None)
    assert all(glob.glob(cache + "/*.nbc") for cache in caches), caches
    new_caches, recompiled = run_after("algorithms/inputs.py")
    # all_finite's own module and spatial.py's cross, which does not import inputs.py: one digest for all
    assert all(new != old and glob.glob(new + "/*.nbc") for new, old in zip(new_caches, caches)), new_caches
    assert run_after("tools/cli.py") == (new_caches, recompiled)  # loaded, not compiled again


COLD_INTEGRATE = """
import numpy as np, rne_dynamics as rd
from rne_dynamics import _compile
from rne_dynamics.model.configuration import integrate_rows
robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
q = rd.neutral(robot)
print(repr(rd.integrate(robot, q, np.full(robot.nv, 0.1), 0.5).tolist()))
print(len(integrate_rows.kernel.overloads), sorted(build.state for build in _compile._kernels.values()))
"""


def test_a_python_caller_of_a_kernel_numba_has_not_compiled_gets_its_python_at_once(tmp_path):
    """With numba's cache empty, ``rd.integrate`` answers by the kernel's Python, exact, while numba compiles it in
    a background process (queued, not compiled on the caller's path)."""
    import numpy as np
    import rne_dynamics as rd
    shutil.copytree(_jit.PACKAGE_DIR, tmp_path / "rne_dynamics", ignore=shutil.ignore_patterns("__pycache__"))
    out = subprocess.run([sys.executable, "-c", COLD_INTEGRATE], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=str(tmp_path), RNE_DYNAMICS_CACHE=str(tmp_path / "cache")),
                         timeout=600)
    assert out.returncode == 0, out.stderr
    values, compiled = out.stdout.splitlines()
    robot = rd.load_urdf(rd.bundled_robot_path(), floating_base=True)
    expected = rd.integrate(robot, rd.neutral(robot), np.full(robot.nv, 0.1), 0.5)
    np.testing.assert_allclose(eval(values), expected, rtol=1e-14, atol=1e-15)
    assert compiled.startswith("0 ") and ("'queued'" in compiled or "'started'" in compiled)



def negative_refused(x):
    if x[0] < 0:
        raise TypeError("a negative first element")
    return 2 * x


def test_a_python_callers_kernel_runs_its_python_for_other_types_and_raises_its_own_errors(monkeypatch):
    """``_compile.called_from_python``: a kernel with machine code for float arrays, called with integers, runs its
    Python (numba refuses the types in the words ``NO_MATCH``, which the call tells apart from an error: pinned here
    against numba's wording); a TypeError the kernel raises is the caller's."""
    import numpy as np

    from rne_dynamics import _compile
    refusing = _jit.numba.njit(negative_refused)
    refusing(np.array([1.5]))
    refusing.disable_compile()
    with pytest.raises(TypeError) as refusal:
        refusing(np.array([1]))
    assert str(refusal.value).startswith(_compile.NO_MATCH)

    monkeypatch.setattr(_compile, "ON_CALLER", True)  # the first signature compiled here
    call = _compile.called_from_python(_jit.numba.njit(negative_refused))
    assert call(np.array([1.5])).tolist() == [3.0]
    monkeypatch.setattr(_compile, "ON_CALLER", False)
    monkeypatch.setattr(_compile, "machine_code", lambda *_: False)  # (no background compile of a test's function)
    doubled = call(np.array([2]))
    assert doubled.tolist() == [4] and doubled.dtype.kind == "i"  # its Python: integers stay integers
    with pytest.raises(TypeError, match="a negative first element"):
        call(np.array([-1.5]))  # its machine code's own error


def waits_for_the_lock(process, path, seconds):
    """Whether ``process`` came to wait for the ``flock`` of the file ``path`` within ``seconds`` (Linux lists a
    waiting lock in /proc/locks: ``N: -> FLOCK ADVISORY WRITE PID MAJOR:MINOR:INODE ...``)."""
    inode, end = f":{os.stat(path).st_ino}", time.monotonic() + seconds
    while time.monotonic() < end and process.poll() is None:
        with open("/proc/locks") as locks:
            if any(f[1] == "->" and f[5] == str(process.pid) and f[6].endswith(inode) for f in map(str.split, locks)):
                return True
        time.sleep(0.05)
    return False


@pytest.mark.skipif(not os.path.exists("/proc/locks"), reason="the file locks a process waits for: Linux's /proc")
def test_a_second_build_of_a_kernel_waits_for_the_first_and_loads_what_it_cached(tmp_path):
    """Every process that needs a kernel numba has not cached starts a build of it (a CI's test processes compiled
    the same simulator step seven times side by side): a build waits while another holds the kernel's request
    (here, the test), then builds (numba's compile loads the kernel instead when the other cached it)."""
    import fcntl
    import pickle

    from rne_dynamics import _compile, _compile_child

    request = ("rne_dynamics._compile", "kernel_named", "rne_dynamics.algorithms.inputs:all_finite",
               pickle.dumps((_jit.numba.types.float64[::1],)).hex())
    index = _compile.kernel_named(request[2])._cache._cache_file._index_path  # the request's lock is beside it
    path = os.path.join(str(tmp_path), os.path.relpath(index, _tuning.cache_root()))
    os.makedirs(os.path.dirname(path))
    kernels = os.path.join(str(tmp_path), "numba", "**", "*.nbi")
    with open(tmp_path / "errors", "w") as errors, open(path + ".lock", "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        builder = _compile_child.start(["numba", *request], errors, RNE_DYNAMICS_CACHE=str(tmp_path))
        assert waits_for_the_lock(builder, path + ".lock", 120)  # (not ended, nothing compiled)
        assert not glob.glob(kernels, recursive=True)
    assert builder.wait(timeout=300) == 0, (tmp_path / "errors").read_text()
    assert glob.glob(kernels, recursive=True) and not os.path.exists(path + ".lock")


def test_the_builders_numba_compiles_go_where_this_processs_kernels_load_from(tmp_path, monkeypatch):
    """numba fixes a kernel's cache folder when the kernel is made (at import): a builder started after
    ``RNE_DYNAMICS_CACHE`` changed (a test's own cache folder) compiles into the folder this process loads its
    kernels from, not into one it never reads (its compile was lost and the kernel's Python served on)."""
    from rne_dynamics import _compile, _compile_child
    from rne_dynamics.algorithms.gravity import GRAVITY
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    assert _jit.cache_directory().startswith(os.path.join(_jit.KERNEL_ROOT, "numba", "kernels-"))
    assert GRAVITY.single._cache._cache_path.startswith(_jit.cache_directory())
    assert not _jit.KERNEL_ROOT.startswith(str(tmp_path))
    started = []  # (builds queued by earlier tests may start first: only this one's start is looked at)
    start = _compile_child.start
    monkeypatch.setattr(_compile_child, "start", lambda arguments, errors, **environment: (
        started.append((arguments, environment)), start(arguments, errors, **environment))[1])
    (tmp_path / "empty").mkdir()
    arguments = ["prune", "1e9", str(tmp_path / "empty")]
    build = _compile.submit(lambda: arguments, _compile.WAITED)
    assert build.ended.wait(120) and build.state == "built", build.failure
    assert [environment for called, environment in started if called == arguments] == [
        {"RNE_DYNAMICS_CACHE": _jit.KERNEL_ROOT}]


def test_a_process_marks_its_kernels_folder_used_where_it_looks_for_a_kernel_and_the_pruning_keeps_it(
        tmp_path, monkeypatch):
    """The builder's pruning removes numba's kernel folders nobody used for UNUSED_DAYS (test_native_cache.py): a
    process that looks in its own for a kernel's machine code (to load it, to compile it there, to queue its build)
    marks it used, once a PRUNE_PERIOD, so that a folder in use is never older than that, and the pruning keeps it
    while it removes another version's."""
    import numpy as np

    from rne_dynamics import _compile, _native
    monkeypatch.setattr(_jit, "KERNEL_ROOT", str(tmp_path))  # (this process's kernels: in the test's cache)
    monkeypatch.setattr(_compile, "_marked", {})  # a new process
    own, other = _jit.cache_directory(), os.path.join(str(tmp_path), "numba", "kernels-0000000000000000")
    for folder in own, other, os.path.join(str(tmp_path), "native"):
        os.makedirs(folder)
    then = time.time() - (_tuning.UNUSED_DAYS + 1) * 86_400
    for folder in own, other:
        os.utime(folder, (then, then))
    doubling = _jit.numba.njit(negative_refused)  # (no machine code: machine_code looks for it, then only asks)
    assert not _compile.machine_code(doubling, (np.array([1.5]),), ("", "", ""), queue=False)
    assert time.time() - os.path.getmtime(own) < 60 and os.path.getmtime(other) == then
    os.utime(own, (then, then))
    _compile.machine_code(doubling, (np.array([1.5]),), ("", "", ""), queue=False)
    assert os.path.getmtime(own) == then  # once a PRUNE_PERIOD
    monkeypatch.setattr(_compile, "_marked", {own: time.monotonic() - _tuning.PRUNE_PERIOD})  # a day later
    _compile.machine_code(doubling, (np.array([1.5]),), ("", "", ""), queue=False)
    pruner = _native.start_pruning(os.path.join(str(tmp_path), "native"))
    _compile.hurry(pruner)
    assert pruner.ended.wait(120) and pruner.failure is None, pruner.failure
    assert os.listdir(os.path.join(str(tmp_path), "numba")) == [os.path.basename(own)]


def test_a_kernel_built_but_not_in_numbas_cache_is_a_failure_not_a_silent_python(monkeypatch):
    """A numba build that ended well but left nothing this process's numba loads (the builder ran another numba) is
    a warning and one of ``_compile.failures`` (the tests fail on any), as a build that failed is: its Python serves
    on, said."""
    import numpy as np
    from rne_dynamics import _compile
    doubling = _jit.numba.njit(negative_refused)  # (no disk cache: nothing to load)
    arguments = (np.array([1.5]),)
    build = _compile.Build(None, _compile.KERNEL, None)
    build.state, build.arguments = "built", ["numba", "module", "function", "argument", "signature"]
    monkeypatch.setattr(_compile, "_kernels", {(doubling, (_jit.numba.typeof(arguments[0]),)): build})
    monkeypatch.setattr(_compile, "failures", [])
    with pytest.warns(RuntimeWarning, match="numba could not compile module.function"):
        assert not _compile.machine_code(doubling, arguments, ("", "", ""))
    assert build.state == "failed" and _compile.failures == [
        "module.function('argument'): built, but not in numba's cache (the builder ran another numba?)"]
