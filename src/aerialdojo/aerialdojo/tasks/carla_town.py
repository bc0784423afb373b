"""An AerialDojo-format suite on a CARLA map, built from the map's road graph alone
(``aerialdojo tasks from-carla-map --benchmark aerialdojo``; docs/simulators.md).

Targets are props spawned by blueprint at reset (``carla_maps.blueprints.PROP_MODELS``, each
kind once, so the goal's name tells them apart), standing in kerbside parking lanes
(the map's shoulder lanes) spread over the town. Landmarks are the map's junctions, named by
where they lie in the town; each goal gives the nearest junction and the compass direction
of the target from it (AerialDojo-200K, section 3.2), and a description of what the target
is and where it stands, without a distance.

Free space is what the map file can vouch for: the air over the driving lanes' carriageway
(lane width, less the collision radius and ``LANE_MARGIN_M``) from ``MIN_Z_M`` to ``MAX_Z_M``,
above ``JUNCTION_MIN_Z_M`` over junctions (signal heads and their arms stand over the lanes
there), less the target's own box. References are planned there with the project's Hybrid
A* (``tasks.planner``) and pass AerialDojo-200K's filters. Not known from the file, and so
the limits of these references: trees and lamp arms reaching over the carriageway, bridges,
and anything parked; a route shorter through open squares is not found.

ImageOGS needs photographs of the targets on a real server: the suite is SemanticOGS only
(``representations: ["semantic"]``); ``aerialdojo tasks from-server`` on a running CARLA-Air
is the route to ImageOGS episodes of its world.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import ndimage
from scipy.spatial import cKDTree

from aerialdojo.carla_maps import LICENCE_NOTICE, CarlaRoadMap, load_road_map
from aerialdojo.carla_maps.blueprints import PROP_MODELS, PropModel
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose, compass_direction
from aerialdojo.spawns import SpawnedObject
from aerialdojo.tasks.candidates import plan_reference
from aerialdojo.tasks.episode import REPRESENTATION_SEMANTIC, Episode, Goal, make_episode_id
from aerialdojo.tasks.planner import Bounds, KnownRays, PlannerConfig
from aerialdojo.tasks.serialization import written_pose
from aerialdojo.tasks.settings import SETTINGS, setting_for_length
from aerialdojo.tasks.suite import SUITE_FILE, GenerationInfo, SceneInventory, Suite, save_suite

#: The free air over the carriageway: from this height ...
MIN_Z_M = 2.0
#: ... to this one (no building stands over a driving lane; this keeps flights low).
MAX_Z_M = 30.0
#: Over a junction's lanes only from this height: traffic-signal heads and their arms.
JUNCTION_MIN_Z_M = 8.0
#: Kept off the lane's edge besides the collision radius (kerbs, lamp posts at the edge).
LANE_MARGIN_M = 0.5
#: Starts hover this high over a driving lane.
START_Z_M = 10.0
#: The anchor stands this far outside the target's box, and this far above its top
#: (AerialDojo-200K, section 3.1: a viewpoint about 1 m outside the boundary).
ANCHOR_CLEARANCE_M = 1.0
#: A target stands this far inside its parking lane's edge with the driving lane.
KERB_GAP_M = 0.1
#: Targets stand at least this far apart.
TARGET_SPACING_M = 40.0
#: Straight-line distances of the starts tried for each target, and how many tasks each
#: target gets at most.
START_DISTANCES_M = (12.0, 20.0, 28.0, 36.0, 45.0, 55.0)
TASKS_PER_TARGET = 3
#: Collision radius of the references (AerialDojo-200K's embodiment).
COLLISION_RADIUS_M = 0.25
_SAMPLE_M = 0.25


@dataclass(frozen=True)
class _Hit:
    fraction: float


class CarriagewayWorld:
    """The planner's collision world of a CARLA map's free air (``tasks.planner``): the
    column over the driving lanes' carriageway, kept ``radius + LANE_MARGIN_M`` inside its
    outer edge, with boxes (the targets) as obstacles. The carriageway is rasterised once at
    ``CELL_M``: a cell is carriageway when its centre lies within half its nearest lane
    sample's width of that sample.

    Args:
        road_map: the map's road graph.
        obstacles: boxes ((min corner), (max corner)) that are not free.
        radius: the sphere radius queries use (at most this).
    """

    CELL_M = 0.25

    def __init__(
        self,
        road_map: CarlaRoadMap,
        obstacles: Sequence[tuple[tuple[float, float, float], tuple[float, float, float]]] = (),
        *,
        radius: float = COLLISION_RADIUS_M,
    ) -> None:
        points, half, junction = [], [], []
        nodes = road_map.nodes
        for a, out in enumerate(road_map.successors):
            for b in out:
                steps = max(1, math.ceil(math.dist(nodes[a, :2], nodes[b, :2]) / _SAMPLE_M))
                for k in range(steps):
                    f = k / steps
                    points.append(nodes[a, :2] * (1 - f) + nodes[b, :2] * f)
                    half.append(min(nodes[a, 4], nodes[b, 4]) / 2.0)
                    junction.append(bool(road_map.junction[a] or road_map.junction[b]))
        samples = np.asarray(points)
        (x0, y0), (x1, y1) = road_map.bounds()
        self._origin = np.array((x0 - 5.0, y0 - 5.0))
        shape = (
            math.ceil((x1 - x0 + 10.0) / self.CELL_M),
            math.ceil((y1 - y0 + 10.0) / self.CELL_M),
        )
        ix, iy = np.meshgrid(np.arange(shape[0]), np.arange(shape[1]), indexing="ij")
        centres = self._origin + (np.stack((ix, iy), axis=-1).reshape(-1, 2) + 0.5) * self.CELL_M
        distance, index = cKDTree(samples).query(centres)
        carriageway = (distance <= np.asarray(half)[index]).reshape(shape)
        reach = math.ceil((radius + LANE_MARGIN_M) / self.CELL_M)
        disk = np.hypot(*np.mgrid[-reach : reach + 1, -reach : reach + 1]) <= reach
        self._free = ndimage.binary_erosion(carriageway, structure=disk)
        self._floor = np.where(np.asarray(junction)[index], JUNCTION_MIN_Z_M, MIN_Z_M).reshape(
            shape
        )
        self._radius = radius
        self._obstacles = [(np.asarray(lo), np.asarray(hi)) for lo, hi in obstacles]
        self.bounds: Bounds = ((x0 - 5.0, y0 - 5.0, MIN_Z_M), (x1 + 5.0, y1 + 5.0, MAX_Z_M))

    def free(self, points: np.ndarray, radius: float) -> np.ndarray:
        """Which of (N, 3) ``points`` a sphere of ``radius`` may occupy.

        Raises:
            ValueError: a larger radius than the world was built for.
        """
        if radius > self._radius + 1e-9:
            raise ValueError(f"radius {radius} m: the world was built for {self._radius} m")
        cells = np.floor((points[:, :2] - self._origin) / self.CELL_M).astype(np.int64)
        shape = np.asarray(self._free.shape)
        within = np.all((cells >= 0) & (cells < shape), axis=1)
        cells = np.clip(cells, 0, shape - 1)
        horizontal = within & self._free[cells[:, 0], cells[:, 1]]
        floor = self._floor[cells[:, 0], cells[:, 1]]
        ok = horizontal & (points[:, 2] - radius >= floor) & (points[:, 2] + radius <= MAX_Z_M)
        for low, high in self._obstacles:
            ok &= ~np.all((points > low - radius) & (points < high + radius), axis=1)
        return np.asarray(ok)

    def sweep_sphere(self, start: np.ndarray, end: np.ndarray, radius: float) -> _Hit | None:
        begin, finish = (
            np.asarray(start, dtype=np.float64)[:3],
            np.asarray(end, dtype=np.float64)[:3],
        )
        count = max(2, math.ceil(float(np.linalg.norm(finish - begin)) / _SAMPLE_M) + 1)
        fractions = np.linspace(0.0, 1.0, count)
        points = begin[None, :] + fractions[:, None] * (finish - begin)[None, :]
        blocked = np.flatnonzero(~self.free(points, radius))
        return None if not blocked.size else _Hit(float(fractions[blocked[0]]))

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        return bool(self.free(np.asarray(center, dtype=np.float64)[None, :3], radius)[0])


@dataclass(frozen=True)
class Junction:
    """A landmark: one of the map's junctions, where its connecting lanes lie."""

    name: str
    x: float
    y: float


