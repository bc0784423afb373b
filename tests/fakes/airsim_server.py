"""A fake AirSim RPC server speaking msgpack-rpc over TCP to the unmodified ``airsim`` client,
modelled on the AirSim plugin CARLA-Air runs (``louiszengCN/CarlaAir`` v0.1.7, which bundles
``microsoft/AirSim`` v1.8.1's plugin with changes). Each behaviour names the file it reproduces.

Wire format (msgpack-rpc, as AirSim's rpclib server speaks it): a request is the array
``[0, msgid, method, params]``, a reply ``[1, msgid, error, result]``. Structures are msgpack
maps with AirSim's field names. Errors are rpclib's texts (rpclib ``lib/rpc/dispatcher.cc``;
AirSim's ``RpcLibServerBase.cpp`` sets ``suppress_exceptions(true)``): an unknown method is
"server could not find function", a throwing handler "threw an exception".

What it simulates, as the plugin does it:
- the settings file decides everything (``AirSimSettings.hpp``): the vehicle (the first of
  ``Vehicles`` for the name ""), its cameras (the pawn's built-in ``front_center``,
  ``front_right``, ``front_left``, ``bottom_center``, ``back_center``, ``0``-``4``, ``fpv`` from
  ``FlyingPawn.cpp``, plus or replaced by the settings' ``Cameras``, ``PawnSimApi.cpp``), each
  image type's size and FOV (``CaptureSettings``, default 256x144 and 90 degrees), the physics
  engine (``PhysicsEngineName``, ``FastPhysicsEngine`` when absent for a multirotor). The
  default settings are CARLA-Air's shipped ones (``STOCK_CARLA_AIR_SETTINGS``).
  ``getSettingsString`` answers the text. An unknown camera name throws ``map::at``
  (``UnrealImageCapture.cpp`` ``cameras_->at(name)``).
- the field of view of every image type is the camera component's: ``PIPCamera.cpp``
  ``setupCameraFromSettings`` sets each capture's ``FOVAngle`` from its own ``FOV_Degrees``,
  then ``copyCameraSettingsToSceneCapture`` overwrites it with the cine camera's
  ``FieldOfView``, which only an ``ImageType: -1`` entry sets (``updateCameraSetting``);
  without one it stays the cine camera's default (``CurrentFocalLength = 11.9`` mm; its
  filmback is not in the source: ``CINE_DEFAULT_FOV_DEG`` assumes UE4's 24.89 mm Super 35).
  ``simGetCameraInfo`` answers that FOV; ``simSetCameraFov`` sets it for every capture
  (``setCameraFoV``).
- ``simSetVehiclePose`` sets the physics body's pose and ungrounds it; the pawn moves there on
  the next render tick, sweeping unless collisions are ignored (``MultirotorPawnSimApi.cpp``
  ``setPose``/``updateRendering``); every later tick moves the pawn to the body's pose again
  with a sweep (CARLA-Air's physics-collision mode, on by default), so a body left behind a
  wall hits it again on each tick. With ``FastPhysicsEngine`` an ungrounded, disarmed body
  falls under gravity on the physics thread's wall clock (``FastPhysicsEngine.hpp``); with
  ``ExternalPhysicsEngine`` it stays (``ExternalPhysicsEngine.hpp``).
- after each tick the pawn is clamped above the first surface a ray from 100 m above it hits
  (``MultirotorPawnSimApi.cpp`` ground clamp, 5 cm clearance): a pose under a roof or an
  overpass is lifted on top of it.
- ``simGetVehiclePose`` answers the pawn's pose (``PawnSimApi::getPose``).
- AirSim's clock: a multirotor's default ``SteppableClock`` starts at the Unix epoch time and
  is advanced in 3 ms steps by the physics thread, in wall time, not by CARLA's ticks
  (``SteppableClock.hpp``, ``World.hpp``, ``SimModeWorldBase.h``); image and collision time
  stamps come from it (``RenderRequest.cpp``, ``PawnSimApi.cpp`` ``onCollision``).
- images: uncompressed Scene as 3-channel BGR bytes (msgpack bin), DepthPlanar as floats
  (msgpack float32 elements, as rpclib packs a ``std::vector<float>``; ``pack_reply`` writes
  those bytes with numpy, nearer a C++ server's cost than Python floats); in CARLA-Air's
  synchronous mode they render on the world's next tick, so ``simGetImages`` answers only
  after ``tick`` was called once more (``render_on_tick``).

Images are flat colours computed from the pawn's pose (``expected_rgb``). Not simulated:
rendering, flight dynamics, the multirotor API. Works with msgpack 0.5 (the airsim client's)
and 1.x.
"""

