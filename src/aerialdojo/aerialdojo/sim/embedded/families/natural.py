"""Natural scene types: desert, forest, mountain, snowfield, island and coast."""

from __future__ import annotations

from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.scenery import tower, trees
from aerialdojo.sim.embedded.terrain import by_height_and_slope, combine, waves

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
