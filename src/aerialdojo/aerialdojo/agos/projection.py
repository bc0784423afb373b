"""Ego-to-allocentric projection (E2A, AGOS-Bench "Handoff"): a nadir-view grid cell to the
ground polygon it shows, from the camera intrinsics and the UAV's height above ground."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aerialdojo.agos.grid import CELL_COLUMNS, CELL_ROWS, parse_cell
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose


@dataclass(frozen=True)
class GroundCell:
    """A grid cell on the ground.

    Attributes:
        cell: its label, e.g. ``"C3"``.
        polygon: corners (x, y) in the map frame, counter-clockwise seen from above.
        center: the cell centre on the ground (x, y, z).
    """

    cell: str
    polygon: tuple[tuple[float, float], ...]
    center: tuple[float, float, float]


def pixel_to_ground(
    u: float, v: float, pose: Pose, intrinsics: np.ndarray, ground_z: float
) -> tuple[float, float]:
    """Ground point seen at pixel (u, v) by a nadir camera at ``pose``.

    The nadir camera looks straight down with the image top towards the body's forward
    axis and the image left towards its left (the bridge's ``down`` view).

    Raises:
        InvalidActionError: the camera is not above the ground.
    """
    height = pose.z - ground_z
    if height <= 0.0:
        raise InvalidActionError(f"camera at z={pose.z:g} is not above the ground z={ground_z:g}")
    fx, fy = intrinsics[0, 0], intrinsics[1, 1]
    cx, cy = intrinsics[0, 2], intrinsics[1, 2]
    forward = (cy - v) / fy * height
    left = (cx - u) / fx * height
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return (pose.x + c * forward - s * left, pose.y + s * forward + c * left)


def project_cell(
    cell: str, pose: Pose, intrinsics: np.ndarray, *, width: int, height: int, ground_z: float
) -> GroundCell:
    """Project grid cell ``cell`` of a ``width`` x ``height`` nadir image onto the ground.

    Args:
        cell: ``A1`` .. ``E5``.
        pose: the UAV (camera) pose, map frame.
        intrinsics: 3x3 K of the nadir camera.
        width: image width in pixels.
        height: image height in pixels.
        ground_z: ground height under the UAV.

    Raises:
        InvalidActionError: a bad cell label or a camera not above the ground.
    """
    row, column = parse_cell(cell)
    u0, u1 = column * width / CELL_COLUMNS, (column + 1) * width / CELL_COLUMNS
    v0, v1 = row * height / len(CELL_ROWS), (row + 1) * height / len(CELL_ROWS)
    # Image corners in the order top-left, bottom-left, bottom-right, top-right: with the
    # image top forward and left to the left, that order runs counter-clockwise on the map.
    corners = tuple(
        pixel_to_ground(u, v, pose, intrinsics, ground_z)
        for u, v in ((u0, v0), (u0, v1), (u1, v1), (u1, v0))
    )
    centre = pixel_to_ground((u0 + u1) / 2.0, (v0 + v1) / 2.0, pose, intrinsics, ground_z)
    return GroundCell(cell.strip().upper(), corners, (centre[0], centre[1], ground_z))
