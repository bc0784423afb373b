"""``CarlaAirBackend``: AGOS's simulator, CARLA-Air (CARLA and AirSim in one Unreal world).

Needs the ``carla`` (port 2000: world, ground vehicle, its cameras, the OpenDRIVE road graph)
and ``airsim`` (port 41451: the UAV) clients, which live in their own venv
(``.venv-carla-air``, tools/bootstrap_backend.sh) because airsim needs msgpack 0.5.

The bridge owns the clock: the world runs in synchronous mode with a fixed tick, and only this
backend ticks it; asynchronous mode is restored on close. CARLA-Air renders AirSim's cameras
on the world's tick, so a ``simGetImages`` call made on the only thread that ticks waits for a
tick that never comes (the known deadlock). Images are therefore requested over a connection
of their own (``airsim_wire``, which reads the answer straight into message buffers; the
airsim client would unpack every depth value into a Python float), whose answers a thread of
their own waits for and reads; the calling thread writes the request, ticks at once, and ticks
again only if no answer follows.

What CARLA-Air does that shapes this backend (docs/simulators.md has the sources):
- AirSim's settings file decides the UAV's cameras, their sizes and FOV, and the physics
  engine; the backend refuses a server whose settings do not match its rig or leave the drone
  to AirSim's own physics (it would fall between steps) and names the settings file to install
  (``sim.remote.airsim_settings``).
- AirSim stamps images with its own clock (the Unix epoch on its physics thread), not CARLA's:
  every observation, UAV or UGV, is stamped with CARLA's simulation time of the tick that
  rendered it.
- CARLA-Air lifts the drone above the first surface a ray from 100 m above it hits; a start
  pose under a roof, an overpass or a canopy cannot be flown and is refused at reset.
- ``set_transform`` teleports the UGV without a sweep: the backend casts rays along each move
  and stops the UGV short of the first obstacle (a collision).
- The launcher starts city traffic with an asynchronous traffic manager; the backend removes
  it, or makes its traffic manager synchronous (``carla_air_traffic``).
- Actors outlive a fault: the UGV and its sensors carry the role name ``aerialdojo/ugv`` and
  every connection destroys what an earlier one left.
- A source-built CARLA-Air reports its commit as the server version and ships its own Python
  module (a Python 3.10 build). LibCarla only warns about a version mismatch
  (``client/detail/Simulator.cpp`` ``ValidateVersions``) and the server never checks the
  client's (``CarlaServer.cpp`` ``version``); CARLA-Air v0.1.7's LibCarla is CARLA 0.9.16's, so
  PyPI's ``carla==0.9.16`` is used with a warning and ``aerialdojo doctor`` proves the pair
  with a round trip (spawn, tick, a sensor frame, destroy).

Agents: ``uav`` is AirSim's vehicle, placed with ``simSetVehiclePose``; ``ugv`` is a CARLA
vehicle spawned at each episode start (a spawn on an occupied spot fails, which checks the
start), moved with ``set_transform`` (it drives on the ground: MoveUp/MoveDown are refused),
with an RGB and a depth camera per view and a collision sensor. The map frame is CARLA's world
mirrored in y; AirSim poses go through the map's offset (``sim.remote.frames``).
"""

from __future__ import annotations

import concurrent.futures
import json
import logging
import math
import queue
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, NoReturn, TypeVar

import airsim
import carla
import numpy as np
from msgpackrpc.error import RPCError

from aerialdojo.actions import STOP, Action, target_pose
from aerialdojo.agos.sensors import current_views
from aerialdojo.errors import (
    ConfigError,
    InvalidActionError,
    SimulatorFaultError,
    UnknownSceneError,
)
from aerialdojo.geometry import Pose
from aerialdojo.image_codec import message_array
from aerialdojo.robot.motions import MotionWorld, plan_motion
from aerialdojo.sim.backend import (
    BackendOptions,
    CameraFrame,
    CameraSpec,
    MotionOutcome,
    Observation,
    SimulatorBackend,
)
from aerialdojo.sim.remote.airsim_settings import SETTINGS_FIX, settings_problems
from aerialdojo.sim.remote.airsim_wire import (
    AirSimImageChannel,
    AirSimRpcError,
    AirSimWireError,
)
from aerialdojo.sim.remote.connection import (
    Endpoint,
    check_version,
    connect_with_retries,
    fault,
)
from aerialdojo.sim.remote.diagnostics import ServerCamera, WorldObject
from aerialdojo.sim.remote.frames import (
    CarlaPose,
    carla_to_map,
    map_to_carla,
)
from aerialdojo.sim.remote.images import (
    depth_from_carla_bgra,
    depth_from_floats,
    rgb_from_carla_bgra,
    rgb_in_place_of_bgr,
)
from aerialdojo.sim.remote.rigs import benchmark_rigs, remote_benchmark
from aerialdojo.sim.remote.settings import CarlaAirSettings
from aerialdojo.spawns import SpawnedObject

T = TypeVar("T")

UAV, UGV = "uav", "ugv"
#: Client releases this backend was written and tested against.
TESTED_CARLA_VERSION = "0.9.16"
TESTED_AIRSIM_VERSION = "1.8.1"
#: How long to wait between looks at the UGV's camera frames, seconds of wall time.
_TICK_WAIT_S = 0.01
#: How long to wait, at least, for an answer to start after a tick before ticking again,
#: seconds of wall time: the images that tick rendered are still being packed, and a tick
#: too many costs a frame of wall time (ticking again after 10 ms made two ticks per
#: observation set at 256²) and stamps the set with a tick later than the one that
#: rendered it. The wait grows with the answers the server gave (``_REPLY_WAIT_MARGIN``
#: times the last one's start after its first tick): at 640² the fake's answers start
#: 60-100 ms after the tick.
_REPLY_WAIT_S = 0.05
_REPLY_WAIT_MARGIN = 1.5
#: Role names of the actors this backend spawns: the UGV (``<role>``, ``<role>/<view>``) and
#: an episode's objects (``<role>/<object id>``); every actor whose role starts with
#: ``aerialdojo/`` is this backend's, and an earlier connection's is destroyed.
UGV_ROLE = "aerialdojo/ugv"
OBJECT_ROLE = "aerialdojo/object"
_OWN_ROLES = "aerialdojo/"
#: Objects are spawned this far above the ground they stand on: CARLA refuses a spawn whose
#: actor overlaps anything (``ActorSpawnResult.cpp``: "a collision at spawn position"), the
#: road surface included; a vehicle then settles on its wheels, a prop keeps its place.
SPAWN_LIFT_M = 0.3
#: A read-back pose this much above the placed one was lifted by CARLA-Air's ground clamp.
_LIFT_TOLERANCE_M = 0.01
#: Semantic labels of surfaces a car drives on or under, never obstacles to a move.
_DRIVABLE = frozenset({"Roads", "RoadLines", "Sidewalks", "Ground", "Terrain", "Sky"})
#: Clearance the UGV keeps to an obstacle it stops at, metres.
_STOP_SHORT_M = 0.1
#: Traffic the launcher (CARLA-Air's auto_traffic.py) spawns: type id prefixes, and the role
#: name it gives its cars.
_CARS, _WALKERS, _WALKER_AI = "vehicle.", "walker.", "controller.ai.walker"
_LAUNCHER_ROLE = "autopilot"
#: A UAV that ends an action farther than this from where it was sent, without a collision,
#: was moved by something else.
_DRIFT_TOLERANCE_M = 0.05
_RELEASE = re.compile(r"^\d+(\.\d+)+$")
#: A smoke test's UAV start: high above the map origin, clear of buildings.
SMOKE_TEST_UAV_START = Pose(0.0, 0.0, 100.0, 0.0)

