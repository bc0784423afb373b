"""Task suites: loading (fully validated), lookup, filtering, and writing ``suite.json`` files."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from aerialdojo.documents import SUITE, DocumentError, load_json
from aerialdojo.errors import ConfigError, TaskFileError
from aerialdojo.sim.annotations import FAMILIES
from aerialdojo.tasks.episode import ALL_REPRESENTATIONS, REPRESENTATION_SUFFIXES, Episode
from aerialdojo.tasks.records import check_suite_file
from aerialdojo.tasks.serialization import (
    SCHEMA_VERSION,
    SITE_SCHEMA_VERSION,
    JsonObject,
    episode_from_json,
    episode_to_json,
)
from aerialdojo.tasks.settings import SETTINGS_BY_NAME, SPLIT_PERCENTAGES
from aerialdojo.tasks.site_record import SiteRecord, site_record_from_json, site_record_to_json
from aerialdojo.tasks.validation import document_problems

SUITE_FILE = "suite.json"


@dataclass(frozen=True, kw_only=True)
class SceneInventory:
    """What a suite records about one of its scenes (AerialDojo-200K, Table 7 columns).

    Attributes:
        scene: scene name, e.g. ``"Mall_0"``.
        scene_type: e.g. ``"Mall"``.
        family: one of ``sim.annotations.FAMILIES``.
        distribution: ``"id"`` or ``"ood"``.
        landmarks: annotated landmarks.
        objects: annotated target objects.
        anchors: annotated object anchors.
    """

    scene: str
    scene_type: str
    family: str
    distribution: str
    landmarks: int
    objects: int
    anchors: int


@dataclass(frozen=True, kw_only=True)
class ReferenceImageSpec:
    """The camera reference images were rendered with (at the target's anchor)."""

    camera: str
    width: int
    height: int
    fov_deg: float


@dataclass(frozen=True, kw_only=True)
class GenerationInfo:
    """How a suite's reference trajectories were made.

    Attributes:
        seed: generator seed.
        planner: planner name, e.g. ``"hybrid_astar"``.
        collision_radius_m: the agent's collision radius used in every sweep.
        goal_tolerance_m: references end this close to the target anchor.
        cell_m: the planner's closed-set cell edge.
        action_cost_m: the planner's per-action cost.
        reference_image: the reference image camera, None if the suite has no images.
    """

    seed: int
    planner: str
    collision_radius_m: float
    goal_tolerance_m: float
    cell_m: float
    action_cost_m: float
    reference_image: ReferenceImageSpec | None = None


@dataclass(frozen=True, kw_only=True)
class Suite:
    """A loaded task suite.

    Attributes:
        path: the ``suite.json`` it was loaded from (reference images are relative to it).
        name: suite name.
        description: free text.
        generation: how the references were made.
        scenes: inventory of the scenes the episodes use.
        default_selection: episode ids run when no filter is given.
        episodes: every episode, in file order.
        site: the surveyed site the suite was built from (``aerialdojo tasks
            from-site``), None for a suite generated on scenes.
        representations: the goal representations its tasks come in (both: every task a
            SemanticOGS and an ImageOGS twin; SemanticOGS alone where no photograph of the
            targets could be taken).
    """

    path: Path
    name: str
    description: str = ""
    generation: GenerationInfo
    scenes: tuple[SceneInventory, ...]
    default_selection: tuple[str, ...]
    episodes: list[Episode]
    site: SiteRecord | None = None
    representations: tuple[str, ...] = ALL_REPRESENTATIONS
    _by_id: dict[str, Episode] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_by_id", {e.episode_id: e for e in self.episodes})

    def episode(self, episode_id: str) -> Episode:
        """The episode with id ``episode_id``.

        Raises:
            KeyError: no such episode; ``args[0]`` is a message naming it.
        """
        try:
            return self._by_id[episode_id]
        except KeyError:
            raise KeyError(f"suite {self.name}: no episode {episode_id!r}") from None

    def filter(self, text: str = "") -> list[Episode]:
        """Episodes matching a filter, in file order.

        Args:
            text: ``""`` for the default selection, ``"all"`` for every episode, or
                comma-separated ``key=value`` clauses that must all hold, a value being
                alternatives separated by ``|``: e.g. ``"split=test,setting=base|standard"``.
                Keys: ``scene``, ``scene_type``, ``family``, ``distribution``, ``split``,
                ``setting``, ``representation``.

        Raises:
            ConfigError: a malformed clause, an unknown key or a value that key never takes.
        """
        text = text.strip()
        if not text:
            return [self._by_id[episode_id] for episode_id in self.default_selection]
        if text == "all":
            return list(self.episodes)
        tests = [self._clause(clause.strip(), text) for clause in text.split(",")]
        return [episode for episode in self.episodes if all(test(episode) for test in tests)]

    def select(self, text: str = "") -> list[str]:
        """Ids of the episodes ``filter(text)`` returns.

        Raises:
            ConfigError: as ``filter``.
        """
        return [episode.episode_id for episode in self.filter(text)]

    def _clause(self, clause: str, text: str) -> Callable[[Episode], bool]:
        key, equals, value = clause.partition("=")
        key = key.strip()
        keys = self._filter_keys()
        if not equals or not value.strip():
            raise ConfigError(f"filter {text!r}: clause {clause!r} is not key=value")
        if key not in keys:
            raise ConfigError(
                f"filter {text!r}: unknown key {key!r}; keys: {', '.join(sorted(keys))}"
            )
        read, legal = keys[key]
        wanted = {alternative.strip() for alternative in value.split("|")}
        unknown = sorted(wanted - legal)
        if unknown:
            raise ConfigError(
                f"filter {text!r}: {key} is never {', '.join(map(repr, unknown))}; "
                f"values: {', '.join(sorted(legal))}"
            )
        return lambda episode: read(episode) in wanted

    def _filter_keys(self) -> dict[str, tuple[Callable[[Episode], str], set[str]]]:
        scene_types = {scene.scene: scene.scene_type for scene in self.scenes}
        splits = {name for pair in SPLIT_PERCENTAGES.values() for name, _ in pair}
        return {
            "scene": (lambda e: e.scene, set(scene_types)),
            "scene_type": (lambda e: scene_types[e.scene], set(scene_types.values())),
            "family": (lambda e: e.family, set(FAMILIES)),
            "distribution": (lambda e: e.distribution, set(SPLIT_PERCENTAGES)),
            "split": (lambda e: e.split, splits),
            "setting": (lambda e: e.setting, set(SETTINGS_BY_NAME)),
            "representation": (lambda e: e.goal.representation, set(REPRESENTATION_SUFFIXES)),
        }

    def reference_image_path(self, episode: Episode) -> Path | None:
        """Absolute path of an ImageOGS episode's reference image; None for SemanticOGS."""
        if not episode.goal.reference_image:
            return None
        return self.path.parent / episode.goal.reference_image


def shipped_suites_dir() -> Path:
    """Directory of the suites shipped with the package (``aerialdojo/suites``)."""
    return Path(str(resources.files("aerialdojo").joinpath("suites")))


def resolve_suite(name_or_path: str | Path) -> Path:
    """The ``suite.json`` a suite name or path refers to.

    Args:
        name_or_path: a ``suite.json`` path, a directory holding one, or the name of a
            shipped suite (e.g. ``"aerialdojo_mini"``).

    Raises:
        ConfigError: neither an existing suite file nor a shipped suite name.
    """
    path = Path(name_or_path)
    if path.is_dir():
        path = path / SUITE_FILE
    if path.is_file():
        return path
    shipped = shipped_suites_dir() / str(name_or_path) / SUITE_FILE
    if shipped.is_file():
        return shipped
    names = sorted(p.parent.name for p in shipped_suites_dir().glob(f"*/{SUITE_FILE}"))
    raise ConfigError(
        f"suite {str(name_or_path)!r} is neither a suite file nor a shipped suite "
        f"({', '.join(names) or 'none shipped'})"
    )


def _read_document(path: Path, source: str) -> tuple[Any, list[str]]:
    try:
        check_suite_file(path, source)
        return load_json(path, SUITE, source), []
    except TaskFileError as error:
        return None, list(error.problems)
    except DocumentError as error:
        return None, [str(error)]


def _checked_document(path: Path, source: str) -> tuple[Any, list[str]]:
    document, problems = _read_document(path, source)
    if problems:
        return None, problems
    return document, document_problems(document, source=source, base_dir=path.parent)


def validate_suite(path: str | Path, *, source: str | None = None) -> list[str]:
    """Every problem of an AerialDojo suite file, one line each naming file, episode id and
    field: checked against its JSON Schema, then semantically (``tasks.validation``) and for
    its reference images. An empty list means the file loads. (Each benchmark validates its
    own suites: ``protocols.EpisodeRules.validate_suite``.)

    Args:
        path: the suite file.
        source: how problems name the file (default: ``path``).
    """
    path = Path(path)
    label = source or str(path)
    _, problems = _checked_document(path, label)
    return problems


def load_suite(path: str | Path, *, source: str | None = None) -> Suite:
    """Load and fully validate an AerialDojo suite file.

    Args:
        path: the suite file.
        source: how problems name the file (default: ``path``).

    Raises:
        TaskFileError: the file is unreadable or invalid; ``problems`` lists every problem.
    """
    path = Path(path)
    label = source or str(path)
    document, problems = _checked_document(path, label)
    if problems:
        raise TaskFileError(label, problems)
    return suite_from_json(document, path)


def suite_from_json(document: JsonObject, path: Path) -> Suite:
    """The suite of a document that passed validation, as if loaded from ``path``."""
    generation = dict(document["generation"])
    image = generation.pop("reference_image", None)
    return Suite(
        path=path,
        name=document["name"],
        description=document.get("description", ""),
        generation=GenerationInfo(
            **generation, reference_image=ReferenceImageSpec(**image) if image else None
        ),
        scenes=tuple(SceneInventory(**scene) for scene in document["scenes"]),
        default_selection=tuple(document["default_selection"]),
        episodes=[episode_from_json(raw, document["benchmark"]) for raw in document["episodes"]],
        site=site_record_from_json(document["site"]) if "site" in document else None,
        representations=tuple(document.get("representations", ALL_REPRESENTATIONS)),
    )


def suite_to_json(suite: Suite) -> JsonObject:
    """The document of ``suite`` (what ``save_suite`` writes)."""
    generation = {
        key: value for key, value in vars(suite.generation).items() if key != "reference_image"
    }
    if suite.generation.reference_image is not None:
        generation["reference_image"] = vars(suite.generation.reference_image)
    document: JsonObject = {
        "schema_version": SITE_SCHEMA_VERSION if suite.site is not None else SCHEMA_VERSION,
        "name": suite.name,
        "benchmark": "aerialdojo",
    }
    if suite.description:
        document["description"] = suite.description
    if set(suite.representations) != set(ALL_REPRESENTATIONS):
        document["representations"] = list(suite.representations)
    document["generation"] = generation
    if suite.site is not None:
        document["site"] = site_record_to_json(suite.site)
    document.update(
        scenes=[vars(scene) for scene in suite.scenes],
        default_selection=list(suite.default_selection),
        episodes=[episode_to_json(episode) for episode in suite.episodes],
    )
    return document


def dumps_suite(document: JsonObject) -> str:
    """A suite document as text: one line per scene and per episode, for grep and diff."""
    lines = ["{"]
    items = list(document.items())
    for position, (key, value) in enumerate(items):
        comma = "," if position < len(items) - 1 else ""
        if isinstance(value, list) and value and isinstance(value[0], dict):
            lines.append(f"  {json.dumps(key)}: [")
            lines.extend(
                f"    {json.dumps(element, ensure_ascii=False)}{',' if i < len(value) - 1 else ''}"
                for i, element in enumerate(value)
            )
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def save_suite(suite: Suite, path: str | Path | None = None) -> Path:
    """Write ``suite`` as a suite file (default: ``suite.path``) and return its path.

    Raises:
        TaskFileError: the suite does not validate (nothing is written).
    """
    path = Path(path) if path is not None else suite.path
    document = suite_to_json(suite)
    problems = document_problems(document, source=str(path), base_dir=None)
    if problems:
        raise TaskFileError(str(path), problems)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps_suite(document), encoding="utf-8")
    return path
