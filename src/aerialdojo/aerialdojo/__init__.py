"""aerialdojo: a ROS 2 harness for aerial and air-ground object-goal search benchmarks."""

__version__ = "0.1.0"
