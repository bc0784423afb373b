"""CarlaAirBackend: the UAV through the unmodified ``airsim`` client against the fake AirSim
server (real msgpack-rpc over TCP), the world and the UGV through CARLA stand-ins.

What this proves: AirSim requests go out and answers come back in the real wire format and are
decoded (BGR bytes, float depth, poses, collisions); poses cross the Town10HD offset and the
CARLA mirror both ways; the world is switched to synchronous mode with the configured tick and
given back in asynchronous mode; only the calling thread ticks, while images are fetched on
their own thread and client, so a server that renders only on ticks (CARLA-Air in synchronous
mode) does not deadlock the bridge; frames carry their capture time; a hung or absent AirSim
becomes a SimulatorFaultError naming host and port. What it does not prove: anything about
LibCarla's wire protocol (CARLA's world, actors and sensors are stand-ins: tests/fakes/
carla_standin.py, built from the real carla value types), nor real rendering or physics.

Runs in .venv-carla-air (tools/bootstrap_backend.sh carla-air); test_backend_venvs.py runs
this file there from the main test suite.
"""

from __future__ import annotations

import logging
import math
import socket
import threading
import time
from collections.abc import Iterator

import numpy as np
import pytest

pytest.importorskip(
    "airsim",
    reason="needs .venv-carla-air (tools/bootstrap_backend.sh carla-air); "
    "tests/unit/sim_remote/test_backend_venvs.py runs this file there",
)

import airsim
from fakes import carla_standin
from fakes.airsim_server import HORIZON_DEPTH_M, Box, FakeAirSim, expected_rgb
from msgpackrpc.error import TimeoutError as RpcTimeoutError

