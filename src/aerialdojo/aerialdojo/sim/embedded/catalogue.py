"""The object vocabulary: target categories, their shapes and sizes, colours and materials."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from aerialdojo.sim.embedded.primitives import (
    SEAT_M,
    Mesh,
    beam,
    box,
    cylinder,
    extrude,
    frustum,
    gable_roof,
    sphere,
)

#: Named colours an object instance can have (sRGB, 0-255).
COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (196, 40, 38),
    "blue": (38, 84, 186),
    "green": (46, 139, 62),
    "yellow": (232, 196, 38),
    "white": (236, 236, 232),
    "black": (34, 34, 36),
    "grey": (128, 130, 134),
    "silver": (184, 188, 194),
    "orange": (232, 118, 28),
    "brown": (118, 78, 44),
    "purple": (112, 58, 150),
    "pink": (228, 128, 170),
    "beige": (214, 196, 156),
    "teal": (30, 140, 140),
    "navy": (28, 40, 96),
    "maroon": (118, 28, 40),
    "olive": (112, 118, 46),
    "cyan": (64, 196, 220),
    "tan": (196, 160, 110),
    "lime": (150, 206, 60),
}

#: Fixed materials of the secondary parts of objects (tyres, glass, metal, wood).
MATERIALS: dict[str, tuple[int, int, int]] = {
    "dark": (40, 40, 42),
    "glass": (70, 96, 120),
    "metal": (150, 154, 160),
    "wood": (128, 92, 58),
    "canvas": (224, 216, 196),
    "concrete": (168, 166, 160),
}

#: Role of an object part whose colour is the instance's own colour.
MAIN = "main"

Piece = tuple[Mesh, str]
ShapeBuilder = Callable[[float, float, float], list[Piece]]

# A part resting on another reaches SEAT_M down into it (taller by as much, so its top stays)
# and parts standing on the ground start SEAT_M below it: no two parts share a face's plane.


def _wheels(length: float, width: float, radius: float) -> list[Piece]:
    return [
        (box(radius * 1.8, 0.25, radius * 2.0).moved((x, y, 0.0)), "dark")
        for x in (-length * 0.32, length * 0.32)
        for y in (-width / 2.0 + 0.1, width / 2.0 - 0.1)
    ]


def _car(length: float, width: float, height: float) -> list[Piece]:
    wheel = min(0.35, height * 0.22)
    body = box(length, width - 0.1, height * 0.5).moved((0.0, 0.0, wheel * 0.8))
    cabin = box(length * 0.55, width - 0.2, height * 0.45 + SEAT_M).moved(
        (-length * 0.05, 0.0, wheel * 0.8 + height * 0.5 - SEAT_M)
    )
    return [(body, MAIN), (cabin, "glass"), *_wheels(length, width, wheel)]


def _truck(length: float, width: float, height: float) -> list[Piece]:
    wheel = min(0.5, height * 0.15)
    cab = box(length * 0.25, width, height * 0.75).moved((length * 0.375, 0.0, wheel))
    cargo = box(length * 0.72, width, height - wheel).moved((-length * 0.14, 0.0, wheel))
    return [(cab, MAIN), (cargo, "canvas"), *_wheels(length, width, wheel)]


def _pickup(length: float, width: float, height: float) -> list[Piece]:
    wheel = min(0.4, height * 0.2)
    bed = box(length, width, height * 0.45).moved((0.0, 0.0, wheel))
    cab = box(length * 0.4, width - 0.1, height * 0.45 + SEAT_M).moved(
        (length * 0.12, 0.0, wheel + height * 0.45 - SEAT_M)
    )
    return [(bed, MAIN), (cab, MAIN), *_wheels(length, width, wheel)]


def _bus(length: float, width: float, height: float) -> list[Piece]:
    wheel = 0.5
    body = box(length, width, height - wheel).moved((0.0, 0.0, wheel))
    band = box(length * 0.9, width + 0.04, height * 0.25).moved((0.0, 0.0, height * 0.55))
    return [(body, MAIN), (band, "glass"), *_wheels(length, width, wheel)]


def _block(length: float, width: float, height: float) -> list[Piece]:
    return [(box(length, width, height), MAIN)]


def _crate(length: float, width: float, height: float) -> list[Piece]:
    lid = box(length + 0.1, width + 0.1, 0.08 + SEAT_M).moved((0.0, 0.0, height - SEAT_M))
    return [(box(length, width, height), MAIN), (lid, "dark")]


def _upright_cylinder(length: float, width: float, height: float) -> list[Piece]:
    radius = min(length, width) / 2.0
    cap = frustum(radius, radius * 0.6, height * 0.08 + SEAT_M, 14).moved(
        (0.0, 0.0, height - SEAT_M)
    )
    return [(cylinder(radius, height, 14), MAIN), (cap, "metal")]


def _lying_cylinder(length: float, width: float, height: float) -> list[Piece]:
    radius = min(width, height) / 2.0
    lying = np.array(((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0)))
    tank = cylinder(radius, length, 14).moved((-length / 2.0, 0.0, radius), rotation=lying)
    saddles = [
        (box(0.3, width * 0.8, radius * 0.6).moved((x, 0.0, 0.0)), "dark")
        for x in (-length * 0.3, length * 0.3)
    ]
    return [(tank, MAIN), *saddles]


def _tent(length: float, width: float, height: float) -> list[Piece]:
    return [(gable_roof(length, width, height), MAIN)]


def _canopy(length: float, width: float, height: float) -> list[Piece]:
    posts = [
        (box(0.12, 0.12, height + SEAT_M).moved((x, y, 0.0)), "metal")
        for x in (-length / 2.0 + 0.1, length / 2.0 - 0.1)
        for y in (-width / 2.0 + 0.1, width / 2.0 - 0.1)
    ]
    roof = gable_roof(length + 0.4, width + 0.4, height * 0.25).moved((0.0, 0.0, height))
    return [*posts, (roof, MAIN)]


def _umbrella(length: float, width: float, height: float) -> list[Piece]:
    radius = max(length, width) / 2.0
    pole = cylinder(0.04, height, 6)
    shade = frustum(radius, 0.0, height * 0.2, 10).moved((0.0, 0.0, height * 0.8))
    return [(pole, "metal"), (shade, MAIN)]


def _lamp_post(length: float, width: float, height: float) -> list[Piece]:
    pole = cylinder(0.1, height + SEAT_M, 8)
    head = box(max(length, 0.4), max(width, 0.3), 0.3).moved((length / 3.0, 0.0, height))
    return [(pole, "metal"), (head, MAIN)]


def _billboard(length: float, width: float, height: float) -> list[Piece]:
    posts = [
        (box(0.2, 0.2, height * 0.6 + SEAT_M).moved((0.0, y, 0.0)), "metal")
        for y in (-length / 3.0, length / 3.0)
    ]
    board = box(max(width, 0.2), length, height * 0.4).moved((0.0, 0.0, height * 0.6))
    return [*posts, (board, MAIN)]


def _bench(length: float, width: float, height: float) -> list[Piece]:
    seat = box(length, width, 0.08).moved((0.0, 0.0, height * 0.5))
    # The back stands in the seat, a little short of its ends, and the legs reach into it a
    # little inside its sides (else they would share planes).
    back = box(length - 2.0 * SEAT_M, 0.08, height * 0.5 - 0.04).moved(
        (0.0, width / 2.0, height * 0.5 + 0.04)
    )
    legs = [
        (box(0.08, width - 2.0 * SEAT_M, height * 0.5 + SEAT_M).moved((x, 0.0, 0.0)), "metal")
        for x in (-length / 2.0 + 0.1, length / 2.0 - 0.1)
    ]
    return [(seat, MAIN), (back, MAIN), *legs]


def _table(length: float, width: float, height: float) -> list[Piece]:
    top = box(length, width, 0.08).moved((0.0, 0.0, height - 0.08))
    legs = [
        (box(0.08, 0.08, height - 0.08 + SEAT_M).moved((x, y, 0.0)), "metal")
        for x in (-length / 2.0 + 0.1, length / 2.0 - 0.1)
        for y in (-width / 2.0 + 0.1, width / 2.0 - 0.1)
    ]
    return [(top, MAIN), *legs]


def _ball(length: float, width: float, height: float) -> list[Piece]:
    return [(sphere(min(length, width, height) / 2.0, 6, 12), MAIN)]


def _boat(length: float, width: float, height: float) -> list[Piece]:
    hull = box(length * 0.75, width, height * 0.45).moved((-length * 0.125, 0.0, 0.0))
    # The bow starts inside the hull (its back would share the hull's front plane), a little
    # lower than the hull (or their tops and bottoms would share planes where they overlap).
    bow = extrude(
        (
            (length * 0.25 - SEAT_M, -width / 2.0),
            (length / 2.0, 0.0),
            (length * 0.25 - SEAT_M, width / 2.0),
        ),
        height * 0.45,
    ).moved((0.0, 0.0, -SEAT_M))
    cabin = box(length * 0.3, width * 0.7, height * 0.55 + SEAT_M).moved(
        (-length * 0.15, 0.0, height * 0.45 - SEAT_M)
    )
    return [(hull, MAIN), (bow, MAIN), (cabin, "canvas")]


def _aircraft(length: float, width: float, height: float) -> list[Piece]:
    body_radius = height * 0.22
    lying = np.array(((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0)))
    fuselage = cylinder(body_radius, length, 10).moved(
        (-length / 2.0, 0.0, height * 0.3 + body_radius), rotation=lying
    )
    wing = box(length * 0.2, width, 0.12).moved((0.0, 0.0, height * 0.3 + body_radius))
    # The tail ends just short of the fuselage's rear cap (their ends would share a plane).
    tail = box(length * 0.12 - SEAT_M, 0.1, height * 0.5).moved(
        (-length * 0.44 + SEAT_M / 2.0, 0.0, height * 0.5)
    )
    gear = box(0.3, 0.3, height * 0.3 + body_radius * 0.2)
    return [(fuselage, MAIN), (wing, MAIN), (tail, MAIN), (gear, "dark")]


def _digger(length: float, width: float, height: float) -> list[Piece]:
    tracks = [
        (box(length * 0.8, width * 0.3, height * 0.25).moved((0.0, y, 0.0)), "dark")
        for y in (-width * 0.35, width * 0.35)
    ]
    # The body's back stops short of the tracks' ends (they would share a plane).
    body = box(length * 0.6 - SEAT_M, width * 0.9, height * 0.4 + SEAT_M).moved(
        (-length * 0.1 + SEAT_M / 2.0, 0.0, height * 0.25 - SEAT_M)
    )
    cab = box(length * 0.25, width * 0.4, height * 0.35 + SEAT_M).moved(
        (0.0, width * 0.2, height * 0.65 - SEAT_M)
    )
    arm = beam((length * 0.15, 0.0, height * 0.55), (length * 0.55, 0.0, height * 0.95), 0.35)
    stick = beam((length * 0.55, 0.0, height * 0.95), (length * 0.62, 0.0, height * 0.1), 0.3)
    return [*tracks, (body, MAIN), (cab, "glass"), (arm, MAIN), (stick, MAIN)]


def _pile(length: float, width: float, height: float) -> list[Piece]:
    base = frustum(max(length, width) / 2.0, max(length, width) / 6.0, height * 0.8, 10)
    top = sphere(max(length, width) / 5.0, 4, 8).moved(
        (0.0, 0.0, height * 0.8 - max(length, width) / 6.0)
    )
    return [(base, MAIN), (top, MAIN)]


def _stack(length: float, width: float, height: float) -> list[Piece]:
    layers = 3
    pieces: list[Piece] = []
    for layer in range(layers):
        shrink = 1.0 - 0.18 * layer
        seat = SEAT_M if layer else 0.0
        pieces.append(
            (
                box(length * shrink, width * shrink, height / layers + seat).moved(
                    (0.0, 0.0, layer * height / layers - seat)
                ),
                MAIN if layer % 2 == 0 else "wood",
            )
        )
    return pieces


def _frame(length: float, width: float, height: float) -> list[Piece]:
    half = length / 2.0
    # Legs start below the feet; the top bar is a little thinner than the legs it joins.
    return [
        (beam((-half, 0.0, -SEAT_M), (-half, 0.0, height), 0.12), MAIN),
        (beam((half, 0.0, -SEAT_M), (half, 0.0, height), 0.12), MAIN),
        (beam((-half, 0.0, height), (half, 0.0, height), 0.12 - 2.0 * SEAT_M), MAIN),
        (box(0.1, width, 0.1).moved((-half, 0.0, 0.0)), "metal"),
        (box(0.1, width, 0.1).moved((half, 0.0, 0.0)), "metal"),
    ]


def _booth(length: float, width: float, height: float) -> list[Piece]:
    cabin = box(length, width, height * 0.85)
    roof = box(length + 0.6, width + 0.6, height * 0.15 + SEAT_M).moved(
        (0.0, 0.0, height * 0.85 - SEAT_M)
    )
    window = box(length * 0.6, width + 0.04, height * 0.3).moved((0.0, 0.0, height * 0.4))
    return [(cabin, MAIN), (window, "glass"), (roof, "dark")]


def _statue(length: float, width: float, height: float) -> list[Piece]:
    pedestal = box(length, width, height * 0.3)
    figure = frustum(
        min(length, width) * 0.3, min(length, width) * 0.18, height * 0.55 + SEAT_M, 10
    ).moved((0.0, 0.0, -SEAT_M))
    head = sphere(min(length, width) * 0.15, 4, 8).moved((0.0, 0.0, height * 0.83))
    return [(pedestal, "concrete"), (figure.moved((0.0, 0.0, height * 0.3)), MAIN), (head, MAIN)]


def _lookout(length: float, width: float, height: float) -> list[Piece]:
    legs = [
        (beam((x * 0.8, y * 0.8, 0.0), (x * 0.5, y * 0.5, height * 0.7), 0.15), "wood")
        for x in (-length / 2.0, length / 2.0)
        for y in (-width / 2.0, width / 2.0)
    ]
    hut = box(length * 0.8, width * 0.8, height * 0.2).moved((0.0, 0.0, height * 0.7))
    roof = gable_roof(length, width, height * 0.1 + SEAT_M).moved((0.0, 0.0, height * 0.9 - SEAT_M))
    return [*legs, (hut, MAIN), (roof, "dark")]


def _rack(length: float, width: float, height: float) -> list[Piece]:
    uprights = [
        (box(0.1, 0.1, height + SEAT_M).moved((x, y, 0.0)), "metal")
        for x in (-length / 2.0, length / 2.0)
        for y in (-width / 2.0, width / 2.0)
    ]
    shelves = [
        (box(length, width, 0.08).moved((0.0, 0.0, height * k / 3.0)), MAIN) for k in (1, 2, 3)
    ]
    goods = [
        (
            box(length * 0.8, width * 0.8, height / 3.0 - 0.3 + SEAT_M).moved(
                (0.0, 0.0, height * k / 3.0 + 0.08 - SEAT_M)
            ),
            "canvas",
        )
        for k in (0, 1)
    ]
    return [*uprights, *shelves, *goods]


def _antenna(length: float, width: float, height: float) -> list[Piece]:
    mast = frustum(max(length, width) / 2.0, 0.08, height, 6)
    dish = frustum(0.05, max(length, width), 0.4, 10).moved((0.0, 0.0, height * 0.7))
    return [(mast, "metal"), (dish, MAIN)]


def _sign(length: float, width: float, height: float) -> list[Piece]:
    # The post is a little thinner than the board and ends inside it (a 10 cm board and post
    # would share their side and top planes).
    post = box(0.1 - 2.0 * SEAT_M, 0.1 - 2.0 * SEAT_M, height - SEAT_M)
    board = box(max(width, 0.08), length, height * 0.35).moved((0.0, 0.0, height * 0.65))
    return [(post, "metal"), (board, MAIN)]


def _cone_marker(length: float, width: float, height: float) -> list[Piece]:
    # The base is a little under 5 cm: a road's surface lies 5 cm above the ground.
    base = box(length, width, 0.05 - SEAT_M)
    cone = frustum(min(length, width) * 0.4, 0.03, height + SEAT_M, 10).moved((0.0, 0.0, -SEAT_M))
    return [(base, "dark"), (cone, MAIN)]


def _plant(length: float, width: float, height: float) -> list[Piece]:
    trunk = cylinder(max(length, width) * 0.08, height * 0.45, 6)
    crown = sphere(max(length, width) / 2.0, 4, 8).moved((0.0, 0.0, height - max(length, width)))
    return [(trunk, "wood"), (crown, MAIN)]


def _playset(length: float, width: float, height: float) -> list[Piece]:
    tower = box(width, width, height * 0.5)
    roof = gable_roof(width + 0.2, width + 0.2, height * 0.3).moved((0.0, 0.0, height * 0.7))
    posts = [
        (box(0.1, 0.1, height * 0.7 + 2.0 * SEAT_M).moved((x, y, -SEAT_M)), "wood")
        for x in (-width / 2.0, width / 2.0)
        for y in (-width / 2.0, width / 2.0)
    ]
    slide = beam((width / 2.0, 0.0, height * 0.5), (length - width / 2.0, 0.0, 0.1), 0.5)
    return [(tower, "wood"), *posts, (roof, MAIN), (slide, MAIN)]


def _carousel(length: float, width: float, height: float) -> list[Piece]:
    radius = min(length, width) / 2.0
    deck = cylinder(radius, 0.4, 16)
    column = cylinder(radius * 0.2, height * 0.8 + SEAT_M, 10).moved((0.0, 0.0, -SEAT_M))
    roof = frustum(radius * 1.05, 0.1, height * 0.3, 16).moved((0.0, 0.0, height * 0.7))
    return [(deck, "wood"), (column, "metal"), (roof, MAIN)]


@dataclass(frozen=True)
class Category:
    """A target-object category: its shape builder, nominal size (l, w, h) and colours."""

    name: str
    shape: ShapeBuilder
    size: tuple[float, float, float]
    colours: tuple[str, ...]
    attributes: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The category in words, e.g. ``"pickup truck"``."""
        return self.name.replace("_", " ")

    def build(self, colour: str, scale: float) -> list[tuple[Mesh, tuple[int, int, int]]]:
        """The object's parts in its local frame (x forward, base on z = 0) with colours."""
        length, width, height = (dimension * scale for dimension in self.size)
        return [
            (mesh, COLOURS[colour] if role == MAIN else MATERIALS[role])
            for mesh, role in self.shape(length, width, height)
        ]


