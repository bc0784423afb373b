"""City maps and the embedded CityNav cities (CityNav, sections 3.1-3.2).

A ``CityMap`` is what every agent may know of a city: its extent, ground height, geographic
reference and the named landmark polygons (streets, buildings, parks, squares) that CityNav
takes from OpenStreetMap. The goal objects (buildings, cars, ground, parking lots; section
3.3) are ground truth: only ``load_city`` returns them, with the rendered scene, for the
simulator, the task manager and the evaluator.

The embedded cities are street grids laid out from their name alone: blocks of buildings
(some of them named landmarks), parks, squares, parking lots and sports grounds, with cars
parked along the kerbs and in the lots. Colours repeat across the city on purpose, so a
goal is found by its landmark and relation, not by its colour alone.
"""

from __future__ import annotations

import itertools
import math
import re
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from aerialdojo.citynav.geo import GeoReference
from aerialdojo.documents import SUITE, DocumentError, load_json
from aerialdojo.errors import ConfigError, UnknownSceneError

if TYPE_CHECKING:
    from aerialdojo.sim.embedded.builder import SceneBuilder
    from aerialdojo.sim.embedded.world import EmbeddedScene

#: Landmark kinds (CityNav, section 3.2: streets, buildings, parks, squares from OSM).
LANDMARK_KINDS = ("street", "building", "park", "square")
#: Goal object kinds (CityNav, section 3.3: buildings, cars, ground, parking lots).
GOAL_KINDS = ("building", "car", "ground", "parking_lot")
#: "UAVs can fly up to an altitude of 200 meters" (CityNav, section 3.1).
CEILING_M = 200.0

Point2 = tuple[float, float]
#: An RGB triple, or a colour name of the embedded catalogue (resolved when the scene is built,
#: so that maps and episodes load without the renderer).
Paint = tuple[int, int, int] | str

#: The embedded cities: one for train and val-seen, one per unseen split (section 5.1).
CITY_NAMES = ("CityNavTown_0", "CityNavTown_1", "CityNavTown_2")
HALF_EXTENT_M = 270.0
#: Street centrelines, both axes.
GRID_LINES = (-240.0, -120.0, 0.0, 120.0, 240.0)
STREET_WIDTH_M = 10.0
#: Cars park this far from a street's centreline.
KERB_OFFSET_M = 3.6
#: Colours of goal cars, roofs, grounds and lots, each used several times across a city.
SIGNAL_COLOURS = ("red", "blue", "yellow", "orange", "purple", "cyan")
_NEUTRAL_CARS = ("white", "black", "silver", "grey")
_WALLS = ((204, 194, 176), (176, 168, 158), (158, 158, 162), (214, 206, 190))
_NEUTRAL_ROOFS = ((96, 92, 90), (120, 110, 100), (140, 138, 134))
_GRASS = (92, 150, 70)
_PAVING = (200, 192, 178)
_ASPHALT = (70, 70, 74)
#: Geographic origins of the embedded cities (fictional places near Cambridge, UK).
_ORIGINS = ((52.2043, 0.1218), (52.2120, 0.1400), (52.1950, 0.1050))
_STREETS = (
    ("King Street", "Mill Road", "Regent Street", "Bridge Street", "Trinity Lane"),
    ("Sidney Street", "Hills Road", "Tenison Road", "Castle Street", "Station Road"),
    ("Jesus Lane", "Park Terrace", "Lensfield Road", "Norfolk Street", "Gwydir Street"),
)
_CROSS_STREETS = (
    ("Green Street", "Market Passage", "Downing Street", "Pembroke Street", "Silver Street"),
    ("Hobson Street", "Petty Cury", "Bene't Street", "Botolph Lane", "Free School Lane"),
    ("Victoria Avenue", "Maids Causeway", "Emmanuel Road", "Parkside", "Panton Street"),
)
_PARKS = (
    ("Jesus Green", "Christ's Pieces"),
    ("Parker's Piece", "Coe Fen"),
    ("Midsummer Common", "Donkey Green"),
)
_SQUARES = (
    ("Market Square", "Peas Hill"),
    ("Lion Yard", "Fitzroy Square"),
    ("Mill Square", "Clare Court"),
)
_HALLS = (
    ("Emmanuel Hall", "Guildhall", "Corn Exchange"),
    ("Merton Hall", "Senate House", "Old Library"),
    ("St Mary's Hall", "Castle House", "Round Church"),
)


