"""The safety gate's ROS-free core: every limit refuses before anything is streamed, the
state machine, each watchdog's fault and its class, and the rule "hold once, then silence"."""

from __future__ import annotations

import math

import pytest

from aerialdojo.geofence import Geofence
from aerialdojo.robot.safety import (
    FAULT_CLASSES,
    SILENCE,
    FaultClass,
    GateState,
    OdometrySample,
    SafetyCore,
    SafetyLimits,
    VehicleReport,
    check_goal,
)

# An L-shaped yard: the 20 x 20 square without its north-east 10 x 10 quarter.
L_YARD = ((0.0, 0.0), (20.0, 0.0), (20.0, 10.0), (10.0, 10.0), (10.0, 20.0), (0.0, 20.0))
FENCE = Geofence(polygon=L_YARD, min_z=0.5, max_z=10.0, margin=0.5)
LIMITS = SafetyLimits(geofence=FENCE, max_speed_m_s=2.0, max_accel_m_s2=2.0, max_step_m=8.0)
START = (5.0, 5.0, 2.0)


def engaged(limits: SafetyLimits = LIMITS, *, reports_vehicle: bool = False) -> SafetyCore:
    """A core engaged at START at t = 0 with fresh inputs."""
    core = SafetyCore(limits, reports_vehicle=reports_vehicle)
    feed(core, 0.0)
    assert core.engage(0.0) is None
    assert core.state == GateState.READY
    return core


def feed(core: SafetyCore, now: float, position: tuple[float, float, float] = START) -> None:
    core.on_deadman(now)
    core.on_odometry(OdometrySample(stamp=now, position=position, yaw=0.0))
    core.on_vehicle(VehicleReport(stamp=now, controllable=True, mode="OFFBOARD"))


@pytest.mark.parametrize(
    ("goal", "speed", "reason"),
    [
        ((5.0, 5.0, 2.0), 2.5, "above the speed cap 2 m/s"),
        ((5.0, 5.0, 2.0), 0.0, "must be positive"),
        ((5.0, 5.0, 2.0), math.nan, "not finite"),
        ((5.0, 14.0, 2.0), 1.0, "above the step-size cap 8 m"),
        ((5.0, 5.0, 0.7), 1.0, "below the geofence floor"),
        ((5.0, 5.0, 9.8), 1.0, "above the geofence ceiling"),
        ((10.5, 10.5, 2.0), 1.0, "outside the geofence polygon"),  # the missing quarter
        ((10.3, 9.7, 2.0), 1.0, "inside its margin"),
    ],
)
def test_a_goal_beyond_any_limit_is_refused_with_the_limit_named(
    goal: tuple[float, float, float], speed: float, reason: str
) -> None:
    refusal = check_goal(LIMITS, START, goal, 0.0, speed)
    assert refusal is not None and reason in refusal


def test_the_path_not_only_its_end_must_keep_inside_a_concave_fence() -> None:
    # Both ends inside the L; the straight line between them crosses the missing quarter.
    refusal = check_goal(LIMITS, (13.0, 8.0, 2.0), (8.0, 13.0, 2.0), 0.0, 1.0)
    assert refusal is not None and "path" in refusal
    assert check_goal(LIMITS, (13.0, 8.0, 2.0), (8.0, 8.0, 2.0), 0.0, 1.0) is None


def test_the_fence_margin_grows_to_the_stopping_distance_at_speed() -> None:
    # v^2 / 2a at 2 m/s and 2 m/s^2 is 1 m, more than the fence's 0.5 m.
    near_edge = (19.2, 5.0, 2.0)  # 0.8 m from the east edge
    assert LIMITS.stopping_distance(2.0) == pytest.approx(1.0)
    refusal = check_goal(LIMITS, (15.0, 5.0, 2.0), near_edge, 0.0, 2.0)
    assert refusal is not None and "stopping distance at 2 m/s, 1.00 m" in refusal
    assert check_goal(LIMITS, (15.0, 5.0, 2.0), near_edge, 0.0, 1.0) is None


def test_a_refused_goal_changes_nothing_that_is_streamed() -> None:
    core = engaged()
    held = core.step(0.05)
    assert held.keepalive and held.hold and held.setpoint is not None
    assert core.request_goal(0.1, (5.0, 5.0, 9.9), 0.0, 1.0) is not None
    feed(core, 0.2)
    after = core.step(0.2)
    assert core.state == GateState.READY
    assert after.setpoint == held.setpoint  # still the hold at START


