"""Path lengths, closest approach and polygon distances used by every benchmark."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.metrics import spatial

L_SHAPE = ((0.0, 0.0), (4.0, 0.0), (4.0, 1.0), (1.0, 1.0), (1.0, 4.0), (0.0, 4.0))


def test_path_length_sums_3d_segments_and_ignores_repeats() -> None:
    path = ((0.0, 0.0, 0.0), (3.0, 4.0, 0.0), (3.0, 4.0, 0.0), (3.0, 4.0, 2.0))
    assert spatial.path_length(path) == 7.0
    assert spatial.path_length(path[:1]) == 0.0


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ((5.0, 1.0, 0.0), 1.0),  # beside the middle of the segment
        ((-3.0, 4.0, 0.0), 5.0),  # behind the start: distance to the start
        ((13.0, 0.0, 0.0), 3.0),  # past the end: distance to the end
        ((5.0, 0.0, 2.0), 2.0),  # above the segment
    ],
)
def test_segment_distance_clamps_to_the_segment(
    point: tuple[float, float, float], expected: float
) -> None:
    assert spatial.segment_distance(point, (0.0, 0.0, 0.0), (10.0, 0.0, 0.0)) == expected


def test_closest_approach_never_exceeds_the_final_distance() -> None:
    path = ((0.1, 0.2, 0.3), (7.7, -3.1, 2.9), (2.3, 5.9, 1.1))
    target = (1.7, 1.3, 0.9)
    assert spatial.closest_approach(target, path) <= math.dist(path[-1], target)
    assert spatial.closest_approach(target, path[:1]) == math.dist(path[0], target)


@pytest.mark.parametrize(
    ("point", "expected"),
    [
        ((0.5, 3.0), 0.0),  # inside the vertical arm
        ((4.0, 0.5), 0.0),  # on an edge
        ((1.0, 1.0), 0.0),  # on the reflex vertex
        ((3.0, 2.0), 1.0),  # in the notch: outside although inside the bounding box
        ((-2.0, 2.0), 2.0),
        ((6.0, 0.5), 2.0),
    ],
)
def test_polygon_distance_on_a_non_convex_polygon(
    point: tuple[float, float], expected: float
) -> None:
    assert spatial.polygon_distance_xy(point, L_SHAPE) == pytest.approx(expected)


def test_polygon_distance_ignores_height() -> None:
    assert spatial.polygon_distance_xy((0.5, 0.5, 30.0), L_SHAPE) == 0.0


def test_many_paths_measured_together_match_each_measured_alone() -> None:
    rng = np.random.default_rng(7)
    paths = [
        rng.normal(0.0, 5.0, (1, 3)),  # a single position: no segment
        np.repeat(rng.normal(0.0, 5.0, (1, 3)), 4, axis=0),  # never moved
        np.round(rng.normal(0.0, 5.0, (9, 3))),
        *(np.cumsum(rng.choice([0.0, 1.5, -0.5], (n, 3)), axis=0) for n in range(2, 40)),
    ]
    targets = rng.normal(0.0, 8.0, (len(paths), 3))
    segments = spatial.segment_approaches(targets, np.concatenate(paths), [len(p) for p in paths])
    for target, rows, closest in zip(targets.tolist(), paths, segments.tolist(), strict=True):
        path = tuple(map(tuple, rows.tolist()))
        nearest = min(math.dist(target, position) for position in path)
        assert min(nearest, closest) == spatial.closest_approach(target, path)
    assert segments[0] == segments[1] == math.inf
