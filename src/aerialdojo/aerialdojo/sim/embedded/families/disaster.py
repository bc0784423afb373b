"""Disaster scene types: earthquake, flood and explosion."""

from __future__ import annotations

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import slab
from aerialdojo.sim.embedded.scenery import street_grid, tower
from aerialdojo.sim.embedded.terrain import flat, speckled

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
