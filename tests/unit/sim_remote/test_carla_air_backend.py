"""CarlaAirBackend: the UAV through the unmodified ``airsim`` client against the fake AirSim
server (real msgpack-rpc over TCP), the world and the UGV through CARLA stand-ins.

What this proves: AirSim requests go out and answers come back in the real wire format and are
decoded (BGR bytes, float depth, poses, collisions); poses cross the Town10HD offset and the
CARLA mirror both ways; the world is switched to synchronous mode with the configured tick and
given back in asynchronous mode; only the calling thread ticks, while images are fetched on
their own thread and client, so a server that renders only on ticks (CARLA-Air in synchronous
mode) does not deadlock the bridge; a hung or absent AirSim becomes a SimulatorFaultError naming
host and port. The fakes model what CARLA-Air does where it differs from what the backend first
assumed (each behaviour names its source file in tests/fakes/): cameras, sizes and physics
engine from AirSim's settings file, gravity after a teleport, AirSim's epoch clock, the ground
clamp, CARLA teleports without a sweep, the launcher's asynchronous traffic, actors that outlive
a fault, a source-built server. What it does not prove: anything about LibCarla's wire protocol
(CARLA's world, actors and sensors are stand-ins built from the real carla value types), nor
real rendering or physics.

Runs in .venv-carla-air (tools/bootstrap_backend.sh carla-air); test_backend_venvs.py runs
this file there from the main test suite.
"""

from __future__ import annotations

import logging
import math
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip(
    "airsim",
    reason="needs .venv-carla-air (tools/bootstrap_backend.sh carla-air); "
    "tests/unit/sim_remote/test_backend_venvs.py runs this file there",
)

import airsim
import carla
from fakes import carla_standin
from fakes.airsim_server import HORIZON_DEPTH_M, Box, FakeAirSim, expected_rgb
from msgpackrpc.error import TimeoutError as RpcTimeoutError
from PIL import Image

