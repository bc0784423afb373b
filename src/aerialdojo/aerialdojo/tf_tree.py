"""The tf tree of a bridged agent, as plain transforms (REP-103, REP-105).

``map -> <agent>/odom -> <agent>/base_link -> <agent>/<view>_optical_frame``: the odometry frame
is where the agent started the episode (the simulator does not drift, so ``map -> odom`` only
changes at a reset), ``base_link`` is the body (x forward, y left, z up) and each optical frame
is a camera as images see it (x right, y down, z forward). The bridge publishes the first two
on ``/tf`` with every observation and the camera mounts once on ``/tf_static``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.spatial.transform import Rotation

from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec

MAP_FRAME = "map"

#: The optical frame's axes (x right, y down, z forward) in the camera frame (x forward,
#: y left, z up), as columns.
OPTICAL_AXES_IN_CAMERA = np.array(((0.0, 0.0, 1.0), (-1.0, 0.0, 0.0), (0.0, -1.0, 0.0)))


def odom_frame(agent: str) -> str:
    return f"{agent}/odom"


def base_frame(agent: str) -> str:
    return f"{agent}/base_link"


def optical_frame(agent: str, view: str) -> str:
    return f"{agent}/{view}_optical_frame"


@dataclass(frozen=True)
class FrameTransform:
    """The pose of ``child`` in ``parent``: a point ``p`` in ``child`` is
    ``rotation @ p + translation`` in ``parent``.

    Attributes:
        parent: parent frame id.
        child: child frame id.
        translation: (x, y, z) in metres.
        rotation_xyzw: unit quaternion (x, y, z, w).
    """

    parent: str
    child: str
    translation: tuple[float, float, float]
    rotation_xyzw: tuple[float, float, float, float]

    @classmethod
    def of_pose(cls, parent: str, child: str, pose: Pose) -> FrameTransform:
        return cls(parent, child, (pose.x, pose.y, pose.z), pose.quaternion_xyzw())

    def matrix(self) -> np.ndarray:
        """The 4x4 homogeneous matrix from ``child`` to ``parent`` coordinates."""
        matrix = np.eye(4)
        matrix[:3, :3] = Rotation.from_quat(self.rotation_xyzw).as_matrix()
        matrix[:3, 3] = self.translation
        return matrix


def agent_transforms(agent: str, pose: Pose, episode_start: Pose) -> list[FrameTransform]:
    """``map -> odom`` (the episode's start pose) and ``odom -> base_link`` (the pose since)."""
    return [
        FrameTransform.of_pose(MAP_FRAME, odom_frame(agent), episode_start),
        FrameTransform.of_pose(
            odom_frame(agent), base_frame(agent), pose.relative_to(episode_start)
        ),
    ]


def camera_mount_transforms(agent: str, rig: Sequence[CameraSpec]) -> list[FrameTransform]:
    """``base_link -> <view>_optical_frame`` of every camera of ``rig``."""
    transforms = []
    for spec in rig:
        rotation = Rotation.from_matrix(spec.mount_rotation() @ OPTICAL_AXES_IN_CAMERA)
        x, y, z, w = (float(value) for value in rotation.as_quat())
        forward, left, up = spec.offset
        transforms.append(
            FrameTransform(
                base_frame(agent),
                optical_frame(agent, spec.name),
                (float(forward), float(left), float(up)),
                (x, y, z, w),
            )
        )
    return transforms
