"""Arrival is position, speed and heading within tolerances (PX4's goto example: 0.5 m,
0.3 m/s, 7 deg), inside an allowance from distance and the speed cap."""

from __future__ import annotations

import math

import pytest

from aerialdojo.geometry import Pose
from aerialdojo.robot.arrival import ArrivalTolerance, TimeAllowance
from aerialdojo.robot.link import VehicleState

TARGET = Pose(10.0, 0.0, 2.0, 0.0)


def _at(x: float, z: float = 2.0, yaw_deg: float = 0.0, speed: float = 0.0) -> VehicleState:
    return VehicleState(pose=Pose(x, 0.0, z, math.radians(yaw_deg)), speed_m_s=speed, received_s=0)


def test_each_tolerance_is_its_own_condition_and_names_value_and_limit() -> None:
    tolerance = ArrivalTolerance()
    assert tolerance.misses(_at(9.6, yaw_deg=6.0, speed=0.25), TARGET) == []
    assert tolerance.misses(_at(9.4), TARGET) == ["0.60 m from the target (tolerance 0.5 m)"]
    assert tolerance.misses(_at(10.0, speed=0.3), TARGET) == [
        "moving at 0.30 m/s (tolerance 0.3 m/s)"
    ]
    assert tolerance.misses(_at(10.0, yaw_deg=-8.0), TARGET) == [
        "heading 8.0 deg off (tolerance 7 deg)"
    ]
    # Headings wrap: 359 deg is 1 deg from 0.
    assert tolerance.misses(_at(10.0, yaw_deg=359.0), TARGET) == []
    assert len(tolerance.misses(_at(0.0, yaw_deg=90.0, speed=2.0), TARGET)) == 3


def test_a_ground_robot_is_judged_on_its_horizontal_position() -> None:
    low = _at(10.0, z=0.2)  # its odometry's height is the ground's, not the episode's
    assert ArrivalTolerance().misses(low, TARGET) != []
    assert ArrivalTolerance(planar=True).misses(low, TARGET) == []
    # An intermediate waypoint is passed at the pass radius, moving or not.
    assert ArrivalTolerance(pass_m=1.0).passed(_at(9.2, speed=2.0), TARGET)
    assert not ArrivalTolerance(pass_m=1.0).passed(_at(8.9, speed=0.0), TARGET)


def test_the_allowance_is_the_motion_at_its_capped_speeds_with_a_margin_and_a_settling_time() -> (
    None
):
    allowance = TimeAllowance(speed_m_s=1.0, yaw_rate_rad_s=math.radians(30.0), factor=1.5,
                              settle_s=3.0)  # fmt: skip
    assert allowance.seconds(5.0, 0.0) == pytest.approx(5.0 * 1.5 + 3.0)
    assert allowance.seconds(0.0, math.radians(15.0)) == pytest.approx(0.5 * 1.5 + 3.0)
    assert allowance.seconds(0.0, 0.0) == pytest.approx(3.0)