def test_standby_sends_nothing_and_refuses_goals() -> None:
    core = SafetyCore(LIMITS)
    feed(core, 0.0)
    assert core.step(0.0) == SILENCE
    refusal = core.request_goal(0.0, (6.0, 5.0, 2.0), 0.0, 1.0)
    assert refusal is not None and "STANDBY" in refusal
    assert core.step(0.1) == SILENCE


def test_an_accepted_goal_is_streamed_as_a_speed_capped_ramp_to_its_end() -> None:
    core = engaged()
    assert core.request_goal(0.0, (5.0, 10.0, 2.0), math.pi / 2, 1.0) is None
    assert core.state == GateState.MOVING
    speeds, t = [], 0.0
    while core.state == GateState.MOVING and t < 20.0:
        t += 0.05
        feed(core, t, position=core.current_setpoint.position if core.current_setpoint else START)
        out = core.step(t)
        assert out.keepalive
        speeds.append(out.setpoint.speed)
    assert core.state == GateState.READY
    assert max(speeds) <= 1.0 + 1e-9
    assert core.current_setpoint.position == pytest.approx((5.0, 10.0, 2.0))
    assert core.current_setpoint.yaw == pytest.approx(math.pi / 2)
    # 5 m at 1 m/s with 2 m/s^2 ramps: 5.5 s, not a jump.
    assert 5.0 < t < 6.0


def test_the_estop_holds_once_then_silences_the_keepalive_until_cleared() -> None:
    core = engaged()
    assert core.request_goal(0.0, (5.0, 10.0, 2.0), 0.0, 1.0) is None
    feed(core, 1.0)
    core.step(1.0)
    out = core.estop(1.0)
    assert out.hold and not out.keepalive
    assert out.setpoint.position == START  # where the odometry says the vehicle is
    assert out.setpoint.velocity == (0.0, 0.0, 0.0)
    assert core.state == GateState.FAULT and core.fault.name == "estop"
    assert core.fault.fault_class == FaultClass.INTERVENTION
    for t in (1.05, 1.1, 5.0):
        feed(core, t)
        assert core.step(t) == SILENCE
    assert core.request_goal(5.0, (6.0, 5.0, 2.0), 0.0, 1.0) is not None
    assert core.estop(5.0) == SILENCE  # already latched: nothing more is sent
    assert core.clear(5.0) is None and core.state == GateState.STANDBY
    assert core.engage(5.0) is None and core.state == GateState.READY


def test_the_estop_lock_keeps_clear_refused_while_set() -> None:
    core = engaged()
    assert core.set_estop_lock(1.0, True).hold
    refusal = core.clear(1.0)
    assert refusal is not None and "lock" in refusal
    core.set_estop_lock(2.0, False)
    assert core.clear(2.0) is None


def test_hold_stops_a_move_and_keeps_the_keepalive() -> None:
    core = engaged()
    assert core.request_goal(0.0, (5.0, 10.0, 2.0), 0.0, 1.0) is None
    feed(core, 1.0, position=(5.0, 5.4, 2.0))
    core.step(1.0)
    assert core.hold(1.0) is None and core.state == GateState.READY
    feed(core, 1.5, position=(5.0, 5.4, 2.0))
    out = core.step(1.5)
    assert out.keepalive and out.setpoint.position == (5.0, 5.4, 2.0)


