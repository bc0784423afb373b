"""Reusable pieces of scenes: trees, street grids, parking rows, towers and other landmarks."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aerialdojo.sim.embedded.builder import Colour, SceneBuilder
from aerialdojo.sim.embedded.primitives import SEAT_M, Mesh, beam, box, cylinder, frustum, sphere

_TRUNK: Colour = (96, 70, 46)


def tree(
    b: SceneBuilder, x: float, y: float, kind: str = "broadleaf", height: float | None = None
) -> None:
    """A tree: conifer (stacked cones), broadleaf (round crown), palm, dead or snowy conifer.

    Crowns overhang their trunk, so agents can fly under and hit them from below.
    """
    rng = b.rng
    tall = height or float(rng.uniform(6.0, 12.0))
    base = b.ground(x, y) - 0.2
    pieces: list[tuple[Mesh, Colour]] = []
    if kind in ("conifer", "snowy"):
        pieces.append((cylinder(0.25, tall * 0.3, 6).moved((x, y, base)), _TRUNK))
        needles: Colour = (34, 84, 46) if kind == "conifer" else (226, 232, 238)
        for tier in range(3):
            radius = tall * (0.28 - 0.06 * tier)
            bottom = tall * (0.22 + 0.22 * tier)
            pieces.append(
                (frustum(radius, 0.0, tall * 0.38, 8).moved((x, y, base + bottom)), needles)
            )
    elif kind == "palm":
        lean = rng.uniform(-0.8, 0.8, 2)
        top = (x + lean[0], y + lean[1], base + tall)
        pieces.append((beam((x, y, base), top, 0.35), (140, 110, 70)))
        # Opposite fronds would share side planes where they meet: every other one is thinner.
        for index, angle in enumerate(np.linspace(0.0, 2.0 * math.pi, 6, endpoint=False)):
            tip = (top[0] + 3.0 * math.cos(angle), top[1] + 3.0 * math.sin(angle), top[2] - 1.2)
            pieces.append((beam(top, tip, 0.3 - 2.0 * SEAT_M * (index % 2)), (52, 128, 48)))
    elif kind == "dead":
        pieces.append((cylinder(0.3, tall * 0.7, 6).moved((x, y, base)), (90, 78, 66)))
        for angle in rng.uniform(0.0, 2.0 * math.pi, 3):
            start = (x, y, base + tall * 0.5)
            pieces.append(
                (
                    beam(
                        start,
                        (x + 2.5 * math.cos(angle), y + 2.5 * math.sin(angle), base + tall * 0.8),
                        0.18,
                    ),
                    (90, 78, 66),
                )
            )
    else:
        crown: Colour = tuple(int(c) for c in rng.integers((40, 100, 36), (70, 140, 60)))  # type: ignore[assignment]
        pieces.append((cylinder(0.3, tall * 0.5, 6).moved((x, y, base)), _TRUNK))
        radius = tall * 0.3
        pieces.append((sphere(radius, 5, 8).moved((x, y, base + tall * 0.4)), crown))
    b.structure("tree", "tree", pieces, footprint=(x, y, 1.2))


def trees(
    b: SceneBuilder,
    count: int,
    kinds: Sequence[str],
    region: tuple[float, float, float, float] | None = None,
    clearance: float = 1.5,
) -> None:
    """Scatter up to ``count`` trees over a rectangle ``(x0, y0, x1, y1)`` (default: all)."""
    reach = b.half_extent - 3.0
    x0, y0, x1, y1 = region or (-reach, -reach, reach, reach)
    for _ in range(count):
        x, y = (float(v) for v in b.rng.uniform((x0, y0), (x1, y1)))
        if b.is_clear(x, y, clearance):
            tree(b, x, y, str(b.rng.choice(list(kinds))))


def street_grid(b: SceneBuilder, lines: Sequence[float], width: float = 7.0) -> None:
    """Roads along x = c and y = c for each c in ``lines``, crossing at every intersection."""
    reach = b.half_extent - 1.0
    stops = [-reach, *sorted(lines), reach]
    for c in lines:
        b.road([(c, s) for s in stops], width)
        b.road([(s, c) for s in stops], width)


def parking_rows(
    b: SceneBuilder,
    origin: tuple[float, float],
    rows: int,
    columns: int,
    categories: Sequence[str],
    *,
    occupancy: float = 0.55,
    yaw: float = 0.0,
) -> None:
    """Rows of parking bays (painted slab) with vehicles parked in some of them."""
    bay_width, bay_length, aisle = 3.0, 6.0, 7.0
    x0, y0 = origin
    # The slab starts below the ground, where the cars parked on it start (the ground).
    lot = box(columns * bay_width + 2.0, rows * (bay_length + aisle), 0.04 + 2.0 * SEAT_M)
    centre = (x0 + columns * bay_width / 2.0, y0 + rows * (bay_length + aisle) / 2.0)
    b.structure(
        "parking_lot",
        "road",
        [(lot.moved((*centre, b.ground(*centre) - 2.0 * SEAT_M)), (84, 86, 90))],
    )
    for row in range(rows):
        for column in range(columns):
            if b.rng.random() < occupancy:
                x = x0 + (column + 0.5) * bay_width
                y = y0 + row * (bay_length + aisle) + bay_length / 2.0
                b.place(
                    str(b.rng.choice(list(categories))),
                    x,
                    y,
                    yaw=yaw + math.pi / 2.0 + float(b.rng.normal(0, 0.05)),
                )


def tower(
    b: SceneBuilder,
    name: str,
    description: str,
    *,
    at: tuple[float, float],
    height: float,
    colour: Colour,
    top: Colour | None = None,
) -> None:
    """A slender landmark tower (clock tower, lighthouse, mast) with a distinct top."""
    x, y = at
    base = b.ground_under(x, y, 3.0)
    pieces = [
        (frustum(3.0, 2.0, height, 12).moved((x, y, base)), colour),
        (
            frustum(2.6, 0.0, height * 0.18 + SEAT_M, 12).moved((x, y, base + height - SEAT_M)),
            top or colour,
        ),
    ]
    b.landmark(name, description, pieces, footprint_radius=4.0)


def fountain(b: SceneBuilder, name: str, x: float, y: float, radius: float = 6.0) -> None:
    """A round fountain with a tall central spout: a plaza landmark."""
    base = b.ground(x, y)
    # The pool and the spout start a little deeper than the rim (bottoms on one plane).
    pieces = [
        (cylinder(radius, 0.8, 20).moved((x, y, base)), (200, 200, 196)),
        (cylinder(radius - 0.6, 0.85 + SEAT_M, 20).moved((x, y, base - SEAT_M)), (80, 150, 196)),
        (
            frustum(1.2, 0.4, 5.0 + 2.0 * SEAT_M, 10).moved((x, y, base - 2.0 * SEAT_M)),
            (210, 206, 198),
        ),
        (sphere(1.0, 5, 10).moved((x, y, base + 5.0)), (120, 180, 220)),
    ]
    b.landmark(
        name, f"a round fountain {2 * radius:.0f} m across with a tall spout", pieces, radius + 1.0
    )


def crane(
    b: SceneBuilder,
    name: str,
    x: float,
    y: float,
    *,
    height: float,
    jib: float,
    yaw: float,
    colour: Colour = (230, 180, 30),
) -> None:
    """A tower crane: mast, long horizontal jib and counter-jib (overhanging geometry)."""
    base = b.ground(x, y)
    direction = np.array((math.cos(yaw), math.sin(yaw), 0.0))
    top = np.array((x, y, base + height))
    pieces = [
        # The mast ends inside the cab box at its top (their tops would share a plane).
        (box(2.0, 2.0, height - SEAT_M).moved((x, y, base)), colour),
        (beam(top - direction * jib * 0.3, top + direction * jib, 1.2), colour),
        (
            box(3.0, 3.0, 2.0).moved(tuple(top - direction * jib * 0.28 - (0.0, 0.0, 2.0))),
            (120, 120, 120),
        ),
        (box(2.4, 2.4, 3.0).moved((x, y, base + height - 3.0)), (60, 70, 90)),
        (
            beam(
                top + direction * jib * 0.8,
                top + direction * jib * 0.8 - (0.0, 0.0, height * 0.4),
                0.15,
            ),
            (60, 60, 60),
        ),
    ]
    b.landmark(
        name,
        f"a {colour_word(colour)} tower crane {height:.0f} m tall",
        pieces,
        footprint_radius=3.0,
    )


def colour_word(colour: Colour) -> str:
    """A rough colour name for landmark descriptions."""
    r, g, bl = colour
    if r > 180 and g > 150 and bl < 90:
        return "yellow"
    if r > 160 and g < 90:
        return "red"
    if bl > r and bl > g:
        return "blue"
    if g > r and g > bl:
        return "green"
    return "grey" if max(r, g, bl) - min(r, g, bl) < 30 else "brown"


def house(
    b: SceneBuilder, x: float, y: float, yaw: float, size: tuple[float, float, float]
) -> None:
    """A house with a pitched roof in one of a few wall and roof colours."""
    walls = ((232, 222, 200), (210, 190, 160), (190, 200, 210), (236, 236, 236), (200, 170, 140))
    roofs = ((150, 60, 50), (80, 80, 90), (120, 90, 60), (60, 90, 120))
    b.building(
        "house", x, y, size, walls[int(b.rng.integers(len(walls)))], yaw=yaw,
        roof=roofs[int(b.rng.integers(len(roofs)))], gable=True,
    )  # fmt: skip


def block_grid(
    b: SceneBuilder,
    centres: Sequence[float],
    block: float,
    *,
    heights: tuple[float, float],
    palette: Sequence[Colour],
    fill: float = 0.8,
    roof: Colour = (110, 110, 116),
) -> None:
    """City blocks: 2x2 buildings in each block centred on ``centres`` x ``centres``."""
    quarter = block / 4.0
    for bx in centres:
        for by in centres:
            for dx in (-quarter, quarter):
                for dy in (-quarter, quarter):
                    x, y = bx + dx, by + dy
                    if b.rng.random() > fill or not b.is_clear(x, y, quarter * 1.2):
                        continue
                    # Blocks start SEAT_M below the ground: a landmark tower may stand in
                    # one's corner (their bottoms would share the ground's plane).
                    b.building(
                        "building", x, y,
                        (quarter * 1.7, quarter * 1.7, float(b.rng.uniform(*heights)) + SEAT_M),
                        palette[int(b.rng.integers(len(palette)))], roof=roof,
                        base=b.ground_under(x, y, quarter * 0.85) - SEAT_M,
                    )  # fmt: skip
