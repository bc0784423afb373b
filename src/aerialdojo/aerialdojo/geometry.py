"""Planar-yaw poses in the map frame (ENU, REP-103): x east, y north, z up, yaw CCW from +x."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Compass directions in the order of increasing bearing from north, clockwise.
COMPASS_DIRECTIONS = ("N", "NE", "E", "SE", "S", "SW", "W", "NW")


def wrap_angle(angle: float) -> float:
    """Wrap an angle in radians to [-pi, pi)."""
    return (angle + math.pi) % (2.0 * math.pi) - math.pi


@dataclass(frozen=True, slots=True)
class Pose:
    """A 4-DoF pose: position in metres and yaw in radians (CCW from +x, east)."""

    x: float
    y: float
    z: float
    yaw: float

    @property
    def position(self) -> np.ndarray:
        return np.array((self.x, self.y, self.z), dtype=np.float64)

    @classmethod
    def from_position(cls, position: np.ndarray | tuple[float, float, float], yaw: float) -> Pose:
        return cls(float(position[0]), float(position[1]), float(position[2]), float(yaw))

    def quaternion_xyzw(self) -> tuple[float, float, float, float]:
        """Orientation as a unit quaternion (x, y, z, w) of a pure yaw rotation."""
        return (0.0, 0.0, math.sin(self.yaw / 2.0), math.cos(self.yaw / 2.0))

    def body_to_world(self, forward: float, left: float, up: float) -> np.ndarray:
        """World-frame displacement of a body-frame (x forward, y left, z up) vector."""
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        return np.array((c * forward - s * left, s * forward + c * left, up))

    def relative_to(self, origin: Pose) -> Pose:
        """This pose expressed in the frame of ``origin`` (e.g. odometry from the start)."""
        dx, dy = self.x - origin.x, self.y - origin.y
        c, s = math.cos(origin.yaw), math.sin(origin.yaw)
        return Pose(
            c * dx + s * dy, -s * dx + c * dy, self.z - origin.z, wrap_angle(self.yaw - origin.yaw)
        )

    def distance_to(self, point: np.ndarray | tuple[float, float, float]) -> float:
        """Euclidean 3D distance from this pose's position to ``point``."""
        return float(np.linalg.norm(self.position - np.asarray(point, dtype=np.float64)))


def yaw_matrix(yaw: float) -> np.ndarray:
    """Rotation by ``yaw`` radians about +z."""
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array(((c, -s, 0.0), (s, c, 0.0), (0.0, 0.0, 1.0)))


def yaw_from_quaternion(x: float, y: float, z: float, w: float) -> float:
    """Yaw (rotation about +z) of a quaternion, in radians."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def compass_direction(origin: np.ndarray, target: np.ndarray) -> str:
    """One of the eight compass directions of ``target`` as seen from ``origin`` (ENU)."""
    bearing = math.degrees(math.atan2(target[0] - origin[0], target[1] - origin[1])) % 360.0
    return COMPASS_DIRECTIONS[int(((bearing + 22.5) % 360.0) // 45.0)]
