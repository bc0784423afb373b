"""A fake AirSim RPC server speaking msgpack-rpc over TCP to the unmodified ``airsim`` client.

Wire format (msgpack-rpc, as AirSim's rpclib server speaks it): a request is the array
``[0, msgid, method, params]``, a reply ``[1, msgid, error, result]``. Structures are msgpack
maps with AirSim's field names (``Vector3r``: x_val, y_val, z_val; ``Quaternionr``: w_val,
x_val, y_val, z_val; ``ImageResponse``: image_data_uint8, image_data_float, camera_position,
camera_name, camera_orientation, time_stamp, message, pixels_as_float, compress, width,
height, image_type). Image bytes are msgpack bin; strings are msgpack str.

What it simulates: vehicles placed by simSetVehiclePose (stopped at an obstacle box when
collisions are not ignored, with a CollisionInfo), a clock in nanoseconds that moves only
when ``tick`` is called (in CARLA-Air the Unreal world's tick moves it), uncompressed Scene
images (3-channel BGR) and DepthPlanar float images whose content is computed from the
camera's vehicle pose (``expected_rgb``). With ``render_on_tick`` it answers simGetImages only
after the clock ticked once more, as CARLA-Air does in synchronous mode: a client that asks
for images on the only thread that ticks the world waits forever. What it does not simulate:
rendering, flight physics, the multirotor API.

Works with msgpack 0.5 (the airsim client's) and 1.x.
"""

from __future__ import annotations

import math
import socket
import threading
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np

REQUEST, RESPONSE = 0, 1
SCENE, DEPTH_PLANAR = 0, 1
#: Depth every view that does not look straight down sees, metres.
HORIZON_DEPTH_M = 100.0


@dataclass(frozen=True)
class Box:
    """An obstacle: an axis-aligned box in AirSim's NED frame."""

    name: str
    low: tuple[float, float, float]
    high: tuple[float, float, float]

    def contains(self, point: tuple[float, float, float]) -> bool:
        return all(lo <= p <= hi for lo, p, hi in zip(self.low, point, self.high, strict=True))


@dataclass
class Vehicle:
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    collision: dict[str, Any] = field(default_factory=dict)


def expected_rgb(position: tuple[float, float, float], yaw: float, camera: str) -> tuple[int, ...]:
    """The flat colour camera ``camera`` shows at a NED pose (decimetre code of the pose)."""
    return (
        round(position[0] * 10.0) % 256,
        round(position[1] * 10.0) % 256,
        (round(math.degrees(yaw)) + sum(map(ord, camera))) % 256,
    )


def expected_depth(position: tuple[float, float, float], camera: str) -> float:
    """Planar depth a camera shows: the height above z = 0 for the down view."""
    return -position[2] if camera == "down" else HORIZON_DEPTH_M


def _vector(x: float, y: float, z: float) -> dict[str, float]:
    return {"x_val": x, "y_val": y, "z_val": z}


def _quaternion(yaw: float) -> dict[str, float]:
    return {"w_val": math.cos(yaw / 2.0), "x_val": 0.0, "y_val": 0.0, "z_val": math.sin(yaw / 2.0)}


