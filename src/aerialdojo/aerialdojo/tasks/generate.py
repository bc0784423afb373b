"""Task suite generation from any scene with a collision world (AerialDojo-200K, section 3.2-3.3).

Candidate pairs, reference trajectories, filters, settings, twins, splits, reference images
and a default selection, written as a suite file.

``build_suite`` works on any scene given its annotations, a collision world and a reference
image renderer (``SceneSource``); ``generate_suite`` feeds it the embedded simulator's scenes.
"""

from __future__ import annotations

import io
import itertools
import math
import random
import zlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from PIL import Image

from aerialdojo.errors import ConfigError
from aerialdojo.sim.annotations import SceneAnnotations, TargetObject
from aerialdojo.tasks.candidates import NavigationTask, plan_task, start_pose_for, twin_episodes
from aerialdojo.tasks.episode import REPRESENTATION_IMAGE, REPRESENTATION_SEMANTIC, Episode
from aerialdojo.tasks.planner import CollisionWorld, KnownRays, PlannerConfig
from aerialdojo.tasks.settings import SETTINGS, assign_splits
from aerialdojo.tasks.shards import ProgressSink, ShardProgress
from aerialdojo.tasks.suite import (
    SUITE_FILE,
    GenerationInfo,
    ReferenceImageSpec,
    SceneInventory,
    Suite,
    save_suite,
)

#: Episodes in a suite's default selection: a CI-sized evaluation.
DEFAULT_SELECTION_SIZE = 6
IMAGES_DIR = "images"

#: Renders the reference image of a target object (RGB, HxWx3 uint8) from its anchor.
ReferenceRenderer = Callable[[TargetObject], np.ndarray]


@dataclass(frozen=True, kw_only=True)
class SceneSource:
    """What generation needs of one scene.

    Attributes:
        annotations: landmarks, objects and anchors.
        world: collision queries for the planner.
        render_reference: the ImageOGS reference image of a target.
        reference_camera: the camera ``render_reference`` uses (recorded in the suite).
    """

    annotations: SceneAnnotations
    world: CollisionWorld
    render_reference: ReferenceRenderer
    reference_camera: ReferenceImageSpec


@dataclass(frozen=True, kw_only=True)
class SceneTasks:
    """The tasks chosen in one scene and the reference images written for them.

    Attributes:
        annotations: the scene's annotations.
        tasks: chosen navigation tasks, in the order they were found.
        images: reference image path (relative to the suite file) per target object id.
        candidates_planned: candidate pairs the planner ran on.
    """

    annotations: SceneAnnotations
    tasks: list[NavigationTask]
    images: dict[str, str] = field(default_factory=dict)
    candidates_planned: int = 0


def scene_seed(seed: int, scene: str) -> int:
    """A per-scene seed that does not depend on which other scenes are generated."""
    return zlib.crc32(f"{seed}:{scene}".encode())


def _setting_quotas(per_scene: int) -> dict[str, int]:
    """``per_scene`` tasks shared as evenly as possible, earlier settings first."""
    share, extra = divmod(per_scene, len(SETTINGS))
    return {s.name: share + (1 if i < extra else 0) for i, s in enumerate(SETTINGS)}


