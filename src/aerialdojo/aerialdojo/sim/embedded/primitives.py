"""Closed, outward-wound triangle meshes that procedural scenes are assembled from."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.geometry import yaw_matrix

#: A 3D point or vector given as a sequence or an array.
Vector = Sequence[float] | np.ndarray

#: How far a piece resting on another reaches into it instead of sharing a plane with it:
#: two coincident faces meet a ray at one distance, and which of them Embree reports depends
#: on the machine (its BVH is built for the CPU's instruction set). Hidden inside the other
#: piece, it changes no visible dimension by more than a few millimetres.
SEAT_M = 0.002


@dataclass(frozen=True)
class Mesh:
    """An indexed triangle mesh; faces wind counter-clockwise seen from outside.

    Attributes:
        vertices: (V, 3) float64 positions in metres.
        faces: (F, 3) int64 vertex indices.
    """

    vertices: np.ndarray
    faces: np.ndarray

    def moved(
        self,
        translation: Sequence[float] | np.ndarray = (0.0, 0.0, 0.0),
        yaw: float = 0.0,
        rotation: np.ndarray | None = None,
    ) -> Mesh:
        """The mesh rotated (by ``rotation``, then by ``yaw`` about +z) and then translated.

        Rotations are proper (det +1), so the winding stays outward.
        """
        vertices = self.vertices
        if rotation is not None:
            vertices = vertices @ rotation.T
        if yaw != 0.0:
            vertices = vertices @ yaw_matrix(yaw).T
        return Mesh(vertices + np.asarray(translation, dtype=np.float64), self.faces)

    @property
    def triangles(self) -> np.ndarray:
        """(F, 3, 3) corner positions of every face."""
        return np.asarray(self.vertices[self.faces])


# Corner k of the unit cube has coordinates (k & 1, k >> 1 & 1, k >> 2 & 1).
_CUBE_CORNERS = np.array([(k & 1, k >> 1 & 1, k >> 2 & 1) for k in range(8)], dtype=np.float64)
_CUBE_FACES = np.array(
    (
        (0, 2, 3), (0, 3, 1),  # bottom, -z
        (4, 5, 7), (4, 7, 6),  # top, +z
        (0, 1, 5), (0, 5, 4),  # -y
        (2, 6, 7), (2, 7, 3),  # +y
        (0, 4, 6), (0, 6, 2),  # -x
        (1, 3, 7), (1, 7, 5),  # +x
    ),
    dtype=np.int64,
)  # fmt: skip


def box(size_x: float, size_y: float, size_z: float) -> Mesh:
    """An axis-aligned box centred on the origin in x and y, resting on z = 0."""
    corners = _CUBE_CORNERS * (size_x, size_y, size_z) - (size_x / 2.0, size_y / 2.0, 0.0)
    return Mesh(corners, _CUBE_FACES)


def box_between(lower: Sequence[float], upper: Sequence[float]) -> Mesh:
    """An axis-aligned box spanning the corners ``lower`` and ``upper``."""
    low = np.asarray(lower, dtype=np.float64)
    span = np.asarray(upper, dtype=np.float64) - low
    return Mesh(_CUBE_CORNERS * span + low, _CUBE_FACES)


def frustum(radius_bottom: float, radius_top: float, height: float, segments: int = 12) -> Mesh:
    """A capped circular frustum on z = 0 (a cylinder if the radii agree, a cone if the top
    radius is 0)."""
    angles = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    ring = np.stack((np.cos(angles), np.sin(angles), np.zeros(segments)), axis=1)
    index = np.arange(segments)
    following = (index + 1) % segments
    bottom = ring * (radius_bottom, radius_bottom, 0.0)
    bottom_centre = segments
    if radius_top == 0.0:
        apex = segments + 1
        vertices = np.concatenate((bottom, [(0.0, 0.0, 0.0), (0.0, 0.0, height)]))
        sides = np.stack((index, following, np.full(segments, apex)), axis=1)
    else:
        top = ring * (radius_top, radius_top, 0.0) + (0.0, 0.0, height)
        top_start, top_centre = segments + 2, segments + 1
        vertices = np.concatenate((bottom, [(0.0, 0.0, 0.0), (0.0, 0.0, height)], top))
        sides = np.concatenate(
            (
                np.stack((index, following, following + top_start), axis=1),
                np.stack((index, following + top_start, index + top_start), axis=1),
                np.stack(
                    (np.full(segments, top_centre), index + top_start, following + top_start), 1
                ),
            )
        )
    cap = np.stack((np.full(segments, bottom_centre), following, index), axis=1)
    return Mesh(vertices, np.concatenate((sides, cap)))


def cylinder(radius: float, height: float, segments: int = 12) -> Mesh:
    """A capped cylinder standing on z = 0."""
    return frustum(radius, radius, height, segments)


def sphere(radius: float, rings: int = 6, segments: int = 10) -> Mesh:
    """A UV sphere centred on (0, 0, ``radius``), i.e. resting on z = 0."""
    polar = np.linspace(0.0, math.pi, rings + 1)[1:-1]
    azimuth = np.linspace(0.0, 2.0 * math.pi, segments, endpoint=False)
    sin_p, cos_p = np.sin(polar)[:, None], np.cos(polar)[:, None]
    ring_points = np.stack(
        (sin_p * np.cos(azimuth), sin_p * np.sin(azimuth), np.repeat(cos_p, segments, axis=1)),
        axis=-1,
    ).reshape(-1, 3)
    north, south = len(ring_points), len(ring_points) + 1
    vertices = np.concatenate((ring_points, [(0.0, 0.0, 1.0), (0.0, 0.0, -1.0)])) * radius
    index = np.arange(segments)
    following = (index + 1) % segments
    faces = [np.stack((np.full(segments, north), index, following), axis=1)]
    for ring in range(rings - 2):
        upper, lower = ring * segments, (ring + 1) * segments
        faces.append(np.stack((upper + index, lower + index, lower + following), axis=1))
        faces.append(np.stack((upper + index, lower + following, upper + following), axis=1))
    last = (rings - 2) * segments
    faces.append(np.stack((np.full(segments, south), last + following, last + index), axis=1))
    return Mesh(vertices + np.array((0.0, 0.0, radius)), np.concatenate(faces))


def extrude(polygon_xy: Sequence[tuple[float, float]], height: float) -> Mesh:
    """A prism of ``height`` over a convex polygon on z = 0 given counter-clockwise."""
    outline = np.asarray(polygon_xy, dtype=np.float64)
    count = len(outline)
    bottom = np.column_stack((outline, np.zeros(count)))
    top = np.column_stack((outline, np.full(count, height)))
    index = np.arange(count)
    following = (index + 1) % count
    fan = np.arange(1, count - 1)
    faces = np.concatenate(
        (
            np.stack((np.zeros(count - 2, dtype=np.int64), fan + 1, fan), axis=1),
            np.stack((np.full(count - 2, count), fan + count, fan + count + 1), axis=1),
            np.stack((index, following, following + count), axis=1),
            np.stack((index, following + count, index + count), axis=1),
        )
    )
    return Mesh(np.concatenate((bottom, top)), faces)


def gable_roof(size_x: float, size_y: float, height: float) -> Mesh:
    """A triangular prism on z = 0 with its ridge along x (a pitched roof or a tent)."""
    half_x, half_y = size_x / 2.0, size_y / 2.0
    vertices = np.array(
        (
            (-half_x, -half_y, 0.0), (half_x, -half_y, 0.0), (half_x, half_y, 0.0),
            (-half_x, half_y, 0.0), (-half_x, 0.0, height), (half_x, 0.0, height),
        )
    )  # fmt: skip
    faces = np.array(
        ((0, 3, 2), (0, 2, 1), (0, 1, 5), (0, 5, 4), (3, 4, 5), (3, 5, 2), (0, 4, 3), (1, 2, 5))
    )
    return Mesh(vertices, faces)


def wedge(size_x: float, size_y: float, height: float) -> Mesh:
    """A ramp on z = 0 rising along +x from 0 to ``height`` (grandstand tiers, slopes)."""
    half_x, half_y = size_x / 2.0, size_y / 2.0
    vertices = np.array(
        (
            (-half_x, -half_y, 0.0), (half_x, -half_y, 0.0), (half_x, half_y, 0.0),
            (-half_x, half_y, 0.0), (half_x, -half_y, height), (half_x, half_y, height),
        )
    )  # fmt: skip
    faces = np.array(
        ((0, 3, 2), (0, 2, 1), (1, 2, 5), (1, 5, 4), (0, 1, 4), (3, 5, 2), (0, 4, 5), (0, 5, 3))
    )
    return Mesh(vertices, faces)


def beam(start: Vector, end: Vector, thickness: float) -> Mesh:
    """A square-section bar from ``start`` to ``end`` (cables, spokes, jibs, tilted slabs)."""
    begin = np.asarray(start, dtype=np.float64)
    axis = np.asarray(end, dtype=np.float64) - begin
    length = float(np.linalg.norm(axis))
    forward = axis / length
    helper = np.array((0.0, 0.0, 1.0)) if abs(forward[2]) < 0.9 else np.array((1.0, 0.0, 0.0))
    side = np.cross(helper, forward)
    side /= np.linalg.norm(side)
    rotation = np.stack((forward, side, np.cross(forward, side)), axis=1)
    bar = box_between(
        (0.0, -thickness / 2.0, -thickness / 2.0), (length, thickness / 2.0, thickness / 2.0)
    )
    return bar.moved(begin, rotation=rotation)


def slab(size_x: float, size_y: float, thickness: float, tilt_x: float, tilt_y: float) -> Mesh:
    """A box resting on z = 0 tilted by ``tilt_x`` about +x and ``tilt_y`` about +y (rubble)."""
    cx, sx = math.cos(tilt_x), math.sin(tilt_x)
    cy, sy = math.cos(tilt_y), math.sin(tilt_y)
    about_x = np.array(((1.0, 0.0, 0.0), (0.0, cx, -sx), (0.0, sx, cx)))
    about_y = np.array(((cy, 0.0, sy), (0.0, 1.0, 0.0), (-sy, 0.0, cy)))
    return box(size_x, size_y, thickness).moved(rotation=about_y @ about_x)


def heightfield(xs: np.ndarray, ys: np.ndarray, heights: np.ndarray) -> Mesh:
    """A terrain sheet over the grid ``xs`` x ``ys`` with ``heights[iy, ix]``, facing up.

    Each grid cell is split along its (x0, y0)-(x1, y1) diagonal; ``Heightfield.height_at``
    interpolates with the same split so that queries agree with the rendered surface.
    """
    grid_x, grid_y = np.meshgrid(xs, ys)
    vertices = np.stack((grid_x.ravel(), grid_y.ravel(), heights.ravel()), axis=1)
    columns = len(xs)
    corner = np.arange(len(ys) * columns).reshape(len(ys), columns)[:-1, :-1].ravel()
    faces = np.concatenate(
        (
            np.stack((corner, corner + 1, corner + columns + 1), axis=1),
            np.stack((corner, corner + columns + 1, corner + columns), axis=1),
        )
    )
    return Mesh(vertices, faces)
