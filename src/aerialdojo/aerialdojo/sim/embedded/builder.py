"""Assembles a procedural scene: terrain, structures, target objects, landmarks and roads."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import Landmark, SceneAnnotations, TargetObject
from aerialdojo.sim.embedded.annotate import DescribedObject, describe, find_anchor
from aerialdojo.sim.embedded.catalogue import CATEGORIES, SEMANTIC_IDS
from aerialdojo.sim.embedded.collision import CollisionWorld
from aerialdojo.sim.embedded.primitives import SEAT_M, Mesh, box, gable_roof, heightfield
from aerialdojo.sim.embedded.raycast import RayCaster
from aerialdojo.sim.embedded.world import (
    PATTERN_PLAIN,
    PATTERN_WATER,
    PATTERN_WINDOWS,
    EmbeddedScene,
    Lighting,
)

Colour = tuple[int, int, int]
#: A terrain height function of x and y arrays.
HeightFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: A terrain colour function of face centres (N, 3) and normal z components (N,) -> (N, 3).
ColourFunction = Callable[[np.ndarray, np.ndarray], np.ndarray]

# Free space kept around every target object so that an anchor fits beside it.
_OBJECT_CLEARANCE_M = 1.6
# Terrain extends this far beyond the flyable box so that views near the edge see ground.
_TERRAIN_MARGIN_M = 60.0
_ROAD_LIFT_M = 0.05


@dataclass
class _Owner:
    name: str
    instance_id: int
    semantic_id: int


@dataclass
class _PlacedObject:
    object_id: str
    owner: int
    category: str
    colour: str
    attributes: tuple[str, ...]
    faces: list[int] = field(default_factory=list)


@dataclass
class _Heightfield:
    xs: np.ndarray
    ys: np.ndarray
    heights: np.ndarray

    def height_at(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """Height of the triangulated ground (same diagonal split as ``heightfield``); its
        rendered sheet lies SEAT_M above."""
        step_x, step_y = self.xs[1] - self.xs[0], self.ys[1] - self.ys[0]
        fx = np.clip((np.asarray(x) - self.xs[0]) / step_x, 0.0, len(self.xs) - 1.000001)
        fy = np.clip((np.asarray(y) - self.ys[0]) / step_y, 0.0, len(self.ys) - 1.000001)
        ix, iy = fx.astype(int), fy.astype(int)
        u, v = fx - ix, fy - iy
        z00 = self.heights[iy, ix]
        z10 = self.heights[iy, ix + 1]
        z01 = self.heights[iy + 1, ix]
        z11 = self.heights[iy + 1, ix + 1]
        lower = z00 + u * (z10 - z00) + v * (z11 - z10)
        upper = z00 + v * (z01 - z00) + u * (z11 - z01)
        return np.asarray(np.where(u >= v, lower, upper))


class SceneBuilder:
    """Collects the geometry and annotations of one scene, then builds an ``EmbeddedScene``.

    Args:
        scene: scene name, e.g. ``"Mall_0"``.
        scene_type: e.g. ``"Mall"``.
        family: e.g. ``"urban"``.
        seed: seed of the scene's random generator (already mixed with the scene name).
    """

    def __init__(self, *, scene: str, scene_type: str, family: str, seed: Sequence[int]) -> None:
        self.scene = scene
        self.scene_type = scene_type
        self.family = family
        self.rng = np.random.default_rng(list(seed))
        self.lighting = Lighting()
        self.half_extent = 100.0
        self.ceiling_m = 60.0
        self._terrain: _Heightfield | None = None
        self._water_level: float | None = None
        self._vertices: list[np.ndarray] = []
        self._faces: list[np.ndarray] = []
        self._colours: list[np.ndarray] = []
        self._patterns: list[np.ndarray] = []
        self._face_owner: list[np.ndarray] = []
        self._vertex_count = 0
        self._face_count = 0
        self._owners: list[_Owner] = []
        self._next_instance = 1
        self._objects: list[_PlacedObject] = []
        self._landmarks: list[Landmark] = []
        self._occupied: list[tuple[float, float, float]] = []
        self._road_nodes: list[tuple[float, float, float]] = []
        self._road_edges: list[tuple[int, int]] = []

    # --- geometry -------------------------------------------------------------------------

    def owner(self, name: str, semantic: str, *, thing: bool = True) -> int:
        """Register something collisions can name; ``thing=False`` for terrain-like stuff
        that keeps instance id 0."""
        instance = self._next_instance if thing else 0
        self._next_instance += int(thing)
        self._owners.append(_Owner(name, instance, SEMANTIC_IDS[semantic]))
        return len(self._owners) - 1

    def add(
        self,
        mesh: Mesh,
        colour: Colour | np.ndarray,
        owner: int,
        pattern: int = PATTERN_PLAIN,
    ) -> range:
        """Add ``mesh`` with one colour (or a colour per face); returns its face indices.

        ``PATTERN_WINDOWS`` is applied to the mesh's walls only, never to roofs or floors.
        """
        faces = len(mesh.faces)
        colours = np.broadcast_to(np.asarray(colour, dtype=np.uint8), (faces, 3))
        patterns = np.full(faces, pattern, dtype=np.uint8)
        if pattern == PATTERN_WINDOWS:
            triangles = mesh.triangles
            normal = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
            vertical = np.abs(normal[:, 2]) < 0.3 * np.linalg.norm(normal, axis=1)
            patterns = np.where(vertical, PATTERN_WINDOWS, PATTERN_PLAIN).astype(np.uint8)
        self._vertices.append(mesh.vertices)
        self._faces.append(mesh.faces + self._vertex_count)
        self._colours.append(colours)
        self._patterns.append(patterns)
        self._face_owner.append(np.full(faces, owner, dtype=np.int64))
        self._vertex_count += len(mesh.vertices)
        self._face_count += faces
        return range(self._face_count - faces, self._face_count)

    def piece_triangles(self) -> list[np.ndarray]:
        """The (F, 3, 3) triangles of every mesh added so far, one array per ``add``: the
        pieces that checks of the assembled geometry tell apart."""
        vertices = np.concatenate(self._vertices)
        return [vertices[faces] for faces in self._faces]

    def add_pieces(
        self, pieces: Sequence[tuple[Mesh, Colour]], owner: int, pattern: int = PATTERN_PLAIN
    ) -> list[int]:
        """Add several coloured meshes under one owner; returns all their face indices."""
        faces: list[int] = []
        for mesh, colour in pieces:
            faces.extend(self.add(mesh, colour, owner, pattern))
        return faces

    def terrain(
        self,
        half_extent: float,
        height: HeightFunction,
        colour: ColourFunction,
        resolution_m: float = 3.0,
        ceiling_m: float = 60.0,
    ) -> None:
        """Lay the terrain sheet and set the flyable box: ``half_extent`` around the origin in
        x and y, from the lowest ground to ``ceiling_m`` above the highest."""
        self.half_extent = half_extent
        self.ceiling_m = ceiling_m
        reach = half_extent + _TERRAIN_MARGIN_M
        cells = math.ceil(2.0 * reach / resolution_m)
        xs = np.linspace(-reach, reach, cells + 1)
        grid_x, grid_y = np.meshgrid(xs, xs)
        heights = height(grid_x, grid_y)
        self._terrain = _Heightfield(xs, xs, heights)
        # The sheet lies SEAT_M above the heights things are placed on (``ground``), so that
        # whatever stands on the ground stands a little in it rather than on its plane.
        mesh = heightfield(xs, xs, heights + SEAT_M)
        triangles = mesh.triangles
        normal = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
        normal_z = normal[:, 2] / np.linalg.norm(normal, axis=1)
        face_colour = np.clip(colour(triangles.mean(axis=1), normal_z), 0, 255).astype(np.uint8)
        self.add(mesh, face_colour, self.owner("terrain", "terrain", thing=False))

    def water(self, level: float, colour: Colour = (40, 92, 128)) -> None:
        """A water surface at ``level`` over the whole terrain (collidable: agents may not dive)."""
        self._water_level = level
        reach = self.half_extent + _TERRAIN_MARGIN_M
        # SEAT_M above the level, as the terrain's sheet: boats sit a little in the water.
        sheet = heightfield(
            np.array((-reach, reach)), np.array((-reach, reach)), np.full((2, 2), level + SEAT_M)
        )
        self.add(sheet, colour, self.owner("water", "water", thing=False), PATTERN_WATER)

    def ground(self, x: float, y: float) -> float:
        """Terrain height (or the water level where that is higher) at ``x``, ``y``."""
        height = self.terrain_height(x, y)
        return max(height, self._water_level) if self._water_level is not None else height

    def terrain_height(self, x: float, y: float) -> float:
        """Height of the terrain alone (under water where it is below the water level); its
        sheet lies SEAT_M above."""
        assert self._terrain is not None, "terrain() must come first"
        return float(self._terrain.height_at(np.array(x), np.array(y)))

    def ground_under(self, x: float, y: float, radius: float) -> float:
        """Lowest ground under a footprint of ``radius``, so that objects never float."""
        return min(
            self.ground(x + dx, y + dy)
            for dx, dy in ((0.0, 0.0), (radius, 0.0), (-radius, 0.0), (0.0, radius), (0.0, -radius))
        )

    # --- occupancy ------------------------------------------------------------------------

    def is_clear(self, x: float, y: float, radius: float) -> bool:
        """Whether a disc of ``radius`` lies inside the flyable area and touches nothing placed."""
        limit = self.half_extent - 2.0
        if abs(x) + radius > limit or abs(y) + radius > limit:
            return False
        if not self._occupied:
            return True
        discs = np.asarray(self._occupied)
        return bool(np.all(np.hypot(discs[:, 0] - x, discs[:, 1] - y) >= discs[:, 2] + radius))

    def reserve(self, x: float, y: float, radius: float) -> None:
        """Mark a disc as taken (structures, landmarks and objects reserve their footprint)."""
        self._occupied.append((x, y, radius))

    def within(
        self, x0: float, y0: float, x1: float, y1: float
    ) -> Callable[[], tuple[float, float]]:
        """A sampler of uniformly random points of the rectangle ``(x0, y0)``-``(x1, y1)``."""

        def sample() -> tuple[float, float]:
            x, y = self.rng.uniform((x0, y0), (x1, y1))
            return float(x), float(y)

        return sample

    def random_point(self, margin: float = 4.0) -> tuple[float, float]:
        """A uniformly random point of the flyable area, ``margin`` from its edge."""
        reach = self.half_extent - margin
        x, y = self.rng.uniform(-reach, reach, 2)
        return float(x), float(y)

    # --- content --------------------------------------------------------------------------

    def structure(
        self,
        name: str,
        semantic: str,
        pieces: Sequence[tuple[Mesh, Colour]],
        footprint: tuple[float, float, float] | None = None,
    ) -> None:
        """Add non-target geometry (a tree, a bridge, rubble) and reserve its footprint
        ``(x, y, radius)`` if given."""
        self.add_pieces(pieces, self.owner(name, semantic))
        if footprint is not None:
            self.reserve(*footprint)

    def building(
        self,
        name: str,
        x: float,
        y: float,
        size: tuple[float, float, float],
        colour: Colour,
        *,
        yaw: float = 0.0,
        roof: Colour | None = None,
        gable: bool = False,
        base: float | None = None,
    ) -> None:
        """A box building with windowed walls and a flat or pitched roof, standing on the
        lowest ground under it."""
        length, width, height = size
        bottom = self.ground_under(x, y, max(length, width) / 2.0) if base is None else base
        pieces: list[tuple[Mesh, Colour]] = [
            (box(length, width, height).moved((x, y, bottom), yaw), colour)
        ]
        # Roofs reach SEAT_M down into the walls' box (its top would be their bottom's plane);
        # the flat slab keeps its top, the pitched roof its ridge.
        if gable:
            pieces.append(
                (
                    gable_roof(length + 0.6, width + 0.6, min(length, width) * 0.35 + SEAT_M).moved(
                        (x, y, bottom + height - SEAT_M), yaw
                    ),
                    roof or (150, 60, 50),
                )
            )
        elif roof is not None:
            pieces.append(
                (
                    box(length - 0.6, width - 0.6, 0.6 + SEAT_M).moved(
                        (x, y, bottom + height - SEAT_M), yaw
                    ),
                    roof,
                )
            )
        owner = self.owner(name, "building")
        self.add(pieces[0][0], pieces[0][1], owner, PATTERN_WINDOWS)
        self.add_pieces(pieces[1:], owner)
        self.reserve(x, y, math.hypot(length, width) / 2.0)

    def place(
        self,
        category: str,
        x: float,
        y: float,
        *,
        yaw: float | None = None,
        colour: str | None = None,
        base: float | None = None,
    ) -> bool:
        """Place a target object if its footprint (plus anchor room) is free; returns whether
        it was placed."""
        kind = CATEGORIES[category]
        scale = float(self.rng.uniform(0.9, 1.12))
        radius = math.hypot(kind.size[0], kind.size[1]) * scale / 2.0
        if not self.is_clear(x, y, radius + _OBJECT_CLEARANCE_M):
            return False
        heading = float(self.rng.uniform(-math.pi, math.pi)) if yaw is None else yaw
        chosen = colour or str(self.rng.choice(kind.colours))
        bottom = self.ground_under(x, y, radius) if base is None else base
        attributes: list[str] = []
        if kind.attributes and self.rng.random() < 0.6:
            attributes.append(str(self.rng.choice(kind.attributes)))
        if scale > 1.06:
            attributes.append("large")
        object_id = f"obj_{len(self._objects):03d}"
        record = _PlacedObject(
            object_id, self.owner(object_id, category), category, chosen, tuple(attributes)
        )
        for mesh, part_colour in kind.build(chosen, scale):
            record.faces.extend(
                self.add(mesh.moved((x, y, bottom), heading), part_colour, record.owner)
            )
        self._objects.append(record)
        self.reserve(x, y, radius + _OBJECT_CLEARANCE_M)
        return True

    def scatter(
        self,
        categories: Sequence[str],
        count: int,
        where: Callable[[], tuple[float, float]] | None = None,
        attempts: int = 30,
    ) -> int:
        """Place up to ``count`` objects of random ``categories`` at points from ``where``
        (default: anywhere); returns how many were placed."""
        placed = 0
        sample = where or self.random_point
        for _ in range(count):
            category = str(self.rng.choice(list(categories)))
            for _ in range(attempts):
                x, y = sample()
                if self.place(category, x, y):
                    placed += 1
                    break
        return placed

    def landmark(
        self,
        name: str,
        description: str,
        pieces: Sequence[tuple[Mesh, Colour]],
        footprint_radius: float,
    ) -> None:
        """A named, visually salient structure; its position is its bounding-box centre."""
        owner = self.owner(name, "landmark")
        self.add_pieces(pieces, owner)
        corners = np.concatenate([mesh.vertices for mesh, _ in pieces])
        centre = (corners.min(axis=0) + corners.max(axis=0)) / 2.0
        self._landmarks.append(
            Landmark(
                name=name,
                position=(float(centre[0]), float(centre[1]), float(centre[2])),
                description=description,
            )
        )
        self.reserve(float(centre[0]), float(centre[1]), footprint_radius)

    def road(
        self, points: Sequence[tuple[float, float]], width: float, colour: Colour = (64, 64, 68)
    ) -> None:
        """A road along ``points``: a ribbon on the ground and edges in the road graph."""
        owner = self.owner("road", "road", thing=False)
        # Roads running more along x than y lie SEAT_M higher, so that crossing roads do not
        # share a plane; the road graph keeps one lift.
        (x_first, y_first), (x_last, y_last) = points[0], points[-1]
        lift = _ROAD_LIFT_M + SEAT_M * (abs(x_last - x_first) > abs(y_last - y_first))
        for (x0, y0), (x1, y1) in itertools.pairwise(points):
            self.add(self._ribbon((x0, y0), (x1, y1), width, lift), colour, owner)
            node = self._road_node(x0, y0)
            following = self._road_node(x1, y1)
            for edge in ((node, following), (following, node)):
                if edge not in self._road_edges:
                    self._road_edges.append(edge)

    def _road_node(self, x: float, y: float) -> int:
        for index, (nx, ny, _) in enumerate(self._road_nodes):
            if math.hypot(nx - x, ny - y) < 0.5:
                return index
        self._road_nodes.append((x, y, self.ground(x, y) + _ROAD_LIFT_M))
        return len(self._road_nodes) - 1

    def _ribbon(
        self, start: tuple[float, float], end: tuple[float, float], width: float, lift: float
    ) -> Mesh:
        begin, finish = np.asarray(start), np.asarray(end)
        length = float(np.linalg.norm(finish - begin))
        steps = max(1, math.ceil(length / 3.0))
        along = np.linspace(0.0, 1.0, steps + 1)[:, None]
        centre = begin + (finish - begin) * along
        side = np.array((-(finish - begin)[1], (finish - begin)[0])) / length * (width / 2.0)
        edges = np.stack((centre - side, centre + side), axis=1).reshape(-1, 2)
        heights = np.array([self.ground(float(x), float(y)) for x, y in edges]) + lift
        vertices = np.column_stack((edges, heights))
        row = np.arange(steps) * 2
        faces = np.concatenate(
            (np.stack((row, row + 2, row + 3), 1), np.stack((row, row + 3, row + 1), 1))
        )
        normal_z = np.cross(
            vertices[faces[0, 1]] - vertices[faces[0, 0]],
            vertices[faces[0, 2]] - vertices[faces[0, 0]],
        )[2]
        return Mesh(vertices, faces if normal_z > 0 else faces[:, ::-1])

    # --- finishing ------------------------------------------------------------------------

    def build(self, *, distribution: str, agent_radius_m: float, started: float) -> EmbeddedScene:
        """Finish the scene: merge geometry, build the ray caster and collision world, find an
        anchor per object (dropping objects with none) and write the annotations."""
        vertices = np.concatenate(self._vertices)
        faces = np.concatenate(self._faces)
        triangles = vertices[faces]
        object_triangles = [triangles[record.faces] for record in self._objects]
        cross = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
        area = np.linalg.norm(cross, axis=1)
        # Degenerate slivers have no normal; they cannot be seen or touched either.
        keep = area > 1e-9
        faces, triangles = faces[keep], triangles[keep]
        normals = cross[keep] / area[keep, None]
        owners = np.concatenate(self._face_owner)[keep]
        caster = RayCaster(vertices, faces)
        assert self._terrain is not None, "a scene needs terrain"
        lowest = float(self._terrain.heights.min())
        reach = self.half_extent
        world = CollisionWorld(
            triangles,
            owners,
            [owner.name for owner in self._owners],
            bounds_min=(-reach, -reach, lowest),
            bounds_max=(reach, reach, float(self._terrain.heights.max()) + self.ceiling_m),
            solid=True,
        )
        annotations = self._annotate(world, object_triangles, distribution, agent_radius_m)
        owner_instance = np.array([owner.instance_id for owner in self._owners], dtype=np.int32)
        owner_semantic = np.array([owner.semantic_id for owner in self._owners], dtype=np.int32)
        return EmbeddedScene(
            annotations=annotations,
            collision=world,
            caster=caster,
            face_colour=(np.concatenate(self._colours)[keep] / 255.0).astype(np.float32),
            face_normal=normals.astype(np.float32),
            face_pattern=np.concatenate(self._patterns)[keep],
            face_instance=owner_instance[owners],
            face_semantic=owner_semantic[owners],
            lighting=self.lighting,
            generation_seconds=time.perf_counter() - started,
        )

    def _annotate(
        self,
        world: CollisionWorld,
        object_triangles: list[np.ndarray],
        distribution: str,
        agent_radius_m: float,
    ) -> SceneAnnotations:
        anchored: list[tuple[_PlacedObject, Pose, np.ndarray, np.ndarray]] = []
        for record, own in zip(self._objects, object_triangles, strict=True):
            lower, upper = own.reshape(-1, 3).min(axis=0), own.reshape(-1, 3).max(axis=0)
            centroid = (lower + upper) / 2.0
            anchor = find_anchor(
                world, own, centroid, agent_radius_m, float(self.rng.uniform(0, 2 * math.pi))
            )
            if anchor is not None:
                anchored.append((record, anchor, lower, upper))
        described = [
            DescribedObject(
                object_id=record.object_id,
                name=f"{record.colour} {CATEGORIES[record.category].label}",
                attributes=record.attributes,
                centroid=tuple(float(v) for v in (lower + upper) / 2.0),  # type: ignore[arg-type]
            )
            for record, _, lower, upper in anchored
        ]
        descriptions = describe(described, self._landmarks)
        objects = tuple(
            TargetObject(
                object_id=record.object_id,
                instance_id=self._owners[record.owner].instance_id,
                name=item.name,
                category=record.category,
                colour=record.colour,
                attributes=record.attributes,
                description=descriptions[record.object_id],
                centroid=item.centroid,
                bbox_min=(float(lower[0]), float(lower[1]), float(lower[2])),
                bbox_max=(float(upper[0]), float(upper[1]), float(upper[2])),
                anchor=anchor,
            )
            for (record, anchor, lower, upper), item in zip(anchored, described, strict=True)
        )
        return SceneAnnotations(
            scene=self.scene,
            scene_type=self.scene_type,
            family=self.family,
            distribution=distribution,
            bounds_min=tuple(float(v) for v in world.bounds_min),  # type: ignore[arg-type]
            bounds_max=tuple(float(v) for v in world.bounds_max),  # type: ignore[arg-type]
            landmarks=tuple(self._landmarks),
            objects=objects,
            road_nodes=tuple(self._road_nodes),
            road_edges=tuple(self._road_edges),
        )
