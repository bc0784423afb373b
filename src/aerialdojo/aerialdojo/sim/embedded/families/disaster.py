"""Disaster scene types: earthquake, flood and explosion."""

from __future__ import annotations

import math

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import SEAT_M, beam, box, gable_roof, slab
from aerialdojo.sim.embedded.scenery import house, street_grid, tower, trees
from aerialdojo.sim.embedded.terrain import (
    bump,
    by_height_and_slope,
    combine,
    flat,
    speckled,
    waves,
)
from aerialdojo.sim.embedded.world import Lighting

_RESCUE = (
    "ambulance", "fire_truck", "police_car", "rescue_tent", "medical_tent", "rubble_heap",
    "debris_pile", "wrecked_car", "water_tank_trailer", "supply_crates", "stretcher_station",
    "floodlight_tower", "mobile_command_post", "emergency_generator", "collapsed_shed",
)  # fmt: skip


def earthquake(b: SceneBuilder, variant: int) -> None:
    """A shaken town: leaning and collapsed blocks, rubble across streets, a rescue camp
    (ID: grid town; OOD: denser old town with more collapse)."""
    b.terrain(100.0, flat(), speckled(b.rng, (120, 116, 104), 12.0), resolution_m=5.0)
    street_grid(b, (-50.0, 0.0, 50.0))
    tower(
        b,
        "Cracked Clock Tower",
        "a leaning clock tower with a cracked face",
        at=(-25.0, 25.0),
        height=24.0,
        colour=(190, 170, 140),
        top=(90, 60, 40),
    )
    b.landmark(
        "Collapsed Church",
        "the stone church whose nave has collapsed",
        [
            (slab(18.0, 10.0, 1.2, 0.35, 0.1).moved((25.0, -25.0, 2.0)), (170, 160, 140)),
            (slab(12.0, 8.0, 1.0, -0.25, 0.2).moved((28.0, -20.0, 1.0)), (160, 150, 130)),
        ],
        11.0,
    )
    collapse = 0.3 if variant == 0 else 0.55
    for bx in (-75.0, -25.0, 25.0, 75.0):
        for by in (-75.0, -25.0, 25.0, 75.0):
            for dx, dy in ((-10.0, -10.0), (10.0, 10.0), (-10.0, 10.0), (10.0, -10.0)):
                x, y = bx + dx + float(b.rng.normal(0, 1.0)), by + dy + float(b.rng.normal(0, 1.0))
                if not b.is_clear(x, y, 6.0):
                    continue
                if b.rng.random() < collapse:
                    b.structure(
                        "rubble",
                        "rubble",
                        [
                            (
                                slab(
                                    9.0,
                                    8.0,
                                    1.5,
                                    float(b.rng.uniform(-0.5, 0.5)),
                                    float(b.rng.uniform(-0.5, 0.5)),
                                ).moved((x, y, 1.0)),
                                (150, 142, 130),
                            )
                        ],
                        footprint=(x, y, 6.0),
                    )
                else:
                    b.building(
                        "building",
                        x,
                        y,
                        (10.0, 9.0, float(b.rng.uniform(8.0, 18.0))),
                        (196, 184, 160),
                        roof=(110, 100, 90),
                        yaw=float(b.rng.normal(0.0, 0.04)),
                    )
    b.scatter(_RESCUE, 34)


