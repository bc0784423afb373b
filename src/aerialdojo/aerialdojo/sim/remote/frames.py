"""Conversions between aerialdojo's map frame and the simulators' frames.

aerialdojo: ENU-like, right-handed, z up, yaw counter-clockwise from +x (REP-103).
ProjectAirSim and AirSim: NED, right-handed, z down, yaw clockwise from +x (north).
CARLA (Unreal): left-handed, z up, yaw clockwise from +x, degrees. As in the CARLA ROS bridge,
a CARLA-Air episode's map frame is CARLA's world mirrored in y (map_y = -carla_y), so map
coordinates read like CARLA's with the handedness fixed.
CARLA-Air runs AirSim inside the CARLA world with its own origin: per map,
``airsim = (carla_x + dx, carla_y + dy, -carla_z + dz)``; the offset of the run's map is the
bridge parameter ``carla_air_map_offset`` (Town10HD by default, ``params.py``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose, wrap_angle

NedPose = tuple[float, float, float, float]
"""North, east, down in metres and yaw in radians, clockwise from north."""


def map_to_ned(pose: Pose) -> NedPose:
    """The NED pose of a map-frame pose (ProjectAirSim's world frame)."""
    return (pose.y, pose.x, -pose.z, wrap_angle(math.pi / 2.0 - pose.yaw))


def ned_to_map(north: float, east: float, down: float, yaw: float) -> Pose:
    """The map-frame pose of a NED pose."""
    return Pose(east, north, -down, wrap_angle(math.pi / 2.0 - yaw))


def yaw_quaternion_wxyz(yaw: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) of a rotation by ``yaw`` about the frame's z axis."""
    return (math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0))


def yaw_of_quaternion_wxyz(w: float, x: float, y: float, z: float) -> float:
    """Rotation about z (yaw) of a (w, x, y, z) quaternion, in radians."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


@dataclass(frozen=True)
class CarlaPose:
    """A CARLA transform without roll and pitch: metres, yaw in degrees."""

    x: float
    y: float
    z: float
    yaw_deg: float


def map_to_carla(pose: Pose) -> CarlaPose:
    """The CARLA transform of a map-frame pose."""
    return CarlaPose(pose.x, -pose.y, pose.z, -math.degrees(pose.yaw))


def carla_to_map(pose: CarlaPose) -> Pose:
    """The map-frame pose of a CARLA transform."""
    return Pose(pose.x, -pose.y, pose.z, wrap_angle(-math.radians(pose.yaw_deg)))


@dataclass(frozen=True)
class MapOffset:
    """Where AirSim's origin lies in one CARLA-Air map: ``airsim = carla (z flipped) + offset``.

    Attributes:
        dx: added to CARLA x.
        dy: added to CARLA y.
        dz: added to the negated CARLA z.
    """

    dx: float
    dy: float
    dz: float

    @classmethod
    def from_list(cls, values: list[float], where: str) -> MapOffset:
        """The offset of a ``[dx, dy, dz]`` parameter.

        Raises:
            ConfigError: not three numbers; ``where`` names the parameter.
        """
        if len(values) != 3 or not all(math.isfinite(v) for v in values):
            raise ConfigError(f"{where}: expected three finite numbers [dx, dy, dz], got {values}")
        return cls(float(values[0]), float(values[1]), float(values[2]))

    def carla_to_airsim(self, pose: CarlaPose) -> NedPose:
        """The AirSim NED pose of a CARLA transform."""
        return (
            pose.x + self.dx,
            pose.y + self.dy,
            -pose.z + self.dz,
            wrap_angle(math.radians(pose.yaw_deg)),
        )

    def airsim_to_carla(self, north: float, east: float, down: float, yaw: float) -> CarlaPose:
        """The CARLA transform of an AirSim NED pose."""
        return CarlaPose(north - self.dx, east - self.dy, self.dz - down, math.degrees(yaw))

    def map_to_airsim(self, pose: Pose) -> NedPose:
        """The AirSim NED pose of a map-frame pose."""
        return self.carla_to_airsim(map_to_carla(pose))

    def airsim_to_map(self, north: float, east: float, down: float, yaw: float) -> Pose:
        """The map-frame pose of an AirSim NED pose."""
        return carla_to_map(self.airsim_to_carla(north, east, down, yaw))
