"""dynamics.launch.py plus the forward_dynamics node as a light simulator: no robot or driver needed.

    ros2 launch rne_dynamics simulation.launch.py rviz:=true

The simulator integrates the robot under gravity and publishes ``/joint_states``; robot_state_publisher turns them
into TF and the inverse_dynamics node into torques, wrenches and load markers. With ``gravity_compensation:=true``
(the default) the simulator's effort command is the inverse dynamics node's ``~/gravity_torques``: the robot holds
its pose; with ``false`` it takes ``/forward_dynamics/effort_command`` and, without one, falls under gravity.
The simulated drives have some rotor inertia and viscous friction (:data:`SIMULATED_DRIVES`, on top of the
parameter file), so that the velocity picked up in the first steps, before the first command arrives, dies out.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition, UnlessCondition
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from rne_dynamics.launch_files import sibling_launch_file


SIMULATED_DRIVES = {"armature": [0.1], "viscous_friction": [2.0]}  # kg m^2 and N m s/rad, every joint


def simulator(condition, remappings):
    return Node(package="rne_dynamics", executable="forward_dynamics_node", name="forward_dynamics",
                output="screen", remappings=remappings, condition=condition,
                parameters=[LaunchConfiguration("params_file"), {"simulate": True, **SIMULATED_DRIVES}])


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
