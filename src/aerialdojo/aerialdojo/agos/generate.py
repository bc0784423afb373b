"""Generate AGOS episodes on the towns: target and distractor choice by setting, regions,
start poses, solvability (a reachable anchor that verifies the target), reference images.

    python -m aerialdojo.agos.generate --out DIR [--town AgosTown_1] [--per-setting 2]
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image

from aerialdojo.agos.episodes import REGION_SIZE_M, SETTINGS, AgosEpisode, save_agos_suite
from aerialdojo.agos.grid import Region
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.planning import UGV_HEIGHT_M
from aerialdojo.agos.sensors import uav_rig, ugv_ring
from aerialdojo.agos.town import SPLIT_TOWNS, Town, load_town, shape_class
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.sim.embedded.renderer import render_views

#: Reference views: (azimuth deg from +x, distance m, height m, pitch deg).
REFERENCE_VIEWS = ((45.0, 7.0, 2.4, -12.0), (160.0, 7.0, 2.4, -12.0), (270.0, 7.0, 2.4, -12.0))
REFERENCE_TOP_HEIGHT_M = 9.0
REFERENCE_PIXELS = 96
#: The UGV starts at least this far along the road from every verifying anchor.
MIN_START_ROUTE_M = 60.0


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
    images = []
    views: list[tuple[Pose, CameraSpec]] = []
    for azimuth, distance, height, pitch in REFERENCE_VIEWS:
        a = math.radians(azimuth)
        x, y = cx + distance * math.cos(a), cy + distance * math.sin(a)
        spec = CameraSpec(
            name="ref", width=REFERENCE_PIXELS, height=REFERENCE_PIXELS, fov_deg=50.0,
            pitch_deg=pitch,
        )  # fmt: skip
        views.append((Pose(x, y, height, math.atan2(cy - y, cx - x)), spec))
    views.append(
        (
            Pose(cx, cy, cz + REFERENCE_TOP_HEIGHT_M, math.pi / 2),
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
) -> AgosEpisode | None:
    """One episode of ``setting``, or None when this draw has no valid layout."""
    size = REGION_SIZE_M[setting]
    target = town.vehicles[int(rng.integers(len(town.vehicles)))]
    if target.colour in ("white", "black", "silver", "grey"):
        return None
    region = _region_around(rng, target.centroid, size, town.map.half_extent_m - 10.0)
    distractors = look_alikes(town, target, region)
    if setting == "hard" and not 2 <= len(distractors) <= 3:
        return None
    if setting != "hard" and same_colour(town, target, region):
        return None
    roads = town.map.roads
    verifiers = verifying_anchors(town, target, 50.0)
    inside = [a for a in roads.anchors if region.contains(*roads.xy(a))]
    if not verifiers or not inside:
        return None
    start = inside[int(rng.integers(len(inside)))]
    reachable = roads.decision_distances(start)
    route = min((reachable.get(a, math.inf) for a in verifiers), default=math.inf)
    if not MIN_START_ROUTE_M <= route < math.inf:
        return None
    edge = roads.decision_edges[start][int(rng.integers(len(roads.decision_edges[start])))]
    (x0, y0), (x1, y1) = roads.xy(edge.fine_nodes[0]), roads.xy(edge.fine_nodes[1])
    ugv_start = Pose(x0, y0, town.map.ground_z + UGV_HEIGHT_M, math.atan2(y1 - y0, x1 - x0))
    oracle = TownOracle(town.scene)
    nadir = uav_rig(100, 100)
    uav_nodes = [
        w
        for w in town.map.uav_grid.active(region)
        if not oracle.visible_in_views(Pose(w.x, w.y, w.z, math.pi / 2), nadir, target)
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


def generate_suite(
    out_dir: Path, *, town_name: str, per_setting: int, split: str, seed: int, name: str
) -> Path:
    """Write ``out_dir/suite.json`` with ``per_setting`` episodes of every setting.

    Raises:
        ConfigError: ``town_name`` is not a town of ``split`` (``check_split_town``).
    """
    check_split_town(split, town_name)
    town = load_town(town_name)
    rng = np.random.default_rng(seed)
    episodes: list[AgosEpisode] = []
    for setting in SETTINGS:
        made = 0
        for _ in range(2000):
            if made == per_setting:
                break
            episode = generate_episode(
                town, setting, index=made + 1, split=split, rng=rng, out_dir=out_dir
            )
            if episode is not None:
                episodes.append(episode)
                made += 1
    return save_agos_suite(
        out_dir / "suite.json",
        name=name,
        description=f"AGOS episodes on {town_name}: {per_setting} per setting (easy, mid, hard)",
        episodes=episodes,
        # Interleaved by setting, so that the first N of a run cover every setting.
        default_selection=[
            e.episode_id
            for e in sorted(
                episodes, key=lambda e: (int(e.episode_id[-4:]), SETTINGS.index(e.setting))
            )
        ],
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--town", default="AgosTown_1")
    parser.add_argument("--per-setting", type=int, default=2)
    parser.add_argument("--split", default="test")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="agos_mini")
    args = parser.parse_args(argv)
    path = generate_suite(
        args.out,
        town_name=args.town,
        per_setting=args.per_setting,
        split=args.split,
        seed=args.seed,
        name=args.name,
    )
    print(path)


if __name__ == "__main__":
    main()
