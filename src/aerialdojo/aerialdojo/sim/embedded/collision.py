"""Exact swept-sphere collision against a scene's triangles, with a uniform-grid broad phase."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

#: Name reported when a motion would leave the scene's flyable box.
BOUNDARY_NAME = "scene_boundary"

# Distances within this of the radius count as touching, not overlapping: an agent left in
# contact with a wall may slide along it or back off, but not push into it.
_CONTACT_TOLERANCE_M = 1e-6
# Near-vertical rays for the enclosure test, tilted off the axes so that they seldom pass
# exactly through an edge or a vertex; the next is used only when one does.
_ENCLOSURE_RAYS = np.array(
    ((0.013, 0.007, 1.0), (-0.011, 0.017, 1.0), (0.019, -0.013, 1.0), (-0.005, -0.023, 1.0))
)


@dataclass(frozen=True, kw_only=True)
class CollisionHit:
    """The first contact of a swept sphere.

    Attributes:
        fraction: position of the contact along the segment, 0 (start) to 1 (end).
        position: sphere centre at contact, map frame.
        name: what was hit (object id, landmark or structure name, ``scene_boundary``).
        triangle: index of the triangle touched, -1 for the scene boundary.
    """

    fraction: float
    position: np.ndarray
    name: str
    triangle: int


def closest_points_on_triangles(point: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Closest point of each triangle to ``point`` (Voronoi-region case analysis).

    Args:
        point: (3,) query point, or (K, 1, 3) for K points against every triangle.
        triangles: (T, 3, 3) corner positions.

    Returns:
        (T, 3), or (K, T, 3) for K points.
    """
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    ab, ac, ap = b - a, c - a, point - a
    d1, d2 = _dot(ab, ap), _dot(ac, ap)
    bp = point - b
    d3, d4 = _dot(ab, bp), _dot(ac, bp)
    cp = point - c
    d5, d6 = _dot(ab, cp), _dot(ac, cp)
    va, vb, vc = d3 * d6 - d5 * d4, d5 * d2 - d1 * d6, d1 * d4 - d3 * d2
    with np.errstate(divide="ignore", invalid="ignore"):
        denominator = va + vb + vc
        v_face, w_face = vb / denominator, vc / denominator
        t_ab = d1 / (d1 - d3)
        t_ac = d2 / (d2 - d6)
        t_bc = (d4 - d3) / ((d4 - d3) + (d5 - d6))
    result = a + ab * v_face[..., None] + ac * w_face[..., None]
    # Later assignments take precedence, so regions are applied from face to vertices.
    regions: list[tuple[np.ndarray, np.ndarray]] = [
        ((va <= 0) & (d4 - d3 >= 0) & (d5 - d6 >= 0), b + (c - b) * t_bc[..., None]),
        ((vb <= 0) & (d2 >= 0) & (d6 <= 0), a + ac * t_ac[..., None]),
        ((vc <= 0) & (d1 >= 0) & (d3 <= 0), a + ab * t_ab[..., None]),
        ((d6 >= 0) & (d5 <= d6), np.broadcast_to(c, result.shape)),
        ((d3 >= 0) & (d4 <= d3), np.broadcast_to(b, result.shape)),
        ((d1 <= 0) & (d2 <= 0), np.broadcast_to(a, result.shape)),
    ]
    for mask, value in regions:
        result = np.where(mask[..., None], value, result)
    return np.asarray(result)


