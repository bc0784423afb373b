"""In-process stand-ins for the CARLA client objects the CARLA-Air backend uses.

CARLA's client cannot be faked at the wire: its world and sensor objects speak LibCarla's
RPC and streaming protocols. These stand-ins implement the subset of ``carla.Client``,
``carla.World``, ``carla.Map``, ``carla.Waypoint``, actors, sensors and the traffic manager the
backend calls, with the real ``carla`` value types (``Transform``, ``Location``, ``Rotation``,
``BoundingBox``, ``WorldSettings``, ``CityObjectLabel``), so transforms are built and read
exactly as with a server. Ticking the stand-in world also ticks the fake AirSim server (one
Unreal frame), as the single Unreal world of CARLA-Air does.

Modelled on CARLA 0.9.16 as CARLA-Air v0.1.7 builds it; each behaviour names its source:
- ``set_transform`` teleports without a sweep: no collision event, even through a wall
  (``Carla/Actor/CarlaActor.cpp`` ``SetActorGlobalTransform``: ``SetActorRelativeTransform``
  with sweep false).
- ``cast_ray`` returns every surface the segment enters, in order, with its semantic label
  (``Carla/Util/RayTracer.cpp``: ``LineTraceMultiByChannel``); a ray starting inside a body does
  not report that body.
- ``spawn_actor`` fails where the vehicle's box would overlap something ("Spawn failed because
  of collision at spawn position"), ``try_spawn_actor`` answers None instead.
- actors and attached sensors persist until destroyed; destroying a vehicle leaves its sensors
  (CARLA's synchronous-mode docs: actors outlive the client that spawned them).
- the server version of a CARLA-Air build is its source commit (``Util/BuildTools/Setup.sh``
  writes ``get_git_repository_version`` from ``Environment.sh``), not a release number;
  CARLA-Air's own Python module reports the same (``env_setup/setup_env.sh`` replaces PyPI's).
- sensor data reaches the client over CARLA's streaming port (the RPC port + 1), not the
  RPC port: with ``streaming=False`` (that port blocked) sensors never call back.
- with AirSim's game mode (CARLA-Air's ``SimWorldGameMode``), ``get_map().name`` is the bare
  map name, e.g. ``Town10HD_Opt``, not ``Carla/Maps/...`` (CarlaAir ``CarlaServer.cpp``
  ``call_get_map_info``: "Fallback when not using CARLA's GameMode").
- ``get_environment_objects(label)`` lists the map's static objects with their semantic
  label and world bounding box (LibCarla ``client/World.cpp`` ``GetEnvironmentObjects``;
  ``CityObjectLabel.Any`` matches every label).
- CARLA-Air's launcher starts city traffic (``auto_traffic.py`` from ``carlaAir.sh``): vehicles
  on autopilot through the traffic manager on port 8000 in asynchronous mode, and walkers with
  AI controllers. An asynchronous traffic manager moves its vehicles on its own wall clock,
  also while the world waits for a synchronous tick; a synchronous one moves them per tick
  (CarlaAir ``guide/FAQ.md``: synchronous mode needs the traffic manager switched too).

The road is two opposite lanes of a straight 40 m street along CARLA x (lane 1 at y = 0
heading +x, lane -1 at y = 3.5 heading -x), with waypoints every 2 m and a U-turn at each end.
"""

from __future__ import annotations

import itertools
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import carla
import numpy as np

#: Horizontal distance a ground camera sees, metres (its depth image is flat).
GROUND_VIEW_DEPTH_M = 30.0
ROAD_LENGTH_M = 40.0
LANE_OFFSET_M = 3.5
#: What a source build of CARLA-Air v0.1.7 answers to get_server_version (its commit).
CARLA_AIR_BUILD = "d70247b"
#: The PyPI client's version.
PYPI_CLIENT = "0.9.16"
#: A Tesla Model 3's box in CARLA (actor frame: origin on the ground, centre 0.74 m up).
VEHICLE_EXTENT = (2.40, 1.05, 0.74)
TRAFFIC_SPEED_M_S = 8.0
WALKER_SPEED_M_S = 1.4


@dataclass(frozen=True)
class Obstacle:
    """Static geometry: an axis-aligned box in CARLA coordinates with a semantic label."""

    name: str
    low: tuple[float, float, float]
    high: tuple[float, float, float]
    label: carla.CityObjectLabel = carla.CityObjectLabel.Static


@dataclass
class EnvironmentObject:
    """What ``carla.EnvironmentObject`` holds (the real class cannot be made from Python)."""

    id: int
    name: str
    type: carla.CityObjectLabel
    transform: carla.Transform
    bounding_box: carla.BoundingBox


