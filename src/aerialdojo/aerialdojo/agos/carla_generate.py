"""AGOS episodes on a CARLA map whose vehicles are spawned by blueprint at reset, as AGOS-Bench
places its target and distractor vehicles on CARLA-Air (``aerialdojo tasks from-carla-map
--benchmark agos``).

Table 2's rules and the solvability guarantee only: a region of Table 2's size around the
target; on Hard 2-3 distractors in it (vehicles of the target's colour and shape class), on
Easy and Mid none; a road anchor from which the UGV's six views take in the target within
the success radius, reachable by road from the UGV's start but not the start itself. Other
parked vehicles fill parking spots of the region, none of them a look-alike. None of the
extra rules of the embedded towns' generation (``agos.generate.ExtraRules``) applies.

The target is named in words (colour and model, e.g. "red Citroen C3 hatchback"): reference
images of a CARLA vehicle can only be taken on a running server, so the suite has none
(docs/agos.md). Visibility is judged without occlusion (``agos.carla_town.FrustumOracle``).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from aerialdojo.agos.carla_town import FrustumOracle, carla_town_map
from aerialdojo.agos.episodes import (
    REGION_SIZE_M,
    SETTINGS,
    SUCCESS_RADIUS_M,
    AgosEpisode,
    save_agos_suite,
)
from aerialdojo.agos.grid import Region
from aerialdojo.agos.planning import UGV_HEIGHT_M
from aerialdojo.agos.sensors import ugv_ring
from aerialdojo.agos.town import shape_class
from aerialdojo.agos.worlds import referee_town
from aerialdojo.carla_maps import LICENCE_NOTICE, load_road_map
from aerialdojo.carla_maps.blueprints import (
    VEHICLE_COLOURS,
    VEHICLE_MODELS,
    VehicleModel,
    colour_attribute,
)
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.spawns import SpawnedObject

#: Parked vehicles besides the target and its distractors, per episode (at most).
OTHER_VEHICLES = 8
#: Spawned vehicles keep this far apart (centre to centre along a parking lane).
VEHICLE_SPACING_M = 6.0
#: Draws tried per episode before a setting gives up.
MAX_DRAWS = 400


def _spawn(number: int, model: VehicleModel, colour: str, spot: np.ndarray) -> SpawnedObject:
    x, y, heading, _width = (float(v) for v in spot)
    return SpawnedObject(
        object_id=f"vehicle{number:02d}",
        blueprint=model.blueprint,
        pose=Pose(x, y, 0.0, heading),
        attributes=(("color", colour_attribute(colour)),),
        size=model.size,
    )


def _region(rng: np.random.Generator, centre: np.ndarray, size: float) -> Region:
    """A square of ``size`` holding ``centre`` at least 20 m inside its edges."""
    low = centre - size + 20.0
    corner = np.round(rng.uniform(low, centre - 20.0), 1)
    return Region(
        float(corner[0]), float(corner[1]), float(corner[0]) + size, float(corner[1]) + size
    )


def generate_episode(
    town: str, setting: str, *, index: int, split: str, rng: np.random.Generator
) -> AgosEpisode | None:
    """One episode of ``setting`` on CARLA map ``town``, or None when this draw fails."""
    road_map = load_road_map(town)
    public = carla_town_map(town)
    spots = road_map.parking[rng.permutation(len(road_map.parking))]
    target_spot = spots[0]
    model = VEHICLE_MODELS[int(rng.integers(len(VEHICLE_MODELS)))]
    colour = list(VEHICLE_COLOURS)[int(rng.integers(len(VEHICLE_COLOURS)))]
    region = _region(rng, target_spot[:2], REGION_SIZE_M[setting])
    free = [s for s in spots[1:] if region.contains(float(s[0]), float(s[1]))]
    chosen: list[tuple[VehicleModel, str, np.ndarray]] = [(model, colour, target_spot)]

    def take(candidate: VehicleModel, paint: str) -> bool:
        for k, spot in enumerate(free):
            if all(math.dist(spot[:2], c[2][:2]) >= VEHICLE_SPACING_M for c in chosen):
                chosen.append((candidate, paint, spot))
                del free[k]
                return True
        return False

    same_class = [
        m for m in VEHICLE_MODELS if shape_class(m.category) == shape_class(model.category)
    ]
    look_alikes = 2 + int(rng.integers(2)) if setting == "hard" else 0
    for _ in range(look_alikes):
        if not take(same_class[int(rng.integers(len(same_class)))], colour):
            return None
    for _ in range(OTHER_VEHICLES):
        other = VEHICLE_MODELS[int(rng.integers(len(VEHICLE_MODELS)))]
        paint = list(VEHICLE_COLOURS)[int(rng.integers(len(VEHICLE_COLOURS)))]
        if paint == colour and shape_class(other.category) == shape_class(model.category):
            continue  # a look-alike: Table 2 fixes their number
        take(other, paint)
    order = rng.permutation(len(chosen))  # the target's id tells nothing
    spawns = [_spawn(int(order[k]) + 1, m, c, s) for k, (m, c, s) in enumerate(chosen)]
    target = spawns[0]
    roads = public.roads
    oracle, ring = FrustumOracle(), ugv_ring(100, 100)
    draft = AgosEpisode(
        episode_id="draft", scene=town, split=split, setting=setting, region=region,
        uav_start=Pose(0, 0, 0, 0), ugv_start=Pose(0, 0, 0, 0), target_object_id=target.object_id,
        target_name="draft", target_center=target.centre, reference_length_m=1.0,
        spawns=tuple(spawns),
    )  # fmt: skip
    target_vehicle = referee_town(draft).vehicle(target.object_id)
    verifiers = [
        anchor
        for anchor in roads.anchors
        if math.dist(roads.xy(anchor), target.centre[:2]) <= SUCCESS_RADIUS_M
        and oracle.visible_in_views(
            Pose(*roads.xy(anchor), public.ground_z + UGV_HEIGHT_M, 0.0),
            ring,
            target_vehicle,
            SUCCESS_RADIUS_M,
        )
    ]
    inside = [a for a in roads.anchors if region.contains(*roads.xy(a))]
    if not verifiers or not inside:
        return None
    start = inside[int(rng.integers(len(inside)))]
    reachable = roads.decision_distances(start)
    route = min((reachable.get(a, math.inf) for a in verifiers), default=math.inf)
    if not 0.0 < route < math.inf:
        return None
    edge = roads.decision_edges[start][int(rng.integers(len(roads.decision_edges[start])))]
    (x0, y0), (x1, y1) = roads.xy(edge.fine_nodes[0]), roads.xy(edge.fine_nodes[1])
    nodes = public.uav_grid.active(region)
    if not nodes:
        return None
    node = nodes[int(rng.integers(len(nodes)))]
    return AgosEpisode(
        episode_id=f"{town}-{setting}-{index:04d}",
        scene=town,
        split=split,
        setting=setting,
        region=region,
        uav_start=Pose(node.x, node.y, node.z, math.pi / 2),
        ugv_start=Pose(x0, y0, public.ground_z + UGV_HEIGHT_M, math.atan2(y1 - y0, x1 - x0)),
        target_object_id=target.object_id,
        target_name=f"{colour} {model.words}",
        target_center=target.centre,
        distractor_ids=tuple(s.object_id for s in spawns[1 : 1 + look_alikes]),
        reference_length_m=float(route),
        spawns=tuple(spawns),
    )


def generate_carla_agos_suite(
    out_dir: Path, *, town: str, per_setting: int, split: str, seed: int, name: str, command: str
) -> Path:
    """Write ``out_dir/suite.json``: ``per_setting`` episodes of every setting on ``town``.

    Raises:
        UnknownSceneError: no road graph of ``town`` is shipped.
        ConfigError: a non-positive ``per_setting``, or a setting no draw could fill.
    """
    if per_setting < 1:
        raise ConfigError(f"per_setting={per_setting} must be at least 1")
    rng = np.random.default_rng(seed)
    episodes = []
    for setting in SETTINGS:
        made = 0
        for _ in range(MAX_DRAWS):
            if made == per_setting:
                break
            episode = generate_episode(town, setting, index=made + 1, split=split, rng=rng)
            if episode is not None:
                episodes.append(episode)
                made += 1
        if made < per_setting:
            raise ConfigError(f"{town}: only {made} {setting} episodes in {MAX_DRAWS} draws")
    return save_agos_suite(
        out_dir / "suite.json",
        name=name,
        description=(
            f"AGOS-Bench episodes on CARLA-Air's {town} (Table 2's rules): the UGV drives the "
            "map's OpenDRIVE lanes, the target, its distractors and other parked vehicles are "
            "spawned by blueprint at reset; the target is named in words (no reference "
            "images without a server) and visibility is judged without occlusion "
            f"(docs/agos.md). Built by: {command}. {LICENCE_NOTICE}"
        ),
        episodes=episodes,
        default_selection=[e.episode_id for e in episodes],
    )
