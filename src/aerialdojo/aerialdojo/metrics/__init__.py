"""ROS-free metrics of the three benchmarks, as pure functions of recorded data."""
