"""Natural scene types: desert, forest, mountain, snowfield, island and coast."""

from __future__ import annotations

import math

import numpy as np

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.primitives import SEAT_M, box, extrude
from aerialdojo.sim.embedded.scenery import house, tower, tree, trees
from aerialdojo.sim.embedded.terrain import bump, by_height_and_slope, combine, flat, waves
from aerialdojo.sim.embedded.world import Lighting

_FOREST_OBJECTS = (
    "camping_tent", "wooden_cabin", "hunting_stand", "campfire_ring", "firewood_stack",
    "log_pile", "fallen_tree", "boulder", "picnic_table", "quad_bike", "jeep", "bush",
    "road_sign", "water_trough",
)  # fmt: skip


def forest(b: SceneBuilder, variant: int) -> None:
    """Dense woodland on rolling hills with clearings, a lookout tower and a cabin camp
    (ID: mixed broadleaf; OOD: dark conifers on steeper ground)."""
    relief = waves(b.rng, 5.0 if variant == 0 else 9.0, 90.0)
    b.terrain(
        95.0,
        combine(relief, waves(b.rng, 1.0, 18.0)),
        by_height_and_slope(
            b.rng, [(0.0, (70, 110, 52)), (99.0, (84, 120, 60))], steep=(110, 96, 72)
        ),
    )
    tower(
        b,
        "Fire Lookout Tower",
        "a tall wooden fire lookout tower",
        at=(-30.0, 25.0),
        height=22.0,
        colour=(130, 96, 60),
        top=(180, 60, 40),
    )
    tower(
        b,
        "Radio Mast",
        "a red and white radio mast on a hill",
        at=(50.0, -45.0),
        height=30.0,
        colour=(230, 230, 230),
        top=(200, 40, 40),
    )
    b.scatter(_FOREST_OBJECTS, 30)
    kinds = (
        ("broadleaf", "broadleaf", "conifer") if variant == 0 else ("conifer", "conifer", "dead")
    )
    trees(b, 420, kinds, clearance=2.5)


def desert(b: SceneBuilder, variant: int) -> None:
    """Sand dunes under a hot sun with flat-topped mesas, an oasis camp and a dirt track
    (ID: long dunes; OOD: rocky basin with more mesas)."""
    b.lighting = Lighting(
        sun_direction=(0.3, -0.2, 0.93),
        ambient=0.5,
        sky_zenith=(0.36, 0.56, 0.86),
        sky_horizon=(0.92, 0.86, 0.74),
        haze_distance_m=380.0,
    )
    dunes = waves(b.rng, 4.0 if variant == 0 else 1.5, 45.0, count=5)
    b.terrain(
        100.0, dunes, by_height_and_slope(b.rng, [(99.0, (222, 190, 136))], steep=(204, 164, 112))
    )
    mesas = (
        [(-50.0, 45.0), (55.0, -50.0)]
        if variant == 0
        else [(-50.0, 45.0), (55.0, -50.0), (40.0, 60.0)]
    )
    for index, (x, y) in enumerate(mesas):
        outline = [
            (x + r * math.cos(a), y + r * math.sin(a))
            for a, r in zip(
                np.linspace(0, 2 * math.pi, 7, endpoint=False),
                b.rng.uniform(9.0, 14.0, 7),
                strict=True,
            )
        ]
        name = ("Red Mesa", "Twin Butte", "Anvil Rock")[index]
        b.landmark(
            name,
            "a flat-topped red rock mesa",
            [
                (
                    extrude(outline, float(b.rng.uniform(16.0, 26.0))).moved(
                        (0.0, 0.0, b.ground(x, y) - 3.0)
                    ),
                    (176, 92, 60),
                )
            ],
            15.0,
        )
    b.road([(-99.0, -20.0), (-30.0, -5.0), (20.0, 10.0), (99.0, 15.0)], 6.0, colour=(190, 160, 116))
    b.scatter(
        (
            "cactus",
            "boulder",
            "camping_tent",
            "expedition_tent",
            "jeep",
            "quad_bike",
            "military_truck",
            "water_trough",
            "windsock_mast",
            "solar_panel_array",
            "wrecked_car",
            "oil_drum",
            "palm_tree",
            "satellite_dish",
        ),
        36,
    )


