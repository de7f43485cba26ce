"""The bundled rviz configurations are YAML whose displays read what the nodes publish: every ``/inverse_dynamics``
topic a display names is published by a real inverse_dynamics node on the robot the configuration is for, with the
type the display reads; the joint torques appear in rviz2's Effort display (Iron and newer) on ``~/torques``."""
import os

import pytest
import yaml

# first: it skips the module where rclpy is missing
from ros_harness import Harness

import rne_dynamics as rd
from rne_dynamics.nodes.inverse_dynamics_node import InverseDynamicsNode

CONFIG_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "config")
#: The message type each display class reads.
DISPLAY_TYPES = {"rviz_default_plugins/Wrench": "geometry_msgs/msg/WrenchStamped",
                 "rviz_default_plugins/MarkerArray": "visualization_msgs/msg/MarkerArray",
                 "rviz_default_plugins/Effort": "sensor_msgs/msg/JointState",
                 "rviz_default_plugins/PointStamped": "geometry_msgs/msg/PointStamped",
                 "rviz_default_plugins/Odometry": "nav_msgs/msg/Odometry"}
#: Each configuration and the node it is made for.
CONFIGURATIONS = {"rne_dynamics.rviz": {"robot_description": rd.bundled_robot_path()},
                  "mobile_base.rviz": {"robot_description": rd.bundled_robot_path("rne_mobile_manipulator"),
                                       "base": "odometry"}}


def displays(name):
    """Every display of a configuration, those inside groups included."""
    with open(os.path.join(CONFIG_DIR, name), encoding="utf-8") as stream:
        manager = yaml.safe_load(stream)["Visualization Manager"]
    return [inner for display in manager["Displays"] for inner in display.get("Displays", [display])]


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_displays_read_what_the_node_publishes(name):
    shown = displays(name)
    [effort] = [d for d in shown if d["Class"] == "rviz_default_plugins/Effort"]
    assert effort["Topic"]["Value"] == "/inverse_dynamics/torques" and effort["Enabled"]
    assert effort["Robot Description"] == "/robot_description"  # the joints and effort limits it draws against
    assert "Iron" in effort["Name"]
    harness = Harness(InverseDynamicsNode, **CONFIGURATIONS[name])
    try:
        published = dict(harness.node.get_publisher_names_and_types_by_node("inverse_dynamics", "/"))
    finally:
        harness.close()
    ours = [d for d in shown if "Topic" in d and d["Topic"]["Value"].startswith("/inverse_dynamics/")]
    assert len(ours) >= 3
    for display in ours:
        topic = display["Topic"]["Value"]
        assert topic in published, f"{name}: '{display['Name']}' reads {topic}, which the node does not publish"
        assert published[topic] == [DISPLAY_TYPES[display["Class"]]], (topic, published[topic])
