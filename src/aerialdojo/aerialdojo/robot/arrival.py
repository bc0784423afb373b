"""When a robot has done an action: arrival within tolerances, inside a time allowance.

Neither MAVROS nor PX4's offboard mode says "arrived": the sender judges it. The defaults are
those of PX4's own goto example (Auterion/px4-ros2-interface-lib,
``examples/cpp/modes/goto/include/mode.hpp``): a position is reached at an error below
0.5 m with a speed below 0.3 m/s, a heading at an error below 7 degrees.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.robot.link import VehicleState

DEFAULT_POSITION_M = 0.5
DEFAULT_SPEED_M_S = 0.3
DEFAULT_YAW_DEG = 7.0


@dataclass(frozen=True, kw_only=True)
class ArrivalTolerance:
    """How close to a target counts as there.

    Attributes:
        position_m: position error (3D; horizontal for a ground robot).
        speed_m_s: speed, so that a vehicle passing through the target has not arrived.
        yaw_rad: heading error.
        planar: a ground robot: only the horizontal position is judged (its height is the
            ground's, not the episode's camera height).
        pass_m: how close an intermediate waypoint of a path must come before the next is
            sent (no speed or heading condition: the vehicle drives through it).
    """

    position_m: float = DEFAULT_POSITION_M
    speed_m_s: float = DEFAULT_SPEED_M_S
    yaw_rad: float = math.radians(DEFAULT_YAW_DEG)
    planar: bool = False
    pass_m: float = 1.0

    def position_error(self, pose: Pose, target: Pose) -> float:
        """Metres between ``pose`` and ``target`` as this tolerance measures them."""
        if self.planar:
            return math.hypot(pose.x - target.x, pose.y - target.y)
        return pose.distance_to(target.position)

    def misses(self, vehicle: VehicleState, target: Pose) -> list[str]:
        """What keeps ``vehicle`` from having arrived at ``target`` (empty: arrived), each
        naming the value and the tolerance."""
        missed = []
        error = self.position_error(vehicle.pose, target)
        if error >= self.position_m:
            missed.append(f"{error:.2f} m from the target (tolerance {self.position_m:g} m)")
        if vehicle.speed_m_s >= self.speed_m_s:
            missed.append(
                f"moving at {vehicle.speed_m_s:.2f} m/s (tolerance {self.speed_m_s:g} m/s)"
            )
        yaw_error = abs(wrap_angle(vehicle.pose.yaw - target.yaw))
        if yaw_error >= self.yaw_rad:
            missed.append(
                f"heading {math.degrees(yaw_error):.1f} deg off "
                f"(tolerance {math.degrees(self.yaw_rad):g} deg)"
            )
        return missed

    def passed(self, vehicle: VehicleState, waypoint: Pose) -> bool:
        """Whether ``vehicle`` is close enough to an intermediate ``waypoint`` to go on."""
        return self.position_error(vehicle.pose, waypoint) < self.pass_m


@dataclass(frozen=True, kw_only=True)
class TimeAllowance:
    """How long an action may take: ``(distance / speed + turn / yaw_rate) * factor +
    settle_s``, the motion at its capped speeds with a margin, plus time to settle within
    the tolerances.

    Attributes:
        speed_m_s: the speed the backend asks for (at most the gate's cap).
        yaw_rate_rad_s: the heading rate the vehicle turns at.
        factor: margin on the motion's time for acceleration and tracking, >= 1.
        settle_s: time to come to rest within the tolerances.
    """

    speed_m_s: float
    yaw_rate_rad_s: float
    factor: float = 1.5
    settle_s: float = 3.0

    def seconds(self, distance_m: float, turn_rad: float) -> float:
        """The allowance of a motion of ``distance_m`` that turns ``turn_rad``."""
        motion_s = distance_m / self.speed_m_s + turn_rad / self.yaw_rate_rad_s
        return motion_s * self.factor + self.settle_s