_log = logging.getLogger(__name__)


def next_reply_wait(started_after_s: float, timeout_s: float) -> float:
    """How long to wait for an image answer to start after a tick before ticking again,
    given that the last one started ``started_after_s`` after its first tick: at least
    ``_REPLY_WAIT_S``, ``_REPLY_WAIT_MARGIN`` times that, at most ``timeout_s``."""
    return min(max(_REPLY_WAIT_S, _REPLY_WAIT_MARGIN * started_after_s), timeout_s)


def _message_buffer(size: int) -> np.ndarray:
    """A payload buffer an image message takes as it is: the UAV's images go from the socket
    to DDS in it."""
    return message_array((size,), np.uint8)


@dataclass(frozen=True)
class RoadGraph:
    """CARLA's OpenDRIVE lanes sampled as a directed graph (AGOS-Bench, appendix A.1.1).

    Attributes:
        nodes: lane waypoints (x, y, z) in the map frame.
        edges: (from, to) index pairs following each lane's successors.
    """

    nodes: tuple[tuple[float, float, float], ...]
    edges: tuple[tuple[int, int], ...]


@dataclass
class _ImageFetch:
    """One ``simGetImages`` read on the image thread: ``answering`` is set once the reply
    starts to arrive (``answer_started`` its monotonic time), or the fetch failed.
    ``result`` holds the responses or the error."""

    answering: threading.Event = field(default_factory=threading.Event)
    answer_started: float | None = None
    result: concurrent.futures.Future[Any] = field(default_factory=concurrent.futures.Future)


