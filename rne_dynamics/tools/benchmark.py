"""``rne-dynamics benchmark``: run the benchmark suite of a source checkout, ``benchmarks/bench_dynamics.py``."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "benchmarks", "bench_dynamics.py")


def run(argv=()):
    """Load the suite's script and call its ``main(argv)``; its exit code is the command's."""
    if not os.path.isfile(SCRIPT):
        raise FileNotFoundError(f"the benchmark suite {SCRIPT} is not installed; run it from a source checkout")
    spec = importlib.util.spec_from_file_location("bench_dynamics", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main(list(argv)) or 0