def junctions(road_map: CarlaRoadMap) -> list[Junction]:
    """The map's junctions (the centre of each junction's connecting lanes), each named by
    where it lies in the town (``the north-west junction``; ``the second north-west
    junction`` for the one farther from the town's middle)."""
    ids = sorted({int(i) for i in road_map.junction_ids if i >= 0})
    centres = [road_map.nodes[road_map.junction_ids == i, :2].mean(axis=0) for i in ids]
    (x0, y0), (x1, y1) = road_map.bounds()
    middle = np.array(((x0 + x1) / 2.0, (y0 + y1) / 2.0))
    named: dict[str, list[np.ndarray]] = {}
    for centre in sorted(centres, key=lambda c: float(np.hypot(*(c - middle)))):
        near = float(np.hypot(*(centre - middle))) < 0.15 * max(x1 - x0, y1 - y0)
        place = "central" if near else _COMPASS_WORDS[compass_direction(middle, centre)]
        named.setdefault(place, []).append(centre)
    found = []
    for place, group in named.items():
        for rank, centre in enumerate(group):
            ordinal = f"{_ORDINALS[min(rank, len(_ORDINALS) - 1)]} " if rank else ""
            found.append(
                Junction(f"the {ordinal}{place} junction", float(centre[0]), float(centre[1]))
            )
    return sorted(found, key=lambda junction: junction.name)


