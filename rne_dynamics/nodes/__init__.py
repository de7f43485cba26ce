"""ROS 2 nodes of rne_dynamics: thin layers that turn messages into library calls and the results into messages.

``inverse_dynamics_node`` (joint states in; torques, gravity feedforward, joint wrenches, load markers out) and
``forward_dynamics_node`` (efforts in; accelerations out; optionally a light simulator publishing joint states).
Names and types follow the ROS 2 section of the package contract. The node modules need rclpy; ``live_demo``
imports it only when run, to say so plainly where it is missing.
"""
