"""Primitive meshes are closed and wound outward; terrain queries agree with the mesh."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from aerialdojo.sim.embedded import primitives
from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.terrain import speckled, waves

SOLIDS = {
    "box": primitives.box(1.0, 2.0, 3.0),
    "cylinder": primitives.cylinder(1.0, 2.0),
    "cone": primitives.frustum(1.0, 0.0, 2.0),
    "frustum": primitives.frustum(2.0, 1.0, 2.0),
    "sphere": primitives.sphere(1.5),
    "gable_roof": primitives.gable_roof(4.0, 3.0, 2.0),
    "wedge": primitives.wedge(4.0, 3.0, 2.0),
    "extrude": primitives.extrude([(0.0, 0.0), (3.0, 0.0), (4.0, 2.0), (1.0, 3.0)], 2.0),
    "beam": primitives.beam((0.0, 0.0, 0.0), (3.0, 4.0, 5.0), 0.2),
    "slab": primitives.slab(4.0, 3.0, 0.3, 0.3, -0.2),
    "box_between": primitives.box_between((1.0, 2.0, 3.0), (2.0, 4.0, 7.0)),
}


@pytest.mark.parametrize("name", sorted(SOLIDS))
def test_solids_are_closed_and_wound_outward(name: str) -> None:
    mesh = SOLIDS[name]
    solid = trimesh.Trimesh(mesh.vertices, mesh.faces, process=True)
    assert solid.is_watertight and solid.is_winding_consistent
    assert solid.volume > 0.0  # negative if the faces wound inward


def test_box_volume_and_moves_keep_volume() -> None:
    moved = primitives.box(1.0, 2.0, 3.0).moved((5.0, 6.0, 7.0), yaw=0.7)
    solid = trimesh.Trimesh(moved.vertices, moved.faces)
    assert solid.volume == pytest.approx(6.0)
    assert solid.center_mass == pytest.approx((5.0, 6.0, 8.5))


def test_terrain_height_matches_a_vertical_ray_cast() -> None:
    builder = SceneBuilder(scene="Hills_0", scene_type="Hills", family="natural", seed=(4, 2))
    builder.terrain(60.0, waves(builder.rng, 6.0, 30.0), speckled(builder.rng, (90, 120, 70)))
    builder.landmark(
        "A", "a", [(primitives.box(1.0, 1.0, 1.0).moved((0.0, 40.0, 0.0)), (1, 2, 3))], 1.0
    )
    builder.landmark(
        "B", "b", [(primitives.box(1.0, 1.0, 1.0).moved((0.0, -40.0, 0.0)), (1, 2, 3))], 1.0
    )
    scene = builder.build(distribution="id", agent_radius_m=0.25, started=0.0)
    points = np.random.default_rng(0).uniform(-55.0, 55.0, (200, 2))
    origins = np.column_stack((points, np.full(len(points), 100.0))).astype(np.float32)
    down = np.tile(np.array((0.0, 0.0, -1.0), dtype=np.float32), (len(points), 1))
    hits = scene.caster.cast(origins, down)
    surface = 100.0 - hits.distance
    # The sheet lies SEAT_M above the heights things are placed on.
    expected = [builder.terrain_height(float(x), float(y)) + primitives.SEAT_M for x, y in points]
    np.testing.assert_allclose(surface, expected, atol=2e-4)
