"""The safety gate's ROS-free core: limits checked before anything is sent, the gate's state
machine, its watchdogs and the faults they latch (docs/robots.md, "Safety gate").

Aerostack2's platform layer (``as2_core/include/as2_core/aerial_platform.hpp``) is the model:
one base owns the command timer (the keep-alive lives in one place), the state machine and
the emergency path, and a vehicle adapter only turns what this core decides into messages.
Every method takes the time (seconds on a monotonic clock) as an argument, so tests drive it
with a fake clock and the node with its own.

The rule on a fault: send a hold once, then stop the keep-alive, so that the autopilot's own
failsafe (PX4: ``COM_OBL_RC_ACT`` after ``COM_OF_LOSS_T``) takes over as the last layer.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field, replace

from aerialdojo.geofence import Geofence
from aerialdojo.geometry import wrap_angle
from aerialdojo.robot.frames import Vec3
from aerialdojo.robot.ramp import Ramp, Setpoint, hold_at


class GateState(enum.IntEnum):
    """The gate's states; the values are ``SafetyStatus.STATE_*``."""

    STANDBY = 0
    READY = 1
    MOVING = 2
    FAULT = 3


class FaultClass(enum.IntEnum):
    """Who a fault is blamed on; the values are ``SafetyStatus.FAULT_*``."""

    NONE = 0
    #: An operator or a safety layer stopped the robot: counted, never scored, rerunnable.
    INTERVENTION = 1
    #: The robot or its sensing failed: an infrastructure failure, rerunnable.
    INFRASTRUCTURE = 2


#: Every fault the gate latches, by its machine-readable name (``SafetyStatus.fault``).
FAULT_CLASSES: dict[str, FaultClass] = {
    "estop": FaultClass.INTERVENTION,
    "deadman_lost": FaultClass.INTERVENTION,
    "rc_takeover": FaultClass.INTERVENTION,
    "autopilot_failsafe": FaultClass.INTERVENTION,
    "battery_low": FaultClass.INTERVENTION,
    "fence_breach": FaultClass.INTERVENTION,
    "odometry_stale": FaultClass.INFRASTRUCTURE,
    "estimator_invalid": FaultClass.INFRASTRUCTURE,
    "vehicle_silent": FaultClass.INFRASTRUCTURE,
    "vehicle_not_following": FaultClass.INFRASTRUCTURE,
    "vehicle_refused": FaultClass.INFRASTRUCTURE,
}


@dataclass(frozen=True)
class Fault:
    """A latched fault: ``name`` is a key of ``FAULT_CLASSES``; ``detail`` names the value
    and the limit."""

    name: str
    detail: str

    @property
    def fault_class(self) -> FaultClass:
        """Whose the fault is."""
        return FAULT_CLASSES[self.name]


@dataclass(frozen=True, kw_only=True)
class SafetyLimits:
    """What the gate refuses and when it faults.

    Attributes:
        geofence: where the vehicle may be (site frame).
        max_speed_m_s: speed cap of every goal.
        max_accel_m_s2: the ramp's acceleration and braking, and the ``a`` of the
            stopping distance v^2 / 2a.
        max_step_m: longest straight move one goal may ask for.
        max_yaw_rate_rad_s: the ramp's turn rate.
        deadman_timeout_s: longest silence of the operator's heartbeat.
        odometry_timeout_s: oldest odometry the gate acts on.
        vehicle_timeout_s: longest silence of the vehicle's status (adapters that report
            one).
        min_battery_fraction: battery below which the robot is stopped.
        tracking_error_m: how far the vehicle may lag the streamed setpoint ...
        tracking_timeout_s: ... for how long, before it counts as not following.
        require_deadman: whether engaging and moving need the operator's heartbeat.
    """

    geofence: Geofence
    max_speed_m_s: float = 1.0
    max_accel_m_s2: float = 1.0
    max_step_m: float = 10.0
    max_yaw_rate_rad_s: float = math.radians(45.0)
    deadman_timeout_s: float = 1.0
    odometry_timeout_s: float = 0.5
    vehicle_timeout_s: float = 3.0
    min_battery_fraction: float = 0.3
    tracking_error_m: float = 2.0
    tracking_timeout_s: float = 3.0
    require_deadman: bool = True

    def stopping_distance(self, speed: float) -> float:
        """v^2 / 2a: how far the vehicle runs on after a stop at ``speed``."""
        return speed * speed / (2.0 * self.max_accel_m_s2)

    def fence_margin(self, speed: float) -> float:
        """How far inside the fence a move at ``speed`` must keep: the fence's own margin
        or the stopping distance, whichever is larger."""
        return max(self.geofence.margin, self.stopping_distance(speed))


