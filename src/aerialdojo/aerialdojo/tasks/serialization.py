"""Episodes to and from the suite file's JSON objects (``schemas/task_suite.schema.json``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from aerialdojo.actions import Action
from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.spawns import spawn_from_json, spawn_to_json
from aerialdojo.tasks.episode import Episode, Goal, ReferencePath

#: Decimal places written for metres and degrees (0.1 mm, 0.0001 deg): far below anything
#: that matters, and a written value reads back to the value it was written from.
DECIMALS = 4

#: The version of ``schemas/task_suite.schema.json`` this module writes for a suite without
#: a site block, so that 1.x loaders keep reading those files ...
SCHEMA_VERSION = "1.0"
#: ... and for a suite built from a surveyed site (``site`` block, reference-less episodes).
SITE_SCHEMA_VERSION = "2.0"

JsonObject = dict[str, Any]


def written_value(value: float) -> float:
    """``value`` as a suite file stores it (rounded to ``DECIMALS`` places)."""
    return round(float(value), DECIMALS)


def _yaw_deg(yaw_rad: float) -> float:
    degrees = written_value(math.degrees(wrap_angle(yaw_rad)))
    # Rounding can carry 179.99996 up to 180.0, outside the file's [-180, 180).
    return degrees - 360.0 if degrees >= 180.0 else degrees


def pose_to_json(pose: Pose) -> JsonObject:
    """A pose as ``{"x_m", "y_m", "z_m", "yaw_deg"}``."""
    return {
        "x_m": written_value(pose.x),
        "y_m": written_value(pose.y),
        "z_m": written_value(pose.z),
        "yaw_deg": _yaw_deg(pose.yaw),
    }


def pose_from_json(data: JsonObject) -> Pose:
    """The pose of a ``{"x_m", "y_m", "z_m", "yaw_deg"}`` object (yaw to radians)."""
    return Pose(
        float(data["x_m"]), float(data["y_m"]), float(data["z_m"]), math.radians(data["yaw_deg"])
    )


def pose_to_row(pose: Pose) -> list[float]:
    """A pose as ``[x_m, y_m, z_m, yaw_deg]`` (reference trajectories)."""
    return [written_value(pose.x), written_value(pose.y), written_value(pose.z), _yaw_deg(pose.yaw)]


def pose_from_row(row: Sequence[float]) -> Pose:
    """The pose of an ``[x_m, y_m, z_m, yaw_deg]`` row."""
    return Pose(float(row[0]), float(row[1]), float(row[2]), math.radians(row[3]))


def written_pose(pose: Pose) -> Pose:
    """``pose`` as it reads back from a suite file: generation computes statistics and
    settings from these values, so a loaded file recomputes exactly what it stores."""
    return pose_from_row(pose_to_row(pose))


def episode_to_json(episode: Episode) -> JsonObject:
    """The suite-file object of ``episode``."""
    goal = episode.goal
    reference = episode.reference
    spawns = {"spawns": [spawn_to_json(s) for s in episode.spawns]} if episode.spawns else {}
    return {
        "episode_id": episode.episode_id,
        "scene": episode.scene,
        "family": episode.family,
        "distribution": episode.distribution,
        "split": episode.split,
        "setting": episode.setting,
        "action_budget": episode.action_budget,
        "success_radius_m": episode.success_radius_m,
        "agents": list(episode.agents),
        "start": pose_to_json(episode.start),
        "start_object_id": episode.start_object_id,
        **spawns,
        "goal": {
            "object_name": goal.object_name,
            "landmark_name": goal.landmark_name,
            "direction": goal.direction,
            "representation": goal.representation,
            "description": goal.description,
            "reference_image": goal.reference_image,
        },
        "target": {
            "object_id": episode.target_object_id,
            "anchor": pose_to_json(episode.target_anchor),
        },
        "reference": {
            "length_m": written_value(reference.length_m),
            "euclidean_m": written_value(reference.euclidean_m),
            "detour_ratio": written_value(reference.detour_ratio),
            "poses_xyz_m_yaw_deg": [pose_to_row(pose) for pose in reference.poses],
            "actions": [[action.name, action.magnitude] for action in reference.actions],
        },
    }


def episode_from_json(data: JsonObject, benchmark: str = "aerialdojo") -> Episode:
    """The episode of a suite-file object that passed the JSON Schema.

    Args:
        data: one element of the suite's ``episodes``.
        benchmark: the suite's benchmark.

    Raises:
        KeyError: a required field is missing (the schema check reports it first).
        ValueError: a spawned object the schema lets through is still malformed.
    """
    goal = data["goal"]
    reference = data["reference"]
    problems: list[str] = []
    spawns = tuple(
        spawn_from_json(raw, f"spawns[{index}]", problems)
        for index, raw in enumerate(data.get("spawns", ()))
    )
    if problems:
        raise ValueError("; ".join(problems))
    return Episode(
        episode_id=data["episode_id"],
        benchmark=benchmark,
        scene=data["scene"],
        family=data["family"],
        distribution=data["distribution"],
        split=data["split"],
        setting=data["setting"],
        action_budget=int(data["action_budget"]),
        success_radius_m=float(data["success_radius_m"]),
        agents=tuple(data["agents"]),
        start=pose_from_json(data["start"]),
        start_object_id=data["start_object_id"],
        spawns=tuple(spawn for spawn in spawns if spawn is not None),
        goal=Goal(
            object_name=goal["object_name"],
            landmark_name=goal["landmark_name"],
            direction=goal["direction"],
            representation=goal["representation"],
            description=goal["description"],
            reference_image=goal["reference_image"],
        ),
        target_object_id=data["target"]["object_id"],
        target_anchor=pose_from_json(data["target"]["anchor"]),
        reference=ReferencePath(
            poses=tuple(pose_from_row(row) for row in reference["poses_xyz_m_yaw_deg"]),
            actions=tuple(
                Action(name, float(magnitude)) for name, magnitude in reference["actions"]
            ),
            length_m=float(reference["length_m"]),
            euclidean_m=float(reference["euclidean_m"]),
            detour_ratio=float(reference["detour_ratio"]),
        ),
    )