def flood(b: SceneBuilder, variant: int) -> None:
    """A flooded town: brown water over the streets up to the ground floors, roofs and trees
    sticking out, boats and floating debris (ID: shallow; OOD: deep with only roofs left)."""
    b.lighting = Lighting(
        sun_direction=(0.2, 0.3, 0.93),
        ambient=0.6,
        sky_zenith=(0.56, 0.6, 0.66),
        sky_horizon=(0.76, 0.78, 0.8),
        haze_distance_m=300.0,
    )
    b.terrain(95.0, waves(b.rng, 1.5, 80.0), speckled(b.rng, (110, 100, 80), 8.0), resolution_m=4.0)
    level = 1.2 if variant == 0 else 3.0
    b.water(level, colour=(120, 100, 70))
    tower(
        b,
        "Water Tower",
        "a tall water tower standing in the flood",
        at=(-50.0, 50.0),
        height=24.0,
        colour=(200, 200, 196),
        top=(60, 100, 160),
    )
    b.landmark(
        "Church Roof",
        "a church with a tall red roof above the water",
        [
            (box(20.0, 10.0, 8.0).moved((40.0, -40.0, -1.0)), (220, 210, 190)),
            (
                gable_roof(21.0, 11.0, 7.0 + SEAT_M).moved((40.0, -40.0, 7.0 - SEAT_M)),
                (170, 50, 40),
            ),
        ],
        12.0,
    )
    for _ in range(45):
        x, y = b.random_point(8.0)
        if b.is_clear(x, y, 9.0):
            house(
                b,
                x,
                y,
                float(b.rng.choice((0.0, math.pi / 2))),
                (10.0, 8.0, float(b.rng.uniform(4.5, 7.0))),
            )
    b.scatter(
        ("rescue_boat", "rowboat", "floating_debris", "life_raft", "kayak", "sandbag_wall", "buoy"),
        22,
    )
    b.scatter(
        (
            "rescue_tent",
            "medical_tent",
            "water_tank_trailer",
            "supply_crates",
            "helicopter",
            "fire_truck",
        ),
        12,
        b.within(60.0, 55.0, 93.0, 93.0),
    )
    trees(b, 40, ("broadleaf", "dead"))


def explosion(b: SceneBuilder, variant: int) -> None:
    """An explosion site: a crater, blast-damaged and charred buildings, scattered debris,
    burned vehicles and emergency services under a smoky sky (ID: industrial blast; OOD: blast
    in a dense block)."""
    b.lighting = Lighting(
        sun_direction=(0.3, 0.1, 0.95),
        ambient=0.45,
        sky_zenith=(0.45, 0.42, 0.4),
        sky_horizon=(0.74, 0.66, 0.58),
        haze_distance_m=220.0,
    )
    crater = bump(5.0, -5.0, 14.0, -6.0)
    b.terrain(
        95.0,
        combine(crater, waves(b.rng, 0.5, 30.0)),
        by_height_and_slope(b.rng, [(-1.0, (50, 44, 40)), (99.0, (120, 112, 100))]),
        resolution_m=2.5,
    )
    street_grid(b, (-55.0, 55.0))
    tower(
        b,
        "Scorched Chimney",
        "a blackened chimney still standing",
        at=(-30.0, 35.0),
        height=28.0,
        colour=(60, 54, 50),
        top=(30, 30, 30),
    )
    b.landmark(
        "Blast Crater Rim",
        "the rim of the blast crater, marked by a twisted steel frame",
        [
            (slab(10.0, 1.0, 1.0, 0.6, 0.3).moved((5.0, 12.0, 1.0)), (90, 80, 70)),
            (beam((0.0, 14.0, 0.0), (9.0, 13.0, 7.0), 0.5), (70, 60, 60)),
        ],
        3.0,
    )
    for _ in range(30 if variant == 1 else 16):
        x, y = b.random_point(10.0)
        distance = math.hypot(x - 5.0, y + 5.0)
        if distance < 24.0 or not b.is_clear(x, y, 9.0):
            continue
        charred = distance < 50.0
        b.building(
            "building",
            x,
            y,
            (12.0, 10.0, float(b.rng.uniform(6.0, 16.0))),
            (70, 62, 56) if charred else (180, 170, 150),
            roof=(50, 46, 44),
        )
    for _ in range(30):
        x, y = b.random_point()
        if b.is_clear(x, y, 2.0):
            b.structure(
                "debris",
                "rubble",
                [
                    (
                        slab(
                            float(b.rng.uniform(1.0, 3.0)),
                            float(b.rng.uniform(0.8, 2.0)),
                            0.3,
                            float(b.rng.uniform(-0.6, 0.6)),
                            float(b.rng.uniform(-0.6, 0.6)),
                        ).moved((x, y, b.ground(x, y) + 0.4)),
                        (80, 72, 66),
                    )
                ],
            )
    b.scatter(
        (
            "burned_car",
            "burned_bus",
            "fire_truck",
            "ambulance",
            "police_car",
            "debris_pile",
            "rubble_heap",
            "crater_marker",
            "floodlight_tower",
            "mobile_command_post",
            "medical_tent",
            "emergency_generator",
            "water_barrier",
            "traffic_cone_group",
        ),
        36,
    )