_COMPASS_WORDS = {
    "N": "north", "NE": "north-east", "E": "east", "SE": "south-east",
    "S": "south", "SW": "south-west", "W": "west", "NW": "north-west",
}  # fmt: skip
_ORDINALS = ("", "second", "third", "fourth", "fifth", "further")
_HEADING_WORDS = (
    "east-west",
    "north-east to south-west",
    "north-south",
    "north-west to south-east",
)


@dataclass(frozen=True)
class _Target:
    spawn: SpawnedObject
    model: PropModel
    anchor: Pose
    heading: float


def _place_targets(
    road_map: CarlaRoadMap, rng: np.random.Generator, world: CarriagewayWorld
) -> list[_Target]:
    """One target of each prop kind, in parking spots at least ``TARGET_SPACING_M`` apart,
    each with a free anchor on the carriageway side."""
    spots = road_map.parking[rng.permutation(len(road_map.parking))]
    lanes = cKDTree(road_map.nodes[~road_map.junction, :2])
    lane_xy = road_map.nodes[~road_map.junction, :2]
    placed: list[_Target] = []
    for number, model in enumerate(PROP_MODELS, start=1):
        for x, y, heading, width in spots:
            if model.size[1] > width or any(
                math.dist((x, y), (t.spawn.pose.x, t.spawn.pose.y)) < TARGET_SPACING_M
                for t in placed
            ):
                continue
            _, nearest = lanes.query((x, y))
            towards = lane_xy[nearest] - (x, y)
            towards = towards / max(float(np.hypot(*towards)), 1e-9)
            # At the carriageway side of the parking lane, so that the anchor 1 m outside it
            # lies over the driving lane.
            inward = (width - model.size[1]) / 2.0 - KERB_GAP_M
            spot_x, spot_y = x + towards[0] * inward, y + towards[1] * inward
            spawn = SpawnedObject(
                object_id=f"prop{number:02d}",
                blueprint=model.blueprint,
                pose=Pose(float(spot_x), float(spot_y), 0.0, float(heading)),
                size=model.size,
            )
            reach = model.size[1] / 2.0 + ANCHOR_CLEARANCE_M
            anchor = written_pose(
                Pose(
                    float(spot_x + towards[0] * reach),
                    float(spot_y + towards[1] * reach),
                    model.size[2] + ANCHOR_CLEARANCE_M + 0.5,
                    math.atan2(-towards[1], -towards[0]),
                )
            )
            if not world.sphere_is_free(anchor.position, COLLISION_RADIUS_M):
                continue
            placed.append(_Target(spawn, model, anchor, float(heading)))
            break
    return placed


def _description(target: _Target, landmark: Junction, direction: str) -> str:
    street = _HEADING_WORDS[round((target.heading % math.pi) / (math.pi / 4)) % 4]
    article = "an" if target.model.name[0] in "aeiou" else "a"
    return (
        f"{article} {target.model.name} standing in the kerbside parking lane of a street "
        f"running {street}, {_COMPASS_WORDS[direction]} of {landmark.name}, where cars would "
        "park rather than on the pavement"
    )


