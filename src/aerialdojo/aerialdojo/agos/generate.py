"""Generate AGOS episodes on the towns: target and distractor choice by setting (AGOS-Bench,
Table 2), regions, start poses, solvability (a reachable anchor that verifies the target),
reference images.

Table 2 and the solvability guarantee are the rules; ``ExtraRules`` names the rules beyond
them, each off by default. ``aerialdojo tasks generate --scenes AgosTown_1 --out DIR
[--per-setting 2] [--extra-rule NAME ...]`` calls ``generate_suite``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from PIL import Image

from aerialdojo.agos.episodes import (
    REGION_SIZE_M,
    SETTINGS,
    SUCCESS_RADIUS_M,
    AgosEpisode,
    save_agos_suite,
)
from aerialdojo.agos.grid import Region
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.planning import UGV_HEIGHT_M
from aerialdojo.agos.sensors import uav_rig, ugv_ring
from aerialdojo.agos.town import (
    NEUTRAL_COLOURS,
    SPLIT_TOWNS,
    Town,
    load_town,
    shape_class,
    town_map,
)
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.sim.embedded.renderer import render_views
from aerialdojo.tasks.shards import ProgressSink, ShardProgress, run_shards

#: Reference views of a car: (azimuth deg from +x, distance m, height m, pitch deg).
REFERENCE_VIEWS = ((45.0, 7.0, 2.4, -12.0), (160.0, 7.0, 2.4, -12.0), (270.0, 7.0, 2.4, -12.0))
REFERENCE_TOP_HEIGHT_M = 9.0
REFERENCE_PIXELS = 96
#: Vehicles longer than this are viewed from proportionally further, so that a bus fits the
#: image as a car does (cars, pickups and vans are not longer).
REFERENCE_FIT_M = 6.0
#: Under ``ExtraRules.ugv_start_60m_away``: the UGV starts at least this far along the road
#: from every verifying anchor.
MIN_START_ROUTE_M = 60.0


@dataclass(frozen=True, kw_only=True)
class ExtraRules:
    """Rules of episode generation that AGOS-Bench does not give (Table 2 gives the region
    size and the number of distractors per difficulty, "Expert Dataset" the solvability
    guarantee), each off by default. They made the first shipped suites easier for
    colour-based policies; a suite generated with any of them names them in its description.

    Attributes:
        no_neutral_targets: the target is never white, black, silver or grey.
        no_same_colour_easy_mid: an Easy or Mid region holds no other vehicle of the target's
            colour (Table 2 asks for no distractor, a vehicle "visually similar": the same
            colour and shape class).
        ugv_start_60m_away: the UGV starts at least ``MIN_START_ROUTE_M`` of road from every
            anchor that verifies the target.
        uav_start_out_of_view: the target is not visible from the UAV's start.
    """

    no_neutral_targets: bool = False
    no_same_colour_easy_mid: bool = False
    ugv_start_60m_away: bool = False
    uav_start_out_of_view: bool = False

    @classmethod
    def named(cls, names: Sequence[str]) -> ExtraRules:
        """The rules called ``names`` switched on.

        Raises:
            ConfigError: an unknown name.
        """
        unknown = sorted(set(names) - set(EXTRA_RULES))
        if unknown:
            raise ConfigError(
                f"unknown extra rule(s) {', '.join(unknown)}; rules: {', '.join(EXTRA_RULES)}"
            )
        return cls(**dict.fromkeys(names, True))

    @property
    def names(self) -> tuple[str, ...]:
        """The names of the rules switched on, in ``EXTRA_RULES`` order."""
        return tuple(name for name in EXTRA_RULES if getattr(self, name))


#: The extra rules' names (``ExtraRules`` fields), as ``--extra-rule`` takes them.
EXTRA_RULES = (
    "no_neutral_targets",
    "no_same_colour_easy_mid",
    "ugv_start_60m_away",
    "uav_start_out_of_view",
)


def look_alikes(town: Town, target: TargetObject, region: Region) -> list[TargetObject]:
    """Vehicles in ``region`` with the target's colour and shape class, the target excluded."""
    return [
        vehicle
        for vehicle in town.vehicles
        if vehicle.object_id != target.object_id
        and vehicle.colour == target.colour
        and shape_class(vehicle.category) == shape_class(target.category)
        and region.contains(*vehicle.centroid[:2])
    ]


