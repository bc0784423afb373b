"""The interface every simulator backend implements, and the data it exchanges.

The bridge node owns one backend and turns its outputs into ROS messages; the backend never
imports rclpy. Faults of the simulator itself (a dead server, a timeout) are raised as
``SimulatorFaultError`` so that the task manager can rerun the episode instead of scoring it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aerialdojo.actions import Action
from aerialdojo.errors import CameraConfigError, ConfigError, InvalidActionError
from aerialdojo.geometry import Pose, yaw_matrix
from aerialdojo.spawns import SpawnedObject


@dataclass(frozen=True, kw_only=True)
class CameraSpec:
    """A pinhole RGB-D camera rigidly mounted on an agent.

    Attributes:
        name: view name, used in topic names (``camera/<name>/image``).
        width: image width in pixels.
        height: image height in pixels.
        fov_deg: horizontal field of view in degrees.
        offset: camera position in the agent's body frame (x forward, y left, z up), metres.
        yaw_deg: camera heading relative to the body, CCW (left view: +90).
        pitch_deg: camera pitch, negative looking down (down view: -90).
    """

    name: str
    width: int
    height: int
    fov_deg: float = 90.0
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    yaw_deg: float = 0.0
    pitch_deg: float = 0.0

    def __post_init__(self) -> None:
        if self.width <= 0 or self.height <= 0:
            raise CameraConfigError(
                f"camera {self.name!r}: image size {self.width}x{self.height} must be positive"
            )
        if not 0.0 < self.fov_deg < 180.0:
            raise CameraConfigError(
                f"camera {self.name!r}: fov_deg={self.fov_deg} must be in (0, 180)"
            )

    @property
    def focal_px(self) -> float:
        """Focal length in pixels, from the horizontal FOV (square pixels)."""
        return (self.width / 2.0) / math.tan(math.radians(self.fov_deg) / 2.0)

    def intrinsics(self) -> np.ndarray:
        """3x3 pinhole matrix K with the principal point at the image centre."""
        f = self.focal_px
        return np.array(((f, 0.0, self.width / 2.0), (0.0, f, self.height / 2.0), (0.0, 0.0, 1.0)))

    def mount_rotation(self) -> np.ndarray:
        """Rotation from the camera frame (x forward, y left, z up) to the body frame: the
        mount's yaw, then its pitch (negative pitch looks down)."""
        pitch = math.radians(-self.pitch_deg)
        c, s = math.cos(pitch), math.sin(pitch)
        about_left = np.array(((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c)))
        return np.asarray(yaw_matrix(math.radians(self.yaw_deg)) @ about_left)


def aerialdojo_uav_rig(width: int, height: int, fov_deg: float = 90.0) -> list[CameraSpec]:
    """The four AerialDojo views: front, left, right and down, 90 deg FOV (AerialDojo-200K,
    section 3.1)."""
    return [
        CameraSpec(name="front", width=width, height=height, fov_deg=fov_deg),
        CameraSpec(name="left", width=width, height=height, fov_deg=fov_deg, yaw_deg=90.0),
        CameraSpec(name="right", width=width, height=height, fov_deg=fov_deg, yaw_deg=-90.0),
        CameraSpec(name="down", width=width, height=height, fov_deg=fov_deg, pitch_deg=-90.0),
    ]


#: The name of a nadir view.
NADIR_VIEW = "down"


def nadir_rig(width: int, height: int) -> list[CameraSpec]:
    """One camera looking straight down with a 90 deg field of view: the view CityNav's
    evaluation renders (its footprint is a square twice the altitude across, CityNav,
    appendix C.2)."""
    return [CameraSpec(name=NADIR_VIEW, width=width, height=height, fov_deg=90.0, pitch_deg=-90.0)]


@dataclass(kw_only=True)
class CameraFrame:
    """One rendered view.

    Attributes:
        rgb: HxWx3 uint8.
        depth: HxW float32, metres along the optical axis (planar depth); +inf where the
            ray hit nothing (REP-118).
        instance_ids: HxW int32 ground-truth instance ids (0 = background); evaluator only.
        semantic_ids: HxW int32 ground-truth category ids; evaluator only.
    """

    spec: CameraSpec
    rgb: np.ndarray
    depth: np.ndarray
    instance_ids: np.ndarray | None = None
    semantic_ids: np.ndarray | None = None


@dataclass(frozen=True, kw_only=True)
class MotionOutcome:
    """What executing one action did.

    Attributes:
        pose: ground-truth pose after the action (the contact pose if it collided).
        collided: the swept body touched geometry during the motion.
        collision_object: name of what was hit ("" if nothing).
        geofenced: the motion stopped at the edge of the simulated world (not a collision).
    """

    pose: Pose
    collided: bool = False
    collision_object: str = ""
    geofenced: bool = False


