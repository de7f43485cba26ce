"""rne_dynamics: rigid-body dynamics of URDF robots by the recursive Newton-Euler family of algorithms.

Conventions (SI units, ``[f; tau]`` wrenches, frames and signs) are in README; every public name below has a
docstring with its equations, shapes and units. Layers: ``model`` (spatial algebra, joints, the Robot and its Data,
readers), ``algorithms`` (one module each), ``planning`` (trajectory optimisation and retiming on the public
calls), ``tools`` (command line), ``nodes`` (ROS 2).
"""
from .algorithms.aba import ForwardDynamicsResult, forward_dynamics
from .algorithms.configuration import difference, integrate, neutral, normalize, random_configuration
from .algorithms.coriolis import coriolis_matrix
from .algorithms.crba import mass_matrix
from .algorithms.elastic import elastic_forward_dynamics, elastic_inverse_dynamics, spring_forces
from .algorithms.flexible import (FlexibleFeedforward, MotorLinkAccelerations, MotorLinkTrajectory,
                                  flexible_feedforward, flexible_forward_dynamics, flexible_simulate)
from .algorithms.derivatives import forward_dynamics_derivatives, inverse_dynamics_derivatives, joint_wrench_derivatives
from .algorithms.gravity import gravity_torques
from .algorithms.hybrid import HybridDynamicsResult, hybrid_dynamics
from .algorithms.identification import (FourierTrajectory, FrictionEstimate, Identification, PayloadEstimate,
                                         exciting_trajectory, identify, payload_regressor)
from .algorithms.loops import (ClosedLoopForwardDynamicsResult, ClosedLoopInverseDynamicsResult, ClosedLoopTrajectory,
                              ConstrainedDynamicsResult, LoopConstraints, actuation_jacobian, close_loops,
                              closed_loop_forward_dynamics, closed_loop_inverse_dynamics, closed_loop_state,
                              constrained_forward_dynamics, loop_constraints, mobility, platform_forward_dynamics,
                              platform_inverse_dynamics, simulate_closed_loop)
from .algorithms.observer import MomentumObserver
from .algorithms.kinematics import (CenterOfMass, center_of_mass, centroidal_momentum, centroidal_momentum_matrix,
                                    forward_kinematics, frame_acceleration, frame_jacobian, frame_placement,
                                    frame_velocity)
from .algorithms.moving_base import (FreeFloatingResult, MountedInverseDynamicsResult, free_floating_inverse_dynamics,
                                     mounted_inverse_dynamics)
from .algorithms.regressor import BaseParameters, base_parameters, inertial_parameters, joint_torque_regressor
from .algorithms.rnea import InverseDynamicsResult, bias_torques, inverse_dynamics
from .algorithms.simulate import Trajectory, simulate, step
from .algorithms.torque_acceleration import torque_acceleration
from .algorithms.torque_rate import torque_rate
from .errors import DHError, ModelError, ModelWarning, SingularMassMatrixError, StateError, URDFError
from .model.body import JointInfo
from .model.data import Data
from .model.dh import load_dh
from .model.drive import Transmission, load_drive
from .model.loops import LoopClosure, Loops
from .model.parallel import Mechanism, delta_robot, five_bar, four_bar, gough_stewart
from .model.robot import Robot
from .model.urdf import expand_xacro, load_urdf
from .robots import bundled_robot_path
from .planning import PlannedTrajectory, PlanningError, RetimedPath, TrajectoryProblem, plan, retime

__all__ = [
    # the model
    "Robot", "Data", "JointInfo", "load_urdf", "expand_xacro", "load_dh", "bundled_robot_path",
    # errors
    "DHError", "ModelError", "ModelWarning", "SingularMassMatrixError", "StateError", "URDFError",
    # dynamics
    "InverseDynamicsResult", "inverse_dynamics", "gravity_torques", "bias_torques", "mass_matrix", "coriolis_matrix",
    "ForwardDynamicsResult", "forward_dynamics", "inverse_dynamics_derivatives", "joint_wrench_derivatives",
    "forward_dynamics_derivatives", "torque_rate", "torque_acceleration", "joint_torque_regressor",
    "inertial_parameters",
    "BaseParameters", "base_parameters", "Trajectory", "simulate", "step", "MomentumObserver",
    # closed loops and parallel robots
    "Loops", "LoopClosure", "loop_constraints", "LoopConstraints", "close_loops", "actuation_jacobian",
    "closed_loop_state", "closed_loop_inverse_dynamics", "ClosedLoopInverseDynamicsResult",
    "closed_loop_forward_dynamics", "ClosedLoopForwardDynamicsResult", "constrained_forward_dynamics",
    "ConstrainedDynamicsResult", "simulate_closed_loop", "ClosedLoopTrajectory", "platform_inverse_dynamics",
    "platform_forward_dynamics", "mobility", "Mechanism", "four_bar", "five_bar", "delta_robot", "gough_stewart",
    # moving bases: hybrid dynamics and the models built on it
    "HybridDynamicsResult", "hybrid_dynamics", "FreeFloatingResult", "free_floating_inverse_dynamics",
    "MountedInverseDynamicsResult", "mounted_inverse_dynamics",
    # flexible joints: the drive layer, Khalil's lumped elasticity, the motor-link model
    "Transmission", "load_drive", "spring_forces", "elastic_forward_dynamics", "elastic_inverse_dynamics",
    "MotorLinkAccelerations", "flexible_forward_dynamics", "FlexibleFeedforward", "flexible_feedforward",
    "MotorLinkTrajectory", "flexible_simulate",
    # identification
    "identify", "Identification", "PayloadEstimate", "FrictionEstimate", "payload_regressor", "exciting_trajectory",
    "FourierTrajectory",
    # kinematics and the configuration space
    "forward_kinematics", "frame_placement", "frame_jacobian", "frame_velocity", "frame_acceleration",
    "CenterOfMass", "center_of_mass", "centroidal_momentum", "centroidal_momentum_matrix",
    "neutral", "integrate", "difference", "random_configuration", "normalize",
    # motion planning
    "plan", "TrajectoryProblem", "PlannedTrajectory", "PlanningError", "retime", "RetimedPath",
]
__version__ = "0.1.0"
