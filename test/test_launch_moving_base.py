"""mobile_base.launch.py (where launch_ros imports): its arguments, and the inverse node set to ``base: odometry``
between robot_state_publisher and rviz."""
from test_launch import declared_arguments, launch_description, nodes


def test_mobile_base_launch_wires_the_base_topics():
    description = launch_description("mobile_base.launch.py")
    assert {"robot", "params_file", "rviz", "odometry", "imu", "base_acceleration_source"} <= declared_arguments(
        description)
    assert nodes(description) == nodes(launch_description("dynamics.launch.py"))


def test_mobile_base_rviz_config_shows_the_base_outputs():
    import os

    import yaml
    with open(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config",
                           "mobile_base.rviz")) as stream:
        manager = yaml.safe_load(stream)["Visualization Manager"]
    topics = {d["Class"]: d["Topic"]["Value"] for d in manager["Displays"] if "Topic" in d}
    assert topics["rviz_default_plugins/PointStamped"] == "/inverse_dynamics/center_of_mass"
    assert topics["rviz_default_plugins/Odometry"] == "/odom"
    assert "/inverse_dynamics/base_wrench" in [d["Topic"]["Value"] for d in manager["Displays"]
                                               if d["Class"] == "rviz_default_plugins/Wrench"]
    assert manager["Global Options"]["Fixed Frame"] == "odom"