def _dot(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    return np.asarray(np.einsum("...i,...i->...", u, v))


def _along(direction: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """``direction . (start x end)`` per row, written out so that swapping ``start`` and
    ``end`` negates it exactly (an edge shared by two triangles is judged the same way)."""
    cross_x = start[:, 1] * end[:, 2] - start[:, 2] * end[:, 1]
    cross_y = start[:, 2] * end[:, 0] - start[:, 0] * end[:, 2]
    cross_z = start[:, 0] * end[:, 1] - start[:, 1] * end[:, 0]
    return np.asarray(direction[0] * cross_x + direction[1] * cross_y + direction[2] * cross_z)


def _first_root(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """Smaller root of a t^2 + b t + c = 0 where it lies in [0, 1], else +inf."""
    discriminant = b * b - 4.0 * a * c
    with np.errstate(divide="ignore", invalid="ignore"):
        root = (-b - np.sqrt(discriminant)) / (2.0 * a)
    valid = (a > 1e-12) & (discriminant >= 0.0) & (root >= 0.0) & (root <= 1.0)
    return np.where(valid, root, np.inf)


def first_contact_times(
    start: np.ndarray, motion: np.ndarray, radius: float, triangles: np.ndarray
) -> np.ndarray:
    """Exact first-contact fraction of a sphere moving ``start -> start + motion`` with each
    triangle (+inf where it never touches within the motion).

    The sphere must not overlap the triangles at ``start``; callers handle those separately.
    A contact is with the face interior, an edge (a capsule around it) or a vertex (a sphere
    around it); the earliest valid one is the answer.
    """
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    normal = np.cross(b - a, c - a)
    normal /= np.linalg.norm(normal, axis=1, keepdims=True)
    start_height = _dot(start - a, normal)
    approach = _dot(motion, normal)
    side = np.sign(start_height)
    with np.errstate(divide="ignore", invalid="ignore"):
        face_time = (np.abs(start_height) - radius) / (-approach * side)
    moving_in = (np.abs(start_height) > radius) & (approach * side < 0.0)
    face_time = np.where(moving_in & (face_time >= 0.0) & (face_time <= 1.0), face_time, np.inf)
    touch = start + motion * np.where(np.isfinite(face_time), face_time, 0.0)[:, None]
    touch = touch - normal * (side * radius)[:, None]
    inside = _inside_triangle(touch, a, b, c, normal)
    best = np.where(inside, face_time, np.inf)

    speed_sq = float(motion @ motion)
    for corner in (a, b, c):
        offset = start - corner
        best = np.minimum(
            best,
            _first_root(
                np.full(len(corner), speed_sq),
                2.0 * _dot(offset, motion),
                _dot(offset, offset) - radius * radius,
            ),
        )
    for edge_start, edge_end in ((a, b), (b, c), (c, a)):
        edge = edge_end - edge_start
        edge_sq = _dot(edge, edge)
        offset = start - edge_start
        offset_along, motion_along = _dot(offset, edge), _dot(motion, edge)
        offset_perp = offset - edge * (offset_along / edge_sq)[:, None]
        motion_perp = motion - edge * (motion_along / edge_sq)[:, None]
        time = _first_root(
            _dot(motion_perp, motion_perp),
            2.0 * _dot(offset_perp, motion_perp),
            _dot(offset_perp, offset_perp) - radius * radius,
        )
        finite_time = np.where(np.isfinite(time), time, 0.0)
        along = (offset_along + motion_along * finite_time) / edge_sq
        best = np.minimum(best, np.where((along >= 0.0) & (along <= 1.0), time, np.inf))
    return best


def _inside_triangle(
    points: np.ndarray, a: np.ndarray, b: np.ndarray, c: np.ndarray, normal: np.ndarray
) -> np.ndarray:
    edge_tests = [
        _dot(np.cross(end - begin, points - begin), normal) >= 0.0
        for begin, end in ((a, b), (b, c), (c, a))
    ]
    return edge_tests[0] & edge_tests[1] & edge_tests[2]


class CollisionWorld:
    """A scene's triangles, who owns each one, and the flyable box, queried for collisions.

    Args:
        triangles: (T, 3, 3) corner positions in the map frame.
        triangle_owner: (T,) index into ``owner_names`` per triangle.
        owner_names: what each owner is called in collision reports.
        bounds_min: lower corner of the flyable box (sphere centres stay inside it).
        bounds_max: upper corner of the flyable box.
        inside_test: optional callable telling, for (N, 3) points, whether each lies inside
            closed geometry (under terrain, inside a building); ``sphere_is_free`` rejects those.
        solid: the triangles bound outward-wound closed solids and upward-facing sheets
            (terrain, water) that are solid below; ``sphere_is_free`` rejects points they
            enclose (``encloses``).
        cell_size_m: edge length of the broad-phase grid cells in x and y.
    """

    def __init__(
        self,
        triangles: np.ndarray,
        triangle_owner: np.ndarray,
        owner_names: Sequence[str],
        *,
        bounds_min: Sequence[float],
        bounds_max: Sequence[float],
        inside_test: Callable[[np.ndarray], np.ndarray] | None = None,
        solid: bool = False,
        cell_size_m: float = 4.0,
    ) -> None:
        self.triangles = np.ascontiguousarray(triangles, dtype=np.float64)
        self.triangle_owner = np.asarray(triangle_owner, dtype=np.int64)
        self.owner_names = list(owner_names)
        self.bounds_min = np.asarray(bounds_min, dtype=np.float64)
        self.bounds_max = np.asarray(bounds_max, dtype=np.float64)
        self._inside_test = inside_test
        self._solid = solid
        self._cell = cell_size_m
        self._lower = self.triangles.min(axis=1)
        self._upper = self.triangles.max(axis=1)
        self._build_grid()

    def _build_grid(self) -> None:
        self._origin = np.minimum(self._lower.min(axis=0), self.bounds_min)[:2] - self._cell
        far = np.maximum(self._upper.max(axis=0), self.bounds_max)[:2] + self._cell
        self._columns, self._rows = np.ceil((far - self._origin) / self._cell).astype(int) + 1
        first = self._cell_coordinates(self._lower[:, :2])
        last = self._cell_coordinates(self._upper[:, :2])
        counts_x = last[:, 0] - first[:, 0] + 1
        counts_y = last[:, 1] - first[:, 1] + 1
        per_triangle = counts_x * counts_y
        triangle = np.repeat(np.arange(len(self.triangles)), per_triangle)
        ordinal = np.arange(len(triangle)) - np.repeat(
            np.cumsum(per_triangle) - per_triangle, per_triangle
        )
        cell_x = first[triangle, 0] + ordinal % counts_x[triangle]
        cell_y = first[triangle, 1] + ordinal // counts_x[triangle]
        keys = cell_y * self._columns + cell_x
        order = np.argsort(keys, kind="stable")
        self._cell_triangles = triangle[order]
        self._cell_start = np.searchsorted(keys[order], np.arange(self._columns * self._rows + 1))

    def _cell_coordinates(self, xy: np.ndarray) -> np.ndarray:
        cells = np.floor((xy - self._origin) / self._cell).astype(np.int64)
        return np.asarray(np.clip(cells, 0, (self._columns - 1, self._rows - 1)))

    def _cell_range(self, low: float, high: float, axis: int, cells: int) -> range:
        first = math.floor((low - self._origin[axis]) / self._cell)
        last = math.floor((high - self._origin[axis]) / self._cell)
        return range(min(max(first, 0), cells - 1), min(max(last, 0), cells - 1) + 1)

    def candidates(self, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Indices of triangles whose bounding boxes overlap the box ``lower``..``upper``.

        A triangle spanning several grid cells may be listed more than once; every query here
        takes a minimum over the candidates, which repeats do not change.
        """
        columns = self._cell_range(float(lower[0]), float(upper[0]), 0, self._columns)
        found = [
            self._cell_triangles[
                self._cell_start[row * self._columns + columns.start] : self._cell_start[
                    row * self._columns + columns.stop
                ]
            ]
            for row in self._cell_range(float(lower[1]), float(upper[1]), 1, self._rows)
        ]
        indices = found[0] if len(found) == 1 else np.concatenate(found)
        overlap = np.all(self._lower[indices] <= upper, axis=1) & np.all(
            self._upper[indices] >= lower, axis=1
        )
        return np.asarray(indices[overlap])

    def distance_to_geometry(self, center: np.ndarray, reach: float) -> tuple[float, int]:
        """Distance from ``center`` to the nearest triangle within ``reach``, and its index.

        Returns ``(inf, -1)`` when no triangle is within ``reach``.
        """
        point = np.asarray(center, dtype=np.float64)
        nearby = self.candidates(point - reach, point + reach)
        if len(nearby) == 0:
            return float("inf"), -1
        offsets = point - closest_points_on_triangles(point, self.triangles[nearby])
        distances = np.linalg.norm(offsets, axis=1)
        nearest = int(np.argmin(distances))
        return float(distances[nearest]), int(nearby[nearest])

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        """Whether a sphere at ``center`` lies inside the flyable box, overlaps no triangle
        (touching is allowed) and is not inside closed geometry.

        Args:
            center: (3,) sphere centre, map frame.
            radius: sphere radius in metres.
        """
        point = np.asarray(center, dtype=np.float64)
        if np.any(point < self.bounds_min) or np.any(point > self.bounds_max):
            return False
        distance, _ = self.distance_to_geometry(point, radius)
        if distance < radius - _CONTACT_TOLERANCE_M:
            return False
        if self._solid and self.encloses(point):
            return False
        return self._inside_test is None or not bool(self._inside_test(point[None, :])[0])

    def encloses(self, point: np.ndarray) -> bool:
        """Whether ``point`` lies inside a solid (or below a sheet) of the triangles.

        The winding number of a near-vertical ray: every face it crosses above the point
        counts +1 if the ray leaves through it (the face looks along the ray) and -1 if it
        enters. Inside one solid or several overlapping ones the sum is positive, outside it is
        0. Every crossing counts, so faces that coincide (a roof slab on its wall box) give the
        same answer whichever of them a ray tracer would report first, and pieces sunk into
        each other are still inside. Edges are tested with exactly antisymmetric products, so a
        ray through an edge shared by two triangles of a mesh counts it once; a ray exactly
        through an edge or vertex (a zero product) is not used and the next direction is.
        """
        origin = np.asarray(point, dtype=np.float64)
        top = float(self._upper[:, 2].max())
        for direction in _ENCLOSURE_RAYS:
            end = origin + direction * max(top - origin[2], 0.0)
            nearby = self.candidates(np.minimum(origin, end), np.maximum(origin, end))
            corners = self.triangles[nearby] - origin
            a, b, c = corners[:, 0], corners[:, 1], corners[:, 2]
            edges = np.stack(
                (_along(direction, a, b), _along(direction, b, c), _along(direction, c, a))
            )
            low, high = edges.min(axis=0), edges.max(axis=0)
            if np.any((low <= 0.0) & (high >= 0.0) & ((low == 0.0) | (high == 0.0))):
                continue
            leaving, entering = low > 0.0, high < 0.0
            normal = np.cross(b - a, c - a)
            # The crossing is ahead of the point when the plane is on the side the ray goes.
            ahead = _dot(a, normal) * np.where(leaving, 1.0, -1.0) > 0.0
            return int(np.sum(leaving & ahead)) - int(np.sum(entering & ahead)) > 0
        raise ValueError(
            f"every enclosure ray from {origin.tolist()} passes exactly through an edge"
        )

    def sweep_sphere(
        self, start: np.ndarray, end: np.ndarray, radius: float
    ) -> CollisionHit | None:
        """First contact of a sphere of ``radius`` moving in a straight line, or None.

        Exact (no sampling), so thin poles and walls cannot be tunnelled through. Geometry the
        sphere already touches at ``start`` counts only if the motion pushes into it.

        Args:
            start: (3,) centre at the start, map frame.
            end: (3,) centre at the end of the motion.
            radius: sphere radius in metres.
        """
        origin = np.asarray(start, dtype=np.float64)
        motion = np.asarray(end, dtype=np.float64) - origin
        best_time, best_triangle = self._boundary_exit(origin, motion), -1
        lower = np.minimum(origin, origin + motion) - radius
        upper = np.maximum(origin, origin + motion) + radius
        nearby = self.candidates(lower, upper)
        if len(nearby) and float(motion @ motion) > 0.0:
            triangles = self.triangles[nearby]
            away = origin - closest_points_on_triangles(origin, triangles)
            touching = np.linalg.norm(away, axis=1) <= radius + _CONTACT_TOLERANCE_M
            times = np.full(len(nearby), np.inf)
            times[touching & (_dot(away, motion) < 0.0)] = 0.0
            apart = ~touching
            times[apart] = first_contact_times(origin, motion, radius, triangles[apart])
            nearest = int(np.argmin(times))
            if times[nearest] < best_time:
                best_time, best_triangle = float(times[nearest]), int(nearby[nearest])
        if not np.isfinite(best_time):
            return None
        name = (
            BOUNDARY_NAME
            if best_triangle < 0
            else self.owner_names[self.triangle_owner[best_triangle]]
        )
        return CollisionHit(
            fraction=best_time,
            position=origin + motion * best_time,
            name=name,
            triangle=best_triangle,
        )

    def _boundary_exit(self, origin: np.ndarray, motion: np.ndarray) -> float:
        """Fraction at which the centre leaves the flyable box (+inf if it stays inside)."""
        exit_time = np.inf
        for axis in range(3):
            if motion[axis] > 0.0:
                exit_time = min(exit_time, (self.bounds_max[axis] - origin[axis]) / motion[axis])
            elif motion[axis] < 0.0:
                exit_time = min(exit_time, (self.bounds_min[axis] - origin[axis]) / motion[axis])
        return max(exit_time, 0.0) if exit_time <= 1.0 else float("inf")
