"""Test set-up: keep DDS traffic of the ROS tests on this machine, in a domain of the test run's own."""
import os
import sys

os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
os.environ.setdefault("ROS_DOMAIN_ID", str(40 + os.getpid() % 50))
sys.path.insert(0, os.path.dirname(__file__))
