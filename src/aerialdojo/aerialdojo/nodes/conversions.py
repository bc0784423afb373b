"""Conversions between ROS messages and aerialdojo's ROS-free types, in one place."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from aerialdojo_interfaces.msg import ActionSpec, Candidate, GoalSpec, TaskSpec
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Point32, Polygon, TransformStamped
from geometry_msgs.msg import Pose as PoseMsg
from PIL import Image as PILImage
from sensor_msgs.msg import CameraInfo
from std_msgs.msg import Header

from aerialdojo.actions import AERIALDOJO_ACTIONS
from aerialdojo.agos.episodes import AgosEpisode, task_text
from aerialdojo.agos.vocabulary import (
    ARGUMENT_ACTIONS,
    STATUS_ACTIVE,
    STATUS_CONFIRMED,
    action_set,
)
from aerialdojo.geometry import Pose, yaw_from_quaternion
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.tasks.episode import REPRESENTATION_IMAGE, Episode
from aerialdojo.tf_tree import FrameTransform
from aerialdojo.transport import array_to_image

if TYPE_CHECKING:
    from aerialdojo.agos.protocol import CandidateRecord


def pose_msg(pose: Pose) -> PoseMsg:
    """geometry_msgs/Pose of a 4-DoF pose."""
    msg = PoseMsg()
    msg.position.x, msg.position.y, msg.position.z = pose.x, pose.y, pose.z
    qx, qy, qz, qw = pose.quaternion_xyzw()
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = qx, qy, qz, qw
    return msg


def transform_msg(transform: FrameTransform, stamp: Time) -> TransformStamped:
    """geometry_msgs/TransformStamped of a tf edge at ``stamp``."""
    msg = TransformStamped(header=Header(stamp=stamp, frame_id=transform.parent))
    msg.child_frame_id = transform.child
    t, q = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = transform.translation
    q.x, q.y, q.z, q.w = transform.rotation_xyzw
    return msg


def pose_from_msg(msg: PoseMsg) -> Pose:
    """4-DoF pose of a geometry_msgs/Pose (roll and pitch are dropped; an all-zero
    quaternion, the message default, reads as yaw 0)."""
    q = msg.orientation
    yaw = (
        0.0
        if (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 0.0)
        else yaw_from_quaternion(q.x, q.y, q.z, q.w)
    )
    return Pose(msg.position.x, msg.position.y, msg.position.z, yaw)


def camera_info_msg(spec: CameraSpec, frame_id: str) -> CameraInfo:
    """sensor_msgs/CameraInfo of an ideal pinhole camera."""
    k = spec.intrinsics()
    projection = np.zeros((3, 4))
    projection[:, :3] = k
    return CameraInfo(
        header=Header(frame_id=frame_id),
        width=spec.width,
        height=spec.height,
        distortion_model="plumb_bob",
        d=[0.0] * 5,
        k=k.flatten().tolist(),
        r=np.eye(3).flatten().tolist(),
        p=projection.flatten().tolist(),
    )


def intrinsics_from_msg(msg: CameraInfo) -> np.ndarray:
    """3x3 K of a sensor_msgs/CameraInfo."""
    return np.array(msg.k, dtype=np.float64).reshape(3, 3)


def _rgb_image(path: Path) -> object:
    with PILImage.open(path) as picture:
        pixels = np.asarray(picture.convert("RGB"))
    return array_to_image(pixels, "rgb8", Header(frame_id="reference"))


def agos_task_spec_msg(
    episode: AgosEpisode, reference_images: list[Path], header: Header, ablation: str
) -> TaskSpec:
    """The agent-visible task of an AGOS episode: the multi-view reference images, the town
    and region in the instruction text, each agent's actions under ``ablation``, the shared
    decision budget; never the target's identity or position."""
    goal = GoalSpec(
        object_name="vehicle",
        representation=GoalSpec.REPRESENTATION_IMAGE,
        description=task_text(episode),
        reference_images=[_rgb_image(path) for path in reference_images],
    )
    return TaskSpec(
        header=header,
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        goal=goal,
        agents=list(episode.agents),
        actions=[
            ActionSpec(agent=agent, name=name, takes_argument=name in ARGUMENT_ACTIONS)
            for agent in episode.agents
            for name in action_set(agent, ablation)
        ],
        action_budget=episode.action_budget,
        success_radius_m=episode.success_radius_m,
        global_localization=True,
    )


_CANDIDATE_STATUS = {STATUS_ACTIVE: Candidate.ACTIVE, STATUS_CONFIRMED: Candidate.CONFIRMED}


def candidate_msg(candidate: CandidateRecord, episode_id: str, header: Header) -> Candidate:
    """aerialdojo_interfaces/Candidate of a candidate in the coordination state of
    ``episode_id``."""
    x, y, z = candidate.center
    return Candidate(
        header=header,
        episode_id=episode_id,
        candidate_id=candidate.candidate_id,
        grid_cell=candidate.grid_cell,
        polygon=Polygon(points=[Point32(x=px, y=py, z=z) for px, py in candidate.polygon]),
        center=Point(x=x, y=y, z=z),
        status=_CANDIDATE_STATUS.get(candidate.status, Candidate.REJECTED),
    )


def task_spec_msg(episode: Episode, reference_image: Path | None, header: Header) -> TaskSpec:
    """The agent-visible task of ``episode``: goal, action set and budget, never the target's
    coordinates. ImageOGS agents get the reference image instead of the description."""
    is_image_goal = episode.goal.representation == REPRESENTATION_IMAGE
    goal = GoalSpec(
        object_name=episode.goal.object_name,
        landmark_name=episode.goal.landmark_name,
        direction=episode.goal.direction,
        representation=GoalSpec.REPRESENTATION_IMAGE
        if is_image_goal
        else GoalSpec.REPRESENTATION_TEXT,
        description="" if is_image_goal else episode.goal.description,
    )
    if is_image_goal:
        if reference_image is None:
            raise ValueError(
                f"episode {episode.episode_id}: ImageOGS goal without a reference image"
            )
        goal.reference_images = [_rgb_image(reference_image)]
    return TaskSpec(
        header=header,
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        goal=goal,
        agents=list(episode.agents),
        actions=[
            ActionSpec(
                agent=agent, name=kind.name, magnitudes=list(kind.magnitudes), unit=kind.unit
            )
            for agent in episode.agents
            for kind in AERIALDOJO_ACTIONS
        ],
        action_budget=episode.action_budget,
        success_radius_m=episode.success_radius_m,
        global_localization=False,
    )