from aerialdojo import doctor
from aerialdojo.actions import Action
from aerialdojo.agos.planning import UGV_HEIGHT_M, drive_to, road_waypoint_id
from aerialdojo.agos.sensors import RING_VIEWS
from aerialdojo.agos.worlds import town_map
from aerialdojo.errors import (
    ConfigError,
    InvalidActionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import byte_buffer_of
from aerialdojo.protocols import load_suite as load_any_suite
from aerialdojo.server_survey import DEFAULT_LANDMARKS, DEFAULT_TARGETS
from aerialdojo.sim.backend import CameraSpec, aerialdojo_uav_rig
from aerialdojo.sim.carla_air import SPAWN_LIFT_M, CarlaAirBackend, next_reply_wait
from aerialdojo.sim.clock import BridgeClock
from aerialdojo.sim.remote.airsim_settings import settings_for_rig
from aerialdojo.sim.remote.airsim_wire import AirSimImageChannel
from aerialdojo.sim.remote.rigs import benchmark_rigs
from aerialdojo.sim.remote.settings import CarlaAirSettings
from aerialdojo.sites.build import build_site_suite
from aerialdojo.sites.from_server import SurveyOptions, survey_server
from aerialdojo.sites.site import load_site
from aerialdojo.spawns import SpawnedObject
from aerialdojo.tasks.suite import resolve_suite

# msgpack-rpc-python passes msgpack 0.5 the encoding argument it deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:encoding is deprecated:PendingDeprecationWarning")

TICK_S = 0.05
Car, Buildings = carla.CityObjectLabel.Car, carla.CityObjectLabel.Buildings
UAV_START = Pose(10.0, -20.0, 30.0, 0.0)  # map frame: CARLA (10, 20, 30)
UGV_START = Pose(4.0, 0.0, 0.0, 0.0)  # on lane 1 of the stand-in street, heading +x
UGV_RIG = [CameraSpec(name="front", width=10, height=8, fov_deg=90.0)]
UAV_RIG = aerialdojo_uav_rig(16, 12)
#: Town10HD: the ground (CARLA z = 0) is at AirSim down = 27.45.
GROUND_DOWN = 27.45


def _without_physics_engine(settings: dict[str, Any]) -> dict[str, Any]:
    del settings["PhysicsEngineName"]
    return settings


def _backend(
    fake: FakeAirSim,
    world: carla_standin.World,
    rigs: dict[str, list[CameraSpec]] | None = None,
    *,
    client: carla_standin.Client | None = None,
    **parameters: Any,
) -> CarlaAirBackend:
    values = {
        "airsim_port": fake.port,
        "carla_air_fixed_delta_s": TICK_S,
        "server_timeout_s": 5.0,
        "server_attempts": 2,
        "frame_timeout_s": 5.0,
        **parameters,
    }
    return CarlaAirBackend(
        settings=CarlaAirSettings.from_parameters(values),
        rigs=rigs or {"uav": UAV_RIG},
        seconds_per_action=1.0,
        carla_client=client or carla_standin.Client(world),
    )


@pytest.fixture
def fake() -> Iterator[FakeAirSim]:
    # A tower 7-9 m ahead of the UAV's start in AirSim NED (north = CARLA x + 172.2).
    tower = Box("tower", (189.2, -170.0, -100.0), (191.2, -160.0, GROUND_DOWN))
    with FakeAirSim(settings_for_rig(UAV_RIG), (tower,), ground_down=GROUND_DOWN) as server:
        yield server


@pytest.fixture
def world(fake: FakeAirSim) -> carla_standin.World:
    bollard = carla_standin.Obstacle("bollard", (13.0, -1.0, 0.0), (14.0, 1.0, 1.2))
    return carla_standin.World(airsim=fake, obstacles=(bollard,))


def _assert_uav_frames(observation, fake: FakeAirSim) -> None:
    vehicle = fake.vehicle()
    for name, frame in observation.frames.items():
        assert frame.rgb.shape == (12, 16, 3)
        assert tuple(frame.rgb[0, 0]) == expected_rgb(vehicle.position, vehicle.yaw, name)
        expected = GROUND_DOWN - vehicle.position[2] if name == "down" else HORIZON_DEPTH_M
        assert frame.depth.shape == (12, 16) and frame.depth[3, 3] == pytest.approx(expected)


def test_the_uav_flies_in_airsim_frame_and_frames_follow(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        # airsim = (carla_x + 172.20, carla_y - 183.86, -carla_z + 27.45), carla_y = -map_y
        assert fake.vehicle().position == pytest.approx((182.20, -163.86, -2.55))
        observation = backend.observe("uav")
        assert observation.pose.x == pytest.approx(10.0)
        assert observation.pose.y == pytest.approx(-20.0)
        _assert_uav_frames(observation, fake)

        moved = backend.execute("uav", Action("MoveForward", 3.0))
        assert not moved.collided and moved.pose.x == pytest.approx(13.0)
        assert world.frame >= 1 + 20, "one second of 0.05 s ticks"
        _assert_uav_frames(backend.observe("uav"), fake)

        turned = backend.execute("uav", Action("TurnLeft", 15.0))
        assert turned.pose.yaw == pytest.approx(math.radians(15.0))
    finally:
        backend.close()


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


def test_no_tick_follows_an_answer_that_has_started(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # A large set's answer is long on the wire (megabytes at 640²): ticking again while it
    # arrived cost a frame each 50 ms and stamped the set with a later tick than the one that
    # rendered it (1.8-2.3 ticks a set at 640² in benchmarks/bridge_rate.py). Once its first
    # bytes are in, the backend ticks no more. (At most two ticks a set: a request the server
    # reads only after the first tick renders on the second.)
    fake.answer_transit_s = 0.5
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        for _ in range(3):
            frame = world.frame
            backend.observe("uav")
            assert world.frame - frame <= 2
    finally:
        backend.close()


@pytest.mark.parametrize(
    ("started_after_s", "wait_s"), [(0.004, 0.05), (0.1, 0.15), (0.2, 0.3), (9.0, 5.0)]
)
def test_the_wait_before_another_tick_follows_the_last_answers_start(
    started_after_s: float, wait_s: float
) -> None:
    # At least 50 ms, half as long again as the last answer took to start, at most the frame
    # timeout (5 s here).
    assert next_reply_wait(started_after_s, 5.0) == pytest.approx(wait_s)


def test_the_bridges_frames_are_what_the_airsim_client_decoded_to_before(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # The backend reads the reply itself (airsim_wire); the images and depth must be the
    # bytes the client's own unpacking gave, through the decoding of before (Python floats
    # read into doubles, cast to float32), for a reply of the same server state.
    backend = _backend(fake, world)
    client = airsim.MultirotorClient(ip="127.0.0.1", port=fake.port, timeout_value=5)
    try:
        backend.reset("Town10HD", {"uav": Pose(10.0, -20.0, 30.1, 0.0)})
        observation = backend.observe("uav")
        fake.render_on_tick = False
        requests = [
            airsim.ImageRequest(spec.name, image_type, image_type == airsim.ImageType.DepthPlanar)
            for spec in UAV_RIG
            for image_type in (airsim.ImageType.Scene, airsim.ImageType.DepthPlanar)
        ]
        responses = client.simGetImages(requests)
        for index, spec in enumerate(UAV_RIG):
            colour, depth = responses[2 * index], responses[2 * index + 1]
            bgr = np.frombuffer(colour.image_data_uint8, np.uint8).reshape(12, 16, 3)
            metres = np.array(depth.image_data_float, np.float64).astype(np.float32)
            frame = observation.frames[spec.name]
            assert frame.rgb.tobytes() == np.ascontiguousarray(bgr[:, :, ::-1]).tobytes()
            assert frame.depth.tobytes() == metres.reshape(12, 16).tobytes()
            # Received into buffers an image message takes as they are: no copy to DDS.
            assert byte_buffer_of(frame.rgb) is not None
            assert byte_buffer_of(frame.depth) is not None
        # 30.1 m down, which float32 cannot hold: both round it alike.
        below = GROUND_DOWN - fake.vehicle().position[2]
        assert observation.frames["down"].depth[0, 0] == np.float32(below)
        assert float(np.float32(below)) != below
    finally:
        client.client.close()
        backend.close()


def test_an_image_request_is_on_the_wire_when_send_image_request_returns(
    fake: FakeAirSim,
) -> None:
    # The backend ticks as soon as its image channel's send returns, so the request must be
    # written by then.
    channel = AirSimImageChannel("127.0.0.1", fake.port, timeout_s=5.0)
    try:
        request = airsim.ImageRequest("front", airsim.ImageType.Scene, False, False)
        channel.send_image_request([request], "")
        deadline = time.monotonic() + 5.0
        while "simGetImages" not in fake.calls and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "simGetImages" in fake.calls, "the request stayed in the channel"
    finally:
        channel.close()


def test_an_image_request_is_on_the_wire_when_call_async_returns(fake: FakeAirSim) -> None:
    # benchmarks/bridge_rate.py's lock-step loop ticks as soon as call_async returns, so the
    # client must have written the request by then, not when its loop next runs (tornado's
    # IOStream.write sends at once).
    client = airsim.MultirotorClient(ip="127.0.0.1", port=fake.port, timeout_value=5)
    try:
        client.ping()
        request = airsim.ImageRequest("front", airsim.ImageType.Scene, False, False)
        client.client.call_async("simGetImages", [request], "", False)
        deadline = time.monotonic() + 5.0
        while "simGetImages" not in fake.calls and time.monotonic() < deadline:
            time.sleep(0.01)
        assert "simGetImages" in fake.calls, "the request stayed in the client"
    finally:
        client.client.close()


def test_the_world_is_synchronous_while_bridged_and_asynchronous_after(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UGV_RIG})
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


def test_the_ugv_drives_on_the_road_and_sees_through_carla_cameras(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"ugv": UGV_RIG})
    try:
        backend.reset("Town10HD", {"ugv": UGV_START})
        observation = backend.observe("ugv")
        front = observation.frames["front"]
        vehicle = next(a for a in world.alive_actors() if a.type_id.startswith("vehicle."))
        transform = vehicle.get_transform()
        assert tuple(front.rgb[0, 0]) == carla_standin.expected_ground_rgb(transform, "front")
        assert front.depth[0, 0] == pytest.approx(carla_standin.GROUND_VIEW_DEPTH_M, abs=1e-3)
        assert observation.sim_time_s == pytest.approx(world.elapsed)

        moved = backend.execute("ugv", Action("MoveForward", 5.0))
        assert not moved.collided and moved.pose.x == pytest.approx(9.0)
        turned = backend.execute("ugv", Action("TurnLeft", 15.0))
        assert turned.pose.yaw == pytest.approx(math.radians(15.0))
        # Turning left in the map is turning towards -y in CARLA: yaw -15 deg there.
        assert vehicle.get_transform().rotation.yaw == pytest.approx(-15.0)
        backend.execute("ugv", Action("TurnRight", 15.0))
        with pytest.raises(InvalidActionError, match="drives on the ground"):
            backend.execute("ugv", Action("MoveUp", 1.0))
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
    backend = _backend(fake, world, server_timeout_s=1.0, frame_timeout_s=1.0)
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
        settings=CarlaAirSettings.from_parameters(
            {"airsim_port": port, "server_timeout_s": 1.0, "server_attempts": 2}
        ),
        rigs={"uav": aerialdojo_uav_rig(8, 8)},
        seconds_per_action=1.0,
        carla_client=carla_standin.Client(world),
    )
    with pytest.raises(SimulatorFaultError, match=f"AirSim at 127.0.0.1:{port} after 2 tries"):
        backend.reset("Town10HD", {"uav": UAV_START})


def test_wrong_maps_scenes_agents_and_versions(
    fake: FakeAirSim, caplog: pytest.LogCaptureFixture
) -> None:
    other = carla_standin.World(map_name="Town03", airsim=fake)
    backend = _backend(fake, other)
    with pytest.raises(ConfigError, match=r"'Town10HD' but CARLA at 127\.0\.0\.1:2000 runs"):
        backend.reset("Town10HD", {"uav": UAV_START})
    with pytest.raises(UnknownSceneError, match="not 'Town03'"):
        backend.reset("Town03", {"uav": UAV_START})
    with pytest.raises(ConfigError, match=r"agents are uav and ugv; got \['boat'\]"):
        _backend(fake, other, {"boat": UGV_RIG})

    older = carla_standin.World(airsim=fake)
    client = carla_standin.Client(older, server_version="0.9.15", client_version="0.9.16")
    backend = _backend(fake, older, client=client)
    with caplog.at_level(logging.WARNING):
        backend.reset("Town10HD", {"uav": UAV_START})
    backend.close()
    assert any(
        "0.9.15 differs from the tested 0.9.16; expect" in r.getMessage() for r in caplog.records
    )


# -- what CARLA-Air does that the backend did not expect (issue 14) ------------------------


def test_carla_airs_stock_settings_are_refused_naming_the_settings_file_to_install(
    world: carla_standin.World,
) -> None:
    with FakeAirSim(ground_down=GROUND_DOWN) as stock:  # cameras "0" and "front_center" only
        backend = _backend(stock, carla_standin.World(airsim=stock))
        try:
            with pytest.raises(ConfigError, match=r"camera 'front'.*settings\.json"):
                backend.reset("Town10HD", {"uav": UAV_START})
        finally:
            backend.close()
    small = settings_for_rig(aerialdojo_uav_rig(8, 6))  # the right cameras at another size
    with FakeAirSim(small, ground_down=GROUND_DOWN) as server:
        backend = _backend(server, carla_standin.World(airsim=server))
        try:
            with pytest.raises(ConfigError, match=r"'front'.*8x6.*16x12"):
                backend.reset("Town10HD", {"uav": UAV_START})
        finally:
            backend.close()


def test_a_uav_under_airsims_own_physics_is_refused_since_it_would_fall(
    world: carla_standin.World,
) -> None:
    # FastPhysicsEngine (the default without PhysicsEngineName) drops a teleported drone.
    with FakeAirSim(
        _without_physics_engine(settings_for_rig(UAV_RIG)), ground_down=GROUND_DOWN
    ) as fast:
        backend = _backend(fast, carla_standin.World(airsim=fast))
        try:
            with pytest.raises(ConfigError, match=r"ExternalPhysicsEngine.*settings\.json"):
                backend.reset("Town10HD", {"uav": UAV_START})
                time.sleep(0.3)
                held = backend.execute("uav", Action("MoveForward", 1.0))
                assert held.pose.z == pytest.approx(UAV_START.z, abs=0.01), "the drone fell"
        finally:
            backend.close()


def test_uav_and_ugv_frames_are_stamped_on_carlas_clock(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UGV_RIG})
    clock = BridgeClock(step_s=1.0)
    try:
        backend.reset("Town10HD", {"uav": UAV_START, "ugv": UGV_START})
        for agent in ("uav", "ugv", "uav"):
            before = world.elapsed
            observation = backend.observe(agent)
            assert before <= observation.sim_time_s <= world.elapsed + 1e-9, agent
            clock.stamp(observation.sim_time_s, reset=False)  # never goes back
            backend.execute(agent, Action("MoveForward", 1.0))
    finally:
        backend.close()


