"""``/tf`` carries the distribution's ``tf2_msgs/msg/TFMessage``: on the pip route the workspace
builds a stand-in (compat/tf2_msgs), which must hash like the real one, or rviz and tf2_ros
on a ROS 2 install would refuse to match it."""

from __future__ import annotations

import json
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from rosbags.typesys import Stores, get_typestore


def test_tf_message_has_the_type_hash_of_ros2_jazzy() -> None:
    description = Path(get_package_share_directory("tf2_msgs")) / "msg" / "TFMessage.json"
    hashes = json.loads(description.read_text())["type_hashes"]
    built = next(h["hash_string"] for h in hashes if h["type_name"] == "tf2_msgs/msg/TFMessage")
    assert built == get_typestore(Stores.ROS2_JAZZY).hash_rihs01("tf2_msgs/msg/TFMessage")
