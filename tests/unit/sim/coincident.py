"""Finds coincident faces: coplanar triangles of different pieces whose interiors overlap.

A ray meeting such a pair meets both faces at one distance, and which of them Embree reports
depends on the machine (its BVH is built for the CPU's instruction set): a render's colour
there, and any answer taken from the first face hit, would differ between machines.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: Faces closer than this to each other's plane count as coplanar (Embree works in float32;
#: the scenes keep deliberate offsets of a millimetre or more).
PLANE_TOLERANCE_M = 1e-4
#: Overlaps smaller than this are rounding along a shared edge, not a shared interior.
AREA_TOLERANCE_M2 = 1e-6


@dataclass(frozen=True)
class CoincidentPair:
    """Two overlapping coplanar faces: piece and triangle index within it of each, whether
    they face the same way, and the overlap's area."""

    first: tuple[int, int]
    second: tuple[int, int]
    same_facing: bool
    area_m2: float


def coincident_faces(pieces: Sequence[np.ndarray]) -> list[CoincidentPair]:
    """Every pair of coplanar triangles of different pieces (each an (F, 3, 3) array) whose
    interiors overlap."""
    triangles = np.concatenate(pieces)
    piece = np.concatenate([np.full(len(p), k) for k, p in enumerate(pieces)])
    local = np.concatenate([np.arange(len(p)) for p in pieces])
    cross = np.cross(triangles[:, 1] - triangles[:, 0], triangles[:, 2] - triangles[:, 0])
    area = np.linalg.norm(cross, axis=1)
    usable = np.nonzero(area > 1e-9)[0]
    normal = cross[usable] / area[usable, None]
    # One sign per plane, so that faces looking opposite ways fall in one group.
    dominant = np.argmax(np.abs(normal), axis=1)
    normal *= np.sign(normal[np.arange(len(normal)), dominant])[:, None]
    offset = np.einsum("ij,ij->i", normal, triangles[usable, 0])
    found: list[CoincidentPair] = []
    groups: dict[tuple[int, ...], list[int]] = {}
    for row, key in enumerate(map(tuple, np.round(normal * 1e6).astype(np.int64))):
        groups.setdefault(key, []).append(row)
    for rows in groups.values():
        members = np.array(rows)[np.argsort(offset[rows], kind="stable")]
        gaps = np.nonzero(np.diff(offset[members]) > PLANE_TOLERANCE_M)[0] + 1
        for plane in np.split(members, gaps):
            if len(np.unique(piece[usable[plane]])) > 1:
                found += _overlaps(triangles, piece, local, usable[plane], normal[plane[0]])
    return found


def _overlaps(
    triangles: np.ndarray,
    piece: np.ndarray,
    local: np.ndarray,
    faces: np.ndarray,
    normal: np.ndarray,
) -> list[CoincidentPair]:
    """Overlapping pairs of different pieces among ``faces``, all in one plane."""
    axes = [axis for axis in range(3) if axis != int(np.argmax(np.abs(normal)))]
    flat = triangles[faces][:, :, axes]
    low, high = flat.min(axis=1), flat.max(axis=1)
    order = np.argsort(low[:, 0], kind="stable")
    # Sweep along the first axis: each face against the later ones starting before it ends.
    stop = np.searchsorted(low[order, 0], high[order, 0], side="left")
    counts = np.maximum(stop - np.arange(len(order)) - 1, 0)
    first = np.repeat(np.arange(len(order)), counts)
    second = first + 1 + np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    i, j = order[first], order[second]
    keep = (
        (piece[faces[i]] != piece[faces[j]]) & (low[j, 1] < high[i, 1]) & (low[i, 1] < high[j, 1])
    )
    pairs = []
    for a, b in zip(i[keep], j[keep], strict=True):
        overlap = _intersection_area(flat[a], flat[b])
        if overlap > AREA_TOLERANCE_M2:
            ta, tb = triangles[faces[a]], triangles[faces[b]]
            facing = np.dot(
                np.cross(ta[1] - ta[0], ta[2] - ta[0]), np.cross(tb[1] - tb[0], tb[2] - tb[0])
            )
            pairs.append(
                CoincidentPair(
                    (int(piece[faces[a]]), int(local[faces[a]])),
                    (int(piece[faces[b]]), int(local[faces[b]])),
                    bool(facing > 0.0),
                    overlap,
                )
            )
    return pairs


def _intersection_area(p: np.ndarray, q: np.ndarray) -> float:
    """Area shared by two triangles in a plane (clipping one by the other's edges)."""
    polygon = [tuple(v) for v in _counter_clockwise(p)]
    clip = _counter_clockwise(q)
    for k in range(3):
        start, end = clip[k], clip[(k + 1) % 3]
        if not polygon:
            return 0.0
        kept: list[tuple[float, float]] = []
        for index, current in enumerate(polygon):
            previous = polygon[index - 1]
            now, before = _side(start, end, current), _side(start, end, previous)
            if (now >= 0.0) != (before >= 0.0):
                t = before / (before - now)
                kept.append(
                    (
                        previous[0] + t * (current[0] - previous[0]),
                        previous[1] + t * (current[1] - previous[1]),
                    )
                )
            if now >= 0.0:
                kept.append(current)
        polygon = kept
    return _area(np.array(polygon)) if len(polygon) >= 3 else 0.0


def _side(start: np.ndarray, end: np.ndarray, point: tuple[float, float]) -> float:
    """Positive left of the line ``start`` -> ``end``, negative right of it."""
    return float(
        (end[0] - start[0]) * (point[1] - start[1]) - (end[1] - start[1]) * (point[0] - start[0])
    )


def _area(polygon: np.ndarray) -> float:
    x, y = polygon[:, 0], polygon[:, 1]
    return float(abs(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1))) / 2.0)


def _counter_clockwise(triangle: np.ndarray) -> np.ndarray:
    (x0, y0), (x1, y1), (x2, y2) = triangle
    turning = (x1 - x0) * (y2 - y0) - (y1 - y0) * (x2 - x0)
    return triangle if turning > 0 else triangle[::-1]
