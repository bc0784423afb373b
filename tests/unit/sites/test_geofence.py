"""The geofence: inside/outside with a margin from edges, floor and ceiling, the reasons a
position is refused, and the polygons a site may use."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.geofence import (
    Geofence,
    circle_polygon,
    point_in_polygon,
    points_in_polygon,
    polygon_edge_distance,
    polygon_problems,
)

# An L: the 20 x 20 square without its north-east 10 x 10 quarter.
L_SHAPE = ((0.0, 0.0), (20.0, 0.0), (20.0, 10.0), (10.0, 10.0), (10.0, 20.0), (0.0, 20.0))


def test_points_inside_an_l_shaped_polygon() -> None:
    vertices = np.array(L_SHAPE)
    assert point_in_polygon(vertices, (5.0, 5.0))
    assert point_in_polygon(vertices, (15.0, 5.0))
    assert point_in_polygon(vertices, (5.0, 15.0))
    assert not point_in_polygon(vertices, (15.0, 15.0))  # the missing quarter
    assert not point_in_polygon(vertices, (-1.0, 5.0))
    points = np.array([(5.0, 5.0, 0.0), (15.0, 15.0, 0.0), (5.0, 15.0, 9.0), (25.0, 1.0, 0.0)])
    assert points_in_polygon(vertices, points).tolist() == [True, False, True, False]


def test_edge_distance_is_to_the_nearest_edge_including_the_inner_corner() -> None:
    vertices = np.array(L_SHAPE)
    assert polygon_edge_distance(vertices, (5.0, 5.0)) == pytest.approx(5.0)
    assert polygon_edge_distance(vertices, (2.0, 7.0)) == pytest.approx(2.0)
    assert polygon_edge_distance(vertices, (9.0, 9.0)) == pytest.approx(math.sqrt(2.0))  # (10, 10)


def test_contains_keeps_the_margin_from_edges_floor_and_ceiling() -> None:
    fence = Geofence(polygon=L_SHAPE, min_z=1.0, max_z=10.0, margin=0.5)
    assert fence.contains((5.0, 5.0, 5.0))
    assert not fence.contains((0.4, 5.0, 5.0))
    assert fence.contains((0.6, 5.0, 5.0))
    assert not fence.contains((5.0, 5.0, 1.4))
    assert not fence.contains((5.0, 5.0, 9.6))
    assert fence.contains((0.4, 5.0, 5.0), margin=0.0)
    assert fence.bounds() == ((0.5, 0.5, 1.5), (19.5, 19.5, 9.5))


def test_violations_say_which_limit_a_position_breaks() -> None:
    fence = Geofence(polygon=L_SHAPE, min_z=1.0, max_z=10.0, margin=0.5)
    assert fence.violation((5.0, 5.0, 5.0)) is None
    assert "outside the geofence polygon" in str(fence.violation((15.0, 15.0, 5.0)))
    assert "below the geofence floor 1 m + margin 0.5 m" in str(fence.violation((5.0, 5.0, 1.2)))
    assert "above the geofence ceiling 10 m" in str(fence.violation((5.0, 5.0, 9.8)))
    assert "0.20 m from the geofence edge" in str(fence.violation((5.0, 0.2, 5.0)))


@pytest.mark.parametrize(
    ("points", "convex", "expected"),
    [
        ([(0, 0), (1, 0)], False, "has 2 vertices"),
        ([(0, 0), (1, 0), (1, 0), (0, 1)], False, "vertex 1 repeats the next one"),
        ([(0, 0), (1, 1), (2, 2)], False, "has no area"),
        ([(0, 0), (6, 0), (6, 4), (3, -2), (0, 4)], False, "edges 0 and 2 cross"),
        (list(L_SHAPE), True, "is not convex"),
    ],
)
def test_polygons_that_cannot_be_a_fence_or_an_obstacle(
    points: list[tuple[float, float]], convex: bool, expected: str
) -> None:
    problems = polygon_problems(points, convex=convex)
    assert any(expected in problem for problem in problems), problems


def test_good_polygons_have_no_problems() -> None:
    assert polygon_problems(L_SHAPE) == []
    assert polygon_problems([(0, 0), (4, 0), (4, 3), (0, 3)], convex=True) == []
    assert polygon_problems(circle_polygon((1.0, 2.0), 0.5), convex=True) == []


def test_a_round_obstacle_polygon_contains_its_circle() -> None:
    polygon = circle_polygon((1.0, 2.0), 0.5, sides=16)
    vertices = np.asarray(polygon)
    for angle in np.linspace(0.0, 2.0 * math.pi, 97):
        on_circle = (1.0 + 0.4999 * math.cos(angle), 2.0 + 0.4999 * math.sin(angle))
        assert point_in_polygon(vertices, on_circle)
    assert polygon_edge_distance(vertices, (1.0, 2.0)) == pytest.approx(0.5)
