"""Infrastructure scene types: bridge, rail corridor and harbour."""

from __future__ import annotations

import numpy as np

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import beam, box
from aerialdojo.sim.embedded.scenery import trees
from aerialdojo.sim.embedded.terrain import by_height_and_slope

_RIVERBANK = (
    "sedan", "pickup_truck", "camper_van", "picnic_table", "park_bench", "rowboat", "kayak",
    "fishing_hut", "boulder", "road_sign", "street_lamp", "trash_can", "buoy",
)  # fmt: skip


def bridge(b: SceneBuilder, variant: int) -> None:
    """A river valley spanned by a road bridge on piers with two towers and cables (ID: cable
    bridge; OOD: low arch-less girder bridge)."""

    def valley(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(np.clip(np.abs(x) - 22.0, 0.0, None) * 0.35 - 4.0 + 0.02 * y)

    b.terrain(
        100.0,
        valley,
        by_height_and_slope(b.rng, [(-2.5, (150, 140, 110)), (99.0, (96, 128, 70))]),
        resolution_m=3.0,
    )
    b.water(-2.0)
    deck_z = 12.0 if variant == 0 else 8.0
    deck_colour = (150, 150, 150)
    pieces = [(box(110.0, 12.0, 1.2).moved((0.0, 0.0, deck_z)), deck_colour)]
    for x in (-40.0, -15.0, 15.0, 40.0):
        pieces.append((box(3.0, 8.0, deck_z + 6.0).moved((x, 0.0, -6.0)), (130, 128, 124)))
    b.structure("bridge_deck", "bridge", pieces)
    if variant == 0:
        for x in (-20.0, 20.0):
            tower_pieces = [
                (box(3.0, 3.0, 34.0).moved((x, y, deck_z)), (200, 80, 60)) for y in (-6.5, 6.5)
            ]
            tower_pieces.append((box(3.0, 16.0, 2.0).moved((x, 0.0, deck_z + 30.0)), (200, 80, 60)))
            for sign in (-1.0, 1.0):
                for k in range(1, 4):
                    tower_pieces.append(
                        (
                            beam(
                                (x, 6.5, deck_z + 32.0),
                                (x + sign * k * 9.0, 6.5, deck_z + 1.2),
                                0.2,
                            ),
                            (60, 60, 60),
                        )
                    )
            b.landmark(
                f"{'West' if x < 0 else 'East'} Bridge Tower",
                "a red bridge tower with stay cables",
                tower_pieces,
                footprint_radius=9.0,
            )
    else:
        b.landmark(
            "River Gauge Tower",
            "a white river gauge tower on the bank",
            [(box(4.0, 4.0, 14.0).moved((-30.0, 40.0, 0.0)), (230, 230, 230))],
            4.0,
        )
        b.landmark(
            "Old Stone Pier",
            "a ruined stone pier in the river",
            [(box(6.0, 6.0, 6.0).moved((5.0, -45.0, -4.0)), (150, 130, 110))],
            5.0,
        )
    b.road([(-100.0, 0.0), (-55.0, 0.0)], 8.0)
    b.road([(55.0, 0.0), (99.0, 0.0)], 8.0)
    for side in (-1.0, 1.0):

        def bank(side: float = side) -> tuple[float, float]:
            return float(side * b.rng.uniform(26.0, 90.0)), float(b.rng.uniform(-90.0, 90.0))

        b.scatter(_RIVERBANK, 12, bank)
    b.scatter(
        ("speedboat", "fishing_boat", "buoy", "kayak"),
        5,
        lambda: (float(b.rng.uniform(-14.0, 14.0)), float(b.rng.uniform(-90.0, 90.0))),
    )
    trees(b, 60, ("broadleaf", "conifer"), region=(30.0, -95.0, 95.0, 95.0))
    trees(b, 60, ("broadleaf", "conifer"), region=(-95.0, -95.0, -30.0, 95.0))
