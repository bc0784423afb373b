"""The top-down map M of an episode region (AGOS-Bench, "Task Description": at the start both
agents "receive their own location P_0, the top-down map M of region S and multi-view
images I_target"), drawn from the public town map: roads on plain ground, no vehicles, so
the map tells the layout and never where the target is. The model agents are shown it with
markers of what they know (``marked_map``): themselves, their teammate where the protocol
shares its position, the candidates or the search anchor (AGOS-Bench, A.4: the visual inputs
include "a top-down map"; A.4.2: the Baseline UAV's prompt gives the "top-down map marker
convention")."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from aerialdojo.agos.grid import Region
from aerialdojo.agos.town import TownMap

#: Pixels along each side of the map image.
MAP_PIXELS = 256
GROUND_RGB = (232, 229, 218)
ROAD_RGB = (96, 96, 100)
#: One-way streets carry a lighter centre line, so the map shows which roads are one-way.
ONE_WAY_LINE_RGB = (200, 200, 120)
_ONE_WAY_LINE_M = 1.0


def region_map(town: TownMap, region: Region, pixels: int = MAP_PIXELS) -> np.ndarray:
    """The map image of ``region``: ``pixels`` x ``pixels`` RGB, north (+y) up, east (+x)
    right; pixel (row, column) shows the point ``x_min + (column + 0.5) * w / pixels``,
    ``y_max - (row + 0.5) * h / pixels`` of a region ``w`` by ``h`` metres."""
    columns = region.x_min + (np.arange(pixels) + 0.5) * (region.x_max - region.x_min) / pixels
    rows = region.y_max - (np.arange(pixels) + 0.5) * (region.y_max - region.y_min) / pixels
    x, y = np.meshgrid(columns, rows)
    image = np.empty((pixels, pixels, 3), dtype=np.uint8)
    image[:] = GROUND_RGB
    for street in town.streets:
        distance = _segment_distance(x, y, street.start, street.end)
        image[distance <= town.road_width_m / 2.0] = ROAD_RGB
        if street.one_way:
            image[distance <= _ONE_WAY_LINE_M / 2.0] = ONE_WAY_LINE_RGB
    return image


def _segment_distance(
    x: np.ndarray, y: np.ndarray, start: tuple[float, float], end: tuple[float, float]
) -> np.ndarray:
    """Distance of every (x, y) to the segment from ``start`` to ``end``."""
    (ax, ay), (bx, by) = start, end
    dx, dy = bx - ax, by - ay
    along = np.clip(((x - ax) * dx + (y - ay) * dy) / max(dx * dx + dy * dy, 1e-12), 0.0, 1.0)
    return np.asarray(np.hypot(x - (ax + along * dx), y - (ay + along * dy)))


#: Marker styles of ``marked_map``: an agent (filled disc), a place under verification
#: (ring: the active candidate, or the Baseline's search anchor) and a rejected candidate
#: (cross).
MARKER_DISC = "disc"
MARKER_RING = "ring"
MARKER_CROSS = "cross"
_MARKER_RADIUS_PX = 5
_RING_RADIUS_PX = 9
_LINE_PX = 1.5
_OUTLINE_RGB = (20, 20, 20)


@dataclass(frozen=True)
class MapMarker:
    """One mark on the map: a place, a style (``MARKER_*``) and a colour."""

    x: float
    y: float
    style: str
    rgb: tuple[int, int, int]


def marked_map(image: np.ndarray, region: Region, markers: Sequence[MapMarker]) -> np.ndarray:
    """A copy of ``region``'s map ``image`` (``region_map``) with ``markers`` drawn on it, in
    order; markers outside the region are left out.

    Raises:
        ValueError: an unknown marker style.
    """
    marked: np.ndarray = image.copy()
    rows, columns = marked.shape[:2]
    row, column = np.mgrid[0:rows, 0:columns] + 0.5
    for marker in markers:
        if not region.contains(marker.x, marker.y):
            continue
        u = (marker.x - region.x_min) / (region.x_max - region.x_min) * columns
        v = (region.y_max - marker.y) / (region.y_max - region.y_min) * rows
        du, dv = column - u, row - v
        distance = np.hypot(du, dv)
        if marker.style == MARKER_DISC:
            marked[distance <= _MARKER_RADIUS_PX + _LINE_PX] = _OUTLINE_RGB
            marked[distance <= _MARKER_RADIUS_PX] = marker.rgb
        elif marker.style == MARKER_RING:
            marked[np.abs(distance - _RING_RADIUS_PX) <= _LINE_PX] = marker.rgb
        elif marker.style == MARKER_CROSS:
            near = np.maximum(np.abs(du), np.abs(dv)) <= _MARKER_RADIUS_PX
            diagonal = np.minimum(np.abs(du - dv), np.abs(du + dv)) <= _LINE_PX
            marked[near & diagonal] = marker.rgb
        else:
            raise ValueError(f"marker style {marker.style!r} is not one of disc, ring, cross")
    return marked
