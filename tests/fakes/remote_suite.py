"""A one-episode task suite on a scene of the fake servers, written through the suite API."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from PIL import Image

from aerialdojo.actions import Action, target_pose
from aerialdojo.geometry import Pose
from aerialdojo.tasks.episode import Episode, Goal, ReferencePath, make_episode_id
from aerialdojo.tasks.suite import (
    GenerationInfo,
    ReferenceImageSpec,
    SceneInventory,
    Suite,
    save_suite,
)

#: Where the episode starts: 10 m up, facing +x.
START = Pose(0.0, 0.0, 10.0, 0.0)
#: Its reference: 5 m forward, 5 m left (a detour ratio the task filters accept).
REFERENCE_ACTIONS = (Action("MoveForward", 5.0), Action("MoveLeft", 5.0))


def write_one_episode_suite(directory: Path, scene: str) -> Path:
    """Write ``suite.json`` (and the ImageOGS twin's reference image) into ``directory``;
    returns the file. The default selection is the SemanticOGS episode."""
    poses = [START]
    for action in REFERENCE_ACTIONS:
        poses.append(target_pose(poses[-1], action))
    euclidean = poses[-1].distance_to(START.position)
    semantic = Episode(
        episode_id=make_episode_id(scene, "base", 0, "semantic"),
        benchmark="aerialdojo",
        scene=scene,
        family="urban",
        distribution="id",
        split="test",
        setting="base",
        action_budget=90,
        start=START,
        goal=Goal(
            object_name="red crate",
            landmark_name="gate",
            direction="NE",
            representation="semantic",
            description="a red crate north-east of the gate",
        ),
        target_object_id="obj_001",
        start_object_id="obj_000",
        target_anchor=poses[-1],
        reference=ReferencePath(
            poses=tuple(poses),
            actions=REFERENCE_ACTIONS,
            length_m=10.0,
            euclidean_m=euclidean,
            detour_ratio=10.0 / euclidean,
        ),
    )
    (directory / "images").mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 8), (200, 30, 30)).save(directory / "images" / "reference.png")
    image = dataclasses.replace(
        semantic,
        episode_id=make_episode_id(scene, "base", 0, "image"),
        goal=dataclasses.replace(
            semantic.goal, representation="image", reference_image="images/reference.png"
        ),
    )
    suite = Suite(
        path=directory / "suite.json",
        name="remote_mini",
        generation=GenerationInfo(
            seed=0,
            planner="by_hand",
            collision_radius_m=0.25,
            goal_tolerance_m=0.5,
            cell_m=1.0,
            action_cost_m=1.0,
            reference_image=ReferenceImageSpec(camera="front", width=8, height=8, fov_deg=90.0),
        ),
        scenes=(
            SceneInventory(
                scene=scene,
                scene_type=scene,
                family="urban",
                distribution="id",
                landmarks=1,
                objects=2,
                anchors=2,
            ),
        ),
        default_selection=(semantic.episode_id,),
        episodes=[semantic, image],
    )
    return save_suite(suite)
