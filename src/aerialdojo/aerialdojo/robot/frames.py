"""Frame conversions between ROS (ENU world, FLU body; REP-103) and PX4 (NED world, FRD body).

PX4 converts nothing implicitly: every position, velocity and heading sent over uXRCE-DDS
is NED and every one it publishes is NED (PX4-Autopilot ``docs/en/ros2/user_guide.md``,
"ROS 2 & PX4 Frame Conventions"). A yaw in ENU is measured counter-clockwise from east; a
PX4 heading is measured clockwise from north.
"""

from __future__ import annotations

import math

from aerialdojo.geometry import wrap_angle

Vec3 = tuple[float, float, float]


def enu_to_ned(vector: Vec3) -> Vec3:
    """A world-frame position or velocity from ENU (east, north, up) to NED."""
    east, north, up = vector
    return (north, east, -up)


def ned_to_enu(vector: Vec3) -> Vec3:
    """A world-frame position or velocity from NED (north, east, down) to ENU."""
    north, east, down = vector
    return (east, north, -down)


def flu_to_frd(vector: Vec3) -> Vec3:
    """A body-frame vector from FLU (forward, left, up) to FRD (forward, right, down)."""
    forward, left, up = vector
    return (forward, -left, -up)


def frd_to_flu(vector: Vec3) -> Vec3:
    """A body-frame vector from FRD to FLU (the same swap: it is its own inverse)."""
    return flu_to_frd(vector)


def enu_yaw_to_ned(yaw_enu: float) -> float:
    """An ENU yaw (counter-clockwise from east) as a NED heading (clockwise from north)."""
    return wrap_angle(math.pi / 2.0 - yaw_enu)


def ned_yaw_to_enu(yaw_ned: float) -> float:
    """A NED heading (clockwise from north) as an ENU yaw (counter-clockwise from east)."""
    return wrap_angle(math.pi / 2.0 - yaw_ned)


def yaw_quaternion_wxyz(yaw: float) -> tuple[float, float, float, float]:
    """The (w, x, y, z) quaternion of a level attitude with heading ``yaw`` (in its frame)."""
    return (math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0))


def yaw_of_quaternion_wxyz(w: float, x: float, y: float, z: float) -> float:
    """The heading (rotation about the frame's third axis) of a (w, x, y, z) quaternion."""
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
