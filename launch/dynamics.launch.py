"""robot_state_publisher and the inverse_dynamics node on one robot, and optionally rviz showing the joint loads.

    ros2 launch rne_dynamics dynamics.launch.py robot:=/path/to/robot.urdf.xacro rviz:=true

``robot`` is a URDF or xacro file (expanded by xacro; ``xacro_args`` are passed on). robot_state_publisher publishes
it on the transient-local ``/robot_description`` topic, where the dynamics node reads it. Joint states come from the
robot's driver (or ``simulation.launch.py``).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import Command, FindExecutable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

SHARE = FindPackageShare("rne_dynamics")


def arguments():
    """The launch arguments both launch files take."""
    return [
        DeclareLaunchArgument("robot", default_value=PathJoinSubstitution([SHARE, "urdf", "rne_arm6.urdf"]),
                              description="URDF or xacro file of the robot"),
        DeclareLaunchArgument("xacro_args", default_value="", description="arguments for xacro, 'name:=value ...'"),
        DeclareLaunchArgument("params_file", default_value=PathJoinSubstitution([SHARE, "config", "rne_dynamics.yaml"]),
                              description="parameter file of the rne_dynamics nodes"),
        DeclareLaunchArgument("rviz", default_value="false", description="start rviz with the load displays"),
        DeclareLaunchArgument("rviz_config", default_value=PathJoinSubstitution([SHARE, "config", "rne_dynamics.rviz"]),
                              description="rviz configuration"),
    ]


def robot_description():
    """The robot's URDF text: the ``robot`` file through xacro (a plain URDF passes through unchanged)."""
    return ParameterValue(Command([FindExecutable(name="xacro"), " ", LaunchConfiguration("robot"), " ",
                                   LaunchConfiguration("xacro_args")]), value_type=str)


def nodes():
    """robot_state_publisher, the inverse dynamics node and (``rviz:=true``) rviz."""
    return [
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": robot_description()}]),
        Node(package="rne_dynamics", executable="inverse_dynamics_node", name="inverse_dynamics", output="screen",
             parameters=[LaunchConfiguration("params_file")]),
        Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
             arguments=["-d", LaunchConfiguration("rviz_config")], condition=IfCondition(LaunchConfiguration("rviz"))),
    ]


def generate_launch_description():
    return LaunchDescription(arguments() + nodes())
