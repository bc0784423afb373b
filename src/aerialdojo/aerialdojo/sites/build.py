"""From a surveyed site to an AerialDojo-format task suite (``aerialdojo tasks from-site``).

One navigation task per (start, target) pair the site lists (every pair by default), each as
a SemanticOGS and an ImageOGS episode (AerialDojo-200K, section 3.2): the goal names the
target, the landmark its survey names (or the nearest), the compass direction of the target
from that landmark computed from the measured positions, and the description or the
photograph. References are planned with Hybrid A* in the site's free space (its obstacles,
or the embedded scene it is) inside its geofence; a site without a map gets no reference
actions and the straight-line distance as its reference length (docs/sites.md).
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image, ImageOps

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import compass_direction
from aerialdojo.sites.site import Site, SiteStart, SiteTarget
from aerialdojo.sites.world import SiteWorld, site_world
from aerialdojo.tasks.candidates import goal_twins, plan_reference
from aerialdojo.tasks.episode import (
    REPRESENTATION_IMAGE,
    REPRESENTATION_SEMANTIC,
    Episode,
    ReferencePath,
)
from aerialdojo.tasks.planner import KnownRays, PlannerConfig
from aerialdojo.tasks.serialization import written_pose, written_value
from aerialdojo.tasks.settings import SETTINGS, filter_problems, setting_for_length
from aerialdojo.tasks.site_record import FREE_SPACE_UNMAPPED, SiteRecord
from aerialdojo.tasks.suite import SUITE_FILE, GenerationInfo, SceneInventory, Suite, save_suite

IMAGES_DIR = "images"
#: The longest side of a reference photograph in the suite, pixels: AerialDojo-200K's
#: camera edge (section 3.1); photographs keep their aspect ratio.
DEFAULT_IMAGE_SIZE = 640
#: A surveyed site is a place no agent was trained in: every episode is a test episode.
SITE_SPLIT = "test"
#: The scene type a real site's inventory row names (embedded scenes name their own).
SITE_SCENE_TYPE = "Site"
#: What the suite's generation block names as the planner of an unmapped site.
STRAIGHT_LINE = "straight_line"


@dataclass(frozen=True, kw_only=True)
class SkippedPair:
    """A (start, target) pair that became no task, and why."""

    start: str
    target: str
    reason: str

    def __str__(self) -> str:
        return f"{self.start} -> {self.target}: {self.reason}"


@dataclass(frozen=True, kw_only=True)
class SiteBuild:
    """A built suite and what the build has to say.

    Attributes:
        suite: the written suite.
        skipped: pairs of the default every-pair list that became no task.
        notes: what a reader of the suite should know (an unmapped reference that
            leaves the geofence, say).
    """

    suite: Suite
    skipped: tuple[SkippedPair, ...]
    notes: tuple[str, ...]

    def messages(self) -> list[str]:
        """What a command says of the build besides the suite: skipped pairs and notes."""
        return [f"skipped {pair}" for pair in self.skipped] + [f"note: {n}" for n in self.notes]


def from_site_command(site: Path | str, out: Path | str, image_size: int) -> str:
    """The command line that builds a suite (recorded in it, so that it can be rerun)."""
    words = ["aerialdojo", "tasks", "from-site", str(site), "--out", str(out)]
    if image_size != DEFAULT_IMAGE_SIZE:
        words += ["--image-size", str(image_size)]
    return shlex.join(words)


def _straight_line(start: SiteStart, target: SiteTarget) -> ReferencePath | str:
    """An unmapped site's reference: the start alone, L = d_E (a lower bound of any route)."""
    start_pose, anchor = written_pose(start.pose), written_pose(target.anchor)
    euclidean = written_value(math.dist(start_pose.position, anchor.position))
    problems = filter_problems(euclidean, euclidean, detour=False)
    if problems or setting_for_length(euclidean) is None:
        return "; ".join(problems) or f"L=d_E={euclidean:g} m is in no setting"
    return ReferencePath(
        poses=(start_pose,), actions=(), length_m=euclidean, euclidean_m=euclidean, detour_ratio=1.0
    )


def _leaves_fence(site: Site, start: SiteStart, target: SiteTarget) -> bool:
    """Whether the straight line from a start to an anchor leaves the geofence (checked
    every 0.1 m)."""
    a, b = start.pose.position, target.anchor.position
    steps = max(int(math.dist(a, b) / 0.1), 1)
    return any(
        not site.geofence.contains(a + (b - a) * (k / steps), margin=0.0) for k in range(steps + 1)
    )


def _write_image(target: SiteTarget, suite_dir: Path, site: str, size: int) -> str:
    """The target's photograph as a PNG next to the suite, its orientation applied and its
    longest side at most ``size`` pixels; returns its path relative to the suite."""
    relative = f"{IMAGES_DIR}/{site}/{target.target_id}.png"
    path = suite_dir / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    with Image.open(target.reference_image) as photo:
        picture = ImageOps.exif_transpose(photo).convert("RGB")
    picture.thumbnail((size, size), Image.Resampling.LANCZOS)
    picture.save(path, format="PNG", optimize=True)
    return relative


def _default_selection(episodes: list[Episode]) -> list[str]:
    """One twin of every task, in suite order, alternating SemanticOGS and ImageOGS: each
    task flown once (a robot's time is dear; ``filter=all`` flies both twins)."""
    twins: dict[str, dict[str, str]] = {}
    for episode in episodes:
        twins.setdefault(episode.task_id, {})[episode.goal.representation] = episode.episode_id
    return [
        pair[REPRESENTATION_SEMANTIC if number % 2 == 0 else REPRESENTATION_IMAGE]
        for number, pair in enumerate(twins.values())
    ]


