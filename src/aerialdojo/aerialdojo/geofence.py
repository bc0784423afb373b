"""A site's geofence: a polygon in the site's ENU frame (REP-103) and an altitude band.

ROS-free and numpy-only, so that a site file's checks, reference planning and a robot's
safety gate test positions against the same fence with the same code.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

XY = tuple[float, float]


@dataclass(frozen=True, kw_only=True)
class Geofence:
    """Where a vehicle may be: inside ``polygon`` horizontally, between ``min_z`` and
    ``max_z`` vertically, and at least ``margin`` from both.

    Attributes:
        polygon: vertices (x, y) in metres in order (either winding), not repeating the
            first; a simple polygon (``polygon_problems`` says why one is not).
        min_z: floor of the band, metres (site frame, z up).
        max_z: ceiling of the band, metres.
        margin: how far inside the fence positions must keep, metres: a stopping-distance
            margin (v^2 / 2a) so that a vehicle that stops at a position does not overrun.
    """

    polygon: tuple[XY, ...]
    min_z: float
    max_z: float
    margin: float = 0.0

    @property
    def vertices(self) -> np.ndarray:
        """(N, 2) the polygon's vertices."""
        return np.asarray(self.polygon, dtype=np.float64).reshape(-1, 2)

    def edge_distance(self, xy: Sequence[float] | np.ndarray) -> float:
        """Horizontal distance from ``xy`` to the nearest edge of the polygon."""
        return polygon_edge_distance(self.vertices, xy)

    def contains(self, point: Sequence[float] | np.ndarray, *, margin: float | None = None) -> bool:
        """Whether ``point`` (x, y, z) lies inside the polygon and the band, at least
        ``margin`` (default: the fence's) from the polygon's edges, floor and ceiling."""
        keep = self.margin if margin is None else margin
        x, y, z = float(point[0]), float(point[1]), float(point[2])
        if not self.min_z + keep <= z <= self.max_z - keep:
            return False
        return point_in_polygon(self.vertices, (x, y)) and self.edge_distance((x, y)) >= keep

    def violation(self, point: Sequence[float] | np.ndarray) -> str | None:
        """Why ``point`` is not inside the fence with its margin, or None if it is."""
        x, y, z = float(point[0]), float(point[1]), float(point[2])
        where = f"({x:.2f}, {y:.2f}, {z:.2f})"
        if not point_in_polygon(self.vertices, (x, y)):
            return f"{where} is outside the geofence polygon"
        if z < self.min_z + self.margin:
            return (
                f"{where} is below the geofence floor {self.min_z:g} m + margin {self.margin:g} m"
            )
        if z > self.max_z - self.margin:
            return (
                f"{where} is above the geofence ceiling {self.max_z:g} m - margin {self.margin:g} m"
            )
        edge = self.edge_distance((x, y))
        if edge < self.margin:
            return (
                f"{where} is {edge:.2f} m from the geofence edge, inside its margin "
                f"{self.margin:g} m"
            )
        return None

    def segment_violation(
        self,
        start: Sequence[float] | np.ndarray,
        end: Sequence[float] | np.ndarray,
        *,
        margin: float | None = None,
    ) -> str | None:
        """Why the straight segment from ``start`` to ``end`` (x, y, z) is not inside the
        fence at least ``margin`` (default: the fence's) from its edges, floor and ceiling,
        or None if it is. The band is convex, so the ends decide the altitude; the polygon
        need not be, so every edge is measured against the whole segment."""
        keep = self.margin if margin is None else margin
        fence = self if keep == self.margin else _with_margin(self, keep)
        for point in (end, start):
            reason = fence.violation(point)
            if reason is not None:
                return reason
        a = np.asarray(start, dtype=np.float64)[:2]
        b = np.asarray(end, dtype=np.float64)[:2]
        clearance = segment_edge_distance(self.vertices, a, b)
        if clearance < keep:
            return (
                f"the path from ({a[0]:.2f}, {a[1]:.2f}) to ({b[0]:.2f}, {b[1]:.2f}) passes "
                f"{clearance:.2f} m from the geofence edge, inside its margin {keep:g} m"
            )
        return None

    def bounds(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The box (min corner, max corner) every position the fence admits lies in."""
        low = self.vertices.min(axis=0) + self.margin
        high = self.vertices.max(axis=0) - self.margin
        return (
            (float(low[0]), float(low[1]), self.min_z + self.margin),
            (float(high[0]), float(high[1]), self.max_z - self.margin),
        )


def point_in_polygon(vertices: np.ndarray, xy: Sequence[float] | np.ndarray) -> bool:
    """Whether ``xy`` lies inside the polygon (even-odd rule; points on an edge may go
    either way, which callers with a margin never meet)."""
    x, y = float(xy[0]), float(xy[1])
    inside = False
    for (x1, y1), (x2, y2) in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
        if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
            inside = not inside
    return inside


def points_in_polygon(vertices: np.ndarray, points: np.ndarray) -> np.ndarray:
    """``point_in_polygon`` for (N, >=2) points at once (their first two columns)."""
    x, y = points[:, 0:1], points[:, 1:2]
    x1, y1 = vertices[:, 0], vertices[:, 1]
    x2, y2 = np.roll(x1, -1), np.roll(y1, -1)
    straddles = (y1 > y) != (y2 > y)
    with np.errstate(divide="ignore", invalid="ignore"):
        crossing = x < x1 + (y - y1) * (x2 - x1) / (y2 - y1)
    return np.asarray(np.count_nonzero(straddles & crossing, axis=1) % 2 == 1)


def polygon_edge_distance(vertices: np.ndarray, xy: Sequence[float] | np.ndarray) -> float:
    """Distance from ``xy`` to the nearest point on the polygon's boundary."""
    point = np.asarray(xy, dtype=np.float64)[:2]
    starts = vertices
    ends = np.roll(vertices, -1, axis=0)
    edges = ends - starts
    lengths = np.einsum("ij,ij->i", edges, edges)
    along = np.clip(
        np.einsum("ij,ij->i", point - starts, edges) / np.where(lengths > 0.0, lengths, 1.0),
        0.0,
        1.0,
    )
    nearest = starts + along[:, None] * edges
    return float(np.min(np.linalg.norm(point - nearest, axis=1)))


def _with_margin(fence: Geofence, margin: float) -> Geofence:
    return Geofence(polygon=fence.polygon, min_z=fence.min_z, max_z=fence.max_z, margin=margin)


def _point_segment_distance(point: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    edge = b - a
    length = float(np.dot(edge, edge))
    along = 0.0 if length == 0.0 else min(1.0, max(0.0, float(np.dot(point - a, edge)) / length))
    return float(np.linalg.norm(point - (a + along * edge)))


def segment_edge_distance(vertices: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """Least distance between the segment ``ab`` and the polygon's boundary (0 where they
    cross)."""
    best = math.inf
    for c, d in zip(vertices, np.roll(vertices, -1, axis=0), strict=True):
        if segments_cross(a, b, c, d):
            return 0.0
        best = min(
            best,
            _point_segment_distance(a, c, d),
            _point_segment_distance(b, c, d),
            _point_segment_distance(c, a, b),
            _point_segment_distance(d, a, b),
        )
    return best


def signed_area(vertices: np.ndarray) -> float:
    """The polygon's signed area (positive when counter-clockwise)."""
    x, y = vertices[:, 0], vertices[:, 1]
    return float(np.dot(x, np.roll(y, -1)) - np.dot(np.roll(x, -1), y)) / 2.0


def _cross(o: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    return float((a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]))


def segments_cross(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray) -> bool:
    """Whether the closed segments ab and cd share a point."""
    d1, d2 = _cross(c, d, a), _cross(c, d, b)
    d3, d4 = _cross(a, b, c), _cross(a, b, d)
    if ((d1 > 0) != (d2 > 0) and d1 != 0 and d2 != 0) and (
        (d3 > 0) != (d4 > 0) and d3 != 0 and d4 != 0
    ):
        return True

    def on_segment(p: np.ndarray, q: np.ndarray, r: np.ndarray) -> bool:
        return bool(
            min(p[0], q[0]) <= r[0] <= max(p[0], q[0])
            and min(p[1], q[1]) <= r[1] <= max(p[1], q[1])
        )

    return (
        (d1 == 0 and on_segment(c, d, a))
        or (d2 == 0 and on_segment(c, d, b))
        or (d3 == 0 and on_segment(a, b, c))
        or (d4 == 0 and on_segment(a, b, d))
    )


def polygon_problems(points: Sequence[Sequence[float]], *, convex: bool = False) -> list[str]:
    """Why ``points`` is not a usable polygon (an empty list if it is): fewer than three
    vertices, a repeated vertex, zero area, edges that cross or touch (not simple), or, with
    ``convex``, a turn against the others' direction."""
    vertices = np.asarray(points, dtype=np.float64).reshape(-1, 2)
    count = len(vertices)
    if count < 3:
        return [f"has {count} vertices; a polygon needs at least 3"]
    problems = []
    edges = np.linalg.norm(np.roll(vertices, -1, axis=0) - vertices, axis=1)
    for index in np.flatnonzero(edges == 0.0):
        problems.append(f"vertex {int(index)} repeats the next one")
    if problems:
        return problems
    if abs(signed_area(vertices)) < 1e-9:
        return ["has no area (its vertices are on one line)"]
    for i, j in itertools.combinations(range(count), 2):
        if j == i + 1 or (i == 0 and j == count - 1):
            continue  # neighbouring edges share a vertex
        if segments_cross(
            vertices[i], vertices[(i + 1) % count], vertices[j], vertices[(j + 1) % count]
        ):
            problems.append(f"edges {i} and {j} cross: the polygon is not simple")
    if convex and not problems:
        turns = [
            _cross(vertices[i - 1], vertices[i], vertices[(i + 1) % count]) for i in range(count)
        ]
        if min(turns) < 0.0 < max(turns):
            problems.append("is not convex (split it into convex parts)")
    return problems


def circle_polygon(center: Sequence[float], radius: float, sides: int = 16) -> np.ndarray:
    """A regular polygon that contains the circle: its edges touch the circle from outside,
    so an obstacle drawn with it is never smaller than the circle it stands for."""
    outer = radius / math.cos(math.pi / sides)
    angles = np.arange(sides) * (2.0 * math.pi / sides)
    return np.column_stack((center[0] + outer * np.cos(angles), center[1] + outer * np.sin(angles)))
