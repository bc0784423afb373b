"""Expert episodes (AGOS-Bench, "Expert Dataset", stages 1 and 2): the mTSP coverage routes
played as the decisions and messages of an expert team, through the referee itself, so that
every decision is one the benchmark accepts.

Stage 1: the vehicles follow their coverage routes (``mtsp``) until one of them first comes
within 50 m of the target (t_f). If the UAV does, it hands the target to the UGV and "an
additional path segment from the UGV's current position to the candidate region is
appended": the UGV drives there (GO_TO_CANDIDATE, then on to an anchor whose six views see
the target) and arrives at t_arr; if the UGV does, it drives to such an anchor itself.
Stage 2: route legs become legal decisions (3x3 grid moves for the UAV, road options for
the UGV), and at arrival the UGV decides STOP_OBSERVE and CONFIRM, with the paper's three
messages: the initial exchange of positions, the UAV's inspection request and the UGV's
confirmation signal. On Hard episodes the UAV first marks a look-alike it passes, and the
UGV rejects it after observing, before the search goes on.

The expert reads ground truth (where the target and its look-alikes are): it makes data and
proves the protocol playable, and is never an agent under evaluation. Stage 3 (images every
10 m between waypoints) is not made: the simulator renders any view on demand, and this
project trains nothing on stored images.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from aerialdojo.agos.episodes import AgosEpisode
from aerialdojo.agos.generate import verifying_anchors
from aerialdojo.agos.grid import CELL_COLUMNS, CELL_ROWS, cell_label
from aerialdojo.agos.mtsp import (
    DISCOVERY_RADIUS_M,
    Solution,
    VehicleGraph,
    region_problem,
    solve_greedy,
)
from aerialdojo.agos.planning import (
    drive_to,
    parse_road_waypoint,
    polygon_distance,
    road_options,
    road_waypoint_id,
)
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    REJECT,
    STOP_OBSERVE,
    UAV,
    UGV,
    WAIT,
)
from aerialdojo.geometry import Pose
from aerialdojo.protocols.referee import PlannedStep, SimOutcome, StepRequest, Verdict
from aerialdojo.sim.annotations import TargetObject

Solver = Callable[[VehicleGraph, VehicleGraph], Solution]


@dataclass(frozen=True)
class ExpertDecision:
    """One decision of the expert team, as the referee accepted it.

    Attributes:
        agent, action, argument: the decision.
        message: the message it carried to the teammate ("" none).
        ends_s: when its action ends on the decision clock.
    """

    agent: str
    action: str
    argument: str = ""
    message: str = ""
    ends_s: float = 0.0


@dataclass(frozen=True)
class ExpertEpisode:
    """An expert episode.

    Attributes:
        decisions: every decision in the order made.
        discovered_by: the vehicle that first came within 50 m of the target; None if none
            did within the budget.
        discovery_s: t_f, when it did.
        arrival_s: t_arr, when the UGV stopped to observe the target.
        verdict: how the last decision ended the episode.
    """

    decisions: tuple[ExpertDecision, ...]
    discovered_by: str | None
    discovery_s: float | None
    arrival_s: float | None
    verdict: Verdict

    @property
    def succeeded(self) -> bool:
        """The episode ended with a CONFIRM the checker accepted."""
        facts = self.verdict.facts or {}
        return bool(facts.get("verdict", {}).get("valid"))


def target_cell(referee: AgosReferee, pose: Pose, thing: TargetObject) -> str | None:
    """The nadir grid cell whose ground polygon holds ``thing``, seen from ``pose``."""
    x, y = thing.centroid[:2]
    for row in range(len(CELL_ROWS)):
        for column in range(CELL_COLUMNS):
            cell = cell_label(row, column)
            if polygon_distance(x, y, referee.project(cell, pose).polygon) == 0.0:
                return cell
    return None


class _Expert:
    """Plays one episode: each turn the referee names, the expert of that agent decides."""

    def __init__(self, town: Town, episode: AgosEpisode, solve: Solver) -> None:
        self.town, self.episode = town, episode
        self.referee = AgosReferee(episode, town)
        uav, ugv = episode.uav_start, episode.ugv_start
        uav_graph, ugv_graph = region_problem(
            town.map, episode.region, (uav.x, uav.y), (ugv.x, ugv.y)
        )
        routes = solve(uav_graph, ugv_graph).routes
        grid = town.map.uav_grid
        self.uav_route = deque(
            grid.nearest_active(float(x), float(y), episode.region)
            for x, y in (uav_graph.nodes[node] for node in routes[uav_graph.name].nodes[1:])
        )
        roads = town.map.roads
        self.ugv_route = deque(
            roads.nearest_anchor(float(x), float(y))
            for x, y in (ugv_graph.nodes[node] for node in routes[ugv_graph.name].nodes[1:])
        )
        target = self.referee.target
        self.look_alikes = [town.vehicle(vehicle_id) for vehicle_id in episode.distractor_ids]
        self.verifiers = set(verifying_anchors(town, target, episode.success_radius_m))
        self.marked: list[TargetObject] = []
        self.discovered_by: str | None = None
        self.discovery_s: float | None = None
        self.arrival_s: float | None = None
        self.greeted: set[str] = set()

    # -- the UAV ------------------------------------------------------------------------

    def uav(self, pose: Pose) -> StepRequest:
        target = self.referee.target
        if self._near(pose, target) and target not in self.marked:
            self._discovered(UAV)
            return self._mark(pose, target)
        wrong = next(
            (v for v in self.look_alikes if self._near(pose, v) and v not in self.marked), None
        )
        if wrong is not None and not self.marked and self.discovered_by is None:
            return self._mark(pose, wrong)  # Hard: the wrong candidate first
        grid, region = self.town.map.uav_grid, self.episode.region
        here = grid.nearest_active(pose.x, pose.y, region)
        while self.uav_route and self.uav_route[0] is here:
            self.uav_route.popleft()
        if not self.uav_route or self.discovered_by is not None:
            return self._request(UAV, WAIT, pose=pose)
        goal = self.uav_route[0]
        step = min(
            grid.options(pose.x, pose.y, region),
            key=lambda w: math.dist((w.x, w.y), (goal.x, goal.y)),
        )
        return self._request(UAV, MOVE_TO_UAV_WAYPOINT, step.waypoint_id, pose=pose)

    def _mark(self, pose: Pose, thing: TargetObject) -> StepRequest:
        cell = target_cell(self.referee, pose, thing)
        if cell is None:
            return self._request(UAV, WAIT, pose=pose)
        self.marked.append(thing)
        number = len(self.referee.state.candidates) + 1
        x, y = thing.centroid[:2]
        request = f"suspected target at ({x:.1f}, {y:.1f}); please verify C{number:03d}"
        return self._request(UAV, ANNOTATE_CANDIDATE, cell, pose=pose, message=request)

    # -- the UGV ------------------------------------------------------------------------

    def ugv(self, pose: Pose) -> StepRequest:
        referee, roads = self.referee, self.town.map.roads
        active = referee.state.active_candidate
        if self._near(pose, referee.target) and self.discovered_by is None:
            self._discovered(UGV)
        last = referee.last_ugv_action
        if last == STOP_OBSERVE:
            if referee.ring_sees_target(pose):
                signal = f"confirmed the target from ({pose.x:.1f}, {pose.y:.1f})"
                return self._request(UGV, CONFIRM, pose=pose, message=signal)
            return self._request(UGV, REJECT, pose=pose, message="no match here; rejected")
        if active is not None and not active.arrived:
            return self._request(UGV, GO_TO_CANDIDATE, active.candidate_id, pose=pose)
        here = roads.nearest_anchor(pose.x, pose.y)
        if active is not None and not self._holds_target(active.polygon):
            return self._request(UGV, STOP_OBSERVE, pose=pose)  # look, then reject it
        if active is not None or self.discovered_by is not None:
            if here in self.verifiers:
                self.arrival_s = referee.clock.free_at[UGV]
                return self._request(UGV, STOP_OBSERVE, pose=pose)
            return self._drive_towards(pose, self._nearest_verifier(here))
        while self.ugv_route and self.ugv_route[0] == here:
            self.ugv_route.popleft()
        if not self.ugv_route:
            return self._request(UGV, WAIT, pose=pose)
        return self._drive_towards(pose, self.ugv_route[0])

    def _drive_towards(self, pose: Pose, goal: int) -> StepRequest:
        """The road option that gets furthest along the shortest route to ``goal``."""
        roads = self.town.map.roads
        remaining = roads.decision_distances
        options = road_options(roads, pose)
        best = min(options, key=lambda o: remaining(o.anchor).get(goal, math.inf) - o.distance_m)
        return self._request(UGV, MOVE_TO_ROAD_WAYPOINT, road_waypoint_id(best.anchor), pose=pose)

    def _nearest_verifier(self, here: int) -> int:
        reach = self.town.map.roads.decision_distances(here)
        return min(self.verifiers, key=lambda anchor: reach.get(anchor, math.inf))

    def _holds_target(self, polygon: tuple[tuple[float, float], ...]) -> bool:
        x, y = self.referee.target.centroid[:2]
        return polygon_distance(x, y, polygon) <= DISCOVERY_RADIUS_M

    # -- shared -------------------------------------------------------------------------

    def _near(self, pose: Pose, thing: TargetObject) -> bool:
        return math.dist((pose.x, pose.y), thing.centroid[:2]) <= DISCOVERY_RADIUS_M

    def _discovered(self, agent: str) -> None:
        if self.discovered_by is None:
            self.discovered_by, self.discovery_s = agent, self.referee.clock.free_at[agent]

    def _request(
        self, agent: str, action: str, argument: str = "", *, pose: Pose, message: str = ""
    ) -> StepRequest:
        if agent not in self.greeted and not message:
            # Initial communication: the two exchange their positions.
            self.greeted.add(agent)
            message = f"{agent.upper()} at ({pose.x:.1f}, {pose.y:.1f})"
        return StepRequest(agent=agent, action=action, argument=argument, teammate_message=message)

    def play(self) -> ExpertEpisode:
        referee, decisions = self.referee, []
        while True:
            agent = referee.next_agent()
            pose = referee.state.poses[agent]
            request = self.uav(pose) if agent == UAV else self.ugv(pose)
            planned = referee.plan(request)
            verdict = referee.apply(planned, SimOutcome(pose=self._moved(planned)))
            decisions.append(
                ExpertDecision(
                    agent=agent,
                    action=request.action,
                    argument=request.argument,
                    message=request.teammate_message,
                    ends_s=referee.clock.free_at[agent],
                )
            )
            if verdict.done:
                return ExpertEpisode(
                    tuple(decisions), self.discovered_by, self.discovery_s, self.arrival_s, verdict
                )

    def _moved(self, planned: PlannedStep) -> Pose:
        """Where the simulator puts the agent after ``planned`` (``AgosBackend.execute``)."""
        command = planned.command
        assert command is not None  # every AGOS decision is executed
        pose = self.referee.state.poses[command.agent]
        town = self.town.map
        if command.action == MOVE_TO_UAV_WAYPOINT:
            waypoint = town.uav_grid.waypoint(command.argument)
            return Pose(waypoint.x, waypoint.y, waypoint.z, pose.yaw)
        if command.action in (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE):
            anchor = parse_road_waypoint(command.argument, town.roads)
            return drive_to(
                town.roads,
                pose,
                anchor,
                town.ground_z,
                decision_graph=command.action == GO_TO_CANDIDATE,
            ).final_pose
        return pose


def expert_episode(town: Town, episode: AgosEpisode, solve: Solver = solve_greedy) -> ExpertEpisode:
    """Play the expert team through ``episode`` on ``town`` (see the module doc).

    Args:
        town: the loaded town.
        episode: the episode.
        solve: the coverage solver (``mtsp.solve_milp`` for the exact mTSP; the greedy
            baseline is the default because it answers in milliseconds on any region).
    """
    return _Expert(town, episode, solve).play()
