"""A fake ProjectAirSim server speaking the real NNG protocol to the unmodified client.

Modelled on the public server (``iamaisim/ProjectAirSim`` at 06dff61); each behaviour below
names the file it reproduces.

Wire format (core_sim ``service_manager.cpp``, ``topic_manager.cpp``, ``message/*.cpp``):
- services: NNG Req/Rep (port 8990 by default). A request is a msgpack map
  ``{"id", "method", "params": {"data": <msgpack of the params>}, "version"}``; a reply is
  ``{"id", "result": {"data": <msgpack of the result>}, "version"}`` or
  ``{"id", "error": {"data": <msgpack of {"code", "message"}>}, "version"}``. An unregistered
  method is error code 1, a missing parameter code 3 (``ServiceManager::RequestResponse``).
- topics: NNG pair1 in polyamorous mode (port 8989 by default; ``topic_manager.cpp``
  ``nng_pair1_open_poly``), which refuses a pair0 peer: its dial succeeds, then no pipe ever
  forms. Subscriptions are per connection (pipe): each topic keeps its subscribing pipes,
  and a message goes to each of them (``nng_msg_set_pipe``); a closed pipe loses all its
  subscriptions (``HandleNNGPipeEvent``). Frames are msgpack arrays ``[type, topic_path,
  body]`` (0 subscribe, 1 unsubscribe, 2 message, 3 unsubscribe all, whose topic is ignored)
  whose body is a packed message; subscribing sends the topic's last value at once
  (``TopicManager::Impl::Subscribe``); a frame for an unregistered topic is dropped
  (``RecvLoop``). ``/$topics`` holds the topic infos. ``topics_protocol="pair0"`` models the
  other server generation, the one the PyPI client ``projectairsim==1.1.0`` (``pynng.Pair0``)
  was written for (no public source): it refuses the public server's pair1 clients the same
  way.
- messages are packed as core_sim's msgpack-c 6.1 packs them (``core_sim_msgpack.py``):
  floats with integral values as integers, image maps in ``image_message.hpp``'s order.

What it simulates, as the server does it:
- services registered: ``/Sim/LoadScene`` (``simserver/src/simserver.cpp``; it takes
  ``load_delay_s`` of wall time, as a real scene load takes long), the scene's clock services,
  the robots' ``SetPose``/``GetGroundTruthPose`` (``core_sim/src/scene.cpp``,
  ``core_sim/src/actor/robot.cpp``) and the Unreal level's ``ListObjects`` (names matching a
  regex) and ``GetObjectPose(s)`` (NaN translation for an unknown name;
  ``Private/World/WorldSimApi.cpp``). ``LoadScene`` never changes the level: its objects are
  the server's, whatever the scene config says. ``/Sim/GetBuildCommitHash`` is not registered
  in the public server and neither is ``/Sim/Unsubscribe`` (commented out in
  ``core_sim/src/simulator.cpp``).
- a steppable clock paused on start that moves only on ``ContinueForSimTime``, in whole
  ``step-ns`` steps until it reaches the target (``core_sim/src/clock.cpp``,
  ``SteppableClock::ContinueForSimTime``).
- Unreal render ticks: the engine renders on its own wall-clock frames while the clock runs
  (``UnrealScene.cpp`` ``Tick``: for non-Unreal physics Unreal only follows the sim clock and
  pauses when it stops); each frame lasts between ``render_frame_s`` of simulated time (seeded),
  the first frame after a resume only unpauses, and the frame that sees the clock stopped still
  ticks the robots at the stop time.
- a non-physics robot: ``SetPose`` updates the kinematics at once (``GetGroundTruthPose``
  answers the commanded pose), but the Unreal actor moves at the next robot tick, as a sweep
  with link collision on that stops at the first hit and publishes ``collision_info`` stamped
  with that tick (``UnrealRobot.cpp`` ``Tick``/``MoveRobotToUnrealPose``/``OnCollisionHit``);
  link collision is on unless the root link says ``"collision": {"enabled": false}``
  (``core_sim/src/link/collision.cpp``, default 1).
- cameras capture on a robot tick when ``pose_updated - captured > capture-interval``
  (strict), only the image types somebody subscribed to (``UnrealCamera.cpp``
  ``TickComponent``), from the Unreal actor's pose, stamped with the tick's sim time, carrying
  the camera's world pose in NED (the robot's pose composed with the camera's mount;
  ``UnrealTransform::GetPoseNed``); frames are published ``publish_delay_s`` later in capture
  order (``ImagePackingAsyncTask.cpp`` runs after the render; ``camera.cpp`` ``PublishImages``
  keeps capture order). Scene images are BGR bytes; depth is ``32FC1`` floats in
  ``data_float`` with ``data`` empty, in metres (``ImagePackingAsyncTask.cpp``, the planar
  depth material's 0.01 scale). ``<type>_info`` topics carry width, height and the intrinsic
  matrix, published at load (``camera.cpp``).

Images show a colour computed from the rendered pose (``expected_rgb``) in their top half, so
a test can tell which pose a frame shows, and a texture below it, as a rendered world is never
one colour. Misconfigurations a test can ask for: ``depth_scale`` (a depth material in other
units), ``black_frames`` (a render that shows nothing), ``render_offset_ned`` (a level whose
frames are not where the robot was commanded). Not simulated: rendering itself, physics
robots, real-time clocks, dropped sends.

Run as a script, it binds free ports on 127.0.0.1, prints ``{"topics": p, "services": q}``
as one JSON line, and reads commands from stdin: ``drop N`` leaves the next N requests
unanswered, ``hang`` stops answering, ``answer`` answers again, each acknowledged with a line
``ok``. It stops when stdin closes.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import json
import math
import random
import re
import sys
import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np
import pynng

from fakes.core_sim_msgpack import pack_image_message

FRAME_SUBSCRIBE, FRAME_UNSUBSCRIBE, FRAME_MESSAGE, FRAME_UNSUBSCRIBE_ALL = 0, 1, 2, 3
TOPIC_PROTOCOLS = ("pair1", "pair0")
TOPIC_LIST = "/$topics"
CAPTURE_TOPICS = {0: "scene_camera", 1: "depth_planar_camera"}
#: Depth every camera sees that does not look straight down, metres.
HORIZON_DEPTH_M = 100.0
#: ``ClockBase::kDefaultStepNanos`` (core_sim/include/core_sim/clock.hpp).
DEFAULT_STEP_NS = 3_000_000
#: Error codes of ``ServiceManager`` (core_sim/src/service_manager.cpp).
NOT_SUPPORTED, HANDLER_ERROR, MISSING_PARAMETER = 1, 2, 3


class _ServiceError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class Box:
    """An obstacle: an axis-aligned NED box (north, east, down) named ``name``."""

    name: str
    low: tuple[float, float, float]
    high: tuple[float, float, float]

    def contains(self, point: tuple[float, float, float]) -> bool:
        return all(lo <= p <= hi for lo, p, hi in zip(self.low, point, self.high, strict=True))


@dataclass
class _Camera:
    sensor_id: str
    width: int
    height: int
    fov_deg: float
    mount_xyz: tuple[float, float, float]
    mount_rpy_deg: tuple[float, float, float]
    interval_s: float
    image_types: list[int]
    captured_ns: int = 0

    @property
    def pitch_deg(self) -> float:
        return self.mount_rpy_deg[1]


@dataclass
class _Robot:
    name: str
    #: Where the kinematics say the robot is (GetGroundTruthPose).
    position: tuple[float, float, float]
    rotation: tuple[float, float, float, float]  # w, x, y, z
    #: Where the Unreal actor is (what the cameras render).
    rendered_position: tuple[float, float, float]
    rendered_rotation: tuple[float, float, float, float]
    sweeps: bool
    cameras: list[_Camera] = field(default_factory=list)
    pose_pending: bool = False


def yaw_of(rotation: tuple[float, float, float, float]) -> float:
    w, x, y, z = rotation
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def expected_rgb(
    position: tuple[float, float, float], yaw: float, view_index: int
) -> tuple[int, int, int]:
    """The flat colour a camera shows at a NED pose: a decimetre code of north, east and of
    yaw plus the view, so frames of different poses and views differ."""
    return (
        round(position[0] * 10.0) % 256,
        round(position[1] * 10.0) % 256,
        (round(math.degrees(yaw)) + 60 * view_index) % 256,
    )


def expected_depth(position: tuple[float, float, float], pitch_deg: float) -> float:
    """Planar depth a camera shows: the height above ground (z = 0) when it looks down."""
    return -position[2] if pitch_deg <= -89.0 else HORIZON_DEPTH_M


def textured(colour: tuple[int, int, int], height: int, width: int) -> np.ndarray:
    """An RGB image: ``colour`` in the top half, a striped texture below (no rendered world
    is a single colour)."""
    rgb = np.empty((height, width, 3), dtype=np.uint8)
    rgb[:] = colour
    stripes = rgb[height // 2 :, ::2]
    stripes[:] = 255 - stripes
    return rgb


def quaternion_multiply(
    a: tuple[float, float, float, float], b: tuple[float, float, float, float]
) -> tuple[float, float, float, float]:
    """The Hamilton product a * b of (w, x, y, z) quaternions."""
    aw, ax, ay, az = a
    bw, bx, by, bz = b
    return (
        aw * bw - ax * bx - ay * by - az * bz,
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
    )


def quaternion_of_rpy(roll: float, pitch: float, yaw: float) -> tuple[float, float, float, float]:
    """(w, x, y, z) of roll, pitch, yaw (radians) applied as yaw * pitch * roll."""
    cr, sr = math.cos(roll / 2.0), math.sin(roll / 2.0)
    cp, sp = math.cos(pitch / 2.0), math.sin(pitch / 2.0)
    cy, sy = math.cos(yaw / 2.0), math.sin(yaw / 2.0)
    return (
        cr * cp * cy + sr * sp * sy,
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
    )


def rotate(
    q: tuple[float, float, float, float], v: tuple[float, float, float]
) -> tuple[float, float, float]:
    """``v`` rotated by the unit quaternion ``q``."""
    w, x, y, z = quaternion_multiply(quaternion_multiply(q, (0.0, *v)), (q[0], -q[1], -q[2], -q[3]))
    del w
    return (x, y, z)


class FakeProjectAirSim:
    """The fake server; ``start()`` binds, ``close()`` stops every thread and socket.

    Args:
        obstacles: boxes that a robot's sweep stops at; objects of the Unreal level.
        level_objects: further objects of the level, name -> NED position.
        topics_protocol: ``"pair1"`` (the public server) or ``"pair0"`` (the other
            generation).
        load_delay_s: wall time a ``LoadScene`` takes.
        render_frame_s: shortest and longest Unreal frame, in simulated seconds.
        publish_delay_s: wall time between a capture and the publication of its frames.
        depth_scale: depth units per metre of the depth material (1: metres, as the public
            server's; 1000 would be millimetres).
        black_frames: scene images are all black (a render that shows nothing).
        render_offset_ned: where frames are rendered relative to the robot's pose.
        seed: seed of the frame durations.
    """

    def __init__(
        self,
        obstacles: tuple[Box, ...] = (),
        *,
        level_objects: dict[str, tuple[float, float, float]] | None = None,
        topics_protocol: str = "pair1",
        load_delay_s: float = 0.0,
        render_frame_s: tuple[float, float] = (1.0 / 60.0, 1.0 / 25.0),
        publish_delay_s: float = 0.002,
        depth_scale: float = 1.0,
        black_frames: bool = False,
        render_offset_ned: tuple[float, float, float] = (0.0, 0.0, 0.0),
        seed: int = 0,
    ) -> None:
        if topics_protocol not in TOPIC_PROTOCOLS:
            raise ValueError(f"topics_protocol {topics_protocol!r}; known: {TOPIC_PROTOCOLS}")
        self.obstacles = obstacles
        self.level_objects = {box.name: _centre(box) for box in obstacles}
        self.level_objects.update(level_objects or {})
        self.depth_scale = depth_scale
        self.black_frames = black_frames
        self.render_offset_ned = render_offset_ned
        self.load_delay_s = load_delay_s
        self.render_frame_s = render_frame_s
        self.publish_delay_s = publish_delay_s
        self.requests: list[str] = []
        self.loads = 0
        self.topics_port = 0
        self.services_port = 0
        self._answering = threading.Event()
        self._answering.set()
        self._drop_next = 0
        self._lock = threading.Lock()
        self._running = False
        self._services = pynng.Rep0(recv_timeout=100)
        if topics_protocol == "pair1":
            self._topics = pynng.Pair1(polyamorous=True, recv_timeout=100, send_timeout=1000)
        else:
            self._topics = pynng.Pair0(recv_timeout=100, send_timeout=1000)
        self._polyamorous = topics_protocol == "pair1"
        self._pipes: set[int] = set()
        for socket in (self._services, self._topics):
            socket.add_post_pipe_connect_cb(lambda pipe: self._pipes.add(pipe.id))
            socket.add_post_pipe_remove_cb(lambda pipe: self._pipes.discard(pipe.id))
        self._topics.add_post_pipe_remove_cb(self._unsubscribe_pipe)
        self._threads: list[threading.Thread] = []
        self._rng = random.Random(seed)
        # Outgoing topic frames: (release time, order, topic, body, pipe), sent by one thread.
        self._outbox: list[tuple[float, int, str, bytes, Any]] = []
        self._order = itertools.count()
        self._outbox_ready = threading.Condition()
        # A server starts with a default scene loaded; World() talks to it before any load.
        self._scene_id = "SceneBasicDrone"
        self._step_ns = DEFAULT_STEP_NS
        self._time_ns = 0
        self._robots: dict[str, _Robot] = {}
        self._last_value: dict[str, bytes] = {TOPIC_LIST: msgpack.packb([])}
        # topic -> the pipes subscribed to it (TopicBlock::subscribers_)
        self._subscribers: dict[str, list[Any]] = defaultdict(list)
        self._registered = {TOPIC_LIST}

    # -- life cycle ----------------------------------------------------------------------

    def start(self, topics_port: int = 0, services_port: int = 0) -> FakeProjectAirSim:
        self.topics_port = _listen(self._topics, topics_port)
        self.services_port = _listen(self._services, services_port)
        self._running = True
        for target in (self._serve_services, self._serve_topics, self._send_outbox):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        self._running = False
        with self._outbox_ready:
            self._outbox_ready.notify_all()
        for thread in self._threads:
            thread.join()
        self._services.close()
        self._topics.close()

    def __enter__(self) -> FakeProjectAirSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def stop_answering(self) -> None:
        """Receive requests but never reply: a hung server."""
        self._answering.clear()

    def drop_requests(self, count: int) -> None:
        """Leave the next ``count`` requests unanswered, then answer again."""
        self._drop_next = count

    def resume_answering(self) -> None:
        self._answering.set()

    @property
    def sim_time_ns(self) -> int:
        return self._time_ns

    @property
    def open_pipes(self) -> int:
        """Client connections (NNG pipes) open on either socket."""
        return len(self._pipes)

    def robot_position(self, name: str) -> tuple[float, float, float]:
        """Where the kinematics (``GetGroundTruthPose``) place robot ``name``."""
        return self._robots[name].position

    def rendered_position(self, name: str) -> tuple[float, float, float]:
        """Where the Unreal actor of robot ``name`` is (what its cameras show)."""
        return self._robots[name].rendered_position

    def cameras(self, robot: str) -> list[_Camera]:
        return self._robots[robot].cameras

    # -- services ------------------------------------------------------------------------

    def _serve_services(self) -> None:
        while self._running:
            try:
                raw = self._services.recv()
            except pynng.Timeout:
                continue
            except pynng.Closed:
                return
            request = msgpack.unpackb(raw, raw=False)
            method = _text(request["method"])
            self.requests.append(method)
            if not self._answering.is_set() or self._drop_next > 0:
                self._drop_next = max(self._drop_next - 1, 0)
                continue  # NNG's Rep socket forgets a request it never answers
            params = msgpack.unpackb(request["params"]["data"], raw=False)
            try:
                reply = {
                    "id": request["id"],
                    "result": {
                        "data": msgpack.packb(self._handle(method, params), use_bin_type=True)
                    },
                    "version": 1.0,
                }
            except _ServiceError as error:
                failure = {"code": float(error.code), "message": str(error)}
                reply = {
                    "id": request["id"],
                    "error": {"data": msgpack.packb(failure)},
                    "version": 1.0,
                }
            self._services.send(msgpack.packb(reply, use_bin_type=True))

    def _handle(self, method: str, params: dict[str, Any]) -> Any:
        if method == "/Sim/LoadScene":
            # simserver.cpp SimReloadSceneWithJSON: stops, unloads and loads; takes long.
            time.sleep(self.load_delay_s)
        with self._lock:
            if method == "/Sim/LoadScene":
                return self._load_scene(json.loads(_param(method, params, "scene_config")))
            scene = f"/Sim/{self._scene_id}/"
            if method.startswith(scene):
                name = method[len(scene) :]
                if name.startswith("robots/"):
                    _, robot, call = name.split("/", 2)
                    if robot in self._robots:
                        result = self._robot_call(self._robots[robot], call, params)
                        if result is not None:
                            return result
                else:
                    result = self._scene_call(name, params)
                    if result is not None:
                        return result
            raise _ServiceError(
                NOT_SUPPORTED,
                f"Requested ServiceMethod {method} is not supported by Request-Response Service",
            )

    def _scene_call(self, name: str, params: dict[str, Any]) -> Any:
        if name == "ImportNEDTrajectory":
            return True
        if name == "GetSimClockType":
            return "steppable"
        if name == "GetSimTime":
            return self._time_ns
        if name == "IsPaused":
            return True
        if name == "Pause":
            return "paused" if _param(name, params, "do_pause") else "resumed"
        if name == "ContinueForSimTime":
            self._advance(int(_param(name, params, "delta_time")))
            return self._time_ns
        if name == "ListObjects":
            pattern = re.compile(str(_param(name, params, "name")))
            return sorted(n for n in self.level_objects if pattern.fullmatch(n))
        if name == "GetObjectPose":
            return self._object_pose(str(_param(name, params, "object_name")))
        if name == "GetObjectPoses":
            return [self._object_pose(str(n)) for n in _param(name, params, "object_names")]
        return None

    def _object_pose(self, object_name: str) -> dict[str, Any]:
        """WorldSimApi::getObjectPose: the actor's NED pose, NaN translation if absent."""
        x, y, z = self.level_objects.get(object_name, (math.nan, math.nan, math.nan))
        return {
            "frame_id": "DEFAULT_ID",
            "translation": {"x": x, "y": y, "z": z},
            "rotation": {"w": 1.0, "x": 0.0, "y": 0.0, "z": 0.0},
        }

    def _robot_call(self, robot: _Robot, call: str, params: dict[str, Any]) -> Any:
        if call == "SetPose":
            # robot.cpp SetPose: the kinematics take the pose now; UnrealRobot moves the actor
            # at its next tick (SetRobotKinematics -> MoveRobotToUnrealPose).
            pose = _param(call, params, "pose")
            _param(call, params, "reset_kinematics")
            t, q = pose["translation"], pose["rotation"]
            robot.position = (float(t["x"]), float(t["y"]), float(t["z"]))
            robot.rotation = (float(q["w"]), float(q["x"]), float(q["y"]), float(q["z"]))
            robot.pose_pending = True
            return True
        if call == "GetGroundTruthPose":
            (x, y, z), (w, qx, qy, qz) = robot.position, robot.rotation
            return {
                "frame_id": "DEFAULT_ID",
                "translation": {"x": x, "y": y, "z": z},
                "rotation": {"w": w, "x": qx, "y": qy, "z": qz},
            }
        return None

    # -- scene and clock -----------------------------------------------------------------

    def _load_scene(self, config: dict[str, Any]) -> str:
        self.loads += 1
        clock = config.get("clock", {})
        if clock.get("type") != "steppable" or not clock.get("pause-on-start", False):
            raise _ServiceError(
                HANDLER_ERROR, "the fake only runs a steppable clock paused on start"
            )
        self._scene_id = config["id"]
        self._step_ns = int(clock.get("step-ns", DEFAULT_STEP_NS))
        self._time_ns = 0
        self._robots = {}
        # The old scene's topic blocks go, with their subscribers; the new ones have none.
        self._subscribers = defaultdict(list, {TOPIC_LIST: self._subscribers[TOPIC_LIST]})
        self._registered = {TOPIC_LIST}
        infos = [
            {"path": TOPIC_LIST, "type": "published", "message_type": "topic-list", "frequency": 0}
        ]
        self._last_value = {}
        for actor in config["actors"]:
            position, rotation = _origin(actor["origin"])
            robot_config = actor["robot-config"]
            robot = _Robot(
                actor["name"],
                position,
                rotation,
                position,
                rotation,
                sweeps=_root_link_collides(robot_config),
            )
            for sensor in robot_config.get("sensors", []):
                if sensor["type"] != "camera" or not sensor.get("enabled", True):
                    continue
                captures = [c for c in sensor["capture-settings"] if c["capture-enabled"]]
                robot.cameras.append(
                    _Camera(
                        sensor_id=sensor["id"],
                        width=int(captures[0]["width"]),
                        height=int(captures[0]["height"]),
                        fov_deg=float(captures[0].get("fov-degrees", 90.0)),
                        mount_xyz=_xyz(sensor["origin"]),
                        mount_rpy_deg=_rpy_deg(sensor["origin"]),
                        interval_s=float(sensor["capture-interval"]),
                        image_types=[int(c["image-type"]) for c in captures],
                    )
                )
            self._robots[robot.name] = robot
            for path, message_type in self._robot_topics(robot):
                self._registered.add(path)
                infos.append(
                    {
                        "path": path,
                        "type": "published",
                        "message_type": message_type,
                        "frequency": 0,
                    }
                )
            self._publish_camera_infos(robot)
        self._last_value[TOPIC_LIST] = msgpack.packb(infos)
        return self._scene_id

    def _robot_topics(self, robot: _Robot) -> list[tuple[str, str]]:
        base = f"/Sim/{self._scene_id}/robots/{robot.name}"
        paths = [(f"{base}/actual_pose", "pose"), (f"{base}/collision_info", "collision_info")]
        for camera in robot.cameras:
            for image_type in camera.image_types:
                topic = f"{base}/sensors/{camera.sensor_id}/{CAPTURE_TOPICS[image_type]}"
                paths += [(topic, "image"), (f"{topic}_info", "camera_info")]
        return paths

    def _publish_camera_infos(self, robot: _Robot) -> None:
        """camera.cpp: one camera_info per capture-enabled image type, published at load."""
        base = f"/Sim/{self._scene_id}/robots/{robot.name}/sensors"
        for camera in robot.cameras:
            focal = camera.width / 2.0 / math.tan(math.radians(camera.fov_deg) / 2.0)
            info = {
                "width": camera.width,
                "height": camera.height,
                "distortion_model": "",
                "distortion_params": [0.0] * 5,
                "intrinsic_camera_matrix": [
                    focal,
                    0.0,
                    camera.width / 2.0,
                    0.0,
                    focal,
                    camera.height / 2.0,
                    0.0,
                    0.0,
                    1.0,
                ],
                "rectification_matrix": [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
                "projection_matrix": [1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0],
            }
            for image_type in camera.image_types:
                topic = f"{base}/{camera.sensor_id}/{CAPTURE_TOPICS[image_type]}_info"
                self._publish(topic, info, delay_s=0.0)

    def _advance(self, delta_ns: int) -> None:
        """Run the clock for ``delta_ns`` in whole steps, with Unreal frames along the way."""
        start = self._time_ns
        end = start
        while end < start + max(delta_ns, 0):
            end += self._step_ns
        # The first frame after a resume only unpauses Unreal; robots tick from the next one.
        tick = start + self._frame_ns() + self._frame_ns()
        while tick < end:
            self._robot_tick(tick)
            tick += self._frame_ns()
        if end > start:
            self._robot_tick(end)  # the frame that sees the clock stopped, then Unreal pauses
        self._time_ns = end

    def _frame_ns(self) -> int:
        """One Unreal frame in sim time, seen on the clock: a whole number of steps."""
        low, high = self.render_frame_s
        seconds = self._rng.uniform(low, high)
        return max(1, math.ceil(seconds * 1e9 / self._step_ns)) * self._step_ns

    def _robot_tick(self, time_ns: int) -> None:
        for robot in self._robots.values():
            if robot.pose_pending:
                self._move_rendered(robot, time_ns)
        for robot in self._robots.values():
            for index, camera in enumerate(robot.cameras):
                elapsed_s = (time_ns - camera.captured_ns) / 1e9
                wanted = [t for t in camera.image_types if self._wants(robot, camera, t)]
                if elapsed_s > camera.interval_s and wanted:
                    camera.captured_ns = time_ns
                    self._capture(robot, index, wanted, time_ns)

    def _wants(self, robot: _Robot, camera: _Camera, image_type: int) -> bool:
        base = f"/Sim/{self._scene_id}/robots/{robot.name}/sensors/{camera.sensor_id}"
        return bool(self._subscribers.get(f"{base}/{CAPTURE_TOPICS[image_type]}"))

    def _move_rendered(self, robot: _Robot, time_ns: int) -> None:
        robot.pose_pending = False
        target = robot.position
        hit = self._sweep(robot.rendered_position, target) if robot.sweeps else None
        robot.rendered_rotation = robot.rotation
        if hit is None:
            robot.rendered_position = target
            return
        box, contact = hit
        robot.rendered_position = contact
        vector = dict(zip("xyz", contact, strict=True))
        self._publish(
            f"/Sim/{self._scene_id}/robots/{robot.name}/collision_info",
            {
                "has_collided": True,
                "time_stamp": time_ns,
                "object_name": box.name,
                "segmentation_id": 1,
                "position": vector,
                "impact_point": vector,
                "normal": {"x": 0.0, "y": 0.0, "z": 0.0},
                "penetration_depth": 0.0,
            },
            delay_s=0.0,
        )

    def _capture(self, robot: _Robot, index: int, image_types: list[int], time_ns: int) -> None:
        camera = robot.cameras[index]
        base = f"/Sim/{self._scene_id}/robots/{robot.name}/sensors/{camera.sensor_id}"
        shape = (camera.height, camera.width)
        position = tuple(
            p + o for p, o in zip(robot.rendered_position, self.render_offset_ned, strict=True)
        )
        rotation = robot.rendered_rotation
        # UnrealTransform::GetPoseNed of the camera component: the robot's pose and the mount.
        mount = quaternion_of_rpy(*(math.radians(a) for a in camera.mount_rpy_deg))
        camera_position = tuple(
            p + m for p, m in zip(position, rotate(rotation, camera.mount_xyz), strict=True)
        )
        camera_rotation = quaternion_multiply(rotation, mount)
        pose = dict(zip(("pos_x", "pos_y", "pos_z"), camera_position, strict=True))
        pose.update(zip(("rot_w", "rot_x", "rot_y", "rot_z"), camera_rotation, strict=True))
        common = {
            "time_stamp": time_ns,
            "height": shape[0],
            "width": shape[1],
            "big_endian": False,
            "step": 1,
            "annotations": [],
            **pose,
        }
        if 0 in image_types:
            colour = (
                (0, 0, 0) if self.black_frames else expected_rgb(position, yaw_of(rotation), index)
            )
            rgb = (
                textured(colour, *shape)
                if not self.black_frames
                else np.zeros((*shape, 3), np.uint8)
            )
            message = {
                **common,
                "encoding": "BGR",
                "data": rgb[:, :, ::-1].tobytes(),
                "data_float": [],
            }
            self._publish(f"{base}/scene_camera", message, self.publish_delay_s, pack_image_message)
        if 1 in image_types:
            depth = expected_depth(position, camera.pitch_deg) * self.depth_scale
            floats = np.full(shape[0] * shape[1], depth, dtype=np.float32)
            message = {**common, "encoding": "32FC1", "data": b"", "data_float": floats}
            self._publish(
                f"{base}/depth_planar_camera", message, self.publish_delay_s, pack_image_message
            )

    def _sweep(
        self, start: tuple[float, float, float], end: tuple[float, float, float]
    ) -> tuple[Box, tuple[float, float, float]] | None:
        free = start
        for i in range(1, 101):
            point = tuple(a + (b - a) * i / 100.0 for a, b in zip(start, end, strict=True))
            for box in self.obstacles:
                if box.contains(point):  # type: ignore[arg-type]
                    return box, free
            free = point  # type: ignore[assignment]
        return None

    # -- topics --------------------------------------------------------------------------

    def _serve_topics(self) -> None:
        while self._running:
            try:
                received = self._topics.recv_msg()
            except pynng.Timeout:
                continue
            except pynng.Closed:
                return
            frame = msgpack.unpackb(received.bytes, raw=False)
            kind, topic, pipe = frame[0], _text(frame[1]), received.pipe
            with self._lock:
                if kind == FRAME_UNSUBSCRIBE_ALL:
                    self._unsubscribe_pipe(pipe)
                elif topic not in self._last_value and topic not in self._registered:
                    continue  # RecvLoop: a frame for an unregistered topic is dropped
                elif kind == FRAME_SUBSCRIBE:
                    self._subscribers[topic].append(pipe)
                    if topic in self._last_value:
                        self._queue(topic, self._last_value[topic], 0.0, pipe)
                elif kind == FRAME_UNSUBSCRIBE:
                    pipes = self._subscribers.get(topic, [])
                    if pipe in pipes:
                        pipes.remove(pipe)

    def _unsubscribe_pipe(self, pipe: Any) -> None:
        for pipes in self._subscribers.values():
            while pipe in pipes:
                pipes.remove(pipe)

    def _publish(
        self,
        topic: str,
        message: dict[str, Any],
        delay_s: float,
        pack: Any = None,
    ) -> None:
        body = pack(message) if pack is not None else msgpack.packb(message, use_bin_type=True)
        self._last_value[topic] = body
        for pipe in self._subscribers.get(topic, []):
            self._queue(topic, body, delay_s, pipe)

    def _queue(self, topic: str, body: bytes, delay_s: float, pipe: Any) -> None:
        with self._outbox_ready:
            heapq.heappush(
                self._outbox, (time.monotonic() + delay_s, next(self._order), topic, body, pipe)
            )
            self._outbox_ready.notify_all()

    def _send_outbox(self) -> None:
        while self._running:
            with self._outbox_ready:
                while self._running and (not self._outbox or self._outbox[0][0] > time.monotonic()):
                    wait = self._outbox[0][0] - time.monotonic() if self._outbox else None
                    self._outbox_ready.wait(wait)
                if not self._running:
                    return
                _, _, topic, body, pipe = heapq.heappop(self._outbox)
            # core_sim packs the frame with msgpack-c: topic and body as str, not bin.
            frame = msgpack.packb([FRAME_MESSAGE, topic, body], use_bin_type=False)
            try:
                # nng_msg_set_pipe: a polyamorous socket sends to that pipe alone, and
                # discards the message when the pipe's short queue is full (NNG's pair1
                # polyamorous mode), as the server's does.
                pipe.send(frame) if self._polyamorous else self._topics.send(frame)
            except pynng.Closed:
                continue  # that client went away
            except pynng.NNGException:
                return


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _param(method: str, params: dict[str, Any], name: str) -> Any:
    if name not in params:
        raise _ServiceError(
            MISSING_PARAMETER,
            f"Required parameter '{name}' not provided when calling:{method}. "
            f"Provided parameters:{json.dumps(params, default=str)}",
        )
    return params[name]


def _listen(socket: pynng.Socket, port: int) -> int:
    listener = socket.listen(f"tcp://127.0.0.1:{port}")
    # pynng's SockAddr.port is in network byte order; the text form is not.
    return int(str(listener.local_address).rsplit(":", 1)[1])


def _root_link_collides(robot_config: dict[str, Any]) -> bool:
    """Link collision of the robot's root link (the link no joint names as its child)."""
    children = {joint.get("child-link") for joint in robot_config.get("joints", [])}
    roots = [link for link in robot_config.get("links", []) if link["name"] not in children]
    if not roots:
        return True
    return bool(int(roots[0].get("collision", {}).get("enabled", 1)))


def _centre(box: Box) -> tuple[float, float, float]:
    return tuple((lo + hi) / 2.0 for lo, hi in zip(box.low, box.high, strict=True))  # type: ignore[return-value]


def _xyz(origin: dict[str, str]) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in origin.get("xyz", "0 0 0").split())
    return x, y, z


def _origin(
    origin: dict[str, str],
) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
    x, y, z = (float(v) for v in origin["xyz"].split())
    yaw = math.radians(_rpy_deg(origin)[2])
    return (x, y, z), (math.cos(yaw / 2.0), 0.0, 0.0, math.sin(yaw / 2.0))


def _rpy_deg(origin: dict[str, str]) -> tuple[float, float, float]:
    if "rpy-deg" in origin:
        r, p, y = (float(v) for v in origin["rpy-deg"].split())
        return r, p, y
    r, p, y = (math.degrees(float(v)) for v in origin.get("rpy", "0 0 0").split())
    return r, p, y


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--obstacle",
        action="append",
        default=[],
        help="name,n0,e0,d0,n1,e1,d1: an obstacle box (NED)",
    )
    parser.add_argument("--load-delay", type=float, default=0.0, help="seconds a LoadScene takes")
    parser.add_argument("--topics-protocol", choices=TOPIC_PROTOCOLS, default="pair1")
    parser.add_argument("--depth-scale", type=float, default=1.0, help="depth units per metre")
    parser.add_argument("--black-frames", action="store_true", help="render nothing")
    parser.add_argument(
        "--render-offset", default="0,0,0", help="n,e,d: frames rendered this far off the robot"
    )
    parser.add_argument(
        "--level-object", action="append", default=[], help="name,n,e,d: an object of the level"
    )
    args = parser.parse_args()
    boxes = []
    for text in args.obstacle:
        name, *numbers = text.split(",")
        values = [float(v) for v in numbers]
        boxes.append(Box(name, tuple(values[:3]), tuple(values[3:])))  # type: ignore[arg-type]
    objects = {}
    for text in args.level_object:
        name, *numbers = text.split(",")
        objects[name] = tuple(float(v) for v in numbers)
    with FakeProjectAirSim(
        tuple(boxes),
        level_objects=objects,  # type: ignore[arg-type]
        topics_protocol=args.topics_protocol,
        load_delay_s=args.load_delay,
        depth_scale=args.depth_scale,
        black_frames=args.black_frames,
        render_offset_ned=tuple(float(v) for v in args.render_offset.split(",")),  # type: ignore[arg-type]
    ) as fake:
        print(json.dumps({"topics": fake.topics_port, "services": fake.services_port}), flush=True)
        for line in sys.stdin:  # until the parent closes our stdin
            command, _, argument = line.strip().partition(" ")
            if command == "drop":
                fake.drop_requests(int(argument))
            elif command == "hang":
                fake.stop_answering()
            elif command == "answer":
                fake.resume_answering()
            print("ok", flush=True)  # the command is in force


if __name__ == "__main__":
    main()