@dataclass
class Timestamp:
    elapsed_seconds: float


@dataclass
class Snapshot:
    frame: int
    timestamp: Timestamp


@dataclass
class LabelledPoint:
    """What ``carla.LabelledPoint`` holds (the real class cannot be made from Python)."""

    location: carla.Location
    label: carla.CityObjectLabel


@dataclass
class Blueprint:
    id: str
    attributes: dict[str, str] = field(default_factory=dict)

    def set_attribute(self, name: str, value: str) -> None:
        self.attributes[name] = value


class BlueprintLibrary:
    def find(self, blueprint_id: str) -> Blueprint:
        return Blueprint(blueprint_id)


class Actor:
    _ids = itertools.count(100)

    def __init__(
        self,
        world: World,
        blueprint: Blueprint,
        transform: carla.Transform,
        parent: Actor | None = None,
    ) -> None:
        self.id = next(Actor._ids)
        self.type_id = blueprint.id
        self.attributes = dict(blueprint.attributes)
        self.world = world
        self.parent = parent
        self._transform = transform
        self.is_alive = True

    def get_transform(self) -> carla.Transform:
        return self._transform

    def set_transform(self, transform: carla.Transform) -> None:
        # CarlaActor.cpp SetActorGlobalTransform: SetActorRelativeTransform(..., sweep false)
        self._transform = transform

    def destroy(self) -> bool:
        self.is_alive = False
        return True


