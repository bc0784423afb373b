"""ProjectAirSimBackend against the fake server, through the unmodified ``projectairsim`` client.

What this proves: the backend's requests go out in the client's own framing and its topics in
the public server's (NNG Req/Rep services, pair1 polyamorous topics, msgpack frames packed as
core_sim's msgpack-c packs them), that a server of the other protocol generation is named as a
protocol mismatch within seconds, the scene config it
loads passes the client's own schema validation, poses cross the NED/map conversion both ways,
frames are matched to the pose that produced them and stamped with their capture time, a
collision_info message turns an action into a collision at the contact pose, and a server that
hangs or is absent becomes a ``SimulatorFaultError`` naming host and port, after which a reset
reconnects. The fake models the public server's behaviour where it differs from what the
backend first assumed (tests/fakes/projectairsim_server.py names the server file of each):
captures on Unreal frames with a strict interval, the sweep of a non-physics SetPose, 32FC1
depth in ``data_float`` with integral values as integers, no ``GetBuildCommitHash`` nor
``Unsubscribe`` service, per-connection subscriptions, a slow scene load. What it does not
prove: that a real server renders, nor its physics robots.

Runs in .venv-projectairsim (tools/bootstrap_backend.sh projectairsim) with whichever client
that venv holds (the public server's own, or PyPI's 1.1.0); test_backend_venvs.py runs this
file there from the main test suite.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip(
    "projectairsim",
    reason="needs .venv-projectairsim (tools/bootstrap_backend.sh projectairsim); "
    "tests/unit/sim_remote/test_backend_venvs.py runs this file there",
)

from fakes.projectairsim_scenes import write_scene_config
from fakes.projectairsim_server import (
    HORIZON_DEPTH_M,
    Box,
    FakeProjectAirSim,
    expected_rgb,
)
from projectairsim.utils import load_scene_config_as_dict

from aerialdojo.actions import Action
from aerialdojo.errors import ConfigError, SimulatorFaultError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.graph import load_config, node_specs
from aerialdojo.sim.backend import Observation, aerialdojo_uav_rig
from aerialdojo.sim.projectairsim import ProjectAirSimBackend
from aerialdojo.sim.remote.frames import map_to_ned
from aerialdojo.sim.remote.settings import ProjectAirSimSettings

CONFIG = Path(__file__).resolve().parents[3] / "config"
INTERVAL_S = 1.0 / 15.0
START = Pose(2.0, 3.0, 10.0, 0.0)  # 10 m up, facing +x (east)
#: A wall across map y = 6..7 m (NED north), 50 m high.
WALL = Box("wall", (6.0, 0.0, -50.0), (7.0, 10.0, 0.0))


def _backend(
    fake: FakeProjectAirSim,
    scene_dir: Path,
    *,
    seconds_per_action: float = 1.0,
    **parameters: Any,
) -> ProjectAirSimBackend:
    values = {
        "projectairsim_topics_port": fake.topics_port,
        "projectairsim_services_port": fake.services_port,
        "projectairsim_scene_dir": str(scene_dir),
        "capture_interval_s": INTERVAL_S,
        "server_timeout_s": 5.0,
        "server_attempts": 2,
        "frame_timeout_s": 5.0,
        **parameters,
    }
    return ProjectAirSimBackend(
        settings=ProjectAirSimSettings.from_parameters(values),
        rigs={"uav": aerialdojo_uav_rig(16, 12)},
        seconds_per_action=seconds_per_action,
    )


@pytest.fixture
def fake() -> Iterator[FakeProjectAirSim]:
    with FakeProjectAirSim(obstacles=(WALL,)) as server:
        yield server


def _assert_frames_show(observation: Observation, pose: Pose) -> None:
    north, east, down, yaw = map_to_ned(pose)
    for index, (name, frame) in enumerate(observation.frames.items()):
        assert frame.rgb.shape == (12, 16, 3) and frame.rgb.dtype == np.uint8
        assert tuple(frame.rgb[0, 0]) == expected_rgb((north, east, down), yaw, index), name
        expected_depth = -down if name == "down" else HORIZON_DEPTH_M
        assert frame.depth.dtype == np.float32
        assert frame.depth[5, 5] == pytest.approx(expected_depth, abs=0.05), name


def _assert_captured_between(observation: Observation, after_ns: int, until_ns: int) -> None:
    """The stamp is a capture time of this action: after its pose change, not after the
    clock stopped."""
    stamp_ns = round(observation.sim_time_s * 1e9)
    assert after_ns < stamp_ns <= until_ns, (after_ns, stamp_ns, until_ns)


def test_an_episode_moves_the_drone_and_frames_follow_at_capture_time(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir)
    try:
        assert backend.scenes() == ["Quarry", "Yard"]
        backend.reset("Yard", {"uav": START})
        first = backend.observe("uav")
        assert list(first.frames) == ["front", "left", "right", "down"]
        assert first.pose.x == pytest.approx(2.0) and first.pose.z == pytest.approx(10.0)
        _assert_frames_show(first, START)
        _assert_captured_between(first, 0, fake.sim_time_ns)

        clock = fake.sim_time_ns
        moved = backend.execute("uav", Action("MoveForward", 3.0))
        assert not moved.collided
        assert (moved.pose.x, moved.pose.y) == (pytest.approx(5.0), pytest.approx(3.0))
        second = backend.observe("uav")
        _assert_frames_show(second, moved.pose)
        _assert_captured_between(second, clock, fake.sim_time_ns)

        turned = backend.execute("uav", Action("TurnLeft", 15.0))
        assert turned.pose.yaw == pytest.approx(math.radians(15.0))
        _assert_frames_show(backend.observe("uav"), turned.pose)

        clock = fake.sim_time_ns
        backend.execute("uav", Action("Stop"))
        assert fake.sim_time_ns == clock, "Stop must not advance the clock"
    finally:
        backend.close()


def test_the_loaded_scene_has_a_steppable_clock_and_the_rig_at_15_fps(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir)
    try:
        backend.reset("Yard", {"uav": START})
        cameras = fake.cameras("uav")
        assert [c.sensor_id for c in cameras] == ["front", "left", "right", "down"]
        assert all(c.interval_s == pytest.approx(INTERVAL_S) for c in cameras)
        assert all((c.width, c.height) == (16, 12) and c.image_types == [0, 1] for c in cameras)
        assert [c.pitch_deg for c in cameras] == [0.0, 0.0, 0.0, -90.0]
    finally:
        backend.close()


def test_moving_through_an_obstacle_is_a_collision_at_the_contact_pose(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir)
    try:
        facing_wall = Pose(2.0, 3.0, 10.0, math.pi / 2.0)
        backend.reset("Yard", {"uav": facing_wall})
        outcome = backend.execute("uav", Action("MoveForward", 5.0))
        assert outcome.collided and outcome.collision_object == "wall"
        assert 3.0 < outcome.pose.y < 6.0, "stopped before the wall, after the start"
        _assert_frames_show(backend.observe("uav"), outcome.pose)
        clear = backend.execute("uav", Action("MoveUp", 1.0))
        assert not clear.collided
    finally:
        backend.close()


def test_a_hung_server_is_a_fault_naming_host_and_port_and_reset_reconnects(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir, server_timeout_s=1.0)
    try:
        backend.reset("Yard", {"uav": START})
        fake.stop_answering()
        started = time.monotonic()
        with pytest.raises(SimulatorFaultError, match=f"127.0.0.1:{fake.services_port}"):
            backend.execute("uav", Action("MoveUp", 1.0))
        assert time.monotonic() - started < 10.0
        with pytest.raises(SimulatorFaultError, match="not connected"):
            backend.observe("uav")
        fake.resume_answering()
        backend.reset("Yard", {"uav": START})
        assert backend.execute("uav", Action("MoveUp", 2.0)).pose.z == pytest.approx(12.0)
    finally:
        backend.close()


def test_no_server_is_a_fault_naming_host_and_port(scene_dir: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    values = {
        "projectairsim_topics_port": port,
        "projectairsim_services_port": port,
        "projectairsim_scene_dir": str(scene_dir),
        "server_timeout_s": 1.0,
        "server_attempts": 2,
    }
    backend = ProjectAirSimBackend(
        settings=ProjectAirSimSettings.from_parameters(values),
        rigs={"uav": aerialdojo_uav_rig(8, 8)},
        seconds_per_action=1.0,
    )
    with pytest.raises(SimulatorFaultError, match=f"ProjectAirSim at 127.0.0.1:{port} after 2"):
        backend.reset("Yard", {"uav": START})


def test_bad_scenes_and_settings_are_refused_with_the_file_named(
    fake: FakeProjectAirSim, tmp_path: Path
) -> None:
    directory = tmp_path / "configs"
    write_scene_config(directory, "Crew", actor="Drone1")
    nameless = write_scene_config(directory, "Nameless")
    nameless.write_text(nameless.read_text().replace('"id": "Nameless",', ""))
    backend = _backend(fake, directory)
    try:
        with pytest.raises(ConfigError, match=r"scene_Nameless\.jsonc .*'id' is a required"):
            backend.reset("Nameless", {"uav": START})
        with pytest.raises(UnknownSceneError, match="no ProjectAirSim scene 'Mall_0'"):
            backend.reset("Mall_0", {"uav": START})
        with pytest.raises(ConfigError, match=r"scene_Crew\.jsonc: no robot actor named 'uav'"):
            backend.reset("Crew", {"uav": START})
    finally:
        backend.close()
    with pytest.raises(ConfigError, match="projectairsim_scene_dir"):
        _backend(fake, tmp_path / "missing")
    with pytest.raises(ConfigError, match="shorter than capture_interval_s"):
        ProjectAirSimBackend(
            settings=ProjectAirSimSettings.from_parameters(
                {"projectairsim_scene_dir": str(directory)}
            ),
            rigs={"uav": aerialdojo_uav_rig(8, 8)},
            seconds_per_action=0.01,
        )


# -- what the real server does that the backend did not expect (issue 14) ------------------


def test_an_action_as_long_as_the_capture_interval_still_gets_fresh_frames(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    # Captures need strictly more than the interval since the last one (UnrealCamera.cpp):
    # a 60 ms action on a 3 ms clock ends exactly one interval after the previous capture,
    # so it captures nothing by itself.
    backend = _backend(
        fake, scene_dir, seconds_per_action=0.06, capture_interval_s=0.06, frame_timeout_s=3.0
    )
    try:
        backend.reset("Yard", {"uav": START})
        _assert_frames_show(backend.observe("uav"), START)
        for action in (Action("MoveForward", 1.0), Action("TurnLeft", 15.0), Action("MoveUp", 2.0)):
            clock = fake.sim_time_ns
            outcome = backend.execute("uav", action)
            observation = backend.observe("uav")
            _assert_frames_show(observation, outcome.pose)
            _assert_captured_between(observation, clock, fake.sim_time_ns)
    finally:
        backend.close()


def test_a_reset_across_a_wall_renders_from_the_start_it_reports(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir)
    try:
        backend.reset("Yard", {"uav": START})  # north 3, south of the wall
        beyond = Pose(2.0, 9.0, 10.0, 0.0)  # north 9, beyond it
        backend.reset("Yard", {"uav": beyond})
        observation = backend.observe("uav")
        assert observation.pose.y == pytest.approx(9.0)
        _assert_frames_show(observation, beyond)
        assert fake.rendered_position("uav") == pytest.approx(map_to_ned(beyond)[:3])
    finally:
        backend.close()


def test_a_server_of_the_other_protocol_generation_is_named_within_seconds(
    scene_dir: Path,
) -> None:
    # NNG refuses a pair1 client of a pair0 server silently: the dial succeeds, then every
    # subscription stalls. The topic round trip at connection names it instead.
    with FakeProjectAirSim(topics_protocol="pair0") as server:
        backend = _backend(server, scene_dir)
        started = time.monotonic()
        with pytest.raises(ConfigError, match="client/server protocol mismatch") as refused:
            backend.reset("Yard", {"uav": START})
        assert time.monotonic() - started < 10.0
        assert f"127.0.0.1:{server.services_port}" in str(refused.value)
        assert server.loads == 0, "nothing was loaded on a server the topics cannot reach"
        assert "/Sim/GetBuildCommitHash" not in server.requests


def test_only_the_public_servers_services_are_asked_for_and_connections_are_closed(
    fake: FakeProjectAirSim, scene_dir: Path
) -> None:
    backend = _backend(fake, scene_dir)
    try:
        backend.reset("Yard", {"uav": START})
        backend.reset("Quarry", {"uav": START})  # a second load unsubscribes with a frame
        _assert_frames_show(backend.observe("uav"), START)
    finally:
        backend.close()
    served = ("/Sim/LoadScene", "/Sim/Yard/", "/Sim/Quarry/", "/Sim/SceneBasicDrone/")
    assert all(r.startswith(served) for r in fake.requests), sorted(set(fake.requests))
    deadline = time.monotonic() + 5.0
    while fake.open_pipes and time.monotonic() < deadline:
        time.sleep(0.01)
    assert fake.open_pipes == 0, "the backend left connections open"


def test_a_scene_load_longer_than_one_request_timeout_is_waited_for(scene_dir: Path) -> None:
    with FakeProjectAirSim(load_delay_s=1.5) as server:
        backend = _backend(server, scene_dir, server_timeout_s=1.0, scene_load_timeout_s=10.0)
        try:
            backend.reset("Yard", {"uav": START})
            _assert_frames_show(backend.observe("uav"), START)
        finally:
            backend.close()


def test_a_robot_config_without_link_collision_still_collides(
    fake: FakeProjectAirSim, tmp_path: Path
) -> None:
    # ProjectAirSim's own robot_quadrotor_nonphysics.jsonc turns the frame's collision off:
    # its SetPose moves would then never sweep (UnrealRobot.cpp IsLinkCollisionEnabled).
    directory = tmp_path / "sim_config"
    write_scene_config(directory, "Yard", link_collision=False)
    backend = _backend(fake, directory)
    try:
        backend.reset("Yard", {"uav": Pose(2.0, 3.0, 10.0, math.pi / 2.0)})
        outcome = backend.execute("uav", Action("MoveForward", 5.0))
        assert outcome.collided and outcome.collision_object == "wall"
    finally:
        backend.close()


def test_the_shipped_scene_and_robot_configs_hold_the_rig_the_bridge_loads() -> None:
    config = load_config(CONFIG / "projectairsim.yaml")
    bridge = next(spec for spec in node_specs(config) if spec.name == "sim_bridge").parameters
    scene_dir = CONFIG / "projectairsim"
    # The client's own loader and schema check accept the shipped files as they are.
    shipped, _ = load_scene_config_as_dict("scene_Blocks.jsonc", str(scene_dir))
    settings = ProjectAirSimSettings.from_parameters(
        {**bridge, "projectairsim_scene_dir": str(scene_dir)}
    )
    rig = aerialdojo_uav_rig(bridge["image_width"], bridge["image_height"], bridge["fov_deg"])
    backend = ProjectAirSimBackend(
        settings=settings, rigs={"uav": rig}, seconds_per_action=bridge["seconds_per_action"]
    )
    assert backend.scenes() == ["Blocks"]
    patched = backend._scene_config("Blocks", {})
    robot, loaded = shipped["actors"][0]["robot-config"], patched["actors"][0]["robot-config"]
    assert robot["physics-type"] == loaded["physics-type"] == "non-physics"
    assert robot["links"][0]["collision"]["enabled"] is True
    assert [_numbers(sensor) for sensor in robot["sensors"]] == [
        _numbers(sensor) for sensor in loaded["sensors"]
    ], "the shipped cameras differ from what the bridge loads for config/projectairsim.yaml"


def _numbers(sensor: dict[str, Any]) -> dict[str, Any]:
    """A camera config with its origin as numbers and without what the bridge leaves alone."""
    origin = {key: [float(v) + 0.0 for v in text.split()] for key, text in sensor["origin"].items()}
    kept = {k: v for k, v in sensor.items() if k not in ("origin", "parent-link")}
    return {**kept, "origin": origin, "capture-interval": round(sensor["capture-interval"], 9)}
