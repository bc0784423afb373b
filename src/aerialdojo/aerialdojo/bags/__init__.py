"""rosbag2 (MCAP) writing and reading through rosbags."""
