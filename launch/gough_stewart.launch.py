"""The bundled Gough-Stewart platform live: the demo sways the platform, the inverse_dynamics node (with the loop
file) solves the passive joints and gives the leg forces, robot_state_publisher draws it from the node's
``~/torques`` (it carries every joint's solved position) and, with ``rviz:=true``, rviz shows the leg loads and the
cut forces (``~/load_markers``).

    ros2 launch rne_dynamics gough_stewart.launch.py rviz:=true
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

SHARE = FindPackageShare("rne_dynamics")
URDF = PathJoinSubstitution([SHARE, "urdf", "gough_stewart.urdf"])
LOOPS = PathJoinSubstitution([SHARE, "urdf", "gough_stewart_loops.yaml"])


def generate_launch_description():
    with open_urdf() as stream:
        description = stream.read()
    return LaunchDescription([
        DeclareLaunchArgument("rviz", default_value="false", description="start rviz with the load displays"),
        DeclareLaunchArgument("rviz_config", default_value=PathJoinSubstitution([SHARE, "config", "rne_dynamics.rviz"]),
                              description="rviz configuration"),
        Node(package="robot_state_publisher", executable="robot_state_publisher", output="screen",
             parameters=[{"robot_description": description}],
             remappings=[("/joint_states", "/inverse_dynamics/torques")]),
        Node(package="rne_dynamics", executable="inverse_dynamics_node", name="inverse_dynamics", output="screen",
             parameters=[{"robot_description": URDF, "loops_file": LOOPS}]),
        Node(package="rne_dynamics", executable="gough_stewart_demo", name="gough_stewart_demo", output="screen"),
        Node(package="rviz2", executable="rviz2", name="rviz2", output="log",
             arguments=["-d", LaunchConfiguration("rviz_config"), "-f", "base"],
             condition=IfCondition(LaunchConfiguration("rviz"))),
    ])


def open_urdf():
    """The bundled URDF (robot_state_publisher takes the text, not a path)."""
    from rne_dynamics.robots import GOUGH_STEWART
    return open(GOUGH_STEWART, encoding="utf-8")
