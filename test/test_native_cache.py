"""The C cache (``rne_dynamics/_native.py``) shared by processes of other versions of the sources (two installs, two
checkouts): none removes what another may still use; a file is marked used when it is read or loaded, and the
builder prunes what nobody used for ``UNUSED_DAYS``, at most once a day per cache folder, numba's kernel folders beside
it by the same rule."""
import os
import sysconfig
import time

import numpy as np

import rne_dynamics as rd
from rne_dynamics import _compile, _native, _trace
from rne_dynamics.algorithms import gravity, written

DAY = 86_400
MODULE_C = _native.module_c()


def use_version(monkeypatch, version):
    """Run as the sources ``version`` would: the model keys' version and the C of its own (a program of its own)."""
    monkeypatch.setattr(_native, "module_c", lambda: f"{MODULE_C}/* version {version} */\n")
    monkeypatch.setattr(written, "sources_stamp", lambda: _native.digest("sources", version))


def test_two_versions_of_the_sources_sharing_a_cache_keep_each_others_modules(tmp_path, monkeypatch):
    """Two versions build the same robot's gravity torques into one cache folder, each its own program; then each,
    in turn, loads its module at once and builds nothing (before, each index written removed the other versions'
    indexes and the modules no index named: every other use built again)."""
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    modules = {}
    for version in ("1", "2"):
        use_version(monkeypatch, version)
        made = written.written(gravity.GRAVITY, rd.load_urdf(rd.bundled_robot_path()), wait=True)
        assert made is not None and made.native
        modules[version] = made.single.__self__.__file__
    assert modules["1"] != modules["2"] and all(os.path.exists(path) for path in modules.values())
    assert len(list((tmp_path / "native").glob("*.program"))) == 2  # a model's index per version

    built = []
    monkeypatch.setattr(_native, "build", lambda name, *rest, **keywords: built.append(name))
    robot = rd.load_urdf(rd.bundled_robot_path())
    q = rd.random_configuration(robot, np.random.default_rng(3))
    torques = {}
    for version in ("1", "2", "1"):
        use_version(monkeypatch, version)
        robot = rd.load_urdf(rd.bundled_robot_path())  # a new process's robot: no written code yet
        made = written.written(gravity.GRAVITY, robot)
        assert made is not None and made.native and made.single.__self__.__file__ == modules[version]
        torques[version] = rd.gravity_torques(robot, q, data=robot.data())
    assert built == []
    monkeypatch.setattr(written, "MODE", "0")  # the generic kernel
    reference = rd.gravity_torques(rd.load_urdf(rd.bundled_robot_path()), q)
    for version in ("1", "2"):
        np.testing.assert_allclose(torques[version], reference, rtol=0.0, atol=1e-12)


def waited_for(build):
    """Whether ``build`` ended within two minutes, waited for (first in the queue: not behind the builds that earlier
    tests queued)."""
    _compile.hurry(build)
    return build.ended.wait(120)


def built_module(name):
    """A small program built into the cache as the module ``name`` (its path)."""
    program, outputs = _trace.trace(lambda x: [x[0] * x[0]], [np.array([2.0])])
    assert waited_for(_native.build(lambda: (name, _native.c_source(name, program, outputs, [1]), True)))
    return _native.path_of(name)


def age(paths, days):
    """Make ``paths`` last used ``days`` ago."""
    then = time.time() - days * DAY
    for path in paths:
        os.utime(path, (then, then))


def test_a_file_read_or_loaded_is_marked_used_at_most_once_a_day_per_process(tmp_path, monkeypatch):
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    (tmp_path / "native").mkdir()
    (tmp_path / "native" / "pruned").write_text("")  # pruned today: no pruning beside the test
    module = built_module("square_program_0000000000000000")
    pointer = _native.index_path("square_00000000_0000000000000000")
    _native.write_atomically(pointer, "square_program_0000000000000000")
    age([module, pointer], 40)
    monkeypatch.setattr(_compile, "_marked", {})  # a new process
    out = np.empty(1)
    assert _native.load("square_00000000_0000000000000000").single(out, np.array([3.0])) == _native.OK and out[0] == 9.0
    assert all(time.time() - os.stat(path).st_mtime < 60 for path in (module, pointer))
    age([module, pointer], 40)
    assert _native.load("square_00000000_0000000000000000") is not None
    assert all(time.time() - os.stat(path).st_mtime > 39 * DAY for path in (module, pointer))  # not again today