def test_the_ugv_stops_at_an_obstacle_it_drives_into(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"ugv": UGV_RIG})
    try:
        backend.reset("Town10HD", {"ugv": Pose(6.0, 0.0, 0.0, 0.0)})
        hit = backend.execute("ugv", Action("MoveForward", 10.0))  # the bollard is at x 13-14
        assert hit.collided and hit.collision_object == "Static"
        assert 6.0 < hit.pose.x < 13.0 - carla_standin.VEHICLES["vehicle.tesla.model3"][0] + 0.01
    finally:
        backend.close()


@pytest.mark.parametrize("traffic", ["remove", "synchronous"])
def test_the_launchers_traffic_moves_only_with_the_worlds_ticks(
    fake: FakeAirSim, traffic: str
) -> None:
    # Synchronous traffic is the user's own: auto_traffic.py's cars are refused (below).
    role = "autopilot" if traffic == "remove" else "my_traffic"
    world = carla_standin.World(airsim=fake, traffic=(3, 2), traffic_role=role)
    start = world.positions("vehicle.")
    backend = _backend(fake, world, carla_air_traffic=traffic)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        for _ in range(2):
            time.sleep(0.05)  # an agent thinking between steps: the world must not move
            backend.execute("uav", Action("MoveUp", 1.0))
            backend.observe("uav")
        moved = world.positions("vehicle.")
        if traffic == "remove":
            assert moved == {}
        else:
            assert len(moved) == 3
            driven = carla_standin.TRAFFIC_SPEED_M_S * TICK_S * world.frame
            for car, (x, _) in moved.items():
                assert x - start[car][0] == pytest.approx(driven), "moved by ticks alone"
        # Walkers get new destinations from the launcher's wall clock (auto_traffic.py).
        assert world.positions("walker.") == {}
    finally:
        backend.close()