def same_colour(town: Town, target: TargetObject, region: Region) -> list[TargetObject]:
    """Other vehicles in ``region`` of the target's colour."""
    return [
        v
        for v in town.vehicles
        if v.object_id != target.object_id
        and v.colour == target.colour
        and region.contains(*v.centroid[:2])
    ]


def verifying_anchors(town: Town, target: TargetObject, radius_m: float) -> list[int]:
    """Anchors from which the UGV's six views see the target within ``radius_m``."""
    oracle = TownOracle(town.scene)
    ring = ugv_ring(100, 100)
    roads = town.map.roads
    found = []
    for anchor in roads.anchors:
        x, y = roads.xy(anchor)
        if math.dist((x, y), target.centroid[:2]) > radius_m:
            continue
        pose = Pose(x, y, town.map.ground_z + UGV_HEIGHT_M, 0.0)
        if oracle.visible_in_views(pose, ring, target, radius_m):
            found.append(anchor)
    return found


def reference_images(town: Town, target: TargetObject) -> list[np.ndarray]:
    """Views of the target alone: every pixel that is not the target is white, and the image
    is cropped to the target (AGOS-Bench: background cropped out of I_target)."""
    cx, cy, cz = target.centroid
    (x_min, y_min, _), (x_max, y_max, _) = target.bbox_min, target.bbox_max
    length = max(x_max - x_min, y_max - y_min)
    scale = max(1.0, length / REFERENCE_FIT_M)
    images = []
    views: list[tuple[Pose, CameraSpec]] = []
    for azimuth, car_distance, car_height, pitch in REFERENCE_VIEWS:
        a = math.radians(azimuth)
        distance, height = car_distance * scale, car_height * scale
        x, y = cx + distance * math.cos(a), cy + distance * math.sin(a)
        spec = CameraSpec(
            name="ref", width=REFERENCE_PIXELS, height=REFERENCE_PIXELS, fov_deg=50.0,
            pitch_deg=pitch,
        )  # fmt: skip
        views.append((Pose(x, y, height, math.atan2(cy - y, cx - x)), spec))
    views.append(
        (
            Pose(cx, cy, cz + REFERENCE_TOP_HEIGHT_M * scale, math.pi / 2),
            CameraSpec(
                name="ref", width=REFERENCE_PIXELS, height=REFERENCE_PIXELS, fov_deg=50.0,
                pitch_deg=-90.0,
            ),
        )
    )  # fmt: skip
    for pose, spec in views:
        frame = render_views(town.scene, pose, [spec], with_ground_truth_ids=True)["ref"]
        assert frame.instance_ids is not None
        mask = frame.instance_ids == target.instance_id
        if not mask.any():
            continue
        rgb = np.where(mask[:, :, None], frame.rgb, np.uint8(255))
        rows, cols = np.flatnonzero(mask.any(axis=1)), np.flatnonzero(mask.any(axis=0))
        images.append(
            rgb[
                max(rows[0] - 2, 0) : rows[-1] + 3,
                max(cols[0] - 2, 0) : cols[-1] + 3,
            ]
        )
    return images


def _region_around(
    rng: np.random.Generator, centre: Sequence[float], size: float, limit: float
) -> Region:
    margin = 20.0
    low = np.maximum(np.asarray(centre[:2]) - size + margin, -limit)
    high = np.minimum(np.asarray(centre[:2]) - margin, limit - size)
    corner = np.round(rng.uniform(low, np.maximum(high, low)), 1)
    return Region(
        float(corner[0]), float(corner[1]), float(corner[0]) + size, float(corner[1]) + size
    )


