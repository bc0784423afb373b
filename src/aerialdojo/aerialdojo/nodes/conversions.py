"""Conversions between ROS messages and aerialdojo's ROS-free types, in one place."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
from aerialdojo_interfaces.msg import ActionSpec, AgosTurn, Candidate, GoalSpec, TaskSpec
from aerialdojo_interfaces.msg import SpawnedObject as SpawnedObjectMsg
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Point32, Polygon, TransformStamped
from geometry_msgs.msg import Pose as PoseMsg
from PIL import Image as PILImage
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Header

from aerialdojo.agents.observation import GoalDescription
from aerialdojo.agos.vocabulary import STATUS_ACTIVE, STATUS_CONFIRMED
from aerialdojo.geometry import Pose, yaw_from_quaternion
from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.images import array_to_image
from aerialdojo.protocols.referee import HandoffCandidate, Turn
from aerialdojo.protocols.task import TaskDescription
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.spawns import SpawnedObject
from aerialdojo.tf_tree import FrameTransform


def pose_msg(pose: Pose) -> PoseMsg:
    """geometry_msgs/Pose of a 4-DoF pose."""
    msg = PoseMsg()
    msg.position.x, msg.position.y, msg.position.z = pose.x, pose.y, pose.z
    qx, qy, qz, qw = pose.quaternion_xyzw()
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = qx, qy, qz, qw
    return msg


def spawned_object_msg(spawn: SpawnedObject) -> SpawnedObjectMsg:
    """aerialdojo_interfaces/SpawnedObject of an episode's spawned object."""
    return SpawnedObjectMsg(
        object_id=spawn.object_id,
        blueprint=spawn.blueprint,
        pose=pose_msg(spawn.pose),
        attribute_names=[name for name, _ in spawn.attributes],
        attribute_values=[value for _, value in spawn.attributes],
        size=list(spawn.size),
    )


def spawned_object_from_msg(msg: SpawnedObjectMsg) -> SpawnedObject:
    """The spawned object of a message.

    Raises:
        ValueError: attribute names and values of different lengths.
    """
    return SpawnedObject(
        object_id=msg.object_id,
        blueprint=msg.blueprint,
        pose=pose_from_msg(msg.pose),
        attributes=tuple(zip(msg.attribute_names, msg.attribute_values, strict=True)),
        size=(float(msg.size[0]), float(msg.size[1]), float(msg.size[2])),
    )


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


def stamped_camera_info(calibration: CameraInfo, header: Header) -> CameraInfo:
    """``calibration`` (a ``camera_info_msg``) under ``header``, for a camera's every frame.

    A shallow copy: it shares the calibration's arrays, which nothing changes once published.
    A fresh ``camera_info_msg`` per frame cost the bridge's render thread about 0.1 ms a view
    (the intrinsics in numpy, the lists, the generated setters' copies); this about a fifth.
    """
    info = copy.copy(calibration)
    info.header = header
    return info


def intrinsics_from_msg(msg: CameraInfo) -> np.ndarray:
    """3x3 K of a sensor_msgs/CameraInfo."""
    return np.array(msg.k, dtype=np.float64).reshape(3, 3)


def _rgb_image(path: Path) -> object:
    with PILImage.open(path) as picture:
        pixels = np.asarray(picture.convert("RGB"))
    return array_to_image(pixels, "rgb8", Header(frame_id="reference"))


_CANDIDATE_STATUS = {STATUS_ACTIVE: Candidate.ACTIVE, STATUS_CONFIRMED: Candidate.CONFIRMED}


def candidate_msg(candidate: HandoffCandidate, episode_id: str, header: Header) -> Candidate:
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


def turn_msg(turn: Turn, episode_id: str, header: Header) -> AgosTurn:
    """aerialdojo_interfaces/AgosTurn of the next turn of ``episode_id``."""
    position = turn.teammate_position
    teammate = [] if position is None else [Point(x=position[0], y=position[1], z=position[2])]
    return AgosTurn(
        header=header,
        episode_id=episode_id,
        agent=turn.agent,
        decision=turn.decision,
        budget=turn.budget,
        candidate_id=turn.candidate_id,
        candidates=turn.candidates,
        messages=turn.messages,
        teammate_position=teammate,
    )


def task_spec_msg(task: TaskDescription, header: Header) -> TaskSpec:
    """The ``TaskSpec`` of an agent-visible task description (any benchmark)."""
    goal = GoalSpec(
        object_name=task.object_name,
        landmark_name=task.landmark_name,
        direction=task.direction,
        representation=GoalSpec.REPRESENTATION_IMAGE
        if task.image_goal
        else GoalSpec.REPRESENTATION_TEXT,
        description=task.description,
        reference_images=[_rgb_image(path) for path in task.reference_images],
    )
    return TaskSpec(
        header=header,
        episode_id=task.episode_id,
        benchmark=task.benchmark,
        scene=task.scene,
        setting=task.setting,
        goal=goal,
        agents=list(task.agents),
        actions=[
            ActionSpec(
                agent=action.agent,
                name=action.name,
                magnitudes=list(action.magnitudes),
                unit=action.unit,
                takes_argument=action.takes_argument,
                max_uses=action.max_uses,
            )
            for action in task.actions
        ],
        action_budget=task.action_budget,
        success_radius_m=task.success_radius_m,
        global_localization=task.global_localization,
        views=list(task.views),
        odometry=task.odometry,
        mode=task.mode,
        map_image=array_to_image(task.map_image, "rgb8", Header(frame_id="map"))
        if task.map_image is not None
        else Image(),
    )


def goal_description(
    task: TaskSpec, views: tuple[str, ...] = (), *, odometry: bool = False
) -> GoalDescription:
    """What a ``Policy`` is told of ``task``: its goal, budget and radius, and the views and
    odometry the agent node gives it."""
    goal = task.goal
    return GoalDescription(
        episode_id=task.episode_id,
        object_name=goal.object_name,
        landmark_name=goal.landmark_name,
        direction=goal.direction,
        description=goal.description,
        reference_images=[image_to_array(image).copy() for image in goal.reference_images],
        action_budget=int(task.action_budget),
        success_radius_m=float(task.success_radius_m),
        views=views,
        odometry=odometry,
    )
