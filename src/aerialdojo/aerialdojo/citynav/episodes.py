"""CityNav episodes and suites: typed, validated value objects and their ``suite.json`` files
(CityNav, sections 3.1-3.2 and 5.1)."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.actions import CITYNAV_ACTIONS, STOP, Action, check_action, translational_length
from aerialdojo.citynav.city import GOAL_KINDS, CityMap, load_city_map
from aerialdojo.citynav.reference import Reference, replay
from aerialdojo.errors import AerialDojoError, InvalidActionError, TaskFileError
from aerialdojo.geometry import Pose
from aerialdojo.tasks.records import (
    FieldReader,
    check_suite_file,
    find_episode,
    is_number,
    is_text,
    numbers,
    select_episodes,
    texts,
)

BENCHMARK = "citynav"
SCHEMA_VERSION = 1
#: The dataset splits (CityNav, section 5.1); train and val_seen share scenes.
SPLITS = ("train", "val_seen", "val_unseen", "test_unseen")
#: Difficulty of the public files (``citynav_<split>_<difficulty>.json``); "all" otherwise.
SETTINGS = ("all", "easy", "medium", "hard")
#: "The starting point is randomly chosen within a 500-meter radius of the goal on the map.
#: The altitude is randomly set between 100 and 150 meters." (CityNav, section 3.2)
START_RADIUS_M = 500.0
START_ALTITUDE_M = (100.0, 150.0)
#: Actions allowed per episode, Stop included, unless the suite or the run says otherwise:
#: the paper names no budget; the authors' public evaluation runs 200 actions
#: (water-cookie/citynav, ``vlnce/parser.py`` ``--eval_max_timestep 200``, the loop of
#: ``vlnce/evaluate.py``). The human demonstrations' mean of 240 actions (section 3.4) is a
#: statistic of the dataset, not a budget.
DEFAULT_ACTION_BUDGET = 200
#: The camera's pitch, the fifth coordinate of CityNav's 5D pose: no action changes it, and
#: the authors' evaluation renders the nadir view.
NADIR_PITCH = -math.pi / 2.0


@dataclass(frozen=True, kw_only=True)
class CityNavEpisode:
    """One CityNav task instance.

    Agents are told the description, the action set and the budget (and may read their own
    GNSS pose and the city's landmark map); the goal's coordinates are for the task manager
    and the evaluator only (section 3.1, "For the use of GNSS").

    Attributes:
        episode_id: unique in its suite, e.g. ``CityNavTown_0-val_seen-0003``.
        scene: the city (map) name.
        split: one of ``SPLITS``.
        setting: one of ``SETTINGS``.
        start: the 5D pose's position and yaw; its pitch is ``pitch``.
        pitch: the camera pitch of the 5D pose, radians (``NADIR_PITCH``).
        description: the goal description; names at least one landmark.
        goal_kind: one of ``GOAL_KINDS``.
        goal_name: e.g. ``"red car"``.
        target_object_id: the goal object in its city (CityRefer object id for public data).
        target_position: the goal coordinates, map frame.
        landmark_names: the landmarks the description names, as the city map spells them.
        reference_actions: shortest-path actions from the start (Stop excluded).
        reference_length_m: L, their translational length.
        action_budget: actions allowed, Stop included.
        success_radius_m: the success sphere's radius (20 m).
    """

    episode_id: str
    scene: str
    split: str
    setting: str = "all"
    start: Pose
    pitch: float = NADIR_PITCH
    description: str
    goal_kind: str
    goal_name: str
    target_object_id: str
    target_position: tuple[float, float, float]
    landmark_names: tuple[str, ...]
    reference_actions: tuple[Action, ...]
    reference_length_m: float
    action_budget: int = DEFAULT_ACTION_BUDGET
    success_radius_m: float = 20.0

    benchmark = BENCHMARK
    family = "urban"
    agents = ("uav",)

    @property
    def reference(self) -> Reference:
        """The reference trajectory flown from the start (what the oracle replays)."""
        return replay(self.start, self.reference_actions)

    @property
    def start_distance_m(self) -> float:
        """Distance from the start to the goal on the map (2D)."""
        return math.dist((self.start.x, self.start.y), self.target_position[:2])


def _pose_list(pose: Pose, pitch: float) -> list[float]:
    position = [round(float(value), 4) for value in (pose.x, pose.y, pose.z)]
    return [*position, round(pitch, 6), round(float(pose.yaw), 6)]


def episode_to_json(episode: CityNavEpisode) -> dict[str, Any]:
    """The JSON object of one episode; ``start`` is the 5D pose [x, y, z, pitch, yaw]."""
    return {
        "episode_id": episode.episode_id,
        "scene": episode.scene,
        "split": episode.split,
        "setting": episode.setting,
        "start": _pose_list(episode.start, episode.pitch),
        "description": episode.description,
        "goal_kind": episode.goal_kind,
        "goal_name": episode.goal_name,
        "target_object_id": episode.target_object_id,
        "target_position": [round(float(v), 4) for v in episode.target_position],
        "landmark_names": list(episode.landmark_names),
        "reference_actions": [action.name for action in episode.reference_actions],
        "reference_length_m": round(episode.reference_length_m, 4),
        "action_budget": episode.action_budget,
        "success_radius_m": episode.success_radius_m,
    }


def _actions(names: list[str]) -> tuple[Action, ...]:
    """CityNav actions by name, each with its one magnitude.

    Raises:
        InvalidActionError: a name outside the CityNav set, or Stop.
    """
    kinds = {kind.name: kind for kind in CITYNAV_ACTIONS}
    actions = []
    for name in names:
        kind = kinds.get(name)
        if kind is None or name == STOP:
            raise InvalidActionError(
                f"{name!r} is not a CityNav motion ({', '.join(k for k in kinds if k != STOP)})"
            )
        actions.append(Action(name, kind.magnitudes[0]))
        check_action(actions[-1], CITYNAV_ACTIONS)
    return tuple(actions)


def episode_from_json(
    raw: Any, where: str, problems: list[str], city: Callable[[str], CityMap]
) -> CityNavEpisode | None:
    """The episode of a JSON object, or None with every problem appended to ``problems``.

    Args:
        raw: the JSON object.
        where: file and episode, for the problems.
        problems: collects the problems.
        city: the public map of a scene (its ground height and landmark names).
    """
    read = FieldReader(raw, where, problems)
    count = len(problems)
    positive = lambda v: is_number(v) and v > 0  # noqa: E731
    fields = {
        "episode_id": read.get("episode_id", is_text, "a non-empty string"),
        "scene": read.get("scene", is_text, "a scene name"),
        "split": read.get("split", lambda v: v in SPLITS, f"one of {', '.join(SPLITS)}"),
        "setting": read.get("setting", lambda v: v in SETTINGS, f"one of {', '.join(SETTINGS)}"),
        "start": read.get("start", numbers(5), "the 5D pose [x, y, z, pitch, yaw]"),
        "description": read.get("description", is_text, "a non-empty description"),
        "goal_kind": read.get("goal_kind", lambda v: v in GOAL_KINDS, f"one of {GOAL_KINDS}"),
        "goal_name": read.get("goal_name", is_text, "a non-empty string"),
        "target_object_id": read.get("target_object_id", is_text, "an object id"),
        "target_position": read.get("target_position", numbers(3), "[x, y, z]"),
        "landmark_names": read.get(
            "landmark_names", lambda v: texts(v) and bool(v), "a non-empty list of names"
        ),
        "reference_actions": read.get("reference_actions", texts, "a list of action names"),
        "reference_length_m": read.get(
            "reference_length_m", lambda v: is_number(v) and v >= 0, "a length >= 0"
        ),
        "action_budget": read.get(
            "action_budget", lambda v: isinstance(v, int) and v > 0, "an integer > 0"
        ),
        "success_radius_m": read.get("success_radius_m", positive, "a radius > 0"),
    }
    if len(problems) > count:
        return None
    try:
        actions = _actions(fields["reference_actions"])
    except InvalidActionError as error:
        problems.append(f"{where}: reference_actions: {error}")
        return None
    x, y, z, pitch, yaw = (float(v) for v in fields["start"])
    episode = CityNavEpisode(
        **{
            **fields,
            "start": Pose(x, y, z, yaw),
            "pitch": pitch,
            "target_position": tuple(float(v) for v in fields["target_position"]),
            "landmark_names": tuple(fields["landmark_names"]),
            "reference_actions": actions,
            "reference_length_m": float(fields["reference_length_m"]),
            "success_radius_m": float(fields["success_radius_m"]),
        }
    )
    _check_semantics(episode, where, problems, city)
    return None if len(problems) > count else episode


def _check_semantics(
    episode: CityNavEpisode, where: str, problems: list[str], city: Callable[[str], CityMap]
) -> None:
    """The paper's start rules, the landmarks and the reference's length."""
    try:
        city_map = city(episode.scene)
    except AerialDojoError as error:
        problems.append(f"{where}: scene: {error}")
        return
    if episode.start_distance_m > START_RADIUS_M + 1e-6:
        problems.append(
            f"{where}: start: {episode.start_distance_m:.1f} m from the goal on the map, more "
            f"than {START_RADIUS_M:g} m"
        )
    altitude = episode.start.z - city_map.ground_z
    low, high = START_ALTITUDE_M
    if not low - 1e-6 <= altitude <= high + 1e-6:
        problems.append(
            f"{where}: start: altitude {altitude:.1f} m above the ground, not in {low:g}-{high:g} m"
        )
    for name in episode.landmark_names:
        try:
            city_map.landmark(name)
        except KeyError as error:
            problems.append(f"{where}: landmark_names: {error.args[0]}")
        if name.lower() not in episode.description.lower():
            problems.append(f"{where}: description: does not name landmark {name!r}")
    length = translational_length(episode.reference_actions)
    if not math.isclose(length, episode.reference_length_m, abs_tol=1e-3):
        problems.append(
            f"{where}: reference_length_m: {episode.reference_length_m:g}, but the "
            f"reference actions translate {length:g} m"
        )


@dataclass(frozen=True, kw_only=True)
class CityNavSuite:
    """A loaded CityNav suite.

    Attributes:
        path: the ``suite.json`` it came from.
        name: suite name.
        description: free text.
        maps_dir: directory of the city map files of its public scenes ("" for embedded
            cities only), relative paths resolved against the suite file.
        default_selection: episode ids run when no filter is given.
        episodes: every episode, in file order.
    """

    path: Path
    name: str
    description: str
    maps_dir: str
    default_selection: tuple[str, ...]
    episodes: tuple[CityNavEpisode, ...]

    def episode(self, episode_id: str) -> CityNavEpisode:
        """The episode called ``episode_id``.

        Raises:
            KeyError: no such episode; ``args[0]`` names it.
        """
        return find_episode(self.name, self.episodes, episode_id)

    def select(self, text: str = "") -> list[str]:
        """Ids of the episodes a filter selects: ``""`` the default selection, ``"all"``
        everything, else ``key=value[|value],...`` over ``scene``, ``split``, ``setting``,
        ``goal_kind``.

        Raises:
            ConfigError: a malformed clause or an unknown key.
        """
        return select_episodes(
            self.episodes, self.default_selection, text, ("scene", "split", "setting", "goal_kind")
        )

    def city_map(self, scene: str) -> CityMap:
        """The public map of one of the suite's scenes.

        Raises:
            UnknownSceneError: no map file and no embedded city of that name.
        """
        return load_city_map(scene, self.resolved_maps_dir)

    @property
    def resolved_maps_dir(self) -> str:
        """``maps_dir`` as a path from the working directory ("" if none)."""
        return str(self.path.parent / self.maps_dir) if self.maps_dir else ""


def load_citynav_suite(path: str | Path) -> CityNavSuite:
    """Load and validate a CityNav suite file.

    Raises:
        TaskFileError: unreadable, not JSON, or invalid; every problem is listed.
    """
    path = Path(path)
    check_suite_file(path)  # size and shape before the file is read whole
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise TaskFileError(str(path), [f"{path}: cannot read as JSON: {error}"]) from error
    problems: list[str] = []
    top = FieldReader(document, str(path), problems)
    if top.get("benchmark", lambda v: v == BENCHMARK, f"{BENCHMARK!r}") is None:
        raise TaskFileError(str(path), problems)
    top.get("schema_version", lambda v: v == SCHEMA_VERSION, str(SCHEMA_VERSION))
    name = top.get("name", is_text, "a suite name")
    selection = top.get("default_selection", texts, "a list of episode ids")
    maps_dir = document.get("maps_dir", "")
    if not isinstance(maps_dir, str):
        problems.append(f"{path}: maps_dir: expected a directory path, got {maps_dir!r}")
        maps_dir = ""
    resolved = str(path.parent / maps_dir) if maps_dir else ""
    raw_episodes = top.get("episodes", lambda v: isinstance(v, list), "a list of episodes")
    maps: dict[str, CityMap] = {}

    def city(scene: str) -> CityMap:
        if scene not in maps:
            maps[scene] = load_city_map(scene, resolved)
        return maps[scene]

    episodes = []
    for index, raw in enumerate(raw_episodes or []):
        identity = raw.get("episode_id", f"#{index}") if isinstance(raw, dict) else f"#{index}"
        episode = episode_from_json(raw, f"{path}: episode {identity}", problems, city)
        if episode is not None:
            episodes.append(episode)
    ids = [episode.episode_id for episode in episodes]
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        problems.append(f"{path}: episode ids repeat: {repeated}")
    unknown = sorted(set(selection or []) - set(ids))
    if unknown:
        problems.append(f"{path}: default_selection names unknown episodes {unknown}")
    if problems:
        raise TaskFileError(str(path), problems)
    return CityNavSuite(
        path=path,
        name=name,
        description=str(document.get("description", "")),
        maps_dir=maps_dir,
        default_selection=tuple(selection),
        episodes=tuple(episodes),
    )


def save_citynav_suite(
    path: Path,
    *,
    name: str,
    description: str,
    episodes: list[CityNavEpisode],
    default_selection: list[str],
    maps_dir: str = "",
) -> Path:
    """Write a suite file, one line per episode (for grep and diff)."""
    header: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "name": name,
        "benchmark": BENCHMARK,
        "description": description,
    }
    if maps_dir:
        header["maps_dir"] = maps_dir
    header["default_selection"] = default_selection
    lines = ["{"]
    lines += [f"  {json.dumps(key)}: {json.dumps(value)}," for key, value in header.items()]
    lines.append('  "episodes": [')
    lines += [
        f"    {json.dumps(episode_to_json(e), ensure_ascii=False)}{',' if i < len(episodes) - 1 else ''}"  # noqa: E501
        for i, e in enumerate(episodes)
    ]
    lines += ["  ]", "}"]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def ground_truth_record(episode: CityNavEpisode) -> dict[str, Any]:
    """What the evaluator scores a CityNav episode with (STARTED's episode_json)."""
    start = episode.start
    return {
        "episode_id": episode.episode_id,
        "benchmark": BENCHMARK,
        "scene": episode.scene,
        "family": episode.family,
        "setting": episode.setting,
        "split": episode.split,
        "action_budget": episode.action_budget,
        "start": [float(start.x), float(start.y), float(start.z), float(start.yaw)],
        "target": list(episode.target_position),
        "target_object_id": episode.target_object_id,
        "goal_kind": episode.goal_kind,
        "reference_length_m": episode.reference_length_m,
        "success_radius_m": episode.success_radius_m,
    }
