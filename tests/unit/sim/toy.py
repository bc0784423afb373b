"""A small hand-built scene with known geometry for the embedded-simulator tests."""

from __future__ import annotations

import time

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import box, box_between, cylinder
from aerialdojo.sim.embedded.terrain import flat, speckled
from aerialdojo.sim.embedded.world import EmbeddedScene

#: Geometry of the toy scene, in the map frame.
WALL_X = 10.0  # a wall 0.2 m thick whose -x face is at x = 10, spanning y in [-10, 10]
POLE = (0.0, 20.0, 0.05)  # x, y and radius of a 5 cm pole, 8 m tall
OVERHANG_Z = 6.0  # underside of a slab over x in [-30, -20], y in [-5, 5]


def build_toy_scene() -> EmbeddedScene:
    """Flat ground at z = 0 with a wall, a thin pole, an overhanging slab and two objects."""
    builder = SceneBuilder(scene="Toy_0", scene_type="Toy", family="urban", seed=(0, 1))
    builder.terrain(50.0, flat(0.0), speckled(builder.rng, (100, 120, 80), 0.0), resolution_m=10.0)
    builder.structure(
        "wall",
        "building",
        [(box_between((WALL_X, -10.0, 0.0), (WALL_X + 0.2, 10.0, 12.0)), (200, 200, 200))],
    )
    builder.structure(
        "pole",
        "structure",
        [(cylinder(POLE[2], 8.0, 16).moved((POLE[0], POLE[1], 0.0)), (90, 90, 90))],
    )
    builder.structure(
        "canopy",
        "structure",
        [
            (box_between((-30.0, -5.0, OVERHANG_Z), (-20.0, 5.0, OVERHANG_Z + 0.3)), (150, 60, 60)),
            (box(0.3, 0.3, OVERHANG_Z).moved((-29.0, -4.0, 0.0)), (80, 80, 80)),
        ],
    )
    builder.landmark(
        "North Marker", "a marker", [(box(1.0, 1.0, 3.0).moved((0.0, 40.0, 0.0)), (255, 0, 0))], 1.0
    )
    builder.landmark(
        "South Marker",
        "a marker",
        [(box(1.0, 1.0, 3.0).moved((0.0, -40.0, 0.0)), (0, 0, 255))],
        1.0,
    )
    assert builder.place("shipping_container", 25.0, -25.0, yaw=0.3, colour="red")
    assert builder.place("sedan", -25.0, 25.0, yaw=1.0, colour="blue")
    return builder.build(distribution="id", agent_radius_m=0.25, started=time.perf_counter())
