"""rne_dynamics: rigid-body dynamics of URDF robots by the recursive Newton-Euler family of algorithms.

Conventions (SI units, ``[f; tau]`` wrenches, frames and signs) are those of the package's contract; see README.
"""
from .dh import load_dh
from .errors import DHError, ModelError, ModelWarning, SingularMassMatrixError, StateError, URDFError
from .model import JointInfo, Robot
from .rnea import InverseDynamicsResult, inverse_dynamics
from .urdf import load_urdf

__all__ = [
    "DHError", "InverseDynamicsResult", "JointInfo", "ModelError", "ModelWarning", "Robot",
    "SingularMassMatrixError", "StateError", "URDFError", "inverse_dynamics", "load_dh", "load_urdf",
]
__version__ = "0.1.0"
