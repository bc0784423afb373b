"""From a scene's annotations and collision world to navigation tasks and their twin episodes.

A candidate pairs two distinct annotated objects of a scene: the agent starts at the first
one's anchor, facing away from it, and searches for the second (AerialDojo-200K, section 3.2).
Nothing here touches a simulator; the collision world is injected.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.actions import AERIALDOJO_ACTIONS, translational_length
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose, compass_direction, wrap_angle
from aerialdojo.sim.annotations import Landmark, SceneAnnotations, TargetObject
from aerialdojo.tasks.episode import (
    REPRESENTATION_IMAGE,
    REPRESENTATION_SEMANTIC,
    Episode,
    Goal,
    ReferencePath,
    make_episode_id,
)
from aerialdojo.tasks.planner import (
    CollisionWorld,
    KnownRays,
    PlannerConfig,
    direct_route,
    plan_actions,
)
from aerialdojo.tasks.serialization import written_pose, written_value
from aerialdojo.tasks.settings import (
    MAX_LENGTH_M,
    MIN_DETOUR_RATIO,
    MIN_EUCLIDEAN_M,
    Setting,
    filter_problems,
    setting_for_length,
)

#: Success radius of AerialDojo (AerialDojo-200K, section 3.2).
SUCCESS_RADIUS_M = 3.0


def longest_kept_length(magnitudes: Sequence[float]) -> float:
    """The longest reference length L the length filter (L < 100 m) keeps when L is a sum of
    the given translation magnitudes: the largest whole multiple of their common step below
    the cap (99 m for AerialDojo's 1, 2, 3 and 5 m), or the float just below the cap when
    they are not whole metres."""
    if all(float(magnitude).is_integer() for magnitude in magnitudes):
        step = math.gcd(*(int(magnitude) for magnitude in magnitudes))
        return float((math.ceil(MAX_LENGTH_M / step) - 1) * step)
    return math.nextafter(MAX_LENGTH_M, 0.0)


_LONGEST_KEPT_LENGTH_M = longest_kept_length(
    [magnitude for kind in AERIALDOJO_ACTIONS if kind.unit == "m" for magnitude in kind.magnitudes]
)


@dataclass(frozen=True, kw_only=True)
class NavigationTask:
    """A kept candidate: what both twin episodes share.

    Attributes:
        annotations: the scene's annotations.
        start_object: the object whose anchor is the start.
        target_object: the object to find.
        landmark: the target's nearest landmark.
        direction: compass direction of the target from the landmark.
        reference: the reference trajectory and its statistics, as a file stores them.
        setting: the setting its reference length falls into.
    """

    annotations: SceneAnnotations
    start_object: TargetObject
    target_object: TargetObject
    landmark: Landmark
    direction: str
    reference: ReferencePath
    setting: Setting


def start_pose_for(start_object: TargetObject) -> Pose:
    """S: the object's anchor position, with the anchor's yaw turned by 180 deg."""
    anchor = start_object.anchor
    return Pose(anchor.x, anchor.y, anchor.z, wrap_angle(anchor.yaw + math.pi))


def nearest_landmark(landmarks: tuple[Landmark, ...], target: TargetObject) -> Landmark:
    """The landmark horizontally nearest to the target's centroid (ties: first listed).

    Raises:
        ConfigError: ``landmarks`` is empty.
    """
    if not landmarks:
        raise ConfigError(f"object {target.object_id}: its scene has no landmark to refer to")
    return min(
        landmarks,
        key=lambda landmark: math.dist(landmark.position[:2], target.centroid[:2]),
    )


def plan_task(
    world: CollisionWorld,
    annotations: SceneAnnotations,
    start_object: TargetObject,
    target_object: TargetObject,
    *,
    config: PlannerConfig | None = None,
    known_rays: KnownRays | None = None,
) -> NavigationTask | None:
    """Plan the reference from one object's anchor to another's and apply the paper's filters.

    Pairs whose anchors are 3 m apart or less, or more than 99 m / 1.05 (94.29 m), cannot
    pass the filters (L < 100 m and L >= 1.05 d_E: L is a whole number of metres, so at
    most 99 m) and are rejected before planning; so are pairs whose ``direct_route`` is free
    and already within the detour ratio (near-straight whatever a search would add).

    Args:
        world: collision queries of the scene.
        annotations: the scene's annotations.
        start_object: the object the agent starts at.
        target_object: the object to find.
        config: planner parameters.
        known_rays: rays known from earlier searches in ``world`` (``plan_actions``).

    Returns:
        The task, or None if no reference was found or it fails the filters.

    Raises:
        ConfigError: the scene has no landmarks.
    """
    start = written_pose(start_pose_for(start_object))
    anchor = written_pose(target_object.anchor)
    euclidean = written_value(math.dist(start.position, anchor.position))
    if not MIN_EUCLIDEAN_M < euclidean < MAX_LENGTH_M:
        return None
    # From this far even the longest length the filters keep is a near-straight route: no
    # route they keep exists (the very test ``filter_problems`` makes, on that length).
    if _LONGEST_KEPT_LENGTH_M / euclidean < MIN_DETOUR_RATIO:
        return None
    bounds = (annotations.bounds_min, annotations.bounds_max)
    direct = direct_route(world, start, anchor.position, config=config, bounds=bounds)
    if direct.found and direct.length_m < MIN_DETOUR_RATIO * euclidean:
        return None
    plan = plan_actions(
        world, start, anchor.position, config=config, bounds=bounds, known_rays=known_rays
    )
    if not plan.found:
        return None
    poses = tuple(written_pose(pose) for pose in plan.poses)
    # From the actions, exactly: the written poses are rounded, and an agent that executes the
    # reference must travel exactly L (an oracle's SPL is 1).
    length = written_value(translational_length(plan.actions))
    setting = setting_for_length(length)
    if setting is None or filter_problems(length, euclidean):
        return None
    landmark = nearest_landmark(annotations.landmarks, target_object)
    return NavigationTask(
        annotations=annotations,
        start_object=start_object,
        target_object=target_object,
        landmark=landmark,
        direction=compass_direction(
            np.asarray(landmark.position), np.asarray(target_object.centroid)
        ),
        reference=ReferencePath(
            poses=poses,
            actions=plan.actions,
            length_m=length,
            euclidean_m=euclidean,
            detour_ratio=written_value(length / euclidean),
        ),
        setting=setting,
    )


def twin_episodes(
    task: NavigationTask, *, index: int, split: str, reference_image: str
) -> tuple[Episode, Episode]:
    """The SemanticOGS and ImageOGS episodes of a task; they differ only in representation.

    Args:
        task: the navigation task.
        index: the task's number within its scene and setting (in the episode ids).
        split: the task's split.
        reference_image: the ImageOGS reference image, relative to the suite file.
    """
    annotations, target = task.annotations, task.target_object
    episodes = []
    for representation, image in (
        (REPRESENTATION_SEMANTIC, ""),
        (REPRESENTATION_IMAGE, reference_image),
    ):
        episodes.append(
            Episode(
                episode_id=make_episode_id(
                    annotations.scene, task.setting.name, index, representation
                ),
                benchmark="aerialdojo",
                scene=annotations.scene,
                family=annotations.family,
                distribution=annotations.distribution,
                split=split,
                setting=task.setting.name,
                action_budget=task.setting.action_budget,
                start=task.reference.poses[0],
                start_object_id=task.start_object.object_id,
                goal=Goal(
                    object_name=target.name,
                    landmark_name=task.landmark.name,
                    direction=task.direction,
                    representation=representation,
                    description=target.description or target.name,
                    reference_image=image,
                ),
                target_object_id=target.object_id,
                target_anchor=written_pose(target.anchor),
                reference=task.reference,
                success_radius_m=SUCCESS_RADIUS_M,
            )
        )
    return episodes[0], episodes[1]
