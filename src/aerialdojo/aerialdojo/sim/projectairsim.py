"""``ProjectAirSimBackend``: AerialDojo's own simulator, ProjectAirSim, through its Python client.

Serves one server generation: the public server, ``iamaisim/ProjectAirSim`` 06dff61. Needs the
``projectairsim`` client package, which lives in its own venv (``.venv-projectairsim``,
tools/bootstrap_backend.sh) because it needs msgpack 1.x: the server's own client (version
2023.9.15, installed from its source) or PyPI's ``projectairsim==1.1.0``. Either way the
topic transport is this module's, written to the public server (``remote/projectairsim_wire``):
pair1 topics, the unsubscribe frames, no build-hash probe, images decoded once when used.
PyPI's 1.1.0 alone opens pair0 topics, calls ``/Sim/Unsubscribe`` and probes
``/Sim/GetBuildCommitHash``, none of which the public server serves.

How the benchmark's embodiment maps onto ProjectAirSim (server files named are in
``iamaisim/ProjectAirSim``; docs/simulators.md has the details):
- scenes are ProjectAirSim scene configs ``scene_<name>.jsonc`` (and the robot configs they
  name) in one directory; each agent is the robot actor of the same name (``uav``);
- on load the backend makes the clock steppable and paused, the robot non-physics with link
  collision on (a non-physics SetPose sweeps only then, ``UnrealRobot.cpp``), and gives it the
  rig's cameras, each capturing scene and planar depth every ``capture_interval_s`` of
  simulated time (1/15 s: 15 FPS, AerialDojo-200K, section 3.1);
- a discrete action is a ``SetPose`` of the non-physics drone followed by ``seconds_per_action``
  of simulated time. Unreal moves the drone at its next frame as a sweep that stops at the
  first hit and publishes ``collision_info``; the ground-truth pose still says the commanded
  one, so after a hit the backend sets the pose to the contact;
- observations are the newest frames of every view captured after the last pose change.
  Cameras capture on Unreal frames when more than one interval passed since the last capture
  (``UnrealCamera.cpp``), so an action may end without a fresh capture: the backend then runs
  the clock one interval further until one arrives. Their stamp is the capture time the server
  wrote into them.
- a reset whose sweep from the previous pose hits something reloads the scene with the robot
  spawned at the start pose, since a blocked reset renders from the wall while reporting the
  start.
"""

from __future__ import annotations

import json
import logging
import math
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from importlib.metadata import version
from pathlib import Path
from typing import Any, TypeVar

import commentjson
import jsonschema
import msgpack
import pynng
from projectairsim import Drone, ProjectAirSimClient, World
from projectairsim.types import ProjectAirSimTopic
from projectairsim.utils import merge_dicts