@dataclass(kw_only=True)
class Observation:
    """All views of one agent at one simulation time."""

    sim_time_s: float
    pose: Pose
    frames: dict[str, CameraFrame] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class StartedObservation:
    """An observation whose views are rendering on the backend's threads, from the state it
    was started in (``SimulatorBackend.start_observe``).

    Attributes:
        sim_time_s: the simulated time it was started at.
        pose: the agent's pose then.
        finish_views: waits for every view in the rig's order, handing each to its argument
            (if not None) as soon as its pixels are final; returns them all.
    """

    sim_time_s: float
    pose: Pose
    finish_views: Callable[[Callable[[CameraFrame], None] | None], dict[str, CameraFrame]]

    def result(self, on_view: Callable[[Observation], None] | None = None) -> Observation:
        """Every view once rendered; ``on_view`` gets each view as soon as it is done, in the
        rig's order, as an observation of that one view (this one's time and pose), while the
        later views still render.

        Raises:
            SimulatorFaultError: a view failed to render (or what ``on_view`` raised).
        """
        hand_over = None
        if on_view is not None:

            def hand_over(frame: CameraFrame) -> None:
                on_view(
                    Observation(sim_time_s=self.sim_time_s, pose=self.pose,
                                frames={frame.spec.name: frame})
                )  # fmt: skip

        frames = self.finish_views(hand_over)
        return Observation(sim_time_s=self.sim_time_s, pose=self.pose, frames=frames)


@dataclass(frozen=True, kw_only=True)
class BackendFault:
    """A fault a backend found between or during steps, outside any call of the bridge's (a
    robot's safety gate stopping it while the agent thinks): the running attempt ends.

    Attributes:
        agent: whose simulator or vehicle failed.
        reason: what happened, naming the value and the limit.
        intervention: an operator or the safety layer stopped the robot (an operator/safety
            intervention) rather than a failure of the simulator or robot (infrastructure).
    """

    agent: str
    reason: str
    intervention: bool = False


@dataclass(frozen=True, kw_only=True)
class BackendOptions:
    """What the bridge hands a backend it builds: its own parameters, read once.

    Attributes:
        agents: the agents whose sensors the backend renders.
        image_width: pixels across every camera image.
        image_height: pixels down every camera image.
        fov_deg: horizontal field of view where the rig does not fix its own.
        seed: scene generation seed (embedded scenes).
        agent_radius_m: collision radius of an agent.
        seconds_per_action: simulated time one action takes.
        parameters: every parameter of the bridge by name; backends with settings of their
            own (server address, ports, maps) read them from here.
        transport: what the bridge offers a backend whose registry entry names a ROS
            transport (``backends.BackendEntry.transport``), e.g. a robot's vehicle links;
            None for every other backend. Opaque here: ``sim`` knows no ROS.
        report_fault: where a backend reports a fault found outside the bridge's calls
            (``BackendFault``); None where nobody listens.
    """

    agents: Sequence[str]
    image_width: int
    image_height: int
    fov_deg: float
    seed: int = 0
    agent_radius_m: float = 0.25
    seconds_per_action: float = 1.0
    parameters: Mapping[str, Any] = field(default_factory=dict)
    transport: object | None = None
    report_fault: Callable[[BackendFault], None] | None = None

    def rigs(self, backend_class: type[SimulatorBackend]) -> dict[str, list[CameraSpec]]:
        """The camera rig of each agent on ``backend_class``.

        Raises:
            ConfigError: an agent the backend has no rig for.
        """
        return backend_class.camera_rigs(
            self.agents, self.image_width, self.image_height, self.fov_deg
        )


