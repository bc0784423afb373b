"""The GSM's five layers against a hand-built case: a 20 x 20 m city of 1 m cells, one named
park, a UAV 5 m up over its centre, and a nadir view with a red patch and a road strip."""

from __future__ import annotations

import math

import numpy as np

from aerialdojo.citynav.city import CityMap, Landmark, embedded_city_map
from aerialdojo.citynav.geo import GeoReference
from aerialdojo.citynav.gsm import LAYERS, GeoSemanticMap, GridSpec, goal_colour
from aerialdojo.citynav.policies import ColourSearchPolicy, GsmPolicy, steer
from aerialdojo.citynav.reference import FORWARD, LEFT, RIGHT
from aerialdojo.geometry import Pose

CITY = CityMap(
    name="toy",
    bounds=(0.0, 0.0, 20.0, 20.0),
    ground_z=0.0,
    geo=GeoReference(latitude_deg=52.2, longitude_deg=0.12),
    landmarks=(
        Landmark(
            name="Toy Green", kind="park", polygon=((2.0, 2.0), (6.0, 2.0), (6.0, 5.0), (2.0, 5.0))
        ),
        Landmark(
            name="Far Street",
            kind="street",
            polygon=((15.0, 0.0), (16.0, 0.0), (16.0, 20.0), (15.0, 20.0)),
        ),
    ),
)
# A 10 x 10 px, 90 deg nadir view: f = 5 px, so at 5 m depth one pixel is one metre.
K = np.array(((5.0, 0.0, 5.0), (0.0, 5.0, 5.0), (0.0, 0.0, 1.0)))


def _view() -> tuple[np.ndarray, np.ndarray]:
    rgb = np.full((10, 10, 3), 200, dtype=np.uint8)  # pale, unsaturated ground
    rgb[0:2, 4:6] = (200, 30, 30)  # red: rows 0-1 are the far (forward) edge
    rgb[:, 9] = (60, 60, 62)  # a road along the right edge
    return rgb, np.full((10, 10), 5.0, dtype=np.float32)


def test_layers_match_the_hand_built_case() -> None:
    gsm = GeoSemanticMap(CITY, "the red car north of Toy Green", resolution_m=1.0)
    rgb, depth = _view()
    # Facing north (yaw 90 deg): image up is north, image right is east.
    gsm.update(Pose(10.0, 10.0, 5.0, math.pi / 2), rgb, depth, K)
    layers = {name: gsm.layers[name] for name in LAYERS}
    expected_view = np.zeros((20, 20), dtype=bool)
    expected_view[5:16, 5:16] = True  # the 10 m square under the UAV: corners 5..15 m
    assert (layers["current_view"] == expected_view).all()
    assert (layers["explored"] == expected_view).all()
    park = np.zeros((20, 20), dtype=bool)
    park[2:6, 2:7] = True  # rows are y, columns x: cells whose corner is in the polygon
    assert (layers["landmarks"] == park).all()  # Far Street is not named: not on the map
    goals = np.zeros((20, 20), dtype=bool)
    goals[13:15, 9:11] = True  # image rows 0-1 are y 14..15 and 13..14; columns 4-5 x 9..11
    assert (layers["potential_goals"] == goals).all()
    roads = np.zeros((20, 20), dtype=bool)
    roads[5:15, 14] = True  # image column 9 is x 14..15, its rows y 5..15
    assert (layers["surroundings"] == roads).all()
    assert np.nanmax(gsm.goal_height) == 0.0  # seen 5 m below a UAV 5 m up
    stacked = gsm.stacked()
    assert stacked.shape == (5, 20, 20) and set(np.unique(stacked)) == {0, 100}


def test_a_second_view_moves_the_current_view_and_keeps_what_it_does_not_see() -> None:
    gsm = GeoSemanticMap(CITY, "the red car north of Toy Green", resolution_m=1.0)
    rgb, depth = _view()
    gsm.update(Pose(10.0, 10.0, 5.0, math.pi / 2), rgb, depth, K)
    plain = np.full((10, 10, 3), 200, dtype=np.uint8)
    gsm.update(Pose(10.0, 4.0, 5.0, math.pi / 2), plain, depth, K)  # 6 m south
    view = gsm.layers["current_view"]
    assert view[0:10, 5:16].all() and not view[10:].any()  # corners y -1..9 m
    assert gsm.layers["explored"][0:16, 5:16].all()
    # The red patch at rows 13-14 lies outside the new view: remembered.
    assert gsm.layers["potential_goals"][13:15, 9:11].all()
    # Seen again without red, it is forgotten.
    gsm.update(Pose(10.0, 10.0, 5.0, math.pi / 2), plain, depth, K)
    assert not gsm.layers["potential_goals"].any()


def test_the_goal_colour_is_the_first_colour_word() -> None:
    assert goal_colour("Find the blue car parked north of the red building") == "blue"
    assert goal_colour("the car near King Street") is None


def test_the_gsm_policy_searches_where_the_description_says() -> None:
    city = embedded_city_map("CityNavTown_0")
    xs, ys = GridSpec.covering(city.bounds, 2.0).cell_centres()
    park = city.landmark("Jesus Green")
    region = GsmPolicy().search_region(GeoSemanticMap(city, "the red car north of Jesus Green"))
    cx, cy = park.centroid
    assert region.any() and (ys[region] > cy).all()
    assert (np.hypot(xs[region] - cx, ys[region] - cy) < 60.0 + 80.0).all()
    street = city.landmark("King Street")  # runs north-south at x = -240
    near = city.landmark("Market Passage")  # runs east-west at y = -120
    text = "Find the blue car on the west side of King Street, near Market Passage."
    region = GsmPolicy().search_region(GeoSemanticMap(city, text))
    assert region.any()
    west_edge = min(x for x, _ in street.polygon)
    assert (xs[region] <= street.centroid[0]).all()  # the west half of the street and beyond
    assert (xs[region] >= west_edge - 12.0 - 1.0).all()  # up to 12 m off its kerb
    assert (np.abs(ys[region] - near.centroid[1]) <= 60.0 + 5.0).all()
    # The colour baseline knows no landmark: the whole city.
    assert ColourSearchPolicy().search_region(GeoSemanticMap(city, text)).all()


def test_steering_turns_towards_the_target_then_moves_forward() -> None:
    assert steer(Pose(0.0, 0.0, 40.0, 0.0), (0.0, 50.0)) == LEFT
    assert steer(Pose(0.0, 0.0, 40.0, 0.0), (0.0, -50.0)) == RIGHT
    assert steer(Pose(0.0, 0.0, 40.0, math.pi / 2), (1.0, 50.0)) == FORWARD
    assert steer(Pose(0.0, 0.0, 40.0, 0.0), (1.0, 1.0)) is None