def choose_scene_tasks(
    source: SceneSource,
    *,
    seed: int,
    per_scene: int | None,
    config: PlannerConfig,
    max_candidates: int | None = None,
    progress: ProgressSink | None = None,
) -> tuple[list[NavigationTask], int]:
    """Plan candidate pairs of a scene in a seeded random order and keep the tasks that pass.

    With ``per_scene`` set, the scene's tasks are shared evenly between the settings: a
    task whose setting is full waits in reserve, the search stops once every setting is
    full, and reserve tasks fill what stays empty. Pairs that could only serve full settings
    (anchors at least as far apart as the longest open setting allows) are not planned.

    Args:
        source: the scene.
        seed: suite seed (the scene's own seed is derived from it and the scene name).
        per_scene: navigation tasks wanted; None keeps every task found (full generation).
        config: planner parameters.
        max_candidates: plan at most this many pairs.
        progress: told after every planned pair (``done`` counts planned pairs, ``total``
            is the most it may plan, ``kept`` the tasks found so far).

    Returns:
        The chosen tasks in the order found, and how many pairs were planned.
    """
    scene = source.annotations.scene
    objects = sorted(source.annotations.objects, key=lambda obj: obj.object_id)
    pairs = list(itertools.permutations(objects, 2))
    random.Random(scene_seed(seed, scene)).shuffle(pairs)
    most = len(pairs) if max_candidates is None else min(len(pairs), max_candidates)
    quotas = _setting_quotas(per_scene) if per_scene is not None else None
    counts: Counter[str] = Counter()
    chosen: list[NavigationTask] = []
    reserve: list[NavigationTask] = []
    planned = 0
    # Each object starts many pairs: later searches from a start reuse what earlier ones
    # found out about the rays from it.
    known_rays = KnownRays()
    for start_object, target_object in pairs:
        if max_candidates is not None and planned >= max_candidates:
            break
        if quotas is not None:
            open_settings = [s for s in SETTINGS if counts[s.name] < quotas[s.name]]
            if not open_settings:
                break
            reach = max(s.max_length_m for s in open_settings)
            separation = math.dist(
                start_pose_for(start_object).position, target_object.anchor.position
            )
            if separation >= reach:
                continue
        planned += 1
        found = plan_task(
            source.world,
            source.annotations,
            start_object,
            target_object,
            config=config,
            known_rays=known_rays,
        )
        if found is not None:
            if quotas is None or counts[found.setting.name] < quotas[found.setting.name]:
                chosen.append(found)
                counts[found.setting.name] += 1
            else:
                reserve.append(found)
        if progress is not None:
            progress(ShardProgress(shard=scene, done=planned, total=most, kept=len(chosen)))
    if per_scene is not None:
        chosen.extend(reserve[: max(0, per_scene - len(chosen))])
    return chosen, planned


def write_reference_images(
    source: SceneSource, tasks: Sequence[NavigationTask], suite_dir: Path
) -> dict[str, str]:
    """Render each target's reference image once and write it as a PNG next to the suite.

    Returns:
        Image path relative to ``suite_dir`` per target object id.
    """
    scene = source.annotations.scene
    images: dict[str, str] = {}
    for task in tasks:
        target = task.target_object
        if target.object_id in images:
            continue
        relative = f"{IMAGES_DIR}/{scene}/{target.object_id}.png"
        path = suite_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()
        Image.fromarray(source.render_reference(target), mode="RGB").save(
            buffer, format="PNG", optimize=True
        )
        path.write_bytes(buffer.getvalue())
        images[target.object_id] = relative
    return images


def plan_scene(
    source: SceneSource,
    suite_dir: Path,
    *,
    seed: int,
    per_scene: int | None,
    config: PlannerConfig,
    max_candidates: int | None = None,
    progress: ProgressSink | None = None,
) -> SceneTasks:
    """Choose a scene's tasks and write their reference images; ``progress`` hears of
    every planned pair and, last, of the finished scene."""
    tasks, planned = choose_scene_tasks(
        source,
        seed=seed,
        per_scene=per_scene,
        config=config,
        max_candidates=max_candidates,
        progress=progress,
    )
    images = write_reference_images(source, tasks, suite_dir)
    if progress is not None:
        scene = source.annotations.scene
        progress(
            ShardProgress(shard=scene, done=planned, total=planned, kept=len(tasks), finished=True)
        )
    return SceneTasks(
        annotations=source.annotations,
        tasks=tasks,
        images=images,
        candidates_planned=planned,
    )


def scene_episodes(scene_tasks: SceneTasks, *, seed: int) -> list[Episode]:
    """Number, split and twin a scene's tasks.

    Tasks are numbered per setting in the order found; splits follow
    ``settings.assign_splits`` with the scene's seed.
    """
    annotations = scene_tasks.annotations
    tasks = scene_tasks.tasks
    splits = assign_splits(
        [task.setting.name for task in tasks],
        annotations.distribution,
        scene_seed(seed, annotations.scene),
    )
    numbers: dict[str, int] = {}
    episodes: list[Episode] = []
    for task, split in zip(tasks, splits, strict=True):
        index = numbers.get(task.setting.name, 0)
        numbers[task.setting.name] = index + 1
        episodes.extend(
            twin_episodes(
                task,
                index=index,
                split=split,
                reference_image=scene_tasks.images[task.target_object.object_id],
            )
        )
    setting_order = {s.name: i for i, s in enumerate(SETTINGS)}
    # Within a task the SemanticOGS twin comes first ("sem" > "img" alphabetically).
    return sorted(
        episodes,
        key=lambda e: (setting_order[e.setting], e.task_id, e.goal.representation != "semantic"),
    )


