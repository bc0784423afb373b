"""``CarlaAirBackend``: AGOS's simulator, CARLA-Air (CARLA and AirSim in one Unreal world).

Needs the ``carla`` (port 2000: world, ground vehicle, its cameras, the OpenDRIVE road graph)
and ``airsim`` (port 41451: the UAV) clients, which live in their own venv
(``.venv-carla-air``, tools/bootstrap_backend.sh) because airsim needs msgpack 0.5.

The bridge owns the clock: the world runs in synchronous mode with a fixed tick, and only this
backend ticks it; asynchronous mode is restored on close. CARLA-Air renders AirSim's cameras
on the world's tick, so a ``simGetImages`` call made on the only thread that ticks waits for a
tick that never comes (the known deadlock). Images are therefore fetched on a thread of their
own, with an airsim client of its own (the client is not thread-safe), while the calling thread
keeps ticking until they arrive.

Agents: ``uav`` is AirSim's vehicle, placed with ``simSetVehiclePose``; ``ugv`` is a CARLA
vehicle spawned at the episode start, moved with ``set_transform`` (it drives on the ground:
MoveUp/MoveDown are refused), with an RGB and a depth camera per view and a collision sensor.
The map frame is CARLA's world mirrored in y; AirSim poses go through the map's offset
(``sim.remote.frames``). Stamps are capture times: AirSim's ``time_stamp`` and CARLA's sensor
``timestamp``, both read off the shared Unreal clock.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import airsim
import carla
from msgpackrpc.error import RPCError

from aerialdojo.actions import STOP, Action, target_pose
from aerialdojo.errors import (
    ConfigError,
    InvalidActionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import (
    CameraFrame,
    CameraSpec,
    MotionOutcome,
    Observation,
    SimulatorBackend,
)
from aerialdojo.sim.remote.connection import (
    Endpoint,
    check_version,
    connect_with_retries,
    fault,
)
from aerialdojo.sim.remote.frames import (
    CarlaPose,
    carla_to_map,
    map_to_carla,
)
from aerialdojo.sim.remote.images import (
    depth_from_carla_bgra,
    depth_from_floats,
    rgb_from_bgr_bytes,
    rgb_from_carla_bgra,
)
from aerialdojo.sim.remote.settings import CarlaAirSettings

T = TypeVar("T")

UAV, UGV = "uav", "ugv"
#: Client releases this backend was written and tested against.
TESTED_CARLA_VERSION = "0.9.16"
TESTED_AIRSIM_VERSION = "1.8.1"
#: How long to wait for images between two ticks, seconds of wall time.
_TICK_WAIT_S = 0.01

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RoadGraph:
    """CARLA's OpenDRIVE lanes sampled as a directed graph (AGOS seed, appendix A.1.1).

    Attributes:
        nodes: lane waypoints (x, y, z) in the map frame.
        edges: (from, to) index pairs following each lane's successors.
    """

    nodes: tuple[tuple[float, float, float], ...]
    edges: tuple[tuple[int, int], ...]


class _ImageFetcher:
    """Runs ``simGetImages`` on a thread of its own, with a client only that thread uses."""

    def __init__(self, make_client: Callable[[], Any]) -> None:
        self._make_client = make_client
        self._jobs: queue.Queue[tuple[list[Any], str, concurrent.futures.Future[Any]] | None]
        self._jobs = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="airsim-images", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        client = None
        while (job := self._jobs.get()) is not None:
            requests, vehicle, result = job
            try:
                if client is None:
                    client = self._make_client()
                result.set_result(client.simGetImages(requests, vehicle))
            except (RPCError, OSError) as error:
                result.set_exception(error)
                if client is not None:
                    client.client.close()
                client = None  # the next job reconnects
        if client is not None:
            client.client.close()

    def fetch(self, requests: list[Any], vehicle: str) -> concurrent.futures.Future[Any]:
        result: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self._jobs.put((requests, vehicle, result))
        return result

    def close(self, timeout_s: float) -> None:
        self._jobs.put(None)
        self._thread.join(timeout_s)


@dataclass
class _Ground:
    """The UGV's CARLA actors and what its sensors delivered."""

    vehicle: Any
    sensors: list[Any]
    images: dict[tuple[str, str], Any] = field(default_factory=dict)
    collisions: list[Any] = field(default_factory=list)


