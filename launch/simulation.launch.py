"""dynamics.launch.py plus the forward_dynamics node as a light simulator: no robot or driver needed.

    ros2 launch rne_dynamics simulation.launch.py rviz:=true

The simulator integrates the robot under gravity and publishes ``/joint_states``; robot_state_publisher turns them
into TF and the inverse_dynamics node into torques, wrenches and load markers. With ``gravity_compensation:=true``
(the default) the simulator's effort command is the inverse dynamics node's ``~/gravity_torques``: the robot holds
its pose; with ``false`` it takes ``/forward_dynamics/effort_command``. Either way it holds its initial pose (at rest,
publishing) until its first command arrives (``hold_until_command``), however late the other node gets its model;
then, without gravity compensation, it falls under gravity and the commands. The simulated drives have some rotor
inertia and viscous friction (:data:`rne_dynamics.launch_files.SIMULATOR_PARAMETERS`, on top of the parameter file).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from rne_dynamics.launch_files import SIMULATOR_PARAMETERS, sibling_launch_file


def simulator(condition, remappings):
    return Node(package="rne_dynamics", executable="forward_dynamics_node", name="forward_dynamics",
                output="screen", remappings=remappings, condition=condition,
                parameters=[LaunchConfiguration("params_file"), SIMULATOR_PARAMETERS])


def generate_launch_description():
    dynamics = sibling_launch_file(__file__)
    compensate = LaunchConfiguration("gravity_compensation")
    return LaunchDescription(dynamics.arguments() + [
        DeclareLaunchArgument("gravity_compensation", default_value="true",
                              description="drive the simulator with the inverse dynamics node's gravity torques"),
    ] + dynamics.nodes() + [
        simulator(IfCondition(compensate), [("~/effort_command", "/inverse_dynamics/gravity_torques")]),
        simulator(UnlessCondition(compensate), []),
    ])
