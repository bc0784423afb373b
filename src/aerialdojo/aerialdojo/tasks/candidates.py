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
    Bounds,
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


def plan_reference(
    world: CollisionWorld,
    start: Pose,
    anchor: Pose,
    *,
    bounds: Bounds | None,
    config: PlannerConfig | None = None,
    known_rays: KnownRays | None = None,
) -> ReferencePath | str:
    """Plan the reference from a start pose to a target anchor and apply the paper's filters.

    Pairs whose anchors are 3 m apart or less, or more than 99 m / 1.05 (94.29 m), cannot
    pass the filters (L < 100 m and L >= 1.05 d_E: L is a whole number of metres, so at
    most 99 m) and are rejected before planning; so are pairs whose ``direct_route`` is free
    and already within the detour ratio (near-straight whatever a search would add).

    Args:
        world: collision queries of the scene.
        start: the start pose, as a file stores it (``written_pose``).
        anchor: the target anchor, as a file stores it.
        bounds: (min, max) corners of the flyable region, or None.
        config: planner parameters.
        known_rays: rays known from earlier searches in ``world`` (``plan_actions``).

    Returns:
        The reference as a file stores it, or why there is none.
    """
    euclidean = written_value(math.dist(start.position, anchor.position))
    if not MIN_EUCLIDEAN_M < euclidean < MAX_LENGTH_M:
        return f"d_E={euclidean:g} m is outside ({MIN_EUCLIDEAN_M:g}, {MAX_LENGTH_M:g}) m"
    # From this far even the longest length the filters keep is a near-straight route: no
    # route they keep exists (the very test ``filter_problems`` makes, on that length).
    if _LONGEST_KEPT_LENGTH_M / euclidean < MIN_DETOUR_RATIO:
        return (
            f"d_E={euclidean:g} m: every route the length filter keeps "
            f"(L <= {_LONGEST_KEPT_LENGTH_M:g} m) is near-straight from this far"
        )
    direct = direct_route(world, start, anchor.position, config=config, bounds=bounds)
    if direct.found and direct.length_m < MIN_DETOUR_RATIO * euclidean:
        return (
            f"near-straight: a direct route of {direct.length_m:g} m is free, within the "
            f"detour ratio {MIN_DETOUR_RATIO:g} of d_E={euclidean:g} m"
        )
    plan = plan_actions(
        world, start, anchor.position, config=config, bounds=bounds, known_rays=known_rays
    )
    if not plan.found:
        return (
            "no collision-free route shorter than "
            f"{(config or PlannerConfig()).max_length_m:g} m found"
        )
    poses = tuple(written_pose(pose) for pose in plan.poses)
    # From the actions, exactly: the written poses are rounded, and an agent that executes the
    # reference must travel exactly L (an oracle's SPL is 1).
    length = written_value(translational_length(plan.actions))
    problems = filter_problems(length, euclidean)
    if setting_for_length(length) is None or problems:
        return "; ".join(problems) or f"L={length:g} m is in no setting"
    return ReferencePath(
        poses=poses,
        actions=plan.actions,
        length_m=length,
        euclidean_m=euclidean,
        detour_ratio=written_value(length / euclidean),
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
    """Plan the reference from one object's anchor to another's (``plan_reference``).

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
    reference = plan_reference(
        world,
        written_pose(start_pose_for(start_object)),
        written_pose(target_object.anchor),
        bounds=(annotations.bounds_min, annotations.bounds_max),
        config=config,
        known_rays=known_rays,
    )
    if isinstance(reference, str):
        return None
    setting = setting_for_length(reference.length_m)
    assert setting is not None  # plan_reference keeps only lengths inside a setting
    landmark = nearest_landmark(annotations.landmarks, target_object)
    return NavigationTask(
        annotations=annotations,
        start_object=start_object,
        target_object=target_object,
        landmark=landmark,
        direction=compass_direction(
            np.asarray(landmark.position), np.asarray(target_object.centroid)
        ),
        reference=reference,
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
    annotations = task.annotations
    return goal_twins(
        scene=annotations.scene,
        family=annotations.family,
        distribution=annotations.distribution,
        split=split,
        setting=task.setting,
        index=index,
        start_id=task.start_object.object_id,
        target=task.target_object,
        landmark=task.landmark,
        direction=task.direction,
        reference=task.reference,
        reference_image=reference_image,
    )


def goal_twins(
    *,
    scene: str,
    family: str,
    distribution: str,
    split: str,
    setting: Setting,
    index: int,
    start_id: str,
    target: TargetObject,
    landmark: Landmark,
    direction: str,
    reference: ReferencePath,
    reference_image: str,
) -> tuple[Episode, Episode]:
    """The SemanticOGS and ImageOGS twins of one navigation task, from its parts.

    Args:
        scene, family, distribution: where the task is.
        split: the task's split.
        setting: the setting its reference length falls into.
        index: the task's number within its scene and setting (in the episode ids).
        start_id: what the start is named by (the start object's id, or a site's start).
        target: the object to find.
        landmark: the landmark the goal refers to.
        direction: compass direction of the target from the landmark.
        reference: the reference, as a file stores it (its first pose is the start).
        reference_image: the ImageOGS reference image, relative to the suite file.
    """
    episodes = []
    for representation, image in (
        (REPRESENTATION_SEMANTIC, ""),
        (REPRESENTATION_IMAGE, reference_image),
    ):
        episodes.append(
            Episode(
                episode_id=make_episode_id(scene, setting.name, index, representation),
                benchmark="aerialdojo",
                scene=scene,
                family=family,
                distribution=distribution,
                split=split,
                setting=setting.name,
                action_budget=setting.action_budget,
                start=reference.poses[0],
                start_object_id=start_id,
                goal=Goal(
                    object_name=target.name,
                    landmark_name=landmark.name,
                    direction=direction,
                    representation=representation,
                    description=target.description or target.name,
                    reference_image=image,
                ),
                target_object_id=target.object_id,
                target_anchor=written_pose(target.anchor),
                reference=reference,
                success_radius_m=SUCCESS_RADIUS_M,
            )
        )
    return episodes[0], episodes[1]