@dataclass(frozen=True, kw_only=True)
class Landmark:
    """A named map segment (CityNav: an OpenStreetMap way or area).

    Attributes:
        name: e.g. ``"King Street"``.
        kind: one of ``LANDMARK_KINDS``.
        polygon: outline in the map frame, counter-clockwise, not closed.
    """

    name: str
    kind: str
    polygon: tuple[Point2, ...]

    @property
    def centroid(self) -> Point2:
        """Mean of the outline's vertices."""
        points = np.asarray(self.polygon)
        return float(points[:, 0].mean()), float(points[:, 1].mean())


def normalised(text: str) -> str:
    """Lower case without spaces or punctuation: how names are matched in descriptions."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


@dataclass(frozen=True, kw_only=True)
class CityMap:
    """What every agent knows of a city.

    Attributes:
        name: the scene name.
        bounds: ``(x_min, y_min, x_max, y_max)`` of the map, metres.
        ground_z: ground height, metres (altitudes are measured from it).
        geo: the map frame's geographic reference (``citynav.geo``).
        landmarks: the named segments.
    """

    name: str
    bounds: tuple[float, float, float, float]
    ground_z: float
    geo: GeoReference
    landmarks: tuple[Landmark, ...]

    def landmark(self, name: str) -> Landmark:
        """The landmark called ``name`` (as normalised).

        Raises:
            KeyError: no such landmark; ``args[0]`` names it.
        """
        for landmark in self.landmarks:
            if normalised(landmark.name) == normalised(name):
                return landmark
        raise KeyError(f"city {self.name}: no landmark {name!r}")

    def landmarks_named_in(self, text: str) -> list[Landmark]:
        """The landmarks a description names, in the order it names them (the CityNav code
        matches names the same way: lower case, spaces ignored)."""
        wanted = normalised(text)
        found = [(wanted.find(normalised(lm.name)), lm) for lm in self.landmarks]
        return [lm for position, lm in sorted(found, key=lambda item: item[0]) if position >= 0]

    def to_json(self) -> dict[str, Any]:
        """The JSON object of a city map file."""
        return {
            "name": self.name,
            "bounds": list(self.bounds),
            "ground_z": self.ground_z,
            "geo": self.geo.to_json(),
            "landmarks": [
                {"name": lm.name, "kind": lm.kind, "polygon": [list(p) for p in lm.polygon]}
                for lm in self.landmarks
            ],
        }


def city_map_from_json(document: Any, where: str) -> CityMap:
    """The city map of a map file's JSON object.

    Raises:
        ConfigError: a missing or malformed field, named with ``where``.
    """
    try:
        bounds = tuple(float(v) for v in document["bounds"])
        if len(bounds) != 4 or bounds[0] >= bounds[2] or bounds[1] >= bounds[3]:
            raise ValueError("bounds: expected [x_min, y_min, x_max, y_max] with an area")
        landmarks = []
        for index, raw in enumerate(document["landmarks"]):
            if raw["kind"] not in LANDMARK_KINDS:
                raise ValueError(f"landmarks[{index}].kind: not one of {LANDMARK_KINDS}")
            polygon = tuple((float(x), float(y)) for x, y in raw["polygon"])
            if len(polygon) < 3:
                raise ValueError(f"landmarks[{index}].polygon: fewer than 3 vertices")
            landmarks.append(Landmark(name=str(raw["name"]), kind=raw["kind"], polygon=polygon))
        return CityMap(
            name=str(document["name"]),
            bounds=(bounds[0], bounds[1], bounds[2], bounds[3]),
            ground_z=float(document["ground_z"]),
            geo=GeoReference(**{k: float(v) for k, v in document["geo"].items()}),
            landmarks=tuple(landmarks),
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ConfigError(f"{where}: city map: {error}") from error


@dataclass(frozen=True, kw_only=True)
class GoalObject:
    """A goal candidate of a city (ground truth).

    Attributes:
        object_id: unique within the city, e.g. ``"car_012"``.
        kind: one of ``GOAL_KINDS``.
        colour: its colour name as descriptions use it.
        name: e.g. ``"red car"`` or ``"building with a blue roof"``.
        position: centre of its bounding box, map frame (the goal coordinates).
        footprint: outline on the ground.
    """

    object_id: str
    kind: str
    colour: str
    name: str
    position: tuple[float, float, float]
    footprint: tuple[Point2, ...]


@dataclass(frozen=True)
class City:
    """A loaded embedded city: public map, rendered scene, goal objects."""

    map: CityMap
    scene: EmbeddedScene
    goals: tuple[GoalObject, ...]

    def goal(self, object_id: str) -> GoalObject:
        """The goal object ``object_id``.

        Raises:
            KeyError: no such object; ``args[0]`` names it.
        """
        for goal in self.goals:
            if goal.object_id == object_id:
                return goal
        raise KeyError(f"city {self.map.name}: no goal object {object_id!r}")


def rectangle(cx: float, cy: float, size_x: float, size_y: float) -> tuple[Point2, ...]:
    """The counter-clockwise outline of an axis-aligned rectangle."""
    hx, hy = size_x / 2.0, size_y / 2.0
    return ((cx - hx, cy - hy), (cx + hx, cy - hy), (cx + hx, cy + hy), (cx - hx, cy + hy))


# --- layout ------------------------------------------------------------------------------


@dataclass
class _Layout:
    """Everything of a city, before any geometry is built, and the choices that lay it out.

    Attributes:
        rng: the city's random choices.
        colours: the signal colours, handed out in turn.
    """

    rng: np.random.Generator
    colours: Iterator[str] = field(default_factory=lambda: itertools.cycle(SIGNAL_COLOURS))
    landmarks: list[Landmark] = field(default_factory=list)
    goals: list[GoalObject] = field(default_factory=list)
    #: (name, centre x, centre y, size x, size y, height, wall colour, roof colour)
    buildings: list[tuple[str, float, float, float, float, float, Paint, Paint]] = field(
        default_factory=list
    )
    #: (name, outline, colour, semantic)
    slabs: list[tuple[str, tuple[Point2, ...], Paint, str]] = field(default_factory=list)
    #: (object id, x, y, yaw, colour name)
    cars: list[tuple[str, float, float, float, str]] = field(default_factory=list)
    trees: list[Point2] = field(default_factory=list)
    fountains: list[tuple[str, float, float]] = field(default_factory=list)
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(GOAL_KINDS, 0))

    def goal_id(self, kind: str) -> str:
        """The next object id of a goal kind, e.g. ``car_012``."""
        self.counters[kind] += 1
        return f"{kind}_{self.counters[kind]:03d}"

    def block_buildings(
        self, centre: Point2, span: float, *, avoid: tuple[Point2, ...] | None, halls: list[str]
    ) -> None:
        """Two by two buildings in a block; one may be a named hall, some have coloured
        roofs."""
        rng, (cx, cy) = self.rng, centre
        cell = span / 2.0
        named = bool(halls) and rng.random() < 0.6
        for i, j in itertools.product(range(2), range(2)):
            bx, by = cx - span / 2 + (i + 0.5) * cell, cy - span / 2 + (j + 0.5) * cell
            size_x = cell * float(rng.uniform(0.55, 0.8))
            size_y = cell * float(rng.uniform(0.55, 0.8))
            footprint = rectangle(bx, by, size_x, size_y)
            if avoid is not None and _overlap(footprint, avoid, 4.0):
                continue
            height = float(rng.uniform(8.0, 24.0))
            wall = _WALLS[int(rng.integers(len(_WALLS)))]
            if named and (i, j) == (0, 0):
                hall = halls.pop(0)
                self.landmarks.append(Landmark(name=hall, kind="building", polygon=footprint))
                self.buildings.append(
                    (hall, bx, by, size_x, size_y, height, (226, 222, 214), (70, 70, 80))
                )
            elif rng.random() < 0.45:
                colour = next(self.colours)
                goal = GoalObject(
                    object_id=self.goal_id("building"),
                    kind="building",
                    colour=colour,
                    name=f"building with a {colour} roof",
                    position=(bx, by, (height + 0.6) / 2.0),
                    footprint=footprint,
                )
                self.goals.append(goal)
                self.buildings.append(
                    (goal.object_id, bx, by, size_x, size_y, height, wall, colour)
                )
            else:
                roof = _NEUTRAL_ROOFS[int(rng.integers(len(_NEUTRAL_ROOFS)))]
                self.buildings.append(
                    (f"building_{bx:.0f}_{by:.0f}", bx, by, size_x, size_y, height, wall, roof)
                )

    def add_car(self, at: Point2, yaw: float) -> None:
        """A parked car: a goal in a signal colour, or a neutral one."""
        rng = self.rng
        colour = next(self.colours) if rng.random() < 0.5 else str(rng.choice(_NEUTRAL_CARS))
        object_id = self.goal_id("car")
        size = (4.6, 2.0) if abs(math.cos(yaw)) > 0.5 else (2.0, 4.6)
        self.cars.append((object_id, at[0], at[1], yaw, colour))
        self.goals.append(
            GoalObject(
                object_id=object_id,
                kind="car",
                colour=colour,
                name=f"{colour} car",
                position=(at[0], at[1], 0.75),
                footprint=rectangle(at[0], at[1], *size),
            )
        )


def _check_name(name: str) -> int:
    if name not in CITY_NAMES:
        raise UnknownSceneError(f"unknown CityNav city {name!r}; cities: {', '.join(CITY_NAMES)}")
    return CITY_NAMES.index(name)


def _rng(name: str, purpose: str) -> np.random.Generator:
    return np.random.default_rng([zlib.crc32(name.encode()), zlib.crc32(purpose.encode())])


#: Block uses, one per block of the 4 x 4 grid, shuffled per city.
_BLOCK_USES = ("park", "park", "square", "square", "lot", "lot", "ground", "ground") + (
    "buildings",
) * 8


@lru_cache(maxsize=8)
def _layout(name: str) -> _Layout:
    index = _check_name(name)
    layout = _Layout(rng=_rng(name, "layout"))
    rng = layout.rng
    lines = GRID_LINES
    reach = HALF_EXTENT_M
    for line, street in zip(lines, _STREETS[index], strict=True):
        outline = rectangle(line, 0.0, STREET_WIDTH_M, 2 * reach)
        layout.landmarks.append(Landmark(name=street, kind="street", polygon=outline))
    for line, street in zip(lines, _CROSS_STREETS[index], strict=True):
        outline = rectangle(0.0, line, 2 * reach, STREET_WIDTH_M)
        layout.landmarks.append(Landmark(name=street, kind="street", polygon=outline))
    uses = [str(u) for u in rng.permutation(_BLOCK_USES)]
    parks, squares, halls = list(_PARKS[index]), list(_SQUARES[index]), list(_HALLS[index])
    setback = STREET_WIDTH_M / 2.0 + 3.0
    for block, ((x0, x1), (y0, y1)) in enumerate(
        itertools.product(itertools.pairwise(lines), itertools.pairwise(lines))
    ):
        use = uses[block]
        cx, cy = (x0 + x1) / 2.0, (y0 + y1) / 2.0
        span = (x1 - x0) - 2 * setback
        if use == "park":
            outline = rectangle(cx, cy, span, span)
            layout.landmarks.append(Landmark(name=parks.pop(0), kind="park", polygon=outline))
            layout.slabs.append(("park", outline, _GRASS, "vegetation"))
            for _ in range(14):
                tx, ty = rng.uniform(-span / 2 + 4, span / 2 - 4, 2)
                layout.trees.append((cx + float(tx), cy + float(ty)))
        elif use == "square":
            outline = rectangle(cx, cy, span, span)
            square = squares.pop(0)
            layout.landmarks.append(Landmark(name=square, kind="square", polygon=outline))
            layout.slabs.append(("square", outline, _PAVING, "structure"))
            layout.fountains.append((f"{square} fountain", cx, cy))
        elif use in ("lot", "ground"):
            _open_goal(layout, (cx, cy), span, use)
        else:
            layout.block_buildings((cx, cy), span, avoid=None, halls=halls)
    for line in lines:
        for along in np.arange(-reach + 20.0, reach - 20.0, 26.0):
            if any(abs(along - other) < 14.0 for other in lines):
                continue  # keep intersections clear
            for side in (-1.0, 1.0):
                if rng.random() < 0.55:
                    continue
                layout.add_car((line + side * KERB_OFFSET_M, float(along)), math.pi / 2)
                if rng.random() < 0.5:
                    layout.add_car((float(along), line + side * KERB_OFFSET_M), 0.0)
    return layout


def _open_goal(layout: _Layout, centre: Point2, span: float, use: str) -> None:
    """A coloured parking lot (with parked cars) or ground in a block, buildings around it."""
    rng, (cx, cy) = layout.rng, centre
    colour = next(layout.colours)
    size = span * float(rng.uniform(0.45, 0.6))
    ox, oy = (float(v) for v in rng.uniform(-(span - size) / 2, (span - size) / 2, 2))
    outline = rectangle(cx + ox, cy + oy, size, size)
    kind = "parking_lot" if use == "lot" else "ground"
    goal = GoalObject(
        object_id=layout.goal_id(kind),
        kind=kind,
        colour=colour,
        name=f"{colour} {kind.replace('_', ' ')}",
        position=(cx + ox, cy + oy, 0.1),
        footprint=outline,
    )
    layout.goals.append(goal)
    layout.slabs.append((goal.object_id, outline, colour, "structure"))
    layout.block_buildings(centre, span, avoid=outline, halls=[])
    if use == "lot":
        for row in range(2):
            for k in range(3):
                layout.add_car(
                    (cx + ox - size / 4 + k * size / 4, cy + oy + (row - 0.5) * size / 3),
                    math.pi / 2,
                )


def _overlap(a: tuple[Point2, ...], b: tuple[Point2, ...], margin: float) -> bool:
    ax, ay = zip(*a, strict=True)
    bx, by = zip(*b, strict=True)
    return not (
        max(ax) + margin < min(bx) or max(bx) + margin < min(ax)
        or max(ay) + margin < min(by) or max(by) + margin < min(ay)
    )  # fmt: skip


# --- public map and scene ----------------------------------------------------------------


@lru_cache(maxsize=8)
def embedded_city_map(name: str) -> CityMap:
    """The public map of an embedded city.

    Raises:
        UnknownSceneError: not one of ``CITY_NAMES``.
    """
    index = _check_name(name)
    latitude, longitude = _ORIGINS[index]
    return CityMap(
        name=name,
        bounds=(-HALF_EXTENT_M, -HALF_EXTENT_M, HALF_EXTENT_M, HALF_EXTENT_M),
        ground_z=0.0,
        geo=GeoReference(latitude_deg=latitude, longitude_deg=longitude, height_m=15.0),
        landmarks=tuple(_layout(name).landmarks),
    )


def load_city_map(name: str, maps_dir: str | Path = "") -> CityMap:
    """The public map of scene ``name``: ``<maps_dir>/<name>.json`` where that exists (the
    maps the public-data loader writes), else an embedded city's.

    Raises:
        UnknownSceneError: neither a map file nor an embedded city.
        ConfigError: a malformed map file.
    """
    if maps_dir:
        path = Path(maps_dir) / f"{name}.json"
        if path.is_file():
            try:
                document = load_json(path, SUITE)
            except DocumentError as error:
                raise ConfigError(f"{error} (a city map)") from None
            return city_map_from_json(document, str(path))
    if name not in CITY_NAMES:
        where = f"no {Path(maps_dir) / f'{name}.json'} and " if maps_dir else ""
        raise UnknownSceneError(f"city map {name!r}: {where}not one of {', '.join(CITY_NAMES)}")
    return embedded_city_map(name)


@lru_cache(maxsize=2)
def load_city(name: str) -> City:
    """Build the scene of an embedded city (deterministic in ``name``).

    Raises:
        UnknownSceneError: not one of ``CITY_NAMES``.
    """
    started = time.perf_counter()
    builder = laid_out_city(name)
    scene = builder.build(distribution="id", agent_radius_m=0.5, started=started)
    return City(map=embedded_city_map(name), scene=scene, goals=tuple(_layout(name).goals))


def laid_out_city(name: str) -> SceneBuilder:
    """A city's builder with all its pieces added, before anything is built from them.

    Raises:
        UnknownSceneError: not one of ``CITY_NAMES``.
    """
    # Imported here: the embedded simulator pulls in Embree, which maps and scoring never need.
    from aerialdojo.sim.embedded.builder import SceneBuilder as Builder  # noqa: PLC0415
    from aerialdojo.sim.embedded.catalogue import COLOURS  # noqa: PLC0415
    from aerialdojo.sim.embedded.primitives import SEAT_M, box  # noqa: PLC0415
    from aerialdojo.sim.embedded.scenery import fountain, tree  # noqa: PLC0415
    from aerialdojo.sim.embedded.terrain import flat  # noqa: PLC0415

    def rgb(paint: Paint) -> tuple[int, int, int]:
        return COLOURS[paint] if isinstance(paint, str) else paint

    layout = _layout(name)
    builder = Builder(
        scene=name, scene_type="CityNavTown", family="urban", seed=(zlib.crc32(name.encode()), 2)
    )
    builder.terrain(
        HALF_EXTENT_M,
        flat(0.0),
        lambda centres, _: np.broadcast_to(np.asarray((150, 150, 140)), (len(centres), 3)),
        resolution_m=30.0,
        ceiling_m=CEILING_M,
    )
    for landmark in layout.landmarks:
        if landmark.kind == "street":
            (x0, y0), _, (x1, y1), _ = landmark.polygon
            if x1 - x0 < y1 - y0:
                builder.road([((x0 + x1) / 2, y0), ((x0 + x1) / 2, y1)], STREET_WIDTH_M, _ASPHALT)
            else:
                builder.road([(x0, (y0 + y1) / 2), (x1, (y0 + y1) / 2)], STREET_WIDTH_M, _ASPHALT)
    for slab_name, outline, colour, semantic in layout.slabs:
        (x0, y0), _, (x1, y1), _ = outline
        # Slabs start under the deepest bottom of what stands on them (a fountain's spout,
        # 2 SEAT_M down), so that no two pieces share a plane.
        slab = box(x1 - x0, y1 - y0, 0.2 + 3.0 * SEAT_M).moved(
            ((x0 + x1) / 2, (y0 + y1) / 2, -3.0 * SEAT_M), 0.0
        )
        builder.structure(slab_name, semantic, [(slab, rgb(colour))])
    for building_name, bx, by, sx, sy, height, wall, roof in layout.buildings:
        builder.building(
            building_name, bx, by, (sx, sy, height), rgb(wall), roof=rgb(roof), base=0.0
        )
    for object_id, x, y, yaw, colour in layout.cars:
        body = box(4.6, 2.0, 0.9).moved((x, y, 0.0), yaw)
        cabin = box(2.6, 1.8, 0.6 + SEAT_M).moved((x, y, 0.9 - SEAT_M), yaw)
        builder.structure(object_id, "sedan", [(body, rgb(colour)), (cabin, rgb(colour))])
    for fountain_name, x, y in layout.fountains:
        fountain(builder, fountain_name, x, y)
    for x, y in layout.trees:
        tree(builder, x, y, "broadleaf")
    return builder


def city_scene(name: str) -> EmbeddedScene:
    """The rendered scene of embedded city ``name`` (the citynav backend's scene source).

    Raises:
        UnknownSceneError: not one of ``CITY_NAMES``.
    """
    return load_city(name).scene
