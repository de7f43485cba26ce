"""dynamics.launch.py for a robot on a moving base: the inverse_dynamics node with ``base: odometry`` reading the
base's odometry and IMU topics.

    ros2 launch rne_dynamics mobile_base.launch.py odometry:=/odom imu:=/imu/data rviz:=true

``robot`` defaults to the bundled mobile manipulator (the rne_arm6 arm on a wheeled platform); the node loads it with
a floating base whose state comes from ``odometry`` (``nav_msgs/Odometry``, child frame the base link) and ``imu``
(``sensor_msgs/Imu`` in the base link's frame), or, with ``base_acceleration_source:=differentiate``, from the
odometry alone. It publishes the joint torques, ``~/base_wrench`` (the load on the mounting, base frame) and
``~/center_of_mass``.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node

from rne_dynamics.launch_files import sibling_launch_file


def generate_launch_description():
    dynamics = sibling_launch_file(__file__)
    arguments = [a for a in dynamics.arguments() if a.name not in ("robot", "rviz_config")] + [
        DeclareLaunchArgument("robot", default_value=PathJoinSubstitution([dynamics.SHARE, "urdf",
                                                                           "rne_mobile_manipulator.urdf"]),
                              description="URDF or xacro file of the robot; its root link is the moving base"),
        DeclareLaunchArgument("rviz_config", default_value=PathJoinSubstitution([dynamics.SHARE, "config",
                                                                                 "mobile_base.rviz"]),
                              description="rviz configuration (the joint loads, base wrench, centre of mass)"),
        DeclareLaunchArgument("odometry", default_value="/odom", description="nav_msgs/Odometry of the base"),
        DeclareLaunchArgument("imu", default_value="/imu", description="sensor_msgs/Imu on the base"),
        DeclareLaunchArgument("base_acceleration_source", default_value="imu",
                              description="imu, or differentiate (the odometry twist)"),
    ]
    nodes = [node for node in dynamics.nodes() if node.node_executable != "inverse_dynamics_node"]
    inverse = Node(package="rne_dynamics", executable="inverse_dynamics_node", name="inverse_dynamics", output="screen",
                   parameters=[LaunchConfiguration("params_file"), {
                       "base": "odometry",
                       "base_acceleration_source": LaunchConfiguration("base_acceleration_source")}],
                   remappings=[("~/base_odometry", LaunchConfiguration("odometry")),
                               ("~/base_imu", LaunchConfiguration("imu"))])
    return LaunchDescription(arguments + nodes[:1] + [inverse] + nodes[1:])
