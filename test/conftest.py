"""Test set-up: keep DDS traffic of the ROS tests on this machine, in a domain of the test run's own; the ``--long``
profile."""
import os
import sys

import pytest

# One thread for numpy's linear algebra (OpenBLAS reads it as numpy loads: here, before a test imports numpy):
# OpenBLAS's threads spin for a core on a loaded 2-core machine (CI's, compiling in the background), which made a
# 360 x 48 SVD 50 times slower (48 ms against 1 ms) and excite's search 20 s instead of 1; the tests' matrices are
# small. (Subprocesses inherit it.)
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 50))
os.environ.setdefault("RNE_DYNAMICS_STRICT", "1")  # an engine that fails raises (rne_dynamics/_tuning.py)
sys.path.insert(0, os.path.dirname(__file__))

# Hypothesis budgets (test_fuzz.py): "ci", the default, runs in about a minute and draws the same examples on every
# run (derandomize: CI never flakes on a new example); "long" is a local hunt: pytest --hypothesis-profile=long.
from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=500, deadline=None, derandomize=True, print_blob=True)
settings.register_profile("long", max_examples=5000, deadline=None, print_blob=True)


def pytest_addoption(parser):
    parser.addoption("--long", action="store_true", default=False,
                     help="also run the checks marked long: the full-size versions of checks that the default run "
                          "makes at a smaller size (test/README.md)")


def pytest_configure(config):
    if not config.getoption("--hypothesis-profile", None):
        settings.load_profile("ci")
    config.addinivalue_line("markers", "long: a full-size check, run only by pytest --long (the default run has a "
                                       "smaller version of it)")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--long"):
        return
    skip = pytest.mark.skip(reason="a long check: pytest --long runs it")
    for item in items:
        if item.get_closest_marker("long") is not None:
            item.add_marker(skip)


@pytest.fixture(scope="session", autouse=True)
def every_background_compile_succeeds():
    """A kernel numba cannot compile still gives exact answers (its Python serves), so only this says so: the run
    fails on any background compile that failed."""
    yield
    from rne_dynamics import _compile, engine_report
    assert not _compile.failures, f"numba could not compile: {_compile.failures}"
    failed = {name: report["failures"] for name, report in engine_report().items() if report["failures"]}
    assert not failed, f"engines failed (a background build's failure raises only in its thread): {failed}"