def generate_episode(
    town: Town,
    setting: str,
    *,
    index: int,
    split: str,
    rng: np.random.Generator,
    out_dir: Path,
    rules: ExtraRules = ExtraRules(),
) -> AgosEpisode | None:
    """One episode of ``setting``, or None when this draw has no valid layout.

    The rules: the region of Table 2's size; Table 2's distractors (look-alikes: the
    target's colour and shape class) in it, 2-3 on Hard and none on Easy and Mid; an anchor
    from which the UGV's six views see the target within 50 m, reachable by road from the
    UGV's start (the solvability guarantee) but not the start itself, so that SPL's
    reference length l_e is positive; and the ``rules`` switched on.
    """
    size = REGION_SIZE_M[setting]
    target = town.vehicles[int(rng.integers(len(town.vehicles)))]
    if rules.no_neutral_targets and target.colour in NEUTRAL_COLOURS:
        return None
    region = _region_around(rng, target.centroid, size, town.map.half_extent_m - 10.0)
    distractors = look_alikes(town, target, region)
    if setting == "hard" and not 2 <= len(distractors) <= 3:
        return None
    if setting != "hard" and distractors:
        return None
    if setting != "hard" and rules.no_same_colour_easy_mid and same_colour(town, target, region):
        return None
    roads = town.map.roads
    verifiers = verifying_anchors(town, target, SUCCESS_RADIUS_M)
    inside = [a for a in roads.anchors if region.contains(*roads.xy(a))]
    if not verifiers or not inside:
        return None
    start = inside[int(rng.integers(len(inside)))]
    reachable = roads.decision_distances(start)
    route = min((reachable.get(a, math.inf) for a in verifiers), default=math.inf)
    shortest = MIN_START_ROUTE_M if rules.ugv_start_60m_away else 0.0
    if not (route > 0.0 and shortest <= route < math.inf):
        return None
    edge = roads.decision_edges[start][int(rng.integers(len(roads.decision_edges[start])))]
    (x0, y0), (x1, y1) = roads.xy(edge.fine_nodes[0]), roads.xy(edge.fine_nodes[1])
    ugv_start = Pose(x0, y0, town.map.ground_z + UGV_HEIGHT_M, math.atan2(y1 - y0, x1 - x0))
    oracle = TownOracle(town.scene)
    nadir = uav_rig(100, 100)
    uav_nodes = [
        w
        for w in town.map.uav_grid.active(region)
        if not (
            rules.uav_start_out_of_view
            and oracle.visible_in_views(Pose(w.x, w.y, w.z, math.pi / 2), nadir, target)
        )
    ]
    if not uav_nodes:
        return None
    node = uav_nodes[int(rng.integers(len(uav_nodes)))]
    episode_id = f"{town.map.name}-{setting}-{index:04d}"
    paths = []
    for view, image in enumerate(reference_images(town, target)):
        relative = f"references/{episode_id}-view{view}.png"
        (out_dir / relative).parent.mkdir(parents=True, exist_ok=True)
        Image.fromarray(image).save(out_dir / relative)
        paths.append(relative)
    return AgosEpisode(
        episode_id=episode_id,
        scene=town.map.name,
        split=split,
        setting=setting,
        region=region,
        uav_start=Pose(node.x, node.y, node.z, math.pi / 2),
        ugv_start=ugv_start,
        target_object_id=target.object_id,
        target_name=target.name,
        target_center=target.centroid,
        distractor_ids=tuple(v.object_id for v in distractors),
        reference_images=tuple(paths),
        reference_length_m=float(route),
    )


def check_split_town(split: str, town_name: str) -> None:
    """Refuse episodes of ``split`` on a town that split does not use, so that test towns
    stay disjoint from training and validation towns (``town.SPLIT_TOWNS``).

    Raises:
        ConfigError: an unknown split, or a town of another split.
    """
    towns = SPLIT_TOWNS.get(split)
    if towns is None:
        raise ConfigError(f"split {split!r} is not one of {', '.join(SPLIT_TOWNS)}")
    if town_name not in towns:
        raise ConfigError(
            f"split {split} uses town(s) {', '.join(towns)}, not {town_name}: test towns stay "
            "disjoint from training and validation towns (AGOS-Bench, 'Expert Dataset')"
        )


