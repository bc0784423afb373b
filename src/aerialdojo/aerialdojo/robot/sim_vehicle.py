"""The simulated robot's body: first-order dynamics, command latency, odometry noise and the
faults a test injects (``sim_robot``; docs/robots.md, "Simulated robot"). ROS-free.

A drone's body tracks a position setpoint: each axis approaches it with time constant
``time_constant`` and the speed is capped at the vehicle's own limit; yaw approaches its
setpoint the same way. A ground robot integrates forward speed and turn rate (a unicycle).
Commands take effect ``latency`` seconds after they arrive.
"""

from __future__ import annotations

import collections
import enum
import math
import random
from dataclasses import dataclass, field

from aerialdojo.geometry import wrap_angle
from aerialdojo.robot.frames import Vec3


class SimFault(enum.Enum):
    """What a test can break in the simulated robot."""

    #: The link drops the companion's keep-alive and setpoints (the autopilot hears none).
    KEEPALIVE_LOSS = "keepalive_loss"
    #: The pilot flips the mode switch to Position mode.
    RC_TAKEOVER = "rc_takeover"
    #: The pilot moves the sticks (takes over in offboard only with COM_RC_OVERRIDE bit 1).
    RC_STICKS = "rc_sticks"
    #: A gust carries the vehicle east at 3 m/s, whatever it is told (out of the fence).
    FENCE_BREACH = "fence_breach"
    #: The battery drops to 10 %.
    LOW_BATTERY = "low_battery"
    #: The odometry stops.
    ODOMETRY_DROPOUT = "odometry_dropout"
    #: The estimator marks its position invalid (NaN in the odometry).
    ESTIMATOR_INVALID = "estimator_invalid"
    #: A motor stops answering: the vehicle no longer follows any command.
    MOTOR_FAILURE = "motor_failure"


#: The gust of ``FENCE_BREACH``, m/s east.
GUST_M_S = 3.0
#: The battery after ``LOW_BATTERY``.
LOW_BATTERY_FRACTION = 0.1


@dataclass(frozen=True, kw_only=True)
class BodyConfig:
    """The body's response.

    Attributes:
        time_constant: first-order time constant, s.
        max_speed: the vehicle's own speed limit, m/s.
        latency: delay from a command's arrival to its effect, s.
        odometry_noise: standard deviation of the position noise, m.
        battery_drain_per_s: battery fraction used per second.
        seed: seed of the noise.
    """

    time_constant: float = 0.3
    max_speed: float = 5.0
    latency: float = 0.02
    odometry_noise: float = 0.01
    battery_drain_per_s: float = 0.0
    seed: int = 0


@dataclass(frozen=True)
class _Command:
    """A command on its way through the latency: a position target or a velocity."""

    target: tuple[Vec3, float] | None = None
    velocity: tuple[float, float] | None = None


@dataclass
class SimBody:
    """One simulated vehicle body in the site frame (ENU)."""

    config: BodyConfig
    position: Vec3
    yaw: float
    battery: float = 1.0
    faults: set[SimFault] = field(default_factory=set)
    _target: tuple[Vec3, float] | None = None
    _velocity_command: tuple[float, float] | None = None
    _queue: collections.deque[tuple[float, _Command]] = field(default_factory=collections.deque)
    _time: float | None = None
    _land_speed: float | None = None
    _rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.config.seed)

    def command_position(self, now: float, position: Vec3, yaw: float) -> None:
        """A position setpoint arrived (it acts after the latency)."""
        self._queue.append((now + self.config.latency, _Command(target=(position, yaw))))

    def command_velocity(self, now: float, forward: float, turn: float) -> None:
        """A ground robot's velocity command arrived (it acts after the latency)."""
        self._queue.append((now + self.config.latency, _Command(velocity=(forward, turn))))

    def hold(self) -> None:
        """Hold where the body is now (the autopilot's own hold, or no command)."""
        self._queue.clear()
        self._target = (self.position, self.yaw)
        self._velocity_command = None
        self._land_speed = None

    def land(self, now: float, speed: float = 0.7) -> None:
        """Descend to the ground at ``speed`` (PX4 MPC_LAND_SPEED's default 0.7 m/s)."""
        self._queue.clear()
        x, y, _ = self.position
        self._target = ((x, y, 0.0), self.yaw)
        self._land_speed = speed

    def step(self, now: float) -> None:
        """Advance the body to ``now``."""
        if self._time is None:
            self._time = now
            return
        dt = max(0.0, now - self._time)
        self._time = now
        while self._queue and self._queue[0][0] <= now:
            _, command = self._queue.popleft()
            self._target, self._velocity_command = command.target, command.velocity
            self._land_speed = None
        self.battery = max(0.0, self.battery - self.config.battery_drain_per_s * dt)
        if SimFault.LOW_BATTERY in self.faults:
            self.battery = min(self.battery, LOW_BATTERY_FRACTION)
        if SimFault.FENCE_BREACH in self.faults:
            x, y, z = self.position
            self.position = (x + GUST_M_S * dt, y, z)
            return
        if SimFault.MOTOR_FAILURE in self.faults or dt == 0.0:
            return
        if self._velocity_command is not None:
            forward, turn = self._velocity_command
            x, y, z = self.position
            self.position = (
                x + forward * math.cos(self.yaw) * dt,
                y + forward * math.sin(self.yaw) * dt,
                z,
            )
            self.yaw = wrap_angle(self.yaw + turn * dt)
        elif self._target is not None:
            self._track(dt)

    def _track(self, dt: float) -> None:
        assert self._target is not None
        (tx, ty, tz), target_yaw = self._target
        x, y, z = self.position
        gain = 1.0 - math.exp(-dt / self.config.time_constant)
        dx, dy, dz = (tx - x) * gain, (ty - y) * gain, (tz - z) * gain
        limit = self.config.max_speed * dt
        if self._land_speed is not None:
            dz = max(dz, -self._land_speed * dt)
        step = math.sqrt(dx * dx + dy * dy + dz * dz)
        if step > limit:
            dx, dy, dz = (dx * limit / step, dy * limit / step, dz * limit / step)
        self.position = (x + dx, y + dy, z + dz)
        self.yaw = wrap_angle(self.yaw + wrap_angle(target_yaw - self.yaw) * gain)

    def odometry(self) -> tuple[Vec3, float, bool] | None:
        """The measured pose and whether the estimator vouches for it; None while the
        odometry is out."""
        if SimFault.ODOMETRY_DROPOUT in self.faults:
            return None
        noise = self.config.odometry_noise
        x, y, z = self.position
        measured = (
            x + self._rng.gauss(0.0, noise),
            y + self._rng.gauss(0.0, noise),
            z + self._rng.gauss(0.0, noise),
        )
        if SimFault.ESTIMATOR_INVALID in self.faults:
            return ((math.nan, math.nan, math.nan), self.yaw, False)
        return (measured, self.yaw, True)
