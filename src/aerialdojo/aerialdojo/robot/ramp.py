"""The speed-capped setpoint ramp the safety gate streams towards a goal, instead of a jump.

PX4's TrajectorySetpoint "needs to be kinematically consistent and feasible for smooth
flight" (px4_msgs ``msg/TrajectorySetpoint.msg``): a 5 m step sent as one position would
be flown at whatever speed the position controller reaches. The ramp moves the setpoint
along the straight line to the goal with a trapezoidal speed profile (accelerate at
``max_accel``, cruise at ``max_speed``, brake to rest at the goal) and turns the yaw at
``max_yaw_rate``, and carries the matching velocity as feed-forward.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from aerialdojo.geometry import wrap_angle
from aerialdojo.robot.frames import Vec3


@dataclass(frozen=True)
class Setpoint:
    """What the gate asks the vehicle to be doing now, in the site frame (ENU, REP-103).

    Attributes:
        position: metres.
        velocity: metres per second (feed-forward; zero when holding).
        yaw: radians, counter-clockwise from east.
        yaw_rate: radians per second.
    """

    position: Vec3
    velocity: Vec3 = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    yaw_rate: float = 0.0

    @property
    def speed(self) -> float:
        """The norm of ``velocity``."""
        return math.sqrt(sum(component * component for component in self.velocity))


def hold_at(position: Vec3, yaw: float) -> Setpoint:
    """A setpoint that holds ``position`` and ``yaw`` at rest."""
    return Setpoint(position=position, yaw=yaw)


@dataclass(frozen=True)
class Ramp:
    """A straight, speed-capped path from ``start`` to ``goal`` begun at time ``t0``.

    Attributes:
        start: where the ramp begins (the setpoint being held).
        goal: the goal's position and yaw.
        max_speed: cruise speed, m/s (> 0).
        max_accel: acceleration and braking, m/s^2 (> 0).
        max_yaw_rate: rad/s (> 0).
        t0: the (monotonic) time the ramp began, seconds.
    """

    start: Setpoint
    goal: Setpoint
    max_speed: float
    max_accel: float
    max_yaw_rate: float
    t0: float

    @property
    def distance(self) -> float:
        """Length of the straight path, metres."""
        return math.dist(self.start.position, self.goal.position)

    @property
    def _turn(self) -> float:
        return wrap_angle(self.goal.yaw - self.start.yaw)

    def _profile(self) -> tuple[float, float, float]:
        """(time accelerating, time cruising, peak speed) of the trapezoid."""
        distance = self.distance
        accel_time = self.max_speed / self.max_accel
        if self.max_accel * accel_time * accel_time >= distance:  # no room to cruise
            accel_time = math.sqrt(distance / self.max_accel)
            return accel_time, 0.0, self.max_accel * accel_time
        cruise = (distance - self.max_accel * accel_time * accel_time) / self.max_speed
        return accel_time, cruise, self.max_speed

    @property
    def duration(self) -> float:
        """Seconds from ``t0`` until both the position and the yaw reach the goal."""
        accel_time, cruise, _ = self._profile()
        return max(2.0 * accel_time + cruise, abs(self._turn) / self.max_yaw_rate)

    def sample(self, now: float) -> Setpoint:
        """The setpoint at time ``now`` (the goal itself, at rest, once the ramp is over)."""
        elapsed = max(0.0, now - self.t0)
        if elapsed >= self.duration:
            return hold_at(self.goal.position, self.goal.yaw)
        accel_time, cruise, peak = self._profile()
        if elapsed < accel_time:
            travelled = 0.5 * self.max_accel * elapsed * elapsed
            speed = self.max_accel * elapsed
        elif elapsed < accel_time + cruise:
            travelled = 0.5 * peak * accel_time + peak * (elapsed - accel_time)
            speed = peak
        else:
            braking = min(elapsed - accel_time - cruise, accel_time)
            travelled = (
                0.5 * peak * accel_time
                + peak * cruise
                + peak * braking
                - 0.5 * self.max_accel * braking * braking
            )
            speed = max(0.0, peak - self.max_accel * braking)
        distance = self.distance
        fraction = min(1.0, travelled / distance) if distance > 0.0 else 1.0
        direction = (
            tuple(
                (g - s) / distance
                for s, g in zip(self.start.position, self.goal.position, strict=True)
            )
            if distance > 0.0
            else (0.0, 0.0, 0.0)
        )
        position = tuple(
            s + fraction * (g - s)
            for s, g in zip(self.start.position, self.goal.position, strict=True)
        )
        turn = self._turn
        turned = math.copysign(min(abs(turn), self.max_yaw_rate * elapsed), turn)
        yaw_rate = 0.0 if abs(turned) >= abs(turn) else math.copysign(self.max_yaw_rate, turn)
        return Setpoint(
            position=(position[0], position[1], position[2]),
            velocity=(direction[0] * speed, direction[1] * speed, direction[2] * speed),
            yaw=wrap_angle(self.start.yaw + turned),
            yaw_rate=yaw_rate,
        )