from aerialdojo.actions import STOP, Action, target_pose
from aerialdojo.errors import AerialDojoError, ConfigError, SimulatorFaultError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import (
    BackendOptions,
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
from aerialdojo.sim.remote.diagnostics import (
    CapturedPose,
    ServerCamera,
    WorldObject,
    captured_pose_of_ned,
)
from aerialdojo.sim.remote.frames import (
    map_to_ned,
    ned_to_map,
    yaw_of_quaternion_wxyz,
    yaw_quaternion_wxyz,
)
from aerialdojo.sim.remote.projectairsim_wire import (
    FRAME_MESSAGE,
    TOPIC_LIST,
    PackedImage,
    read_frame,
    subscribe_frame,
    unsubscribe_all_frame,
    unsubscribe_frame,
)
from aerialdojo.sim.remote.settings import ProjectAirSimSettings

T = TypeVar("T")

#: Client releases this backend was written and tested against: the public server's own
#: (client/python/projectairsim/setup.py at 06dff61) and PyPI's.
TESTED_CLIENT_VERSIONS = ("2023.9.15", "1.1.0")
#: What the server is: the generation of its topic protocol.
SERVER_GENERATION = "the public server's protocol (iamaisim/ProjectAirSim 06dff61: pair1 topics)"
#: How long the topic round trip at connection may take before it is a protocol mismatch.
TOPIC_CHECK_S = 5.0
PROTOCOL_FIX = (
    "run the public ProjectAirSim server (iamaisim/ProjectAirSim 06dff61, docs/simulators.md); "
    "a server of another generation (pair0 topics, as PyPI's projectairsim 1.1.0 expects) "
    "needs a client and a backend of its own"
)
SCENE_FILE_PREFIX = "scene_"
SCENE_FILE_SUFFIX = ".jsonc"
#: ProjectAirSim image types (``projectairsim.types.ImageType``) and their topic names.
SCENE_IMAGE, DEPTH_PLANAR_IMAGE = 0, 1
_TOPIC = {SCENE_IMAGE: "scene_camera", DEPTH_PLANAR_IMAGE: "depth_planar_camera"}
LOAD_SCENE = "/Sim/LoadScene"
#: Wall time to wait for a capture rendered at the clock's stop before running the clock on.
_RENDER_WAIT_S = 0.5

_log = logging.getLogger(__name__)
# The client logs to a file in the working directory unless its logger already has a handler.
logging.getLogger("projectairsim").addHandler(logging.NullHandler())


class _ServerTimeoutError(RuntimeError):
    """A service request got no reply within its timeout."""


class _Client(ProjectAirSimClient):  # type: ignore[misc]
    """The client's scene, robot and request code over the public server's topic transport.

    Requests keep the client's own framing (``preprocess_request`` /
    ``postprocess_response``, the same in the server's own client and in PyPI's 1.1.0), but
    wait per request kind (a scene load, a clock run, anything else) and raise on a timeout:
    ``ProjectAirSimClient.request`` waits 300 s and then disconnects, which unsubscribes with
    another request that times out in turn. The topic socket, its frames and its receive
    thread are this class's (``remote/projectairsim_wire``): pair1, as the public server and
    its own client use; subscriptions ended by frames; image messages handed on packed, to be
    decoded once when used. A frame no peer takes within a second is an error here, not five
    logged retries.
    """

    def __init__(self, settings: ProjectAirSimSettings) -> None:
        super().__init__(settings.host, settings.topics_port, settings.services_port)
        self._settings = settings
        #: Topics whose messages the callbacks get packed (image messages).
        self._packed: set[str] = set()

    def connect(self) -> None:
        """Dial both sockets and start the topic thread.

        Raises:
            pynng.NNGException: a socket cannot be dialled (the server is not there yet).
        """
        # client/python/projectairsim/src/projectairsim/client.py (06dff61): pynng.Pair1.
        self.socket_topics = pynng.Pair1(send_timeout=1000, recv_timeout=100)
        self.socket_services = pynng.Req0(send_timeout=1000, resend_time=-1)
        self.request_id = self.request_id_generator()
        host = self._settings.host
        self.socket_topics.dial(f"tcp://{host}:{self._settings.topics_port}", block=True)
        self.socket_services.dial(f"tcp://{host}:{self._settings.services_port}", block=True)
        self.state = True
        self.recv_topic_thread = threading.Thread(
            target=self._receive, name="projectairsim-topics", daemon=True
        )
        self.recv_topic_thread.start()

    def check_topics(self, endpoint: Endpoint) -> None:
        """A round trip on the topic socket: subscribe to the topic list, which the server
        answers with its last value at once (``topic_manager.cpp`` ``Subscribe``).

        Raises:
            ConfigError: no answer within ``TOPIC_CHECK_S``: the client/server protocol
                mismatch of a server of another generation, which NNG refuses silently.
        """
        answered = threading.Event()

        def on_topics(topic: Any, message: Any) -> None:
            self.on_topic_info(topic, message)
            answered.set()

        try:
            self.subscribe(TOPIC_LIST, on_topics)
            taken = True
        except _ServerTimeoutError:
            taken = False  # no peer took the frame within a second: the pipe was refused
        if not (taken and answered.wait(TOPIC_CHECK_S)):
            raise ConfigError(
                f"{endpoint} (topics on port {self._settings.topics_port}): "
                + (
                    f"no answer on the topic socket within {TOPIC_CHECK_S:g} s"
                    if taken
                    else "no peer on the topic socket took a frame within 1 s"
                )
                + " although both sockets connected: client/server protocol mismatch. "
                "This client speaks "
                f"{SERVER_GENERATION}; NNG refuses a peer of another protocol without an "
                f"error. Fix: {PROTOCOL_FIX}"
            )

    def subscribe(
        self, topic: str, callback: Callable[[Any, Any], None], reliability: float = 1.0
    ) -> None:
        del reliability  # every message is kept
        self.subs.setdefault(topic, {"reliability": 1.0, "callbacks": []})["callbacks"].append(
            callback
        )
        self.try_send(subscribe_frame(topic))

    def subscribe_packed(self, topic: str, callback: Callable[[Any, bytes], None]) -> None:
        """Subscribe to ``topic``, whose messages ``callback`` gets still packed."""
        self._packed.add(topic)
        self.subscribe(topic, callback)

    def try_send(self, msg: bytes, max_retries: int = 1) -> None:
        del max_retries  # one try: a frame no peer takes within send_timeout is an error
        try:
            self.socket_topics.send(msg)
        except pynng.Timeout as error:
            raise _ServerTimeoutError("no peer took a topic frame within 1 s") from error

    def unsubscribe(self, topics: str | list[str]) -> None:
        for topic in [topics] if isinstance(topics, str) else topics:
            self.try_send(unsubscribe_frame(topic))
            self.subs.pop(topic, None)
            self._packed.discard(topic)

    def unsubscribe_all(self) -> None:
        self.try_send(unsubscribe_all_frame())

    def _receive(self) -> None:
        """The topic thread: hand each message to its subscription's callbacks."""
        while self.state:
            try:
                raw = self.socket_topics.recv()
            except pynng.Timeout:
                continue
            except pynng.NNGException:
                return  # closed
            try:
                kind, topic, body = read_frame(raw)
                subscription = self.subs.get(topic)
                if kind != FRAME_MESSAGE or subscription is None:
                    continue
                message = body if topic in self._packed else msgpack.unpackb(body, raw=False)
                info = self.topics.get(topic) or ProjectAirSimTopic(topic, "", "", 0)
                for callback in list(subscription["callbacks"]):
                    callback(info, message)
            except (ValueError, TypeError, KeyError, msgpack.UnpackException, AerialDojoError):
                _log.warning("dropped a topic frame that could not be read", exc_info=True)

    def timeout_s(self, request_data: Mapping[str, Any]) -> float:
        """How long to wait for the reply to ``request_data``."""
        method = str(request_data.get("method", ""))
        if method == LOAD_SCENE:
            return self._settings.scene_load_timeout_s
        timeout_s = self._settings.policy.timeout_s
        if method.endswith("/ContinueForSimTime"):
            # The steppable clock runs at real-time speed unless the scene says otherwise.
            timeout_s += float(request_data["params"]["delta_time"]) / 1e9
        return timeout_s

    def request(self, request_data: dict[str, Any]) -> Any:
        self.socket_services.recv_timeout = round(self.timeout_s(request_data) * 1000.0)
        self.socket_services.send(self.preprocess_request(request_data))
        try:
            response = self.socket_services.recv_msg()
        except pynng.Timeout as error:
            raise _ServerTimeoutError(f"no reply to {request_data.get('method')}") from error
        return self.postprocess_response(response)

    def close_sockets(self) -> None:
        """Stop the topic thread and close both sockets, sending nothing."""
        self.state = False
        if self.recv_topic_thread is not None and self.recv_topic_thread.is_alive():
            self.recv_topic_thread.join()
        for socket in (self.socket_topics, self.socket_services):
            if socket is not None:
                socket.close()


@dataclass
class _Agent:
    """The robot of one agent in the loaded scene and what its topics delivered."""

    drone: Any
    rig: list[CameraSpec]
    pose_changed_ns: int = 0
    frames: dict[tuple[str, int], PackedImage] = field(default_factory=dict)
    infos: dict[tuple[str, int], dict[str, Any]] = field(default_factory=dict)
    collisions: list[dict[str, Any]] = field(default_factory=list)


class ProjectAirSimBackend(SimulatorBackend):
    """Runs the AerialDojo action set on a ProjectAirSim server.

    Args:
        settings: server address, scene directory, capture interval, timeouts.
        rigs: camera rig per agent name; each agent is the scene's robot of that name.
        seconds_per_action: simulated time one action takes (at least one capture interval).

    Raises:
        ConfigError: no scene directory or no scenes in it, a rig without cameras, or an
            action shorter than the capture interval.
    """

    #: What ``aerialdojo doctor`` says when a camera check fails.
    camera_fix = (
        "the bridge writes the cameras into the robot config it loads: check that the scene's "
        "robot actor is named like the agent and that the server build supports them"
    )

    @classmethod
    def from_options(cls, options: BackendOptions) -> ProjectAirSimBackend:
        return cls(
            settings=ProjectAirSimSettings.from_parameters(options.parameters),
            rigs=options.rigs(cls),
            seconds_per_action=options.seconds_per_action,
        )

    def __init__(
        self,
        *,
        settings: ProjectAirSimSettings,
        rigs: Mapping[str, Sequence[CameraSpec]],
        seconds_per_action: float,
    ) -> None:
        if seconds_per_action < settings.capture_interval_s:
            raise ConfigError(
                f"seconds_per_action={seconds_per_action} is shorter than capture_interval_s="
                f"{settings.capture_interval_s}: an action would end before its frames exist"
            )
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        self.settings = settings
        self._scene_dir = Path(settings.scene_dir)
        self._scenes = _scene_names(self._scene_dir)
        self.endpoint = Endpoint("ProjectAirSim", settings.host, settings.services_port)
        self.server_build = ""
        self._condition = threading.Condition()
        self._client: _Client | None = None
        self._world: Any = None
        self._scene = ""
        self._agents: dict[str, _Agent] = {}

    # -- connection ----------------------------------------------------------------------

    def connect(self) -> None:
        """Connect to the server unless connected (``reset`` does it too); sets
        ``server_build``.

        Raises:
            SimulatorFaultError: the server cannot be reached.
        """
        if self._client is None:
            self._client = self._connect()

    def _connect(self) -> _Client:
        client_version = version("projectairsim")
        if client_version not in TESTED_CLIENT_VERSIONS:
            check_version("projectairsim client", client_version, TESTED_CLIENT_VERSIONS[0])

        def attempt() -> _Client:
            client = _Client(self.settings)
            try:
                client.connect()
            except BaseException:
                client.close_sockets()
                raise
            return client

        client = connect_with_retries(
            attempt, self.endpoint, self.settings.policy, (pynng.NNGException,)
        )
        try:
            client.check_topics(self.endpoint)
        except BaseException:
            client.close_sockets()
            raise
        # The public server serves no build hash (/Sim/GetBuildCommitHash is not registered).
        self.server_build = (
            f"{SERVER_GENERATION}; topic round trip answered (client projectairsim "
            f"{client_version})"
        )
        _log.info("connected to %s: %s", self.endpoint, self.server_build)
        return client

    def _drop_connection(self) -> None:
        if self._client is not None:
            self._client.close_sockets()
        self._client, self._world, self._scene, self._agents = None, None, "", {}

    def _call(self, doing: str, call: Callable[[], T]) -> T:
        """Run one client call; any failure ends the connection and becomes a fault."""
        try:
            return call()
        except (pynng.NNGException, RuntimeError, KeyError, TypeError, ValueError) as error:
            self._drop_connection()
            raise fault(self.endpoint, doing, error) from error

    # -- scenes --------------------------------------------------------------------------

    def scenes(self) -> list[str]:
        return list(self._scenes)

    def start_pose(self, scene: str, agent: str) -> Pose:
        """Where ``scene`` spawns the robot of ``agent`` (its actor's origin): a free start
        for a smoke test.

        Raises:
            ConfigError: the scene config cannot be read or has no such robot.
        """
        for actor in self._scene_config(scene, {}).get("actors", []):
            if actor["name"] == agent:
                origin = actor.get("origin", {})
                north, east, down = (float(v) for v in origin.get("xyz", "0 0 0").split())
                yaw_deg = float(origin.get("rpy-deg", "0 0 0").split()[2])
                return ned_to_map(north, east, down, math.radians(yaw_deg))
        raise ConfigError(f"scene {scene!r} has no robot actor {agent!r}")

    def _scene_config(self, scene: str, origins: Mapping[str, Pose]) -> dict[str, Any]:
        """The scene's config with the robot configs merged in, patched for the benchmark,
        with the robots of ``origins`` spawned there.

        The client validates the result against its schemas when it loads it.

        Raises:
            ConfigError: an unreadable file or an agent without a robot actor.
        """
        file_name = f"{SCENE_FILE_PREFIX}{scene}{SCENE_FILE_SUFFIX}"
        config = _read_scene_config(self._scene_dir, file_name)
        config.setdefault("clock", {}).update({"type": "steppable", "pause-on-start": True})
        actors = {actor["name"]: actor for actor in config.get("actors", [])}
        for agent, rig in self._rigs.items():
            if agent not in actors:
                raise ConfigError(
                    f"{self._scene_dir / file_name}: no robot actor named {agent!r} "
                    f"(actors: {', '.join(sorted(actors)) or 'none'})"
                )
            if agent in origins:
                actors[agent]["origin"] = _origin(origins[agent])
            robot = actors[agent]["robot-config"]
            robot["physics-type"] = "non-physics"
            root = _root_link(robot, f"{self._scene_dir / file_name}: robot {agent!r}")
            root.setdefault("collision", {})["enabled"] = True
            views = {spec.name for spec in rig}
            robot["sensors"] = [
                sensor for sensor in robot.get("sensors", []) if sensor.get("id") not in views
            ] + [self._camera_config(spec, str(root["name"])) for spec in rig]
        return config

    def _camera_config(self, spec: CameraSpec, parent_link: str) -> dict[str, Any]:
        forward, left, up = spec.offset

        def capture(image_type: int) -> dict[str, Any]:
            return {
                "image-type": image_type,
                "width": spec.width,
                "height": spec.height,
                "fov-degrees": spec.fov_deg,
                "capture-enabled": True,
                "streaming-enabled": False,
                "pixels-as-float": False,
                "compress": False,
            }

        return {
            "id": spec.name,
            "type": "camera",
            "enabled": True,
            # The public server's robot schema requires it (robot_config_schema.jsonc).
            "parent-link": parent_link,
            "capture-interval": self.settings.capture_interval_s,
            "capture-settings": [capture(SCENE_IMAGE), capture(DEPTH_PLANAR_IMAGE)],
            # Body frame FRD; yaw clockwise, so a left view (+90 CCW) is -90.
            "origin": {
                "xyz": f"{forward} {-left} {-up}",
                "rpy-deg": f"0 {spec.pitch_deg} {-spec.yaw_deg}",
            },
        }

    def _load(self, scene: str, origins: Mapping[str, Pose] | None = None) -> None:
        config = self._scene_config(scene, origins or {})
        if self._client is None:
            self._client = self._connect()
        client = self._client
        # The old scene's topics go with it; their callbacks must not feed the new agents.
        client.subs.clear()
        # World() loads a scene by file name with the client's own loader and schema check,
        # and only then talks to the scene; so the patched config goes through a file too.
        with tempfile.TemporaryDirectory(prefix="aerialdojo-projectairsim-") as directory:
            file_name = _write_scene_config(Path(directory), scene, config)
            try:
                world = self._call(
                    f"loading scene {scene!r}",
                    lambda: World(client, file_name, sim_config_path=directory),
                )
            except jsonschema.ValidationError as error:
                raise ConfigError(
                    f"{self._scene_dir / file_name} (as patched for aerialdojo): "
                    f"{error.message} at {'/'.join(map(str, error.absolute_path)) or 'top level'}"
                ) from error
        self._world = world
        self._agents = {}
        for agent, rig in self._rigs.items():
            drone = self._call(f"attaching robot {agent!r}", partial(Drone, client, world, agent))
            state = _Agent(drone=drone, rig=rig)
            self._agents[agent] = state
            self._subscribe(client, state)
        self._await_subscriptions(client)
        self._scene = scene

    def _subscribe(self, client: _Client, agent: _Agent) -> None:
        def on_collision(_topic: Any, message: dict[str, Any]) -> None:
            with self._condition:
                agent.collisions.append(message)

        topic = agent.drone.robot_info["collision_info"]
        self._call("subscribing to collisions", partial(client.subscribe, topic, on_collision))
        for spec in agent.rig:
            for image_type, name in _TOPIC.items():
                topic = agent.drone.sensors[spec.name][name]
                callback = self._image_keeper(agent, (spec.name, image_type), topic)
                self._call(
                    f"subscribing to {topic}", partial(client.subscribe_packed, topic, callback)
                )
        # Subscribed last: the server answers each with its latched value, and handles one
        # connection's frames in order (topic_manager.cpp), so when every info has arrived,
        # every image subscription is in force and no capture goes unsent.
        for spec in agent.rig:
            for image_type, name in _TOPIC.items():
                topic = agent.drone.sensors[spec.name][f"{name}_info"]
                info_keeper = self._keeper(agent.infos, (spec.name, image_type))
                self._call(f"subscribing to {topic}", partial(client.subscribe, topic, info_keeper))

    def _image_keeper(
        self, agent: _Agent, key: tuple[str, int], topic: str
    ) -> Callable[[Any, bytes], None]:
        """Keeps the newest image of one view and type, still packed (called on the client's
        topic thread, which reads only its header)."""

        def keep(_topic: Any, body: bytes) -> None:
            image = PackedImage.read(body, f"{self.endpoint}: {topic}")
            with self._condition:
                agent.frames[key] = image
                self._condition.notify_all()

        return keep

    def _keeper(
        self, store: dict[tuple[str, int], dict[str, Any]], key: tuple[str, int]
    ) -> Callable[[Any, dict[str, Any]], None]:
        """Keeps the newest message of one view and image type (called on the client's topic
        thread)."""

        def keep(_topic: Any, message: dict[str, Any]) -> None:
            with self._condition:
                store[key] = message
                self._condition.notify_all()

        return keep

    def _await_subscriptions(self, client: _Client) -> None:
        """Wait for every camera_info; ask again for those that do not come. The server's
        polyamorous socket discards a message when the connection's short send queue is
        full (NNG pair1), so one of a burst of latched answers can be lost; infos are
        published once per load, so asking twice costs nothing."""
        infos = {
            (agent, spec.name, image_type): state.drone.sensors[spec.name][f"{name}_info"]
            for agent, state in self._agents.items()
            for spec in state.rig
            for image_type, name in _TOPIC.items()
        }

        def missing() -> list[str]:
            return [
                topic
                for (agent, view, image_type), topic in infos.items()
                if (view, image_type) not in self._agents[agent].infos
            ]

        deadline = time.monotonic() + self.settings.frame_timeout_s
        while absent := self._wait_for(missing, min(_RENDER_WAIT_S, deadline - time.monotonic())):
            if time.monotonic() >= deadline:
                self._drop_connection()
                raise SimulatorFaultError(
                    f"{self.endpoint}: no {absent[0]} within {self.settings.frame_timeout_s:g} "
                    "s; the scene's cameras did not load"
                )
            for topic in absent:
                self._call(
                    f"subscribing to {topic}", partial(client.try_send, subscribe_frame(topic))
                )

    def _wait_for(self, missing: Callable[[], list[str]], seconds: float) -> list[str]:
        """Wait up to ``seconds`` until ``missing()`` is empty; returns what is still missing."""
        deadline = time.monotonic() + seconds
        with self._condition:
            while (absent := missing()) and (remaining := deadline - time.monotonic()) > 0.0:
                self._condition.wait(remaining)
        return absent

    # -- episodes ------------------------------------------------------------------------

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load ``scene`` if it is not loaded (reconnecting after a fault), place every agent
        and let one action's time pass so that each view has a frame of the start pose.

        A placement the server's sweep stopped short (geometry between the previous pose and
        the start) is redone by reloading the scene with the robots spawned at their starts.

        Raises:
            UnknownSceneError: no scene config of that name.
            ConfigError: an agent without a rig, or a scene config that cannot be loaded.
            SimulatorFaultError: the server failed or did not answer, or a start pose is
                inside geometry.
        """
        if scene not in self._scenes:
            raise UnknownSceneError(
                f"no ProjectAirSim scene {scene!r} in {self._scene_dir}; "
                f"scenes: {', '.join(self._scenes)}"
            )
        self._check_rigged(poses)
        if self._client is None or scene != self._scene:
            self._load(scene)
        blocked = self._place(poses)
        if blocked:
            _log.info("%s: the way to the start hit %s; spawning there", self.endpoint, blocked)
            self._load(scene, origins=poses)
            blocked = self._place(poses)
            if blocked:
                agent, hit = next(iter(blocked.items()))
                raise SimulatorFaultError(
                    f"{self.endpoint}: the start pose of {agent!r} in {scene!r} collides with "
                    f"{hit.get('object_name', '')!r}"
                )

    def _place(self, poses: Mapping[str, Pose]) -> dict[str, dict[str, Any]]:
        """Set every agent's pose and run one action's time; returns the agents whose sweep
        hit something, with the hit."""
        for agent, pose in poses.items():
            with self._condition:
                self._agents[agent].collisions.clear()
            self._set_pose(agent, pose)
        self._run(self.seconds_per_action, list(poses))
        hits = {agent: self._collision_since_pose_change(agent) for agent in poses}
        return {agent: hit for agent, hit in hits.items() if hit is not None}

    def _set_pose(self, agent: str, pose: Pose) -> None:
        state = self._agents[agent]
        north, east, down, yaw = map_to_ned(pose)
        w, x, y, z = yaw_quaternion_wxyz(yaw)
        transform = {
            "frame_id": "DEFAULT_ID",
            "translation": {"x": north, "y": east, "z": down},
            "rotation": {"w": w, "x": x, "y": y, "z": z},
        }
        world = self._world
        state.pose_changed_ns = self._call("reading the clock", world.get_sim_time)
        self._call(f"setting the pose of {agent!r}", lambda: state.drone.set_pose(transform))

    def _advance(self, seconds: float) -> int:
        """Run the paused clock for ``seconds`` of simulated time; returns the time after."""
        world = self._world
        delta_ns = round(seconds * 1e9)
        return int(
            self._call("advancing the clock", lambda: world.continue_for_sim_time(delta_ns, True))
        )

    def _run(self, seconds: float, agents: Sequence[str]) -> None:
        """Run the clock for ``seconds``, then on by one capture interval at a time until
        every view of ``agents`` delivered a frame captured after its pose change; then give
        the run's last captures a moment to arrive, so that observations carry the newest.

        Raises:
            SimulatorFaultError: no such frame within ``frame_timeout_s``.
        """
        deadline = time.monotonic() + self.settings.frame_timeout_s
        end_ns = self._advance(seconds)
        while True:
            wait_s = min(_RENDER_WAIT_S, max(0.0, deadline - time.monotonic()))
            stale = self._wait_for(partial(self._views_older_than, agents, None), wait_s)
            if not stale:
                break
            if time.monotonic() >= deadline:
                self._drop_connection()
                raise SimulatorFaultError(
                    f"{self.endpoint}: no {stale[0]} frame captured after the pose change "
                    f"within {self.settings.frame_timeout_s:g} s"
                )
            end_ns = self._advance(self.settings.capture_interval_s)
        # The last capture of a run lies within one interval of its end unless the run ended
        # exactly one interval after a capture (the condition is strict): best effort.
        near_end_ns = end_ns - round(self.settings.capture_interval_s * 1e9)
        self._wait_for(partial(self._views_older_than, agents, near_end_ns), _RENDER_WAIT_S)

    def _views_older_than(self, agents: Sequence[str], oldest_ns: int | None) -> list[str]:
        """The views of ``agents`` whose newest frame is older than ``oldest_ns``, or (None)
        not newer than the agent's last pose change."""
        stale = []
        for agent in agents:
            state = self._agents[agent]
            for view, image_type in self._keys(state):
                frame = state.frames.get((view, image_type))
                stamp = -1 if frame is None else frame.time_stamp
                if (oldest_ns is None and stamp <= state.pose_changed_ns) or (
                    oldest_ns is not None and stamp < oldest_ns
                ):
                    stale.append(f"{_TOPIC[image_type]} of {agent}/{view}")
        return stale

    @staticmethod
    def _keys(state: _Agent) -> list[tuple[str, int]]:
        return [(spec.name, image_type) for spec in state.rig for image_type in _TOPIC]

    def _collision_since_pose_change(self, agent: str) -> dict[str, Any] | None:
        """The first collision after the agent's last pose change. Topic messages arrive in
        publication order and the server publishes a hit before the frames of its tick, so
        once those frames are in, so is the collision."""
        state = self._agents[agent]
        with self._condition:
            return next(
                (c for c in state.collisions if int(c["time_stamp"]) > state.pose_changed_ns),
                None,
            )

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one action of ``agent`` (``argument`` is unused by this action set).

        Raises:
            InvalidActionError: the action is not a motion of the AerialDojo set.
            SimulatorFaultError: the server failed or did not answer, or the agent was not
                placed by ``reset``.
        """
        state = self._placed(agent)
        pose = self._ground_truth_pose(state)
        if action.name == STOP:
            return MotionOutcome(pose=pose)
        goal = target_pose(pose, action)
        with self._condition:
            state.collisions.clear()
        self._set_pose(agent, goal)
        self._run(self.seconds_per_action, [agent])
        collision = self._collision_since_pose_change(agent)
        if collision is None:
            return MotionOutcome(pose=self._ground_truth_pose(state))
        # The sweep stopped Unreal's drone at the hit, but the kinematics (and the ground
        # truth) still say the goal (robot.cpp GetGroundTruthPose): bring them to the contact.
        where = collision["position"]
        contact = ned_to_map(where["x"], where["y"], where["z"], math.pi / 2.0 - goal.yaw)
        self._set_pose(agent, contact)
        self._run(self.settings.capture_interval_s, [agent])
        return MotionOutcome(
            pose=self._ground_truth_pose(state),
            collided=True,
            collision_object=str(collision.get("object_name", "")),
        )

    def _placed(self, agent: str) -> _Agent:
        if self._client is None:
            raise SimulatorFaultError(
                f"{self.endpoint}: not connected (a fault ended the connection; reset reconnects)"
            )
        if agent not in self._agents:
            raise SimulatorFaultError(
                f"agent {agent!r} is not in the loaded scene; agents: {sorted(self._agents)}"
            )
        return self._agents[agent]

    def _ground_truth_pose(self, state: _Agent) -> Pose:
        answer = self._call("reading the ground-truth pose", state.drone.get_ground_truth_pose)
        t, q = answer["translation"], answer["rotation"]
        yaw = yaw_of_quaternion_wxyz(q["w"], q["x"], q["y"], q["z"])
        return ned_to_map(float(t["x"]), float(t["y"]), float(t["z"]), yaw)

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        """The newest frames of every view, stamped with their capture time.

        Ground-truth id images are not requested from ProjectAirSim; ``instance_ids`` and
        ``semantic_ids`` stay None.

        Raises:
            SimulatorFaultError: the server failed, frames are missing, or a frame is not the
                size the rig asked for.
        """
        state = self._placed(agent)
        with self._condition:
            messages = dict(state.frames)
        frames = {}
        stamp_ns = 0
        for spec in state.rig:
            where = f"{self.endpoint}: {agent}/{spec.name}"
            colour = messages.get((spec.name, SCENE_IMAGE))
            depth = messages.get((spec.name, DEPTH_PLANAR_IMAGE))
            if colour is None or depth is None:
                raise SimulatorFaultError(f"{where}: no frame yet; reset places the agents")
            for message in (colour, depth):
                _check_size(message, spec, where)
            frames[spec.name] = CameraFrame(
                spec=spec,
                rgb=colour.rgb(f"{where} scene_camera"),
                depth=depth.depth(f"{where} depth_planar_camera"),
            )
            stamp_ns = max(stamp_ns, colour.time_stamp, depth.time_stamp)
        return Observation(
            sim_time_s=stamp_ns / 1e9,
            pose=self._ground_truth_pose(state),
            frames=frames,
        )

    def server_cameras(self, agent: str) -> dict[str, ServerCamera]:
        """Every view of ``agent`` as the server reports it: size from its ``camera_info``
        topics, encodings from the last frames. The FOV is not reported: ``camera_info``
        echoes the configured one (``camera.cpp``), which cannot tell a wrong render.

        Raises:
            SimulatorFaultError: not connected, or no frame yet.
        """
        state = self._placed(agent)
        with self._condition:
            infos, frames = dict(state.infos), dict(state.frames)
        cameras = {}
        for spec in state.rig:
            info = infos.get((spec.name, SCENE_IMAGE))
            colour = frames.get((spec.name, SCENE_IMAGE))
            depth = frames.get((spec.name, DEPTH_PLANAR_IMAGE))
            if info is None or colour is None or depth is None:
                raise SimulatorFaultError(f"{self.endpoint}: {agent}/{spec.name} sent no frame")
            cameras[spec.name] = ServerCamera(
                width=int(info["width"]),
                height=int(info["height"]),
                fov_deg=None,
                colour_encoding=colour.encoding,
                depth_encoding=depth.encoding,
            )
        return cameras

    def scene_problems(self, scene: str, objects: Sequence[str]) -> list[str]:
        """Why ``scene`` cannot run here: no scene config for it, or objects its episodes name
        that the running Unreal level does not hold (``LoadScene`` cannot change the level, so
        a scene config for another level would run silently in this one).

        Raises:
            SimulatorFaultError: the server failed; or no scene is loaded (``reset`` first).
        """
        problems = []
        if scene not in self._scenes:
            problems.append(
                f"no {SCENE_FILE_PREFIX}{scene}{SCENE_FILE_SUFFIX} in {self._scene_dir}"
            )
        if objects:
            if self._world is None:
                raise SimulatorFaultError(f"{self.endpoint}: no scene loaded; reset first")
            world = self._world
            poses = self._call(
                "asking for object poses", lambda: world.get_object_poses(list(objects))
            )
            # WorldSimApi::getObjectPose answers NaN for an actor the level does not hold.
            absent = [
                name
                for name, pose in zip(objects, poses, strict=True)
                if math.isnan(float(pose["translation"]["x"]))
            ]
            if absent:
                problems.append(
                    f"{scene}: {len(absent)} of {len(objects)} objects are not in the running "
                    f"level ({', '.join(absent[:3])}{', ...' if len(absent) > 3 else ''})"
                )
        return problems

    def world_objects(self, scene: str) -> list[WorldObject]:
        """The running level's objects with their poses (``ListObjects``,
        ``GetObjectPoses``, ``WorldSimApi.cpp``), without the scene's robots; loads ``scene``
        first if another is loaded.

        Raises:
            UnknownSceneError: no scene config of that name.
            SimulatorFaultError: the server failed.
        """
        if scene not in self._scenes:
            raise UnknownSceneError(f"no ProjectAirSim scene {scene!r} in {self._scene_dir}")
        if self._client is None or scene != self._scene:
            self._load(scene)
        world = self._world
        names = [
            str(name)
            for name in self._call("listing objects", lambda: world.list_objects(".*"))
            if str(name) not in self._agents
        ]
        poses = self._call("asking for object poses", lambda: world.get_object_poses(names))
        objects = []
        for name, pose in zip(names, poses, strict=True):
            t = pose["translation"]
            north, east, down = float(t["x"]), float(t["y"]), float(t["z"])
            if not all(map(math.isfinite, (north, east, down))):
                continue  # gone between the two calls
            objects.append(WorldObject(name=name, kind="", x=east, y=north, z=-down))
        return objects

    def start_candidates(self, scene: str, altitude_m: float) -> list[Pose]:
        """Where a survey may start episodes: the scene's spawn of the first agent (the
        server tells no free space; ``altitude_m`` is unused)."""
        del altitude_m
        return [self.start_pose(scene, next(iter(self._rigs)))]

    def captured_poses(self, agent: str) -> dict[str, CapturedPose]:
        """Where each view's newest colour frame was captured, as the server wrote it into
        the frame (the camera's world pose, ``UnrealCamera.cpp``), in the map frame.

        Raises:
            SimulatorFaultError: not connected, or no frame yet.
        """
        state = self._placed(agent)
        with self._condition:
            frames = dict(state.frames)
        poses = {}
        for spec in state.rig:
            colour = frames.get((spec.name, SCENE_IMAGE))
            if colour is None:
                raise SimulatorFaultError(f"{self.endpoint}: {agent}/{spec.name} sent no frame")
            poses[spec.name] = captured_pose_of_ned(colour.position_ned, colour.rotation_wxyz)
        return poses

    def close(self) -> None:
        """Close the connection without further requests."""
        self._drop_connection()


def _check_size(message: PackedImage, spec: CameraSpec, where: str) -> None:
    if (message.width, message.height) != (spec.width, spec.height):
        raise SimulatorFaultError(
            f"{where}: the server sent {message.width}x{message.height} {message.encoding} "
            f"frames, the rig asks for {spec.width}x{spec.height}"
        )


def _origin(pose: Pose) -> dict[str, str]:
    """A scene config ``origin`` (NED metres, degrees) of a map-frame pose."""
    north, east, down, yaw = map_to_ned(pose)
    return {"xyz": f"{north} {east} {down}", "rpy-deg": f"0 0 {math.degrees(yaw)}"}


def _root_link(robot: dict[str, Any], where: str) -> dict[str, Any]:
    """The robot's root link (the link no joint has as its child): the cameras' parent, and
    the link whose collision must be on, since without it a non-physics SetPose never sweeps
    (``UnrealRobot.cpp``) and ProjectAirSim's own non-physics robot configs turn it off.

    Raises:
        ConfigError: the robot config has no links.
    """
    children = {joint.get("child-link") for joint in robot.get("joints", [])}
    roots = [link for link in robot.get("links", []) if link.get("name") not in children]
    if not roots:
        raise ConfigError(f"{where}: the robot config has no root link for the cameras")
    root: dict[str, Any] = roots[0]
    return root


def _read_jsonc(path: Path) -> Any:
    try:
        return commentjson.loads(path.read_text())
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror}") from error
    except Exception as error:  # commentjson raises its parser's own exception types
        raise ConfigError(f"{path}: not valid JSON with comments: {error}") from error


def _read_scene_config(directory: Path, file_name: str) -> dict[str, Any]:
    """A scene config with every robot and environment-actor config file merged in, as
    ``projectairsim.utils.load_scene_config_as_dict`` does, without its schema check (the
    client runs that on the patched config it loads)."""
    config: dict[str, Any] = _read_jsonc(directory / file_name)
    for actor, key in (
        *((a, "robot-config") for a in config.get("actors", [])),
        *((a, "env-actor-config") for a in config.get("environment-actors", [])),
    ):
        names = actor.get(key, [])
        merged: dict[str, Any] = {}
        for name in names if isinstance(names, list) else [names]:
            merged = merge_dicts(merged, _read_jsonc(directory / name))
        actor[key] = merged
    return config


def _write_scene_config(directory: Path, scene: str, config: dict[str, Any]) -> str:
    """Write ``config`` (robot configs merged in) as a scene file with one file per robot
    config; returns the scene file's name."""
    written = json.loads(json.dumps(config))
    for actor in written.get("actors", []):
        robot_file = f"robot_{actor['name']}.jsonc"
        (directory / robot_file).write_text(json.dumps(actor["robot-config"]))
        actor["robot-config"] = robot_file
    for actor in written.get("environment-actors", []):
        actor_file = f"env_actor_{actor['name']}.jsonc"
        (directory / actor_file).write_text(json.dumps(actor["env-actor-config"]))
        actor["env-actor-config"] = actor_file
    file_name = f"{SCENE_FILE_PREFIX}{scene}{SCENE_FILE_SUFFIX}"
    (directory / file_name).write_text(json.dumps(written))
    return file_name


def _scene_names(directory: Path) -> list[str]:
    if not str(directory) or not directory.is_dir():
        raise ConfigError(
            f"sim_bridge.projectairsim_scene_dir: {str(directory)!r} is not a directory of "
            f"{SCENE_FILE_PREFIX}<name>{SCENE_FILE_SUFFIX} scene configs"
        )
    names = sorted(
        path.name[len(SCENE_FILE_PREFIX) : -len(SCENE_FILE_SUFFIX)]
        for path in directory.glob(f"{SCENE_FILE_PREFIX}*{SCENE_FILE_SUFFIX}")
    )
    if not names:
        raise ConfigError(
            f"sim_bridge.projectairsim_scene_dir: {directory} holds no "
            f"{SCENE_FILE_PREFIX}<name>{SCENE_FILE_SUFFIX} scene configs"
        )
    return names