def _scene_row(site: Site) -> tuple[SceneInventory, str]:
    """The suite's inventory row of the site, and its distribution."""
    if site.embedded_scene:
        from aerialdojo.sim.embedded.scenes import parse_scene_name  # noqa: PLC0415

        scene_type, variant = parse_scene_name(site.embedded_scene)
        type_name, distribution = scene_type.name, ("id" if variant == 0 else "ood")
    else:
        type_name, distribution = SITE_SCENE_TYPE, "ood"
    row = SceneInventory(
        scene=site.scene,
        scene_type=type_name,
        family=site.family,
        distribution=distribution,
        landmarks=len(site.landmarks),
        objects=len(site.targets),
        anchors=len(site.targets),
    )
    return row, distribution


def build_site_suite(
    site: Site, out: Path, *, command: str, image_size: int = DEFAULT_IMAGE_SIZE
) -> SiteBuild:
    """Build the suite of a loaded site into ``out`` (``suite.json`` and ``images/``).

    Args:
        site: the site (``sites.site.load_site``).
        out: the suite directory (created if missing).
        command: the command line that builds it, recorded in the suite.
        image_size: the longest side of the reference images in the suite, pixels.

    Returns:
        The suite, the default-list pairs that became no task, and notes.

    Raises:
        ConfigError: a pair the site lists became no task (every one is named with its
            reason), no pair became a task, or ``image_size`` is not positive.
        TaskFileError: the result does not validate (a bug; nothing is written).
    """
    if image_size < 1:
        raise ConfigError(f"--image-size {image_size}: must be positive")
    unmapped = site.free_space == FREE_SPACE_UNMAPPED
    world: SiteWorld | None = None if unmapped else site_world(site)
    config = PlannerConfig(collision_radius_m=site.collision_radius_m)
    rays: dict[str, KnownRays] = {}
    kept: list[tuple[SiteStart, SiteTarget, ReferencePath]] = []
    skipped: list[tuple[int, SkippedPair]] = []
    notes: list[str] = []
    for index, (start_name, target_id) in enumerate(site.pairs):
        start, target = site.start(start_name), site.target(target_id)
        if world is None:
            reference = _straight_line(start, target)
            if not isinstance(reference, str) and _leaves_fence(site, start, target):
                notes.append(
                    f"{start_name} -> {target_id}: the straight line leaves the geofence, so "
                    "the reference length d_E underestimates every route (survey obstacles)"
                )
        else:
            reference = plan_reference(
                world,
                written_pose(start.pose),
                written_pose(target.anchor),
                bounds=world.bounds,
                config=config,
                known_rays=rays.setdefault(start_name, KnownRays()),
            )
        if isinstance(reference, str):
            skipped.append(
                (index, SkippedPair(start=start_name, target=target_id, reason=reference))
            )
        else:
            kept.append((start, target, reference))
    if site.pairs_listed and skipped:
        raise ConfigError(*(f"{site.path}: tasks[{index}]: {pair}" for index, pair in skipped))
    if not kept:
        raise ConfigError(
            f"{site.path}: no (start, target) pair makes a task (AerialDojo-200K's filters: "
            "d_E > 3 m, 5 <= L < 100 m, a detour of at least 5 %)",
            *(f"{site.path}: {pair}" for _, pair in skipped),
        )
    out.mkdir(parents=True, exist_ok=True)
    images = {
        target.target_id: _write_image(target, out, site.name, image_size)
        for target in dict.fromkeys(target for _, target, _ in kept)
    }
    row, distribution = _scene_row(site)
    numbers: dict[str, int] = {}
    episodes: list[Episode] = []
    for start, target, reference in kept:
        setting = setting_for_length(reference.length_m)
        assert setting is not None  # kept references fall in a setting
        index = numbers.get(setting.name, 0)
        numbers[setting.name] = index + 1
        episodes.extend(
            goal_twins(
                scene=site.scene,
                family=site.family,
                distribution=distribution,
                split=SITE_SPLIT,
                setting=setting,
                index=index,
                start_id=start.name,
                target=target.as_object(instance_id=1 + site.targets.index(target)),
                landmark=target.landmark,
                direction=compass_direction(
                    np.asarray(target.landmark.position), np.asarray(target.position)
                ),
                reference=reference,
                reference_image=images[target.target_id],
            )
        )
    order = {setting.name: position for position, setting in enumerate(SETTINGS)}
    episodes.sort(
        key=lambda e: (
            order[e.setting],
            e.task_id,
            e.goal.representation != REPRESENTATION_SEMANTIC,
        )
    )
    suite = Suite(
        path=out / SUITE_FILE,
        name=site.name,
        description=site.description,
        generation=GenerationInfo(
            seed=0,
            planner=STRAIGHT_LINE if unmapped else "hybrid_astar",
            collision_radius_m=config.collision_radius_m,
            goal_tolerance_m=config.goal_tolerance_m,
            cell_m=config.cell_m,
            action_cost_m=config.action_cost_m,
        ),
        scenes=(row,),
        default_selection=tuple(_default_selection(episodes)),
        episodes=episodes,
        site=SiteRecord(
            name=site.name,
            sha256=site.sha256,
            command=command,
            frame=site.frame,
            geofence=site.geofence,
            start_tolerance=site.start_tolerance,
            free_space=site.free_space,
            embedded_scene=site.embedded_scene,
            simulator_scene=site.simulator_scene,
        ),
    )
    save_suite(suite)
    return SiteBuild(suite=suite, skipped=tuple(pair for _, pair in skipped), notes=tuple(notes))
