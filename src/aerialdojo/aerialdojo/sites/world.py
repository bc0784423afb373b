"""A site's collision world for reference planning: its geofence, its surveyed obstacles and,
for a rehearsal site, the embedded scene's geometry, answering the planner's queries
(``tasks.planner.CollisionWorld``) with the embedded simulator's exact swept-sphere code.

The fence is swept with its margin rather than the vehicle's radius: it is no wall, and a
position is inside it when at least the margin from its edges (``geofence.Geofence``).
Obstacles and scene geometry are swept with the vehicle's collision radius.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from aerialdojo.geofence import Geofence, points_in_polygon
from aerialdojo.sim.embedded.collision import CollisionHit, CollisionWorld
from aerialdojo.tasks.capsules import CapsuleScreen
from aerialdojo.tasks.planner import Bounds, MotionScreen, SweepHit
from aerialdojo.tasks.planner import CollisionWorld as PlannerWorld

if TYPE_CHECKING:
    from aerialdojo.sites.site import Site

#: What a sweep that reaches the fence reports as hit.
GEOFENCE_NAME = "geofence"
#: The fence's walls reach this far beyond its band, so a sweep along the floor or the
#: ceiling still meets them.
_WALL_OVERHANG_M = 10.0
#: Sweeps against the fence use at least this radius (a margin of 0 is a segment test).
_MIN_FENCE_RADIUS_M = 1e-3
#: The obstacles' world reaches this far beyond them and the fence, and this high and low.
_OBSTACLE_BOX_OVERHANG_M = 10.0
_FAR_Z_M = 1e4


def _walls(polygon: np.ndarray, low: float, high: float) -> np.ndarray:
    """(2N, 3, 3) two triangles per polygon edge, a vertical wall from ``low`` to ``high``."""
    triangles = []
    for (x1, y1), (x2, y2) in zip(polygon, np.roll(polygon, -1, axis=0), strict=True):
        a, b = (x1, y1, low), (x2, y2, low)
        c, d = (x2, y2, high), (x1, y1, high)
        triangles += [(a, b, c), (a, c, d)]
    return np.asarray(triangles, dtype=np.float64)


def _caps(polygon: np.ndarray, z: float) -> np.ndarray:
    """(N-2, 3, 3) a convex polygon at height ``z`` as a fan of triangles."""
    first = (*polygon[0], z)
    return np.asarray(
        [(first, (*polygon[i], z), (*polygon[i + 1], z)) for i in range(1, len(polygon) - 1)],
        dtype=np.float64,
    )


def fence_world(fence: Geofence) -> CollisionWorld:
    """The fence as walls along its polygon; its flyable box is the fence's box with the
    margin taken off, and points outside the polygon count as inside closed geometry."""
    vertices = fence.vertices
    low, high = fence.bounds()
    triangles = _walls(vertices, fence.min_z - _WALL_OVERHANG_M, fence.max_z + _WALL_OVERHANG_M)
    return CollisionWorld(
        triangles,
        np.zeros(len(triangles), dtype=np.int64),
        [GEOFENCE_NAME],
        bounds_min=low,
        bounds_max=high,
        inside_test=lambda points: ~points_in_polygon(vertices, points),
    )


def obstacle_world(
    footprints: Sequence[np.ndarray],
    bottoms: Sequence[float],
    tops: Sequence[float],
    names: Sequence[str],
    around: Bounds,
) -> CollisionWorld:
    """Convex prisms (walls, top and bottom) as triangles, each named for collisions; points
    inside a prism count as inside closed geometry. Its flyable box reaches well beyond
    ``around`` (the fence's box) and every prism: the fence, not this world, bounds a
    vehicle."""
    triangles, owners = [], []
    for owner, (footprint, bottom, top) in enumerate(zip(footprints, bottoms, tops, strict=True)):
        solid = np.concatenate([_walls(footprint, bottom, top), _caps(footprint, top)])
        solid = np.concatenate([solid, _caps(footprint, bottom)])
        triangles.append(solid)
        owners.append(np.full(len(solid), owner, dtype=np.int64))

    def inside(points: np.ndarray) -> np.ndarray:
        found = np.zeros(len(points), dtype=bool)
        for footprint, bottom, top in zip(footprints, bottoms, tops, strict=True):
            level = (points[:, 2] >= bottom) & (points[:, 2] <= top)
            found |= level & points_in_polygon(footprint, points)
        return found

    corners = np.concatenate([*footprints, np.array([around[0][:2], around[1][:2]])])
    low = (*(corners.min(axis=0) - _OBSTACLE_BOX_OVERHANG_M), -_FAR_Z_M)
    high = (*(corners.max(axis=0) + _OBSTACLE_BOX_OVERHANG_M), _FAR_Z_M)
    return CollisionWorld(
        np.concatenate(triangles),
        np.concatenate(owners),
        list(names),
        bounds_min=low,
        bounds_max=high,
        inside_test=inside,
    )


@dataclass(frozen=True)
class _Part:
    """One world of a site, the radius its sweeps use (None: the caller's), and its motion
    screen if it has one (looked up once: a protocol check costs as much as a screen test)."""

    world: PlannerWorld
    radius: float | None
    screen: MotionScreen | None


class SiteWorld:
    """The planner's collision queries over a site: the fence and every solid part must be
    free.

    Args:
        fence: the fence's world and the radius it is swept with (its margin).
        solids: the worlds of what a vehicle can hit (obstacles, the embedded scene), swept
            at the caller's radius.
        bounds: the box every planned position stays in.
        scene_bounds: the embedded scene's flyable box, None for a real site.
    """

    def __init__(
        self,
        fence: tuple[PlannerWorld, float],
        solids: Sequence[PlannerWorld],
        bounds: Bounds,
        *,
        scene_bounds: Bounds | None = None,
    ) -> None:
        self._parts = [
            _Part(world, radius, world if isinstance(world, MotionScreen) else None)
            for world, radius in [fence, *((solid, None) for solid in solids)]
        ]
        self._solids = self._parts[1:]
        self.bounds = bounds
        self.scene_bounds = scene_bounds

    def sweep_sphere(self, start: np.ndarray, end: np.ndarray, radius: float) -> SweepHit | None:
        """The earliest contact of any part, or None if the motion is free in all."""
        hits = [
            hit
            for part in self._parts
            if (hit := part.world.sweep_sphere(start, end, part.radius or radius)) is not None
        ]
        return min(hits, key=lambda hit: hit.fraction) if hits else None

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        """Whether every part finds the sphere free."""
        return all(part.world.sphere_is_free(center, part.radius or radius) for part in self._parts)

    def motion_verdict(
        self, start: Sequence[float] | np.ndarray, motion: tuple[float, float, float], radius: float
    ) -> bool | None:
        """Whether a motion is free, where every part settles it: a part with a screen of
        its own (the embedded scene's ``CapsuleScreen``) by its screen, the site's own small
        worlds by their exact sweep (``tasks.planner.MotionScreen``)."""
        origin = np.asarray(start[:3], dtype=np.float64)
        settled = True
        for part in self._parts:
            part_radius = part.radius or radius
            if part.screen is not None:
                verdict = part.screen.motion_verdict(origin, motion, part_radius)
            else:
                end = origin + np.asarray(motion, dtype=np.float64)
                verdict = part.world.sweep_sphere(origin, end, part_radius) is None
            if verdict is False:
                return False
            settled = settled and verdict is True
        return True if settled else None

    def obstruction(self, center: Sequence[float] | np.ndarray, radius: float) -> str | None:
        """Why a vehicle of ``radius`` cannot be at ``center`` (the solid it touches, or
        "inside geometry"), or None; the fence is ``geofence.Geofence.violation``'s."""
        point = np.asarray(center, dtype=np.float64)
        for part in self._solids:
            if part.world.sphere_is_free(point, part.radius or radius):
                continue
            where = f"({point[0]:.2f}, {point[1]:.2f}, {point[2]:.2f})"
            named = part.world.sweep_sphere(point, point + 1e-6, part.radius or radius)
            what = getattr(named, "name", "") if isinstance(named, CollisionHit) else ""
            return f"{where} is not free at the collision radius {radius:g} m" + (
                f" (touches {what})" if what else " (inside geometry)"
            )
        return None


def _screened(world: CollisionWorld) -> CapsuleScreen:
    """``world`` behind a capsule screen: most of a search's motions run in open space, far
    from any wall, and FCL settles them in microseconds (``tasks.capsules``)."""
    low, high = world.bounds_min.tolist(), world.bounds_max.tolist()
    return CapsuleScreen(world, world.triangles, low, high)


def _intersection(a: Bounds, b: Bounds) -> Bounds:
    low = tuple(max(x, y) for x, y in zip(a[0], b[0], strict=True))
    high = tuple(min(x, y) for x, y in zip(a[1], b[1], strict=True))
    return (low[0], low[1], low[2]), (high[0], high[1], high[2])


def site_world(site: Site) -> SiteWorld:
    """The collision world of a site: its fence (at its margin), its obstacles, and the
    embedded scene's geometry (scene seed 0, as the bridge loads it) at the site's collision
    radius; bounds are the fence's box, within the scene's flyable box."""
    fence = site.geofence
    bounds = fence.bounds()
    walls = (_screened(fence_world(fence)), max(fence.margin, _MIN_FENCE_RADIUS_M))
    solids: list[PlannerWorld] = []
    if site.obstacles:
        obstacles = obstacle_world(
            [np.asarray(o.footprint, dtype=np.float64) for o in site.obstacles],
            [o.min_z for o in site.obstacles],
            [o.max_z for o in site.obstacles],
            [o.name for o in site.obstacles],
            bounds,
        )
        solids.append(_screened(obstacles))
    if site.embedded_scene:
        from aerialdojo.sim.embedded.scenes import load_scene  # noqa: PLC0415 - Embree
        from aerialdojo.tasks.embedded import scene_world  # noqa: PLC0415

        scene = load_scene(site.embedded_scene, 0, agent_radius_m=site.collision_radius_m)
        scene_bounds = (scene.annotations.bounds_min, scene.annotations.bounds_max)
        solids.append(scene_world(scene))
        return SiteWorld(
            walls, solids, _intersection(bounds, scene_bounds), scene_bounds=scene_bounds
        )
    return SiteWorld(walls, solids, bounds)