class _ImageFetcher:
    """``simGetImages`` over a connection of its own, whose replies a thread of its own reads
    straight into arrays (``airsim_wire``). The caller writes the request: it is on the wire
    when ``fetch`` returns, so the caller may tick at once, and that tick renders the images.
    Only the wait for the answer must be off the ticking thread."""

    def __init__(self, make_channel: Callable[[], AirSimImageChannel]) -> None:
        self._make_channel = make_channel
        self._channel: AirSimImageChannel | None = None
        self._jobs: queue.Queue[tuple[AirSimImageChannel, int, _ImageFetch] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="airsim-images", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while (job := self._jobs.get()) is not None:
            channel, msgid, fetch = job
            try:
                if channel.wait_for_reply():
                    fetch.answer_started = time.monotonic()
                    fetch.answering.set()
                fetch.result.set_result(channel.read_images(msgid))
            except (AirSimRpcError, AirSimWireError, OSError) as error:
                # Forgotten before the caller hears of it: its next fetch reconnects.
                self._channel = None
                channel.close()
                fetch.result.set_exception(error)
            finally:
                fetch.answering.set()
        if self._channel is not None:
            self._channel.close()

    def fetch(self, requests: list[Any], vehicle: str) -> _ImageFetch:
        """Write the request for ``requests`` of ``vehicle`` (connecting first after a
        fault), and read the answer on the image thread.

        Raises:
            OSError: the server cannot be reached or the request not written.
        """
        if self._channel is None:
            self._channel = self._make_channel()
        channel = self._channel
        try:
            msgid = channel.send_image_request(requests, vehicle)
        except OSError:
            self._channel = None
            channel.close()
            raise
        fetch = _ImageFetch()
        self._jobs.put((channel, msgid, fetch))
        return fetch

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
        settings: server address, ports, map and its offset, tick, traffic, timeouts.
        rigs: camera rig per agent (``uav`` and/or ``ugv``).
        seconds_per_action: simulated time one action takes (rounded up to whole ticks).
        carla_client: a ready ``carla.Client`` (or stand-in); None connects to
            ``settings.host:carla_port``.

    Raises:
        ConfigError: an agent other than uav/ugv, or a rig without cameras.
    """

    #: What ``aerialdojo doctor`` says when a camera check fails.
    camera_fix = f"UAV: {SETTINGS_FIX}; UGV: check carla_air_ugv_blueprint"

    @classmethod
    def from_options(cls, options: BackendOptions) -> CarlaAirBackend:
        settings = CarlaAirSettings.from_parameters(options.parameters)
        rigs = benchmark_rigs(
            settings.benchmark,
            options.agents,
            options.image_width,
            options.image_height,
            options.fov_deg,
        )
        return cls(settings=settings, rigs=rigs, seconds_per_action=options.seconds_per_action)

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
        #: The server a survey names (CARLA's world).
        self.endpoint = self.carla_endpoint
        self.airsim_endpoint = Endpoint("AirSim", settings.host, settings.airsim_port)
        self.server_build = ""
        self._version_note = ""
        self._given_carla_client = carla_client
        self._condition = threading.Condition()
        self._client: Any = None
        self._world: Any = None
        self._original_settings: Any = None
        self._traffic_manager: Any = None
        self._airsim: Any = None
        self._fetcher: _ImageFetcher | None = None
        self._ground: _Ground | None = None
        self._objects: list[Any] = []
        self._uav_collision_ns = 0
        self._action_frame = 0
        self._tick_time_s = 0.0
        self._reply_wait_s = _REPLY_WAIT_S
        self._ugv_cameras: dict[str, ServerCamera] = {}
        self._uav_sizes: dict[str, tuple[int, int]] = {}
        benchmark = remote_benchmark(settings.benchmark)
        self.global_localization = benchmark.global_localization
        #: What shows each agent the views its first observation leaves out (an AGOS UGV's
        #: ring comes after STOP_OBSERVE); the doctor checks those views too.
        self.reveal_actions = {
            agent: action for agent, action in benchmark.reveal_actions.items() if agent in rigs
        }
        self._decisions = benchmark.decisions
        #: The UGV's pose (and its cameras) this far above its vehicle, which stands on the
        #: road: an AGOS UGV's body frame is at camera height, as in the embedded towns.
        self._ugv_mount_m = benchmark.ugv_body_height_m
        #: Agents whose next observation shows the views their reveal action brings.
        self._revealed: set[str] = set()
        self._motion_world = MotionWorld(settings.map_name)

    # -- connection ----------------------------------------------------------------------

    def connect(self) -> None:
        """Connect to CARLA and AirSim unless connected (``reset`` does it too); sets
        ``server_build``.

        Raises:
            ConfigError: the server runs another map, its AirSim settings do not serve the
                rig, or its CARLA needs another client module.
            SimulatorFaultError: a server cannot be reached.
        """
        if self._world is None:
            self._connect()

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
        self._version_note = self._check_carla_versions(client_version, server_version)
        world = self._carla("reading the world", client.get_world)
        loaded = str(world.get_map().name)
        if not loaded.rsplit("/", maxsplit=1)[-1].startswith(self.settings.map_name):
            raise ConfigError(
                f"sim_bridge.carla_air_map: the run asks for {self.settings.map_name!r} but "
                f"{self.carla_endpoint} runs {loaded!r}"
            )
        try:
            self._connect_airsim_and_take_the_world(client, world, client_version, server_version)
        except BaseException:
            self._drop_connection()
            raise

    def _connect_airsim_and_take_the_world(
        self, client: Any, world: Any, client_version: str, server_version: str
    ) -> None:
        policy = self.settings.policy
        check_version("airsim client", airsim.__version__, TESTED_AIRSIM_VERSION)
        self._airsim = connect_with_retries(
            self._airsim_client, self.airsim_endpoint, policy, (RPCError, OSError)
        )
        engine = self._check_airsim_settings()
        self._call_airsim(
            "enabling API control",
            lambda: self._airsim.enableApiControl(True, self.settings.airsim_vehicle),
        )
        self.server_build = (
            f"CARLA {server_version} (client {client_version}), AirSim RPC "
            f"{self._call_airsim('reading its version', self._airsim.getServerVersion)} "
            f"with {engine}{self._version_note}"
        )
        self._original_settings = self._carla("reading settings", world.get_settings)
        if self._original_settings.synchronous_mode:
            # Only its client ticks a synchronous world: one that died without giving it
            # back left CARLA-Air frozen (guide/FAQ.md). Taken over here, given back on close.
            _log.warning(
                "%s was left in synchronous mode by a client that is gone (a killed bridge?); "
                "taking it over, and giving it back asynchronous on close",
                self.carla_endpoint,
            )
        synchronous = world.get_settings()
        synchronous.synchronous_mode = True
        synchronous.fixed_delta_seconds = self.settings.fixed_delta_s
        self._carla("entering synchronous mode", lambda: world.apply_settings(synchronous))
        self._client, self._world = client, world
        self._destroy_leftovers()
        self._tame_traffic()
        self._fetcher = _ImageFetcher(
            lambda: AirSimImageChannel(
                self.settings.host,
                self.settings.airsim_port,
                self.settings.policy.timeout_s,
                allocate=_message_buffer,
            )
        )

    def _check_carla_versions(self, client_version: str, server_version: str) -> str:
        """Warn about a client of another version, as LibCarla does (``Simulator.cpp``
        ``ValidateVersions``: a warning, never a refusal); returns what to show of it. A
        CARLA-Air source build reports its commit (``Util/BuildTools/Setup.sh``)."""
        if client_version == server_version:
            return ""
        if _RELEASE.match(server_version) and _RELEASE.match(client_version):
            check_version("carla client", client_version, TESTED_CARLA_VERSION)
            check_version(
                f"CARLA server ({self.carla_endpoint})", server_version, client_version, 3
            )
            return ""
        message = (
            f"{self.carla_endpoint} is build {server_version!r}, the carla client "
            f"{client_version!r}: LibCarla only warns about this; aerialdojo doctor's round "
            "trip shows whether they work together"
        )
        _log.warning(message)
        return "; versions differ, LibCarla only warns (see the round trip)"

    def _check_airsim_settings(self) -> str:
        """The server's AirSim settings must hold the UAV rig and the external physics
        engine; returns the engine.

        Raises:
            ConfigError: they do not, with every problem and the file to install.
        """
        text = self._call_airsim("reading AirSim's settings", self._airsim.getSettingsString)
        try:
            settings = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(
                f"{self.airsim_endpoint}: its settings are not JSON ({error}); {SETTINGS_FIX}"
            ) from error
        rig = self._rigs.get(UAV, [])
        problems = settings_problems(settings, rig, self.settings.airsim_vehicle)
        if UAV in self._rigs and problems:
            raise ConfigError(
                f"{self.airsim_endpoint}: AirSim's settings cannot serve the {UAV} rig: "
                f"{'; '.join(problems)}. Fix: {SETTINGS_FIX}"
            )
        return str(settings.get("PhysicsEngineName") or "FastPhysicsEngine")

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
        """Forget the connection after a fault; the next reset reconnects and destroys the
        actors left behind."""
        if self._fetcher is not None:
            self._fetcher.close(timeout_s=0.0)
        if self._airsim is not None:
            self._airsim.client.close()
        self._client, self._world, self._airsim, self._fetcher = None, None, None, None
        self._ground, self._traffic_manager = None, None
        self._objects = []

    # -- the world -----------------------------------------------------------------------

    def _destroy_leftovers(self) -> None:
        """Destroy the UGV and the objects an earlier connection spawned (actors outlive a
        fault)."""
        for actor in self._carla("listing actors", self._world.get_actors):
            if str(actor.attributes.get("role_name", "")).startswith(_OWN_ROLES):
                _destroy(actor)

    def _tame_traffic(self) -> None:
        """Remove the launcher's traffic, or keep its cars on a synchronous, seeded traffic
        manager. Walkers go either way: auto_traffic.py gives them destinations on its wall
        clock."""
        actors = self._carla("listing actors", self._world.get_actors)
        keep_cars = self.settings.traffic == "synchronous"
        launched = [
            actor
            for actor in actors
            if str(actor.type_id).startswith(_CARS)
            and actor.attributes.get("role_name") == _LAUNCHER_ROLE
        ]
        if keep_cars and launched:
            raise ConfigError(
                f"{self.carla_endpoint}: carla_air_traffic is synchronous, but {len(launched)} "
                "cars are auto_traffic.py's (role_name 'autopilot'), which carlaAir.sh starts "
                "beside the server: every 10 s of wall time it turns autopilot back on for "
                "stopped cars and sends walkers to new places (go_to_location, which the "
                "CarlaAir FAQ says crashes the server), so no two runs see the same world. "
                "Fix: stop auto_traffic.py on the CARLA-Air host and spawn your own traffic, "
                "or set carla_air_traffic: remove"
            )
        for actor in actors:
            type_id = str(actor.type_id)
            if type_id.startswith((_WALKERS, _WALKER_AI)) or (
                type_id.startswith(_CARS) and not keep_cars
            ):
                _destroy(actor)
        if keep_cars:
            manager = self._carla(
                "reaching the traffic manager",
                partial(self._client.get_trafficmanager, self.settings.traffic_manager_port),
            )
            manager.set_synchronous_mode(True)
            manager.set_random_device_seed(self.settings.seed)
            self._traffic_manager = manager

    # -- scenes and episodes -------------------------------------------------------------

    def scenes(self) -> list[str]:
        return [self.settings.map_name]

    def start_pose(self, scene: str, agent: str) -> Pose:
        """A free start for a smoke test: the UAV high above the map origin, the UGV on the
        first lane waypoint (its body at its mount height), heading along its lane.

        Raises:
            SimulatorFaultError: CARLA failed, or the backend is not connected.
        """
        if agent == UAV:
            return SMOKE_TEST_UAV_START
        graph = self.road_graph()
        start, ahead = graph.edges[0]
        (x0, y0, z0), (x1, y1, _) = graph.nodes[start], graph.nodes[ahead]
        # The UGV's body is its mount height above the lane (its vehicle on the road).
        return Pose(x0, y0, z0 + self._ugv_mount_m, math.atan2(y1 - y0, x1 - x0))

    def place_objects(self, scene: str, objects: Sequence[SpawnedObject]) -> None:
        """Destroy the previous episode's objects and spawn ``objects`` by blueprint, each
        with its attributes and the role name ``aerialdojo/object/<id>``, ``SPAWN_LIFT_M``
        above its pose; none is left half-placed.

        Raises:
            UnknownSceneError: ``scene`` is not the run's map.
            ConfigError: the server has no such blueprint, or the blueprint no such
                modifiable attribute (the suite was made for another server).
            SimulatorFaultError: CARLA failed, or a spot is occupied (the world holds
                something the suite did not expect there).
        """
        self._check_scene(scene)
        if self._world is None:
            self._connect()
        self._destroy_objects()
        if not objects:
            return
        world = self._world
        library = self._carla("reading blueprints", world.get_blueprint_library)
        try:
            for spawn in objects:
                self._objects.append(self._spawn_object(world, library, spawn))
        except BaseException:
            self._destroy_objects()
            raise

    def _spawn_object(self, world: Any, library: Any, spawn: SpawnedObject) -> Any:
        where = f"{self.carla_endpoint}: object {spawn.object_id}"
        blueprint = self._blueprint(library, spawn, where)
        placed = map_to_carla(spawn.pose)
        lifted = CarlaPose(placed.x, placed.y, placed.z + SPAWN_LIFT_M, placed.yaw_deg)
        actor = self._carla(
            f"spawning {spawn.blueprint}",
            partial(world.try_spawn_actor, blueprint, _carla_transform(lifted)),
        )
        if actor is None:  # World::TrySpawnActor: any refusal, a collision above all
            raise SimulatorFaultError(
                f"{where}: cannot spawn {spawn.blueprint} at ({spawn.pose.x:.1f}, "
                f"{spawn.pose.y:.1f}): the spot is occupied (a parked car or street furniture "
                "of the map, or an actor another client left)"
            )
        return actor

    @staticmethod
    def _blueprint(library: Any, spawn: SpawnedObject, where: str) -> Any:
        """``spawn``'s blueprint with its attributes and role name set.

        Raises:
            ConfigError: the library has no such blueprint, or it refuses an attribute.
        """
        try:
            blueprint = library.find(spawn.blueprint)
        except IndexError as error:  # LibCarla BlueprintLibrary::at: std::out_of_range
            raise ConfigError(
                f"{where}: the server has no blueprint {spawn.blueprint!r} ({error}); the suite "
                "was made for another CARLA build"
            ) from error
        for name, value in (*spawn.attributes, ("role_name", f"{OBJECT_ROLE}/{spawn.object_id}")):
            try:
                blueprint.set_attribute(name, value)
            except (IndexError, ValueError, RuntimeError) as error:
                # ActorBlueprint::SetAttribute: an unknown attribute is out_of_range, a
                # read-only or malformed value InvalidAttributeValue.
                raise ConfigError(
                    f"{where}: {spawn.blueprint} takes no {name}={value!r}: {error}"
                ) from error
        return blueprint

    def _destroy_objects(self) -> None:
        objects, self._objects = self._objects, []
        for actor in objects:
            self._carla("destroying an episode's object", partial(_destroy, actor))

    def _check_scene(self, scene: str) -> None:
        if scene != self.settings.map_name:
            raise UnknownSceneError(
                f"CARLA-Air serves the run's map {self.settings.map_name!r} only, not {scene!r}"
            )

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Place the agents on the map (spawning the UGV afresh) and tick once.

        Raises:
            UnknownSceneError: ``scene`` is not the run's map.
            ConfigError: an agent without a rig, the server runs another map, its AirSim
                settings do not serve the rig, or its CARLA needs another client module.
            SimulatorFaultError: CARLA or AirSim failed or did not answer, the UGV's start
                is occupied, or CARLA-Air lifted the UAV off its start.
        """
        self._check_scene(scene)
        self._check_rigged(poses)
        if self._world is None:
            self._connect()
        self._revealed = set()
        if UAV in poses:
            self._place_uav(poses[UAV], ignore_collision=True)
        if UGV in poses:
            self._place_ugv(poses[UGV])
        self._tick(1)
        if UAV in poses:
            self._check_not_lifted(poses[UAV])
            self._uav_collision_ns = self._uav_collision()[0]

    def _check_not_lifted(self, placed: Pose) -> None:
        """CARLA-Air clamps the drone above the first surface a ray from 100 m above it
        hits (CarlaAir MultirotorPawnSimApi.cpp): a start under a roof is moved on top."""
        actual = self._uav_pose()
        if actual.z > placed.z + _LIFT_TOLERANCE_M:
            raise SimulatorFaultError(
                f"{self.airsim_endpoint}: CARLA-Air lifted the {UAV} from z={placed.z:.2f} m to "
                f"{actual.z:.2f} m at ({placed.x:.1f}, {placed.y:.1f}): its ground clamp puts "
                "the drone above the first surface hit from 100 m above, so a start under a "
                "roof, an overpass or a canopy cannot be flown"
            )

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
        """(time stamp, object name) of the UAV's last collision (AirSim's clock)."""
        vehicle = self.settings.airsim_vehicle
        info = self._call_airsim(
            "reading UAV collisions", lambda: self._airsim.simGetCollisionInfo(vehicle)
        )
        return (int(info.time_stamp) if info.has_collided else 0, str(info.object_name))

    def _place_ugv(self, pose: Pose) -> None:
        """Spawn the UGV at ``pose``, replacing the one of the previous episode: CARLA refuses
        a spawn on an occupied spot, which a teleport would not."""
        if self._ground is not None:
            for actor in [*self._ground.sensors, self._ground.vehicle]:
                self._carla("destroying the previous UGV", partial(_destroy, actor))
            self._ground = None
        self._ground = self._spawn_ugv(_carla_transform(self._ugv_vehicle_pose(pose)), pose)

    def _spawn_ugv(self, transform: Any, pose: Pose) -> _Ground:
        world = self._world
        library = self._carla("reading blueprints", world.get_blueprint_library)
        blueprint = library.find(self.settings.ugv_blueprint)
        blueprint.set_attribute("role_name", UGV_ROLE)
        vehicle = self._carla(
            "spawning the UGV", lambda: world.try_spawn_actor(blueprint, transform)
        )
        if vehicle is None:
            raise SimulatorFaultError(
                f"{self.carla_endpoint}: cannot spawn the {UGV} at ({pose.x:.1f}, {pose.y:.1f}): "
                "the spot is occupied"
            )
        ground = _Ground(vehicle=vehicle, sensors=[])
        try:
            self._attach_sensors(world, library, ground)
        except BaseException:
            for actor in [*ground.sensors, vehicle]:
                _destroy(actor)
            raise
        self._ugv_cameras = {}
        return ground

    def _attach_sensors(self, world: Any, library: Any, ground: _Ground) -> None:
        """Attach an RGB and a depth camera per view of the UGV's rig, and a collision
        sensor, to its vehicle (``spawn_actor(..., attach_to=vehicle)``, rigid)."""
        vehicle = ground.vehicle
        for spec in self._rigs.get(UGV, []):
            for kind in ("sensor.camera.rgb", "sensor.camera.depth"):
                camera = library.find(kind)
                for name, value in (
                    ("image_size_x", spec.width),
                    ("image_size_y", spec.height),
                    ("fov", spec.fov_deg),
                    ("role_name", f"{UGV_ROLE}/{spec.name}"),
                ):
                    camera.set_attribute(name, str(value))
                mount = carla.Transform(
                    carla.Location(
                        spec.offset[0], -spec.offset[1], spec.offset[2] + self._ugv_mount_m
                    ),
                    carla.Rotation(pitch=spec.pitch_deg, yaw=-spec.yaw_deg),
                )
                sensor = self._carla(
                    f"spawning the {spec.name} camera",
                    partial(world.spawn_actor, camera, mount, attach_to=vehicle),
                )
                sensor.listen(self._image_callback(ground, (spec.name, kind)))
                ground.sensors.append(sensor)
        collision_blueprint = library.find("sensor.other.collision")
        collision_blueprint.set_attribute("role_name", f"{UGV_ROLE}/collision")
        collision = self._carla(
            "spawning the collision sensor",
            partial(world.spawn_actor, collision_blueprint, carla.Transform(), attach_to=vehicle),
        )
        collision.listen(self._collision_callback(ground))
        ground.sensors.append(collision)

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
            snapshot = self._carla("reading the world's time", world.get_snapshot)
            self._tick_time_s = float(snapshot.timestamp.elapsed_seconds)
        return self._action_frame

    # -- actions -------------------------------------------------------------------------

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one action of ``agent`` over whole ticks: a decision of the run's benchmark
        (AGOS's; ``argument`` names its waypoint or anchor), or an AerialDojo motion
        (``argument`` unused; the doctor's probe step in either).

        Raises:
            InvalidActionError: a vertical motion of the UGV, an action that is neither, or a
                decision whose argument names no waypoint or reachable anchor.
            SimulatorFaultError: a server failed, or the agent was not placed by ``reset``.
        """
        self._require_connection(agent)
        if action.name in self._decisions:
            return self._execute_decision(agent, action, argument)
        self._revealed.discard(agent)
        if agent == UGV:
            return self._execute_ugv(action)
        pose = self._uav_pose()
        if action.name == STOP:
            return MotionOutcome(pose=pose)
        return self._fly_uav(target_pose(pose, action))

    def _execute_decision(self, agent: str, action: Action, argument: str) -> MotionOutcome:
        """One AGOS decision, planned as a robot's (``robot.motions``: the UAV to a grid
        waypoint at its altitude, the UGV through every fine node of its road drive, heading
        along the road; the other decisions move nothing) on the map's road graph and UAV
        grid; every decision takes one action's ticks."""
        ground = self._require_ground() if agent == UGV else None
        start = self._uav_pose() if ground is None else self._ugv_pose(ground)
        plan = plan_motion(start, action, argument, self._motion_world)
        revealing = self.reveal_actions.get(agent)
        if revealing is not None and action.name == revealing.name:
            self._revealed.add(agent)
        else:
            self._revealed.discard(agent)
        if plan.target is None:
            self._tick(self._ticks_per_action)
            return MotionOutcome(pose=start if ground is None else self._ugv_pose(ground))
        if ground is None:
            return self._fly_uav(plan.target)
        return self._drive_ugv(ground, start, plan.waypoints)

    def _fly_uav(self, goal: Pose) -> MotionOutcome:
        """Move the UAV to ``goal`` over one action's ticks, stopped by what it hits."""
        self._place_uav(goal, ignore_collision=False)
        self._tick(self._ticks_per_action)
        stamp, name = self._uav_collision()
        collided = stamp > self._uav_collision_ns
        outcome = MotionOutcome(
            pose=self._uav_pose(), collided=collided, collision_object=name if collided else ""
        )
        drift = outcome.pose.distance_to(goal.position)
        if not collided and drift > _DRIFT_TOLERANCE_M:
            # Keyboard or mouse input in the CarlaAir window starts its FPS drone control
            # (SimWorldGameMode.cpp FDroneControlWorker: API control, arming, moveByVelocity
            # every 0.1 s), which fights the bridge; so would another AirSim client.
            self._drop_connection()
            raise SimulatorFaultError(
                f"{self.airsim_endpoint}: the {UAV} ended {drift:.2f} m from where it was sent "
                "without a collision: something else moves it (keyboard or mouse input in the "
                "CarlaAir window takes over the drone; restart CARLA-Air and leave its window "
                "alone, or another AirSim client)"
            )
        if collided:
            # The physics body stays at the blocked goal and every tick would sweep the drone
            # into the obstacle again (MultirotorPawnSimApi.cpp updateRendering): put the body
            # where the drone stopped.
            self._place_uav(outcome.pose, ignore_collision=True)
            self._tick(1)
            stamp = max(stamp, self._uav_collision()[0])
        self._uav_collision_ns = max(stamp, self._uav_collision_ns)
        return outcome

    def _execute_ugv(self, action: Action) -> MotionOutcome:
        ground = self._require_ground()
        pose = self._ugv_pose(ground)
        if action.name == STOP:
            return MotionOutcome(pose=pose)
        if action.name in ("MoveUp", "MoveDown"):
            raise InvalidActionError(f"{action.name}: the {UGV} drives on the ground")
        return self._drive_ugv(ground, pose, [target_pose(pose, action)])

    def _drive_ugv(self, ground: _Ground, start: Pose, waypoints: Sequence[Pose]) -> MotionOutcome:
        """Drive the UGV from ``start`` through ``waypoints``, stopping short of the first
        obstacle a leg's sweep meets, then tick one action's worth: the vehicle is
        teleported once, to where the drive ends."""
        here, hit = start, None
        for leg in waypoints:
            # The box heads along the leg while it is swept (a turn in place is not swept).
            heading = math.atan2(leg.y - here.y, leg.x - here.x)
            hit = self._ugv_path_hit(ground, Pose(here.x, here.y, here.z, heading), leg)
            if hit is not None:
                fraction = hit[0]
                here = Pose(
                    here.x + (leg.x - here.x) * fraction,
                    here.y + (leg.y - here.y) * fraction,
                    leg.z,
                    leg.yaw,
                )
                break
            here = leg
        goal = here
        with self._condition:
            ground.collisions.clear()
        transform = _carla_transform(self._ugv_vehicle_pose(goal))
        self._carla("moving the UGV", lambda: ground.vehicle.set_transform(transform))
        self._tick(self._ticks_per_action)
        with self._condition:
            hits = [event.other_actor.type_id for event in ground.collisions]
        if hit is not None:
            hits.insert(0, hit[1])
        return MotionOutcome(
            pose=self._ugv_pose(ground), collided=bool(hits), collision_object=", ".join(hits)
        )

    def _ugv_path_hit(self, ground: _Ground, start: Pose, goal: Pose) -> tuple[float, str] | None:
        """Where along start -> goal the UGV's box first meets an obstacle, as a fraction of
        the way it can still go, with the obstacle's semantic label; None if the way is free.

        ``set_transform`` teleports without a sweep (CARLA ``CarlaActor.cpp``), so the backend
        sweeps itself: rays from the box's sides and centre, at two heights, cast along the
        move (``World.cast_ray``: every surface hit, with its label). A turn in place is not
        swept.
        """
        begin, end = self._ugv_vehicle_pose(start), self._ugv_vehicle_pose(goal)
        dx, dy = end.x - begin.x, end.y - begin.y
        length = math.hypot(dx, dy)
        if length < 1e-6:
            return None
        ux, uy = dx / length, dy / length
        box = ground.vehicle.bounding_box
        heading = math.radians(begin.yaw_deg)
        # The box's reach along the move and across it, in the world frame.
        along = (
            abs(ux * math.cos(heading) + uy * math.sin(heading)) * box.extent.x
            + abs(-ux * math.sin(heading) + uy * math.cos(heading)) * box.extent.y
        )
        across = (
            abs(-uy * math.cos(heading) + ux * math.sin(heading)) * box.extent.x
            + abs(uy * math.sin(heading) + ux * math.cos(heading)) * box.extent.y
        )
        nearest: tuple[float, str] | None = None
        for side in (-0.95 * across, 0.0, 0.95 * across):
            for height in (box.location.z, 0.5 * box.location.z):
                origin = carla.Location(begin.x - uy * side, begin.y + ux * side, begin.z + height)
                target = carla.Location(
                    origin.x + ux * (along + length), origin.y + uy * (along + length), origin.z
                )
                points = self._carla(
                    "casting a ray along the UGV's move",
                    partial(self._world.cast_ray, origin, target),
                )
                for point in points:
                    label = str(point.label)
                    travel = (point.location.x - origin.x) * ux + (point.location.y - origin.y) * uy
                    if label in _DRIVABLE or travel <= along:
                        continue  # the road, or the UGV's own body
                    if nearest is None or travel < nearest[0]:
                        nearest = (travel, label)
                    break
        if nearest is None or nearest[0] - along >= length:
            return None
        return max(0.0, nearest[0] - along - _STOP_SHORT_M) / length, nearest[1]

    def _ugv_pose(self, ground: _Ground) -> Pose:
        """The UGV's body pose: its vehicle's, raised to where its cameras sit."""
        transform = self._carla("reading the UGV pose", ground.vehicle.get_transform)
        location = transform.location
        return carla_to_map(
            CarlaPose(
                location.x, location.y, location.z + self._ugv_mount_m, transform.rotation.yaw
            )
        )

    def _ugv_vehicle_pose(self, pose: Pose) -> CarlaPose:
        """Where the UGV's vehicle stands (its origin, on the road) for body pose ``pose``."""
        placed = map_to_carla(pose)
        return CarlaPose(placed.x, placed.y, placed.z - self._ugv_mount_m, placed.yaw_deg)

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
        """Every view of ``agent`` rendered after its last action (in an AGOS run, the UGV's
        front view, or its six-view ring right after STOP_OBSERVE), stamped with CARLA's
        time of the tick that rendered it. Ground-truth id images are not wired;
        ``instance_ids`` stays None.

        Raises:
            SimulatorFaultError: a server failed, frames did not arrive within
                ``frame_timeout_s``, or a frame is not the size the rig asked for.
        """
        self._require_connection(agent)
        if agent == UGV:
            views = current_views(self._rigs[UGV], ring=UGV in self._revealed)
            return self._observe_ugv(self._require_ground(), views)
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
        what = "UAV images"
        try:
            fetch = fetcher.fetch(requests, self.settings.airsim_vehicle)
        except OSError as error:
            self._drop_connection()
            raise fault(self.airsim_endpoint, f"fetching {what}", error) from error
        deadline = self._tick_until_answering(fetch, what)
        # No tick follows an answer that has started, so the pose now is the one the images
        # were rendered at; reading it while the image thread reads the answer hides its
        # round trip. A server that fails meanwhile is named by the images' fault, as before.
        try:
            pose = self._uav_pose()
        except SimulatorFaultError:
            self._answer(fetch, what, deadline)
            raise
        responses = self._answer(fetch, what, deadline)
        # AirSim's own time stamps run on its physics thread's epoch clock; the tick that
        # rendered the images (the last one before they came) is on CARLA's.
        stamp_s = self._tick_time_s
        frames = {}
        for index, spec in enumerate(self._rigs[UAV]):
            colour, depth = responses[2 * index], responses[2 * index + 1]
            where = f"{self.airsim_endpoint}: {UAV}/{spec.name}"
            for response, kind in ((colour, "Scene"), (depth, "DepthPlanar")):
                if (response.width, response.height) != (spec.width, spec.height):
                    raise SimulatorFaultError(
                        f"{where}: {kind} came {response.width}x{response.height}, the rig asks "
                        f"for {spec.width}x{spec.height}; {SETTINGS_FIX}"
                    )
            frames[spec.name] = CameraFrame(
                spec=spec,
                rgb=rgb_in_place_of_bgr(
                    colour.image_data_uint8, colour.width, colour.height, f"{where} Scene"
                ),
                depth=depth_from_floats(
                    depth.image_data_float, depth.width, depth.height, f"{where} DepthPlanar"
                ),
            )
            self._uav_sizes[spec.name] = (colour.width, colour.height)
        return Observation(sim_time_s=stamp_s, pose=pose, frames=frames)

    def _tick_until_answering(self, fetch: _ImageFetch, what: str) -> float:
        """Tick the world until ``fetch``'s answer starts (CARLA-Air renders on ticks): the
        first tick as soon as the request is on the wire, another only if no answer started
        within the reply wait of the last (the request reached the server after it). Once the
        answer starts, no more ticks: the set is stamped with the tick that rendered it.
        Returns the deadline (monotonic) of the whole fetch."""
        timeout_s = self.settings.frame_timeout_s
        deadline = time.monotonic() + timeout_s
        first_tick_done = None
        while not fetch.answering.is_set():
            if time.monotonic() > deadline:
                self._no_answer(what)
            self._tick(1)
            first_tick_done = first_tick_done or time.monotonic()
            fetch.answering.wait(self._reply_wait_s)
        if first_tick_done is not None and fetch.answer_started is not None:
            # An answer that came after a second tick may still be the first tick's images:
            # wait longer next time (an overestimate only when the request came late).
            self._reply_wait_s = next_reply_wait(fetch.answer_started - first_tick_done, timeout_s)
        return deadline

    def _answer(self, fetch: _ImageFetch, what: str, deadline: float) -> Any:
        """``fetch``'s responses, once read whole by ``deadline``."""
        done, _ = concurrent.futures.wait(
            [fetch.result], timeout=max(0.0, deadline - time.monotonic())
        )
        if not done:
            self._no_answer(what)
        try:
            return fetch.result.result()
        except (AirSimRpcError, AirSimWireError, OSError) as error:
            self._drop_connection()
            raise fault(self.airsim_endpoint, f"fetching {what}", error) from error

    def _no_answer(self, what: str) -> NoReturn:
        self._drop_connection()
        raise SimulatorFaultError(
            f"{self.airsim_endpoint}: no {what} within {self.settings.frame_timeout_s:g} s"
        )

    def _observe_ugv(self, ground: _Ground, views: Sequence[CameraSpec]) -> Observation:
        keys = [
            (spec.name, kind)
            for spec in views
            for kind in ("sensor.camera.rgb", "sensor.camera.depth")
        ]
        deadline = time.monotonic() + self.settings.frame_timeout_s
        with self._condition:
            while any(
                key not in ground.images or ground.images[key].frame < self._action_frame
                for key in keys
            ):
                if time.monotonic() > deadline:
                    missing = sorted(
                        {
                            name
                            for name, kind in keys
                            if (name, kind) not in ground.images
                            or ground.images[(name, kind)].frame < self._action_frame
                        }
                    )
                    raise SimulatorFaultError(
                        f"{self.carla_endpoint}: {UGV} cameras {', '.join(missing)} sent no "
                        f"frame of tick {self._action_frame} within "
                        f"{self.settings.frame_timeout_s:g} s"
                    )
                self._condition.wait(_TICK_WAIT_S)
            images = {key: ground.images[key] for key in keys}
        frames = {}
        for spec in views:
            colour = images[(spec.name, "sensor.camera.rgb")]
            depth = images[(spec.name, "sensor.camera.depth")]
            where = f"{self.carla_endpoint}: {UGV}/{spec.name}"
            for image, kind in ((colour, "rgb"), (depth, "depth")):
                if (image.width, image.height) != (spec.width, spec.height):
                    raise SimulatorFaultError(
                        f"{where}: its {kind} camera sent {image.width}x{image.height}, the rig "
                        f"asks for {spec.width}x{spec.height}"
                    )
            frames[spec.name] = CameraFrame(
                spec=spec,
                rgb=rgb_from_carla_bgra(bytes(colour.raw_data), colour.width, colour.height, where),
                depth=depth_from_carla_bgra(
                    bytes(depth.raw_data), depth.width, depth.height, where
                ),
            )
            # What the server rendered (carla.Image: width, height, fov), for the doctor.
            self._ugv_cameras[spec.name] = ServerCamera(
                width=int(colour.width),
                height=int(colour.height),
                fov_deg=float(colour.fov),
                colour_encoding="BGRA",
                depth_encoding="BGRA depth (24 bit over 1000 m)",
            )
        stamp = max(float(image.timestamp) for image in images.values())
        return Observation(sim_time_s=stamp, pose=self._ugv_pose(ground), frames=frames)

    def server_cameras(self, agent: str) -> dict[str, ServerCamera]:
        """Every view of ``agent`` as the server delivered it in the observations since its
        reset (UAV: image sizes, and FOV from ``simGetCameraInfo``; UGV: each sensor's
        ``carla.Image`` size and FOV).

        Raises:
            SimulatorFaultError: no observation of ``agent`` yet, or AirSim failed.
        """
        if agent == UGV:
            if not self._ugv_cameras:
                raise SimulatorFaultError(f"no observation of the {UGV} yet")
            return dict(self._ugv_cameras)
        self._require_connection(agent)
        if not self._uav_sizes:
            raise SimulatorFaultError(f"no observation of the {UAV} yet")
        cameras = {}
        for view, (width, height) in self._uav_sizes.items():
            info = self._call_airsim(
                f"reading the {view} camera's FOV",
                partial(self._airsim.simGetCameraInfo, view, self.settings.airsim_vehicle),
            )
            cameras[view] = ServerCamera(
                width=width,
                height=height,
                fov_deg=float(info.fov),
                colour_encoding="Scene: BGR bytes",
                depth_encoding="DepthPlanar: floats",
            )
        return cameras

    # -- checks for aerialdojo doctor ----------------------------------------------------

    def scene_problems(self, scene: str, objects: Sequence[str]) -> list[str]:
        """Why ``scene`` cannot run here: it is not the run's map (CARLA-Air runs one map, and
        the connection checks the server runs it), or ``objects`` (targets the level must
        hold, as ``tasks from-server`` names them) are not among the map's environment
        objects.

        Raises:
            SimulatorFaultError: CARLA failed.
        """
        if scene != self.settings.map_name:
            return [
                f"{scene}: the run's map is {self.settings.map_name!r} (sim_bridge.carla_air_map)"
            ]
        if not objects:
            return []
        names = {item.name for item in self.world_objects(scene)}
        absent = [name for name in objects if name not in names]
        return [f"{scene}: no environment object {', '.join(absent)}"] if absent else []

    def spawn_problems(self, spawns: Sequence[SpawnedObject]) -> list[str]:
        """Why ``spawns`` could not be spawned on this server: a blueprint its library lacks,
        or an attribute the blueprint does not take or refuses (what ``place_objects`` would
        refuse at the first reset), once per blueprint and attributes. Nothing is spawned.

        Raises:
            SimulatorFaultError: CARLA failed.
        """
        if self._world is None:
            self._connect()
        library = self._carla("reading blueprints", self._world.get_blueprint_library)
        kinds = {(spawn.blueprint, spawn.attributes): spawn for spawn in spawns}
        problems = []
        for _kind, spawn in sorted(kinds.items()):
            try:
                self._blueprint(library, spawn, f"object {spawn.object_id}")
            except ConfigError as error:
                problems.append(str(error))
        return problems

    def round_trip(self) -> str:
        """Spawn the UGV's blueprint with a small camera on a free spawn point, tick until the
        camera delivers that tick's frame, destroy both: proof that this client and server
        work together beyond the version handshake (and that sensor data arrives, which
        takes CARLA's streaming port besides the RPC port).

        Raises:
            SimulatorFaultError: a step failed or the frame did not come.
        """
        if self._world is None:
            self._connect()
        world = self._world
        library = self._carla("reading blueprints", world.get_blueprint_library)
        blueprint = library.find(self.settings.ugv_blueprint)
        blueprint.set_attribute("role_name", f"{UGV_ROLE}/round_trip")
        points = self._carla("reading spawn points", lambda: world.get_map().get_spawn_points())
        vehicle = next(
            (
                actor
                for point in points
                if (
                    actor := self._carla(
                        "spawning", partial(world.try_spawn_actor, blueprint, point)
                    )
                )
                is not None
            ),
            None,
        )
        if vehicle is None:
            raise SimulatorFaultError(
                f"{self.carla_endpoint}: {self.settings.ugv_blueprint} fits on none of the "
                f"map's {len(points)} spawn points"
            )
        camera_blueprint = library.find("sensor.camera.rgb")
        for name, value in (
            ("image_size_x", 64),
            ("image_size_y", 48),
            ("role_name", f"{UGV_ROLE}/round_trip"),
        ):
            camera_blueprint.set_attribute(name, str(value))
        frames: queue.Queue[Any] = queue.Queue()
        camera = None
        try:
            camera = self._carla(
                "spawning a camera",
                partial(world.spawn_actor, camera_blueprint, carla.Transform(), attach_to=vehicle),
            )
            camera.listen(frames.put)
            tick = self._tick(1)
            deadline = time.monotonic() + self.settings.frame_timeout_s
            while True:
                try:
                    image = frames.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise SimulatorFaultError(
                        f"{self.carla_endpoint}: the camera sent no frame of tick {tick} within "
                        f"{self.settings.frame_timeout_s:g} s: sensor data comes over CARLA's "
                        f"streaming port ({self.settings.carla_port + 1}); check that it is open"
                    ) from None
                if image.frame >= tick:
                    break
            location = vehicle.get_transform().location
            return (
                f"spawned {self.settings.ugv_blueprint} at ({location.x:.1f}, {location.y:.1f}), "
                f"tick {tick}, camera frame {image.frame} ({image.width}x{image.height}), destroyed"
            )
        finally:
            for actor in (camera, vehicle):
                if actor is not None:
                    self._carla("destroying", partial(_destroy, actor))

    def world_objects(self, scene: str) -> list[WorldObject]:
        """The map's environment objects (``World.get_environment_objects``: buildings,
        poles, parked vehicles, ... with their semantic label and world bounding box), in the
        map frame.

        Raises:
            UnknownSceneError: ``scene`` is not the run's map.
            SimulatorFaultError: CARLA failed.
        """
        self._check_scene(scene)
        if self._world is None:
            self._connect()
        world = self._world
        found = self._carla(
            "listing environment objects",
            lambda: world.get_environment_objects(carla.CityObjectLabel.Any),
        )
        objects = []
        for item in found:
            box = item.bounding_box
            centre = carla_to_map(CarlaPose(box.location.x, box.location.y, box.location.z, 0.0))
            extent = box.extent
            objects.append(
                WorldObject(
                    name=str(item.name),
                    kind=str(item.type),
                    x=centre.x,
                    y=centre.y,
                    z=centre.z,
                    size=(2.0 * extent.x, 2.0 * extent.y, 2.0 * extent.z),
                )
            )
        return objects

    def start_candidates(self, scene: str, altitude_m: float) -> list[Pose]:
        """Where a survey may start episodes: above the map's lane waypoints every 50 m,
        at ``altitude_m`` (roads are free of buildings; AGOS-Bench flies at 80 m)."""
        if self._world is None:
            self._connect()
        graph = self.road_graph(spacing_m=50.0)
        return [Pose(x, y, altitude_m, 0.0) for x, y, _z in graph.nodes]

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
        """Destroy the UGV's actors and give the world (and the traffic manager) back in
        asynchronous mode."""
        world, original = self._world, self._original_settings
        ground, manager = self._ground, self._traffic_manager
        try:
            for actor in [
                *self._objects,
                *(() if ground is None else (*ground.sensors, ground.vehicle)),
            ]:
                _destroy(actor)
            self._objects = []
            if manager is not None:
                manager.set_synchronous_mode(False)
            if world is not None and original is not None:
                original.synchronous_mode = False
                world.apply_settings(original)
        except RuntimeError as error:
            _log.warning("%s: could not restore the world on close: %s", self.carla_endpoint, error)
        finally:
            self._drop_connection()


def _destroy(actor: Any) -> None:
    """Stop a sensor or walker controller if it is one, then destroy the actor."""
    if hasattr(actor, "stop"):
        actor.stop()
    actor.destroy()


def _carla_transform(pose: CarlaPose) -> Any:
    return carla.Transform(
        carla.Location(pose.x, pose.y, pose.z), carla.Rotation(pitch=0.0, yaw=pose.yaw_deg)
    )
