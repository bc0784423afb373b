"""ENU <-> NED and FLU <-> FRD (PX4 converts nothing itself), and the speed-capped setpoint
ramp the gate streams instead of a jump."""

from __future__ import annotations

import itertools
import math

import pytest

from aerialdojo.robot.frames import (
    enu_to_ned,
    enu_yaw_to_ned,
    flu_to_frd,
    frd_to_flu,
    ned_to_enu,
    ned_yaw_to_enu,
    yaw_of_quaternion_wxyz,
    yaw_quaternion_wxyz,
)
from aerialdojo.robot.ramp import Ramp, Setpoint, hold_at


def test_enu_and_ned_swap_east_and_north_and_flip_up() -> None:
    assert enu_to_ned((1.0, 2.0, 3.0)) == (2.0, 1.0, -3.0)  # 1 m east, 2 north, 3 up
    assert ned_to_enu(enu_to_ned((1.0, 2.0, 3.0))) == (1.0, 2.0, 3.0)
    assert flu_to_frd((1.0, 2.0, 3.0)) == (1.0, -2.0, -3.0)
    assert frd_to_flu(flu_to_frd((1.0, 2.0, 3.0))) == (1.0, 2.0, 3.0)


@pytest.mark.parametrize(
    ("yaw_enu_deg", "heading_ned_deg"),
    [(0.0, 90.0), (90.0, 0.0), (180.0, -90.0), (-90.0, 180.0), (45.0, 45.0), (30.0, 60.0)],
)
def test_an_enu_yaw_is_a_heading_clockwise_from_north(
    yaw_enu_deg: float, heading_ned_deg: float
) -> None:
    # Facing east is heading 90 deg; facing north is heading 0.
    heading = enu_yaw_to_ned(math.radians(yaw_enu_deg))
    assert math.cos(heading - math.radians(heading_ned_deg)) == pytest.approx(1.0)
    back = ned_yaw_to_enu(heading)
    assert math.cos(back - math.radians(yaw_enu_deg)) == pytest.approx(1.0)  # same angle
    assert -math.pi <= back < math.pi


def test_a_level_quaternion_round_trips_its_heading() -> None:
    for yaw in (-3.0, -1.0, 0.0, 0.5, 3.0):
        assert yaw_of_quaternion_wxyz(*yaw_quaternion_wxyz(yaw)) == pytest.approx(yaw)


def ramp(distance: float, *, speed: float = 1.0, accel: float = 2.0, turn: float = 0.0) -> Ramp:
    return Ramp(
        start=hold_at((0.0, 0.0, 2.0), 0.0),
        goal=hold_at((distance, 0.0, 2.0), turn),
        max_speed=speed,
        max_accel=accel,
        max_yaw_rate=math.radians(45.0),
        t0=10.0,
    )


def test_a_5_m_step_is_a_trapezoid_capped_at_the_speed_limit() -> None:
    path = ramp(5.0)
    # 0.5 s accelerating (0.25 m), 4.5 s cruising (4.5 m), 0.5 s braking (0.25 m).
    assert path.duration == pytest.approx(5.5)
    samples = [path.sample(10.0 + 0.01 * i) for i in range(600)]
    assert max(s.speed for s in samples) == pytest.approx(1.0)
    assert all(b.position[0] >= a.position[0] for a, b in itertools.pairwise(samples))
    mid = path.sample(12.75)
    assert mid.position[0] == pytest.approx(2.5) and mid.velocity == pytest.approx((1.0, 0, 0))
    assert path.sample(15.5) == Setpoint(position=(5.0, 0.0, 2.0), yaw=0.0)


def test_a_short_step_never_reaches_cruise_speed() -> None:
    path = ramp(0.5)  # peak at sqrt(a d) = 1 m/s: exactly touches the cap
    short = ramp(0.2)
    assert max(short.sample(10.0 + 0.005 * i).speed for i in range(200)) < 1.0
    assert short.sample(10.0 + short.duration / 2).position[0] == pytest.approx(0.1)
    assert path.duration == pytest.approx(1.0)


def test_the_setpoint_acceleration_never_exceeds_the_cap() -> None:
    path = ramp(3.0, speed=1.5, accel=1.0)
    dt = 0.01
    speeds = [path.sample(10.0 + dt * i).speed for i in range(int(path.duration / dt) + 2)]
    assert max(abs(b - a) / dt for a, b in itertools.pairwise(speeds)) <= 1.0 + 1e-6


def test_a_turn_in_place_runs_at_the_yaw_rate_the_short_way_round() -> None:
    path = ramp(0.0, turn=math.radians(-170.0))
    assert path.duration == pytest.approx(170.0 / 45.0)
    half = path.sample(10.0 + path.duration / 2)
    assert math.degrees(half.yaw) == pytest.approx(-85.0)
    assert half.yaw_rate == pytest.approx(-math.radians(45.0))
    across = Ramp(
        start=hold_at((0.0, 0.0, 2.0), math.radians(170.0)),
        goal=hold_at((0.0, 0.0, 2.0), math.radians(-170.0)),
        max_speed=1.0,
        max_accel=1.0,
        max_yaw_rate=math.radians(45.0),
        t0=0.0,
    )
    assert across.duration == pytest.approx(20.0 / 45.0)  # 20 deg across +-180, not 340
