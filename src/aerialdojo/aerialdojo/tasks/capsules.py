"""Capsule tests against a scene's triangles that settle most swept-sphere queries cheaply.

A sphere of radius r swept along a segment covers exactly the capsule of radius r around
the segment. So if the capsule of radius r + margin touches no triangle, the sweep is free;
if the capsule of radius r - margin overlaps one, some position along the motion is inside
geometry by more than the margin and the exact sweep reports a contact (provided the sphere
is free at the start, as the planner's always is). Only motions whose clearance lies within
the margin of r are left to the exact world. The tests run in FCL (the Flexible Collision
Library, through python-fcl) against a bounding-volume hierarchy of the triangles: about
10 us a test, where the exact numpy sweep costs about a millisecond.

Profiling the generator showed why this matters: about 80% of its time was exact sweeps,
and about nine in ten of those ran into geometry (the search pops successors facing walls
and slopes first), so a filter that only clears free space could not remove them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import fcl
import numpy as np

from aerialdojo.errors import ConfigError
from aerialdojo.tasks.planner import CollisionWorld, SweepHit, TriangleGrid

#: Capsule tests are trusted only this far from the exact contact distance: three orders of
#: magnitude above the exact world's contact tolerance and FCL's GJK tolerance (both 1e-6 m).
#: About one query in a thousand falls within it and goes to the exact sweep.
DEFAULT_MARGIN_M = 1e-3
# Capsule shapes kept for reuse: the planner's moves come in a handful of lengths.
_CAPSULE_CACHE_SIZE = 256


def _rotation_from_z(direction: tuple[float, float, float]) -> tuple[float, float, float, float]:
    """The unit quaternion (w, x, y, z) turning +z onto the unit vector ``direction``."""
    dx, dy, dz = direction
    if dz < -1.0 + 1e-12:
        return (0.0, 1.0, 0.0, 0.0)  # half a turn about x
    w, x, y = 1.0 + dz, -dy, dx
    norm = math.sqrt(w * w + x * x + y * y)
    return (w / norm, x / norm, y / norm, 0.0)


#: Edge of the compiled screen's grid cells in x and y: about a terrain triangle, so a move's
#: capsule (at most 5.5 m across) reads a few cells.
_GRID_CELL_M = 4.0


def _triangle_grid(triangles: np.ndarray, cell: float) -> TriangleGrid:
    """Every triangle listed in each grid cell its bounding box overlaps in x and y."""
    lower, upper = triangles.min(axis=1), triangles.max(axis=1)
    origin = lower[:, :2].min(axis=0) - cell
    columns, rows = (np.floor((upper[:, :2].max(axis=0) - origin) / cell).astype(int) + 2).tolist()
    first = np.floor((lower[:, :2] - origin) / cell).astype(np.int64)
    last = np.floor((upper[:, :2] - origin) / cell).astype(np.int64)
    counts = last - first + 1
    per_triangle = counts[:, 0] * counts[:, 1]
    triangle = np.repeat(np.arange(len(triangles)), per_triangle)
    ordinal = np.arange(len(triangle)) - np.repeat(
        np.cumsum(per_triangle) - per_triangle, per_triangle
    )
    column = first[triangle, 0] + ordinal % counts[triangle, 0]
    row = first[triangle, 1] + ordinal // counts[triangle, 0]
    keys = row * columns + column
    order = np.argsort(keys, kind="stable")
    return TriangleGrid(
        triangles=triangles,
        bounds=np.ascontiguousarray(np.concatenate((lower, upper), axis=1)),
        cell_start=np.searchsorted(keys[order], np.arange(columns * rows + 1)).astype(np.int64),
        cell_triangles=triangle[order].astype(np.int64),
        origin=(float(origin[0]), float(origin[1])),
        cell=cell,
        columns=columns,
        rows=rows,
    )


class _Capsules(NamedTuple):
    """The capsules of one motion and radius, centred at the origin, and half the motion."""

    narrow: fcl.CollisionObject | None
    wide: fcl.CollisionObject
    half_motion: tuple[float, ...]


class CapsuleScreen:
    """Wraps an exact ``CollisionWorld``: same exact queries, plus ``motion_verdict``.

    Args:
        world: the exact collision world (its answers are the reference).
        triangles: (T, 3, 3) every triangle the world collides with.
        bounds_min: lower corner of the world's flyable box.
        bounds_max: upper corner.
        margin_m: how far from the contact distance a capsule test is trusted.

    Raises:
        ConfigError: a non-positive margin, or no triangles.
    """

    def __init__(
        self,
        world: CollisionWorld,
        triangles: np.ndarray,
        bounds_min: Sequence[float],
        bounds_max: Sequence[float],
        *,
        margin_m: float = DEFAULT_MARGIN_M,
    ) -> None:
        triangles = np.ascontiguousarray(triangles, dtype=np.float64).reshape(-1, 3, 3)
        if margin_m <= 0.0 or len(triangles) == 0:
            raise ConfigError(
                f"capsule screen: margin_m={margin_m} must be positive and the scene must "
                f"have triangles (got {len(triangles)})"
            )
        self._world = world
        self._margin = margin_m
        # The box test keeps the margin too: a motion ending within it of the flyable box's
        # faces is left to the exact world, which decides exits exactly.
        self._inner_low = tuple(float(value) + margin_m for value in bounds_min)
        self._inner_high = tuple(float(value) - margin_m for value in bounds_max)
        self._triangles = triangles
        model = fcl.BVHModel()
        model.beginModel(3 * len(triangles), len(triangles))
        model.addSubModel(triangles.reshape(-1, 3), np.arange(3 * len(triangles)).reshape(-1, 3))
        model.endModel()
        self._mesh = fcl.CollisionObject(model, fcl.Transform())
        self._request = fcl.CollisionRequest()
        self._result = fcl.CollisionResult()
        self._capsules: dict[tuple[float, ...], _Capsules] = {}
        self._centre = np.zeros(3)
        self._grid: TriangleGrid | None = None
        self.exact_sweeps = 0
        self.capsule_tests = 0

    @property
    def margin_m(self) -> float:
        """How far from the contact distance a capsule test is trusted."""
        return self._margin

    @property
    def inner_box(self) -> tuple[tuple[float, ...], tuple[float, ...]]:
        """The flyable box shrunk by the margin: motions ending outside it are left to the
        exact world."""
        return self._inner_low, self._inner_high

    def triangle_grid(self) -> TriangleGrid:
        """The triangles on a grid, for the compiled search's own capsule tests (built on
        first use)."""
        if self._grid is None:
            self._grid = _triangle_grid(self._triangles, _GRID_CELL_M)
        return self._grid

    def sweep_sphere(self, start: np.ndarray, end: np.ndarray, radius: float) -> SweepHit | None:
        """The exact world's answer."""
        self.exact_sweeps += 1
        return self._world.sweep_sphere(start, end, radius)

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        """The exact world's answer."""
        return self._world.sphere_is_free(center, radius)

    def _capsules_for(self, motion: tuple[float, float, float], radius: float) -> _Capsules:
        """The two capsules of a motion and radius (made once: the planner's motions come in
        a handful of lengths and directions)."""
        if len(self._capsules) >= _CAPSULE_CACHE_SIZE:
            self._capsules.clear()
        length = math.sqrt(motion[0] ** 2 + motion[1] ** 2 + motion[2] ** 2)
        direction = (motion[0] / length, motion[1] / length, motion[2] / length)
        turned = fcl.Transform(_rotation_from_z(direction), [0.0, 0.0, 0.0])

        def capsule(capsule_radius: float) -> fcl.CollisionObject:
            return fcl.CollisionObject(fcl.Capsule(capsule_radius, length), turned)

        # Blocked only if even the narrowed capsule overlaps (none when the margin is wider
        # than the radius); free only if even the widened one does not.
        narrow = capsule(radius - self._margin) if radius > self._margin else None
        entry = _Capsules(narrow, capsule(radius + self._margin), tuple(m / 2.0 for m in motion))
        self._capsules[(radius, motion[0], motion[1], motion[2])] = entry
        return entry

    def _overlaps(self, capsule: fcl.CollisionObject, centre: np.ndarray) -> bool:
        """Whether ``capsule`` centred at ``centre`` overlaps a triangle."""
        capsule.setTranslation(centre)
        self.capsule_tests += 1
        if not fcl.collide(capsule, self._mesh, self._request, self._result):
            return False
        # One result object for every test (building one costs as much as a test of open
        # space); python-fcl appends the contact it found, so drop it.
        self._result.contacts.clear()
        return True

    def motion_verdict(
        self, start: Sequence[float] | np.ndarray, motion: tuple[float, float, float], radius: float
    ) -> bool | None:
        """Whether ``sweep_sphere(start, start + motion, radius)`` is free, where capsule
        tests settle it. The sphere must be free at ``start``.

        Args:
            start: the start of the sphere's centre (its first three numbers; a planner
                state may carry more).
            motion: the displacement (a tuple: capsules are kept per displacement).
            radius: sphere radius.

        Returns:
            True if the exact sweep is certainly free, False if it certainly reports a
            contact, None if only the exact sweep can tell.
        """
        if motion == (0.0, 0.0, 0.0):
            return None
        capsules = self._capsules.get((radius, *motion)) or self._capsules_for(motion, radius)
        x, y, z = float(start[0]), float(start[1]), float(start[2])
        half = capsules.half_motion
        # The same sums as ``start + motion / 2`` in numpy, one float at a time, into one
        # reused array (``setTranslation`` copies it).
        centre = self._centre
        centre[0], centre[1], centre[2] = x + half[0], y + half[1], z + half[2]
        # Blocked first: most motions the planner asks about run into geometry.
        if capsules.narrow is not None and self._overlaps(capsules.narrow, centre):
            return False
        low, high = self._inner_low, self._inner_high
        inside = (
            low[0] < x < high[0]
            and low[1] < y < high[1]
            and low[2] < z < high[2]
            and low[0] < x + motion[0] < high[0]
            and low[1] < y + motion[1] < high[1]
            and low[2] < z + motion[2] < high[2]
        )
        if inside and not self._overlaps(capsules.wide, centre):
            return True
        return None