def test_pypis_client_against_a_source_built_server_warns_and_the_doctor_proves_the_pair(
    fake: FakeAirSim, world: carla_standin.World, caplog: pytest.LogCaptureFixture
) -> None:
    # LibCarla only warns on a version mismatch (client/detail/Simulator.cpp ValidateVersions).
    pypi = carla_standin.Client(world, client_version=carla_standin.PYPI_CLIENT)
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UGV_RIG}, client=pypi)
    try:
        with caplog.at_level(logging.WARNING):
            backend.reset("Town10HD", {"uav": UAV_START, "ugv": UGV_START})
        assert any(
            "d70247b" in r.getMessage() and "only warns" in r.getMessage() for r in caplog.records
        )
        assert "versions differ" in backend.server_build
        described = backend.round_trip()
        assert described.startswith("spawned vehicle.") and described.endswith("destroyed")
        spawned = [
            a for a in world.actors if a.attributes.get("role_name", "").endswith("round_trip")
        ]
        assert spawned and not any(a.is_alive for a in spawned), "the round trip left actors"
    finally:
        backend.close()


def test_a_start_under_a_roof_is_refused_instead_of_lifted_onto_it() -> None:
    # An overpass 40 m up over the start (CARLA z 30): AirSim down -12.55 .. -11.55.
    overpass = Box("overpass", (170.0, -170.0, -12.55), (200.0, -150.0, -11.55))
    with FakeAirSim(settings_for_rig(UAV_RIG), (overpass,), ground_down=GROUND_DOWN) as server:
        backend = _backend(server, carla_standin.World(airsim=server))
        try:
            with pytest.raises(
                SimulatorFaultError, match=r"lifted the uav from z=30\.00 m to 40\.0\d m"
            ):
                backend.reset("Town10HD", {"uav": UAV_START})
        finally:
            backend.close()


def test_a_reset_after_a_fault_leaves_one_ugv_in_the_world(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(
        fake, world, {"uav": UAV_RIG, "ugv": UGV_RIG}, server_timeout_s=1.0, frame_timeout_s=1.0
    )
    try:
        backend.reset("Town10HD", {"uav": UAV_START, "ugv": UGV_START})
        fake.stop_answering()
        with pytest.raises(SimulatorFaultError):
            backend.execute("uav", Action("MoveUp", 1.0))
        fake.resume_answering()
        backend.reset("Town10HD", {"uav": UAV_START, "ugv": UGV_START})
        kinds = sorted(actor.type_id for actor in world.alive_actors())
        assert kinds == [
            "sensor.camera.depth",
            "sensor.camera.rgb",
            "sensor.other.collision",
            "vehicle.tesla.model3",
        ]
    finally:
        backend.close()
    assert world.alive_actors() == []


def test_a_blocked_uav_move_is_not_hit_again_while_the_world_ticks(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # With ExternalPhysicsEngine the body stays where the blocked move sent it, behind the
    # tower, and each tick's sweep hits the tower again (MultirotorPawnSimApi.cpp).
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        assert backend.execute("uav", Action("MoveForward", 10.0)).collided
        backend.observe("uav")
        assert not backend.execute("uav", Action("MoveUp", 1.0)).collided
    finally:
        backend.close()


def test_depth_of_the_default_offset_is_town10hd() -> None:
    settings = CarlaAirSettings.from_parameters({})
    assert (settings.offset.dx, settings.offset.dy, settings.offset.dz) == (
        172.20,
        -183.86,
        27.45,
    )
    assert np.isfinite(settings.offset.dz)


def test_the_doctor_passes_a_carla_air_that_works_and_names_the_fix_of_stock_settings(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UAV_RIG})
    try:
        checks = doctor.diagnose(
            backend,
            ["uav", "ugv"],
            seconds_per_action=1.0,
            suite_scenes={"Town10HD": ["bollard"]},
            suite_spawns=_shipped_spawns(),
            ground_z=0.0,
        )
    finally:
        backend.close()
    print(doctor.format_table(checks))
    assert [check.name for check in checks if not check.passed] == []
    names = [check.name for check in checks]
    assert names[:5] == ["server", "round trip", "reset", "suite scenes", "suite spawns"]
    assert not [
        a
        for a in world.get_actors()
        if a.attributes.get("role_name", "").startswith("aerialdojo/object/")
    ]  # the check spawns nothing
    assert "depth uav/down" in names and "one clock" not in names
    assert checks[0].detail.startswith("CARLA d70247b (client d70247b), AirSim RPC 1 with Ext")

    with FakeAirSim(ground_down=GROUND_DOWN) as stock:
        backend = _backend(stock, carla_standin.World(airsim=stock))
        try:
            checks = doctor.diagnose(backend, ["uav"], seconds_per_action=1.0)
        finally:
            backend.close()
    print(doctor.format_table(checks))
    (server,) = checks
    assert not server.passed and "PhysicsEngineName is 'FastPhysicsEngine'" in server.detail
    assert server.fix.startswith("install config/carla_air/settings.json")


def _doctor(
    fake: FakeAirSim,
    world: carla_standin.World,
    parameters: dict[str, Any] | None = None,
    **options: Any,
) -> list[doctor.Check]:
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UAV_RIG}, **(parameters or {}))
    try:
        checks = doctor.diagnose(backend, ["uav", "ugv"], seconds_per_action=1.0, **options)
    finally:
        backend.close()
    print(doctor.format_table(checks))
    return checks