from __future__ import annotations

import copy
import json
import math
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np

from fakes.carla_air_settings import STOCK_CARLA_AIR_SETTINGS

REQUEST, RESPONSE = 0, 1
SCENE, DEPTH_PLANAR = 0, 1
#: Depth every view that does not look straight down sees, metres.
HORIZON_DEPTH_M = 100.0
#: ``physics_loop_period_`` (SimModeWorldBase.h): the clock's step, nanoseconds.
PHYSICS_STEP_NS = 3_000_000
GRAVITY_M_S2 = 9.80665
#: The ground clamp's ray starts this far above the pawn (10000 cm) and ends 5 m below it.
CLAMP_RAY_UP_M, CLAMP_RAY_DOWN_M, CLAMP_CLEARANCE_M = 100.0, 5.0, 0.05
#: ``CaptureSetting`` defaults (AirSimSettings.hpp): 256x144 (the FOV is NaN: the camera's).
DEFAULT_CAPTURE = {"Width": 256, "Height": 144}
#: The cine camera's FOV at 11.9 mm focal length on a 24.89 mm wide filmback (assumed).
CINE_DEFAULT_FOV_DEG = 2.0 * math.degrees(math.atan(24.89 / 2.0 / 11.9))
#: ``ImageType`` of the camera component's own settings (AirSimSettings.hpp, -1).
CAMERA_COMPONENT = -1
BUILT_IN_CAMERAS = (
    "front_center",
    "front_right",
    "front_left",
    "bottom_center",
    "back_center",
    "0",
    "1",
    "2",
    "3",
    "4",
    "",
    "fpv",
)


class RpcError(Exception):
    """A handler failure, answered as rpclib's error text."""


@dataclass(frozen=True)
class Box:
    """An obstacle: an axis-aligned box in AirSim's NED frame (low has the smaller down, i.e.
    the box's top)."""

    name: str
    low: tuple[float, float, float]
    high: tuple[float, float, float]

    def contains(self, point: tuple[float, float, float]) -> bool:
        return all(lo <= p <= hi for lo, p, hi in zip(self.low, point, self.high, strict=True))

    def covers(self, north: float, east: float) -> bool:
        return self.low[0] <= north <= self.high[0] and self.low[1] <= east <= self.high[1]


@dataclass
class Camera:
    """One camera as the settings define it."""

    name: str
    pitch_deg: float
    #: image type -> (width, height)
    captures: dict[int, tuple[int, int]]
    #: the camera component's FOV, which every capture uses (PIPCamera.cpp)
    fov_deg: float = CINE_DEFAULT_FOV_DEG

    def capture(self, image_type: int) -> tuple[int, int]:
        return self.captures.get(image_type, (DEFAULT_CAPTURE["Width"], DEFAULT_CAPTURE["Height"]))


@dataclass
class Vehicle:
    """One multirotor: its physics body and its Unreal pawn."""

    #: The physics body's pose (where simSetVehiclePose put it).
    body_position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    body_yaw: float = 0.0
    body_set_at: float = 0.0
    grounded: bool = True
    #: The pawn's pose (what simGetVehiclePose answers and the cameras render).
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw: float = 0.0
    pending: bool = False
    pending_ignores_collision: bool = False
    collision: dict[str, Any] = field(default_factory=dict)


