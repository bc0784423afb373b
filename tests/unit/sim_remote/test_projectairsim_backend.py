"""ProjectAirSimBackend against the fake server, through the unmodified ``projectairsim`` client.

What this proves: the backend's requests and subscriptions are ones the real client sends in
the real wire format (NNG Req/Rep services, Pair topics, msgpack frames), the scene config it
loads passes the client's own schema validation, poses cross the NED/map conversion both ways,
frames are matched to the pose that produced them and stamped with their capture time, a
collision_info message turns an action into a collision at the contact pose, and a server that
hangs or is absent becomes a ``SimulatorFaultError`` naming host and port, after which a reset
reconnects. What it does not prove: that a real server renders, or reports collisions of a
teleported non-physics drone exactly like the fake (see tests/fakes/projectairsim_server.py).

Runs in .venv-projectairsim (tools/bootstrap_backend.sh projectairsim); test_backend_venvs.py
runs this file there from the main test suite.
"""

from __future__ import annotations

import math
import socket
import time
from collections.abc import Iterator
from pathlib import Path

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

from aerialdojo.actions import Action
from aerialdojo.errors import ConfigError, SimulatorFaultError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.projectairsim import ProjectAirSimBackend
from aerialdojo.sim.remote.connection import CallPolicy
from aerialdojo.sim.remote.frames import map_to_ned
from aerialdojo.sim.remote.settings import ProjectAirSimSettings

INTERVAL_S = 1.0 / 15.0
INTERVAL_NS = round(INTERVAL_S * 1e9)
START = Pose(2.0, 3.0, 10.0, 0.0)  # 10 m up, facing +x (east)


def _backend(
    fake: FakeProjectAirSim, scene_dir: Path, timeout_s: float = 5.0, attempts: int = 2
) -> ProjectAirSimBackend:
    settings = ProjectAirSimSettings(
        host="127.0.0.1",
        topics_port=fake.topics_port,
        services_port=fake.services_port,
        scene_dir=str(scene_dir),
        capture_interval_s=INTERVAL_S,
        policy=CallPolicy(timeout_s=timeout_s, attempts=attempts, backoff_s=0.05),
    )
    return ProjectAirSimBackend(
        settings=settings, rigs={"uav": aerialdojo_uav_rig(16, 12)}, seconds_per_action=1.0
    )


@pytest.fixture
def fake() -> Iterator[FakeProjectAirSim]:
    # A wall across map y = 6..7 m (NED north), 50 m high.
    with FakeProjectAirSim(obstacles=(Box("wall", (6.0, 0.0, -50.0), (7.0, 10.0, 0.0)),)) as f:
        yield f


def _last_capture_before(seconds: float) -> float:
    return (round(seconds * 1e9) // INTERVAL_NS) * INTERVAL_NS / 1e9


def _assert_frames_show(observation, pose: Pose) -> None:
    north, east, down, yaw = map_to_ned(pose)
    for index, (name, frame) in enumerate(observation.frames.items()):
        assert frame.rgb.shape == (12, 16, 3) and frame.rgb.dtype == np.uint8
        assert tuple(frame.rgb[0, 0]) == expected_rgb((north, east, down), yaw, index), name
        expected_depth = -down if name == "down" else HORIZON_DEPTH_M
        assert frame.depth.dtype == np.float32
        assert frame.depth[5, 5] == pytest.approx(expected_depth, abs=0.05), name


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
        # Stamped with the capture time: the last 1/15 s capture of the first second.
        assert first.sim_time_s == _last_capture_before(1.0)

        moved = backend.execute("uav", Action("MoveForward", 3.0))
        assert not moved.collided
        assert (moved.pose.x, moved.pose.y) == (pytest.approx(5.0), pytest.approx(3.0))
        second = backend.observe("uav")
        _assert_frames_show(second, moved.pose)
        assert second.sim_time_s == _last_capture_before(2.0)

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
        cameras = fake._robots["uav"].cameras
        assert [c.sensor_id for c in cameras] == ["front", "left", "right", "down"]
        assert all(c.interval_ns == round(INTERVAL_S * 1e9) for c in cameras)
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
    backend = _backend(fake, scene_dir, timeout_s=1.0)
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
    settings = ProjectAirSimSettings(
        topics_port=port,
        services_port=port,
        scene_dir=str(scene_dir),
        policy=CallPolicy(timeout_s=1.0, attempts=2, backoff_s=0.05),
    )
    backend = ProjectAirSimBackend(
        settings=settings, rigs={"uav": aerialdojo_uav_rig(8, 8)}, seconds_per_action=1.0
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
            settings=ProjectAirSimSettings(scene_dir=str(directory)),
            rigs={"uav": aerialdojo_uav_rig(8, 8)},
            seconds_per_action=0.01,
        )