class CarlaAirBackend(SimulatorBackend):
    """Runs discrete actions of a UAV and a UGV in CARLA-Air.

    Args:
        settings: server address, ports, map and its offset, tick, timeouts.
        rigs: camera rig per agent (``uav`` and/or ``ugv``).
        seconds_per_action: simulated time one action takes (rounded up to whole ticks).
        carla_client: a ready ``carla.Client`` (or stand-in); None connects to
            ``settings.host:carla_port``.

    Raises:
        ConfigError: an agent other than uav/ugv, or a rig without cameras.
    """

    def __init__(
        self,
        *,
        settings: CarlaAirSettings,
        rigs: Mapping[str, Sequence[CameraSpec]],
        seconds_per_action: float,
        carla_client: Any = None,
    ) -> None:
        unknown = sorted(set(rigs) - {UAV, UGV})
        if unknown:
            raise ConfigError(f"CARLA-Air agents are {UAV} and {UGV}; got {unknown}")
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        self.settings = settings
        self._ticks_per_action = max(1, math.ceil(seconds_per_action / settings.fixed_delta_s))
        self.carla_endpoint = Endpoint("CARLA", settings.host, settings.carla_port)
        self.airsim_endpoint = Endpoint("AirSim", settings.host, settings.airsim_port)
        self._given_carla_client = carla_client
        self._condition = threading.Condition()
        self._world: Any = None
        self._original_settings: Any = None
        self._airsim: Any = None
        self._fetcher: _ImageFetcher | None = None
        self._ground: _Ground | None = None
        self._uav_collision_ns = 0
        self._action_frame = 0

    # -- connection ----------------------------------------------------------------------

    def _connect(self) -> None:
        policy = self.settings.policy

        def connect_carla() -> tuple[Any, str]:
            client = self._given_carla_client
            if client is None:
                client = carla.Client(self.settings.host, self.settings.carla_port)
            client.set_timeout(policy.timeout_s)
            return client, str(client.get_server_version())

        client, server_version = connect_with_retries(
            connect_carla, self.carla_endpoint, policy, (RuntimeError,)
        )
        client_version = str(client.get_client_version())
        check_version("carla client", client_version, TESTED_CARLA_VERSION)
        # LibCarla's protocol changes between releases: client and server should match exactly.
        check_version(f"CARLA server ({self.carla_endpoint})", server_version, client_version, 3)
        world = self._carla("reading the world", client.get_world)
        loaded = str(world.get_map().name)
        if not loaded.rsplit("/", maxsplit=1)[-1].startswith(self.settings.map_name):
            raise ConfigError(
                f"sim_bridge.carla_air_map: the run asks for {self.settings.map_name!r} but "
                f"{self.carla_endpoint} runs {loaded!r}"
            )
        check_version("airsim client", airsim.__version__, TESTED_AIRSIM_VERSION)
        self._airsim = connect_with_retries(
            self._airsim_client, self.airsim_endpoint, policy, (RPCError, OSError)
        )
        self._call_airsim(
            "enabling API control",
            lambda: self._airsim.enableApiControl(True, self.settings.airsim_vehicle),
        )
        self._original_settings = self._carla("reading settings", world.get_settings)
        synchronous = world.get_settings()
        synchronous.synchronous_mode = True
        synchronous.fixed_delta_seconds = self.settings.fixed_delta_s
        self._carla("entering synchronous mode", lambda: world.apply_settings(synchronous))
        self._world = world
        self._fetcher = _ImageFetcher(self._airsim_client)

    def _airsim_client(self) -> Any:
        client = airsim.MultirotorClient(
            ip=self.settings.host,
            port=self.settings.airsim_port,
            # msgpack-rpc checks timeouts once a second, in whole seconds.
            timeout_value=max(1, math.ceil(self.settings.policy.timeout_s)),
        )
        client.ping()
        return client

    def _carla(self, doing: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except RuntimeError as error:  # LibCarla reports time-outs and lost connections so
            self._drop_connection()
            raise fault(self.carla_endpoint, doing, error) from error

    def _call_airsim(self, doing: str, call: Callable[[], T]) -> T:
        try:
            return call()
        except (RPCError, OSError) as error:
            self._drop_connection()
            raise fault(self.airsim_endpoint, doing, error) from error

    def _drop_connection(self) -> None:
        """Forget the connection after a fault; the next reset reconnects."""
        if self._fetcher is not None:
            self._fetcher.close(timeout_s=0.0)
        if self._airsim is not None:
            self._airsim.client.close()
        self._world, self._airsim, self._fetcher, self._ground = None, None, None, None

    # -- scenes and episodes -------------------------------------------------------------

    def scenes(self) -> list[str]:
        return [self.settings.map_name]

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Place the agents on the map (spawning the UGV the first time) and tick once.

        Raises:
            UnknownSceneError: ``scene`` is not the run's map.
            ConfigError: an agent without a rig, or the server runs another map.
            SimulatorFaultError: CARLA or AirSim failed or did not answer.
        """
        if scene != self.settings.map_name:
            raise UnknownSceneError(
                f"CARLA-Air serves the run's map {self.settings.map_name!r} only, not {scene!r}"
            )
        self._check_rigged(poses)
        if self._world is None:
            self._connect()
        if UAV in poses:
            self._place_uav(poses[UAV], ignore_collision=True)
            self._uav_collision_ns = self._uav_collision()[0]
        if UGV in poses:
            self._place_ugv(poses[UGV])
        self._tick(1)

    def _place_uav(self, pose: Pose, *, ignore_collision: bool) -> None:
        north, east, down, yaw = self.settings.offset.map_to_airsim(pose)
        target = airsim.Pose(
            airsim.Vector3r(north, east, down),
            airsim.Quaternionr(0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)),
        )
        vehicle = self.settings.airsim_vehicle
        self._call_airsim(
            "setting the UAV pose",
            lambda: self._airsim.simSetVehiclePose(target, ignore_collision, vehicle),
        )

    def _uav_pose(self) -> Pose:
        vehicle = self.settings.airsim_vehicle
        answer = self._call_airsim(
            "reading the UAV pose", lambda: self._airsim.simGetVehiclePose(vehicle)
        )
        p, q = answer.position, answer.orientation
        yaw = math.atan2(
            2.0 * (q.w_val * q.z_val + q.x_val * q.y_val),
            1.0 - 2.0 * (q.y_val**2 + q.z_val**2),
        )
        return self.settings.offset.airsim_to_map(p.x_val, p.y_val, p.z_val, yaw)

    def _uav_collision(self) -> tuple[int, str]:
        """(time stamp, object name) of the UAV's last collision."""
        vehicle = self.settings.airsim_vehicle
        info = self._call_airsim(
            "reading UAV collisions", lambda: self._airsim.simGetCollisionInfo(vehicle)
        )
        return (int(info.time_stamp) if info.has_collided else 0, str(info.object_name))

    def _place_ugv(self, pose: Pose) -> None:
        transform = _carla_transform(map_to_carla(pose))
        if self._ground is None:
            self._ground = self._spawn_ugv(transform)
        else:
            self._carla("placing the UGV", partial(self._ground.vehicle.set_transform, transform))

    def _spawn_ugv(self, transform: Any) -> _Ground:
        world = self._world
        library = self._carla("reading blueprints", world.get_blueprint_library)
        blueprint = library.find(self.settings.ugv_blueprint)
        blueprint.set_attribute("role_name", UGV)
        vehicle = self._carla("spawning the UGV", lambda: world.spawn_actor(blueprint, transform))
        ground = _Ground(vehicle=vehicle, sensors=[])
        for spec in self._rigs.get(UGV, []):
            for kind in ("sensor.camera.rgb", "sensor.camera.depth"):
                camera = library.find(kind)
                for name, value in (
                    ("image_size_x", spec.width),
                    ("image_size_y", spec.height),
                    ("fov", spec.fov_deg),
                    ("role_name", spec.name),
                ):
                    camera.set_attribute(name, str(value))
                mount = carla.Transform(
                    carla.Location(spec.offset[0], -spec.offset[1], spec.offset[2]),
                    carla.Rotation(pitch=spec.pitch_deg, yaw=-spec.yaw_deg),
                )
                sensor = self._carla(
                    f"spawning the {spec.name} camera",
                    partial(world.spawn_actor, camera, mount, attach_to=vehicle),
                )
                sensor.listen(self._image_callback(ground, (spec.name, kind)))
                ground.sensors.append(sensor)
        collision = world.spawn_actor(
            library.find("sensor.other.collision"), carla.Transform(), attach_to=vehicle
        )
        collision.listen(self._collision_callback(ground))
        ground.sensors.append(collision)
        return ground

    def _image_callback(self, ground: _Ground, key: tuple[str, str]) -> Callable[[Any], None]:
        """Keeps the newest image of one camera (called on CARLA's sensor thread)."""

        def on_image(image: Any) -> None:
            with self._condition:
                ground.images[key] = image
                self._condition.notify_all()

        return on_image

    def _collision_callback(self, ground: _Ground) -> Callable[[Any], None]:
        def on_collision(event: Any) -> None:
            with self._condition:
                ground.collisions.append(event)

        return on_collision

    def _tick(self, count: int) -> int:
        world = self._world
        for _ in range(count):
            self._action_frame = self._carla("ticking the world", world.tick)
        return self._action_frame

    # -- actions -------------------------------------------------------------------------

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one action of ``agent`` over whole ticks (``argument`` is unused).

        Raises:
            InvalidActionError: not a motion of the AerialDojo set, or a vertical motion of
                the UGV.
            SimulatorFaultError: a server failed, or the agent was not placed by ``reset``.
        """
        self._require_connection(agent)
        if agent == UGV:
            return self._execute_ugv(action)
        pose = self._uav_pose()
        if action.name == STOP:
            return MotionOutcome(pose=pose)
        self._place_uav(target_pose(pose, action), ignore_collision=False)
        self._tick(self._ticks_per_action)
        stamp, name = self._uav_collision()
        collided = stamp > self._uav_collision_ns
        self._uav_collision_ns = max(stamp, self._uav_collision_ns)
        return MotionOutcome(
            pose=self._uav_pose(), collided=collided, collision_object=name if collided else ""
        )

    def _execute_ugv(self, action: Action) -> MotionOutcome:
        ground = self._require_ground()
        pose = self._ugv_pose(ground)
        if action.name == STOP:
            return MotionOutcome(pose=pose)
        if action.name in ("MoveUp", "MoveDown"):
            raise InvalidActionError(f"{action.name}: the {UGV} drives on the ground")
        goal = target_pose(pose, action)
        with self._condition:
            ground.collisions.clear()
        transform = _carla_transform(map_to_carla(goal))
        self._carla("moving the UGV", lambda: ground.vehicle.set_transform(transform))
        self._tick(self._ticks_per_action)
        with self._condition:
            hits = [event.other_actor.type_id for event in ground.collisions]
        return MotionOutcome(
            pose=self._ugv_pose(ground), collided=bool(hits), collision_object=", ".join(hits)
        )

    def _ugv_pose(self, ground: _Ground) -> Pose:
        transform = self._carla("reading the UGV pose", ground.vehicle.get_transform)
        location = transform.location
        return carla_to_map(CarlaPose(location.x, location.y, location.z, transform.rotation.yaw))

    def _require_connection(self, agent: str) -> None:
        if self._world is None:
            raise SimulatorFaultError(
                f"{self.carla_endpoint}: not connected (a fault ended the connection; "
                "reset reconnects)"
            )
        if agent not in self._rigs:
            raise SimulatorFaultError(
                f"agent {agent!r} is not bridged; agents: {sorted(self._rigs)}"
            )

    def _require_ground(self) -> _Ground:
        if self._ground is None:
            raise SimulatorFaultError(f"the {UGV} has not been placed by reset")
        return self._ground

    # -- observations --------------------------------------------------------------------

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        """Every view of ``agent`` captured after its last action, stamped with the capture
        time. Ground-truth id images are not wired; ``instance_ids`` stays None.

        Raises:
            SimulatorFaultError: a server failed, or frames did not arrive within the timeout.
        """
        self._require_connection(agent)
        if agent == UGV:
            return self._observe_ugv(self._require_ground())
        requests = [
            request
            for spec in self._rigs[UAV]
            for request in (
                airsim.ImageRequest(spec.name, airsim.ImageType.Scene, False, False),
                airsim.ImageRequest(spec.name, airsim.ImageType.DepthPlanar, True, False),
            )
        ]
        fetcher = self._fetcher
        assert fetcher is not None  # connected
        responses = self._tick_until(
            fetcher.fetch(requests, self.settings.airsim_vehicle), "UAV images"
        )
        frames = {}
        for index, spec in enumerate(self._rigs[UAV]):
            colour, depth = responses[2 * index], responses[2 * index + 1]
            where = f"{self.airsim_endpoint}: {UAV}/{spec.name}"
            frames[spec.name] = CameraFrame(
                spec=spec,
                rgb=rgb_from_bgr_bytes(
                    colour.image_data_uint8, colour.width, colour.height, f"{where} Scene"
                ),
                depth=depth_from_floats(
                    depth.image_data_float, depth.width, depth.height, f"{where} DepthPlanar"
                ),
            )
        stamp_ns = max(int(response.time_stamp) for response in responses)
        return Observation(sim_time_s=stamp_ns / 1e9, pose=self._uav_pose(), frames=frames)

    def _tick_until(self, result: concurrent.futures.Future[T], what: str) -> T:
        """Keep ticking the world until ``result`` is ready (CARLA-Air renders on ticks)."""
        deadline = time.monotonic() + self.settings.policy.timeout_s
        while True:
            done, _ = concurrent.futures.wait([result], timeout=_TICK_WAIT_S)
            if done:
                try:
                    return result.result()
                except (RPCError, OSError) as error:
                    self._drop_connection()
                    raise fault(self.airsim_endpoint, f"fetching {what}", error) from error
            if time.monotonic() > deadline:
                self._drop_connection()
                raise SimulatorFaultError(
                    f"{self.airsim_endpoint}: no {what} within {self.settings.policy.timeout_s:g} s"
                )
            self._tick(1)

    def _observe_ugv(self, ground: _Ground) -> Observation:
        rig = self._rigs[UGV]
        keys = [
            (spec.name, kind)
            for spec in rig
            for kind in ("sensor.camera.rgb", "sensor.camera.depth")
        ]
        deadline = time.monotonic() + self.settings.policy.timeout_s
        with self._condition:
            while any(
                key not in ground.images or ground.images[key].frame < self._action_frame
                for key in keys
            ):
                if time.monotonic() > deadline:
                    raise SimulatorFaultError(
                        f"{self.carla_endpoint}: {UGV} cameras sent no frame of tick "
                        f"{self._action_frame} within {self.settings.policy.timeout_s:g} s"
                    )
                self._condition.wait(_TICK_WAIT_S)
            images = {key: ground.images[key] for key in keys}
        frames = {}
        for spec in rig:
            colour = images[(spec.name, "sensor.camera.rgb")]
            depth = images[(spec.name, "sensor.camera.depth")]
            where = f"{self.carla_endpoint}: {UGV}/{spec.name}"
            frames[spec.name] = CameraFrame(
                spec=spec,
                rgb=rgb_from_carla_bgra(bytes(colour.raw_data), colour.width, colour.height, where),
                depth=depth_from_carla_bgra(
                    bytes(depth.raw_data), depth.width, depth.height, where
                ),
            )
        stamp = max(float(image.timestamp) for image in images.values())
        return Observation(sim_time_s=stamp, pose=self._ugv_pose(ground), frames=frames)

    # -- map -----------------------------------------------------------------------------

    def road_graph(self, spacing_m: float = 2.0) -> RoadGraph:
        """The map's drivable lanes sampled every ``spacing_m`` as a directed graph.

        Raises:
            SimulatorFaultError: CARLA failed, or the backend is not connected.
        """
        if self._world is None:
            raise SimulatorFaultError(f"{self.carla_endpoint}: not connected; reset first")
        world_map = self._carla("reading the map", self._world.get_map)
        waypoints = self._carla(
            "sampling the road graph", lambda: world_map.generate_waypoints(spacing_m)
        )
        index = {waypoint.id: i for i, waypoint in enumerate(waypoints)}
        nodes = []
        for waypoint in waypoints:
            location = waypoint.transform.location
            pose = carla_to_map(CarlaPose(location.x, location.y, location.z, 0.0))
            nodes.append((pose.x, pose.y, pose.z))
        edges = sorted(
            {
                (index[waypoint.id], index[successor.id])
                for waypoint in waypoints
                for successor in waypoint.next(spacing_m)
                if successor.id in index
            }
        )
        return RoadGraph(nodes=tuple(nodes), edges=tuple(edges))

    def close(self) -> None:
        """Destroy the UGV's actors and give the world back in asynchronous mode."""
        world, original = self._world, self._original_settings
        ground = self._ground
        try:
            if ground is not None:
                for actor in [*ground.sensors, ground.vehicle]:
                    if hasattr(actor, "stop") and actor is not ground.vehicle:
                        actor.stop()
                    actor.destroy()
            if world is not None and original is not None:
                original.synchronous_mode = False
                world.apply_settings(original)
        except RuntimeError as error:
            _log.warning("%s: could not restore the world on close: %s", self.carla_endpoint, error)
        finally:
            self._drop_connection()


def _carla_transform(pose: CarlaPose) -> Any:
    return carla.Transform(
        carla.Location(pose.x, pose.y, pose.z), carla.Rotation(pitch=0.0, yaw=pose.yaw_deg)
    )
