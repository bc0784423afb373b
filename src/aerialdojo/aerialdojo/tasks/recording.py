"""Multi-view RGB-D recordings along reference trajectories, as rosbag2 MCAP (AerialDojo-200K,
section 3.2).

One bag per navigation task, written with rosbags: no ROS installation needed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np
from rosbags.interfaces import Connection
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraFrame
from aerialdojo.tasks.episode import Episode

IMAGE_TYPE = "sensor_msgs/msg/Image"

#: Renders every view of a rig at a pose.
ViewRenderer = Callable[[Pose], Mapping[str, CameraFrame]]


def image_topic(agent: str, view: str, kind: str) -> str:
    """``/<agent>/camera/<view>/<kind>`` (kind ``image`` or ``depth``), as the bridge names them."""
    return f"/{agent}/camera/{view}/{kind}"


def record_reference(
    episode: Episode,
    render: ViewRenderer,
    bag_dir: Path,
    *,
    agent: str = "uav",
    seconds_per_step: float = 1.0,
) -> Path:
    """Record every view at every pose of an episode's reference trajectory.

    Pose q_k is stamped ``k * seconds_per_step`` seconds; RGB is ``rgb8`` on
    ``/<agent>/camera/<view>/image`` and depth ``32FC1`` metres on ``.../depth``, each in
    frame ``<view>_optical_frame``. Both twins of a task share the recording.

    Args:
        episode: the episode whose reference to record.
        render: renders the views at a pose.
        bag_dir: the bag directory to create (must not exist).
        agent: namespace of the topics.
        seconds_per_step: time between consecutive poses.

    Returns:
        ``bag_dir``.

    Raises:
        FileExistsError: ``bag_dir`` exists (rosbags never overwrites a bag).
    """
    typestore = get_typestore(Stores.ROS2_JAZZY)
    image = typestore.types[IMAGE_TYPE]
    header = typestore.types["std_msgs/msg/Header"]
    stamp = typestore.types["builtin_interfaces/msg/Time"]
    with Writer(bag_dir, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connections: dict[tuple[str, str], Connection] = {}
        for step, pose in enumerate(episode.reference.poses):
            nanoseconds = round(step * seconds_per_step * 1e9)
            when = stamp(sec=nanoseconds // 1_000_000_000, nanosec=nanoseconds % 1_000_000_000)
            for view, frame in render(pose).items():
                for kind, pixels, encoding in (
                    ("image", np.ascontiguousarray(frame.rgb, dtype=np.uint8), "rgb8"),
                    ("depth", np.ascontiguousarray(frame.depth, dtype=np.float32), "32FC1"),
                ):
                    topic = image_topic(agent, view, kind)
                    if (view, kind) not in connections:
                        connections[view, kind] = writer.add_connection(
                            topic, IMAGE_TYPE, typestore=typestore
                        )
                    message = image(
                        header=header(stamp=when, frame_id=f"{view}_optical_frame"),
                        height=pixels.shape[0],
                        width=pixels.shape[1],
                        encoding=encoding,
                        is_bigendian=0,
                        step=pixels.strides[0],
                        data=pixels.reshape(-1).view(np.uint8),
                    )
                    writer.write(
                        connections[view, kind],
                        nanoseconds,
                        typestore.serialize_cdr(message, IMAGE_TYPE),
                    )
    return bag_dir
