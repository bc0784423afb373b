"""No two pieces of an embedded scene share a face's plane where they overlap (coincident
faces make Embree's answer, and so renders, depend on the machine: ``coincident.py``)."""

from __future__ import annotations

import numpy as np
import pytest

from aerialdojo.agos.town import TOWN_NAMES, laid_out_town
from aerialdojo.citynav.city import CITY_NAMES, laid_out_city
from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.catalogue import CATEGORIES
from aerialdojo.sim.embedded.primitives import SEAT_M, box, box_between
from aerialdojo.sim.embedded.scenery import fountain, house, parking_rows, tower, tree
from aerialdojo.sim.embedded.scenes import laid_out_scene, scene_names
from aerialdojo.sim.embedded.terrain import flat, speckled

from .coincident import coincident_faces


def test_the_check_finds_a_slab_lying_on_a_box_and_a_marking_on_the_ground() -> None:
    wall = box_between((0.0, 0.0, 0.0), (10.0, 10.0, 12.0)).triangles
    roof = box_between((0.3, 0.3, 12.0), (9.7, 9.7, 12.6)).triangles
    found = coincident_faces([wall, roof])
    assert found and not any(pair.same_facing for pair in found)
    assert sum(pair.area_m2 for pair in found) == pytest.approx(9.4 * 9.4)
    marking = box(4.0, 4.0, 0.05).moved((5.0, 5.0, 12.0)).triangles
    assert any(pair.same_facing for pair in coincident_faces([roof, marking]))
    # Boxes side by side share the wall x = 10; touching along an edge, or a millimetre
    # apart, is not coincident.
    beside = box_between((10.0, 0.0, 0.0), (12.0, 10.0, 12.0)).triangles
    assert sum(pair.area_m2 for pair in coincident_faces([wall, beside])) == pytest.approx(120.0)
    lifted = box_between((0.3, 0.3, 12.001), (9.7, 9.7, 12.6)).triangles
    corner = box_between((10.0, 10.0, 0.0), (11.0, 11.0, 12.0)).triangles
    assert coincident_faces([wall, lifted, corner]) == []


@pytest.mark.parametrize("name", scene_names())
def test_no_scene_has_coincident_faces(name: str) -> None:
    found = coincident_faces(laid_out_scene(name).piece_triangles())
    assert found == [], found[:3]


@pytest.mark.parametrize("name", TOWN_NAMES)
def test_no_agos_town_has_coincident_faces(name: str) -> None:
    assert coincident_faces(laid_out_town(name).piece_triangles()) == []


@pytest.mark.parametrize("name", CITY_NAMES)
def test_no_citynav_city_has_coincident_faces(name: str) -> None:
    assert coincident_faces(laid_out_city(name).piece_triangles()) == []


@pytest.mark.parametrize("name", sorted(CATEGORIES))
def test_no_object_has_coincident_parts(name: str) -> None:
    kind = CATEGORIES[name]
    for scale in (0.9, 1.0, 1.12):
        parts = [mesh.triangles for mesh, _ in kind.build(kind.colours[0], scale)]
        assert coincident_faces(parts) == [], scale


def test_buildings_roofs_and_scenery_on_flat_ground_share_no_plane() -> None:
    builder = SceneBuilder(scene="Pieces_0", scene_type="Pieces", family="urban", seed=(0, 3))
    builder.terrain(60.0, flat(0.0), speckled(builder.rng, (100, 120, 80), 0.0), resolution_m=5.0)
    builder.water(-1.0)
    builder.road([(-50.0, 0.0), (50.0, 0.0)], 6.0)
    builder.road([(0.0, -50.0), (0.0, 50.0)], 6.0)
    builder.building("flat", -30.0, 30.0, (12.0, 8.0, 9.0), (200, 200, 200), roof=(90, 90, 90))
    house(builder, 30.0, 30.0, 0.4, (10.0, 7.0, 5.0))
    tower(builder, "Tower", "a tower", at=(-30.0, -30.0), height=20.0, colour=(200, 0, 0))
    fountain(builder, "Fountain", 30.0, -30.0)
    for index, kind in enumerate(("conifer", "palm", "dead", "broadleaf")):
        tree(builder, -45.0 + 8.0 * index, 45.0, kind)
    parking_rows(builder, (-20.0, -50.0), 2, 6, ("sedan", "traffic_cone_group"), occupancy=1.0)
    pieces = builder.piece_triangles()
    assert len(pieces) > 20
    assert coincident_faces(pieces) == []


def test_every_object_stands_a_little_in_the_ground_not_on_it() -> None:
    # The terrain sheet is laid above the height objects are placed on (SEAT_M): nothing
    # placed on flat ground shares the ground's plane.
    builder = SceneBuilder(scene="Ground_0", scene_type="Ground", family="urban", seed=(0, 4))
    builder.terrain(60.0, flat(0.0), speckled(builder.rng, (100, 120, 80), 0.0), resolution_m=5.0)
    kinds = (
        "sedan",
        "shipping_container",
        "traffic_cone_group",
        "statue",
        "carousel",
        "park_bench",
    )
    for index, name in enumerate(kinds):
        assert builder.place(name, -40.0 + 16.0 * index, 0.0, yaw=0.3)
    terrain, *placed = builder.piece_triangles()
    assert np.all(terrain[..., 2] == SEAT_M)
    assert min(float(np.min(piece[..., 2])) for piece in placed) <= 0.0
    assert coincident_faces([terrain, *placed]) == []
