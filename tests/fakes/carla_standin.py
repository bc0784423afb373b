"""In-process stand-ins for the CARLA client objects the CARLA-Air backend uses.

CARLA's client cannot be faked at the wire: its world and sensor objects speak LibCarla's
RPC and streaming protocols. These stand-ins implement the subset of ``carla.Client``,
``carla.World``, ``carla.Map``, ``carla.Waypoint``, actors and sensors the backend calls, with
the real ``carla`` value types (``Transform``, ``Location``, ``Rotation``, ``WorldSettings``)
so transforms are built and read exactly as with a server. Ticking the stand-in world also
ticks the fake AirSim server's clock, as the single Unreal world of CARLA-Air does.

The road is two opposite lanes of a straight 40 m street along CARLA x (lane 1 at y = 0
heading +x, lane -1 at y = 3.5 heading -x), with waypoints every 2 m and a U-turn at each end.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import carla
import numpy as np

#: Horizontal distance a ground camera sees, metres (its depth image is flat).
GROUND_VIEW_DEPTH_M = 30.0
ROAD_LENGTH_M = 40.0
LANE_OFFSET_M = 3.5


@dataclass
class Timestamp:
    elapsed_seconds: float


@dataclass
class Snapshot:
    frame: int
    timestamp: Timestamp


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

    def __init__(self, world: World, blueprint: Blueprint, transform: carla.Transform) -> None:
        self.id = next(Actor._ids)
        self.type_id = blueprint.id
        self.attributes = dict(blueprint.attributes)
        self.world = world
        self._transform = transform
        self.alive = True

    def get_transform(self) -> carla.Transform:
        return self._transform

    def set_transform(self, transform: carla.Transform) -> None:
        self._transform = transform

    def destroy(self) -> bool:
        self.alive = False
        return True


class Vehicle(Actor):
    def set_transform(self, transform: carla.Transform) -> None:
        """Teleport, stopping short of an obstacle box the way crosses (with a collision)."""
        start, end = self._transform.location, transform.location
        for i in range(1, 101):
            point = carla.Location(
                start.x + (end.x - start.x) * i / 100.0,
                start.y + (end.y - start.y) * i / 100.0,
                start.z + (end.z - start.z) * i / 100.0,
            )
            hit = self.world.obstacle_at(point)
            if hit is not None:
                self.world.pending_collisions.append((self, hit))
                return
            self._transform = carla.Transform(point, transform.rotation)
        self._transform = transform


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
        super().__init__(world, blueprint, transform)
        self.parent = parent
        self.callback: Callable[[Any], None] | None = None

    def listen(self, callback: Callable[[Any], None]) -> None:
        self.callback = callback

    def stop(self) -> None:
        self.callback = None

    def emit(self, snapshot: Snapshot) -> None:
        if self.callback is None or not self.parent.alive:
            return
        if self.type_id == "sensor.other.collision":
            for vehicle, name in self.world.pending_collisions:
                if vehicle is self.parent:
                    self.callback(
                        CollisionEvent(
                            snapshot.frame, snapshot.timestamp.elapsed_seconds, OtherActor(name)
                        )
                    )
            return
        width, height = int(self.attributes["image_size_x"]), int(self.attributes["image_size_y"])
        view = self.attributes["role_name"]
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
            bgra[:, :, 2::-1] = expected_ground_rgb(self.parent.get_transform(), view)
        self.callback(
            Image(
                snapshot.frame,
                snapshot.timestamp.elapsed_seconds,
                width,
                height,
                float(self.attributes["fov"]),
                bgra.tobytes(),
                self.parent.get_transform(),
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


class World:
    """The stand-in world.

    Args:
        map_name: what ``get_map().name`` answers (CARLA answers e.g. ``Carla/Maps/Town10HD_Opt``).
        airsim: the fake AirSim server sharing this world's clock, or None.
        obstacles: named boxes ((x0, y0), (x1, y1)) in CARLA coordinates a vehicle stops at.
    """

    def __init__(
        self,
        map_name: str = "Carla/Maps/Town10HD_Opt",
        airsim: Any = None,
        obstacles: tuple[tuple[str, tuple[float, float], tuple[float, float]], ...] = (),
    ) -> None:
        self.map = Map(map_name)
        self.airsim = airsim
        self.obstacles = obstacles
        self.settings = carla.WorldSettings()
        self.settings_history: list[tuple[bool, float | None]] = []
        self.frame = 0
        self.elapsed = 0.0
        self.actors: list[Actor] = []
        self.pending_collisions: list[tuple[Vehicle, str]] = []
        self.tick_threads: set[str] = set()

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

    def spawn_actor(
        self, blueprint: Blueprint, transform: carla.Transform, attach_to: Actor | None = None
    ) -> Actor:
        if attach_to is None:
            actor: Actor = Vehicle(self, blueprint, transform)
        else:
            actor = Sensor(self, blueprint, transform, attach_to)
        self.actors.append(actor)
        return actor

    def obstacle_at(self, point: carla.Location) -> str | None:
        for name, (x0, y0), (x1, y1) in self.obstacles:
            if x0 <= point.x <= x1 and y0 <= point.y <= y1:
                return name
        return None

    def get_snapshot(self) -> Snapshot:
        return Snapshot(self.frame, Timestamp(self.elapsed))

    def tick(self, seconds: float = 10.0) -> int:
        if not self.settings.synchronous_mode:
            raise RuntimeError("tick() in asynchronous mode")
        self.tick_threads.add(threading.current_thread().name)
        delta = self.settings.fixed_delta_seconds or 0.05
        self.frame += 1
        self.elapsed += delta
        if self.airsim is not None:
            self.airsim.tick(delta)
        snapshot = self.get_snapshot()
        for actor in list(self.actors):
            if isinstance(actor, Sensor) and actor.alive:
                actor.emit(snapshot)
        self.pending_collisions.clear()
        return self.frame

    def alive_actors(self) -> list[Actor]:
        return [actor for actor in self.actors if actor.alive]


class Client:
    """Stands in for ``carla.Client``: versions and the world."""

    def __init__(self, world: World, server_version: str = "0.9.16") -> None:
        self.world = world
        self.server_version = server_version
        self.timeout_s: float | None = None

    def set_timeout(self, seconds: float) -> None:
        self.timeout_s = seconds

    def get_client_version(self) -> str:
        return "0.9.16"

    def get_server_version(self) -> str:
        return self.server_version

    def get_world(self) -> World:
        return self.world
