"""AGOS on a CARLA map (CARLA-Air's Town10HD), as AGOS-Bench runs it: the UGV's roads are the
map's OpenDRIVE lanes (appendix A.1.1, from the shipped road graph, ``carla_maps``), the UAV's
grid lies over them, and the vehicles are spawned by blueprint when an episode starts (the
episode's ``spawns``: its target, Table 2's distractors and other parked vehicles).

What the map file cannot tell, and what follows:
- buildings and trees: the checker's and the evaluator's visibility is the camera frustum
  and the range (``FrustumOracle``), without a line-of-sight test (AGOS-Bench, A.2.3: "a
  clear line of sight when LOS checking is enabled"); a target behind a building counts as
  seen.
- the spawn-point box of A.1.1's UAV grid: the box of the driving lanes stands for it (the
  recommended spawn points lie on them).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.agos.grid import build_uav_grid
from aerialdojo.agos.roads import Street, build_lane_network
from aerialdojo.agos.town import TownMap, vehicle_named
from aerialdojo.carla_maps import CARLA_MAPS, load_road_map
from aerialdojo.errors import UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.spawns import SpawnedObject

#: The CARLA maps AGOS episodes can be made on.
CARLA_TOWN_NAMES = CARLA_MAPS


@functools.lru_cache(maxsize=4)
def carla_town_map(name: str) -> TownMap:
    """The public map of CARLA map ``name``: its lanes' fine and decision graphs, the UAV
    grid over them, its lanes as drawn streets (each fine edge, its lane's width wide).

    Raises:
        UnknownSceneError: no road graph of that map is shipped.
    """
    if name not in CARLA_TOWN_NAMES:
        raise UnknownSceneError(f"no CARLA map {name!r}; maps: {', '.join(CARLA_TOWN_NAMES)}")
    road_map = load_road_map(name)
    roads = build_lane_network(
        road_map.nodes,
        road_map.successors,
        [bool(flag) for flag in road_map.junction],
        road_map.lane_changes,
    )
    ground_z = float(np.median(road_map.nodes[:, 2]))
    low, high = road_map.bounds()
    grid = build_uav_grid(low, high, roads.anchor_positions(), ground_z=ground_z)
    xy = road_map.nodes[:, :2]
    streets = tuple(
        Street((float(xy[a, 0]), float(xy[a, 1])), (float(xy[b, 0]), float(xy[b, 1])))
        for a, out in enumerate(road_map.successors)
        for b in out
    )
    half_extent = max(abs(v) for corner in (low, high) for v in corner)
    return TownMap(
        name=name,
        streets=streets,
        roads=roads,
        uav_grid=grid,
        half_extent_m=half_extent,
        ground_z=ground_z,
        road_width_m=float(np.median(road_map.nodes[:, 4])),
    )


def spawned_vehicle(
    spawn: SpawnedObject, *, instance_id: int, name: str, category: str, colour: str
) -> TargetObject:
    """A spawned vehicle as the referee and the oracle see it (its box from its size)."""
    low, high = spawn.box()
    return TargetObject(
        object_id=spawn.object_id,
        instance_id=instance_id,
        name=name,
        category=category,
        colour=colour,
        description=name,
        centroid=spawn.centre,
        bbox_min=low,
        bbox_max=high,
        anchor=Pose(spawn.pose.x, spawn.pose.y, high[2] + 1.0, spawn.pose.yaw),
    )


class FrustumOracle:
    """Visibility without occlusion: a target is seen where a sample point of its box lies in
    a camera's frustum within range (the map file holds no buildings to hide it)."""

    def visible_in_views(
        self,
        pose: Pose,
        cameras: Sequence[CameraSpec],
        target: TargetObject,
        max_range_m: float = math.inf,
    ) -> bool:
        from aerialdojo.agos.oracle import in_frustum, sample_points  # noqa: PLC0415 - Embree-free

        points = sample_points(target)
        return any(in_frustum(points, pose, spec, max_range_m)[1].any() for spec in cameras)

    def line_of_sight(self, eye: Sequence[float] | np.ndarray, target: TargetObject) -> bool:
        """Always: the map file holds nothing that could stand between ``eye`` and ``target``
        (the checker's line-of-sight condition cannot fail on a CARLA map's road graph)."""
        del eye, target
        return True


@dataclass(frozen=True)
class CarlaTown:
    """A CARLA map during one episode: its public map and the vehicles the episode spawns."""

    map: TownMap
    vehicles: tuple[TargetObject, ...]

    def vehicle(self, object_id: str) -> TargetObject:
        """The vehicle called ``object_id``.

        Raises:
            KeyError: no such vehicle; ``args[0]`` names it.
        """
        return vehicle_named(self.vehicles, object_id, self.map.name)

    def oracle(self) -> FrustumOracle:
        return FrustumOracle()
