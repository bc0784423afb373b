"""``EmbeddedBackend``: the default simulator, procedural scenes rendered with Embree."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aerialdojo.actions import STOP, Action, target_pose
from aerialdojo.errors import ConfigError, InvalidActionError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import (
    BackendOptions,
    CameraSpec,
    LocalBackend,
    MotionOutcome,
    Observation,
    StartedObservation,
)
from aerialdojo.sim.embedded.collision import BOUNDARY_NAME
from aerialdojo.sim.embedded.renderer import start_rendering
from aerialdojo.sim.embedded.scenes import EmbeddedScene, load_scene, scene_names


class EmbeddedBackend(LocalBackend):
    """Runs the AerialDojo action set in the embedded simulator.

    Translations are swept with the agent's collision sphere: on contact the agent stops at
    the contact pose and the outcome names what was hit. Turns never collide; ``Stop`` does
    not move. Every executed action advances the simulation clock by ``seconds_per_action``.

    Args:
        seed: scene generation seed.
        agent_radius_m: radius of every agent's collision sphere.
        rigs: camera rig per agent name (``camera_rigs``).
        seconds_per_action: simulated time one action takes.

    Raises:
        ConfigError: a non-positive radius or action duration, or an empty rig.
    """

    @classmethod
    def from_options(cls, options: BackendOptions) -> EmbeddedBackend:
        return cls(
            rigs=options.rigs(cls),
            seed=options.seed,
            agent_radius_m=options.agent_radius_m,
            seconds_per_action=options.seconds_per_action,
        )

    def __init__(
        self,
        *,
        rigs: Mapping[str, Sequence[CameraSpec]],
        seed: int = 0,
        agent_radius_m: float = 0.25,
        seconds_per_action: float = 1.0,
    ) -> None:
        if agent_radius_m <= 0.0:
            raise ConfigError(f"agent_radius_m={agent_radius_m} must be positive")
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        self.seed = seed
        self.agent_radius_m = agent_radius_m
        self._cache: dict[str, EmbeddedScene] = {}
        self._scene: EmbeddedScene | None = None

    @property
    def scene(self) -> EmbeddedScene:
        """The loaded scene.

        Raises:
            InvalidActionError: ``reset`` has not loaded one yet.
        """
        if self._scene is None:
            raise InvalidActionError("no scene loaded: call reset(scene, poses) first")
        return self._scene

    def scenes(self) -> list[str]:
        return scene_names()

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load ``scene`` (cached after the first time) and place the agents; the clock
        restarts at 0.

        Raises:
            UnknownSceneError: no such scene.
            ConfigError: an agent without a camera rig.
        """
        self._check_rigged(poses)
        if scene not in self._cache:
            self._cache[scene] = load_scene(scene, self.seed, agent_radius_m=self.agent_radius_m)
        self._scene = self._cache[scene]
        self._place(poses)

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one action of ``agent`` (``argument`` is unused by this action set).

        A move into an obstacle stops at contact and is a collision; a move across the edge of
        the flyable box stops at the edge and is not (a geofence).

        Raises:
            InvalidActionError: the agent is not placed, or the action is not a motion of the
                AerialDojo set.
        """
        pose = self.pose(agent)
        if action.name == STOP:
            outcome = MotionOutcome(pose=pose)
        else:
            goal = target_pose(pose, action)
            hit = None
            if (goal.x, goal.y, goal.z) != (pose.x, pose.y, pose.z):
                hit = self.scene.collision.sweep_sphere(
                    pose.position, goal.position, self.agent_radius_m
                )
            if hit is None:
                outcome = MotionOutcome(pose=goal)
            elif hit.name == BOUNDARY_NAME:
                # The edge of the modelled world is a geofence, not an obstacle: the paper's
                # simulators have no wall there, and the terrain drawn beyond it shows none.
                outcome = MotionOutcome(
                    pose=Pose.from_position(hit.position, pose.yaw), geofenced=True
                )
            else:
                outcome = MotionOutcome(
                    pose=Pose.from_position(hit.position, pose.yaw),
                    collided=True,
                    collision_object=hit.name,
                )
        self._moved(agent, outcome.pose)
        return outcome

    def start_observe(self, agent: str, with_ground_truth_ids: bool = False) -> StartedObservation:
        pose = self.pose(agent)
        views = start_rendering(
            self.scene, pose, self.cameras(agent), with_ground_truth_ids=with_ground_truth_ids
        )
        return StartedObservation(sim_time_s=self.sim_time_s, pose=pose, finish_views=views.finish)

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        return self.start_observe(agent, with_ground_truth_ids).result()

    def close(self) -> None:
        """Drop every cached scene."""
        self._cache.clear()
        self._scene = None
        super().close()