def check_goal(
    limits: SafetyLimits, start: Vec3, goal: Vec3, yaw: float, speed: float
) -> str | None:
    """Why a move from ``start`` to ``goal`` at ``speed`` is refused, or None.

    Checked before anything is sent: finite numbers, the speed cap, the step-size cap, and
    the whole straight path inside the geofence polygon and altitude band with a margin of
    at least the stopping distance at that speed.
    """
    values = (*goal, yaw, speed)
    if not all(math.isfinite(value) for value in values):
        return f"goal ({', '.join(f'{value:g}' for value in values)}) is not finite"
    if speed <= 0.0:
        return f"speed {speed:g} m/s must be positive"
    if speed > limits.max_speed_m_s:
        return f"speed {speed:g} m/s is above the speed cap {limits.max_speed_m_s:g} m/s"
    step = math.dist(start, goal)
    if step > limits.max_step_m:
        return f"step of {step:.2f} m is above the step-size cap {limits.max_step_m:g} m"
    margin = limits.fence_margin(speed)
    reason = limits.geofence.segment_violation(start, goal, margin=margin)
    if reason is not None:
        return (
            f"{reason} (margin {margin:.2f} m: the fence's {limits.geofence.margin:g} m or the "
            f"stopping distance at {speed:g} m/s, {limits.stopping_distance(speed):.2f} m)"
        )
    return None


@dataclass(frozen=True)
class OdometrySample:
    """The vehicle's own odometry, in the site frame (ENU).

    Attributes:
        stamp: when the gate received it (its monotonic clock), seconds.
        position: metres.
        yaw: radians, counter-clockwise from east.
        valid: the estimator vouches for it (PX4: finite position; NaN marks invalid).
    """

    stamp: float
    position: Vec3
    yaw: float
    valid: bool = True


@dataclass(frozen=True)
class VehicleReport:
    """What a vehicle adapter learned of the autopilot's own state.

    Attributes:
        stamp: when it was heard (the gate's monotonic clock), seconds.
        controllable: the vehicle is in the mode that obeys the gate (PX4 OFFBOARD,
            ArduPilot GUIDED); None where the adapter cannot tell.
        mode: the mode's name, for messages.
        takeover: why the pilot has (or takes) control, "" if not (sticks moving, a mode
            switch).
        failsafe: the autopilot's own failsafe in action, "" if none.
        battery_fraction: remaining battery, 0-1; None where unknown.
    """

    stamp: float
    controllable: bool | None = None
    mode: str = ""
    takeover: str = ""
    failsafe: str = ""
    battery_fraction: float | None = None


@dataclass(frozen=True)
class GateOutput:
    """What the command timer (or the e-stop) must send now.

    Attributes:
        setpoint: the setpoint to send, None for nothing.
        keepalive: send the autopilot's keep-alive with it.
        hold: the setpoint is a hold (the adapter may send its own hold form).
    """

    setpoint: Setpoint | None = None
    keepalive: bool = False
    hold: bool = False


#: Send nothing.
SILENCE = GateOutput()


@dataclass
class _Tracking:
    since: float | None = None