def mountain(b: SceneBuilder, variant: int) -> None:
    """Steep mountain terrain with peaks, pines on the lower slopes, rock above and a hut
    (ID: one massif; OOD: a gorge between two ridges)."""
    if variant == 0:
        relief = combine(
            bump(20.0, 30.0, 55.0, 45.0), bump(-50.0, -40.0, 30.0, 25.0), waves(b.rng, 4.0, 40.0)
        )
    else:
        relief = combine(
            bump(-60.0, 0.0, 40.0, 40.0), bump(60.0, 0.0, 40.0, 38.0), waves(b.rng, 5.0, 35.0)
        )
    b.terrain(
        100.0,
        relief,
        by_height_and_slope(
            b.rng,
            [(14.0, (82, 116, 64)), (34.0, (126, 118, 104)), (99.0, (236, 238, 242))],
            steep=(110, 104, 96),
        ),
        resolution_m=3.0,
        ceiling_m=50.0,
    )
    peak = (20.0, 30.0) if variant == 0 else (-60.0, 0.0)
    tower(
        b,
        "Summit Cross",
        "a tall iron cross on the summit",
        at=peak,
        height=8.0,
        colour=(60, 60, 66),
    )
    tower(
        b,
        "Cable Car Pylon",
        "a grey cable-car pylon on the ridge",
        at=(-50.0, -40.0) if variant == 0 else (60.0, 5.0),
        height=20.0,
        colour=(150, 150, 156),
        top=(200, 50, 40),
    )
    b.scatter(
        (
            "wooden_cabin",
            "boulder",
            "camping_tent",
            "expedition_tent",
            "flag_pole",
            "weather_station",
            "helicopter",
            "firewood_stack",
            "road_sign",
            "quad_bike",
            "snowmobile",
            "hunting_stand",
            "satellite_dish",
        ),
        30,
    )
    trees(b, 160, ("conifer", "conifer", "dead"))


def snowfield(b: SceneBuilder, variant: int) -> None:
    """A white snowfield with drifts, a polar research station, ice blocks and snow vehicles
    (ID: station on flat ice; OOD: rolling drifts with crevasse-like troughs)."""
    b.lighting = Lighting(
        sun_direction=(0.5, 0.4, 0.45),
        ambient=0.55,
        sky_zenith=(0.42, 0.6, 0.88),
        sky_horizon=(0.88, 0.92, 0.97),
        haze_distance_m=320.0,
    )
    drifts = waves(b.rng, 1.5 if variant == 0 else 5.0, 50.0)
    b.terrain(
        95.0,
        drifts,
        by_height_and_slope(b.rng, [(99.0, (236, 240, 246))], steep=(200, 212, 226), spread=6.0),
    )
    station = [
        (box(24.0, 10.0, 5.0).moved((-10.0, 20.0, b.ground(-10.0, 20.0) - 0.5)), (230, 90, 40))
    ]
    station += [
        (box(0.6, 0.6, 2.0).moved((-10.0 + x, 20.0 + y, b.ground(-10.0, 20.0) - 2.0)), (80, 80, 80))
        for x in (-10.0, 10.0)
        for y in (-4.0, 4.0)
    ]
    b.landmark("Research Station", "an orange research station on stilts", station, 14.0)
    tower(
        b,
        "Radar Dome Mast",
        "a white radar dome on a mast",
        at=(45.0, -35.0),
        height=16.0,
        colour=(236, 236, 236),
        top=(200, 60, 40),
    )
    b.scatter(
        (
            "snowmobile",
            "snowcat",
            "sled",
            "ice_block",
            "snowman",
            "expedition_tent",
            "research_hut",
            "flag_pole",
            "weather_station",
            "fuel_tank",
            "supply_crates",
            "satellite_dish",
        ),
        34,
    )
    trees(b, 20, ("snowy",))


