"""ROS-free agent policies."""
