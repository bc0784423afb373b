"""``AgosBackend``: the embedded simulator running AGOS towns and the AGOS action space.

The UAV flies between grid waypoints at its altitude; the UGV drives the shortest directed
fine-graph path to the road anchor it is sent to (MOVE_TO_ROAD_WAYPOINT), or the shortest
decision-graph route to the approach anchor the task manager's RGPP turned a candidate into
(GO_TO_CANDIDATE). The UGV
observes its front view while driving and its six-view ring right after STOP_OBSERVE.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aerialdojo.actions import Action
from aerialdojo.agos.planning import drive_to, parse_road_waypoint
from aerialdojo.agos.sensors import agos_rigs, current_views
from aerialdojo.agos.town import TOWN_NAMES, Town, load_town
from aerialdojo.agos.vocabulary import (
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    STOP_OBSERVE,
    UAV_ACTIONS,
    UGV_ACTIONS,
)
from aerialdojo.errors import InvalidActionError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import (
    CameraSpec,
    LocalBackend,
    MotionOutcome,
    Observation,
    StartedObservation,
)
from aerialdojo.sim.embedded.renderer import start_rendering


class AgosBackend(LocalBackend):
    """Executes AGOS decisions in a town and renders each agent's current views.

    Args:
        rigs: camera rig per agent (``agos.sensors.uav_rig`` / ``ugv_rig``).
        seconds_per_action: simulated time one decision takes.

    Raises:
        ConfigError: a non-positive decision time or an empty rig.
    """

    #: AGOS allows global localisation: odometry in the map frame (AGOS-Bench, "Sensors").
    global_localization = True

    @classmethod
    def camera_rigs(
        cls, agents: Sequence[str], width: int, height: int, fov_deg: float
    ) -> dict[str, list[CameraSpec]]:
        """The UAV's nadir camera and the UGV's front view with its six-view ring; their
        fields of view are the benchmark's own, whatever ``fov_deg`` says.

        Raises:
            ConfigError: an agent other than ``uav`` and ``ugv``.
        """
        del fov_deg
        return agos_rigs(agents, width, height)

    def __init__(
        self, *, rigs: Mapping[str, Sequence[CameraSpec]], seconds_per_action: float = 1.0
    ) -> None:
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        self._town: Town | None = None
        self._ring_next: set[str] = set()

    @property
    def town(self) -> Town:
        """The loaded town.

        Raises:
            InvalidActionError: ``reset`` has not loaded one yet.
        """
        if self._town is None:
            raise InvalidActionError("no town loaded: call reset(scene, poses) first")
        return self._town

    def scenes(self) -> list[str]:
        return list(TOWN_NAMES)

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load town ``scene`` and place the agents; the clock restarts at 0.

        Raises:
            UnknownSceneError: no such town.
            ConfigError: an agent without a camera rig.
        """
        self._check_rigged(poses)
        self._town = load_town(scene)
        self._place(poses)
        self._ring_next = set()

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Execute one validated AGOS decision.

        Raises:
            InvalidActionError: the agent is not placed, the action is not one of its AGOS
                actions, or the argument names no waypoint or reachable anchor.
        """
        pose = self.pose(agent)
        legal = UAV_ACTIONS if agent == "uav" else UGV_ACTIONS
        if action.name not in legal:
            raise InvalidActionError(f"{action.name!r} is not an AGOS {agent} action")
        town = self.town
        if action.name == MOVE_TO_UAV_WAYPOINT:
            waypoint = town.map.uav_grid.waypoint(argument)
            pose = Pose(waypoint.x, waypoint.y, waypoint.z, pose.yaw)
        elif action.name in (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE):
            anchor = parse_road_waypoint(argument, town.map.roads)
            pose = drive_to(
                town.map.roads,
                pose,
                anchor,
                town.map.ground_z,
                decision_graph=action.name == GO_TO_CANDIDATE,
            ).final_pose
        if action.name == STOP_OBSERVE:
            self._ring_next.add(agent)
        else:
            self._ring_next.discard(agent)
        self._moved(agent, pose)
        return MotionOutcome(pose=pose)

    def start_observe(self, agent: str, with_ground_truth_ids: bool = False) -> StartedObservation:
        """The agent's current views: the UGV's ring right after STOP_OBSERVE, else its front
        view; the UAV's nadir view."""
        pose = self.pose(agent)
        rig = current_views(self.cameras(agent), ring=agent in self._ring_next)
        views = start_rendering(
            self.town.scene, pose, rig, with_ground_truth_ids=with_ground_truth_ids
        )
        return StartedObservation(sim_time_s=self.sim_time_s, pose=pose, finish_views=views.finish)

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        return self.start_observe(agent, with_ground_truth_ids).result()

    def close(self) -> None:
        """Forget the town and the agents."""
        self._town = None
        super().close()
