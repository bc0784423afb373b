"""Poses, odometry frames and compass directions (ENU, REP-103)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from aerialdojo.geometry import Pose, compass_direction, wrap_angle, yaw_from_quaternion


def test_relative_to_expresses_a_pose_in_the_start_frame() -> None:
    start = Pose(10.0, 5.0, 2.0, math.pi / 2)  # facing north
    ahead = Pose(10.0, 8.0, 3.0, math.pi)  # 3 m north, 1 m up, turned left
    odom = ahead.relative_to(start)
    assert (odom.x, odom.y, odom.z) == pytest.approx((3.0, 0.0, 1.0))
    assert odom.yaw == pytest.approx(math.pi / 2)
    assert start.relative_to(start) == Pose(0.0, 0.0, 0.0, 0.0)


def test_quaternion_round_trip() -> None:
    for yaw in (-3.0, -1.0, 0.0, 0.5, 3.1):
        assert yaw_from_quaternion(*Pose(0, 0, 0, yaw).quaternion_xyzw()) == pytest.approx(yaw)


def test_wrap_angle_range() -> None:
    assert wrap_angle(3 * math.pi) == pytest.approx(-math.pi)
    assert wrap_angle(-math.pi / 2) == pytest.approx(-math.pi / 2)


@pytest.mark.parametrize(
    ("offset", "direction"),
    [
        ((0, 10), "N"), ((10, 10), "NE"), ((10, 0), "E"), ((10, -10), "SE"),
        ((0, -10), "S"), ((-10, -10), "SW"), ((-10, 0), "W"), ((-10, 10), "NW"),
        ((1, 10), "N"), ((-1, 10), "N"),
    ],
)  # fmt: skip
def test_compass_direction_of_target_from_landmark(
    offset: tuple[float, float], direction: str
) -> None:
    landmark = np.array((5.0, 5.0, 0.0))
    target = landmark + np.array((*offset, 0.0))
    assert compass_direction(landmark, target) == direction
