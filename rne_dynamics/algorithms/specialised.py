"""``rd.specialised_data(robot)``: a ``Data`` whose calls run the robot's machine code from the first call on.

Every call runs the robot's written code by default (:mod:`~rne_dynamics.algorithms.written`) once its machine code
is built in the background (the generic kernel serves until then); this waits for the machine code of every
algorithm that can be written out (a second or two for an arm, the first time on a machine; milliseconds from the
cache after that).
"""
from .driver import ALGORITHMS
from .written import written


def specialised_data(robot):
    """A new ``robot.data()``, once every algorithm's machine code for ``robot`` is in use (or has failed to build:
    then the generic kernel serves)."""
    algorithms = [algorithm for algorithm in ALGORITHMS if not algorithm.extras]
    for algorithm in algorithms:  # each traced and its build started before the first wait: one compiler per core
        written(algorithm, robot)
    for algorithm in algorithms:
        written(algorithm, robot, wait=True)
    return robot.data()
