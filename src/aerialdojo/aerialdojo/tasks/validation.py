"""Checks of a task suite document: its JSON Schema, then what a schema cannot say.

Every problem is one line ``<file>: <episode id>: <field>: <what is wrong>`` (``(suite)`` in
place of the id for suite-level fields), and every problem is reported, not just the first.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema_rs

from aerialdojo.actions import STOP, check_action, target_pose, translational_length
from aerialdojo.errors import InvalidActionError
from aerialdojo.geofence import Geofence
from aerialdojo.geometry import Pose
from aerialdojo.tasks.episode import (
    EPISODE_ID_PATTERN,
    REPRESENTATION_SUFFIXES,
    Episode,
    stated_distance,
)
from aerialdojo.tasks.planner import path_length
from aerialdojo.tasks.serialization import JsonObject, episode_from_json
from aerialdojo.tasks.settings import (
    SETTINGS_BY_NAME,
    filter_problems,
    legal_splits,
    setting_for_length,
)
from aerialdojo.tasks.site_record import FREE_SPACE_UNMAPPED, SiteRecord, site_record_from_json

SUITE_LEVEL = "(suite)"
#: Schema violations listed before the rest are cut off (and the semantic checks skipped).
MAX_SCHEMA_PROBLEMS = 100
#: The longest list inside one episode (reference poses and actions): far above any
#: budget, and the schema validator is never handed a list that could yield millions of
#: errors (600,000 short poses took it 2.3 GB and minutes).
MAX_EPISODE_LIST = 10_000

# Written values are rounded to DECIMALS (4) places; a stored statistic may differ from one
# recomputed from stored values by about that much, a tampered one by more.
_STATISTIC_TOLERANCE = 2e-3
#: L is the actions' translational length, written exactly (sums of 1, 2, 3 and 5 m).
_LENGTH_TOLERANCE = 1e-6
# Per-step kinematic replay: stored positions and yaws are each rounded once.
_POSITION_TOLERANCE_M = 2e-3
_YAW_TOLERANCE_DEG = 1e-2

# Suite-level fields the episode checks rely on; if one is malformed, only schema problems
# are reported.
_STRUCTURAL_FIELDS = (
    "(document)",
    "benchmark",
    "generation",
    "scenes",
    "default_selection",
    "episodes",
    "site",
)

# Fields twins may differ in (besides their ids): the representation and its image.
_TWIN_FIELDS = (("goal", "representation"), ("goal", "reference_image"))


@functools.cache
def task_suite_schema() -> dict[str, Any]:
    """The JSON Schema of suite files (``aerialdojo/schemas/task_suite.schema.json``)."""
    text = resources.files("aerialdojo").joinpath("schemas/task_suite.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


def field_path(parts: Iterable[str | int]) -> str:
    """A JSON instance path as problems name fields: ``goal.direction``, ``starts[2].name``."""
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else part)
    return text or "(document)"


@functools.cache
def _schema_validator() -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(task_suite_schema())


def _schema_problems(document: Any) -> Iterator[tuple[int | None, str, str]]:
    """(episode index or None, field, message) of every schema violation, in document order.

    jsonschema-rs rather than jsonschema: the same Draft 2020-12 checks, every error listed,
    but about 700 times faster, which makes a 10,000-episode suite load in seconds. At most
    ``MAX_SCHEMA_PROBLEMS + 1`` errors are taken: a malformed 3 MB file with 600,000 short
    poses took 2.3 GB and minutes to list every error, and a 52 MB one 23 GB.
    """
    errors = sorted(
        itertools.islice(_schema_validator().iter_errors(document), MAX_SCHEMA_PROBLEMS + 1),
        key=lambda e: list(map(str, e.instance_path)),
    )
    for error in errors:
        path = list(error.instance_path)
        if len(path) >= 2 and path[0] == "episodes" and isinstance(path[1], int):
            yield path[1], field_path(path[2:]), error.message
        else:
            yield None, field_path(path), error.message


def _gap_m(a: Pose, b: Pose) -> float:
    return math.dist((a.x, a.y, a.z), (b.x, b.y, b.z))


def _angle_gap_deg(a_rad: float, b_rad: float) -> float:
    return abs((math.degrees(a_rad - b_rad) + 180.0) % 360.0 - 180.0)


def episode_problems(episode: Episode, *, goal_tolerance_m: float) -> list[tuple[str, str]]:
    """Semantic problems of one episode as (field, message) pairs.

    Checks the id against the episode's fields, the setting and budget against the
    reference length, the paper's filters, the recorded statistics, that the reference
    starts at the start, is produced by legal actions (``actions.target_pose``), fits the
    budget and ends within ``goal_tolerance_m`` of the target anchor, the split against the
    distribution, the representation against the reference image, and that the description
    states no distance (``tasks.episode.stated_distance``). A reference without
    actions (an unmapped site's) must be the start alone with L = d_E, and is exempt from
    the detour filter.

    Args:
        episode: the episode to check.
        goal_tolerance_m: how close to the anchor references must end.
    """
    problems: list[tuple[str, str]] = []
    reference = episode.reference

    match = EPISODE_ID_PATTERN.match(episode.episode_id)
    if match is None:
        problems.append(("episode_id", "is not <scene>-<setting>-<index>-<sem|img>"))
    else:
        expected = {
            "scene": episode.scene,
            "setting": episode.setting,
            "suffix": REPRESENTATION_SUFFIXES.get(episode.goal.representation, "?"),
        }
        for part, value in expected.items():
            if match[part] != value:
                problems.append(
                    ("episode_id", f"{part} part {match[part]!r} does not match {value!r}")
                )

    setting = setting_for_length(reference.length_m)
    if setting is None or setting.name != episode.setting:
        found = setting.name if setting else "no setting"
        problems.append(
            ("setting", f"{episode.setting!r} but L={reference.length_m:g} m is {found}")
        )
    if episode.setting in SETTINGS_BY_NAME:
        budget = SETTINGS_BY_NAME[episode.setting].action_budget
        if episode.action_budget != budget:
            problems.append(
                ("action_budget", f"{episode.action_budget} but {episode.setting} has {budget}")
            )
    straight_line = not reference.actions
    for problem in filter_problems(
        reference.length_m, reference.euclidean_m, detour=not straight_line
    ):
        problems.append(("reference", f"fails the task filters: {problem}"))

    euclidean = _gap_m(episode.start, episode.target_anchor)
    recomputed = {
        "reference.euclidean_m": (reference.euclidean_m, euclidean),
        "reference.length_m": (
            reference.length_m,
            euclidean if straight_line else path_length(reference.poses),
        ),
    }
    exact = translational_length(reference.actions)
    if not straight_line and abs(reference.length_m - exact) > _LENGTH_TOLERANCE:
        problems.append(
            (
                "reference.length_m",
                f"is {reference.length_m:g} but the reference actions translate {exact:g} m",
            )
        )
    if reference.euclidean_m > 0.0:
        recomputed["reference.detour_ratio"] = (
            reference.detour_ratio,
            reference.length_m / reference.euclidean_m,
        )
    for field, (stored, computed) in recomputed.items():
        if abs(stored - computed) > _STATISTIC_TOLERANCE:
            problems.append(
                (field, f"is {stored:g} but recomputing it from the file gives {computed:.4f}")
            )

    if straight_line:
        problems.extend(_straight_line_problems(episode))
    else:
        problems.extend(_trajectory_problems(episode, goal_tolerance_m))

    legal = legal_splits(episode.distribution)
    if episode.split not in legal:
        problems.append(
            ("split", f"{episode.split!r} is not a split of {episode.distribution} scenes {legal}")
        )
    if episode.start_object_id == episode.target_object_id:
        problems.append(("start_object_id", f"{episode.start_object_id!r} is also the target"))

    image = episode.goal.reference_image
    if episode.goal.representation == "image":
        if not image:
            problems.append(("goal.reference_image", "an image goal needs a reference image"))
        elif PurePosixPath(image).is_absolute() or ".." in PurePosixPath(image).parts:
            problems.append(("goal.reference_image", f"{image!r} must be inside the suite"))
        elif PurePosixPath(image).suffix != ".png":
            problems.append(("goal.reference_image", f"{image!r} is not a .png"))
    elif image:
        problems.append(("goal.reference_image", f"a semantic goal has no image, got {image!r}"))
    distance = stated_distance(episode.goal.description)
    if distance is not None:
        problems.append(
            (
                "goal.description",
                f"states a distance ({distance!r}): the goal gives a landmark and a coarse "
                "direction, never a range (AerialDojo-200K, section 3.2); regenerate the suite",
            )
        )
    return problems


def _straight_line_problems(episode: Episode) -> list[tuple[str, str]]:
    """A reference without actions is the start pose alone."""
    poses = episode.reference.poses
    field = "reference.poses_xyz_m_yaw_deg"
    if len(poses) != 1:
        return [(field, f"{len(poses)} poses for no actions (need the start alone)")]
    if (
        _gap_m(poses[0], episode.start) > _POSITION_TOLERANCE_M
        or _angle_gap_deg(poses[0].yaw, episode.start.yaw) > _YAW_TOLERANCE_DEG
    ):
        return [(f"{field}[0]", "is not the start pose")]
    return []


def _site_problems(episode: Episode, site: SiteRecord) -> list[tuple[str, str]]:
    """An episode of a site's suite: in the site's scene, inside its geofence (start,
    anchor and every reference pose, with the fence's margin less the rounding of stored
    positions), with reference actions exactly when the site has a free-space map."""
    problems: list[tuple[str, str]] = []
    scene = site.scene
    if episode.scene != scene:
        problems.append(("scene", f"{episode.scene!r} but the suite's site is {scene!r}"))
    unmapped = site.free_space == FREE_SPACE_UNMAPPED
    if unmapped and episode.reference.actions:
        problems.append(
            ("reference.actions", "the site has no free-space map: no references were planned")
        )
    if not unmapped and not episode.reference.actions:
        problems.append(
            (
                "reference.actions",
                f"is empty, but the site's references were planned ({site.free_space})",
            )
        )
    fence = site.geofence
    checked = Geofence(
        polygon=fence.polygon,
        min_z=fence.min_z,
        max_z=fence.max_z,
        margin=max(fence.margin - _POSITION_TOLERANCE_M, 0.0),
    )
    positions = [("start", episode.start), ("target.anchor", episode.target_anchor)]
    positions += [
        (f"reference.poses_xyz_m_yaw_deg[{k}]", pose)
        for k, pose in enumerate(episode.reference.poses[1:], start=1)
    ]
    for field, pose in positions:
        violation = checked.violation(pose.position)
        if violation is not None:
            problems.append((field, f"{violation} of site {site.name}"))
    return problems


def _trajectory_problems(episode: Episode, goal_tolerance_m: float) -> list[tuple[str, str]]:
    reference = episode.reference
    poses, actions = reference.poses, reference.actions
    problems: list[tuple[str, str]] = []
    field = "reference.poses_xyz_m_yaw_deg"
    if len(poses) != len(actions) + 1:
        problems.append((field, f"{len(poses)} poses for {len(actions)} actions (need one more)"))
    first = poses[0]
    if (
        _gap_m(first, episode.start) > _POSITION_TOLERANCE_M
        or _angle_gap_deg(first.yaw, episode.start.yaw) > _YAW_TOLERANCE_DEG
    ):
        problems.append((f"{field}[0]", "is not the start pose"))
    for step, (action, before, after) in enumerate(zip(actions, poses, poses[1:], strict=False)):
        where = f"reference.actions[{step}]"
        try:
            check_action(action)
            if action.name == STOP:
                raise InvalidActionError("Stop ends an episode; a reference does not contain it")
        except InvalidActionError as error:
            problems.append((where, str(error)))
            continue
        moved = target_pose(before, action)
        if (
            _gap_m(moved, after) > _POSITION_TOLERANCE_M
            or _angle_gap_deg(moved.yaw, after.yaw) > _YAW_TOLERANCE_DEG
        ):
            problems.append(
                (where, f"{action.name} {action.magnitude:g} does not lead to pose {step + 1}")
            )
    gap = _gap_m(poses[-1], episode.target_anchor)
    if gap > goal_tolerance_m + _POSITION_TOLERANCE_M:
        problems.append(
            (field, f"ends {gap:.3f} m from the target anchor (tolerance {goal_tolerance_m:g} m)")
        )
    if len(actions) + 1 > episode.action_budget:
        problems.append(
            (
                "reference.actions",
                f"{len(actions)} actions and a Stop exceed the budget {episode.action_budget}",
            )
        )
    return problems


def _without_twin_fields(data: JsonObject) -> JsonObject:
    """The episode's fields that its twin must share (shallow: nothing is modified)."""
    stripped = {key: value for key, value in data.items() if key != "episode_id"}
    for outer, inner in _TWIN_FIELDS:
        if isinstance(stripped.get(outer), dict):
            stripped[outer] = {k: v for k, v in stripped[outer].items() if k != inner}
    return stripped


def _differences(a: Any, b: Any, prefix: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            difference
            for key in sorted(set(a) | set(b))
            for difference in _differences(
                a.get(key), b.get(key), f"{prefix}.{key}" if prefix else key
            )
        ]
    return [] if a == b else [prefix or "(episode)"]


def _twin_problems(
    episodes: dict[str, JsonObject], all_ids: Iterable[str]
) -> Iterator[tuple[str, str, str]]:
    """(episode id, field, message): every task needs one SemanticOGS and one ImageOGS twin
    (among ``all_ids``) that agree on everything but the representation (compared where
    both are in ``episodes``, the episodes that passed the schema)."""
    tasks: dict[str, dict[str, str]] = {}
    for episode_id in all_ids:
        task_id, _, suffix = episode_id.rpartition("-")
        tasks.setdefault(task_id, {})[suffix] = episode_id
    for task_id, twins in tasks.items():
        for suffix in REPRESENTATION_SUFFIXES.values():
            if suffix not in twins:
                present = next(iter(twins.values()))
                yield present, "episode_id", f"its twin {task_id}-{suffix} is missing"
        if len(twins) == 2 and twins["sem"] in episodes and twins["img"] in episodes:
            semantic, image = twins["sem"], twins["img"]
            for field in _differences(
                _without_twin_fields(episodes[semantic]), _without_twin_fields(episodes[image])
            ):
                yield image, field, f"differs from its twin {semantic}"


def _oversized_lists(raw_episodes: Any) -> list[str]:
    """``episodes[i].field: N items`` for every list inside an episode longer than
    ``MAX_EPISODE_LIST`` (the first ``MAX_SCHEMA_PROBLEMS``)."""
    if not isinstance(raw_episodes, list):
        return []
    found: list[str] = []
    pending: list[tuple[str, Any]] = [(f"episodes[{i}]", raw) for i, raw in enumerate(raw_episodes)]
    while pending and len(found) < MAX_SCHEMA_PROBLEMS:
        where, value = pending.pop()
        if isinstance(value, dict):
            pending += [
                (f"{where}.{key}", item)
                for key, item in value.items()
                if isinstance(item, dict | list)
            ]
        elif len(value) > MAX_EPISODE_LIST:
            found.append(f"{where}: {len(value)} items; at most {MAX_EPISODE_LIST}")
        else:
            pending += [
                (f"{where}[{i}]", item)
                for i, item in enumerate(value)
                if isinstance(item, dict | list)
            ]
    return sorted(found)


def _shortened(message: str, limit: int = 300) -> str:
    """A message cut to ``limit`` characters: jsonschema's quote the offending value whole."""
    return message if len(message) <= limit else f"{message[:limit]}... ({len(message)} chars)"


def document_problems(document: Any, *, source: str, base_dir: Path | None = None) -> list[str]:
    """Every problem of a parsed suite document, one line each.

    Args:
        document: the parsed JSON.
        source: file name to put in front of each problem.
        base_dir: directory that reference image paths are relative to; None skips
            checking that the images exist.
    """
    raw_episodes = document.get("episodes") if isinstance(document, dict) else None
    oversized = _oversized_lists(raw_episodes)
    if oversized:
        return [f"{source}: {problem}" for problem in oversized]
    schema_problems = list(_schema_problems(document))

    def episode_label(index: int | None) -> str:
        if index is None:
            return SUITE_LEVEL
        raw = raw_episodes[index] if isinstance(raw_episodes, list) else None
        if isinstance(raw, dict) and isinstance(raw.get("episode_id"), str):
            return str(raw["episode_id"])
        return f"episodes[{index}]"

    problems = [
        f"{source}: {episode_label(index)}: {field}: {_shortened(message)}"
        for index, field, message in schema_problems[:MAX_SCHEMA_PROBLEMS]
    ]
    if len(schema_problems) > MAX_SCHEMA_PROBLEMS:
        return [*problems, f"{source}: {SUITE_LEVEL}: more problems not listed; fix these first"]
    blocking = [
        field
        for index, field, _ in schema_problems
        if index is None and field.split(".")[0].split("[")[0] in _STRUCTURAL_FIELDS
    ]
    if blocking or not isinstance(document, dict) or not isinstance(raw_episodes, list):
        return problems
    broken = {index for index, _, _ in schema_problems if index is not None}

    inventory = {scene["scene"]: scene for scene in document["scenes"]}
    if len(inventory) != len(document["scenes"]):
        problems.append(f"{source}: {SUITE_LEVEL}: scenes: a scene is listed twice")
    goal_tolerance = float(document["generation"]["goal_tolerance_m"])
    site = site_record_from_json(document["site"]) if "site" in document else None
    valid: dict[str, JsonObject] = {}
    for index, raw in enumerate(raw_episodes):
        if index in broken:
            continue
        episode_id = raw["episode_id"]
        found: list[tuple[str, str]] = []
        if episode_id in valid:
            found.append(("episode_id", "is used by more than one episode"))
        scene = inventory.get(raw["scene"])
        if scene is None:
            found.append(("scene", f"{raw['scene']!r} is not in the suite's scenes"))
        else:
            for key in ("family", "distribution"):
                if raw[key] != scene[key]:
                    found.append((key, f"{raw[key]!r} but scene {raw['scene']} is {scene[key]!r}"))
        episode = episode_from_json(raw, document["benchmark"])
        found.extend(episode_problems(episode, goal_tolerance_m=goal_tolerance))
        if site is not None:
            found.extend(_site_problems(episode, site))
        elif not episode.reference.actions:
            found.append(
                (
                    "reference.actions",
                    "is empty: only the suite of a site surveyed without a free-space map "
                    "carries no reference actions",
                )
            )
        image = episode.goal.reference_image
        if base_dir is not None and image and not (base_dir / image).is_file():
            found.append(("goal.reference_image", f"{image!r} does not exist next to the suite"))
        problems.extend(f"{source}: {episode_id}: {field}: {message}" for field, message in found)
        valid.setdefault(episode_id, raw)
    all_ids = {
        raw["episode_id"]
        for raw in raw_episodes
        if isinstance(raw, dict) and isinstance(raw.get("episode_id"), str)
    }
    problems.extend(
        f"{source}: {episode_id}: {field}: {message}"
        for episode_id, field, message in _twin_problems(valid, sorted(all_ids))
    )
    for position, episode_id in enumerate(document["default_selection"]):
        if episode_id not in all_ids:
            problems.append(
                f"{source}: {SUITE_LEVEL}: default_selection[{position}]: "
                f"{episode_id!r} is not an episode of the suite"
            )
    return problems
