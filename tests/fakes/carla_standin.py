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
- the blueprint library holds the blueprints of CARLA 0.9.16's catalogues that the project
  and its tests use (``Docs/catalogue_vehicles.md``, ``Docs/catalogue_props.md``; attributes
  as ``Docs/bp_library.md`` lists them): ``find`` of any other id raises IndexError
  "blueprint '<id>' not found" (LibCarla ``BlueprintLibrary::at``, std::out_of_range, which
  boost.python raises as IndexError); ``set_attribute`` of an attribute the blueprint lacks
  raises IndexError "attribute '<id>' not found", of a read-only one (a prop's ``size``) or a
  colour without three channels ValueError (``ActorBlueprint.cpp``, ``ActorAttribute.cpp``
  ``Set``/``Validate``: InvalidAttributeValue, a std::invalid_argument).
- ``spawn_actor`` fails where the new actor's box would overlap geometry or another actor
  (RuntimeError "Spawn failed because due to a collision at spawn position",
  ``ActorSpawnResult.cpp``), ``try_spawn_actor`` answers None instead (``World.cpp``
  ``TrySpawnActor`` catches every exception). Boxes are the catalogue's approximate
  extents (the real server uses each mesh's bounds).
- cameras (``sensor.camera.rgb``/``depth``) take the attributes ``MakeCameraDefinition``
  declares (``Carla/Actor/ActorBlueprintFunctionLibrary.cpp``), with its defaults (800x600,
  90 deg); ``set_attribute`` validates a value as its type (``LibCarla/source/carla/client/
  ActorAttribute.cpp`` ``Set``/``Validate``: an Int is read with ``atoi`` and never refused, a
  Float with ``atof`` and refused only on overflow, a Bool must be true or false), and the
  server reads them the same way.
- a sensor spawned with ``attach_to`` is attached rigidly: it moves with its parent, and its
  images carry its own world transform (``carla.Image.transform``), width, height and fov; a
  parent that no longer exists is refused with RuntimeError "unable to attach actor: parent
  actor not found", the sensor left spawned and unattached (``Carla/Server/CarlaServer.cpp``
  ``spawn_actor_with_parent``: it spawns, then looks the parent up).
- a listening camera calls back once per tick with that tick's frame (synchronous mode), on
  the client's streaming thread in the real client (here, in ``tick``).
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
import json
import math
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
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


#: Modifiable attributes per blueprint family (Docs/bp_library.md); props also carry a
#: read-only ``size``. A camera's are those ``MakeCameraDefinition`` declares
#: (``Carla/Actor/ActorBlueprintFunctionLibrary.cpp``; the post-processing ones left out).
_CAMERA_ATTRIBUTES = (
    "fov",
    "image_size_x",
    "image_size_y",
    "role_name",
    "sensor_tick",
    "lens_circle_falloff",
    "lens_circle_multiplier",
    "lens_k",
    "lens_kcube",
    "lens_x_size",
    "lens_y_size",
)
#: Attribute types (``MakeCameraDefinition``: fov and sensor_tick Float, the image size Int;
#: ``FillIdAndTags``: role_name String); an attribute not listed is a String.
_ATTRIBUTE_TYPES = {
    "fov": "Float",
    "sensor_tick": "Float",
    "image_size_x": "Int",
    "image_size_y": "Int",
    "lens_circle_falloff": "Float",
    "lens_circle_multiplier": "Float",
    "lens_k": "Float",
    "lens_kcube": "Float",
    "lens_x_size": "Float",
    "lens_y_size": "Float",
    "sticky_control": "Bool",
    "is_invincible": "Bool",
}
#: A camera's defaults, its ``RecommendedValues[0]`` (``MakeCameraDefinition``).
_CAMERA_DEFAULTS = {"fov": "90.0", "image_size_x": "800", "image_size_y": "600"}


def atoi(text: str) -> int:
    """C's ``std::atoi``, as LibCarla reads an Int attribute (``ActorAttribute.cpp``
    ``As<int>``): the leading integer, 0 where there is none; it never fails."""
    digits = re.match(r"\s*([+-]?\d+)", text)
    return int(digits.group(1)) if digits else 0


def atof(text: str) -> float:
    """C's ``std::atof``, as LibCarla reads a Float attribute (``As<float>``): the leading
    number, 0.0 where there is none."""
    number = re.match(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", text)
    return float(number.group(1)) if number else 0.0


_VEHICLE_ATTRIBUTES = ("color", "role_name", "sticky_control")
#: Half extents (x, y, z) of the blueprints' boxes: approximate, from CARLA's meshes.
VEHICLES: dict[str, tuple[float, float, float]] = {
    "vehicle.tesla.model3": (2.40, 1.05, 0.74),
    "vehicle.audi.a2": (1.86, 0.90, 0.77),
    "vehicle.citroen.c3": (1.99, 0.93, 0.77),
    "vehicle.nissan.micra": (1.82, 0.90, 0.77),
    "vehicle.toyota.prius": (2.26, 1.00, 0.76),
    "vehicle.seat.leon": (2.10, 0.92, 0.75),
    "vehicle.mini.cooper_s": (1.90, 0.97, 0.77),
    "vehicle.nissan.patrol": (2.30, 0.96, 0.93),
    "vehicle.jeep.wrangler_rubicon": (1.93, 0.95, 0.94),
    "vehicle.volkswagen.t2": (2.24, 1.03, 1.02),
    "vehicle.mercedes.sprinter": (2.96, 1.00, 1.27),
}
PROPS: dict[str, tuple[float, float, float]] = {
    "static.prop.vendingmachine": (0.50, 0.45, 1.00),
    "static.prop.kiosk_01": (1.20, 1.00, 1.35),
    "static.prop.busstop": (2.00, 0.80, 1.40),
    "static.prop.foodcart": (1.30, 0.75, 1.20),
    "static.prop.advertisement": (0.90, 0.25, 1.30),
    "static.prop.container": (0.95, 0.60, 0.75),
    "static.prop.streetbarrier": (1.05, 0.25, 0.55),
}
OTHERS = {
    "sensor.camera.rgb": _CAMERA_ATTRIBUTES,
    "sensor.camera.depth": _CAMERA_ATTRIBUTES,
    "sensor.other.collision": ("role_name",),
    "controller.ai.walker": ("role_name",),
    "walker.pedestrian.0001": ("role_name", "is_invincible", "speed"),
}


@dataclass
class Blueprint:
    id: str
    modifiable: tuple[str, ...]
    attributes: dict[str, str] = field(default_factory=dict)

    def set_attribute(self, name: str, value: str) -> None:
        # ActorAttribute.cpp Set, then Validate: the value must read as the attribute's type.
        if name not in self.modifiable and name != "size":
            raise IndexError(f"attribute '{name}' not found")
        if name not in self.modifiable:
            raise ValueError(f"{name}: read-only attribute")
        if name == "color" and len(value.split(",")) != 3:
            raise ValueError(f"{name}: colors must have 3 channels (R,G,B)")
        kind = _ATTRIBUTE_TYPES.get(name, "String")
        if kind == "Bool" and value.lower() not in ("true", "false"):
            raise ValueError(f"{name}: invalid bool: {value}")
        if kind == "Float" and abs(atof(value)) > float(np.finfo(np.float32).max):
            raise ValueError(f"{name}: float overflow")
        self.attributes[name] = value.lower() if kind == "Bool" else value

    @property
    def extent(self) -> tuple[float, float, float] | None:
        return VEHICLES.get(self.id) or PROPS.get(self.id)


class BlueprintLibrary:
    def find(self, blueprint_id: str) -> Blueprint:
        if blueprint_id in VEHICLES:
            return Blueprint(blueprint_id, _VEHICLE_ATTRIBUTES)
        if blueprint_id in PROPS:
            return Blueprint(blueprint_id, ("role_name",), {"size": "medium"})
        if blueprint_id in OTHERS and blueprint_id.startswith("sensor.camera."):
            return Blueprint(blueprint_id, OTHERS[blueprint_id], dict(_CAMERA_DEFAULTS))
        if blueprint_id in OTHERS:
            return Blueprint(blueprint_id, OTHERS[blueprint_id])
        raise IndexError(f"blueprint '{blueprint_id}' not found")


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
        if self.is_alive:
            self.world.record("destroyed", self)
        self.is_alive = False
        return True


class Solid(Actor):
    """A vehicle or a prop: an actor with a box that blocks spawns and rays."""

    def __init__(self, world: World, blueprint: Blueprint, transform: carla.Transform) -> None:
        super().__init__(world, blueprint, transform)
        extent = blueprint.extent
        assert extent is not None
        self.extent = extent
        self.bounding_box = carla.BoundingBox(
            carla.Location(0.0, 0.0, extent[2]), carla.Vector3D(*extent)
        )

    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The world-aligned box around it (its yaw's footprint)."""
        return _box(self._transform, self.extent)


class Prop(Solid):
    pass


class Vehicle(Solid):
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
    """A sensor attached rigidly to its parent; its transform is relative to the parent's."""

    def __init__(
        self, world: World, blueprint: Blueprint, transform: carla.Transform, parent: Actor
    ) -> None:
        super().__init__(world, blueprint, transform, parent)
        self.callback: Callable[[Any], None] | None = None

    def world_transform(self) -> carla.Transform:
        """Where the sensor is: its mount carried by its parent (a rigid attachment)."""
        assert self.parent is not None
        body, mount = self.parent.get_transform(), self._transform
        return carla.Transform(
            body.transform(mount.location),
            carla.Rotation(
                pitch=body.rotation.pitch + mount.rotation.pitch,
                yaw=body.rotation.yaw + mount.rotation.yaw,
                roll=body.rotation.roll + mount.rotation.roll,
            ),
        )

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
        # The server reads the attributes as LibCarla does (atoi, atof).
        width = atoi(self.attributes["image_size_x"])
        height = atoi(self.attributes["image_size_y"])
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
            if view in self.world.washed_out_views:
                bgra[:, :, :3] = 255
        self.callback(
            Image(
                snapshot.frame,
                snapshot.timestamp.elapsed_seconds,
                width,
                height,
                atof(self.attributes["fov"]),
                bgra.tobytes(),
                self.world_transform(),
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
        washed_out_views: views (the last part of a camera's role name) whose RGB images
            come whole white, as CARLA's cameras sometimes render at ``-quality-level=Low``
            or with the GPU's memory full (carla-simulator/carla issues #6434, #7409).
        journal: a file that gets a JSON line per actor spawned or destroyed, for tests
            that run the world in another process.
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
        journal: Path | None = None,
        washed_out_views: tuple[str, ...] = (),
    ) -> None:
        self.journal = journal
        self.washed_out_views = washed_out_views
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
        self.record("spawned", actor)
        return actor

    def record(self, event: str, actor: Actor) -> None:
        """Append ``event`` of ``actor`` to the journal, if there is one."""
        if self.journal is None:
            return
        entry = {"event": event, "id": actor.id, "type_id": actor.type_id}
        entry["role_name"] = actor.attributes.get("role_name", "")
        with self.journal.open("a", encoding="utf-8") as journal:
            journal.write(json.dumps(entry) + "\n")

    def try_spawn_actor(
        self, blueprint: Blueprint, transform: carla.Transform, attach_to: Actor | None = None
    ) -> Actor | None:
        try:
            return self.spawn_actor(blueprint, transform, attach_to)
        except RuntimeError:  # World.cpp TrySpawnActor: nullptr on any exception
            return None

    def spawn_actor(
        self, blueprint: Blueprint, transform: carla.Transform, attach_to: Actor | None = None
    ) -> Actor:
        if attach_to is not None:
            if not attach_to.is_alive:
                # CarlaServer.cpp spawn_actor_with_parent: the actor is spawned first, then
                # the parent looked up; it stays in the world, unattached.
                self._add(Actor(self, blueprint, transform))
                raise RuntimeError("unable to attach actor: parent actor not found")
            return self._add(Sensor(self, blueprint, transform, attach_to))
        kind = Vehicle if blueprint.id in VEHICLES else Prop if blueprint.id in PROPS else None
        if kind is None:
            return self._add(Actor(self, blueprint, transform))
        low, high = _box(transform, blueprint.extent or (0.0, 0.0, 0.0))
        others = [a.box() for a in self.get_actors() if isinstance(a, Solid)]
        blocked = [(o.low, o.high) for o in self.obstacles] + others
        if any(_boxes_overlap(low, high, lo, hi) for lo, hi in blocked):
            raise RuntimeError("Spawn failed because due to a collision at spawn position")
        return self._add(kind(self, blueprint, transform))

    def cast_ray(
        self, initial_location: carla.Location, final_location: carla.Location
    ) -> list[LabelledPoint]:
        """RayTracer.cpp: every body the segment enters, nearest first, with its label."""
        start = (initial_location.x, initial_location.y, initial_location.z)
        end = (final_location.x, final_location.y, final_location.z)
        bodies = [(o.low, o.high, o.label) for o in self.obstacles]
        bodies += [
            (
                *a.box(),
                carla.CityObjectLabel.Car
                if isinstance(a, Vehicle)
                else carla.CityObjectLabel.Static,
            )
            for a in self.get_actors()
            if isinstance(a, Solid)
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


def _box(
    transform: carla.Transform, extent: tuple[float, float, float]
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    ex, ey, ez = extent
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
