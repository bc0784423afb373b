"""AGOS towns on the embedded simulator: a street grid with one-way streets and cul-de-sacs,
blocks of buildings, and parked vehicles, some in look-alike groups (AGOS-Bench, Table 2).

A town is a fixed map, like a CARLA town: its layout, buildings and vehicles follow from its
name alone. ``town_map`` is what every agent may know (roads, UAV grid, bounds; AGOS-Bench
"Sensors": platforms have urban maps and road networks); ``load_town`` adds the rendered
scene and the vehicles, which only the simulator, the task manager and the evaluator see.
"""

from __future__ import annotations

import itertools
import math
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from aerialdojo.agos.grid import UavGrid, build_uav_grid
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.roads import RoadNetwork, Street, build_road_network
from aerialdojo.errors import UnknownSceneError
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.scenery import tower
from aerialdojo.sim.embedded.terrain import flat
from aerialdojo.sim.embedded.world import EmbeddedScene

#: The towns and their roles (AGOS-Bench: training towns and a disjoint test town).
TOWN_NAMES = ("AgosTown_0", "AgosTown_1")
#: The towns each split's episodes come from: AGOS-Bench trains and validates on five towns
#: and tests on "a disjoint town" (Town03); AgosTown_0 stands for the first, AgosTown_1 for
#: the second.
SPLIT_TOWNS = {"train": ("AgosTown_0",), "val": ("AgosTown_0",), "test": ("AgosTown_1",)}
HALF_EXTENT_M = 200.0
#: Street centrelines of the grid, both axes.
GRID_LINES = (-180.0, -90.0, 0.0, 90.0, 180.0)
ROAD_WIDTH_M = 8.0
GROUND_Z = 0.0
#: Lateral offset of parked vehicles from the street centreline.
PARKING_OFFSET_M = 2.9
#: Vehicles keep this far from intersections.
INTERSECTION_CLEARANCE_M = 14.0
#: The landmark stands on the plaza of this block, which has no buildings.
LANDMARK_XY = (45.0, 45.0)

#: Shape classes: vehicles of one class and colour look alike from above.
SHAPE_CLASSES: dict[str, tuple[str, ...]] = {
    "car": ("sedan", "hatchback", "suv"),
    "pickup": ("pickup_truck",),
    "van": ("delivery_van", "camper_van"),
}
#: Colours of look-alike groups (cars) and of unique vehicles, per shape class.
GROUP_COLOURS = ("red", "blue", "yellow", "green")
UNIQUE_COLOURS = {"car": ("orange", "purple", "cyan", "pink"), "pickup": ("red", "blue")}
NEUTRAL_COLOURS = ("white", "black", "silver", "grey")
NEUTRAL_CATEGORIES = ("sedan", "hatchback", "suv", "delivery_van", "box_truck", "city_bus")
NEUTRAL_VEHICLES = 36
_BUILDING_COLOURS = ((204, 194, 176), (176, 168, 158), (158, 158, 162), (214, 206, 190))
_GROUND_COLOUR = (178, 176, 170)


def shape_class(category: str) -> str:
    """The shape class of a vehicle category (``"other"`` outside ``SHAPE_CLASSES``)."""
    return next((name for name, members in SHAPE_CLASSES.items() if category in members), "other")


@dataclass(frozen=True)
class TownMap:
    """What every agent knows about a town.

    Attributes:
        name: the town, e.g. ``"AgosTown_0"``.
        streets: the street layout.
        roads: fine and decision road graphs.
        uav_grid: the UAV waypoint grid V^A_map.
        half_extent_m: the town spans [-half, half] in x and y.
        ground_z: ground height.
        road_width_m: how wide its streets are drawn on the map M.
    """

    name: str
    streets: tuple[Street, ...]
    roads: RoadNetwork
    uav_grid: UavGrid
    half_extent_m: float = HALF_EXTENT_M
    ground_z: float = GROUND_Z
    road_width_m: float = ROAD_WIDTH_M


def vehicle_named(vehicles: Sequence[TargetObject], object_id: str, town_name: str) -> TargetObject:
    """The vehicle called ``object_id`` among a town's ``vehicles``.

    Raises:
        KeyError: no such vehicle; ``args[0]`` names it and the town.
    """
    for vehicle in vehicles:
        if vehicle.object_id == object_id:
            return vehicle
    raise KeyError(f"town {town_name}: no vehicle {object_id!r}")


