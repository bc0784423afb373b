"""Distances and lengths on executed paths: 3D Euclidean in the map frame, metres."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from aerialdojo.metrics.trace import Point2, Point3


def path_length(positions: Sequence[Point3]) -> float:
    """Translational length of a path, sum_k ||p_{k+1} - p_k||_2 (AerialDojo-200K, eq. 2).

    Repeated positions (turns, refused moves) add nothing; a single position has length 0.
    """
    return math.fsum(map(math.dist, positions, itertools.islice(positions, 1, None)))


def segment_distance(point: Sequence[float], start: Sequence[float], end: Sequence[float]) -> float:
    """Distance from ``point`` to the closest point of the segment ``start``-``end``."""
    direction = [e - s for s, e in zip(start, end, strict=True)]
    length_sq = math.fsum(d * d for d in direction)
    if length_sq == 0.0:
        return math.dist(point, start)
    offsets = zip(point, start, direction, strict=True)
    along = math.fsum((p - s) * d for p, s, d in offsets) / length_sq
    along = min(1.0, max(0.0, along))
    return math.dist(point, [s + along * d for s, d in zip(start, direction, strict=True)])


def closest_approach(
    point: Sequence[float],
    positions: Sequence[Point3],
    *,
    position_array: npt.NDArray[np.float64] | None = None,
) -> float:
    """Smallest distance between ``point`` and the path through ``positions``.

    Every straight segment between consecutive positions counts, not only its end points:
    a 5 m move can cross a 3 m region without stopping in it. The positions themselves are
    included with the same formula as the final distance, so the result never exceeds the
    distance of the last position even where rounding moves a segment's clamped end point.
    Segments are measured together with numpy (``segment_approaches``): scoring a bag is
    dominated by this.

    Args:
        point: the target.
        positions: the path.
        position_array: the same positions as an (N, 3) float64 array, where the caller
            has one (``EpisodeTrace.position_array``); saves converting them again.
    """
    if len(positions) < 2:
        return approach_with_positions(point, positions, math.inf)
    path = np.asarray(positions if position_array is None else position_array, dtype=np.float64)
    targets = np.asarray(point, dtype=np.float64).reshape(1, 3)
    segments_m = float(segment_approaches(targets, path, [len(path)])[0])
    return approach_with_positions(point, positions, segments_m)


def approach_with_positions(
    point: Sequence[float], positions: Sequence[Point3], segments_m: float
) -> float:
    """``closest_approach`` of a path whose segments come within ``segments_m`` of
    ``point`` (``segment_approaches``): the positions themselves counted with the final
    distance's formula."""
    return min(*map(math.dist, itertools.repeat(point), positions), segments_m)


def segment_approaches(
    targets: npt.NDArray[np.float64], paths: npt.NDArray[np.float64], counts: Sequence[int]
) -> npt.NDArray[np.float64]:
    """For each of several paths, the smallest distance between its target and its
    segments of non-zero length (inf where it has none): ``closest_approach`` without the
    positions themselves, for many paths in one pass (a merge measures 200,000).

    Args:
        targets: (R, 3), one target per path.
        paths: (M, 3), the paths' positions one after the other.
        counts: the positions of each path (each >= 1), summing to M.
    """
    starts_of_paths = np.cumsum([0, *counts[:-1]])
    starts, directions = paths[:-1], np.diff(paths, axis=0)
    segment_targets = np.repeat(targets, counts, axis=0)[:-1]
    length_sq = np.einsum("ij,ij->i", directions, directions)
    # A zero-length segment is its end point (counted by the caller); the step from one
    # path's last position to the next path's first is no segment at all.
    moving = length_sq > 0.0
    moving[starts_of_paths[1:] - 1] = False
    chosen = np.flatnonzero(moving)
    starts, directions = starts[chosen], directions[chosen]
    segment_targets, length_sq = segment_targets[chosen], length_sq[chosen]
    along = np.einsum("ij,ij->i", segment_targets - starts, directions)
    along /= length_sq
    # np.clip's dispatch costs more than the clipping of a few hundred values.
    np.minimum(np.maximum(along, 0.0, out=along), 1.0, out=along)
    gaps = segment_targets - (starts + along[:, None] * directions)
    distances = np.full(len(paths), np.inf)
    distances[chosen] = np.sqrt(np.einsum("ij,ij->i", gaps, gaps))
    # Each path's segments are indexed by their start, its positions but the last.
    approaches: npt.NDArray[np.float64] = np.minimum.reduceat(distances, starts_of_paths)
    return approaches


def polygon_distance_xy(point: Sequence[float], polygon: Sequence[Point2]) -> float:
    """Horizontal distance from ``point`` (x, y[, z]) to a polygon region; 0 inside or on it.

    The polygon is closed implicitly (last vertex joins the first) and may be non-convex.
    """
    xy = (point[0], point[1])
    edges = list(itertools.pairwise([*polygon, polygon[0]]))
    to_boundary = min(segment_distance(xy, a, b) for a, b in edges)
    if to_boundary == 0.0:
        return 0.0
    # Even-odd rule: a ray towards +x crosses the boundary an odd number of times from inside.
    inside = False
    for (x1, y1), (x2, y2) in edges:
        if (y1 > xy[1]) != (y2 > xy[1]):
            crossing_x = x1 + (xy[1] - y1) * (x2 - x1) / (y2 - y1)
            if crossing_x > xy[0]:
                inside = not inside
    return 0.0 if inside else to_boundary