class FakeAirSim:
    """The fake server; ``start()`` binds a free port on 127.0.0.1, ``close()`` stops it.

    Args:
        obstacles: boxes a pose change with collisions enabled stops at.
        render_on_tick: answer simGetImages only after the next ``tick``.
        image_size: (width, height) of every camera's images.
    """

    def __init__(
        self,
        obstacles: tuple[Box, ...] = (),
        *,
        render_on_tick: bool = False,
        image_size: tuple[int, int] = (16, 12),
    ) -> None:
        self.obstacles = obstacles
        self.render_on_tick = render_on_tick
        self.image_size = image_size
        self.port = 0
        self.calls: list[str] = []
        self.vehicles: dict[str, Vehicle] = {"": Vehicle()}
        self._time_ns = 0
        self._ticks = 0
        self._condition = threading.Condition()
        self._answering = True
        self._running = False
        self._listener = socket.socket()
        self._threads: list[threading.Thread] = []
        self._connections: list[socket.socket] = []

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> FakeAirSim:
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen()
        self._listener.settimeout(0.1)
        self.port = self._listener.getsockname()[1]
        self._running = True
        self._spawn(self._accept)
        return self

    def close(self) -> None:
        self._running = False
        with self._condition:
            self._condition.notify_all()
        for thread in self._threads:
            thread.join()
        self._listener.close()

    def __enter__(self) -> FakeAirSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _spawn(self, target: Any, *args: Any) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        thread.start()
        self._threads.append(thread)

    def stop_answering(self) -> None:
        """Read requests but never answer them: a hung server."""
        self._answering = False

    def resume_answering(self) -> None:
        self._answering = True

    def tick(self, seconds: float) -> None:
        """Advance the clock (the Unreal world ticked) and release waiting image requests."""
        with self._condition:
            self._time_ns += round(seconds * 1e9)
            self._ticks += 1
            self._condition.notify_all()

    @property
    def ticks(self) -> int:
        return self._ticks

    # -- transport -----------------------------------------------------------------------

    def _accept(self) -> None:
        while self._running:
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            connection.settimeout(0.1)
            self._spawn(self._serve, connection)

    def _serve(self, connection: socket.socket) -> None:
        unpacker = msgpack.Unpacker(raw=False)
        with connection:
            while self._running:
                try:
                    data = connection.recv(1 << 16)
                except TimeoutError:
                    continue
                except OSError:
                    return
                if not data:
                    return
                unpacker.feed(data)
                for message in unpacker:
                    kind, msgid, method, params = message
                    if kind != REQUEST:
                        continue
                    self.calls.append(method)
                    if not self._answering:
                        continue
                    try:
                        reply = [RESPONSE, msgid, None, self._handle(method, params)]
                    except KeyError as error:
                        reply = [RESPONSE, msgid, f"rpclib: server could not find {error}", None]
                    try:
                        connection.sendall(msgpack.packb(reply, use_bin_type=True))
                    except OSError:
                        return

    # -- API -----------------------------------------------------------------------------

    def _vehicle(self, name: str) -> Vehicle:
        return self.vehicles.setdefault(name, Vehicle())

    def _handle(self, method: str, params: list[Any]) -> Any:
        if method == "ping":
            return True
        if method in ("getServerVersion", "getMinRequiredClientVersion"):
            return 1
        if method in ("enableApiControl", "armDisarm"):
            return True
        if method == "simSetVehiclePose":
            pose, ignore_collision, name = params
            self._set_pose(self._vehicle(name), pose, ignore_collision)
            return None
        if method == "simGetVehiclePose":
            vehicle = self._vehicle(params[0])
            return {"position": _vector(*vehicle.position), "orientation": _quaternion(vehicle.yaw)}
        if method == "simGetCollisionInfo":
            return self._collision(self._vehicle(params[0]))
        if method == "simGetImages":
            requests, name, _external = params
            return self._images(requests, self._vehicle(name))
        raise KeyError(method)

    def _set_pose(self, vehicle: Vehicle, pose: dict[str, Any], ignore_collision: bool) -> None:
        p, q = pose["position"], pose["orientation"]
        target = (float(p["x_val"]), float(p["y_val"]), float(p["z_val"]))
        yaw = math.atan2(
            2.0 * (q["w_val"] * q["z_val"] + q["x_val"] * q["y_val"]),
            1.0 - 2.0 * (q["y_val"] ** 2 + q["z_val"] ** 2),
        )
        with self._condition:
            vehicle.yaw = yaw
            if not ignore_collision:
                start = vehicle.position
                for i in range(1, 101):
                    point = tuple(
                        a + (b - a) * i / 100.0 for a, b in zip(start, target, strict=True)
                    )
                    hit = next((box for box in self.obstacles if box.contains(point)), None)
                    if hit is not None:
                        vehicle.collision = {
                            "object_name": hit.name,
                            "time_stamp": self._time_ns,
                            "position": vehicle.position,
                        }
                        return
                    vehicle.position = point  # type: ignore[assignment]
            vehicle.position = target

    def _collision(self, vehicle: Vehicle) -> dict[str, Any]:
        hit = vehicle.collision
        where = _vector(*hit.get("position", vehicle.position))
        return {
            "has_collided": bool(hit),
            "penetration_depth": 0.0,
            "time_stamp": hit.get("time_stamp", 0),
            "normal": _vector(0.0, 0.0, 0.0),
            "impact_point": where,
            "position": where,
            "object_name": hit.get("object_name", ""),
            "object_id": 1 if hit else -1,
        }

    def _images(self, requests: list[dict[str, Any]], vehicle: Vehicle) -> list[dict[str, Any]]:
        with self._condition:
            if self.render_on_tick:
                requested_at = self._ticks
                while self._running and self._ticks == requested_at:
                    self._condition.wait(0.1)
            position, yaw, stamp = vehicle.position, vehicle.yaw, self._time_ns
        width, height = self.image_size
        responses = []
        for request in requests:
            camera, image_type = request["camera_name"], request["image_type"]
            response = {
                "camera_position": _vector(*position),
                "camera_name": camera,
                "camera_orientation": _quaternion(yaw),
                "time_stamp": stamp,
                "message": "",
                "pixels_as_float": request["pixels_as_float"],
                "compress": False,
                "width": width,
                "height": height,
                "image_type": image_type,
            }
            if image_type == DEPTH_PLANAR and request["pixels_as_float"]:
                depth = expected_depth(position, camera)
                response["image_data_float"] = [depth] * (width * height)
                response["image_data_uint8"] = b"\x00"  # rpclib cannot send an empty vector
            else:
                bgr = np.empty((height, width, 3), dtype=np.uint8)
                bgr[:] = expected_rgb(position, yaw, camera)[::-1]
                response["image_data_uint8"] = bgr.tobytes()
                response["image_data_float"] = [0.0]
            responses.append(response)
        return responses