@dataclass(frozen=True, kw_only=True)
class _TownJob:
    """One town's share of ``generate_suite``, picklable for Ray workers."""

    town: str
    out_dir: Path
    per_setting: int
    split: str
    seed: int
    rules: ExtraRules


def _generate_town(job: _TownJob, progress: ProgressSink) -> list[AgosEpisode]:
    """``per_setting`` episodes of every setting on one town (its images written to
    ``job.out_dir``), drawn from a generator seeded by ``job.seed`` alone."""
    town = load_town(job.town)
    rng = np.random.default_rng(job.seed)
    total = job.per_setting * len(SETTINGS)
    episodes: list[AgosEpisode] = []
    for setting in SETTINGS:
        made = 0
        for _ in range(2000):
            if made == job.per_setting:
                break
            episode = generate_episode(
                town,
                setting,
                index=made + 1,
                split=job.split,
                rng=rng,
                out_dir=job.out_dir,
                rules=job.rules,
            )
            if episode is not None:
                episodes.append(episode)
                made += 1
                progress(
                    ShardProgress(
                        shard=job.town, done=len(episodes), total=total, kept=len(episodes)
                    )
                )
    progress(
        ShardProgress(
            shard=job.town, done=len(episodes), total=total, kept=len(episodes), finished=True
        )
    )
    return episodes


def generate_suite(
    out_dir: Path,
    *,
    towns: Sequence[str],
    per_setting: int,
    split: str,
    seed: int,
    name: str,
    workers: int = 1,
    ray_address: str | None = None,
    progress: ProgressSink | None = None,
    rules: ExtraRules = ExtraRules(),
) -> Path:
    """Write ``out_dir/suite.json`` with ``per_setting`` episodes of every setting per town.

    Each town's episodes are drawn with the same ``seed`` (towns differ, so do their
    episodes), so a town's episodes do not depend on which other towns are generated nor on
    the number of workers.

    Args:
        out_dir: the suite directory (reference images go to ``references/``).
        towns: AGOS towns (``agos.town.TOWN_NAMES``).
        per_setting: episodes per setting (easy, mid, hard) and town.
        split: the split of every episode.
        seed: the draws' seed.
        name: the suite's name.
        workers: towns generated in parallel (``tasks.shards.run_shards``).
        ray_address: generate on this Ray cluster instead.
        progress: receives each town's progress.
        rules: the extra rules to apply (none by default); the description names them.

    Raises:
        UnknownSceneError: a town that does not exist.
        ConfigError: no towns, a town ``split`` does not use (``check_split_town``), or a
            non-positive ``per_setting`` or ``workers``.
    """
    if not towns or per_setting < 1:
        raise ConfigError(
            f"AGOS generation needs at least one town and per_setting >= 1; got towns="
            f"{list(towns)}, per_setting={per_setting}"
        )
    for town in towns:
        town_map(town)  # an unknown town fails here, before any worker starts
        check_split_town(split, town)
    out_dir.mkdir(parents=True, exist_ok=True)
    jobs = [
        _TownJob(
            town=town,
            out_dir=out_dir,
            per_setting=per_setting,
            split=split,
            seed=seed,
            rules=rules,
        )
        for town in towns
    ]
    episodes = [
        episode
        for town_episodes in run_shards(
            _generate_town, jobs, workers=workers, ray_address=ray_address, progress=progress
        )
        for episode in town_episodes
    ]
    return save_agos_suite(
        out_dir / "suite.json",
        name=name,
        description=(
            f"AGOS episodes on {', '.join(towns)}: {per_setting} per setting (easy, mid, hard)"
            + (f"; extra rules: {', '.join(rules.names)}" if rules.names else "")
        ),
        episodes=episodes,
        # Interleaved by setting, so that the first N of a run cover every setting.
        default_selection=[
            e.episode_id
            for e in sorted(
                episodes,
                key=lambda e: (int(e.episode_id[-4:]), SETTINGS.index(e.setting), e.scene),
            )
        ],
    )
