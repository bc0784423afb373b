"""AGOS episodes and suites: typed, validated value objects and their ``suite.json`` files."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.agos.grid import Region
from aerialdojo.documents import SUITE, DocumentError, load_json
from aerialdojo.errors import ConfigError, TaskFileError
from aerialdojo.geometry import Pose
from aerialdojo.spawns import SpawnedObject, spawn_from_json, spawn_to_json
from aerialdojo.tasks.records import (
    FieldReader,
    check_suite_file,
    find_episode,
    numbers,
    select_episodes,
    texts,
)

BENCHMARK = "agos"
SCHEMA_VERSION = 1
SETTINGS = ("easy", "mid", "hard")
#: Episode region edge per setting (AGOS-Bench, Table 2).
REGION_SIZE_M = {"easy": 150.0, "mid": 300.0, "hard": 300.0}
DECISION_BUDGET = 80
SUCCESS_RADIUS_M = 50.0
AGENTS = ("uav", "ugv")
#: The most vehicles an episode spawns.
MAX_SPAWNS = 64


@dataclass(frozen=True, kw_only=True)
class AgosEpisode:
    """One AGOS task instance.

    Agents are told the town, the region, their start poses and the target's reference
    images; everything else is for the task manager and the evaluator.

    Attributes:
        episode_id: ``<town>-<setting>-<index>``, e.g. ``AgosTown_0-easy-0003``.
        scene: the town.
        split: ``train``, ``val`` or ``test``.
        setting: ``easy``, ``mid`` or ``hard``.
        region: the episode region R_e.
        uav_start: the UAV's start pose (on an active grid node, at flight altitude).
        ugv_start: the UGV's start pose (on a decision anchor, heading along the road).
        target_object_id: the target vehicle in the town.
        target_name: e.g. ``"red sedan"``.
        target_center: the target's box centre, map frame.
        distractor_ids: look-alike vehicles inside the region (Hard).
        reference_images: multi-view reference images, paths relative to the suite file.
        reference_length_m: shortest road route from the UGV start to an anchor within
            ``success_radius_m`` with line of sight to the target (SPL's l_e).
        action_budget: decisions shared by both agents.
        success_radius_m: the checker's distance threshold.
        spawns: vehicles the simulator spawns by blueprint when the episode starts (a
            CARLA map: the target, its distractors and other parked vehicles, as AGOS-Bench
            places them on CARLA-Air); empty on the embedded towns, whose vehicles are part
            of the town.
    """

    episode_id: str
    scene: str
    split: str
    setting: str
    region: Region
    uav_start: Pose
    ugv_start: Pose
    target_object_id: str
    target_name: str
    target_center: tuple[float, float, float]
    distractor_ids: tuple[str, ...] = ()
    reference_images: tuple[str, ...] = ()
    reference_length_m: float
    action_budget: int = DECISION_BUDGET
    success_radius_m: float = SUCCESS_RADIUS_M
    spawns: tuple[SpawnedObject, ...] = ()

    benchmark = BENCHMARK
    family = "urban"
    agents = AGENTS

    @property
    def starts(self) -> dict[str, Pose]:
        """Start pose per agent."""
        return {"uav": self.uav_start, "ugv": self.ugv_start}


def episode_to_json(episode: AgosEpisode) -> dict[str, Any]:
    """The JSON object of one episode."""
    region = episode.region
    return {
        "episode_id": episode.episode_id,
        "scene": episode.scene,
        "split": episode.split,
        "setting": episode.setting,
        "region": [round(v, 4) for v in (region.x_min, region.y_min, region.x_max, region.y_max)],
        "uav_start": _pose_list(episode.uav_start),
        "ugv_start": _pose_list(episode.ugv_start),
        "target_object_id": episode.target_object_id,
        "target_name": episode.target_name,
        "target_center": [round(v, 4) for v in episode.target_center],
        "distractor_ids": list(episode.distractor_ids),
        "reference_images": list(episode.reference_images),
        "reference_length_m": round(episode.reference_length_m, 4),
        "action_budget": episode.action_budget,
        "success_radius_m": episode.success_radius_m,
        **({"spawns": [spawn_to_json(s) for s in episode.spawns]} if episode.spawns else {}),
    }


def _pose_list(pose: Pose) -> list[float]:
    return [round(pose.x, 4), round(pose.y, 4), round(pose.z, 4), round(pose.yaw, 6)]


def episode_from_json(raw: Any, where: str, problems: list[str]) -> AgosEpisode | None:
    """The episode of a JSON object, or None with every problem appended to ``problems``."""
    read = FieldReader(raw, where, problems)
    count = len(problems)
    text = lambda v: isinstance(v, str) and bool(v)  # noqa: E731
    positive = lambda v: isinstance(v, int | float) and not isinstance(v, bool) and v > 0  # noqa: E731
    fields = {
        "episode_id": read.get("episode_id", text, "a non-empty string"),
        "scene": read.get("scene", text, "a town name"),
        "split": read.get("split", text, "a split name"),
        "setting": read.get("setting", lambda v: v in SETTINGS, f"one of {', '.join(SETTINGS)}"),
        "region": read.get("region", numbers(4), "[x_min, y_min, x_max, y_max]"),
        "uav_start": read.get("uav_start", numbers(4), "[x, y, z, yaw]"),
        "ugv_start": read.get("ugv_start", numbers(4), "[x, y, z, yaw]"),
        "target_object_id": read.get("target_object_id", text, "a vehicle id"),
        "target_name": read.get("target_name", text, "a non-empty string"),
        "target_center": read.get("target_center", numbers(3), "[x, y, z]"),
        "distractor_ids": read.get("distractor_ids", texts, "a list of vehicle ids"),
        "reference_images": read.get("reference_images", texts, "a list of image paths"),
        "reference_length_m": read.get("reference_length_m", positive, "a length > 0"),
        "action_budget": read.get(
            "action_budget", lambda v: isinstance(v, int) and v > 0, "an integer > 0"
        ),
        "success_radius_m": read.get("success_radius_m", positive, "a radius > 0"),
    }
    raw_spawns = raw.get("spawns", []) if isinstance(raw, dict) else []
    if not isinstance(raw_spawns, list) or len(raw_spawns) > MAX_SPAWNS:
        problems.append(f"{where}: spawns: not a list of at most {MAX_SPAWNS} objects")
        raw_spawns = []
    spawns = [
        spawn_from_json(item, f"{where}: spawns[{index}]", problems)
        for index, item in enumerate(raw_spawns)
    ]
    if len(problems) > count:
        return None
    ids = [spawn.object_id for spawn in spawns if spawn is not None]
    if ids and fields["target_object_id"] not in ids:
        problems.append(f"{where}: target_object_id: not among the spawned vehicles {ids}")
    if len(set(ids)) != len(ids):
        problems.append(f"{where}: spawns: object ids repeat")
    if len(problems) > count:
        return None
    region = Region(*fields["region"])
    if region.x_min >= region.x_max or region.y_min >= region.y_max:
        problems.append(f"{where}: region: {fields['region']} has no area")
        return None
    for start in ("uav_start", "ugv_start"):
        if not region.contains(*fields[start][:2]):
            problems.append(f"{where}: {start}: {fields[start][:2]} lies outside the region")
    if not region.contains(*fields["target_center"][:2]):
        problems.append(f"{where}: target_center lies outside the region")
    if len(problems) > count:
        return None
    return AgosEpisode(
        **{
            **fields,
            "region": region,
            "uav_start": Pose(*fields["uav_start"]),
            "ugv_start": Pose(*fields["ugv_start"]),
            "target_center": tuple(fields["target_center"]),
            "distractor_ids": tuple(fields["distractor_ids"]),
            "reference_images": tuple(fields["reference_images"]),
            "reference_length_m": float(fields["reference_length_m"]),
            "success_radius_m": float(fields["success_radius_m"]),
            "spawns": tuple(spawn for spawn in spawns if spawn is not None),
        }
    )


@dataclass(frozen=True, kw_only=True)
class AgosSuite:
    """A loaded AGOS suite.

    Attributes:
        path: the ``suite.json`` it came from (reference images are relative to it).
        name: suite name.
        description: free text.
        default_selection: episode ids run when no filter is given.
        episodes: every episode, in file order.
    """

    path: Path
    name: str
    description: str
    default_selection: tuple[str, ...]
    episodes: tuple[AgosEpisode, ...]

    def episode(self, episode_id: str) -> AgosEpisode:
        """The episode called ``episode_id``.

        Raises:
            KeyError: no such episode; ``args[0]`` names it.
        """
        return find_episode(self.name, self.episodes, episode_id)

    def select(self, text: str = "") -> list[str]:
        """Ids of the episodes a filter selects: ``""`` the default selection, ``"all"``
        everything, else ``key=value[|value],...`` over ``scene``, ``split``, ``setting``.

        Raises:
            ConfigError: a malformed clause or an unknown key.
        """
        return select_episodes(
            self.episodes, self.default_selection, text, ("scene", "split", "setting")
        )

    def reference_image_paths(self, episode: AgosEpisode) -> list[Path]:
        """Absolute paths of an episode's reference images."""
        return [self.path.parent / image for image in episode.reference_images]


def load_agos_suite(path: str | Path, *, source: str | None = None) -> AgosSuite:
    """Load and validate an AGOS suite file.

    Args:
        path: the suite file.
        source: how problems name the file (default: ``path``).

    Raises:
        TaskFileError: unreadable, not JSON, or invalid; every problem is listed.
    """
    path = Path(path)
    label = source or str(path)
    check_suite_file(path, label)  # size and shape before the file is read whole
    try:
        document = load_json(path, SUITE, label)
    except DocumentError as error:
        raise TaskFileError(label, [str(error)]) from None
    problems: list[str] = []
    top = FieldReader(document, label, problems)
    if top.get("benchmark", lambda v: v == BENCHMARK, f"{BENCHMARK!r}") is None:
        raise TaskFileError(label, problems)
    top.get("schema_version", lambda v: v == SCHEMA_VERSION, str(SCHEMA_VERSION))
    name = top.get("name", lambda v: isinstance(v, str) and bool(v), "a suite name")
    selection = top.get("default_selection", texts, "a list of episode ids")
    raw_episodes = top.get("episodes", lambda v: isinstance(v, list), "a list of episodes")
    episodes = []
    for index, raw in enumerate(raw_episodes or []):
        identity = raw.get("episode_id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        episode = episode_from_json(raw, f"{label}: episode {identity}", problems)
        if episode is not None:
            episodes.append(episode)
            missing = [
                image for image in episode.reference_images if not (path.parent / image).is_file()
            ]
            if missing:
                problems.append(f"{label}: episode {identity}: reference_images: missing {missing}")
    ids = [episode.episode_id for episode in episodes]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        problems.append(f"{label}: episode ids repeat: {repeated}")
    unknown = sorted(set(selection or []) - set(ids))
    if unknown:
        problems.append(f"{label}: default_selection names unknown episodes {unknown}")
    problems += _shared_test_towns(label, episodes)
    if problems:
        raise TaskFileError(label, problems)
    return AgosSuite(
        path=path,
        name=name,
        description=str(document.get("description", "")),
        default_selection=tuple(selection),
        episodes=tuple(episodes),
    )


def _shared_test_towns(label: str, episodes: list[AgosEpisode]) -> list[str]:
    """Towns holding test episodes and training or validation episodes too: AGOS-Bench
    tests on "a disjoint town"."""
    test = {episode.scene for episode in episodes if episode.split == "test"}
    other = {episode.scene for episode in episodes if episode.split != "test"}
    return [
        f"{label}: town {town} holds test and train/val episodes; test towns must be disjoint"
        for town in sorted(test & other)
    ]


def save_agos_suite(
    path: Path,
    *,
    name: str,
    description: str,
    episodes: list[AgosEpisode],
    default_selection: list[str],
) -> Path:
    """Write a suite file, one line per episode (for grep and diff)."""
    header = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "benchmark": BENCHMARK,
        "description": description,
        "default_selection": default_selection,
    }
    lines = ["{"]
    lines += [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in header.items()]
    lines.append('  "episodes": [')
    lines += [
        f"    {json.dumps(episode_to_json(episode))}{',' if i < len(episodes) - 1 else ''}"
        for i, episode in enumerate(episodes)
    ]
    lines += ["  ]", "}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ground_truth_record(episode: AgosEpisode, start_facts: dict[str, Any]) -> dict[str, Any]:
    """The STARTED event's record of an AGOS episode: what the evaluator scores with.

    Args:
        episode: the episode.
        start_facts: the referee's facts at the start (``AgosReferee.start_facts``).
    """
    ugv = episode.ugv_start
    return {
        "episode_id": episode.episode_id,
        "benchmark": BENCHMARK,
        "scene": episode.scene,
        "family": episode.family,
        "setting": episode.setting,
        "split": episode.split,
        "action_budget": episode.action_budget,
        "start": [ugv.x, ugv.y, ugv.z, ugv.yaw],
        "target": list(episode.target_center),
        "target_object_id": episode.target_object_id,
        "reference_length_m": episode.reference_length_m,
        "success_radius_m": episode.success_radius_m,
        "agos": start_facts,
    }


def task_text(episode: AgosEpisode) -> str:
    """The instruction both agents get: the target (its reference images, or its name where
    the suite has no photograph of it: a CARLA map's suite built without a server), the town
    and the search region (AGOS-Bench: the map M of region S), never the target's
    position."""
    region = episode.region
    subject = (
        "the vehicle shown in the reference images"
        if episode.reference_images
        else f"the {episode.target_name}"
    )
    return (
        f"Find {subject} in town {episode.scene}, region "
        f"x {region.x_min:.1f} .. {region.x_max:.1f} m, y {region.y_min:.1f} .. "
        f"{region.y_max:.1f} m; the UGV confirms it from within {episode.success_radius_m:g} m."
    )


def parse_task_text(text: str) -> Region:
    """The region of a ``task_text``.

    Raises:
        ConfigError: the text holds no region.
    """
    match = re.search(
        r"region x (-?[\d.]+) \.\. (-?[\d.]+) m, y (-?[\d.]+) \.\. (-?[\d.]+) m", text
    )
    if match is None:
        raise ConfigError(f"task text {text!r} names no region")
    x_min, x_max, y_min, y_max = (float(value) for value in match.groups())
    return Region(x_min, y_min, x_max, y_max)
