"""rne_dynamics: rigid-body dynamics of URDF robots by the recursive Newton-Euler family of algorithms.

Conventions (SI units, ``[f; tau]`` wrenches, frames and signs) are those of the package's contract; see README.
"""
from .algorithms.aba import ForwardDynamicsResult, forward_dynamics
from .algorithms.coriolis import coriolis_matrix
from .algorithms.crba import mass_matrix
from .algorithms.derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives, joint_wrench_derivatives
from .model.dh import load_dh
from .errors import DHError, ModelError, ModelWarning, SingularMassMatrixError, StateError, URDFError
from .algorithms.gravity import bias_torques, gravity_torques
from .model.robot import JointInfo, Robot
from .algorithms.regressor import BaseParameters, base_parameters, inertial_parameters, joint_torque_regressor
from .algorithms.rnea import InverseDynamicsResult, inverse_dynamics
from .algorithms.simulate import Trajectory, simulate, step
from .algorithms.torque_rate import torque_rate
from .model.urdf import load_urdf

__all__ = [
    "DHError", "InverseDynamicsResult", "JointInfo", "ModelError", "ModelWarning", "Robot",
    "SingularMassMatrixError", "StateError", "URDFError", "inverse_dynamics", "load_dh", "load_urdf",
    "BaseParameters", "base_parameters", "forward_dynamics_derivatives", "inertial_parameters",
    "inverse_dynamics_derivatives", "joint_torque_regressor", "joint_wrench_derivatives", "torque_rate",
    "ForwardDynamicsResult", "Trajectory", "bias_torques", "coriolis_matrix", "forward_dynamics", "gravity_torques",
    "mass_matrix", "simulate", "step",
]
__version__ = "0.1.0"
