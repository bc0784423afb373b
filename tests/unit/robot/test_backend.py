"""The robot backend's decisions, against a scripted gate and vehicle on a scripted clock:
arrival within tolerances inside the allowance, a miss held and failed as infrastructure, the
gate's faults by their class, collisions, the geofence, fresh frames, the start checks."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scripted_vehicle import ScriptedVehicle

from aerialdojo.actions import Action, target_pose
from aerialdojo.errors import (
    ConfigError,
    InvalidActionError,
    SafetyInterventionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.protocols import load_suite
from aerialdojo.robot.backend import RobotBackend
from aerialdojo.robot.safety import FaultClass, GateState
from aerialdojo.robot.settings import RobotSettings
from aerialdojo.sim.backend import BackendFault, BackendOptions
from aerialdojo.tasks.suite import resolve_suite

SUITE = resolve_suite("alley_rehearsal")
#: The rehearsal site's trash can pad, where its first episodes start.
PAD = Pose(-13.09, 2.89, 1.38, math.radians(76.9))


def _backend(
    vehicle: ScriptedVehicle, faults: list[BackendFault] | None = None, **parameters: object
) -> RobotBackend:
    settings = RobotSettings.from_parameters({"suite": str(SUITE), **parameters})
    return RobotBackend(
        rigs=RobotBackend.camera_rigs(["uav"], 64, 48, 90.0),
        links={"uav": vehicle},
        settings=settings,
        report_fault=None if faults is None else faults.append,
    )


def _placed(start: Pose, **vehicle_options: object) -> tuple[ScriptedVehicle, RobotBackend]:
    vehicle = ScriptedVehicle(pose=start, **vehicle_options)  # type: ignore[arg-type]
    vehicle.settle()
    backend = _backend(vehicle)
    backend.reset("Alley_0", {"uav": start})
    return vehicle, backend


def test_the_reference_actions_fly_the_embedded_kinematics_within_the_arrival_tolerance() -> None:
    _, suite = load_suite(SUITE)
    episode = suite.episode("Alley_0-base-0000-sem")
    start = Pose(episode.start.x, episode.start.y, episode.start.z, episode.start.yaw)
    vehicle, backend = _placed(start)
    nominal = start
    for action in episode.reference.actions:
        nominal = target_pose(nominal, action)
        outcome = backend.execute("uav", action)
        assert not outcome.collided and not outcome.geofenced
        assert outcome.pose.distance_to(nominal.position) < 0.5
        assert abs(outcome.pose.yaw - nominal.yaw) < math.radians(7.0)
        assert vehicle.goals[-1] == nominal  # the goal is the nominal pose, not odometry's + step
    # Turns complete within the heading tolerance, and nothing was held.
    assert vehicle.holds == 0
    observed = backend.observe("uav")
    assert observed.pose == outcome.pose
    assert observed.sim_time_s == vehicle.stamp_s()
    assert observed.frames == {}  # the bridge relays the drivers' frames


def test_a_missed_arrival_holds_first_and_is_an_infrastructure_failure_after_the_allowance() -> (
    None
):
    vehicle, backend = _placed(PAD)
    vehicle.stall = True  # accepts goals and never moves (a motor that stops answering)
    began = vehicle.now()
    with pytest.raises(SimulatorFaultError, match=r"arrival missed: after 10\.5 s.*5\.00 m.*"
                       r"from the target \(tolerance 0\.5 m\).*; holding"):  # fmt: skip
        backend.execute("uav", Action("MoveForward", 5.0))
    assert vehicle.holds == 1
    # The allowance: 5 m at 1 m/s, times 1.5, plus 3 s to settle.
    assert vehicle.now() - began == pytest.approx(10.5, abs=0.1)


def test_a_slow_vehicle_gets_the_allowance_its_speed_cap_gives() -> None:
    start = PAD
    vehicle, backend = _placed(start, speed_m_s=0.4)  # the gate caps below what we ask
    with pytest.raises(SimulatorFaultError, match="arrival missed"):
        backend.execute("uav", Action("MoveForward", 5.0))
    vehicle, backend = _placed(start, speed_m_s=0.4)
    slower = _backend(vehicle, robot_speed_m_s=0.4)
    slower.reset("Alley_0", {"uav": start})
    assert not slower.execute("uav", Action("MoveForward", 5.0)).collided


@pytest.mark.parametrize(
    ("fault_class", "error", "fault"),
    [
        (FaultClass.INTERVENTION, SafetyInterventionError, "deadman_lost"),
        (FaultClass.INTERVENTION, SafetyInterventionError, "rc_takeover"),
        (FaultClass.INFRASTRUCTURE, SimulatorFaultError, "odometry_stale"),
    ],
)
def test_a_gate_fault_during_a_motion_ends_the_attempt_by_its_class(
    fault_class: FaultClass, error: type[Exception], fault: str
) -> None:
    vehicle, backend = _placed(PAD)
    vehicle.events.append(
        (vehicle.now() + 1.0, lambda: vehicle.raise_fault(fault_class, fault, "at 1 s"))
    )
    with pytest.raises(error, match=f"{fault}: at 1 s"):
        backend.execute("uav", Action("MoveForward", 5.0))
    # The gate held and stopped its keep-alive; the backend sends nothing more.
    assert len(vehicle.goals) == 1
    with pytest.raises(error):
        backend.execute("uav", Action("TurnLeft", 15.0))
    assert len(vehicle.goals) == 1


def test_a_fault_while_the_agent_thinks_is_reported_once_with_its_class() -> None:
    start = PAD
    vehicle = ScriptedVehicle(pose=start)
    vehicle.settle()
    faults: list[BackendFault] = []
    backend = _backend(vehicle, faults)
    vehicle.raise_fault(FaultClass.INTERVENTION, "estop", "before any episode")
    assert faults == []  # no episode runs: nothing to end
    vehicle.fault = None
    backend.reset("Alley_0", {"uav": start})
    vehicle.raise_fault(FaultClass.INTERVENTION, "low_battery", "24% < 30%")
    vehicle.raise_fault(FaultClass.INTERVENTION, "low_battery", "23% < 30%")
    assert faults == [
        BackendFault(
            agent="uav",
            reason="operator/safety intervention: low_battery: 24% < 30%",
            intervention=True,
        )
    ]


def test_stale_odometry_during_a_motion_holds_and_is_an_infrastructure_failure() -> None:
    vehicle, backend = _placed(PAD)
    vehicle.odometry_until_s = vehicle.now() + 1.0
    with pytest.raises(SimulatorFaultError, match=r"stale odometry: none for 1\.0\d s.*holding"):
        backend.execute("uav", Action("MoveForward", 5.0))
    assert vehicle.holds == 1


def test_a_refused_goal_inside_the_fence_holds_and_names_the_gate_s_reason() -> None:
    vehicle, backend = _placed(PAD)
    vehicle.refuse = "step 5.0 m exceeds the step-size cap 3.0 m"
    with pytest.raises(SimulatorFaultError, match=r"refused the goal .*step-size cap 3\.0 m"):
        backend.execute("uav", Action("MoveForward", 5.0))
    assert vehicle.holds == 1


def test_a_collision_signal_holds_and_the_step_collides_where_the_robot_stopped() -> None:
    vehicle, backend = _placed(PAD)
    vehicle.events.append((vehicle.now() + 1.5, lambda: setattr(vehicle, "contact", "contact")))
    outcome = backend.execute("uav", Action("MoveForward", 5.0))
    assert outcome.collided and outcome.collision_object == "contact"
    assert vehicle.holds == 1
    assert 0.5 < outcome.pose.distance_to(PAD.position) < 4.0
    assert outcome.pose == vehicle.pose


def test_an_operator_mark_while_the_agent_thinks_collides_the_next_action() -> None:
    vehicle, backend = _placed(PAD)
    vehicle.contact = "operator marked a collision"
    outcome = backend.execute("uav", Action("TurnLeft", 15.0))
    assert outcome.collided and outcome.collision_object == "operator marked a collision"
    assert vehicle.goals == []  # nothing was sent after the mark


def test_a_move_out_of_the_site_fence_stops_at_it_without_a_collision() -> None:
    # The hydrant pad, turned west: the fence's west edge (x = -48, margin 0.5) is 8.2 m away.
    start = Pose(-39.34, -7.18, 1.26, math.pi)
    vehicle, backend = _placed(start)
    backend.execute("uav", Action("MoveForward", 5.0))
    outcome = backend.execute("uav", Action("MoveForward", 5.0))
    assert outcome.geofenced and not outcome.collided
    assert vehicle.goals[-1].x == pytest.approx(-47.5, abs=0.06)
    assert outcome.pose.x > -48.0


def test_frames_that_never_come_after_an_arrival_are_an_infrastructure_failure() -> None:
    vehicle, backend = _placed(PAD)
    vehicle.frames_until_s = vehicle.now()
    with pytest.raises(SimulatorFaultError, match="no fresh frames within 2 s on /camera/color"):
        backend.execute("uav", Action("TurnLeft", 15.0))


def test_an_episode_starts_only_on_an_engaged_gate_with_odometry_in_the_site_s_scene() -> None:
    start = Pose(-13.09, 2.89, 1.38, 0.0)
    vehicle = ScriptedVehicle(pose=start, state=GateState.STANDBY)
    vehicle.settle()
    backend = _backend(vehicle)
    with pytest.raises(SimulatorFaultError, match="not engaged: the operator engages it"):
        backend.reset("Alley_0", {"uav": start})
    vehicle.state = GateState.READY
    vehicle.raise_fault(FaultClass.INTERVENTION, "estop", "latched")
    with pytest.raises(SafetyInterventionError, match="estop: latched"):
        backend.reset("Alley_0", {"uav": start})
    vehicle.fault = None
    with pytest.raises(UnknownSceneError, match="'Mall_0' is not the robot's site"):
        backend.reset("Mall_0", {"uav": start})
    silent = ScriptedVehicle(pose=start, odometry_until_s=-1.0)
    silent.settle()
    with pytest.raises(SimulatorFaultError, match="no odometry on vehicle/odom"):
        _backend(silent).reset("Alley_0", {"uav": start})
    with pytest.raises(SimulatorFaultError, match="has not been placed"):
        _backend(vehicle).execute("uav", Action("TurnLeft", 15.0))
    backend.reset("Alley_0", {"uav": start})
    with pytest.raises(InvalidActionError, match="cannot execute"):
        backend.execute("uav", Action("Hover"))


def test_the_backend_is_built_only_inside_the_bridge_for_a_site_s_suite(tmp_path: Path) -> None:
    options = BackendOptions(agents=["uav"], image_width=64, image_height=48, fov_deg=90.0,
                             parameters={"suite": "alley_rehearsal"})  # fmt: skip
    with pytest.raises(ConfigError, match="through the bridge's ROS transport"):
        RobotBackend.from_options(options)
    generated = BackendOptions(agents=["uav"], image_width=64, image_height=48, fov_deg=90.0,
                               parameters={"suite": "aerialdojo_mini"})  # fmt: skip
    with pytest.raises(ConfigError, match="not built from a surveyed site"):
        RobotBackend.from_options(generated)
