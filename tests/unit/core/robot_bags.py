"""Bags as a real robot's ``ros2 bag record`` leaves them: standard message types only
(``nav_msgs/Odometry``, ``geometry_msgs/PoseStamped``, ``tf2_msgs/TFMessage``, ``std_msgs``),
the robot's own topic names, SQLite3 or MCAP storage, and no aerialdojo topic at all."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

TYPESTORE = get_typestore(Stores.ROS2_JAZZY)
_types = TYPESTORE.types


def _header(t_s: float, frame_id: str) -> Any:
    seconds = math.floor(t_s)
    stamp = _types["builtin_interfaces/msg/Time"](sec=seconds, nanosec=round((t_s - seconds) * 1e9))
    return _types["std_msgs/msg/Header"](stamp=stamp, frame_id=frame_id)


def _quaternion(yaw: float) -> Any:
    return _types["geometry_msgs/msg/Quaternion"](
        x=0.0, y=0.0, z=math.sin(yaw / 2.0), w=math.cos(yaw / 2.0)
    )


def _pose(position: tuple[float, float, float], yaw: float) -> Any:
    return _types["geometry_msgs/msg/Pose"](
        position=_types["geometry_msgs/msg/Point"](*position), orientation=_quaternion(yaw)
    )


def odometry(t_s: float, position: tuple[float, float, float], yaw: float) -> Any:
    covariance = np.zeros(36)
    zero = _types["geometry_msgs/msg/Vector3"](0.0, 0.0, 0.0)
    return _types["nav_msgs/msg/Odometry"](
        header=_header(t_s, "odom"),
        child_frame_id="base_link",
        pose=_types["geometry_msgs/msg/PoseWithCovariance"](
            pose=_pose(position, yaw), covariance=covariance
        ),
        twist=_types["geometry_msgs/msg/TwistWithCovariance"](
            twist=_types["geometry_msgs/msg/Twist"](linear=zero, angular=zero),
            covariance=covariance,
        ),
    )


def pose_stamped(t_s: float, position: tuple[float, float, float], yaw: float = 0.0) -> Any:
    return _types["geometry_msgs/msg/PoseStamped"](
        header=_header(t_s, "world"), pose=_pose(position, yaw)
    )


def tf_message(
    t_s: float, parent: str, child: str, position: tuple[float, float, float], yaw: float
) -> Any:
    transform = _types["geometry_msgs/msg/Transform"](
        translation=_types["geometry_msgs/msg/Vector3"](*position), rotation=_quaternion(yaw)
    )
    stamped = _types["geometry_msgs/msg/TransformStamped"](
        header=_header(t_s, parent), child_frame_id=child, transform=transform
    )
    return _types["tf2_msgs/msg/TFMessage"](transforms=[stamped])


def string(text: str) -> Any:
    return _types["std_msgs/msg/String"](data=text)


def boolean(value: bool) -> Any:
    return _types["std_msgs/msg/Bool"](data=value)


def write_robot_bag(
    path: Path, messages: list[tuple[float, str, str, Any]], *, storage: str = "mcap"
) -> Path:
    """A rosbag2 directory of ``(time_s, topic, msgtype, message)`` in time order, written as
    ``ros2 bag record`` would (receive time as the log time)."""
    plugin = {"mcap": StoragePlugin.MCAP, "sqlite3": StoragePlugin.SQLITE3}[storage]
    writer = Writer(path, version=9, storage_plugin=plugin)
    connections: dict[str, Any] = {}
    with writer:
        for t_s, topic, msgtype, message in sorted(messages, key=lambda item: item[0]):
            if topic not in connections:
                connections[topic] = writer.add_connection(topic, msgtype, typestore=TYPESTORE)
            writer.write(
                connections[topic], round(t_s * 1e9), TYPESTORE.serialize_cdr(message, msgtype)
            )
    return path
