"""Frame conversions between the map frame, NED (ProjectAirSim, AirSim) and CARLA."""

from __future__ import annotations

import math

import pytest

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.remote.frames import (
    CarlaPose,
    MapOffset,
    carla_to_map,
    map_to_carla,
    map_to_ned,
    ned_to_map,
    yaw_of_quaternion_wxyz,
    yaw_quaternion_wxyz,
)


def test_map_east_north_up_is_ned_east_north_down() -> None:
    north, east, down, yaw = map_to_ned(Pose(3.0, 4.0, 10.0, 0.0))
    assert (north, east, down) == (4.0, 3.0, -10.0)
    assert yaw == pytest.approx(math.pi / 2.0), "facing map +x (east) is NED yaw 90 deg"
    assert map_to_ned(Pose(0.0, 0.0, 0.0, math.pi / 2.0))[3] == pytest.approx(0.0)
    assert map_to_ned(Pose(0.0, 0.0, 0.0, math.pi / 4.0))[3] == pytest.approx(math.pi / 4.0)


@pytest.mark.parametrize("yaw", [-3.0, -1.0, 0.0, 0.5, 2.5])
def test_ned_round_trip(yaw: float) -> None:
    pose = Pose(-7.5, 12.25, 33.0, yaw)
    back = ned_to_map(*map_to_ned(pose))
    assert (back.x, back.y, back.z) == (pytest.approx(-7.5), pytest.approx(12.25), 33.0)
    assert back.yaw == pytest.approx(yaw)


def test_yaw_quaternions_round_trip() -> None:
    for yaw in (-2.0, 0.0, 1.0, 3.0):
        assert yaw_of_quaternion_wxyz(*yaw_quaternion_wxyz(yaw)) == pytest.approx(yaw)


def test_carla_is_the_map_mirrored_in_y_with_clockwise_degrees() -> None:
    carla = map_to_carla(Pose(10.0, -20.0, 5.0, math.radians(30.0)))
    assert carla == CarlaPose(10.0, 20.0, 5.0, pytest.approx(-30.0))
    back = carla_to_map(carla)
    assert (back.x, back.y, back.z) == (10.0, -20.0, 5.0)
    assert back.yaw == pytest.approx(math.radians(30.0))


TOWN10HD_OFFSET = MapOffset(172.20, -183.86, 27.45)


def test_town10hd_offset_is_the_documented_formula() -> None:
    # airsim_x = carla_x + 172.20, airsim_y = carla_y - 183.86, airsim_z = -carla_z + 27.45
    north, east, down, yaw = TOWN10HD_OFFSET.carla_to_airsim(CarlaPose(1.0, 2.0, 3.0, 90.0))
    assert (north, east, down) == (
        pytest.approx(173.20),
        pytest.approx(-181.86),
        pytest.approx(24.45),
    )
    assert yaw == pytest.approx(math.pi / 2.0), "CARLA and AirSim both turn clockwise"
    pose = Pose(-4.0, 6.0, 30.0, 1.2)
    back = TOWN10HD_OFFSET.airsim_to_map(*TOWN10HD_OFFSET.map_to_airsim(pose))
    assert (back.x, back.y, back.z, back.yaw) == (
        pytest.approx(-4.0),
        pytest.approx(6.0),
        pytest.approx(30.0),
        pytest.approx(1.2),
    )


def test_offsets_from_a_parameter_must_be_three_finite_numbers() -> None:
    assert MapOffset.from_list([1.0, 2.0, 3.0], "x") == MapOffset(1.0, 2.0, 3.0)
    with pytest.raises(ConfigError, match=r"sim_bridge.carla_air_map_offset: expected three"):
        MapOffset.from_list([1.0, 2.0], "sim_bridge.carla_air_map_offset")
    with pytest.raises(ConfigError, match="finite"):
        MapOffset.from_list([1.0, math.nan, 3.0], "offset")
