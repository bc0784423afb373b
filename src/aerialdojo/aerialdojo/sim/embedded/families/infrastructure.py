"""Infrastructure scene types: bridge, rail corridor and harbour."""

from __future__ import annotations

import numpy as np

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import SEAT_M, beam, box, cylinder
from aerialdojo.sim.embedded.scenery import tower, trees
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
        # Piers reach into the deck (SEAT_M), rather than end on its underside's plane.
        pieces.append((box(3.0, 8.0, deck_z + 6.0 + SEAT_M).moved((x, 0.0, -6.0)), (130, 128, 124)))
    b.structure("bridge_deck", "bridge", pieces)
    if variant == 0:
        for x in (-20.0, 20.0):
            # Legs start just under the deck's underside, the crossbeam is a little thinner
            # than the legs, and each stay cable lies its own millimetre off the plane y = 6.5
            # (the cables of both towers cross): no two pieces share a face's plane.
            tower_pieces = [
                (box(3.0, 3.0, 34.0 + SEAT_M).moved((x, y, deck_z - SEAT_M)), (200, 80, 60))
                for y in (-6.5, 6.5)
            ]
            tower_pieces.append(
                (
                    box(3.0 - 2.0 * SEAT_M, 16.0 - 2.0 * SEAT_M, 2.0).moved(
                        (x, 0.0, deck_z + 30.0)
                    ),
                    (200, 80, 60),
                )
            )
            for sign in (-1.0, 1.0):
                for k in range(1, 4):
                    cable = 6 * (x > 0) + 3 * (sign > 0) + k - 1  # 0 to 11 over both towers
                    cable_y = 6.5 + 0.001 * (cable - 5.5)
                    tower_pieces.append(
                        (
                            beam(
                                (x, cable_y, deck_z + 32.0),
                                (x + sign * k * 9.0, cable_y, deck_z + 1.2),
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


def rail_corridor(b: SceneBuilder, variant: int) -> None:
    """A rail corridor: parallel tracks on an embankment, overhead catenary gantries, a station
    platform with a canopy, trains and a service road (ID: straight; OOD: with a road
    overpass and a freight yard)."""

    def embankment(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(1.5 / (1.0 + (y / 14.0) ** 4))

    b.terrain(
        100.0,
        embankment,
        by_height_and_slope(b.rng, [(1.2, (110, 140, 80)), (99.0, (150, 140, 124))]),
    )
    tracks = (-6.0, -2.0, 2.0, 6.0) if variant == 0 else (-8.0, -4.0, 0.0, 4.0, 8.0)
    rails = []
    for y in tracks:
        for offset in (-0.72, 0.72):
            rails.append((box(200.0, 0.12, 0.18).moved((0.0, y + offset, 1.5)), (150, 140, 130)))
    b.structure("rail_track", "rail_track", rails)
    gantries = []
    for gantry_x in range(-90, 91, 30):
        for y in (tracks[0] - 3.0, tracks[-1] + 3.0):
            gantries.append((box(0.4, 0.4, 8.0).moved((float(gantry_x), y, 1.5)), (120, 120, 124)))
        # The crossbar is a little thinner than the posts it joins (else shared side planes).
        gantries.append(
            (
                box(0.4 - 2.0 * SEAT_M, tracks[-1] - tracks[0] + 6.4 - 2.0 * SEAT_M, 0.4).moved(
                    (float(gantry_x), 0.0, 9.3)
                ),
                (120, 120, 124),
            )
        )
    for y in tracks:
        gantries.append((beam((-100.0, y, 7.0), (100.0, y, 7.0), 0.05), (40, 40, 40)))
    b.structure("catenary", "structure", gantries)
    platform = [(box(60.0, 6.0, 1.0).moved((-30.0, tracks[-1] + 6.5, 1.5)), (190, 186, 176))]
    platform += [(box(56.0, 7.0, 0.3).moved((-30.0, tracks[-1] + 6.5, 6.0)), (60, 100, 150))]
    platform += [
        # Posts reach into the platform and the canopy (SEAT_M each way).
        (
            box(0.4, 0.4, 3.5 + 2.0 * SEAT_M).moved((-30.0 + x, tracks[-1] + 6.5, 2.5 - SEAT_M)),
            (100, 100, 100),
        )
        for x in (-25.0, 0.0, 25.0)
    ]
    b.landmark("Station Platform", "a station platform with a long blue canopy", platform, 1.0)
    tower(
        b,
        "Signal Tower",
        "a brick signal tower beside the tracks",
        at=(45.0, -20.0),
        height=14.0,
        colour=(150, 80, 60),
        top=(60, 60, 60),
    )
    if variant == 1:
        overpass = [(box(14.0, 60.0, 1.2).moved((40.0, 0.0, 12.0)), (160, 160, 160))]
        overpass += [
            (box(12.0, 2.0, 12.0 + SEAT_M).moved((40.0, y, 0.0)), (140, 140, 140))
            for y in (-18.0, 18.0)
        ]
        b.landmark("Road Overpass", "a concrete road overpass across the tracks", overpass, 2.0)
    b.road([(-99.0, -30.0), (99.0, -30.0)], 6.0)
    for y in tracks[::2]:
        x = float(b.rng.uniform(-60.0, 60.0))
        b.place(
            str(b.rng.choice(("locomotive", "freight_wagon", "tank_wagon"))),
            x,
            y,
            yaw=0.0,
            base=1.68 - SEAT_M,  # on the rails (tops at 1.68), a little into them
        )
    b.scatter(
        (
            "signal_cabinet",
            "handcar",
            "pallet_stack",
            "delivery_van",
            "pickup_truck",
            "road_sign",
            "street_lamp",
            "transformer_box",
            "cable_reel",
            "park_bench",
            "vending_machine",
            "freight_wagon",
            "short_container",
        ),
        34,
        lambda: (b.random_point()[0], float(b.rng.choice((-1, 1)) * b.rng.uniform(18.0, 90.0))),
    )
    trees(b, 60, ("broadleaf", "conifer"), region=(-95.0, 40.0, 95.0, 95.0))


def harbor(b: SceneBuilder, variant: int) -> None:
    """A harbour: quays around a basin, gantry cranes over the quay edge, container stacks,
    moored ships and warehouses (ID: container terminal; OOD: fishing harbour with piers)."""

    def quay(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.where(y > -10.0, 2.5, -8.0)

    b.terrain(
        100.0,
        quay,
        by_height_and_slope(b.rng, [(0.0, (70, 80, 90)), (99.0, (150, 148, 140))]),
        resolution_m=2.5,
    )
    b.water(0.0)
    if variant == 0:
        for index, x in enumerate((-40.0, 0.0, 40.0)):
            legs = [
                (box(1.5, 1.5, 30.0).moved((x + dx, dy, 2.5)), (40, 110, 180))
                for dx in (-8.0, 8.0)
                for dy in (-6.0, 14.0)
            ]
            legs.append((box(20.0, 2.0, 3.0).moved((x, 4.0, 32.5)), (40, 110, 180)))
            legs.append((beam((x, -35.0, 34.0), (x, 30.0, 34.0), 2.0), (40, 110, 180)))
            if index < 2:
                b.landmark(
                    f"Gantry Crane {index + 1}", "a blue ship-to-shore gantry crane", legs, 10.0
                )
            else:
                b.structure("gantry_crane", "structure", legs, footprint=(x, 4.0, 10.0))
        ship = [
            (box(90.0, 18.0, 10.0).moved((0.0, -25.0, -5.0)), (120, 40, 40)),
            # The bridge house stands in the hull, its back a little inside the stern's plane.
            (
                box(14.0 - 2.0 * SEAT_M, 14.0, 10.0 + SEAT_M).moved((38.0, -25.0, 5.0 - SEAT_M)),
                (236, 236, 236),
            ),
        ]
        b.structure("container_ship", "structure", ship)
        b.scatter(
            ("shipping_container", "short_container", "forklift", "box_truck", "tanker_truck"),
            46,
            b.within(-90.0, 25.0, 90.0, 90.0),
        )
    else:
        for x in (-50.0, 0.0, 50.0):
            pier = [(box(6.0, 50.0, 0.6).moved((x, -35.0, 1.9)), (140, 110, 80))]
            pier += [
                (box(0.5, 0.5, 10.0).moved((x + dx, -35.0 + dy, -8.0)), (100, 80, 60))
                for dx in (-2.5, 2.5)
                for dy in (-20.0, 0.0, 20.0)
            ]
            b.structure("pier", "structure", pier)
        tower(
            b,
            "Harbour Lighthouse",
            "a green-topped harbour lighthouse",
            at=(80.0, 20.0),
            height=18.0,
            colour=(236, 236, 236),
            top=(40, 150, 60),
        )
        b.landmark(
            "Fish Market Hall",
            "a long fish market hall with a curved roof",
            [
                (box(40.0, 14.0, 8.0).moved((-20.0, 50.0, 2.5)), (200, 190, 170)),
                (
                    # The roof's ends stop a little inside the hall's end walls' planes.
                    cylinder(7.0, 40.0 - 2.0 * SEAT_M, 12).moved(
                        (-40.0 + SEAT_M, 50.0, 10.5),
                        rotation=np.array(((0.0, 0.0, 1.0), (0.0, 1.0, 0.0), (-1.0, 0.0, 0.0))),
                    ),
                    (60, 110, 140),
                ),
            ],
            22.0,
        )
        b.scatter(
            ("fishing_boat", "rowboat", "tugboat", "speedboat", "buoy"),
            14,
            b.within(-90.0, -90.0, 90.0, -16.0),
        )
    b.scatter(
        (
            "mooring_bollard",
            "fishing_net_pile",
            "anchor_display",
            "harbor_crane_small",
            "wooden_crate",
            "pallet_stack",
            "delivery_van",
            "forklift",
            "oil_drum",
            "fishing_hut",
            "life_raft",
        ),
        30,
        b.within(-90.0, -6.0, 90.0, 90.0),
    )
    for x in (-70.0, 70.0):
        b.building(
            "warehouse",
            x,
            75.0,
            (30.0, 16.0, 10.0 + SEAT_M),
            (176, 164, 140),
            roof=(120, 60, 50),
            base=2.5 - SEAT_M,  # under the quay's objects' bottoms, same top
        )