@dataclass
class SafetyCore:
    """The gate's state machine and watchdogs.

    STANDBY (nothing sent) -> ``engage`` -> READY (keep-alive and a hold streamed) ->
    ``request_goal`` -> MOVING (the ramp streamed) -> the ramp ends -> READY. Any fault ->
    FAULT: one hold, then silence (no keep-alive) until the operator's ``clear`` returns
    to STANDBY.
    """

    limits: SafetyLimits
    reports_vehicle: bool = False
    state: GateState = GateState.STANDBY
    fault: Fault | None = None
    #: Bumped on every change of state or fault, for status publishing.
    version: int = 0
    _odometry: OdometrySample | None = None
    _deadman: float | None = None
    _report: VehicleReport | None = None
    _was_controllable: bool = False
    _estop_locked: bool = False
    _holding: Setpoint | None = None
    _ramp: Ramp | None = None
    _last_sent: Setpoint | None = None
    _tracking: _Tracking = field(default_factory=_Tracking)

    # -- inputs ---------------------------------------------------------------------------

    def on_deadman(self, now: float) -> None:
        """The operator console's heartbeat arrived."""
        self._deadman = now

    def on_odometry(self, sample: OdometrySample) -> None:
        """The vehicle's odometry arrived."""
        self._odometry = sample

    def on_vehicle(self, report: VehicleReport) -> None:
        """The vehicle adapter decoded the autopilot's state."""
        self._report = report

    @property
    def odometry(self) -> OdometrySample | None:
        """The latest odometry."""
        return self._odometry

    @property
    def vehicle(self) -> VehicleReport | None:
        """The latest vehicle report."""
        return self._report

    @property
    def current_setpoint(self) -> Setpoint | None:
        """The setpoint last sent."""
        return self._last_sent

    # -- operator and backend requests ----------------------------------------------------

    def engage(self, now: float) -> str | None:
        """The operator's consent: start the keep-alive holding where the vehicle is.
        Returns why it is refused, or None."""
        if self.state == GateState.FAULT:
            return f"latched fault {self.fault.name if self.fault else ''}: clear it first"
        if self.state != GateState.STANDBY:
            return None
        reason = self._precondition(now)
        if reason is not None:
            return reason
        odometry = self._odometry
        assert odometry is not None  # checked by _precondition
        self._holding = hold_at(odometry.position, odometry.yaw)
        self._ramp = None
        self._was_controllable = False
        self._set_state(GateState.READY)
        return None

    def request_goal(self, now: float, goal: Vec3, yaw: float, speed: float) -> str | None:
        """Check a goal against every limit and, if it passes, start streaming the ramp
        to it. Returns why it is refused (nothing is sent for it), or None."""
        start, why_not = self.goal_start(now)
        if start is None:
            return why_not
        refusal = check_goal(self.limits, start.position, goal, yaw, speed)
        return refusal or self.begin_goal(now, start, goal, yaw, speed)

    def goal_start(self, now: float) -> tuple[Setpoint | None, str]:
        """Where a goal's path would begin now (the setpoint being streamed), or None and
        why goals are refused now. The first half of ``request_goal``: a caller that must
        not hold a lock through ``check_goal`` (the gate node: an e-stop waits for that
        lock) runs the check between this and ``begin_goal``."""
        if self.state in (GateState.STANDBY, GateState.FAULT):
            fault = f" ({self.fault.name}: {self.fault.detail})" if self.fault else ""
            return None, f"the gate is {self.state.name}{fault}: goals need READY or MOVING"
        reason = self._precondition(now)
        if reason is not None:
            return None, reason
        report = self._report
        if self.reports_vehicle and (report is None or report.controllable is False):
            mode = report.mode if report is not None else "unknown"
            return None, f"the vehicle is in mode {mode}, not under the gate's control yet"
        return self._commanded(now), ""

    def begin_goal(
        self, now: float, checked_from: Setpoint, goal: Vec3, yaw: float, speed: float
    ) -> str | None:
        """Start the ramp to a goal that ``check_goal`` passed from ``checked_from``. The
        path is checked again from where the stream is now if that has moved meanwhile
        (a goal replacing a moving one), and refused if the gate left READY and MOVING."""
        if self.state not in (GateState.READY, GateState.MOVING):
            return f"the gate went {self.state.name} while the goal was checked"
        start = self._commanded(now)
        if math.dist(start.position, checked_from.position) > 1e-6:
            reason = check_goal(self.limits, start.position, goal, yaw, speed)
            if reason is not None:
                return reason
        self._ramp = Ramp(
            start=hold_at(start.position, start.yaw),
            goal=hold_at(goal, wrap_angle(yaw)),
            max_speed=speed,
            max_accel=self.limits.max_accel_m_s2,
            max_yaw_rate=self.limits.max_yaw_rate_rad_s,
            t0=now,
        )
        self._tracking = _Tracking()
        self._set_state(GateState.MOVING)
        return None

    def hold(self, now: float) -> str | None:
        """Hold at the current pose, keep-alive continuing. Returns why refused, or None."""
        if self.state not in (GateState.READY, GateState.MOVING):
            return f"the gate is {self.state.name}: nothing to hold"
        self._holding = self._hold_setpoint(now)
        self._ramp = None
        self._set_state(GateState.READY)
        return None

    def estop(self, now: float, detail: str = "e-stop requested") -> GateOutput:
        """Latch the e-stop: hold once, then no keep-alive."""
        return self.latch(now, Fault("estop", detail))

    def set_estop_lock(self, now: float, locked: bool) -> GateOutput:
        """The e-stop lock topic's value: True latches the e-stop and keeps ``clear``
        refused until it is False again."""
        self._estop_locked = locked
        if locked:
            return self.estop(now, "e-stop lock set")
        return SILENCE

    def latch(self, now: float, fault: Fault) -> GateOutput:
        """Enter FAULT with ``fault`` (the first fault stays latched): the hold to send
        once. Nothing at all where nothing was being streamed."""
        if self.state == GateState.FAULT:
            return SILENCE
        streaming = self.state in (GateState.READY, GateState.MOVING)
        hold = self._hold_setpoint(now) if streaming else None
        self.fault = fault
        self._ramp = None
        self._holding = None
        self._set_state(GateState.FAULT)
        if hold is None:
            return SILENCE
        self._last_sent = hold
        return GateOutput(setpoint=hold, keepalive=False, hold=True)

    def clear(self, now: float) -> str | None:
        """The operator clears a latched fault: back to STANDBY. Returns why refused."""
        if self._estop_locked:
            return "the e-stop lock is still set (safety/estop_lock true)"
        if self.state != GateState.FAULT:
            return None
        self.fault = None
        self._set_state(GateState.STANDBY)
        return None

    # -- the command timer ----------------------------------------------------------------

    def step(self, now: float) -> GateOutput:
        """What to send at ``now``: runs the watchdogs first (a fault returns its hold)."""
        if self.state not in (GateState.READY, GateState.MOVING):
            return SILENCE
        fault = self._watchdogs(now)
        if fault is not None:
            return self.latch(now, fault)
        setpoint = self._commanded(now)
        if self._ramp is not None and now - self._ramp.t0 >= self._ramp.duration:
            self._holding = setpoint
            self._ramp = None
            self._set_state(GateState.READY)
        self._last_sent = setpoint
        return GateOutput(setpoint=setpoint, keepalive=True, hold=self._ramp is None)

    # -- internals ------------------------------------------------------------------------

    def _set_state(self, state: GateState) -> None:
        self.state = state
        self.version += 1

    def _commanded(self, now: float) -> Setpoint:
        """The setpoint to stream now: the ramp's sample or the hold."""
        if self._ramp is not None:
            return self._ramp.sample(now)
        if self._holding is None:
            self._holding = self._hold_setpoint(now)
        return self._holding

    def _hold_setpoint(self, now: float) -> Setpoint:
        """Hold at the vehicle's measured pose when the odometry can be trusted, else at
        the setpoint last sent."""
        odometry = self._odometry
        if (
            odometry is not None
            and odometry.valid
            and now - odometry.stamp <= self.limits.odometry_timeout_s
        ):
            return hold_at(odometry.position, odometry.yaw)
        if self._last_sent is not None:
            return hold_at(self._last_sent.position, self._last_sent.yaw)
        assert odometry is not None, "holding before any odometry"
        return hold_at(odometry.position, odometry.yaw)

    def _precondition(self, now: float) -> str | None:
        """Why the robot may not be commanded now (what engage and goals need)."""
        fault = self._watchdogs(now)
        return None if fault is None else f"{fault.name}: {fault.detail}"

    def _watchdogs(self, now: float) -> Fault | None:
        limits = self.limits
        if limits.require_deadman:
            if self._deadman is None:
                return Fault("deadman_lost", "no operator heartbeat (safety/deadman) yet")
            silence = now - self._deadman
            if silence > limits.deadman_timeout_s:
                return Fault(
                    "deadman_lost",
                    f"operator heartbeat silent for {silence:.2f} s "
                    f"(limit {limits.deadman_timeout_s:g} s)",
                )
        odometry = self._odometry
        if odometry is None:
            return Fault("odometry_stale", "no odometry received yet")
        age = now - odometry.stamp
        if age > limits.odometry_timeout_s:
            return Fault(
                "odometry_stale",
                f"odometry is {age:.2f} s old (limit {limits.odometry_timeout_s:g} s)",
            )
        if not odometry.valid:
            return Fault("estimator_invalid", "the estimator marks the position invalid")
        # After the odometry: an autopilot that lost its estimate fails safe at once, and
        # the root cause, not its consequence, names the fault.
        fault = self._vehicle_fault(now)
        if fault is not None:
            return fault
        if not limits.geofence.contains(odometry.position, margin=0.0):
            x, y, z = odometry.position
            return Fault(
                "fence_breach", f"vehicle at ({x:.2f}, {y:.2f}, {z:.2f}) is outside the geofence"
            )
        return self._tracking_fault(now, odometry)

    def _vehicle_fault(self, now: float) -> Fault | None:
        report = self._report
        if not self.reports_vehicle:
            return None
        if report is None:
            return Fault("vehicle_silent", "no vehicle status received yet")
        silence = now - report.stamp
        if silence > self.limits.vehicle_timeout_s:
            return Fault(
                "vehicle_silent",
                f"vehicle status silent for {silence:.2f} s "
                f"(limit {self.limits.vehicle_timeout_s:g} s)",
            )
        if report.takeover:
            return Fault("rc_takeover", report.takeover)
        if (
            report.battery_fraction is not None
            and report.battery_fraction < self.limits.min_battery_fraction
        ):
            return Fault(
                "battery_low",
                f"battery at {report.battery_fraction:.0%} "
                f"(limit {self.limits.min_battery_fraction:.0%})",
            )
        streaming = self.state in (GateState.READY, GateState.MOVING)
        if report.controllable and streaming:
            self._was_controllable = True
        elif report.controllable is False and self._was_controllable and streaming:
            if report.failsafe:
                return Fault(
                    "autopilot_failsafe", f"autopilot failsafe: {report.failsafe} ({report.mode})"
                )
            return Fault("rc_takeover", f"the vehicle left the gate's mode for {report.mode}")
        return None

    def _tracking_fault(self, now: float, odometry: OdometrySample) -> Fault | None:
        if self._last_sent is None or self.state not in (GateState.READY, GateState.MOVING):
            return None
        lag = math.dist(odometry.position, self._last_sent.position)
        if lag <= self.limits.tracking_error_m:
            self._tracking = _Tracking()
            return None
        if self._tracking.since is None:
            self._tracking = replace(self._tracking, since=now)
            return None
        if now - self._tracking.since > self.limits.tracking_timeout_s:
            return Fault(
                "vehicle_not_following",
                f"vehicle {lag:.2f} m from the setpoint for "
                f"{now - self._tracking.since:.1f} s (limits {self.limits.tracking_error_m:g} m, "
                f"{self.limits.tracking_timeout_s:g} s)",
            )
        return None
