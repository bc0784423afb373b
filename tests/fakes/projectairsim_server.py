"""A fake ProjectAirSim server speaking the real NNG protocol to the unmodified client.

Wire format (ProjectAirSim core_sim: service_manager, topic_manager, message/*.cpp):
- services: NNG Req/Rep (port 8990 by default). A request is a msgpack map
  ``{"id", "method", "params": {"data": <msgpack of the params>}, "version"}``; a reply is
  ``{"id", "result": {"data": <msgpack of the result>}, "version"}`` or
  ``{"id", "error": {"data": <msgpack of {"code", "message"}>}, "version"}``.
- topics: NNG Pair (port 8989 by default). Frames are msgpack arrays
  ``[type, topic_path, body]`` (0 subscribe, 1 unsubscribe, 2 message) whose body is a packed
  message; subscribing to a topic sends its last published value at once. ``/$topics`` holds
  the list of topic infos ``{"path", "type", "message_type", "frequency"}``.

What it simulates: a steppable clock that only moves on ContinueForSimTime, robots placed by
SetPose (a non-physics drone), cameras that capture scene (BGR) and planar depth (16FC1) every
capture interval of simulated time, and collision_info when a SetPose moved a robot through an
obstacle box. Images are flat colours computed from the robot's pose (``expected_rgb``), so a
test can tell which pose a frame shows. What it does not simulate: rendering, physics, and
whether a real server reports collisions of teleports the same way.

Run as a script, it binds free ports on 127.0.0.1, prints ``{"topics": p, "services": q}``
as one JSON line, and reads commands from stdin: ``drop N`` leaves the next N requests
unanswered, ``hang`` stops answering, ``answer`` answers again, each acknowledged with a line
``ok``. It stops when stdin closes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import threading
from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np
import pynng

FRAME_SUBSCRIBE, FRAME_UNSUBSCRIBE, FRAME_MESSAGE = 0, 1, 2
TOPIC_LIST = "/$topics"
CAPTURE_TOPICS = {0: "scene_camera", 1: "depth_planar_camera"}
#: Depth every camera sees that does not look straight down, metres.
HORIZON_DEPTH_M = 100.0


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
    pitch_deg: float
    interval_ns: int
    image_types: list[int]


@dataclass
class _Robot:
    name: str
    position: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rotation: tuple[float, float, float, float] = (1.0, 0.0, 0.0, 0.0)  # w, x, y, z
    cameras: list[_Camera] = field(default_factory=list)
    pending_collision: dict[str, Any] | None = None


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


class FakeProjectAirSim:
    """The fake server; ``start()`` binds, ``close()`` stops every thread and socket.

    Args:
        obstacles: boxes that a SetPose must not move a robot through.
    """

    def __init__(self, obstacles: tuple[Box, ...] = ()) -> None:
        self.obstacles = obstacles
        self.requests: list[str] = []
        self.topics_port = 0
        self.services_port = 0
        self._answering = threading.Event()
        self._answering.set()
        self._drop_next = 0
        self._lock = threading.Lock()
        self._running = False
        self._services = pynng.Rep0(recv_timeout=100)
        self._topics = pynng.Pair0(recv_timeout=100, send_timeout=1000)
        self._threads: list[threading.Thread] = []
        # A server starts with a default scene loaded; World() talks to it before any load.
        self._scene_id = "SceneBasicDrone"
        self._time_ns = 0
        self._robots: dict[str, _Robot] = {}
        self._last_value: dict[str, bytes] = {TOPIC_LIST: msgpack.packb([])}
        self._subscribed: set[str] = set()

    # -- life cycle ----------------------------------------------------------------------

    def start(self, topics_port: int = 0, services_port: int = 0) -> FakeProjectAirSim:
        self.topics_port = _listen(self._topics, topics_port)
        self.services_port = _listen(self._services, services_port)
        self._running = True
        for target in (self._serve_services, self._serve_topics):
            thread = threading.Thread(target=target, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def close(self) -> None:
        self._running = False
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

    def robot_position(self, name: str) -> tuple[float, float, float]:
        return self._robots[name].position

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
            except KeyError as error:
                failure = {"code": -32601, "message": f"{method}: {error}"}
                reply = {
                    "id": request["id"],
                    "error": {"data": msgpack.packb(failure)},
                    "version": 1.0,
                }
            self._services.send(msgpack.packb(reply, use_bin_type=True))

    def _handle(self, method: str, params: dict[str, Any]) -> Any:
        with self._lock:
            if method == "/Sim/LoadScene":
                return self._load_scene(json.loads(params["scene_config"]))
            if method == "/Sim/GetBuildCommitHash":
                return "fake-projectairsim"
            if method == "/Sim/Unsubscribe":
                self._subscribed.difference_update(params["topic_paths"])
                return True
            scene = f"/Sim/{self._scene_id}/"
            if not method.startswith(scene):
                raise KeyError("method not found")
            name = method[len(scene) :]
            if name.startswith("robots/"):
                _, robot, call = name.split("/", 2)
                return self._robot_call(self._robots[robot], call, params)
            return self._scene_call(name, params)

    def _scene_call(self, name: str, params: dict[str, Any]) -> Any:
        if name == "ImportNEDTrajectory":
            return True
        if name == "GetSimClockType":
            return "steppable"
        if name == "GetSimTime":
            return self._time_ns
        if name in ("Pause", "IsPaused"):
            return True if name == "IsPaused" else "paused"
        if name == "ContinueForSimTime":
            self._advance(int(params["delta_time"]))
            return self._time_ns
        raise KeyError("method not found")

    def _robot_call(self, robot: _Robot, call: str, params: dict[str, Any]) -> Any:
        if call == "SetPose":
            pose = params["pose"]
            t, q = pose["translation"], pose["rotation"]
            target = (float(t["x"]), float(t["y"]), float(t["z"]))
            robot.pending_collision = self._sweep(robot.position, target)
            robot.position = target
            robot.rotation = (float(q["w"]), float(q["x"]), float(q["y"]), float(q["z"]))
            return True
        if call == "GetGroundTruthPose":
            (x, y, z), (w, qx, qy, qz) = robot.position, robot.rotation
            return {
                "frame_id": "DEFAULT_ID",
                "translation": {"x": x, "y": y, "z": z},
                "rotation": {"w": w, "x": qx, "y": qy, "z": qz},
            }
        raise KeyError("method not found")

    # -- scene and clock -----------------------------------------------------------------

    def _load_scene(self, config: dict[str, Any]) -> str:
        if config["clock"]["type"] != "steppable":
            raise KeyError("the fake only runs a steppable clock")
        self._scene_id = config["id"]
        self._time_ns = 0
        self._robots = {}
        infos = [
            {"path": TOPIC_LIST, "type": "published", "message_type": "topic-list", "frequency": 0}
        ]
        for actor in config["actors"]:
            robot = _Robot(actor["name"], *_origin(actor["origin"]))
            for sensor in actor["robot-config"].get("sensors", []):
                if sensor["type"] != "camera" or not sensor.get("enabled", True):
                    continue
                captures = [c for c in sensor["capture-settings"] if c["capture-enabled"]]
                robot.cameras.append(
                    _Camera(
                        sensor_id=sensor["id"],
                        width=int(captures[0]["width"]),
                        height=int(captures[0]["height"]),
                        pitch_deg=_rpy_deg(sensor["origin"])[1],
                        interval_ns=round(float(sensor["capture-interval"]) * 1e9),
                        image_types=[int(c["image-type"]) for c in captures],
                    )
                )
            self._robots[robot.name] = robot
            for path in self._robot_topics(robot):
                infos.append(
                    {"path": path, "type": "published", "message_type": "image", "frequency": 15}
                )
        self._last_value = {TOPIC_LIST: msgpack.packb(infos)}
        return self._scene_id

    def _robot_topics(self, robot: _Robot) -> list[str]:
        base = f"/Sim/{self._scene_id}/robots/{robot.name}"
        paths = [f"{base}/actual_pose", f"{base}/collision_info"]
        for camera in robot.cameras:
            paths += [
                f"{base}/sensors/{camera.sensor_id}/{CAPTURE_TOPICS[t]}" for t in camera.image_types
            ]
        return paths

    def _advance(self, delta_ns: int) -> None:
        start, end = self._time_ns, self._time_ns + delta_ns
        for robot in self._robots.values():
            if robot.pending_collision is not None:
                robot.pending_collision["time_stamp"] = start + 1_000_000
                self._publish(
                    f"/Sim/{self._scene_id}/robots/{robot.name}/collision_info",
                    robot.pending_collision,
                )
                robot.pending_collision = None
        # Every capture instant in (start, end], in time order across all cameras.
        captures = sorted(
            (k * camera.interval_ns, index, robot.name)
            for robot in self._robots.values()
            for index, camera in enumerate(robot.cameras)
            for k in range(start // camera.interval_ns + 1, end // camera.interval_ns + 1)
        )
        for time_ns, index, name in captures:
            self._capture(self._robots[name], index, time_ns)
        self._time_ns = end

    def _capture(self, robot: _Robot, index: int, time_ns: int) -> None:
        camera = robot.cameras[index]
        base = f"/Sim/{self._scene_id}/robots/{robot.name}/sensors/{camera.sensor_id}"
        shape = (camera.height, camera.width)
        pose = dict(zip(("pos_x", "pos_y", "pos_z"), robot.position, strict=True))
        pose.update(zip(("rot_w", "rot_x", "rot_y", "rot_z"), robot.rotation, strict=True))
        common = {
            "time_stamp": time_ns,
            "height": shape[0],
            "width": shape[1],
            "big_endian": False,
            "annotations": [],
            "data_float": [],
            **pose,
        }
        if 0 in camera.image_types:
            rgb = np.empty((*shape, 3), dtype=np.uint8)
            rgb[:] = expected_rgb(robot.position, yaw_of(robot.rotation), index)
            self._publish(
                f"{base}/scene_camera",
                {
                    **common,
                    "encoding": "BGR",
                    "step": shape[1] * 3,
                    "data": rgb[:, :, ::-1].tobytes(),
                },
            )
        if 1 in camera.image_types:
            depth = np.full(shape, expected_depth(robot.position, camera.pitch_deg), "<f2")
            self._publish(
                f"{base}/depth_planar_camera",
                {**common, "encoding": "16FC1", "step": shape[1] * 2, "data": depth.tobytes()},
            )

    def _sweep(
        self, start: tuple[float, float, float], end: tuple[float, float, float]
    ) -> dict[str, Any] | None:
        free = start
        for i in range(1, 101):
            point = tuple(a + (b - a) * i / 100.0 for a, b in zip(start, end, strict=True))
            for box in self.obstacles:
                if box.contains(point):  # type: ignore[arg-type]
                    vector = dict(zip("xyz", free, strict=True))
                    return {
                        "time_stamp": 0,
                        "object_name": box.name,
                        "segmentation_id": 1,
                        "position": vector,
                        "impact_point": vector,
                        "normal": {"x": 0.0, "y": 0.0, "z": 0.0},
                        "penetration_depth": 0.0,
                    }
            free = point  # type: ignore[assignment]
        return None

    # -- topics --------------------------------------------------------------------------

    def _serve_topics(self) -> None:
        while self._running:
            try:
                frame = msgpack.unpackb(self._topics.recv(), raw=False)
            except pynng.Timeout:
                continue
            except pynng.Closed:
                return
            kind, topic = frame[0], _text(frame[1])
            with self._lock:
                if kind == FRAME_SUBSCRIBE:
                    self._subscribed.add(topic)
                    if topic in self._last_value:
                        self._send(topic, self._last_value[topic])
                elif kind == FRAME_UNSUBSCRIBE:
                    self._subscribed.discard(topic)

    def _publish(self, topic: str, message: dict[str, Any]) -> None:
        body = msgpack.packb(message, use_bin_type=True)
        self._last_value[topic] = body
        if topic in self._subscribed:
            self._send(topic, body)

    def _send(self, topic: str, body: bytes) -> None:
        # core_sim packs the frame with msgpack-c: topic and body as str, not bin.
        self._topics.send(msgpack.packb([FRAME_MESSAGE, topic, body], use_bin_type=False))


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _listen(socket: pynng.Socket, port: int) -> int:
    listener = socket.listen(f"tcp://127.0.0.1:{port}")
    # pynng's SockAddr.port is in network byte order; the text form is not.
    return int(str(listener.local_address).rsplit(":", 1)[1])


def _origin(origin: dict[str, str]) -> tuple[tuple[float, float, float], tuple[float, ...]]:
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
    args = parser.parse_args()
    boxes = []
    for text in args.obstacle:
        name, *numbers = text.split(",")
        values = [float(v) for v in numbers]
        boxes.append(Box(name, tuple(values[:3]), tuple(values[3:])))  # type: ignore[arg-type]
    with FakeProjectAirSim(tuple(boxes)) as fake:
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