class SimulatorBackend(ABC):
    """A simulator the bridge can drive step by step.

    Implementations: ``sim.embedded.EmbeddedBackend`` (default, no GPU),
    ``sim.projectairsim``, ``sim.carla_air``.

    Clock: ``Observation.sim_time_s`` is the simulator's own time; it may restart on
    ``reset`` (real simulators do). The bridge owns the published clock and keeps it strictly
    increasing across resets, so every observation set has a stamp of its own.

    The base class holds what every backend shares: the camera rig of each agent and the
    simulated time one action takes. A backend class says which rigs its agents carry
    (``camera_rigs``; by default the four AerialDojo UAV views) and whether its odometry is
    global (``global_localization``; by default it is relative to the episode start, as
    AerialDojo withholds GPS), so the bridge node needs no backend names.

    Args:
        rigs: camera rig per agent name.
        seconds_per_action: simulated time one action takes.

    Raises:
        ConfigError: an empty rig or a non-positive action duration.
    """

    #: Odometry in the map frame (global localisation) rather than from the episode start.
    global_localization = False

    @classmethod
    def camera_rigs(
        cls, agents: Sequence[str], width: int, height: int, fov_deg: float
    ) -> dict[str, list[CameraSpec]]:
        """The camera rig each of ``agents`` carries on this backend: here the four
        AerialDojo UAV views for every agent.

        Raises:
            ConfigError: an agent this backend has no rig for.
        """
        return {agent: aerialdojo_uav_rig(width, height, fov_deg) for agent in agents}

    @classmethod
    def from_options(cls, options: BackendOptions) -> SimulatorBackend:
        """Build this backend from the bridge's options (the backend registry calls it).

        Raises:
            ConfigError: bad settings, or an agent the backend has no rig for.
        """
        return cls(rigs=options.rigs(cls), seconds_per_action=options.seconds_per_action)

    def __init__(
        self, *, rigs: Mapping[str, Sequence[CameraSpec]], seconds_per_action: float
    ) -> None:
        empty = sorted(agent for agent, rig in rigs.items() if not rig)
        if empty:
            raise ConfigError(f"camera rigs of agents {empty} are empty")
        if seconds_per_action <= 0.0:
            raise ConfigError(f"seconds_per_action={seconds_per_action} must be positive")
        self.seconds_per_action = seconds_per_action
        self._rigs = {agent: list(rig) for agent, rig in rigs.items()}

    def cameras(self, agent: str) -> list[CameraSpec]:
        """The camera rig of ``agent``.

        Raises:
            ConfigError: no rig for that agent.
        """
        if agent not in self._rigs:
            raise ConfigError(
                f"no camera rig for agent {agent!r}; rigs exist for {sorted(self._rigs)}"
            )
        return list(self._rigs[agent])

    def _check_rigged(self, agents: Iterable[str]) -> None:
        """Raise ``ConfigError`` unless every one of ``agents`` has a camera rig."""
        unknown = sorted(set(agents) - set(self._rigs))
        if unknown:
            raise ConfigError(
                f"agents {unknown} have no camera rig; rigs exist for {sorted(self._rigs)}"
            )

    @abstractmethod
    def scenes(self) -> list[str]:
        """Names of the scenes this backend can load."""

    @abstractmethod
    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load ``scene`` (if not loaded) and place each named agent at its map-frame pose.

        Raises:
            UnknownSceneError: no such scene.
            SimulatorFaultError: the simulator failed.
        """

    def place_objects(self, scene: str, objects: Sequence[SpawnedObject]) -> None:
        """Spawn an episode's objects by blueprint in ``scene``, replacing the previous
        episode's, before ``reset`` places the agents. This backend spawns nothing: an
        episode that brings objects is refused (a backend that can spawn overrides this).

        Raises:
            ConfigError: ``objects`` is not empty.
        """
        del scene
        if objects:
            raise ConfigError(
                f"{type(self).__name__} cannot spawn objects by blueprint; the episode brings "
                f"{len(objects)} ({', '.join(o.blueprint for o in objects[:3])}...): run its "
                "suite on the simulator it was made for"
            )

    @abstractmethod
    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one already validated action of ``agent`` and return what happened.

        Raises:
            SimulatorFaultError: the simulator failed.
        """

    @abstractmethod
    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        """Render every view of ``agent`` at the current simulation time.

        Raises:
            SimulatorFaultError: the simulator failed.
        """

    def next_observation_time_s(self) -> float | None:
        """The simulated time the next ``observe`` will report, where the backend knows it
        without asking its world and ``observe`` renders in this process from the state
        ``execute`` left (no server or robot that can fault in between): the bridge may then
        answer an action before its observation is rendered. None: it must observe first."""
        return None

    def start_observe(self, agent: str) -> StartedObservation | None:
        """Start rendering every view of ``agent`` where the backend renders in this process
        from a snapshot of its state taken now (the pose, the time, a scene ``execute`` does
        not change): the views render on the backend's threads, and ``execute`` or another
        start may come before they are taken (``StartedObservation.result``). A bridge then
        executes the next action while the last set still renders, and that action's views
        queue behind it with no pause of the render threads between the two. None (the
        default): the backend cannot; ``observe`` must run with no other call beside it.

        Raises:
            InvalidActionError: the agent was not placed.
        """
        del agent
        return None

    def close(self) -> None:  # noqa: B027 - optional hook; most backends hold nothing
        """Release the simulator connection or scene resources."""


class LocalBackend(SimulatorBackend):
    """A backend that simulates in this process: it keeps every placed agent's pose and a
    clock that each executed action advances by ``seconds_per_action``.

    Subclasses call ``_place`` from ``reset`` and ``_moved`` from ``execute``.
    """

    def __init__(
        self, *, rigs: Mapping[str, Sequence[CameraSpec]], seconds_per_action: float
    ) -> None:
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        self._poses: dict[str, Pose] = {}
        self._sim_time_s = 0.0

    @property
    def sim_time_s(self) -> float:
        """Simulation time since the last ``reset``."""
        return self._sim_time_s

    def pose(self, agent: str) -> Pose:
        """Ground-truth pose of a placed agent.

        Raises:
            InvalidActionError: the agent was not placed by ``reset``.
        """
        if agent not in self._poses:
            raise InvalidActionError(
                f"agent {agent!r} is not in the scene; placed: {sorted(self._poses)}"
            )
        return self._poses[agent]

    def next_observation_time_s(self) -> float | None:
        return self._sim_time_s

    def _place(self, poses: Mapping[str, Pose]) -> None:
        """Place the agents (their rigs already checked) and restart the clock at 0."""
        self._poses = dict(poses)
        self._sim_time_s = 0.0

    def _moved(self, agent: str, pose: Pose) -> None:
        """Record where an executed action left ``agent``; the clock advances by one action."""
        self._poses[agent] = pose
        self._sim_time_s += self.seconds_per_action

    def close(self) -> None:
        """Forget the placed agents."""
        self._poses = {}
