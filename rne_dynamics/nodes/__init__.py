"""ROS 2 nodes of rne_dynamics: thin layers that turn messages into library calls and the results into messages.

``inverse_dynamics_node`` (joint states in; torques, gravity feedforward, joint wrenches, load markers out) and
``forward_dynamics_node`` (efforts in; accelerations out; optionally a light simulator publishing joint states).
Names and types follow the ROS 2 section of the package contract. The node modules need rclpy (the ``live``
command that runs them together is :mod:`rne_dynamics.tools.live_demo`).
"""