from aerialdojo.actions import Action
from aerialdojo.errors import (
    ConfigError,
    InvalidActionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec, aerialdojo_uav_rig
from aerialdojo.sim.carla_air import CarlaAirBackend
from aerialdojo.sim.remote.connection import CallPolicy
from aerialdojo.sim.remote.frames import TOWN10HD_OFFSET
from aerialdojo.sim.remote.settings import CarlaAirSettings

# msgpack-rpc-python passes msgpack 0.5 the encoding argument it deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:encoding is deprecated:PendingDeprecationWarning")

TICK_S = 0.05
UAV_START = Pose(10.0, -20.0, 30.0, 0.0)  # map frame: CARLA (10, 20, 30)
UGV_START = Pose(4.0, 0.0, 0.0, 0.0)  # on lane 1 of the stand-in street, heading +x
UGV_RIG = [CameraSpec(name="front", width=10, height=8, fov_deg=90.0)]


def _settings(airsim_port: int, timeout_s: float = 5.0, attempts: int = 2) -> CarlaAirSettings:
    return CarlaAirSettings(
        airsim_port=airsim_port,
        fixed_delta_s=TICK_S,
        policy=CallPolicy(timeout_s=timeout_s, attempts=attempts, backoff_s=0.05),
    )


def _backend(fake: FakeAirSim, world: carla_standin.World, **rigs) -> CarlaAirBackend:
    return CarlaAirBackend(
        settings=_settings(fake.port),
        rigs=rigs or {"uav": aerialdojo_uav_rig(16, 12)},
        seconds_per_action=1.0,
        carla_client=carla_standin.Client(world),
    )


@pytest.fixture
def fake() -> Iterator[FakeAirSim]:
    # A tower 7-9 m ahead of the UAV's start in AirSim NED (north = CARLA x + 172.2).
    with FakeAirSim(
        obstacles=(Box("tower", (189.2, -170.0, -100.0), (191.2, -160.0, 0.0)),),
        render_on_tick=True,
    ) as server:
        yield server


@pytest.fixture
def world(fake: FakeAirSim) -> carla_standin.World:
    return carla_standin.World(airsim=fake, obstacles=(("bollard", (13.0, -1.0), (14.0, 1.0)),))


def test_the_uav_flies_in_airsim_frame_and_frames_follow_at_capture_time(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        # airsim = (carla_x + 172.20, carla_y - 183.86, -carla_z + 27.45), carla_y = -map_y
        assert fake.vehicles[""].position == pytest.approx((182.20, -163.86, -2.55))
        observation = backend.observe("uav")
        assert observation.pose.x == pytest.approx(10.0) and observation.pose.y == pytest.approx(
            -20.0
        )
        _assert_uav_frames(observation, fake)
        assert observation.sim_time_s == pytest.approx(world.elapsed)

        moved = backend.execute("uav", Action("MoveForward", 3.0))
        assert not moved.collided and moved.pose.x == pytest.approx(13.0)
        assert world.frame >= 1 + 20, "one second of 0.05 s ticks"
        after = backend.observe("uav")
        _assert_uav_frames(after, fake)
        assert after.sim_time_s > observation.sim_time_s + 1.0 - 1e-9

        turned = backend.execute("uav", Action("TurnLeft", 15.0))
        assert turned.pose.yaw == pytest.approx(math.radians(15.0))
    finally:
        backend.close()


def _assert_uav_frames(observation, fake: FakeAirSim) -> None:
    vehicle = fake.vehicles[""]
    for name, frame in observation.frames.items():
        assert frame.rgb.shape == (12, 16, 3)
        assert tuple(frame.rgb[0, 0]) == expected_rgb(vehicle.position, vehicle.yaw, name)
        expected = -vehicle.position[2] if name == "down" else HORIZON_DEPTH_M
        assert frame.depth.shape == (12, 16) and frame.depth[3, 3] == pytest.approx(expected)


def test_images_are_fetched_off_the_only_thread_that_ticks(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # The model of the deadlock is real: asked on the ticking thread, images never come.
    naive = airsim.MultirotorClient(ip="127.0.0.1", port=fake.port, timeout_value=1)
    with pytest.raises(RpcTimeoutError):
        naive.simGetImages([airsim.ImageRequest("front", airsim.ImageType.Scene, False, False)])
    naive.client.close()

    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        for _ in range(3):
            backend.observe("uav")
        assert world.tick_threads == {threading.current_thread().name}
    finally:
        backend.close()


def test_the_world_is_synchronous_while_bridged_and_asynchronous_after(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, uav=aerialdojo_uav_rig(8, 8), ugv=UGV_RIG)
    backend.reset("Town10HD", {"uav": UAV_START, "ugv": UGV_START})
    assert world.settings.synchronous_mode and world.settings.fixed_delta_seconds == TICK_S
    spawned = world.alive_actors()
    assert sorted(actor.type_id for actor in spawned) == [
        "sensor.camera.depth",
        "sensor.camera.rgb",
        "sensor.other.collision",
        "vehicle.tesla.model3",
    ]
    backend.close()
    assert not world.settings.synchronous_mode
    assert world.settings_history[-1][0] is False
    assert world.alive_actors() == []


def test_the_uav_stops_at_an_obstacle_with_a_collision(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        outcome = backend.execute("uav", Action("MoveForward", 5.0))
        assert not outcome.collided
        hit = backend.execute("uav", Action("MoveForward", 5.0))
        assert hit.collided and hit.collision_object == "tower"
        assert 15.0 < hit.pose.x < 17.0
        assert not backend.execute("uav", Action("MoveUp", 1.0)).collided, "old hits are old"
    finally:
        backend.close()


def test_the_ugv_drives_on_the_road_sees_through_carla_cameras_and_collides(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, ugv=UGV_RIG)
    try:
        backend.reset("Town10HD", {"ugv": UGV_START})
        observation = backend.observe("ugv")
        front = observation.frames["front"]
        transform = world.alive_actors()[0].get_transform()
        assert tuple(front.rgb[0, 0]) == carla_standin.expected_ground_rgb(transform, "front")
        assert front.depth[0, 0] == pytest.approx(carla_standin.GROUND_VIEW_DEPTH_M, abs=1e-3)
        assert observation.sim_time_s == pytest.approx(world.elapsed)

        moved = backend.execute("ugv", Action("MoveForward", 5.0))
        assert not moved.collided and moved.pose.x == pytest.approx(9.0)
        turned = backend.execute("ugv", Action("TurnLeft", 15.0))
        assert turned.pose.yaw == pytest.approx(math.radians(15.0))
        # Turning left in the map is turning towards -y in CARLA: yaw -15 deg there.
        assert world.alive_actors()[0].get_transform().rotation.yaw == pytest.approx(-15.0)
        backend.execute("ugv", Action("TurnRight", 15.0))
        with pytest.raises(InvalidActionError, match="drives on the ground"):
            backend.execute("ugv", Action("MoveUp", 1.0))
        hit = backend.execute("ugv", Action("MoveForward", 5.0))
        assert hit.collided and hit.collision_object == "bollard"
        assert 9.0 < hit.pose.x < 13.0
    finally:
        backend.close()


def test_the_road_graph_follows_the_lanes_in_the_map_frame(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        graph = backend.road_graph(spacing_m=2.0)
        assert len(graph.nodes) == 2 * 21
        assert {y for _, y, _ in graph.nodes} == {0.0, -3.5}, "CARLA y mirrored"
        successors: dict[int, list[int]] = {}
        for start, end in graph.edges:
            successors.setdefault(start, []).append(end)
        assert all(len(ends) == 1 for ends in successors.values()) and len(successors) == 42
        first = graph.nodes.index((0.0, 0.0, 0.0))
        assert graph.nodes[successors[first][0]] == (2.0, 0.0, 0.0)
    finally:
        backend.close()


def test_a_hung_airsim_is_a_fault_naming_host_and_port_and_reset_reconnects(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = CarlaAirBackend(
        settings=_settings(fake.port, timeout_s=1.0),
        rigs={"uav": aerialdojo_uav_rig(8, 8)},
        seconds_per_action=1.0,
        carla_client=carla_standin.Client(world),
    )
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        fake.stop_answering()
        started = time.monotonic()
        with pytest.raises(SimulatorFaultError, match=f"AirSim at 127.0.0.1:{fake.port}"):
            backend.execute("uav", Action("MoveUp", 1.0))
        assert time.monotonic() - started < 10.0
        fake.resume_answering()
        backend.reset("Town10HD", {"uav": UAV_START})
        assert backend.execute("uav", Action("MoveUp", 1.0)).pose.z == pytest.approx(31.0)
    finally:
        backend.close()


def test_no_airsim_server_is_a_fault_naming_host_and_port(world: carla_standin.World) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    backend = CarlaAirBackend(
        settings=_settings(port, timeout_s=1.0),
        rigs={"uav": aerialdojo_uav_rig(8, 8)},
        seconds_per_action=1.0,
        carla_client=carla_standin.Client(world),
    )
    with pytest.raises(SimulatorFaultError, match=f"AirSim at 127.0.0.1:{port} after 2 tries"):
        backend.reset("Town10HD", {"uav": UAV_START})


def test_wrong_maps_scenes_agents_and_versions(
    fake: FakeAirSim, caplog: pytest.LogCaptureFixture
) -> None:
    other = carla_standin.World(map_name="Carla/Maps/Town03", airsim=fake)
    backend = _backend(fake, other)
    with pytest.raises(ConfigError, match=r"'Town10HD' but CARLA at 127\.0\.0\.1:2000 runs"):
        backend.reset("Town10HD", {"uav": UAV_START})
    with pytest.raises(UnknownSceneError, match="not 'Town03'"):
        backend.reset("Town03", {"uav": UAV_START})
    with pytest.raises(ConfigError, match=r"agents are uav and ugv; got \['boat'\]"):
        CarlaAirBackend(settings=_settings(fake.port), rigs={"boat": UGV_RIG}, seconds_per_action=1)

    older = carla_standin.World(airsim=fake)
    backend = CarlaAirBackend(
        settings=_settings(fake.port),
        rigs={"uav": aerialdojo_uav_rig(8, 8)},
        seconds_per_action=1.0,
        carla_client=carla_standin.Client(older, server_version="0.9.15"),
    )
    with caplog.at_level(logging.WARNING):
        backend.reset("Town10HD", {"uav": UAV_START})
    backend.close()
    assert any(
        "0.9.15 differs from the tested 0.9.16; expect" in r.getMessage() for r in caplog.records
    )


def test_depth_of_the_default_offset_is_town10hd() -> None:
    assert (TOWN10HD_OFFSET.dx, TOWN10HD_OFFSET.dy, TOWN10HD_OFFSET.dz) == (172.20, -183.86, 27.45)
    assert np.isfinite(TOWN10HD_OFFSET.dz)