@dataclass(frozen=True)
class Town:
    """A loaded town: its map, its scene and its parked vehicles (ground truth)."""

    map: TownMap
    scene: EmbeddedScene
    vehicles: tuple[TargetObject, ...]

    def vehicle(self, object_id: str) -> TargetObject:
        """The vehicle called ``object_id``.

        Raises:
            KeyError: no such vehicle; ``args[0]`` names it.
        """
        return vehicle_named(self.vehicles, object_id, self.map.name)

    def oracle(self) -> TownOracle:
        """Visibility judged against the town's own geometry."""
        return TownOracle(self.scene)


def _check_name(name: str) -> None:
    if name not in TOWN_NAMES:
        raise UnknownSceneError(f"unknown AGOS town {name!r}; towns: {', '.join(TOWN_NAMES)}")


def _rng(name: str, purpose: str) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(name.encode()), zlib.crc32(purpose.encode())])


@lru_cache(maxsize=8)
def town_map(name: str) -> TownMap:
    """The public map of a town.

    Raises:
        UnknownSceneError: not one of ``TOWN_NAMES``.
    """
    _check_name(name)
    streets = _streets(name)
    roads = build_road_network(streets)
    reach = max(GRID_LINES)
    grid = build_uav_grid(
        (-reach, -reach), (reach, reach), roads.anchor_positions(), ground_z=GROUND_Z
    )
    return TownMap(name=name, streets=streets, roads=roads, uav_grid=grid)


def _streets(name: str) -> tuple[Street, ...]:
    """The grid's segments with some cul-de-sacs and one-way streets, strongly connected."""
    rng = _rng(name, "streets")
    lines = GRID_LINES
    segments = [Street((a, c), (b, c)) for c in lines for a, b in itertools.pairwise(lines)] + [
        Street((c, a), (c, b)) for c in lines for a, b in itertools.pairwise(lines)
    ]
    # The outer ring stays whole so that every cul-de-sac and one-way street has a way round.
    edge = max(lines)
    interior = [
        index
        for index, street in enumerate(segments)
        if not (
            (street.start[1] == street.end[1] and abs(street.start[1]) == edge)
            or (street.start[0] == street.end[0] and abs(street.start[0]) == edge)
        )
    ]
    order = [int(i) for i in rng.permutation(interior)]
    streets = list(segments)
    # Cul-de-sacs: an interior segment shortened to a 40 m stub from one end.
    for index in order[:3]:
        street = streets[index]
        fraction = 40.0 / street.length
        end = (
            street.start[0] + fraction * (street.end[0] - street.start[0]),
            street.start[1] + fraction * (street.end[1] - street.start[1]),
        )
        candidate = [*streets[:index], Street(street.start, end), *streets[index + 1 :]]
        if _strongly_connected(candidate):
            streets = candidate
    # One-way streets, kept only while every anchor stays reachable from every other.
    for index in order[3:9]:
        street = streets[index]
        flipped = Street(street.end, street.start, one_way=True)
        candidate = [*streets[:index], Street(street.start, street.end, one_way=True)]
        candidate += streets[index + 1 :]
        if rng.random() < 0.5:
            candidate[index] = flipped
        if _strongly_connected(candidate):
            streets = candidate
    return tuple(streets)


def _strongly_connected(streets: list[Street]) -> bool:
    return build_road_network(streets).strongly_connected()


@dataclass(frozen=True)
class _VehiclePlan:
    category: str
    colour: str
    x: float
    y: float
    yaw: float


