"""What a remote backend can tell about the server it drives, for ``aerialdojo doctor``."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ServerCamera:
    """One camera as the server reports it (not as the bridge asked for it).

    Attributes:
        width: image width the server renders, pixels.
        height: image height, pixels.
        fov_deg: horizontal field of view the server renders, degrees; None where the server
            reports only what it was configured with (ProjectAirSim's camera_info).
        colour_encoding: encoding of the colour image on the wire (e.g. ``BGR``).
        depth_encoding: encoding of the depth image on the wire (e.g. ``32FC1``).
    """

    width: int
    height: int
    fov_deg: float | None
    colour_encoding: str
    depth_encoding: str


@dataclass(frozen=True, kw_only=True)
class CapturedPose:
    """Where a camera was when it captured a frame, as the server says, in the map frame.

    Attributes:
        x: metres.
        y: metres.
        z: metres.
        yaw_deg: heading of the optical axis, counter-clockwise from +x.
        pitch_deg: negative looking down.
    """

    x: float
    y: float
    z: float
    yaw_deg: float
    pitch_deg: float


def captured_pose_of_ned(
    position: tuple[float, float, float], rotation_wxyz: tuple[float, float, float, float]
) -> CapturedPose:
    """A camera's NED world pose (FRD camera body) in the map frame."""
    w, x, y, z = rotation_wxyz
    yaw_ned = math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    pitch = math.asin(max(-1.0, min(1.0, 2.0 * (w * y - z * x))))
    north, east, down = position
    return CapturedPose(
        x=east,
        y=north,
        z=-down,
        yaw_deg=math.degrees(math.pi / 2.0 - yaw_ned),
        pitch_deg=math.degrees(pitch),
    )


@dataclass(frozen=True, kw_only=True)
class WorldObject:
    """An object of a simulator server's world, as its API lists it (map frame).

    Attributes:
        name: the server's name of it (an Unreal actor, a CARLA environment object).
        kind: what the server says it is (a CARLA semantic label), ``""`` if nothing.
        x: centre, metres.
        y: centre, metres.
        z: centre, metres.
        size: extent along x, y, z in metres, where the server tells it.
    """

    name: str
    kind: str
    x: float
    y: float
    z: float
    size: tuple[float, float, float] | None = None
