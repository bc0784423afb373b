"""A camera's planar depth as 3D points in its optical frame (``sensor_msgs/PointCloud2``
content, for RViz and Foxglove 3D panels); ROS-free."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ``sensor_msgs/PointField.FLOAT32``.
FLOAT32 = 7
#: The x, y, z float32 layout of every cloud written here: (name, byte offset).
XYZ_FIELDS = (("x", 0), ("y", 4), ("z", 8))
POINT_STEP = 12


@dataclass(frozen=True)
class CloudFields:
    """The ``sensor_msgs/PointCloud2`` fields of an unordered x, y, z float32 cloud."""

    width: int
    point_step: int
    row_step: int
    data: bytes


def depth_points(depth: np.ndarray, intrinsics: np.ndarray) -> np.ndarray:
    """The (N, 3) float32 points of the pixels with a return (finite depth > 0), in the
    optical frame (x right, y down, z forward), row by row.

    Args:
        depth: HxW planar depth in metres (+inf where nothing was hit).
        intrinsics: the 3x3 pinhole matrix K of the camera.
    """
    valid = np.isfinite(depth) & (depth > 0.0)
    rows, columns = np.nonzero(valid)
    z = depth[valid].astype(np.float64)
    fx, fy, cx, cy = intrinsics[0, 0], intrinsics[1, 1], intrinsics[0, 2], intrinsics[1, 2]
    # Pixel centres: pixel (u, v) covers [u, u + 1), as the renderer casts its rays.
    x = (columns + 0.5 - cx) / fx * z
    y = (rows + 0.5 - cy) / fy * z
    return np.stack([x, y, z], axis=1).astype(np.float32)


def cloud_fields(points: np.ndarray) -> CloudFields:
    """The PointCloud2 layout of (N, 3) float32 points: one row, little-endian, dense."""
    packed = np.ascontiguousarray(points, dtype="<f4")
    return CloudFields(
        width=len(packed),
        point_step=POINT_STEP,
        row_step=POINT_STEP * len(packed),
        data=packed.tobytes(),
    )