def island(b: SceneBuilder, variant: int) -> None:
    """A tropical island in open water: beaches, palms, a central hill, a lighthouse and a
    jetty over the water (ID: one round island; OOD: two islets joined by a sand bar)."""
    b.lighting = Lighting(sun_direction=(0.2, 0.5, 0.84), sky_horizon=(0.8, 0.9, 0.95))
    if variant == 0:
        land = combine(bump(0.0, 0.0, 60.0, 14.0), waves(b.rng, 1.0, 25.0), flat(-4.0))
    else:
        land = combine(
            bump(-40.0, 10.0, 38.0, 12.0),
            bump(45.0, -10.0, 32.0, 10.0),
            waves(b.rng, 1.0, 25.0),
            flat(-4.0),
        )
    b.terrain(
        100.0,
        land,
        by_height_and_slope(
            b.rng,
            [(-0.5, (194, 178, 128)), (1.5, (230, 214, 160)), (99.0, (70, 140, 60))],
            steep=(120, 110, 90),
        ),
    )
    b.water(0.0)
    tower(
        b,
        "Lighthouse",
        "a red and white lighthouse",
        at=(35.0, 35.0) if variant == 0 else (-40.0, 10.0),
        height=22.0,
        colour=(236, 236, 236),
        top=(200, 40, 40),
    )
    jetty_y = -55.0 if variant == 0 else -40.0
    jetty = [(box(4.0, 30.0, 0.5).moved((10.0, jetty_y - 15.0, 1.5)), (150, 110, 70))]
    jetty += [
        (box(0.4, 0.4, 6.0 - SEAT_M).moved((10.0 + x, jetty_y - y, -4.0)), (110, 80, 50))
        for x in (-1.6, 1.6)
        for y in (0.0, 10.0, 20.0, 30.0)
    ]
    b.landmark("Wooden Jetty", "a long wooden jetty reaching into the sea", jetty, 3.0)
    b.scatter(
        (
            "beach_umbrella",
            "beach_hut",
            "lifeguard_tower",
            "deck_chair_pair",
            "kayak",
            "surfboard_rack",
            "palm_tree",
            "rowboat",
            "camping_tent",
            "boulder",
            "picnic_table",
            "jet_ski",
        ),
        34,
        lambda: _on_land(b, 0.3),
    )
    b.scatter(("speedboat", "yacht", "fishing_boat", "buoy"), 6, lambda: _on_water(b))
    for _ in range(80):
        x, y = _on_land(b, 1.0)
        if b.is_clear(x, y, 1.5):
            tree(b, x, y, "palm")


def coast(b: SceneBuilder, variant: int) -> None:
    """A coastline: sea on one side, beach, then cliffs and a coastal road with a village
    (ID: straight sandy coast; OOD: rocky cliffs in a bay)."""
    cliff = 6.0 if variant == 0 else 16.0

    def shore(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        bay = 12.0 * np.sin(y / 30.0) if variant == 1 else 4.0 * np.sin(y / 50.0)
        inland = x - bay
        return np.asarray(
            np.clip(inland * 0.12, -4.0, 2.0) + cliff / (1.0 + np.exp(-(inland - 40.0) / 4.0))
        )

    b.terrain(
        100.0,
        combine(shore, waves(b.rng, 0.8, 20.0)),
        by_height_and_slope(
            b.rng, [(1.2, (226, 206, 150)), (99.0, (96, 136, 70))], steep=(130, 120, 104)
        ),
    )
    b.water(0.0)
    b.road([(70.0, -99.0), (72.0, 0.0), (70.0, 99.0)], 7.0)
    tower(
        b,
        "Harbour Light",
        "a white harbour light on the breakwater",
        at=(-40.0, 70.0),
        height=14.0,
        colour=(236, 236, 236),
        top=(40, 160, 60),
    )
    b.landmark(
        "Breakwater",
        "a long stone breakwater",
        [(box(60.0, 6.0, 5.0).moved((-20.0, 70.0, -4.0)), (150, 146, 136))],
        4.0,
    )
    for _ in range(12):
        x, y = float(b.rng.uniform(82.0, 96.0)), float(b.rng.uniform(-90.0, 90.0))
        if b.is_clear(x, y, 8.0):
            house(b, x, y, 0.0, (10.0, 8.0, 6.0))
    b.scatter(
        (
            "beach_umbrella",
            "beach_hut",
            "lifeguard_tower",
            "deck_chair_pair",
            "surfboard_rack",
            "kayak",
            "camper_van",
            "sedan",
            "fishing_hut",
            "boulder",
            "park_bench",
            "kayak_rack",
            "fishing_net_pile",
            "anchor_display",
        ),
        34,
        b.within(5.0, -90.0, 95.0, 90.0),
    )
    b.scatter(
        ("speedboat", "fishing_boat", "buoy", "yacht", "rowboat", "life_raft"),
        10,
        b.within(-90.0, -90.0, -20.0, 60.0),
    )


def _on_land(b: SceneBuilder, minimum: float) -> tuple[float, float]:
    for _ in range(50):
        x, y = b.random_point()
        if b.ground(x, y) > minimum and b.terrain_height(x, y) > minimum:
            return x, y
    return b.random_point()


def _on_water(b: SceneBuilder) -> tuple[float, float]:
    for _ in range(50):
        x, y = b.random_point()
        if b.terrain_height(x, y) < -2.0:
            return x, y
    return b.random_point()