@pytest.mark.parametrize(
    ("break_it", "fault", "fault_class"),
    [
        (lambda core, t: core.on_deadman(t - 5.0), "deadman_lost", FaultClass.INTERVENTION),
        (
            lambda core, t: core.on_odometry(OdometrySample(stamp=t - 2.0, position=START, yaw=0)),
            "odometry_stale",
            FaultClass.INFRASTRUCTURE,
        ),
        (
            lambda core, t: core.on_odometry(
                OdometrySample(stamp=t, position=START, yaw=0.0, valid=False)
            ),
            "estimator_invalid",
            FaultClass.INFRASTRUCTURE,
        ),
        (
            lambda core, t: core.on_odometry(
                OdometrySample(stamp=t, position=(15.0, 15.0, 2.0), yaw=0.0)
            ),
            "fence_breach",
            FaultClass.INTERVENTION,
        ),
        (
            lambda core, t: core.on_vehicle(
                VehicleReport(stamp=t, controllable=True, battery_fraction=0.1)
            ),
            "battery_low",
            FaultClass.INTERVENTION,
        ),
        (
            lambda core, t: core.on_vehicle(
                VehicleReport(stamp=t, controllable=False, mode="POSCTL")
            ),
            "rc_takeover",
            FaultClass.INTERVENTION,
        ),
        (
            lambda core, t: core.on_vehicle(
                VehicleReport(stamp=t, controllable=True, takeover="sticks moving")
            ),
            "rc_takeover",
            FaultClass.INTERVENTION,
        ),
        (
            lambda core, t: core.on_vehicle(
                VehicleReport(stamp=t, controllable=False, mode="AUTO.LAND", failsafe="battery")
            ),
            "autopilot_failsafe",
            FaultClass.INTERVENTION,
        ),
        (
            lambda core, t: core.on_vehicle(VehicleReport(stamp=t - 10.0, controllable=True)),
            "vehicle_silent",
            FaultClass.INFRASTRUCTURE,
        ),
    ],
)
def test_each_watchdog_latches_its_fault_with_its_class(
    break_it: object, fault: str, fault_class: FaultClass
) -> None:
    core = engaged(reports_vehicle=True)
    feed(core, 0.5)
    assert core.step(0.5).keepalive  # controllable seen while streaming
    feed(core, 1.0)
    break_it(core, 1.0)  # type: ignore[operator]
    out = core.step(1.0)
    assert out.hold and not out.keepalive, "a fault sends one hold and stops the keep-alive"
    assert core.state == GateState.FAULT
    assert core.fault.name == fault and core.fault.fault_class == fault_class
    assert FAULT_CLASSES[fault] == fault_class


def test_a_vehicle_that_stops_following_is_an_infrastructure_fault() -> None:
    core = engaged()
    assert core.request_goal(0.0, (5.0, 12.0, 2.0), 0.0, 2.0) is None
    t = 0.0
    while core.state != GateState.FAULT and t < 20.0:
        t += 0.1
        feed(core, t, position=START)  # a motor stopped answering: it never moves
        core.step(t)
    assert core.fault is not None and core.fault.name == "vehicle_not_following"
    assert core.fault.fault_class == FaultClass.INFRASTRUCTURE
    assert LIMITS.tracking_timeout_s < t < 10.0


def test_engage_needs_every_precondition_and_names_the_missing_one() -> None:
    core = SafetyCore(LIMITS)
    refusal = core.engage(0.0)
    assert refusal is not None and refusal.startswith("deadman_lost")
    core.on_deadman(0.0)
    refusal = core.engage(0.0)
    assert refusal is not None and refusal.startswith("odometry_stale")
    core.on_odometry(OdometrySample(stamp=0.0, position=START, yaw=0.0))
    assert core.engage(0.0) is None


def test_without_a_deadman_requirement_the_heartbeat_is_not_needed() -> None:
    limits = SafetyLimits(geofence=FENCE, require_deadman=False)
    core = SafetyCore(limits)
    core.on_odometry(OdometrySample(stamp=0.0, position=START, yaw=0.0))
    assert core.engage(0.0) is None


def test_goals_wait_until_the_vehicle_is_in_the_gates_mode() -> None:
    core = SafetyCore(LIMITS, reports_vehicle=True)
    feed(core, 0.0)
    core.on_vehicle(VehicleReport(stamp=0.0, controllable=False, mode="POSCTL"))
    assert core.engage(0.0) is None
    refusal = core.request_goal(0.0, (6.0, 5.0, 2.0), 0.0, 1.0)
    assert refusal is not None and "POSCTL" in refusal
    # Not yet in OFFBOARD is no takeover: the gate keeps streaming its hold.
    assert core.step(0.1).keepalive and core.state == GateState.READY
    core.on_vehicle(VehicleReport(stamp=0.2, controllable=True, mode="OFFBOARD"))
    assert core.request_goal(0.2, (6.0, 5.0, 2.0), 0.0, 1.0) is None


def test_only_the_first_fault_stays_latched() -> None:
    core = engaged()
    core.estop(1.0)
    feed(core, 2.0)
    core.on_deadman(-10.0)
    assert core.step(2.0) == SILENCE
    assert core.fault.name == "estop"
