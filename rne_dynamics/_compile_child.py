"""The background process of :mod:`rne_dynamics._compile`: import the package, find the dispatcher, compile the
signature into numba's cache. ``python -m rne_dynamics._compile_child MODULE FUNCTION ARGUMENT SIGNATURE``:
``MODULE.FUNCTION(ARGUMENT)`` is the dispatcher, ``SIGNATURE`` its argument types, pickled, in hexadecimal."""
import importlib
import os
import pickle
import sys
import threading
import time


def end_with(parent):
    """A caller that ends, or is killed, takes its compile with it."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


if __name__ == "__main__":
    os.nice(10)  # after the callers' work
    threading.Thread(target=end_with, args=(os.getppid(),), daemon=True).start()
    module, function, argument, signature = sys.argv[1:]
    dispatcher = getattr(importlib.import_module(module), function)(argument)
    dispatcher.compile(pickle.loads(bytes.fromhex(signature)))
