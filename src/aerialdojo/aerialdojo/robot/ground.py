"""A ground robot's velocity command from the gate's setpoint and its odometry: the loop the
ground adapter closes (a unicycle: forward speed and turn rate, REP-103 FLU)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from aerialdojo.geometry import wrap_angle
from aerialdojo.robot.ramp import Setpoint
from aerialdojo.robot.safety import OdometrySample


@dataclass(frozen=True, kw_only=True)
class GroundGains:
    """How hard the loop pulls.

    Attributes:
        max_speed: forward speed cap, m/s.
        max_turn_rate: turn-rate cap, rad/s.
        distance_gain: 1/s from the distance ahead to forward speed.
        heading_gain: 1/s from the heading error to turn rate.
        position_tolerance: closer than this the robot only turns to the setpoint's yaw, m.
    """

    max_speed: float
    max_turn_rate: float
    distance_gain: float = 1.0
    heading_gain: float = 1.5
    position_tolerance: float = 0.05


def velocity_command(
    odometry: OdometrySample, setpoint: Setpoint, gains: GroundGains
) -> tuple[float, float]:
    """(forward speed m/s, turn rate rad/s) that drive ``odometry``'s pose to ``setpoint``.

    Far from the setpoint position the robot heads for it (backing up when it lies behind),
    with the setpoint's speed as feed-forward; near it the robot turns to the setpoint's
    yaw and stops.
    """
    x, y, _ = odometry.position
    dx, dy = setpoint.position[0] - x, setpoint.position[1] - y
    distance = math.hypot(dx, dy)
    if distance <= gains.position_tolerance:
        turn = gains.heading_gain * wrap_angle(setpoint.yaw - odometry.yaw)
        return 0.0, _clamp(turn, gains.max_turn_rate)
    ahead = dx * math.cos(odometry.yaw) + dy * math.sin(odometry.yaw)
    bearing = wrap_angle(math.atan2(dy, dx) - odometry.yaw)
    if abs(bearing) > math.pi / 2.0:  # behind: back up, keeping the nose where it is
        bearing = wrap_angle(bearing + math.pi)
    feed_forward = math.hypot(setpoint.velocity[0], setpoint.velocity[1])
    speed = math.copysign(feed_forward, ahead) + gains.distance_gain * ahead
    # Slow down while the nose is far off the line, so the robot turns before it drives.
    speed *= max(0.0, math.cos(bearing))
    return _clamp(speed, gains.max_speed), _clamp(gains.heading_gain * bearing, gains.max_turn_rate)


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))