_VEHICLE = ("red", "blue", "white", "black", "silver", "grey", "green", "yellow", "maroon", "navy")
_BRIGHT = ("red", "blue", "yellow", "green", "orange", "purple", "pink", "teal", "cyan", "lime")
_NEUTRAL = ("white", "grey", "beige", "brown", "tan", "black", "olive")
_STATES_VEHICLE = ("parked", "dusty", "freshly washed", "with a roof rack", "with tinted windows")
_STATES_OBJECT = ("new", "weathered", "dented", "freshly painted")
_STATES_DAMAGED = ("damaged", "overturned", "half-buried", "charred", "abandoned")

_CATEGORY_LIST: tuple[Category, ...] = (
    # Road vehicles.
    Category("sedan", _car, (4.6, 1.8, 1.45), _VEHICLE, _STATES_VEHICLE),
    Category("hatchback", _car, (3.9, 1.75, 1.5), _VEHICLE, _STATES_VEHICLE),
    Category("suv", _car, (4.8, 1.95, 1.8), _VEHICLE, _STATES_VEHICLE),
    Category("taxi", _car, (4.6, 1.8, 1.5), ("yellow", "white", "black"), _STATES_VEHICLE),
    Category("police_car", _car, (4.8, 1.85, 1.55), ("white", "navy", "black"), _STATES_VEHICLE),
    Category("ambulance", _truck, (6.2, 2.2, 2.7), ("white", "yellow", "red"), _STATES_VEHICLE),
    Category("fire_truck", _truck, (9.0, 2.5, 3.2), ("red", "yellow"), _STATES_VEHICLE),
    Category("pickup_truck", _pickup, (5.4, 2.0, 1.9), _VEHICLE, _STATES_VEHICLE),
    Category("delivery_van", _truck, (5.8, 2.1, 2.6), _VEHICLE, _STATES_VEHICLE),
    Category("box_truck", _truck, (8.0, 2.5, 3.4), _VEHICLE, _STATES_VEHICLE),
    Category(
        "city_bus",
        _bus,
        (12.0, 2.55, 3.2),
        ("red", "blue", "white", "green", "yellow"),
        _STATES_VEHICLE,
    ),
    Category("school_bus", _bus, (10.5, 2.5, 3.1), ("yellow", "orange"), _STATES_VEHICLE),
    Category("camper_van", _truck, (7.0, 2.3, 3.0), ("white", "beige", "silver"), _STATES_VEHICLE),
    Category("motorcycle", _block, (2.1, 0.7, 1.2), _VEHICLE, _STATES_VEHICLE),
    Category("golf_cart", _car, (2.5, 1.2, 1.8), ("white", "green", "beige"), _STATES_VEHICLE),
    Category(
        "tractor", _pickup, (4.0, 2.2, 2.8), ("green", "red", "yellow", "orange"), _STATES_VEHICLE
    ),
    Category("forklift", _pickup, (2.6, 1.2, 2.2), ("yellow", "orange", "red"), _STATES_VEHICLE),
    Category("excavator", _digger, (7.5, 3.0, 3.2), ("yellow", "orange"), _STATES_VEHICLE),
    Category("bulldozer", _digger, (6.0, 3.4, 3.0), ("yellow", "orange"), _STATES_VEHICLE),
    Category(
        "cement_mixer",
        _lying_cylinder,
        (7.0, 2.4, 2.4),
        ("white", "orange", "grey"),
        _STATES_VEHICLE,
    ),
    Category("dump_truck", _truck, (8.5, 2.8, 3.5), ("yellow", "orange", "grey"), _STATES_VEHICLE),
    Category(
        "snowmobile", _block, (3.0, 1.1, 1.2), ("red", "black", "yellow", "blue"), _STATES_VEHICLE
    ),
    Category("snowcat", _digger, (6.0, 3.0, 2.8), ("red", "orange", "yellow"), _STATES_VEHICLE),
    Category(
        "quad_bike", _block, (2.0, 1.2, 1.1), ("red", "green", "black", "orange"), _STATES_VEHICLE
    ),
    Category("jeep", _car, (4.2, 1.9, 1.9), ("olive", "tan", "black", "green"), _STATES_VEHICLE),
    Category("military_truck", _truck, (7.5, 2.5, 3.0), ("olive", "tan"), _STATES_VEHICLE),
    Category(
        "tanker_truck",
        _lying_cylinder,
        (10.0, 2.5, 2.8),
        ("silver", "white", "red"),
        _STATES_VEHICLE,
    ),
    Category("food_truck", _truck, (6.5, 2.3, 3.0), _BRIGHT, _STATES_VEHICLE),
    Category("bicycle", _block, (1.8, 0.5, 1.0), _BRIGHT, _STATES_OBJECT),
    Category(
        "wrecked_car", _car, (4.5, 1.8, 1.3), ("grey", "black", "brown", "maroon"), _STATES_DAMAGED
    ),
    Category("burned_bus", _bus, (11.0, 2.5, 3.0), ("black", "grey", "brown"), _STATES_DAMAGED),
    # Rail, water and air.
    Category(
        "locomotive", _bus, (18.0, 3.0, 4.2), ("red", "blue", "yellow", "green"), _STATES_VEHICLE
    ),
    Category(
        "freight_wagon",
        _block,
        (14.0, 2.9, 3.6),
        ("brown", "grey", "maroon", "blue"),
        _STATES_OBJECT,
    ),
    Category(
        "tank_wagon",
        _lying_cylinder,
        (12.0, 2.9, 3.4),
        ("black", "silver", "white"),
        _STATES_OBJECT,
    ),
    Category("handcar", _table, (2.5, 1.6, 1.2), ("yellow", "red"), _STATES_OBJECT),
    Category("speedboat", _boat, (7.0, 2.4, 1.8), ("white", "red", "blue"), _STATES_OBJECT),
    Category(
        "fishing_boat", _boat, (12.0, 4.0, 4.0), ("blue", "red", "white", "green"), _STATES_OBJECT
    ),
    Category("rowboat", _boat, (4.0, 1.5, 0.9), ("white", "green", "red", "brown"), _STATES_OBJECT),
    Category("rescue_boat", _boat, (6.0, 2.4, 1.6), ("orange", "red", "yellow"), _STATES_OBJECT),
    Category("yacht", _boat, (16.0, 5.0, 5.0), ("white", "navy"), _STATES_OBJECT),
    Category("tugboat", _boat, (14.0, 5.0, 5.5), ("red", "black", "yellow"), _STATES_OBJECT),
    Category("kayak", _boat, (4.0, 0.8, 0.5), ("yellow", "orange", "red", "lime"), _STATES_OBJECT),
    Category("jet_ski", _boat, (3.2, 1.2, 1.0), ("yellow", "blue", "red"), _STATES_OBJECT),
    Category(
        "helicopter",
        _aircraft,
        (12.0, 2.5, 4.0),
        ("red", "white", "blue", "yellow"),
        _STATES_OBJECT,
    ),
    Category(
        "light_aircraft", _aircraft, (8.0, 10.0, 2.8), ("white", "red", "blue"), _STATES_OBJECT
    ),
    Category(
        "buoy",
        _upright_cylinder,
        (1.4, 1.4, 1.8),
        ("red", "yellow", "green", "orange"),
        _STATES_OBJECT,
    ),
    Category("life_raft", _upright_cylinder, (2.4, 2.4, 0.6), ("orange", "yellow"), _STATES_OBJECT),
    # Containers and site equipment.
    Category(
        "shipping_container",
        _block,
        (12.2, 2.44, 2.6),
        ("red", "blue", "green", "orange", "grey", "maroon"),
        _STATES_OBJECT,
    ),
    Category(
        "short_container",
        _block,
        (6.1, 2.44, 2.6),
        ("red", "blue", "green", "orange", "grey"),
        _STATES_OBJECT,
    ),
    Category(
        "dumpster", _crate, (3.6, 1.8, 1.6), ("green", "blue", "grey", "orange"), _STATES_OBJECT
    ),
    Category("recycling_bin", _crate, (1.2, 1.0, 1.3), ("blue", "green", "yellow"), _STATES_OBJECT),
    Category(
        "trash_can",
        _upright_cylinder,
        (0.7, 0.7, 1.0),
        ("green", "grey", "black", "blue"),
        _STATES_OBJECT,
    ),
    Category("wooden_crate", _crate, (1.4, 1.2, 1.2), ("brown", "tan"), _STATES_OBJECT),
    Category("pallet_stack", _stack, (1.3, 1.1, 1.4), ("tan", "brown", "blue"), _STATES_OBJECT),
    Category(
        "oil_drum",
        _upright_cylinder,
        (0.6, 0.6, 0.9),
        ("blue", "red", "yellow", "black", "green"),
        _STATES_OBJECT,
    ),
    Category(
        "gas_cylinder_rack", _rack, (2.0, 1.0, 1.8), ("yellow", "grey", "green"), _STATES_OBJECT
    ),
    Category(
        "storage_tank",
        _upright_cylinder,
        (6.0, 6.0, 7.0),
        ("white", "silver", "grey"),
        _STATES_OBJECT,
    ),
    Category(
        "fuel_tank", _lying_cylinder, (6.0, 2.4, 2.4), ("white", "silver", "red"), _STATES_OBJECT
    ),
    Category(
        "generator", _block, (2.5, 1.2, 1.5), ("yellow", "orange", "grey", "green"), _STATES_OBJECT
    ),
    Category(
        "portable_toilet",
        _booth,
        (1.2, 1.2, 2.3),
        ("blue", "green", "orange", "grey"),
        _STATES_OBJECT,
    ),
    Category("site_office", _booth, (6.0, 2.5, 2.8), ("white", "blue", "grey"), _STATES_OBJECT),
    Category("cable_reel", _lying_cylinder, (1.2, 1.8, 1.8), ("brown", "tan"), _STATES_OBJECT),
    Category("sand_pile", _pile, (6.0, 6.0, 2.5), ("tan", "beige"), ()),
    Category("gravel_pile", _pile, (5.0, 5.0, 2.0), ("grey",), ()),
    Category("rebar_bundle", _stack, (6.0, 1.2, 0.6), ("brown", "maroon"), _STATES_OBJECT),
    Category("brick_stack", _stack, (1.6, 1.2, 1.2), ("red", "maroon", "brown"), _STATES_OBJECT),
    Category(
        "traffic_cone_group", _cone_marker, (1.2, 1.2, 0.8), ("orange", "red"), _STATES_OBJECT
    ),
    Category("water_barrier", _block, (2.0, 0.6, 1.0), ("orange", "red", "white"), _STATES_OBJECT),
    Category(
        "pipe_stack", _lying_cylinder, (6.0, 1.4, 1.4), ("grey", "black", "blue"), _STATES_OBJECT
    ),
    Category("pallet_rack", _rack, (3.0, 1.2, 3.0), ("blue", "orange", "red"), _STATES_OBJECT),
    Category("transformer_box", _block, (2.0, 1.6, 2.2), ("grey", "green"), _STATES_OBJECT),
    Category("air_conditioner_unit", _block, (1.2, 0.8, 1.0), ("white", "grey"), _STATES_OBJECT),
    Category("cooling_unit", _block, (4.0, 2.5, 2.5), ("white", "grey", "silver"), _STATES_OBJECT),
    Category("signal_cabinet", _block, (1.0, 0.8, 1.8), ("grey", "green", "beige"), _STATES_OBJECT),
    # Street furniture.
    Category(
        "street_lamp", _lamp_post, (1.2, 0.4, 7.0), ("grey", "black", "green"), _STATES_OBJECT
    ),
    Category("traffic_light", _lamp_post, (0.5, 0.5, 5.0), ("black", "yellow"), _STATES_OBJECT),
    Category("billboard", _billboard, (6.0, 0.3, 7.0), _BRIGHT, _STATES_OBJECT),
    Category(
        "road_sign", _sign, (1.0, 0.1, 2.6), ("blue", "green", "red", "white"), _STATES_OBJECT
    ),
    Category("bus_shelter", _canopy, (4.0, 1.8, 2.6), ("grey", "green", "blue"), _STATES_OBJECT),
    Category("park_bench", _bench, (1.8, 0.6, 0.9), ("brown", "green", "black"), _STATES_OBJECT),
    Category("picnic_table", _table, (2.0, 1.6, 0.8), ("brown", "tan", "green"), _STATES_OBJECT),
    Category("vending_machine", _block, (1.0, 0.8, 1.9), _BRIGHT, _STATES_OBJECT),
    Category("phone_booth", _booth, (1.0, 1.0, 2.4), ("red", "blue", "silver"), _STATES_OBJECT),
    Category("mailbox", _crate, (0.5, 0.5, 1.2), ("blue", "red", "yellow"), _STATES_OBJECT),
    Category("fire_hydrant", _upright_cylinder, (0.4, 0.4, 0.8), ("red", "yellow"), _STATES_OBJECT),
    Category("newspaper_kiosk", _booth, (2.5, 2.0, 2.6), ("green", "blue", "red"), _STATES_OBJECT),
    Category(
        "ticket_booth", _booth, (2.5, 2.0, 2.8), ("red", "blue", "white", "yellow"), _STATES_OBJECT
    ),
    Category("bike_rack", _frame, (2.0, 0.6, 0.9), ("grey", "black", "blue"), _STATES_OBJECT),
    Category("flower_planter", _crate, (2.0, 1.0, 0.7), ("grey", "brown", "white"), _STATES_OBJECT),
    Category(
        "fountain_basin",
        _upright_cylinder,
        (3.0, 3.0, 0.8),
        ("white", "grey", "beige"),
        _STATES_OBJECT,
    ),
    Category(
        "shopping_cart_corral", _frame, (4.0, 1.2, 1.2), ("silver", "blue", "red"), _STATES_OBJECT
    ),
    Category("parking_meter", _sign, (0.3, 0.2, 1.4), ("grey", "black", "blue"), _STATES_OBJECT),
    Category("ev_charger", _block, (0.8, 0.5, 1.7), ("white", "green", "blue"), _STATES_OBJECT),
    Category("toll_booth", _booth, (2.2, 2.0, 2.8), ("white", "yellow", "grey"), _STATES_OBJECT),
    Category(
        "security_barrier", _frame, (4.0, 0.3, 1.1), ("red", "yellow", "white"), _STATES_OBJECT
    ),
    Category("statue", _statue, (1.6, 1.6, 4.0), ("grey", "tan", "green", "white"), ()),
    # Leisure and markets.
    Category("patio_umbrella", _umbrella, (3.0, 3.0, 2.6), _BRIGHT, _STATES_OBJECT),
    Category("beach_umbrella", _umbrella, (2.4, 2.4, 2.3), _BRIGHT, _STATES_OBJECT),
    Category("market_stall", _canopy, (3.0, 2.5, 2.4), _BRIGHT, _STATES_OBJECT),
    Category("gazebo", _canopy, (4.0, 4.0, 3.0), ("white", "green", "brown"), _STATES_OBJECT),
    Category("food_cart", _booth, (2.2, 1.4, 2.2), _BRIGHT, _STATES_OBJECT),
    Category(
        "carousel", _carousel, (9.0, 9.0, 6.0), ("red", "blue", "yellow", "purple"), _STATES_OBJECT
    ),
    Category("bumper_car_hall", _canopy, (12.0, 9.0, 4.5), _BRIGHT, _STATES_OBJECT),
    Category(
        "teacup_ride",
        _carousel,
        (8.0, 8.0, 3.5),
        ("pink", "cyan", "purple", "yellow"),
        _STATES_OBJECT,
    ),
    Category(
        "inflatable_castle",
        _tent,
        (5.0, 5.0, 3.5),
        ("pink", "red", "yellow", "blue"),
        _STATES_OBJECT,
    ),
    Category("playground_set", _playset, (5.0, 2.0, 3.2), _BRIGHT, _STATES_OBJECT),
    Category(
        "swing_set", _frame, (3.5, 1.8, 2.4), ("red", "blue", "yellow", "green"), _STATES_OBJECT
    ),
    Category(
        "trampoline", _upright_cylinder, (3.6, 3.6, 0.9), ("blue", "green", "black"), _STATES_OBJECT
    ),
    Category(
        "hot_tub", _upright_cylinder, (2.2, 2.2, 0.9), ("white", "grey", "brown"), _STATES_OBJECT
    ),
    Category("soccer_goal", _frame, (7.3, 2.0, 2.44), ("white",), _STATES_OBJECT),
    Category("scoreboard", _billboard, (8.0, 0.5, 9.0), ("black", "navy"), _STATES_OBJECT),
    Category("camera_tower", _lookout, (2.0, 2.0, 6.0), ("grey", "white"), _STATES_OBJECT),
    Category(
        "lifeguard_tower", _lookout, (2.2, 2.2, 4.0), ("red", "yellow", "white"), _STATES_OBJECT
    ),
    Category("beach_hut", _booth, (2.5, 2.5, 2.6), _BRIGHT, _STATES_OBJECT),
    Category("surfboard_rack", _rack, (3.0, 0.8, 2.0), _BRIGHT, _STATES_OBJECT),
    Category(
        "deck_chair_pair", _bench, (1.6, 1.4, 0.8), ("white", "blue", "yellow"), _STATES_OBJECT
    ),
    Category("tennis_net", _frame, (10.0, 0.2, 1.1), ("white", "green"), _STATES_OBJECT),
    Category("hay_bale_stack", _stack, (3.0, 1.5, 1.8), ("yellow", "tan"), ()),
    Category(
        "camping_tent",
        _tent,
        (3.0, 2.2, 1.6),
        ("orange", "green", "blue", "yellow", "red"),
        _STATES_OBJECT,
    ),
    Category(
        "expedition_tent", _tent, (4.5, 3.0, 2.2), ("orange", "yellow", "red"), _STATES_OBJECT
    ),
    Category("wooden_cabin", _booth, (6.0, 4.5, 4.0), ("brown", "tan", "red"), _STATES_OBJECT),
    Category(
        "hunting_stand", _lookout, (1.8, 1.8, 5.0), ("brown", "green", "olive"), _STATES_OBJECT
    ),
    Category("campfire_ring", _upright_cylinder, (1.6, 1.6, 0.4), ("grey", "black"), ()),
    Category("firewood_stack", _stack, (2.5, 1.0, 1.2), ("brown", "tan"), ()),
    Category("log_pile", _lying_cylinder, (5.0, 1.6, 1.6), ("brown",), ()),
    Category("fallen_tree", _lying_cylinder, (9.0, 0.9, 0.9), ("brown", "grey"), ()),
    Category("boulder", _ball, (3.0, 3.0, 3.0), ("grey", "tan", "brown"), ()),
    Category("cactus", _upright_cylinder, (0.7, 0.7, 3.5), ("green", "olive"), ()),
    Category("palm_tree", _plant, (3.0, 3.0, 8.0), ("green", "lime"), ()),
    Category("bush", _ball, (2.0, 2.0, 2.0), ("green", "olive", "lime"), ()),
    Category("water_trough", _crate, (3.0, 0.8, 0.7), ("grey", "silver"), _STATES_OBJECT),
    Category("windsock_mast", _sign, (1.2, 0.3, 6.0), ("orange", "red"), _STATES_OBJECT),
    Category("weather_station", _antenna, (0.6, 0.6, 4.0), ("white", "grey"), _STATES_OBJECT),
    Category("satellite_dish", _antenna, (1.6, 1.6, 3.0), ("white", "grey"), _STATES_OBJECT),
    Category(
        "solar_panel_array", _table, (6.0, 3.0, 1.6), ("navy", "blue", "black"), _STATES_OBJECT
    ),
    Category("ice_block", _block, (2.0, 2.0, 1.6), ("cyan", "white"), ()),
    Category("snowman", _ball, (1.6, 1.6, 1.6), ("white",), ()),
    Category("sled", _block, (2.0, 0.8, 0.6), ("red", "blue", "brown"), _STATES_OBJECT),
    Category(
        "flag_pole", _sign, (1.4, 0.1, 7.0), ("red", "blue", "yellow", "orange"), _STATES_OBJECT
    ),
    Category("research_hut", _booth, (5.0, 3.5, 3.0), ("red", "orange", "yellow"), _STATES_OBJECT),
    Category("fishing_hut", _booth, (2.5, 2.0, 2.4), ("blue", "red", "brown"), _STATES_OBJECT),
    Category("kayak_rack", _rack, (4.0, 1.2, 2.0), ("grey", "brown"), _STATES_OBJECT),
    Category(
        "mooring_bollard",
        _upright_cylinder,
        (0.6, 0.6, 0.8),
        ("black", "yellow", "grey"),
        _STATES_OBJECT,
    ),
    Category("anchor_display", _statue, (2.0, 2.0, 3.0), ("black", "grey", "maroon"), ()),
    Category("fishing_net_pile", _pile, (3.0, 3.0, 1.2), ("green", "blue", "orange"), ()),
    Category(
        "harbor_crane_small", _antenna, (1.5, 1.5, 8.0), ("yellow", "orange", "red"), _STATES_OBJECT
    ),
    # Disaster response.
    Category("rescue_tent", _tent, (6.0, 4.0, 2.8), ("blue", "white", "orange"), _STATES_OBJECT),
    Category("medical_tent", _canopy, (6.0, 4.0, 2.8), ("white", "red"), _STATES_OBJECT),
    Category("sandbag_wall", _stack, (5.0, 1.0, 1.2), ("tan", "beige", "brown"), ()),
    Category("rubble_heap", _pile, (6.0, 6.0, 2.8), ("grey", "brown", "beige"), ()),
    Category("debris_pile", _pile, (4.0, 4.0, 1.8), ("brown", "grey", "black"), ()),
    Category(
        "collapsed_shed", _tent, (5.0, 4.0, 1.8), ("grey", "brown", "maroon"), _STATES_DAMAGED
    ),
    Category("floating_debris", _stack, (3.0, 2.0, 0.6), ("brown", "grey"), ()),
    Category(
        "water_tank_trailer", _lying_cylinder, (4.0, 2.0, 2.0), ("blue", "white"), _STATES_OBJECT
    ),
    Category("supply_crates", _stack, (2.5, 2.5, 1.5), ("olive", "tan", "blue"), _STATES_OBJECT),
    Category("stretcher_station", _table, (2.2, 0.8, 1.0), ("orange", "red"), _STATES_OBJECT),
    Category(
        "floodlight_tower",
        _lamp_post,
        (1.5, 1.0, 6.0),
        ("yellow", "orange", "grey"),
        _STATES_OBJECT,
    ),
    Category("burned_car", _car, (4.5, 1.8, 1.3), ("black", "grey", "brown"), _STATES_DAMAGED),
    Category("crater_marker", _cone_marker, (1.6, 1.6, 1.2), ("red", "orange"), ()),
    Category(
        "mobile_command_post", _truck, (9.0, 2.5, 3.6), ("white", "navy", "red"), _STATES_VEHICLE
    ),
    Category(
        "emergency_generator", _block, (3.0, 1.5, 1.8), ("red", "orange", "yellow"), _STATES_OBJECT
    ),
)

#: Every target category by name.
CATEGORIES: dict[str, Category] = {category.name: category for category in _CATEGORY_LIST}

#: Names of geometry that is not a target object, in the semantic-id vocabulary after the
#: target categories.
STUFF_CLASSES = (
    "terrain", "water", "road", "building", "roof", "vegetation", "tree", "rock", "structure",
    "bridge", "rail_track", "landmark", "rubble",
)  # fmt: skip

#: Semantic vocabulary: id 0 is the sky/background, then stuff classes, then categories.
SEMANTIC_CLASSES: tuple[str, ...] = ("background", *STUFF_CLASSES, *CATEGORIES)
SEMANTIC_IDS: dict[str, int] = {name: index for index, name in enumerate(SEMANTIC_CLASSES)}


def polar_offsets(count: int, radius: float, phase: float = 0.0) -> list[tuple[float, float]]:
    """``count`` points evenly spaced on a circle of ``radius`` (helper for ring layouts)."""
    return [
        (
            radius * math.cos(phase + 2.0 * math.pi * k / count),
            radius * math.sin(phase + 2.0 * math.pi * k / count),
        )
        for k in range(count)
    ]
