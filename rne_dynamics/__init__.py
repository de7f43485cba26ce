"""rne_dynamics: rigid-body dynamics of URDF robots by the recursive Newton-Euler family of algorithms.

Conventions (SI units, ``[f; tau]`` wrenches, frames and signs) are those of the package's contract; see README.
"""
from .aba import ForwardDynamicsResult, forward_dynamics
from .coriolis import coriolis_matrix
from .crba import mass_matrix
from .derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives, joint_wrench_derivatives
from .dh import load_dh
from .errors import DHError, ModelError, ModelWarning, SingularMassMatrixError, StateError, URDFError
from .gravity import bias_torques, gravity_torques
from .model import JointInfo, Robot
from .regressor import BaseParameters, base_parameters, inertial_parameters, joint_torque_regressor
from .rnea import InverseDynamicsResult, inverse_dynamics
from .simulate import Trajectory, simulate, step
from .torque_rate import torque_rate
from .urdf import load_urdf

__all__ = [
    "DHError", "InverseDynamicsResult", "JointInfo", "ModelError", "ModelWarning", "Robot",
    "SingularMassMatrixError", "StateError", "URDFError", "inverse_dynamics", "load_dh", "load_urdf",
    "BaseParameters", "base_parameters", "forward_dynamics_derivatives", "inertial_parameters",
    "inverse_dynamics_derivatives", "joint_torque_regressor", "joint_wrench_derivatives", "torque_rate",
    "ForwardDynamicsResult", "Trajectory", "bias_torques", "coriolis_matrix", "forward_dynamics", "gravity_torques",
    "mass_matrix", "simulate", "step",
]
__version__ = "0.1.0"