def choose_default_selection(
    episodes: Sequence[Episode], count: int = DEFAULT_SELECTION_SIZE
) -> list[str]:
    """Short, varied Base episodes for a quick evaluation.

    Takes test-split tasks (any split if there is no Base test task), shortest references
    first, one task per family before a second, one per scene before a second, and
    alternates SemanticOGS and ImageOGS; only when distinct tasks run out does it add the
    other twin of tasks already chosen.
    """
    base = [e for e in episodes if e.setting == "base"]
    pool = [e for e in base if e.split == "test"] or base
    twins: dict[str, dict[str, Episode]] = {}
    for episode in pool:
        twins.setdefault(episode.task_id, {})[episode.goal.representation] = episode
    tasks = sorted(
        (pair for pair in twins.values() if len(pair) == 2),
        key=lambda pair: (
            pair[REPRESENTATION_SEMANTIC].reference.length_m,
            pair[REPRESENTATION_SEMANTIC].episode_id,
        ),
    )
    chosen: list[Episode] = []
    novelty: list[Callable[[Episode], bool]] = [
        lambda e: e.family not in {c.family for c in chosen},
        lambda e: e.scene not in {c.scene for c in chosen},
        lambda e: True,
    ]
    used: set[str] = set()
    for is_new in novelty:
        for pair in tasks:
            if len(chosen) == count:
                return [e.episode_id for e in chosen]
            representative = pair[REPRESENTATION_SEMANTIC]
            if representative.task_id in used or not is_new(representative):
                continue
            semantic_count = sum(c.goal.representation == REPRESENTATION_SEMANTIC for c in chosen)
            wanted = (
                REPRESENTATION_SEMANTIC
                if 2 * semantic_count <= len(chosen)
                else REPRESENTATION_IMAGE
            )
            chosen.append(pair[wanted])
            used.add(representative.task_id)
    return [e.episode_id for e in chosen]


def inventory_of(annotations: SceneAnnotations) -> SceneInventory:
    """The Table 7 inventory row of a scene."""
    return SceneInventory(
        scene=annotations.scene,
        scene_type=annotations.scene_type,
        family=annotations.family,
        distribution=annotations.distribution,
        landmarks=len(annotations.landmarks),
        objects=len(annotations.objects),
        anchors=sum(1 for obj in annotations.objects if obj.anchor is not None),
    )


def assemble_suite(
    planned: Sequence[SceneTasks],
    path: Path,
    *,
    name: str,
    seed: int,
    config: PlannerConfig,
    reference_camera: ReferenceImageSpec,
    description: str = "",
) -> Suite:
    """Write the suite file of planned scenes (their images are already next to ``path``).

    Raises:
        TaskFileError: the result does not validate (a bug; nothing is written).
    """
    episodes = [episode for scene in planned for episode in scene_episodes(scene, seed=seed)]
    suite = Suite(
        path=path,
        name=name,
        description=description,
        generation=GenerationInfo(
            seed=seed,
            planner="hybrid_astar",
            collision_radius_m=config.collision_radius_m,
            goal_tolerance_m=config.goal_tolerance_m,
            cell_m=config.cell_m,
            action_cost_m=config.action_cost_m,
            reference_image=reference_camera,
        ),
        scenes=tuple(inventory_of(scene.annotations) for scene in planned),
        default_selection=tuple(choose_default_selection(episodes)),
        episodes=episodes,
    )
    save_suite(suite)
    return suite


def build_suite(
    sources: Sequence[SceneSource],
    out: Path,
    *,
    name: str,
    seed: int,
    per_scene: int | None,
    config: PlannerConfig | None = None,
    max_candidates: int | None = None,
    description: str = "",
) -> Suite:
    """Generate a suite from scenes in this process.

    Args:
        sources: the scenes.
        out: directory of the suite (``suite.json`` and ``images/``).
        name: suite name.
        seed: suite seed.
        per_scene: navigation tasks per scene (each gives two episodes); None for all.
        config: planner parameters.
        max_candidates: plan at most this many pairs per scene.
        description: free text stored in the suite.

    Raises:
        ConfigError: no scenes.
    """
    if not sources:
        raise ConfigError("build_suite: no scenes given")
    config = config or PlannerConfig()
    out.mkdir(parents=True, exist_ok=True)
    planned = [
        plan_scene(
            source,
            out,
            seed=seed,
            per_scene=per_scene,
            config=config,
            max_candidates=max_candidates,
        )
        for source in sources
    ]
    return assemble_suite(
        planned,
        out / SUITE_FILE,
        name=name,
        seed=seed,
        config=config,
        reference_camera=sources[0].reference_camera,
        description=description,
    )