class Vehicle(Actor):
    bounding_box = carla.BoundingBox(
        carla.Location(0.0, 0.0, VEHICLE_EXTENT[2]), carla.Vector3D(*VEHICLE_EXTENT)
    )

    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The world-aligned box around this vehicle (its yaw's footprint)."""
        return _vehicle_box(self._transform)

    def set_autopilot(self, enabled: bool, port: int = 8000) -> None:
        self.world.autopilot[self.id] = port if enabled else None


@dataclass
class OtherActor:
    type_id: str


@dataclass
class CollisionEvent:
    frame: int
    timestamp: float
    other_actor: OtherActor


@dataclass
class Image:
    frame: int
    timestamp: float
    width: int
    height: int
    fov: float
    raw_data: bytes
    transform: carla.Transform


def expected_ground_rgb(transform: carla.Transform, view: str) -> tuple[int, int, int]:
    """The flat colour a ground camera shows at its vehicle's transform."""
    location = transform.location
    return (
        round(location.x * 10.0) % 256,
        round(location.y * 10.0) % 256,
        (round(transform.rotation.yaw) + sum(map(ord, view))) % 256,
    )


class Sensor(Actor):
    def __init__(
        self, world: World, blueprint: Blueprint, transform: carla.Transform, parent: Actor
    ) -> None:
        super().__init__(world, blueprint, transform, parent)
        self.callback: Callable[[Any], None] | None = None

    def listen(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def stop(self) -> None:
        self.callback = None

    def emit(self, snapshot: Snapshot) -> None:
        parent = self.parent
        if self.callback is None or parent is None or not parent.is_alive:
            return
        if not self.world.streaming:
            return  # the streaming port is blocked: LibCarla never receives the data
        if self.type_id == "sensor.other.collision":
            return  # set_transform never collides; physics contacts are not simulated
        # A camera blueprint's defaults: 800x600, 90 deg (CARLA's sensor blueprints).
        width = int(self.attributes.get("image_size_x", 800))
        height = int(self.attributes.get("image_size_y", 600))
        view = self.attributes["role_name"].rsplit("/", 1)[-1]
        bgra = np.zeros((height, width, 4), dtype=np.uint8)
        if self.type_id == "sensor.camera.depth":
            # CARLA's encoding: normalised depth over 1000 m in R + 256 G + 65536 B.
            code = round(GROUND_VIEW_DEPTH_M / 1000.0 * (256**3 - 1))
            bgra[:, :, 2], bgra[:, :, 1], bgra[:, :, 0] = (
                code % 256,
                code // 256 % 256,
                code // 65536,
            )
        else:
            bgra[:, :, 2::-1] = expected_ground_rgb(parent.get_transform(), view)
            texture = bgra[height // 2 :, ::2, :3]
            texture[:] = 255 - texture  # a rendered street is never one colour
        self.callback(
            Image(
                snapshot.frame,
                snapshot.timestamp.elapsed_seconds,
                width,
                height,
                float(self.attributes.get("fov", 90.0)),
                bgra.tobytes(),
                parent.get_transform(),
            )
        )


class Waypoint:
    def __init__(self, road: Road, lane_id: int, index: int) -> None:
        self.road, self.lane_id, self.index = road, lane_id, index
        self.id = lane_id * 1000 + index
        self.road_id = 1
        x = index * road.spacing_m
        y, yaw = (0.0, 0.0) if lane_id == 1 else (LANE_OFFSET_M, 180.0)
        self.transform = carla.Transform(carla.Location(x, y, 0.0), carla.Rotation(yaw=yaw))

    def next(self, distance: float) -> list[Waypoint]:
        step = max(1, round(distance / self.road.spacing_m))
        last = self.road.count - 1
        if self.lane_id == 1:
            index = self.index + step
            return (
                [self.road.waypoint(1, index)] if index <= last else [self.road.waypoint(-1, last)]
            )
        index = self.index - step
        return [self.road.waypoint(-1, index)] if index >= 0 else [self.road.waypoint(1, 0)]


class Road:
    def __init__(self, spacing_m: float) -> None:
        self.spacing_m = spacing_m
        self.count = int(ROAD_LENGTH_M / spacing_m) + 1

    def waypoint(self, lane_id: int, index: int) -> Waypoint:
        return Waypoint(self, lane_id, index)


class Map:
    def __init__(self, name: str) -> None:
        self.name = name

    def generate_waypoints(self, distance: float) -> list[Waypoint]:
        road = Road(distance)
        return [road.waypoint(lane, i) for lane in (1, -1) for i in range(road.count)]

    def get_spawn_points(self) -> list[carla.Transform]:
        return [waypoint.transform for waypoint in self.generate_waypoints(10.0)]


class ActorList(list):  # type: ignore[type-arg]
    """``carla.ActorList``: iterable, with ``filter`` by type id pattern."""

    def filter(self, pattern: str) -> ActorList:
        prefix = pattern.rstrip("*")
        return ActorList(actor for actor in self if actor.type_id.startswith(prefix))


class TrafficManager:
    """The traffic manager of one port; asynchronous until switched."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.synchronous = False
        self.seed: int | None = None

    def get_port(self) -> int:
        return self.port

    def set_synchronous_mode(self, enabled: bool) -> None:
        self.synchronous = enabled

    def set_random_device_seed(self, seed: int) -> None:
        self.seed = seed


class World:
    """The stand-in world.

    Args:
        map_name: what ``get_map().name`` answers (CARLA-Air: the bare map name).
        airsim: the fake AirSim server sharing this world's Unreal frames, or None.
        obstacles: static geometry (a vehicle's box must not overlap it at spawn).
        traffic: vehicles and walkers CARLA-Air's launcher spawned (``auto_traffic.py``).
        frame_s: wall time one tick takes (the server renders a frame per synchronous tick).
        streaming: whether sensor data reaches the client (its streaming port is open).
        traffic_role: role name of the traffic's cars (auto_traffic.py: ``autopilot``).
    """

    def __init__(  # noqa: PLR0917 - the stand-in's knobs, given by keyword in the tests
        self,
        map_name: str = "Town10HD_Opt",
        airsim: Any = None,
        obstacles: tuple[Obstacle, ...] = (),
        traffic: tuple[int, int] = (0, 0),
        frame_s: float = 0.0,
        streaming: bool = True,
        traffic_role: str = "autopilot",
    ) -> None:
        self.map = Map(map_name)
        self.streaming = streaming
        self.airsim = airsim
        self.obstacles = obstacles
        self.settings = carla.WorldSettings()
        self.settings_history: list[tuple[bool, float | None]] = []
        self.frame = 0
        self.elapsed = 0.0
        self.actors: list[Actor] = []
        self.autopilot: dict[int, int | None] = {}
        self.traffic_managers: dict[int, TrafficManager] = {}
        self.tick_threads: set[str] = set()
        self.frame_s = frame_s
        self._lock = threading.Lock()
        self._last_tick = time.monotonic()
        self._spawn_traffic(*traffic, traffic_role)

    def _spawn_traffic(self, vehicles: int, walkers: int, role: str) -> None:
        """What auto_traffic.py does: autopilot cars on the traffic manager's port 8000 and
        walkers with AI controllers, all in asynchronous mode."""
        library = BlueprintLibrary()
        spawn_points = self.map.get_spawn_points()
        for index in range(vehicles):
            blueprint = library.find("vehicle.audi.a2")
            blueprint.set_attribute("role_name", role)
            point = spawn_points[index % len(spawn_points)]
            shifted = carla.Transform(
                carla.Location(point.location.x, point.location.y + 7.0 * (1 + index), 0.0),
                point.rotation,
            )
            vehicle = self.spawn_actor(blueprint, shifted)
            assert isinstance(vehicle, Vehicle)
            vehicle.set_autopilot(True, 8000)
            self.traffic_managers.setdefault(8000, TrafficManager(8000))
        for index in range(walkers):
            walker = self._add(
                Actor(
                    self,
                    library.find("walker.pedestrian.0001"),
                    carla.Transform(carla.Location(-10.0 - index, 20.0, 0.0)),
                )
            )
            self._add(Actor(self, library.find("controller.ai.walker"), carla.Transform(), walker))

    def get_map(self) -> Map:
        return self.map

    def get_settings(self) -> carla.WorldSettings:
        copy = carla.WorldSettings()
        copy.synchronous_mode = self.settings.synchronous_mode
        copy.fixed_delta_seconds = self.settings.fixed_delta_seconds
        return copy

    def apply_settings(self, settings: carla.WorldSettings) -> int:
        self.settings = settings
        self.settings_history.append((settings.synchronous_mode, settings.fixed_delta_seconds))
        return self.frame

    def get_blueprint_library(self) -> BlueprintLibrary:
        return BlueprintLibrary()

    def get_actors(self) -> ActorList:
        return ActorList(actor for actor in self.actors if actor.is_alive)

    def _add(self, actor: Actor) -> Actor:
        self.actors.append(actor)
        return actor

    def try_spawn_actor(
        self, blueprint: Blueprint, transform: carla.Transform, attach_to: Actor | None = None
    ) -> Actor | None:
        if attach_to is not None:
            return self._add(Sensor(self, blueprint, transform, attach_to))
        low, high = _vehicle_box(transform)
        others = [a.box() for a in self.get_actors() if isinstance(a, Vehicle)]
        blocked = [(o.low, o.high) for o in self.obstacles] + others
        if any(_boxes_overlap(low, high, lo, hi) for lo, hi in blocked):
            return None
        return self._add(Vehicle(self, blueprint, transform))

    def spawn_actor(
        self, blueprint: Blueprint, transform: carla.Transform, attach_to: Actor | None = None
    ) -> Actor:
        actor = self.try_spawn_actor(blueprint, transform, attach_to)
        if actor is None:
            raise RuntimeError("Spawn failed because of collision at spawn position")
        return actor

    def cast_ray(
        self, initial_location: carla.Location, final_location: carla.Location
    ) -> list[LabelledPoint]:
        """RayTracer.cpp: every body the segment enters, nearest first, with its label."""
        start = (initial_location.x, initial_location.y, initial_location.z)
        end = (final_location.x, final_location.y, final_location.z)
        bodies = [(o.low, o.high, o.label) for o in self.obstacles]
        bodies += [
            (*a.box(), carla.CityObjectLabel.Car)
            for a in self.get_actors()
            if isinstance(a, Vehicle)
        ]
        hits = []
        for low, high, label in bodies:
            entry = _segment_entry(start, end, low, high)
            if entry is not None:
                hits.append((entry, LabelledPoint(_location_at(start, end, entry), label)))
        return [point for _, point in sorted(hits, key=lambda hit: hit[0])]

    def get_environment_objects(self, label: carla.CityObjectLabel) -> list[EnvironmentObject]:
        found = []
        for index, obstacle in enumerate(self.obstacles):
            if label not in (carla.CityObjectLabel.Any, obstacle.label):
                continue
            centre = carla.Location(
                *((lo + hi) / 2.0 for lo, hi in zip(obstacle.low, obstacle.high, strict=True))
            )
            extent = carla.Vector3D(
                *((hi - lo) / 2.0 for lo, hi in zip(obstacle.low, obstacle.high, strict=True))
            )
            found.append(
                EnvironmentObject(
                    id=1000 + index,
                    name=obstacle.name,
                    type=obstacle.label,
                    transform=carla.Transform(centre),
                    bounding_box=carla.BoundingBox(centre, extent),
                )
            )
        return found

    def get_snapshot(self) -> Snapshot:
        return Snapshot(self.frame, Timestamp(self.elapsed))

    def tick(self, seconds: float = 10.0) -> int:
        if not self.settings.synchronous_mode:
            raise RuntimeError("tick() in asynchronous mode")
        self.tick_threads.add(threading.current_thread().name)
        time.sleep(self.frame_s)
        delta = self.settings.fixed_delta_seconds or 0.05
        with self._lock:
            self.frame += 1
            self.elapsed += delta
            self._move_traffic(delta)
        if self.airsim is not None:
            self.airsim.tick(delta)
        snapshot = self.get_snapshot()
        for actor in list(self.actors):
            if isinstance(actor, Sensor) and actor.is_alive:
                actor.emit(snapshot)
        return self.frame

    def _move_traffic(self, delta: float) -> None:
        now = time.monotonic()
        wall, self._last_tick = now - self._last_tick, now
        for actor in self.get_actors():
            port = self.autopilot.get(actor.id)
            if port is not None:
                manager = self.traffic_managers[port]
                # A synchronous traffic manager steps with the world; an asynchronous one
                # has moved its cars on its own clock since the last tick.
                seconds = delta if manager.synchronous else wall
                self._advance(actor, TRAFFIC_SPEED_M_S * seconds)
            elif actor.type_id.startswith("controller.ai.walker") and actor.parent is not None:
                self._advance(actor.parent, WALKER_SPEED_M_S * wall)

    @staticmethod
    def _advance(actor: Actor, metres: float) -> None:
        transform = actor.get_transform()
        heading = math.radians(transform.rotation.yaw)
        location = carla.Location(
            transform.location.x + metres * math.cos(heading),
            transform.location.y + metres * math.sin(heading),
            transform.location.z,
        )
        actor.set_transform(carla.Transform(location, transform.rotation))

    def alive_actors(self) -> list[Actor]:
        return list(self.get_actors())

    def positions(self, type_prefix: str = "vehicle.") -> dict[int, tuple[float, float]]:
        return {
            actor.id: (actor.get_transform().location.x, actor.get_transform().location.y)
            for actor in self.get_actors()
            if actor.type_id.startswith(type_prefix)
        }


class Client:
    """Stands in for ``carla.Client``: versions, the world and traffic managers.

    Args:
        world: the world it serves.
        server_version: what the server reports (a CARLA-Air build reports its commit).
        client_version: what the client module reports (PyPI's 0.9.16, or CARLA-Air's own
            module's build).
    """

    def __init__(
        self,
        world: World,
        server_version: str = CARLA_AIR_BUILD,
        client_version: str = CARLA_AIR_BUILD,
    ) -> None:
        self.world = world
        self.server_version = server_version
        self.client_version = client_version
        self.timeout_s: float | None = None

    def set_timeout(self, seconds: float) -> None:
        self.timeout_s = seconds

    def get_client_version(self) -> str:
        return self.client_version

    def get_server_version(self) -> str:
        return self.server_version

    def get_world(self) -> World:
        return self.world

    def get_trafficmanager(self, port: int = 8000) -> TrafficManager:
        return self.world.traffic_managers.setdefault(port, TrafficManager(port))


def _vehicle_box(
    transform: carla.Transform,
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    ex, ey, ez = VEHICLE_EXTENT
    yaw = math.radians(transform.rotation.yaw)
    half_x = abs(ex * math.cos(yaw)) + abs(ey * math.sin(yaw))
    half_y = abs(ex * math.sin(yaw)) + abs(ey * math.cos(yaw))
    x, y, z = transform.location.x, transform.location.y, transform.location.z
    return (x - half_x, y - half_y, z), (x + half_x, y + half_y, z + 2.0 * ez)


def _boxes_overlap(
    low_a: tuple[float, ...],
    high_a: tuple[float, ...],
    low_b: tuple[float, ...],
    high_b: tuple[float, ...],
) -> bool:
    return all(
        la < hb and lb < ha for la, ha, lb, hb in zip(low_a, high_a, low_b, high_b, strict=True)
    )


def _segment_entry(
    start: tuple[float, float, float],
    end: tuple[float, float, float],
    low: tuple[float, float, float],
    high: tuple[float, float, float],
) -> float | None:
    """Fraction along start->end where the segment enters the box; None if it never does or
    starts inside (slab method)."""
    t_in, t_out = 0.0, 1.0
    for s, e, lo, hi in zip(start, end, low, high, strict=True):
        d = e - s
        if abs(d) < 1e-12:
            if not lo <= s <= hi:
                return None
            continue
        t0, t1 = (lo - s) / d, (hi - s) / d
        t_in, t_out = max(t_in, min(t0, t1)), min(t_out, max(t0, t1))
    if t_in > t_out or t_in <= 0.0:
        return None
    return t_in


def _location_at(
    start: tuple[float, float, float], end: tuple[float, float, float], fraction: float
) -> carla.Location:
    return carla.Location(*(s + (e - s) * fraction for s, e in zip(start, end, strict=True)))
