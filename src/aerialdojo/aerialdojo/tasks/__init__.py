"""ROS-free task suites: the episode schema, loaders and task generation."""
