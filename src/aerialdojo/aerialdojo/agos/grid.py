"""The UAV waypoint grid and the nadir view's 5x5 cell grid (AGOS-Bench, appendices A.1, A.4.1)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from aerialdojo.errors import InvalidActionError

UAV_SPACING_M = 40.0
UAV_ALTITUDE_M = 80.0
#: The map bounding box is expanded by this much before the grid is laid (A.1.1).
GRID_EXPANSION_M = 50.0
#: Grid nodes farther than this from every UGV decision anchor are dropped (eq. 7).
ROAD_PROXIMITY_M = 40.0
#: Rows A..E top to bottom, columns 1..5 left to right.
CELL_ROWS = "ABCDE"
CELL_COLUMNS = 5


@dataclass(frozen=True)
class Region:
    """An axis-aligned episode region R_e in the map frame."""

    x_min: float
    y_min: float
    x_max: float
    y_max: float

    def contains(self, x: float, y: float) -> bool:
        return self.x_min <= x <= self.x_max and self.y_min <= y <= self.y_max

    @property
    def size(self) -> tuple[float, float]:
        return (self.x_max - self.x_min, self.y_max - self.y_min)


@dataclass(frozen=True)
class UavWaypoint:
    """One UAV grid node: id ``U<i>_<j>`` from its grid indices, position at flight altitude."""

    waypoint_id: str
    i: int
    j: int
    x: float
    y: float
    z: float


@dataclass(frozen=True)
class UavGrid:
    """The map-level UAV grid V^A_map (eqs. 6-7).

    Attributes:
        waypoints: nodes kept by the road-proximity filter, by id.
        spacing_m: s_A.
        altitude_m: h_A.
    """

    waypoints: dict[str, UavWaypoint]
    spacing_m: float = UAV_SPACING_M
    altitude_m: float = UAV_ALTITUDE_M

    def active(self, region: Region) -> list[UavWaypoint]:
        """V^A_e: the nodes inside ``region`` (eq. 8), in id order."""
        return [w for _, w in sorted(self.waypoints.items()) if region.contains(w.x, w.y)]

    def waypoint(self, waypoint_id: str) -> UavWaypoint:
        """The node called ``waypoint_id``.

        Raises:
            InvalidActionError: no such node.
        """
        try:
            return self.waypoints[waypoint_id]
        except KeyError:
            raise InvalidActionError(f"no UAV waypoint {waypoint_id!r}") from None

    def nearest_active(self, x: float, y: float, region: Region) -> UavWaypoint:
        """c_t: the active node nearest to (x, y).

        Raises:
            InvalidActionError: the region holds no node.
        """
        active = self.active(region)
        if not active:
            raise InvalidActionError(f"region {region} holds no UAV waypoint")
        return min(active, key=lambda w: (math.hypot(w.x - x, w.y - y), w.waypoint_id))

    def options(self, x: float, y: float, region: Region) -> list[UavWaypoint]:
        """O^A_t: active nodes of the 3x3 neighbourhood of c_t, c_t excluded (eq. 10)."""
        centre = self.nearest_active(x, y, region)
        reach = 1.5 * self.spacing_m
        return [
            w
            for w in self.active(region)
            if w is not centre and abs(w.x - centre.x) <= reach and abs(w.y - centre.y) <= reach
        ]


def build_uav_grid(
    bounds_min: tuple[float, float],
    bounds_max: tuple[float, float],
    anchors_xy: np.ndarray,
    *,
    spacing_m: float = UAV_SPACING_M,
    altitude_m: float = UAV_ALTITUDE_M,
    ground_z: float = 0.0,
) -> UavGrid:
    """Lay the grid over the expanded bounds and keep nodes near the road (eqs. 6-7).

    Args:
        bounds_min: lower corner of the map's spawn-point box.
        bounds_max: upper corner.
        anchors_xy: (A, 2) UGV decision anchors V^G_D.
        spacing_m: s_A.
        altitude_m: h_A above ``ground_z``.
        ground_z: ground height of the town.
    """
    x_min, y_min = bounds_min[0] - GRID_EXPANSION_M, bounds_min[1] - GRID_EXPANSION_M
    x_max, y_max = bounds_max[0] + GRID_EXPANSION_M, bounds_max[1] + GRID_EXPANSION_M
    waypoints = {}
    for i in range(int((x_max - x_min) // spacing_m) + 1):
        for j in range(int((y_max - y_min) // spacing_m) + 1):
            x, y = x_min + i * spacing_m, y_min + j * spacing_m
            if np.min(np.hypot(anchors_xy[:, 0] - x, anchors_xy[:, 1] - y)) <= ROAD_PROXIMITY_M:
                waypoint_id = f"U{i}_{j}"
                waypoints[waypoint_id] = UavWaypoint(waypoint_id, i, j, x, y, ground_z + altitude_m)
    return UavGrid(waypoints, spacing_m, altitude_m)


def cell_label(row: int, column: int) -> str:
    """``A1`` .. ``E5`` from 0-based row (top to bottom) and column (left to right)."""
    return f"{CELL_ROWS[row]}{column + 1}"


def parse_cell(label: str) -> tuple[int, int]:
    """0-based (row, column) of a cell label.

    Raises:
        InvalidActionError: not one of A1 .. E5.
    """
    text = label.strip().upper()
    if len(text) != 2 or text[0] not in CELL_ROWS or not text[1].isdigit():
        raise InvalidActionError(f"grid cell {label!r} is not one of A1 .. E5")
    column = int(text[1]) - 1
    if not 0 <= column < CELL_COLUMNS:
        raise InvalidActionError(f"grid cell {label!r} is not one of A1 .. E5")
    return CELL_ROWS.index(text[0]), column


def cell_of_pixel(u: float, v: float, width: int, height: int) -> str:
    """The cell that holds pixel column ``u``, row ``v`` of a ``width`` x ``height`` image."""
    column = min(CELL_COLUMNS - 1, max(0, int(u * CELL_COLUMNS / width)))
    row = min(len(CELL_ROWS) - 1, max(0, int(v * len(CELL_ROWS) / height)))
    return cell_label(row, column)


def overlay_grid(rgb: np.ndarray) -> np.ndarray:
    """The nadir image with the 5x5 grid drawn and every cell labelled (the VLM's view)."""
    picture = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8))
    draw = ImageDraw.Draw(picture)
    height, width = rgb.shape[:2]
    for k in range(1, CELL_COLUMNS):
        x = round(k * width / CELL_COLUMNS)
        draw.line([(x, 0), (x, height - 1)], fill=(255, 255, 255), width=1)
    for k in range(1, len(CELL_ROWS)):
        y = round(k * height / len(CELL_ROWS))
        draw.line([(0, y), (width - 1, y)], fill=(255, 255, 255), width=1)
    for row in range(len(CELL_ROWS)):
        for column in range(CELL_COLUMNS):
            corner = (column * width / CELL_COLUMNS + 2, row * height / len(CELL_ROWS) + 1)
            draw.text(corner, cell_label(row, column), fill=(255, 255, 0))
    return np.asarray(picture)
