"""Towns: deterministic layouts, strongly connected directed roads, the UAV grid's road
filter, look-alike groups, oracle visibility, and generated episodes that are solvable."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from aerialdojo.agos.episodes import load_agos_suite
from aerialdojo.agos.generate import (
    check_split_town,
    generate_suite,
    look_alikes,
    verifying_anchors,
)
from aerialdojo.agos.grid import ROAD_PROXIMITY_M, Region, overlay_grid
from aerialdojo.agos.maps import (
    GROUND_RGB,
    MARKER_CROSS,
    MARKER_DISC,
    MARKER_RING,
    ONE_WAY_LINE_RGB,
    ROAD_RGB,
    MapMarker,
    marked_map,
    region_map,
)
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.sensors import uav_rig, ugv_ring
from aerialdojo.agos.town import Town, load_town, shape_class, town_map
from aerialdojo.errors import ConfigError, TaskFileError, UnknownSceneError
from aerialdojo.geometry import Pose


def test_a_town_is_a_fixed_map(town: Town) -> None:
    again = town_map("AgosTown_1")
    assert again.streets == town.map.streets
    np.testing.assert_array_equal(again.roads.positions, town.map.roads.positions)
    assert town_map("AgosTown_0").streets != town.map.streets
    with pytest.raises(UnknownSceneError, match="unknown AGOS town 'Town03'"):
        town_map("Town03")


def test_roads_are_strongly_connected_with_one_way_streets_and_dead_ends(town: Town) -> None:
    roads = town.map.roads
    assert roads.strongly_connected()
    assert any(street.one_way for street in town.map.streets)
    assert "dead_end" in roads.anchor_kinds.values()


def test_uav_grid_keeps_nodes_near_roads_at_40_m_spacing(town: Town) -> None:
    grid = town.map.uav_grid
    anchors = town.map.roads.anchor_positions()
    for waypoint in grid.waypoints.values():
        assert waypoint.z == 80.0
        gap = np.min(np.hypot(anchors[:, 0] - waypoint.x, anchors[:, 1] - waypoint.y))
        assert gap <= ROAD_PROXIMITY_M
    xs = sorted({w.x for w in grid.waypoints.values()})
    assert set(np.round(np.diff(xs), 6)) == {40.0}
    region = Region(-75.0, -75.0, 75.0, 75.0)
    assert all(region.contains(w.x, w.y) for w in grid.active(region))


def test_look_alike_groups_exist_and_share_colour_and_shape(town: Town) -> None:
    everywhere = Region(-200.0, -200.0, 200.0, 200.0)
    red_cars = [v for v in town.vehicles if v.colour == "red" and shape_class(v.category) == "car"]
    assert len(red_cars) >= 3
    similar = look_alikes(town, red_cars[0], everywhere)
    assert {v.object_id for v in similar} == {v.object_id for v in red_cars[1:]}
    spread = max(math.dist(a.centroid, b.centroid) for a in red_cars for b in red_cars)
    assert spread <= 130.0


def test_oracle_sees_a_vehicle_from_above_and_not_through_a_building(town: Town) -> None:
    oracle = TownOracle(town.scene)
    target = next(v for v in town.vehicles if v.colour == "orange")
    x, y, _ = target.centroid
    assert oracle.visible_in_views(Pose(x, y, 80.0, 0.0), uav_rig(64, 64), target)
    assert not oracle.visible_in_views(Pose(x + 300.0, y, 80.0, 0.0), uav_rig(64, 64), target)
    anchors = verifying_anchors(town, target, 50.0)
    assert anchors
    ax, ay = town.map.roads.xy(anchors[0])
    assert oracle.visible_in_views(Pose(ax, ay, 1.6, 0.0), ugv_ring(64, 64), target, 50.0)
    assert not oracle.visible_in_views(Pose(ax, ay, 1.6, 0.0), ugv_ring(64, 64), target, 1.0)
    assert oracle.line_of_sight((x, y, 60.0), target)
    assert not oracle.line_of_sight((x, y, -5.0), target)  # below the ground sheet


def test_generated_suite_loads_and_episodes_are_solvable(tmp_path: Path) -> None:
    path = generate_suite(tmp_path, towns=["AgosTown_1"], per_setting=1, split="test", seed=4,
                          name="tiny")  # fmt: skip
    suite = load_agos_suite(path)
    assert [e.setting for e in suite.episodes] == ["easy", "mid", "hard"]
    town = load_town("AgosTown_1")
    for episode in suite.episodes:
        assert episode.region.size == ((150.0,) * 2 if episode.setting == "easy" else (300.0,) * 2)
        target = town.vehicle(episode.target_object_id)
        distractors = len(episode.distractor_ids)
        assert 2 <= distractors <= 3 if episode.setting == "hard" else distractors == 0
        assert verifying_anchors(town, target, 50.0)
        for image_path in suite.reference_image_paths(episode):
            pixels = np.asarray(Image.open(image_path).convert("RGB"))
            corners = pixels[[0, 0, -1, -1], [0, -1, 0, -1]]
            assert (corners == 255).all()  # background cropped out to white
    assert suite.select("setting=hard") == [suite.episodes[2].episode_id]


def test_a_broken_suite_names_file_episode_and_field(tmp_path: Path) -> None:
    path = generate_suite(tmp_path, towns=["AgosTown_1"], per_setting=1, split="test", seed=4,
                          name="tiny")  # fmt: skip
    document = json.loads(path.read_text())
    document["episodes"][0]["setting"] = "extreme"
    document["episodes"][1]["ugv_start"] = [999.0, 999.0, 1.6, 0.0]
    path.write_text(json.dumps(document))
    with pytest.raises(TaskFileError) as error:
        load_agos_suite(path)
    problems = "\n".join(error.value.problems)
    first, second = (e["episode_id"] for e in document["episodes"][:2])
    assert f"episode {first}: setting: expected one of easy, mid, hard, got 'extreme'" in problems
    assert f"episode {second}: ugv_start: [999.0, 999.0] lies outside the region" in problems


def test_test_towns_stay_disjoint_from_training_towns(tmp_path: Path) -> None:
    # AGOS-Bench: "a 210-episode test split on a disjoint town".
    with pytest.raises(ConfigError, match="split test uses town"):
        generate_suite(tmp_path, towns=["AgosTown_0"], per_setting=1, split="test", seed=4,
                       name="leaky")  # fmt: skip
    with pytest.raises(ConfigError, match="split train uses town"):
        check_split_town("train", "AgosTown_1")
    path = generate_suite(tmp_path, towns=["AgosTown_1"], per_setting=1, split="test", seed=4,
                          name="tiny")  # fmt: skip
    document = json.loads(path.read_text())
    document["episodes"][0]["split"] = "train"
    path.write_text(json.dumps(document))
    with pytest.raises(TaskFileError) as error:
        load_agos_suite(path)
    assert "town AgosTown_1 holds test and train/val episodes" in "\n".join(error.value.problems)


def test_the_region_map_shows_roads_and_no_vehicle() -> None:
    town = load_town("AgosTown_1")
    region = Region(-100.0, -100.0, 50.0, 50.0)
    image = region_map(town.map, region, pixels=150)  # one pixel per metre
    assert image.shape == (150, 150, 3) and image.dtype == np.uint8
    # The street along x = 0 is the column 100 px from the left; north is up.
    column = image[:, 100]
    assert (column == ROAD_RGB).all(axis=1).sum() + (column == ONE_WAY_LINE_RGB).all(
        axis=1
    ).sum() == 150
    assert (image[:, 120] == GROUND_RGB).all(axis=1).sum() > 100  # a block between streets
    colours = {tuple(pixel) for pixel in image.reshape(-1, 3)}
    assert colours <= {GROUND_RGB, ROAD_RGB, ONE_WAY_LINE_RGB}  # no vehicle is drawn


def test_markers_land_where_their_places_are_on_the_map() -> None:
    town = load_town("AgosTown_1")
    region = Region(-100.0, -100.0, 50.0, 50.0)
    plain = region_map(town.map, region, pixels=150)  # one pixel per metre, north up
    blue, magenta, black = (30, 90, 230), (200, 0, 200), (0, 0, 0)
    marked = marked_map(
        plain,
        region,
        [
            MapMarker(-40.0, 20.0, MARKER_DISC, blue),  # row 30, column 60
            MapMarker(10.0, -60.0, MARKER_RING, magenta),  # row 110, column 110
            MapMarker(-80.0, -80.0, MARKER_CROSS, black),  # row 130, column 20
            MapMarker(70.0, 0.0, MARKER_DISC, blue),  # east of the region: left out
        ],
    )
    assert (plain == region_map(town.map, region, pixels=150)).all()  # the map is not changed
    assert tuple(marked[30, 60]) == blue and tuple(marked[110, 110]) != magenta  # a ring's hole
    assert tuple(marked[110, 119]) == magenta and tuple(marked[130, 20]) == black
    assert tuple(marked[127, 17]) == black and tuple(marked[127, 23]) == black  # the diagonals
    changed = (marked != plain).any(axis=2)
    assert not changed[:, 135:].any()  # nothing drawn for the marker outside
    with pytest.raises(ValueError, match="marker style 'star'"):
        marked_map(plain, region, [MapMarker(0.0, 0.0, "star", blue)])


def test_overlay_draws_the_grid_lines() -> None:
    image = np.zeros((100, 100, 3), dtype=np.uint8)
    drawn = overlay_grid(image)
    assert (drawn[:, 20] == 255).all() and (drawn[60, :] == 255).all()
    assert drawn.shape == image.shape and not drawn[14:18, 32:38].any()
    label = drawn[1:12, 22:36]  # "A2" in the second cell's corner
    assert ((label[..., 0] > 100) & (label[..., 2] == 0)).any()
