"""A vehicle behind a safety gate as plain Python, on a clock that moves only when the backend
waits: the robot backend's logic (arrival, allowance, faults, collisions, frames) tested
exactly and fast, without ROS.

It follows the contract of docs/robots.md ("Contract"), not the gate's code: goals are
refused unless the gate is engaged and not in fault; a fault holds and refuses; odometry and
frames arrive at the rates given. The real gate and simulated robot are exercised by the
end-to-end tests (tests/e2e/test_robot.py).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.robot.link import SafetyState, VehicleState
from aerialdojo.robot.safety import FaultClass, GateState


@dataclass
class ScriptedVehicle:
    """One agent's gate and vehicle.

    Attributes:
        pose: where the vehicle is.
        speed_m_s: how fast it flies to a goal (its speed cap).
        yaw_rate_rad_s: how fast it turns.
        lag_s: how long it takes to start moving after a goal.
        state: the gate's state.
        odometry_period_s, frame_period_s: how often odometry and camera frames arrive.
        odometry_until_s: odometry stops arriving after this time (a dropout).
        frames_until_s: camera frames stop arriving after this time.
        refuse: the gate refuses every goal with this reason.
        stall: the vehicle stops answering goals (a motor that stops).
        events: (time, action) pairs run when the clock passes the time.
    """

    pose: Pose
    speed_m_s: float = 2.0
    yaw_rate_rad_s: float = math.radians(60.0)
    lag_s: float = 0.2
    state: GateState = GateState.READY
    odometry_period_s: float = 0.02
    frame_period_s: float = 1.0 / 30.0
    odometry_until_s: float = math.inf
    frames_until_s: float = math.inf
    refuse: str = ""
    stall: bool = False
    events: list[tuple[float, Callable[[], None]]] = field(default_factory=list)
    time_s: float = 0.0
    goals: list[Pose] = field(default_factory=list)
    holds: int = 0
    contact: str = ""
    fault: SafetyState | None = None
    listeners: list[Callable[[SafetyState], None]] = field(default_factory=list)
    _goal: Pose | None = None
    _goal_at_s: float = 0.0
    _velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    _odometry: VehicleState | None = None
    _status_at_s: float = 0.0
    _frames_at_s: float = -1.0

    # -- the VehicleLink protocol ---------------------------------------------------------

    def now(self) -> float:
        return self.time_s

    def stamp_s(self) -> float:
        return 1_000_000.0 + self.time_s

    def wait(self, timeout_s: float) -> None:
        self._advance(timeout_s)

    def vehicle(self) -> VehicleState | None:
        return self._odometry

    def safety(self) -> SafetyState | None:
        if self.fault is not None:
            return SafetyState(
                state=GateState.FAULT,
                fault_class=self.fault.fault_class,
                fault=self.fault.fault,
                detail=self.fault.detail,
                received_s=self._status_at_s,
            )
        return SafetyState(state=self.state, received_s=self._status_at_s)

    def send_goal(self, target: Pose, max_speed_m_s: float) -> str:
        if self.refuse:
            return self.refuse
        if self.fault is not None:
            return f"in fault: {self.fault.fault}"
        if self.state is GateState.STANDBY:
            return "not engaged"
        self.goals.append(target)
        if not self.stall:
            self._goal, self._goal_at_s = target, self.time_s
            self.speed_m_s = min(self.speed_m_s, max_speed_m_s)
        return ""

    def hold(self) -> str:
        self.holds += 1
        self._goal = None
        return ""

    def collision(self) -> str:
        return self.contact

    def clear_collisions(self) -> None:
        self.contact = ""

    def on_safety_change(self, listener: Callable[[SafetyState], None]) -> None:
        self.listeners.append(listener)

    def frames_missing(self, since_s: float) -> list[str]:
        return [] if self._frames_at_s > since_s else ["/camera/color/image_raw"]

    # -- scripting ----------------------------------------------------------------------------

    def raise_fault(self, fault_class: FaultClass, fault: str, detail: str = "") -> None:
        """The gate faults: it holds and stops the keep-alive."""
        self.fault = SafetyState(
            state=GateState.FAULT, fault_class=fault_class, fault=fault, detail=detail
        )
        self._goal = None
        state = self.safety()
        assert state is not None
        for listener in self.listeners:
            listener(state)

    def settle(self) -> None:
        """Let a first odometry, status and frame arrive."""
        self._advance(0.1)

    def _advance(self, seconds: float) -> None:
        end = self.time_s + seconds
        while self.time_s < end - 1e-12:
            dt = min(self.odometry_period_s, end - self.time_s)
            self.time_s += dt
            for when, action in [event for event in self.events if event[0] <= self.time_s]:
                self.events.remove((when, action))
                action()
            self._move(dt)
            self._status_at_s = self.time_s
            if self.time_s <= self.odometry_until_s:
                self._odometry = VehicleState(
                    pose=self.pose,
                    speed_m_s=float(np.linalg.norm(self._velocity)),
                    received_s=self.time_s,
                )
            if self.time_s <= self.frames_until_s and (
                self.time_s - self._frames_at_s >= self.frame_period_s - 1e-9
            ):
                self._frames_at_s = self.time_s

    def _move(self, dt: float) -> None:
        goal = self._goal
        if goal is None or self.time_s - self._goal_at_s < self.lag_s:
            self._velocity = np.zeros(3)
            return
        offset = goal.position - self.pose.position
        distance = float(np.linalg.norm(offset))
        step = min(distance, self.speed_m_s * dt)
        position = self.pose.position + (offset / distance * step if distance > 0 else 0.0)
        self._velocity = (position - self.pose.position) / dt
        turn = wrap_angle(goal.yaw - self.pose.yaw)
        yaw = self.pose.yaw + math.copysign(min(abs(turn), self.yaw_rate_rad_s * dt), turn)
        self.pose = Pose.from_position(position, wrap_angle(yaw))