def test_the_doctor_fails_a_round_trip_whose_sensor_data_never_arrives(
    fake: FakeAirSim,
) -> None:
    # CARLA sends sensor data over its streaming port (RPC port + 1); blocked, nothing comes.
    blocked = carla_standin.World(airsim=fake, streaming=False)
    checks = _doctor(fake, blocked, {"frame_timeout_s": 1.0})
    failed = checks[-1]
    assert [c.name for c in checks] == ["server", "round trip"] and not failed.passed
    assert "streaming port (2001)" in failed.detail


def test_the_doctor_fails_suite_scenes_that_are_not_the_running_map(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    checks = _doctor(fake, world, suite_scenes={"Town10HD": [], "Town03": []})
    scenes = next(c for c in checks if c.name == "suite scenes")
    assert not scenes.passed and "Town03: the run's map is 'Town10HD'" in scenes.detail
    assert scenes.fix.startswith("run a suite made for this server's world")


def test_the_doctor_fails_suite_targets_the_map_does_not_hold(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # A suite surveyed on another server names environment objects this map lacks.
    checks = _doctor(fake, world, suite_scenes={"Town10HD": ["bollard", "SM_Tree_7"]})
    scenes = next(c for c in checks if c.name == "suite scenes")
    assert not scenes.passed and "Town10HD: no environment object SM_Tree_7" in scenes.detail


def _shipped_spawns() -> list[SpawnedObject]:
    """Every object the shipped CARLA-Air suites spawn."""
    spawns: list[SpawnedObject] = []
    for name in ("carla_air_town10hd", "carla_air_agos_town10hd"):
        _protocol, suite = load_any_suite(resolve_suite(name))
        spawns += [spawn for episode in suite.episodes for spawn in episode.spawns]
    return spawns


def test_the_doctor_fails_blueprints_and_attributes_the_server_lacks(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    pose, size = Pose(30.0, 0.0, 0.0, 0.0), (4.0, 2.0, 1.5)
    spawns = [
        SpawnedObject(object_id="a", blueprint="vehicle.tesla.cybertruck2", pose=pose, size=size),
        SpawnedObject(
            object_id="b",
            blueprint="vehicle.audi.a2",
            pose=pose,
            size=size,
            attributes=(("color", "red"),),
        ),
        SpawnedObject(object_id="c", blueprint="static.prop.vendingmachine", pose=pose, size=size),
    ]
    checks = _doctor(fake, world, suite_spawns=spawns)
    check = next(c for c in checks if c.name == "suite spawns")
    assert not check.passed, check
    assert "3 blueprint(s)" in check.detail
    assert "object a: the server has no blueprint 'vehicle.tesla.cybertruck2'" in check.detail
    assert "object b: vehicle.audi.a2 takes no color='red'" in check.detail
    assert "vendingmachine" not in check.detail


def test_the_doctor_fails_the_effective_fov_another_client_changed(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # simSetCameraFov sets the camera component's FOV, which every capture uses (PIPCamera.cpp).
    other = airsim.MultirotorClient(ip="127.0.0.1", port=fake.port, timeout_value=5)
    other.simSetCameraFov("front", 60.0)
    other.client.close()
    checks = _doctor(fake, world)
    front = next(c for c in checks if c.name == "camera uav/front")
    assert not front.passed and "FOV 60.0 deg, not 90" in front.detail
    assert all(c.passed for c in checks if c.name.startswith("camera uav/") and c is not front)


def test_the_doctor_fails_depth_that_is_not_the_altitude(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    # The fake's ground is at CARLA z = 0; a check told the ground is 25 m higher sees depth
    # far from the altitude, as it would for depth in other units.
    checks = _doctor(fake, world, ground_z=25.0, poses={"uav": Pose(0.0, 0.0, 100.0, 0.0)})
    depth = next(c for c in checks if c.name == "depth uav/down")
    assert not depth.passed and "median 100.00 against an altitude of 75.00 m" in depth.detail
    assert depth.fix.startswith("depth must be metres")


def test_carla_airs_stock_camera_fov_is_named_with_the_settings_fix() -> None:
    # The per-type FOV_Degrees CARLA-Air's shipped file sets are overwritten (PIPCamera.cpp).
    per_type = settings_for_rig(UAV_RIG)
    for camera in per_type["Vehicles"]["SimpleFlight"]["Cameras"].values():
        camera["CaptureSettings"] = [
            {**c, "FOV_Degrees": 90.0} for c in camera["CaptureSettings"] if c["ImageType"] >= 0
        ]
    with FakeAirSim(per_type, ground_down=GROUND_DOWN) as server:
        backend = _backend(server, carla_standin.World(airsim=server))
        try:
            with pytest.raises(ConfigError, match=r"no ImageType -1 entry with FOV_Degrees"):
                backend.reset("Town10HD", {"uav": UAV_START})
        finally:
            backend.close()
        assert airsim.MultirotorClient(
            ip="127.0.0.1", port=server.port, timeout_value=5
        ).simGetCameraInfo("front").fov == pytest.approx(92.56, abs=0.01)


def test_synchronous_traffic_refuses_the_launchers_cars_that_it_keeps_restarting(
    fake: FakeAirSim,
) -> None:
    world = carla_standin.World(airsim=fake, traffic=(3, 2))  # auto_traffic.py's
    backend = _backend(fake, world, carla_air_traffic="synchronous")
    try:
        with pytest.raises(ConfigError, match=r"3 cars are auto_traffic\.py's.*every 10 s"):
            backend.reset("Town10HD", {"uav": UAV_START})
    finally:
        backend.close()
    assert len(world.positions("vehicle.")) == 3, "nothing was destroyed before refusing"


def test_a_uav_moved_by_someone_else_is_a_fault_not_a_scored_move(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    try:
        backend.reset("Town10HD", {"uav": UAV_START})
        # What the CarlaAir window's FPS control does after a key press: its own moves.
        other = airsim.MultirotorClient(ip="127.0.0.1", port=fake.port, timeout_value=5)
        original = backend._place_uav

        def place_then_taken_over(pose: Pose, *, ignore_collision: bool) -> None:
            original(pose, ignore_collision=ignore_collision)
            other.simSetVehiclePose(
                airsim.Pose(airsim.Vector3r(0.0, 0.0, -50.0), airsim.Quaternionr()), True
            )

        backend._place_uav = place_then_taken_over  # type: ignore[method-assign]
        with pytest.raises(SimulatorFaultError, match=r"without a collision: something else"):
            backend.execute("uav", Action("MoveForward", 1.0))
        other.client.close()
    finally:
        backend.close()


def test_a_world_left_synchronous_by_a_killed_bridge_is_taken_over_and_given_back(
    fake: FakeAirSim, world: carla_standin.World, caplog: pytest.LogCaptureFixture
) -> None:
    dead = _backend(fake, world)
    dead.reset("Town10HD", {"uav": UAV_START})
    dead._drop_connection()  # killed: close() never ran
    assert world.get_settings().synchronous_mode, "CARLA-Air is frozen now"
    backend = _backend(fake, world)
    try:
        with caplog.at_level(logging.WARNING):
            backend.reset("Town10HD", {"uav": UAV_START})
        assert any("left in synchronous mode" in r.getMessage() for r in caplog.records)
    finally:
        backend.close()
    assert not world.get_settings().synchronous_mode


def test_a_suite_of_the_servers_own_world_from_its_environment_objects_and_lanes(
    fake: FakeAirSim, tmp_path: Path
) -> None:
    """``aerialdojo tasks from-server`` on CARLA-Air: environment objects with their labels
    and boxes (World.get_environment_objects) become targets and landmarks, starts go above
    the lane waypoints, each target is photographed from its anchor by the UAV."""
    car = carla_standin.Obstacle("SM_Car_Parked", (20.0, 6.0, 0.0), (24.0, 8.0, 1.5), Car)
    house = carla_standin.Obstacle("BP_House_3", (0.0, 20.0, 0.0), (10.0, 30.0, 12.0), Buildings)
    world = carla_standin.World(airsim=fake, obstacles=(car, house))
    backend = _backend(fake, world)
    options = SurveyOptions(
        name="town10hd_survey",
        targets=re.compile(DEFAULT_TARGETS),
        landmarks=re.compile(DEFAULT_LANDMARKS),
        altitude_m=30.0,
    )
    try:
        site_path = survey_server(backend, "Town10HD", tmp_path, options)
    finally:
        backend.close()
    site = load_site(site_path)
    assert site.scene == "Town10HD" and site.frame.method == "simulator"
    (target,) = site.targets
    assert target.target_id == "SM_Car_Parked" and target.name == "car"
    assert target.anchor.z == pytest.approx(0.75 + 0.75 + 1.0)  # 1 m above the box
    assert [landmark.name for landmark in site.landmarks] == ["bp house 3"]
    assert all(start.pose.z == 30.0 for start in site.starts)
    with Image.open(target.reference_image) as photo:
        assert photo.size == (16, 12)  # the UAV's front view
    built = build_site_suite(site, tmp_path / "suite", command="test")
    assert {episode.scene for episode in built.suite.episodes} == {"Town10HD"}
    assert {episode.target_object_id for episode in built.suite.episodes} == {"SM_Car_Parked"}


def _spawn(object_id: str, blueprint: str, x: float, y: float, **attributes: str) -> SpawnedObject:
    return SpawnedObject(
        object_id=object_id,
        blueprint=blueprint,
        pose=Pose(x, y, 0.0, 0.0),
        attributes=tuple(sorted(attributes.items())),
        size=(4.0, 2.0, 1.5),
    )


def test_an_episodes_objects_are_spawned_by_blueprint_and_replaced_by_the_next_episodes(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world)
    target = _spawn("v01", "vehicle.citroen.c3", -20.0, 10.0, color="200,20,20")
    prop = _spawn("p01", "static.prop.vendingmachine", -30.0, 12.0)
    try:
        backend.place_objects("Town10HD", [target, prop])
        backend.reset("Town10HD", {"uav": UAV_START})
        spawned = {a.attributes["role_name"]: a for a in world.alive_actors()}
        car = spawned["aerialdojo/object/v01"]
        assert car.type_id == "vehicle.citroen.c3" and car.attributes["color"] == "200,20,20"
        location = car.get_transform().location  # CARLA mirrors the map's y
        assert (location.x, location.y) == pytest.approx((-20.0, -10.0))
        assert location.z == pytest.approx(SPAWN_LIFT_M)
        assert spawned["aerialdojo/object/p01"].type_id == "static.prop.vendingmachine"
        backend.place_objects("Town10HD", [_spawn("v02", "vehicle.audi.a2", -40.0, 10.0)])
        roles = sorted(a.attributes["role_name"] for a in world.alive_actors())
        assert roles == ["aerialdojo/object/v02"]
    finally:
        backend.close()
    assert world.alive_actors() == []


@pytest.mark.parametrize(
    ("spawn", "error", "message"),
    [
        (_spawn("v01", "vehicle.tesla.cybertruck2", 0.0, 30.0), ConfigError, "no blueprint"),
        (_spawn("v01", "vehicle.audi.a2", 0.0, 30.0, colour="1,2,3"), ConfigError, "colour"),
        (_spawn("p01", "static.prop.kiosk_01", 0.0, 30.0, size="big"), ConfigError, "read-only"),
        (_spawn("v01", "vehicle.audi.a2", 0.0, 30.0, color="red"), ConfigError, "3 channels"),
        (_spawn("v01", "vehicle.audi.a2", 13.5, 0.0), SimulatorFaultError, "occupied"),
    ],
)
def test_objects_the_server_refuses_are_named_and_nothing_is_left_half_placed(
    fake: FakeAirSim,
    world: carla_standin.World,
    spawn: SpawnedObject,
    error: type[Exception],
    message: str,
) -> None:
    backend = _backend(fake, world)
    placed = _spawn("p02", "static.prop.busstop", -50.0, 20.0)
    try:
        with pytest.raises(error, match=message):
            backend.place_objects("Town10HD", [placed, spawn])
        assert [
            a for a in world.alive_actors() if a.type_id.startswith(("vehicle", "static"))
        ] == []
    finally:
        backend.close()


def test_objects_an_earlier_connection_left_are_destroyed_at_the_next(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    first = _backend(fake, world)
    first.place_objects("Town10HD", [_spawn("v01", "vehicle.audi.a2", -20.0, 10.0)])
    # The bridge was killed: its actors outlive it.
    second = _backend(fake, world)
    try:
        second.place_objects("Town10HD", [_spawn("v01", "vehicle.audi.a2", -20.0, 10.0)])
        assert len([a for a in world.alive_actors() if a.type_id == "vehicle.audi.a2"]) == 1
    finally:
        second.close()


def test_a_backend_that_cannot_spawn_refuses_an_episode_that_brings_objects() -> None:
    from aerialdojo.sim.embedded import EmbeddedBackend

    backend = EmbeddedBackend(rigs={"uav": UAV_RIG}, seconds_per_action=1.0)
    backend.place_objects("Mall_0", [])
    with pytest.raises(ConfigError, match="cannot spawn objects by blueprint"):
        backend.place_objects("Mall_0", [_spawn("v01", "vehicle.audi.a2", 0.0, 0.0)])


# -- AGOS on CARLA-Air -------------------------------------------------------------------


AGOS_RIGS = benchmark_rigs("agos", ["uav", "ugv"], 16, 12, 90.0)


@pytest.fixture
def agos_fake() -> Iterator[FakeAirSim]:
    with FakeAirSim(settings_for_rig(AGOS_RIGS["uav"]), ground_down=GROUND_DOWN) as server:
        yield server


def _agos_episode() -> Any:
    _protocol, suite = load_any_suite(resolve_suite("carla_air_agos_town10hd"))
    return suite.episodes[0]


def _ugv_cameras(world: carla_standin.World) -> dict[tuple[str, str], carla_standin.Sensor]:
    return {
        (sensor.attributes["role_name"].rsplit("/", 1)[-1], sensor.type_id): sensor
        for sensor in world.alive_actors()
        if isinstance(sensor, carla_standin.Sensor) and sensor.type_id.startswith("sensor.camera")
    }


def test_the_agos_rig_rides_on_carla_cameras_and_the_ring_follows_stop_observe(
    agos_fake: FakeAirSim,
) -> None:
    world = carla_standin.World(airsim=agos_fake)
    backend = _backend(agos_fake, world, AGOS_RIGS, carla_air_benchmark="agos")
    episode = _agos_episode()
    starts = {"uav": episode.uav_start, "ugv": episode.ugv_start}
    try:
        backend.reset("Town10HD", starts)
        assert backend.global_localization
        # The doctor's default start stands the vehicle on the lane, its body 1.6 m up.
        assert backend.start_pose("Town10HD", "ugv").z == pytest.approx(UGV_HEIGHT_M)
        # Fourteen CARLA cameras on the vehicle: an RGB and a depth one per AGOS view, at the
        # config's size and each view's own FOV, mounted at the body's height and heading
        # (CARLA's yaw turns clockwise: the map's left is CARLA's negative yaw).
        cameras = _ugv_cameras(world)
        assert sorted({view for view, _ in cameras}) == sorted(["front", *RING_VIEWS])
        vehicle = next(a for a in world.alive_actors() if a.type_id == "vehicle.tesla.model3")
        assert vehicle.get_transform().location.z == pytest.approx(starts["ugv"].z - UGV_HEIGHT_M)
        for (view, _kind), camera in cameras.items():
            assert camera.parent is vehicle
            assert (camera.attributes["image_size_x"], camera.attributes["image_size_y"]) == (
                "16",
                "12",
            )
            assert float(camera.attributes["fov"]) == (90.0 if view == "front" else 60.0)
            mount = camera.get_transform()
            assert mount.location.z == pytest.approx(UGV_HEIGHT_M)
            assert mount.rotation.yaw == pytest.approx(-RING_VIEWS.get(view, 0.0))

        # The UAV's nadir view; the UGV's front view while it drives.
        assert set(backend.observe("uav").frames) == {"down"}
        front = backend.observe("ugv")
        assert set(front.frames) == {"front"}
        assert front.pose.z == pytest.approx(starts["ugv"].z)
        frame = front.frames["front"]
        image_transform = cameras[("front", "sensor.camera.rgb")].world_transform()
        assert tuple(frame.rgb[0, 0]) == carla_standin.expected_ground_rgb(
            vehicle.get_transform(), "front"
        )
        assert image_transform.location.z == pytest.approx(starts["ugv"].z)
        # camera_info's intrinsics are the spec's, and the server rendered that FOV and size.
        delivered = backend.server_cameras("ugv")["front"]
        assert (delivered.width, delivered.height, delivered.fov_deg) == (16, 12, 90.0)

        # STOP_OBSERVE: the next observation is the ring, each panel its own camera's image.
        backend.execute("ugv", Action("STOP_OBSERVE"))
        ring = backend.observe("ugv")
        assert sorted(ring.frames) == sorted(RING_VIEWS)
        for view, panel in ring.frames.items():
            assert panel.spec.fov_deg == 60.0 and panel.rgb.shape == (12, 16, 3)
            assert tuple(panel.rgb[0, 0]) == carla_standin.expected_ground_rgb(
                vehicle.get_transform(), view
            )
            assert backend.server_cameras("ugv")[view].fov_deg == 60.0

        # A road waypoint: the UGV drives the lanes to that anchor; the front view is back.
        roads = town_map("Town10HD").roads
        anchor = roads.anchors[len(roads.anchors) // 2]
        drive = drive_to(roads, ring.pose, anchor, town_map("Town10HD").ground_z)
        moved = backend.execute("ugv", Action("MOVE_TO_ROAD_WAYPOINT"), road_waypoint_id(anchor))
        assert not moved.collided, moved
        assert (moved.pose.x, moved.pose.y) == pytest.approx(drive.final_pose.position[:2])
        assert set(backend.observe("ugv").frames) == {"front"}

        # A UAV waypoint: the drone is placed there at the grid's altitude.
        grid = town_map("Town10HD").uav_grid
        waypoint = next(iter(grid.waypoints.values()))
        flown = backend.execute("uav", Action("MOVE_TO_UAV_WAYPOINT"), waypoint.waypoint_id)
        assert (flown.pose.x, flown.pose.y, flown.pose.z) == pytest.approx(
            (waypoint.x, waypoint.y, waypoint.z), abs=1e-3
        )
        with pytest.raises(InvalidActionError, match="no UAV waypoint"):
            backend.execute("uav", Action("MOVE_TO_UAV_WAYPOINT"), "nowhere")
    finally:
        backend.close()
    assert world.alive_actors() == []


def test_agos_decisions_are_refused_on_an_aerialdojo_run(
    fake: FakeAirSim, world: carla_standin.World
) -> None:
    backend = _backend(fake, world, {"uav": UAV_RIG, "ugv": UGV_RIG})
    try:
        backend.reset("Town10HD", {"ugv": UGV_START})
        with pytest.raises(InvalidActionError, match="not a motion of the AerialDojo action set"):
            backend.execute("ugv", Action("STOP_OBSERVE"))
    finally:
        backend.close()


def test_the_ugv_rig_stops_short_of_a_car_parked_on_its_drive(agos_fake: FakeAirSim) -> None:
    # A car across the lane a few metres along the UGV's drive: the sweep of the drive's legs
    # finds it, and the UGV stops short of it with a collision (set_transform alone would
    # have teleported through it, CarlaActor.cpp).
    roads = town_map("Town10HD").roads
    episode = _agos_episode()
    start = episode.ugv_start
    anchor = roads.anchors[len(roads.anchors) // 2]
    drive = drive_to(roads, start, anchor, town_map("Town10HD").ground_z)
    x, y, _ = drive.points[len(drive.points) // 2]
    blocker = carla_standin.Obstacle("SM_Van", (x - 1.5, -y - 1.5, 0.0), (x + 1.5, -y + 1.5, 2.0))
    world = carla_standin.World(airsim=agos_fake, obstacles=(blocker,))
    backend = _backend(agos_fake, world, {"ugv": AGOS_RIGS["ugv"]}, carla_air_benchmark="agos")
    try:
        backend.reset("Town10HD", {"ugv": start})
        moved = backend.execute("ugv", Action("MOVE_TO_ROAD_WAYPOINT"), road_waypoint_id(anchor))
        assert moved.collided and "Static" in moved.collision_object, moved
        assert math.hypot(moved.pose.x - x, moved.pose.y - y) < 5.0
    finally:
        backend.close()


def test_the_carla_standin_refuses_what_libcarla_and_the_server_refuse() -> None:
    world = carla_standin.World()
    library = world.get_blueprint_library()
    camera = library.find("sensor.camera.rgb")
    # MakeCameraDefinition's defaults; an Int is read with atoi and never refused.
    assert (camera.attributes["image_size_x"], camera.attributes["fov"]) == ("800", "90.0")
    camera.set_attribute("image_size_x", "64.9")
    assert carla_standin.atoi(camera.attributes["image_size_x"]) == 64
    with pytest.raises(IndexError, match="attribute 'focal_distance' not found"):
        camera.set_attribute("focal_distance", "1")
    with pytest.raises(ValueError, match="float overflow"):
        camera.set_attribute("fov", "1e39")
    vehicle_blueprint = library.find("vehicle.tesla.model3")
    with pytest.raises(ValueError, match="invalid bool"):
        vehicle_blueprint.set_attribute("sticky_control", "yes")
    vehicle = world.spawn_actor(vehicle_blueprint, carla.Transform(carla.Location(5.0, 0.0, 0.0)))
    vehicle.destroy()
    # spawn_actor_with_parent spawns, then finds no parent: refused, the sensor left behind.
    with pytest.raises(RuntimeError, match="unable to attach actor: parent actor not found"):
        world.spawn_actor(camera, carla.Transform(), attach_to=vehicle)
    assert [a.type_id for a in world.alive_actors()] == ["sensor.camera.rgb"]


def test_the_doctor_checks_the_agos_ring_after_stop_observe(agos_fake: FakeAirSim) -> None:
    def diagnose(world: carla_standin.World) -> list[doctor.Check]:
        backend = _backend(agos_fake, world, AGOS_RIGS, carla_air_benchmark="agos")
        episode = _agos_episode()
        poses = {"uav": episode.uav_start, "ugv": episode.ugv_start}
        try:
            checks = doctor.diagnose(
                backend, ["uav", "ugv"], seconds_per_action=1.0, poses=poses, ground_z=0.0
            )
        finally:
            backend.close()
        print(doctor.format_table(checks))
        return checks

    checks = diagnose(carla_standin.World(airsim=agos_fake))
    assert [c.name for c in checks if not c.passed] == []
    names = {c.name for c in checks}
    assert {f"camera ugv/{view}" for view in ("front", *RING_VIEWS)} <= names
    assert {"camera uav/down", "depth uav/down"} <= names
    ring = next(c for c in checks if c.name == "camera ugv/ring_back")
    assert ring.detail.startswith("16x12, FOV 60.0 deg")

    # A server that renders one ring camera whole white (CARLA at -quality-level=Low, or with
    # the GPU's memory full): the doctor names that panel, and only it.
    checks = diagnose(carla_standin.World(airsim=agos_fake, washed_out_views=("ring_back",)))
    assert [c.name for c in checks if not c.passed] == ["camera ugv/ring_back"]
    failed = next(c for c in checks if not c.passed)
    assert "every pixel of the colour image is (255, 255, 255)" in failed.detail
