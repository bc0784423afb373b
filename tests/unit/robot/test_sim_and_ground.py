"""The simulated body (first-order response, speed limit, latency, injected faults), the
simulated drone's modes, and the ground robot's loop closed on odometry."""

from __future__ import annotations

import math

import pytest

from aerialdojo.robot.ground import GroundGains, velocity_command
from aerialdojo.robot.px4_model import (
    NAV_AUTO_LAND,
    NAV_OFFBOARD,
    Px4Commander,
    autopilot_parameters,
)
from aerialdojo.robot.ramp import hold_at
from aerialdojo.robot.safety import OdometrySample
from aerialdojo.robot.sim_autopilot import SimAutopilot, autopilot_time_us
from aerialdojo.robot.sim_vehicle import BodyConfig, SimBody, SimFault


def run(body: SimBody, until: float, dt: float = 0.02, start: float = 0.0) -> None:
    """Step from ``start`` to ``until`` (inclusive) every ``dt``."""
    for i in range(1, round((until - start) / dt) + 1):
        body.step(start + i * dt)


def test_the_body_tracks_a_setpoint_first_order_after_its_latency() -> None:
    body = SimBody(BodyConfig(time_constant=0.3, latency=0.1), position=(0.0, 0.0, 2.0), yaw=0.0)
    body.step(0.0)
    body.command_position(0.0, (1.0, 0.0, 2.0), 0.0)
    run(body, 0.08)
    assert body.position[0] == 0.0  # not before the latency
    run(body, 0.4, start=0.08)
    assert body.position[0] == pytest.approx(1.0 - math.exp(-1.0), abs=0.05)  # one tau later
    run(body, 3.0, start=0.4)
    assert body.position[0] == pytest.approx(1.0, abs=1e-3)


def test_the_bodys_own_speed_limit_holds() -> None:
    body = SimBody(BodyConfig(max_speed=2.0, latency=0.0), position=(0.0, 0.0, 2.0), yaw=0.0)
    body.step(0.0)
    body.command_position(0.0, (100.0, 0.0, 2.0), 0.0)
    run(body, 1.0)
    assert body.position[0] == pytest.approx(2.0, abs=0.05)


@pytest.mark.parametrize("fault", [SimFault.MOTOR_FAILURE, SimFault.FENCE_BREACH])
def test_a_broken_body_ignores_its_commands(fault: SimFault) -> None:
    body = SimBody(BodyConfig(latency=0.0), position=(0.0, 0.0, 2.0), yaw=0.0, faults={fault})
    body.step(0.0)
    body.command_position(0.0, (0.0, 5.0, 2.0), 0.0)
    run(body, 1.0)
    assert body.position[1] == pytest.approx(0.0)
    expected_east = 3.0 if fault == SimFault.FENCE_BREACH else 0.0
    assert body.position[0] == pytest.approx(expected_east, abs=0.05)


def test_odometry_faults_drop_or_invalidate_it() -> None:
    body = SimBody(BodyConfig(odometry_noise=0.0), position=(1.0, 2.0, 3.0), yaw=0.5)
    assert body.odometry() == ((1.0, 2.0, 3.0), 0.5, True)
    body.faults.add(SimFault.ESTIMATOR_INVALID)
    measured = body.odometry()
    assert measured is not None and not measured[2] and math.isnan(measured[0][0])
    body.faults.add(SimFault.ODOMETRY_DROPOUT)
    assert body.odometry() is None


def test_the_simulated_drone_follows_setpoints_only_in_offboard_and_lands_on_loss() -> None:
    commander = Px4Commander(autopilot_parameters(["COM_OBL_RC_ACT=4"], "t"), armed=True)
    body = SimBody(BodyConfig(latency=0.0, odometry_noise=0.0), position=(0, 0, 2.0), yaw=0.0)
    drone = SimAutopilot(commander=commander, body=body, home=body.position)
    t = 1000.0
    for _ in range(30):  # 1.5 s of setpoints, still in Position mode: not followed
        t += 0.05
        commander.on_proof_of_life(autopilot_time_us(t), autopilot_time_us(t))
        drone.on_setpoint(t, (0.0, 3.0, 2.0), 0.0)
        drone.step(t)
    assert body.position[1] == pytest.approx(0.0)
    commander.switch_mode(NAV_OFFBOARD)
    for _ in range(60):
        t += 0.05
        commander.on_proof_of_life(autopilot_time_us(t), autopilot_time_us(t))
        drone.on_setpoint(t, (0.0, 3.0, 2.0), 0.0)
        drone.step(t)
    assert body.position[1] == pytest.approx(3.0, abs=0.05)
    for _ in range(100):  # keep-alive stops: Land after COM_OF_LOSS_T
        t += 0.05
        drone.step(t)
    assert commander.nav_state == NAV_AUTO_LAND
    assert body.position[2] < 0.5


def ground_run(setpoint_xy: tuple[float, float], yaw: float, seconds: float) -> SimBody:
    gains = GroundGains(max_speed=1.0, max_turn_rate=math.radians(90.0))
    body = SimBody(BodyConfig(latency=0.0, odometry_noise=0.0), position=(0.0, 0.0, 0.0), yaw=0.0)
    body.step(0.0)
    t = 0.0
    setpoint = hold_at((setpoint_xy[0], setpoint_xy[1], 0.0), yaw)
    while t < seconds:
        t += 0.05
        odometry = OdometrySample(stamp=t, position=body.position, yaw=body.yaw)
        body.command_velocity(t, *velocity_command(odometry, setpoint, gains))
        body.step(t)
    return body


def test_the_ground_loop_drives_to_the_setpoint_and_turns_to_its_yaw() -> None:
    ahead = ground_run((3.0, 0.0), 0.0, 8.0)
    assert ahead.position[0] == pytest.approx(3.0, abs=0.06)
    aside = ground_run((0.0, 2.0), math.pi, 15.0)
    assert math.dist(aside.position[:2], (0.0, 2.0)) < 0.06
    assert math.cos(aside.yaw - math.pi) == pytest.approx(1.0, abs=1e-3)
    behind = ground_run((-1.0, 0.0), 0.0, 8.0)  # backs up rather than turning round
    assert behind.position[0] == pytest.approx(-1.0, abs=0.06)
    assert math.cos(behind.yaw) > 0.99


def test_the_ground_loop_turns_in_place_before_it_drives_sideways() -> None:
    gains = GroundGains(max_speed=1.0, max_turn_rate=1.0)
    odometry = OdometrySample(stamp=0.0, position=(0.0, 0.0, 0.0), yaw=0.0)
    speed, turn = velocity_command(odometry, hold_at((0.0, 2.0, 0.0), 0.0), gains)
    assert speed == pytest.approx(0.0, abs=1e-9) and turn == pytest.approx(1.0)