def expected_rgb(position: tuple[float, float, float], yaw: float, camera: str) -> tuple[int, ...]:
    """The flat colour camera ``camera`` shows at a NED pose (decimetre code of the pose)."""
    return (
        round(position[0] * 10.0) % 256,
        round(position[1] * 10.0) % 256,
        (round(math.degrees(yaw)) + sum(map(ord, camera))) % 256,
    )


def textured_bgr(rgb: tuple[int, ...], width: int, height: int) -> bytes:
    """A Scene image's BGR bytes: the flat colour ``rgb``, every second pixel of its lower half
    inverted (a rendered world is never one colour). Built as two rows repeated, at memory
    speed as a real server's copy of its render target is, not pixel by pixel."""
    plain = np.tile(np.array(rgb[::-1], dtype=np.uint8), width).reshape(width, 3)
    textured = plain.copy()
    textured[::2] = 255 - textured[::2]
    return plain.tobytes() * (height // 2) + textured.tobytes() * (height - height // 2)


def settings_cameras(settings: dict[str, Any], vehicle: dict[str, Any]) -> dict[str, Camera]:
    """The cameras a vehicle of these settings has (PawnSimApi::setupCamerasFromSettings)."""
    cameras = {
        name: Camera(name, -90.0 if name in ("bottom_center", "3") else 0.0, {})
        for name in BUILT_IN_CAMERAS
    }
    for name, camera in vehicle.get("Cameras", {}).items():
        captures = {}
        fov = CINE_DEFAULT_FOV_DEG
        for capture in camera.get("CaptureSettings", []):
            image_type = int(capture.get("ImageType", 0))
            if image_type == CAMERA_COMPONENT:
                fov = float(capture.get("FOV_Degrees", fov))
                continue
            captures[image_type] = (
                int(capture.get("Width", DEFAULT_CAPTURE["Width"])),
                int(capture.get("Height", DEFAULT_CAPTURE["Height"])),
            )
        cameras[name] = Camera(name, float(camera.get("Pitch", 0.0)), captures, fov)
    return cameras


#: One element of a packed ``std::vector<float>``: msgpack-c's ``pack_float`` writes tag 0xca
#: and the float's four bytes big-endian (rpclib 2.3.0 include/rpc/msgpack/v1/pack.hpp:1104-1112).
_FLOAT32_ELEMENT = np.dtype([("tag", "u1"), ("value", ">f4")])


def pack_reply(reply: Any) -> bytes:
    """``reply`` as ``msgpack.packb(reply, use_bin_type=True, use_single_float=True)`` packs it
    with each numpy array in it as the list of its values, byte for byte.

    An image's float run goes out as rpclib writes a ``std::vector<float>`` (``v1/adaptor/
    vector.hpp:73-77``): ``pack_array``'s header (``v1/pack.hpp:1160-1175``: 0x90|n below 16,
    0xdc and a big-endian uint16 below 65536, else 0xdd and a uint32, as Python msgpack's
    ``pack_array_header`` writes it), then one ``_FLOAT32_ELEMENT`` a value, built by numpy. A
    C++ server packs at memory speed; packing a 256² answer's 262,144 Python floats one by
    one took the fake milliseconds. The arrays must be float32: the server holds C++ floats.
    """
    packer = msgpack.Packer(use_bin_type=True, use_single_float=True)
    parts: list[bytes | memoryview] = []
    _pack_into(packer, reply, parts)
    return b"".join(parts)


def _pack_into(packer: msgpack.Packer, value: Any, parts: list[bytes | memoryview]) -> None:
    if isinstance(value, np.ndarray):
        if value.dtype != np.float32:
            raise TypeError(f"a float run must be float32 (a C++ float), not {value.dtype}")
        elements = np.empty(value.size, _FLOAT32_ELEMENT)
        elements["tag"] = 0xCA
        elements["value"] = value.ravel()
        parts.append(packer.pack_array_header(value.size))
        parts.append(elements.data)  # joined without a copy of its own
    elif isinstance(value, dict):
        parts.append(packer.pack_map_header(len(value)))
        for key, item in value.items():
            _pack_into(packer, key, parts)
            _pack_into(packer, item, parts)
    elif isinstance(value, list | tuple):
        parts.append(packer.pack_array_header(len(value)))
        for item in value:
            _pack_into(packer, item, parts)
    else:
        parts.append(packer.pack(value))


def _as_float32(value: float) -> float:
    """``value`` as the server holds it in a C++ float."""
    return float(np.float32(value))


def _vector(x: float, y: float, z: float) -> dict[str, float]:
    return {"x_val": x, "y_val": y, "z_val": z}


def _quaternion(yaw: float) -> dict[str, float]:
    return {"w_val": math.cos(yaw / 2.0), "x_val": 0.0, "y_val": 0.0, "z_val": math.sin(yaw / 2.0)}


class FakeAirSim:
    """The fake server; ``start()`` binds a free port on 127.0.0.1, ``close()`` stops it.

    Args:
        settings: the AirSim settings (the parsed settings.json); CARLA-Air's shipped ones
            by default.
        obstacles: boxes a sweeping pose change stops at; their tops are surfaces the
            ground clamp finds.
        ground_down: NED down of the ground plane (the clamp's last surface).
        render_on_tick: answer simGetImages only after the next ``tick``.
        answer_transit_s: wall time an image answer takes on the wire after its first
            byte, as a large set's megabytes do (at 640² four RGB-D views are about 8 MB).
            rpclib writes a reply once it is packed whole (rpclib 2.3.0 ``lib/rpc/detail/
            server_session.cc``: the dispatched response's ``get_data()``, one
            ``msgpack::sbuffer``, goes to ``async_writer::write``), so its first byte means
            the images were rendered.
    """

    def __init__(
        self,
        settings: dict[str, Any] | None = None,
        obstacles: tuple[Box, ...] = (),
        *,
        ground_down: float = 1e9,
        render_on_tick: bool = True,
        answer_transit_s: float = 0.0,
    ) -> None:
        self.settings = copy.deepcopy(STOCK_CARLA_AIR_SETTINGS if settings is None else settings)
        self.obstacles = obstacles
        self.ground_down = ground_down
        self.render_on_tick = render_on_tick
        self.answer_transit_s = answer_transit_s
        self.physics_engine = self.settings.get("PhysicsEngineName") or "FastPhysicsEngine"
        vehicles = self.settings.get("Vehicles") or {"SimpleFlight": {}}
        self.vehicle_names = list(vehicles)
        self.cameras = {
            name: settings_cameras(self.settings, vehicle) for name, vehicle in vehicles.items()
        }
        self.port = 0
        self.calls: list[str] = []
        self.vehicles: dict[str, Vehicle] = {name: Vehicle() for name in vehicles}
        self._epoch_start_ns = time.time_ns()
        self._started_ns = time.monotonic_ns()
        self._ticks = 0
        self._condition = threading.Condition()
        self._answering = True
        self._running = False
        self._listener = socket.socket()
        self._threads: list[threading.Thread] = []

    # -- life cycle ----------------------------------------------------------------------

    def start(self, port: int = 0) -> FakeAirSim:
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", port))
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

    def vehicle(self, name: str = "") -> Vehicle:
        """The vehicle called ``name`` ("" is the first, as in AirSim)."""
        return self.vehicles[self._vehicle_name(name)]

    def now_ns(self) -> int:
        """AirSim's clock: the epoch time at start plus whole physics steps of wall time."""
        steps = (time.monotonic_ns() - self._started_ns) // PHYSICS_STEP_NS
        return self._epoch_start_ns + steps * PHYSICS_STEP_NS

    def tick(self, seconds: float) -> None:
        """One Unreal frame (CARLA ticked the world): the pawns follow their bodies, then
        waiting image requests render. ``seconds`` does not move AirSim's clock."""
        del seconds
        with self._condition:
            for vehicle in self.vehicles.values():
                self._update_rendering(vehicle)
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
                    except KeyError:
                        reply = [
                            RESPONSE,
                            msgid,
                            f"rpclib: server could not find function '{method}' with argument "
                            f"count {len(params)}.",
                            None,
                        ]
                    except RpcError as error:
                        reply = [
                            RESPONSE,
                            msgid,
                            f"rpclib: function '{method}' (called with {len(params)} arg(s)) "
                            f"threw an exception. The exception contained this information: "
                            f"{error}.",
                            None,
                        ]
                    # Every float of the answers served here is a C++ float: real_T = float
                    # (common/Common.hpp:30) in Vector3r, Quaternionr, CollisionInfo's
                    # penetration_depth, and ``float`` in CameraInfo's fov and proj_mat and
                    # ImageResponse's image_data_float (AirSim v1.8.1
                    # RpcLibAdaptorsBase.hpp; the same file in CarlaAir's Plugins/AirSim).
                    # rpclib 2.3.0 (AirSim's setup.sh) packs every float as msgpack float32,
                    # tag 0xca (include/rpc/msgpack/v1/adaptor/float.hpp:47-50,
                    # v1/pack.hpp:1104-1112). Only GeoPoint's latitude and longitude are
                    # doubles, and no answer served here has one. Image float runs are numpy
                    # float32 arrays, which ``pack_reply`` writes in those same bytes.
                    try:
                        # Blocking: a large answer to a slow reader must not be cut short.
                        connection.settimeout(None)
                        packed = pack_reply(reply)
                        if method == "simGetImages" and self.answer_transit_s:
                            connection.sendall(packed[:1])
                            time.sleep(self.answer_transit_s)
                            packed = packed[1:]
                        connection.sendall(packed)
                        connection.settimeout(0.1)
                    except OSError:
                        return

    # -- API -----------------------------------------------------------------------------

    def _vehicle_name(self, name: str) -> str:
        if name == "":
            return self.vehicle_names[0]
        if name not in self.vehicles:
            raise RpcError("map::at")
        return name

    def _handle(self, method: str, params: list[Any]) -> Any:
        if method == "ping":
            return True
        if method in ("getServerVersion", "getMinRequiredClientVersion"):
            return 1
        if method == "getSettingsString":
            return json.dumps(self.settings, indent=4)
        if method in ("enableApiControl", "armDisarm"):
            self._vehicle_name(params[-1])
            return None if method == "enableApiControl" else True
        if method == "simSetVehiclePose":
            pose, ignore_collision, name = params
            self._set_pose(self.vehicle(name), pose, ignore_collision)
            return None
        if method == "simGetVehiclePose":
            with self._condition:
                vehicle = self.vehicle(params[0])
                position, yaw = vehicle.position, vehicle.yaw
            return {"position": _vector(*position), "orientation": _quaternion(yaw)}
        if method == "simGetCollisionInfo":
            return self._collision(self.vehicle(params[0]))
        if method == "simGetCameraInfo":
            camera_name, name, _external = params
            camera = self._camera(name, camera_name)
            return {
                "pose": {"position": _vector(0.0, 0.0, 0.0), "orientation": _quaternion(0.0)},
                "fov": camera.fov_deg,  # getCameraInfo: camera_->FieldOfView
                "proj_mat": {"matrix": [[0.0] * 4 for _ in range(4)]},
            }
        if method == "simSetCameraFov":
            camera_name, fov_degrees, name, _external = params
            self._camera(name, camera_name).fov_deg = _as_float32(fov_degrees)
            return None
        if method == "simGetImages":
            requests, name, _external = params
            return self._images(requests, name)
        raise KeyError(method)

    def _camera(self, vehicle_name: str, camera_name: str) -> Camera:
        cameras = self.cameras[self._vehicle_name(vehicle_name)]
        if camera_name not in cameras:
            raise RpcError("map::at")  # UnrealImageCapture: cameras_->at(camera_name)
        return cameras[camera_name]

    def _set_pose(self, vehicle: Vehicle, pose: dict[str, Any], ignore_collision: bool) -> None:
        # The server unpacks the client's doubles into real_T = float (RpcLibAdaptorsBase
        # Pose, Vector3r, Quaternionr): a pose read back is the float nearest the one set.
        p = {axis: _as_float32(value) for axis, value in pose["position"].items()}
        q = {axis: _as_float32(value) for axis, value in pose["orientation"].items()}
        yaw = math.atan2(
            2.0 * (q["w_val"] * q["z_val"] + q["x_val"] * q["y_val"]),
            1.0 - 2.0 * (q["y_val"] ** 2 + q["z_val"] ** 2),
        )
        with self._condition:
            vehicle.body_position = (p["x_val"], p["y_val"], p["z_val"])
            vehicle.body_yaw = yaw
            vehicle.body_set_at = time.monotonic()
            vehicle.grounded = False
            vehicle.pending = True
            vehicle.pending_ignores_collision = bool(ignore_collision)

    def _body_position(self, vehicle: Vehicle) -> tuple[float, float, float]:
        north, east, down = vehicle.body_position
        if self.physics_engine == "FastPhysicsEngine" and not vehicle.grounded:
            fallen = 0.5 * GRAVITY_M_S2 * (time.monotonic() - vehicle.body_set_at) ** 2
            down = min(down + fallen, self.ground_down)
        return (north, east, down)

    def _update_rendering(self, vehicle: Vehicle) -> None:
        target = self._body_position(vehicle)
        sweep = not (vehicle.pending and vehicle.pending_ignores_collision)
        vehicle.pending = False
        vehicle.yaw = vehicle.body_yaw
        vehicle.position = self._sweep(vehicle, target) if sweep else target
        vehicle.position = self._ground_clamp(vehicle.position)

    def _sweep(
        self, vehicle: Vehicle, target: tuple[float, float, float]
    ) -> tuple[float, float, float]:
        start = vehicle.position
        free = start
        for i in range(1, 101):
            point = tuple(a + (b - a) * i / 100.0 for a, b in zip(start, target, strict=True))
            hit = next((box for box in self.obstacles if box.contains(point)), None)  # type: ignore[arg-type]
            if hit is not None:
                vehicle.collision = {
                    "object_name": hit.name,
                    "time_stamp": self.now_ns(),
                    "position": free,
                }
                return free
            free = point  # type: ignore[assignment]
        return target

    def _ground_clamp(self, position: tuple[float, float, float]) -> tuple[float, float, float]:
        north, east, down = position
        top_of_ray, bottom_of_ray = down - CLAMP_RAY_UP_M, down + CLAMP_RAY_DOWN_M
        surfaces = [box.low[2] for box in self.obstacles if box.covers(north, east)]
        surfaces.append(self.ground_down)
        hits = [s for s in surfaces if top_of_ray <= s <= bottom_of_ray]
        if not hits:
            return position
        first = min(hits)  # the first surface the downward ray meets
        if down > first - CLAMP_CLEARANCE_M:
            return (north, east, first - CLAMP_CLEARANCE_M)
        return position

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

    def _images(self, requests: list[dict[str, Any]], vehicle_name: str) -> list[dict[str, Any]]:
        cameras = [self._camera(vehicle_name, r["camera_name"]) for r in requests]
        with self._condition:
            if self.render_on_tick:
                requested_at = self._ticks
                while self._running and self._ticks == requested_at:
                    self._condition.wait(0.1)
            vehicle = self.vehicle(vehicle_name)
            position, yaw, stamp = vehicle.position, vehicle.yaw, self.now_ns()
        responses = []
        for request, camera in zip(requests, cameras, strict=True):
            image_type = request["image_type"]
            width, height = camera.capture(image_type)
            response = {
                "camera_position": _vector(*position),
                "camera_name": camera.name,
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
                looks_down = camera.pitch_deg <= -89.0
                depth = self.ground_down - position[2] if looks_down else HORIZON_DEPTH_M
                response["image_data_float"] = np.full(width * height, depth, np.float32)
                response["image_data_uint8"] = b"\x00"  # rpclib cannot send an empty vector
            else:
                colour = expected_rgb(position, yaw, camera.name)
                response["image_data_uint8"] = textured_bgr(colour, width, height)
                response["image_data_float"] = [0.0]
            responses.append(response)
        return responses