def build_carla_town_suite(out: Path, *, town: str, seed: int, name: str, command: str) -> Suite:
    """Build and write ``out/suite.json`` on CARLA map ``town``.

    Raises:
        UnknownSceneError: no road graph of ``town`` is shipped.
        ConfigError: no target could be placed, or no task passed the filters.
    """
    road_map = load_road_map(town)
    rng = np.random.default_rng(seed)
    open_air = CarriagewayWorld(road_map)
    targets = _place_targets(road_map, rng, open_air)
    if not targets:
        raise ConfigError(f"{town}: no parking spot has a free anchor for a target")
    world = CarriagewayWorld(road_map, [t.spawn.box() for t in targets])
    landmarks = junctions(road_map)
    config = PlannerConfig(collision_radius_m=COLLISION_RADIUS_M)
    lane_nodes = np.flatnonzero(~road_map.junction)
    starts_xy = road_map.nodes[lane_nodes, :2]
    numbers: dict[str, int] = {}
    episodes: list[Episode] = []
    for target in targets:
        landmark = min(
            landmarks,
            key=lambda j: math.dist((j.x, j.y), (target.spawn.pose.x, target.spawn.pose.y)),
        )
        direction = compass_direction(
            np.array((landmark.x, landmark.y)), np.array((target.spawn.pose.x, target.spawn.pose.y))
        )
        rays = KnownRays()
        made = 0
        for wanted in START_DISTANCES_M:
            if made == TASKS_PER_TARGET:
                break
            distances = np.hypot(*(starts_xy - (target.anchor.x, target.anchor.y)).T)
            near = np.flatnonzero(np.abs(distances - wanted) < 2.0)
            if not near.size:
                continue
            node = int(lane_nodes[near[int(rng.integers(near.size))]])
            x, y, _z, heading, _w = road_map.nodes[node]
            start = written_pose(Pose(float(x), float(y), START_Z_M, float(heading)))
            if not world.sphere_is_free(start.position, COLLISION_RADIUS_M):
                continue
            reference = plan_reference(
                world, start, target.anchor, bounds=world.bounds, config=config, known_rays=rays
            )
            if isinstance(reference, str):
                continue
            setting = setting_for_length(reference.length_m)
            assert setting is not None  # plan_reference keeps only lengths in a setting
            index = numbers.get(setting.name, 0)
            numbers[setting.name] = index + 1
            episodes.append(
                Episode(
                    episode_id=make_episode_id(town, setting.name, index, REPRESENTATION_SEMANTIC),
                    benchmark="aerialdojo",
                    scene=town,
                    family="urban",
                    distribution="ood",
                    split="test",
                    setting=setting.name,
                    action_budget=setting.action_budget,
                    start=start,
                    goal=Goal(
                        object_name=target.model.name,
                        landmark_name=landmark.name,
                        direction=direction,
                        representation=REPRESENTATION_SEMANTIC,
                        description=_description(target, landmark, direction),
                    ),
                    target_object_id=target.spawn.object_id,
                    target_anchor=target.anchor,
                    reference=reference,
                    start_object_id=f"lane_node_{node}",
                    spawns=(target.spawn,),
                )
            )
            made += 1
    if not episodes:
        raise ConfigError(f"{town}: no (start, target) pair passed AerialDojo-200K's filters")
    order = {setting.name: position for position, setting in enumerate(SETTINGS)}
    episodes.sort(key=lambda e: (order[e.setting], e.episode_id))
    suite = Suite(
        path=out / SUITE_FILE,
        name=name,
        description=(
            f"AerialDojo-format SemanticOGS tasks on CARLA-Air's {town}: targets are props "
            "spawned by blueprint at reset in kerbside parking lanes, landmarks the map's "
            "junctions, references planned in the air over the driving lanes (the free space "
            "the map's OpenDRIVE file vouches for; docs/simulators.md). ImageOGS: build a "
            f"suite with aerialdojo tasks from-server on a running server. Built by: {command}. "
            f"{LICENCE_NOTICE}"
        ),
        generation=GenerationInfo(
            seed=seed,
            planner="hybrid_astar",
            collision_radius_m=config.collision_radius_m,
            goal_tolerance_m=config.goal_tolerance_m,
            cell_m=config.cell_m,
            action_cost_m=config.action_cost_m,
        ),
        scenes=(
            SceneInventory(
                scene=town,
                scene_type=town,
                family="urban",
                distribution="ood",
                landmarks=len(landmarks),
                objects=len(targets),
                anchors=len(targets),
            ),
        ),
        default_selection=tuple(e.episode_id for e in episodes),
        episodes=episodes,
        representations=(REPRESENTATION_SEMANTIC,),
    )
    save_suite(suite)
    return suite