def _parking_spots(streets: tuple[Street, ...], rng: np.random.Generator) -> list[_VehiclePlan]:
    """Free kerbside spots along every street, in random order (category and colour unset)."""
    spots = []
    for street in streets:
        heading = math.atan2(street.end[1] - street.start[1], street.end[0] - street.start[0])
        normal = (-math.sin(heading), math.cos(heading))
        usable = street.length - 2 * INTERSECTION_CLEARANCE_M
        for k in range(int(usable // 9.0) + 1):
            along = INTERSECTION_CLEARANCE_M + k * 9.0
            for side in (-1.0, 1.0):
                x = (
                    street.start[0]
                    + math.cos(heading) * along
                    + side * normal[0] * PARKING_OFFSET_M
                )
                y = (
                    street.start[1]
                    + math.sin(heading) * along
                    + side * normal[1] * PARKING_OFFSET_M
                )
                spots.append(_VehiclePlan("", "", x, y, heading + (0.0 if side < 0 else math.pi)))
    return [spots[int(i)] for i in rng.permutation(len(spots))]


def _vehicle_plans(name: str, streets: tuple[Street, ...]) -> list[_VehiclePlan]:
    """Look-alike groups (3-4 same-colour cars within 60 m), unique coloured vehicles and
    neutral background traffic."""
    rng = _rng(name, "vehicles")
    spots = _parking_spots(streets, rng)
    taken: list[_VehiclePlan] = []

    def take(category: str, colour: str, near: tuple[float, float] | None, reach: float) -> None:
        for index, spot in enumerate(spots):
            if near is not None and math.dist((spot.x, spot.y), near) > reach:
                continue
            if any(math.dist((spot.x, spot.y), (t.x, t.y)) < 7.0 for t in taken):
                continue
            taken.append(_VehiclePlan(category, colour, spot.x, spot.y, spot.yaw))
            del spots[index]
            return

    for colour in GROUP_COLOURS:
        members = 3 + int(rng.integers(0, 2))
        seed_spot = spots[0]
        for k in range(members):
            category = SHAPE_CLASSES["car"][k % len(SHAPE_CLASSES["car"])]
            take(category, colour, (seed_spot.x, seed_spot.y), 60.0)
    for shape, colours in UNIQUE_COLOURS.items():
        for colour in colours:
            take(str(rng.choice(SHAPE_CLASSES[shape])), colour, None, 0.0)
    for _ in range(NEUTRAL_VEHICLES):
        take(str(rng.choice(NEUTRAL_CATEGORIES)), str(rng.choice(NEUTRAL_COLOURS)), None, 0.0)
    return taken


@lru_cache(maxsize=2)
def load_town(name: str) -> Town:
    """Build the scene of a town (deterministic in ``name``).

    Raises:
        UnknownSceneError: not one of ``TOWN_NAMES``.
    """
    started = time.perf_counter()
    builder = laid_out_town(name)
    scene = builder.build(distribution="id", agent_radius_m=0.5, started=started)
    return Town(map=town_map(name), scene=scene, vehicles=scene.annotations.objects)


def laid_out_town(name: str) -> SceneBuilder:
    """A town's builder with all its pieces added, before anything is built from them.

    Raises:
        UnknownSceneError: not one of ``TOWN_NAMES``.
    """
    town = town_map(name)
    builder = SceneBuilder(
        scene=name, scene_type="AgosTown", family="urban", seed=(zlib.crc32(name.encode()), 1)
    )
    builder.terrain(
        HALF_EXTENT_M,
        flat(GROUND_Z),
        lambda centres, _: np.broadcast_to(np.asarray(_GROUND_COLOUR), (len(centres), 3)),
        resolution_m=20.0,
        ceiling_m=120.0,
    )
    for street in town.streets:
        builder.road([street.start, street.end], ROAD_WIDTH_M)
    for plan in _vehicle_plans(name, town.streets):
        builder.place(plan.category, plan.x, plan.y, yaw=plan.yaw, colour=plan.colour)
    tower(
        builder,
        "Clock Tower",
        "a white clock tower with a dark spire on the central plaza",
        at=LANDMARK_XY,
        height=38.0,
        colour=(236, 232, 224),
        top=(60, 60, 70),
    )
    _buildings(builder, name)
    return builder


def _buildings(builder: SceneBuilder, name: str) -> None:
    """Two-by-two buildings per block, some blocks left open as plazas."""
    rng = _rng(name, "buildings")
    setback = ROAD_WIDTH_M / 2.0 + 4.0
    for x0, x1 in itertools.pairwise(GRID_LINES):
        for y0, y1 in itertools.pairwise(GRID_LINES):
            plaza = x0 < LANDMARK_XY[0] < x1 and y0 < LANDMARK_XY[1] < y1
            if rng.random() < 0.15 or plaza:
                continue
            span_x = (x1 - x0 - 2 * setback) / 2.0
            span_y = (y1 - y0 - 2 * setback) / 2.0
            for i in range(2):
                for j in range(2):
                    if rng.random() < 0.2:
                        continue
                    length = span_x * float(rng.uniform(0.6, 0.9))
                    width = span_y * float(rng.uniform(0.6, 0.9))
                    builder.building(
                        f"building_{x0:.0f}_{y0:.0f}_{i}{j}",
                        x0 + setback + (i + 0.5) * span_x,
                        y0 + setback + (j + 0.5) * span_y,
                        (length, width, float(rng.uniform(9.0, 34.0))),
                        _BUILDING_COLOURS[int(rng.integers(len(_BUILDING_COLOURS)))],
                        base=GROUND_Z,
                    )


def town_scene(name: str) -> EmbeddedScene:
    """The rendered scene of town ``name`` (the agos backend's scene source).

    Raises:
        UnknownSceneError: not one of ``TOWN_NAMES``.
    """
    return load_town(name).scene