def test_the_builder_prunes_what_nobody_used_for_unused_days_once_a_day(tmp_path):
    """Files and builders' leftovers unused for more than UNUSED_DAYS go, whatever version made them; those used
    since, of another version too, and the compiler slots stay; a second pruning the same day starts nothing."""
    folder = tmp_path / "native"
    folder.mkdir()
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    old = [folder / "gravity_aaaaaaaa_0123456789abcdef.program", folder / f"gravity_program_0123456789abcdef{suffix}",
           folder / "gravity_program_0123456789abcdef.c", folder / "gravity_program_0123456789abcdef.lock",
           folder / "tmp_scratch_of_a_killed_builder"]
    recent = [folder / "gravity_bbbbbbbb_0123456789abcdef.program",
              folder / f"gravity_program_fedcba9876543210{suffix}"]
    for path in old + recent:
        path.write_text("")
    old[-1].unlink()
    old[-1].mkdir()
    (old[-1] / "module.so").write_text("")
    (folder / "compilers").mkdir()
    (folder / "compilers" / "0").write_text("")
    age(old + [old[-1] / "module.so", folder / "compilers", folder / "compilers" / "0"], _native.UNUSED_DAYS + 1)
    age(recent, _native.UNUSED_DAYS - 1)

    pruner = _native.start_pruning(str(folder))
    assert pruner is not None and waited_for(pruner) and pruner.failure is None, pruner.failure
    assert [path.name for path in old if path.exists()] == []
    assert [path.name for path in recent if not path.exists()] == []
    assert (folder / "compilers" / "0").exists()
    age(recent, _native.UNUSED_DAYS + 1)
    assert _native.start_pruning(str(folder)) is None  # pruned today already
    assert all(path.exists() for path in recent)


def test_the_builders_pruning_removes_numba_kernel_folders_nobody_used_for_unused_days(tmp_path):
    """One rule for the whole cache: numba's kernel folders (one per version of the kernel sources, ``numba/`` beside
    ``native/``) that no process used for UNUSED_DAYS go in the C cache's pruning; one used since (its process marks
    it, :func:`rne_dynamics._compile.mark_used`) stays, whatever is inside (before, only ``rne-dynamics compile
    --generic`` removed them: a development machine held 366, 449 MB)."""
    (tmp_path / "native").mkdir()
    kernels = tmp_path / "numba"
    old, recent = kernels / "kernels-0123456789abcdef", kernels / "kernels-fedcba9876543210"
    for folder in old, recent:
        (folder / "algorithms").mkdir(parents=True)
        (folder / "algorithms" / "rnea.kernel-1.py311.nbi").write_bytes(b"index")
        age([folder / "algorithms" / "rnea.kernel-1.py311.nbi", folder / "algorithms"], _native.UNUSED_DAYS + 1)
    age([old], _native.UNUSED_DAYS + 1)
    age([recent], _native.UNUSED_DAYS - 1)
    pruner = _native.start_pruning(str(tmp_path / "native"))
    assert pruner is not None and waited_for(pruner) and pruner.failure is None, pruner.failure
    assert [path.name for path in kernels.iterdir()] == [recent.name]
    assert (recent / "algorithms" / "rnea.kernel-1.py311.nbi").read_bytes() == b"index"


def test_compile_builds_and_waits_for_the_bundled_arms_machine_code(tmp_path, monkeypatch):
    """``rne-dynamics compile`` waits for each call's machine code and says "ready" (before, with the written
    Python gone, it read a build under way as "not written out" and ended before any module was in)."""
    from rne_dynamics.algorithms import driver
    from rne_dynamics.tools import precompile
    monkeypatch.setenv("RNE_DYNAMICS_CACHE", str(tmp_path))
    monkeypatch.setattr(driver, "ALGORITHMS", [gravity.GRAVITY])
    monkeypatch.setattr(precompile, "compile_checks", lambda *_: None)  # (numba's argument checks: another test's)
    lines = []
    assert precompile.run(out=lines.append) == 0
    calls = [line for line in lines if gravity.GRAVITY.name in line]
    assert len(calls) == 2 and all(" ready (" in line for line in calls), lines
    assert len(list((tmp_path / "native").glob("*.program"))) == 2  # fixed and floating base, indexed
