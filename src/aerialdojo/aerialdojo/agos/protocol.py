"""The search-handoff-verify protocol as the task manager enforces it (AGOS-Bench, "AGOS-Agent",
A.1, A.2.3): per-agent action sets, the shared decision budget, the candidate life cycle, the
deterministic tools (E2A projection, RGPP planning) and the benchmark checker.

``AgosReferee`` is the benchmark's ``protocols.referee.Referee``: the task manager asks it to
``plan`` each requested decision (refusals raise and use no budget), has the simulator
execute the planned command, then ``apply``s the outcome, whose verdict carries the
ground-truth facts the evaluator scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aerialdojo.agos.episodes import AgosEpisode, ground_truth_record
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.planning import (
    drive_to,
    parse_road_waypoint,
    plan_to_candidate,
    road_options,
    road_waypoint_id,
)
from aerialdojo.agos.projection import GroundCell, project_cell
from aerialdojo.agos.sensors import uav_rig, ugv_ring
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    REJECT,
    STATUS_ACTIVE,
    STATUS_CONFIRMED,
    STATUS_REJECTED,
    STOP_OBSERVE,
    UAV,
    UGV,
    action_set,
    uses_e2a,
    uses_rgpp,
)
from aerialdojo.errors import InvalidActionError
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose
from aerialdojo.protocols.referee import (
    PlannedStep,
    SimCommand,
    SimOutcome,
    StepRequest,
    Turn,
    Verdict,
    check_agent,
)

#: Nominal nadir image for the tools; E2A and visibility depend on the FOV, not the size.
_NOMINAL_PIXELS = 100


@dataclass
class CandidateRecord:
    """One candidate region in C_t.

    Attributes:
        candidate_id: ``C001``, ``C002`` ... in proposal order.
        grid_cell: the annotated cell of the UAV's nadir view.
        polygon: ground footprint, map frame.
        center: where the candidate is, map frame (the E2A cell centre, or the UAV's ground
            footprint without E2A).
        status: ``active``, ``confirmed`` or ``rejected``.
        approach_anchor: RGPP's approach anchor; None when unserviceable or without RGPP.
        arrived: the UGV reached the approach anchor.
    """

    candidate_id: str
    grid_cell: str
    polygon: tuple[tuple[float, float], ...]
    center: tuple[float, float, float]
    status: str = STATUS_ACTIVE
    approach_anchor: int | None = None
    arrived: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "candidate_id": self.candidate_id,
            "grid_cell": self.grid_cell,
            "polygon": [list(vertex) for vertex in self.polygon],
            "center": list(self.center),
            "status": self.status,
        }


@dataclass
class CoordinationState:
    """C_t: candidates, agent poses, decisions per agent and the budget left."""

    budget: int
    poses: dict[str, Pose]
    candidates: list[CandidateRecord] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=lambda: {UAV: 0, UGV: 0})

    @property
    def used(self) -> int:
        return self.decisions[UAV] + self.decisions[UGV]

    @property
    def budget_left(self) -> int:
        return self.budget - self.used

    @property
    def active_candidate(self) -> CandidateRecord | None:
        return next((c for c in self.candidates if c.status == STATUS_ACTIVE), None)


class AgosReferee:
    """Rules, tools and checker of one AGOS episode.

    Args:
        episode: the episode.
        town: its loaded town (ground truth: the referee lives in the task manager).
        ablation: one of ``ABLATIONS``.
        require_fresh_observation: CONFIRM and REJECT need STOP_OBSERVE as the UGV's
            previous decision (AGOS-Bench, appendix A.2.3, "when this requirement is enabled").
        take_turns: refuse a decision out of turn (``next_agent``); False lets a test
            script decisions in any order.

    Raises:
        InvalidActionError: an unknown ablation.
        KeyError: the episode's target is not a vehicle of the town.
    """

    def __init__(
        self,
        episode: AgosEpisode,
        town: Town,
        *,
        ablation: str = "full",
        require_fresh_observation: bool = True,
        take_turns: bool = True,
    ) -> None:
        action_set(UAV, ablation)
        self.episode = episode
        self.town = town
        self.ablation = ablation
        self.require_fresh_observation = require_fresh_observation
        self.take_turns = take_turns
        self.target = town.vehicle(episode.target_object_id)
        self.starts = dict(episode.starts)
        self.state = CoordinationState(budget=episode.action_budget, poses=dict(episode.starts))
        self._oracle = TownOracle(town.scene)
        self._nadir = uav_rig(_NOMINAL_PIXELS, _NOMINAL_PIXELS)[0]
        self._ring = ugv_ring(_NOMINAL_PIXELS, _NOMINAL_PIXELS)
        self._last_ugv_action = ""
        self._last_agent: str | None = None
        self._done = False
        self.uav_start_visible = self.uav_sees_target(episode.uav_start)

    # -- oracle ------------------------------------------------------------------------

    def uav_sees_target(self, pose: Pose) -> bool:
        """Whether the target is oracle-visible in the UAV's nadir view at ``pose``."""
        return self._oracle.visible_in_views(pose, [self._nadir], self.target)

    def ring_sees_target(self, pose: Pose) -> bool:
        """Whether the target appears in the UGV's six views within the success radius."""
        return self._oracle.visible_in_views(
            pose, self._ring, self.target, self.episode.success_radius_m
        )

    # -- the Referee protocol ---------------------------------------------------------

    @property
    def scored_pose(self) -> Pose:
        """The UGV's pose: AGOS scores the ground vehicle's path."""
        return self.state.poses[UGV]

    @property
    def steps_used(self) -> int:
        return self.state.used

    @property
    def steps_left(self) -> int:
        return max(self.state.budget_left, 0)

    def start_record(self) -> dict[str, Any]:
        """The STARTED record: the episode's ground truth and ``start_facts``."""
        return ground_truth_record(self.episode, self.start_facts())

    def turn(self) -> Turn | None:
        """The next decision's agent and the candidate under verification, if any."""
        active = self.state.active_candidate
        return Turn(
            agent=self.next_agent(),
            candidate_id=active.candidate_id if active is not None else "",
            decision=self.state.used + 1,
            budget=self.state.budget,
        )

    # -- planning a decision -----------------------------------------------------------

    def next_agent(self) -> str:
        """The agent whose decision comes next.

        While both agents can decide they alternate, the UAV first, so that a run does not
        depend on which process happens to be faster; while a candidate is being verified
        the UGV decides alone (the UAV is frozen).
        """
        if self.state.active_candidate is not None:
            return UGV
        return UGV if self._last_agent == UAV else UAV

    def waits(self, agent: str) -> bool:
        """Whether a decision of ``agent`` now would be out of turn."""
        return not self._done and agent != self.next_agent()

    def legal_actions(self, agent: str) -> tuple[str, ...]:
        """The actions ``agent`` may take now (the UAV none while a candidate is verified)."""
        if agent == UAV and self.state.active_candidate is not None:
            return ()
        return action_set(agent, self.ablation)

    def plan(self, request: StepRequest) -> PlannedStep:
        """Validate one decision; every accepted one is executed by the simulator.

        Raises:
            InvalidActionError: the episode ended, the agent is not in it, the action is not
                legal now or takes no magnitude, the argument names no legal waypoint, cell
                or candidate, or it is not the agent's turn; the message says which. A
                refused decision uses no budget.
        """
        if self._done:
            raise InvalidActionError(f"episode {self.episode.episode_id} has ended")
        check_agent(self.episode.episode_id, self.episode.agents, request.agent)
        if request.magnitude != 0.0:
            raise InvalidActionError(
                f"{request.action} takes no magnitude, got {request.magnitude:g}"
            )
        agent, action, argument = request.agent, request.action, request.argument
        legal = action_set(agent, self.ablation)
        if action not in legal:
            raise InvalidActionError(
                f"{action!r} is not a {agent} action here; legal: {', '.join(legal)}"
            )
        active = self.state.active_candidate
        if agent == UAV and active is not None:
            raise InvalidActionError(
                f"the UAV is frozen while candidate {active.candidate_id} is being verified"
            )
        pose = self.state.poses[agent]
        sim_argument = argument
        if action == MOVE_TO_UAV_WAYPOINT:
            options = self.town.map.uav_grid.options(pose.x, pose.y, self.episode.region)
            if argument not in {w.waypoint_id for w in options}:
                raise InvalidActionError(
                    f"UAV waypoint {argument!r} is not a legal option; options: "
                    f"{', '.join(w.waypoint_id for w in options)}"
                )
        elif action == ANNOTATE_CANDIDATE:
            self._project(argument, pose)  # raises on a bad cell
        elif action == MOVE_TO_ROAD_WAYPOINT:
            roads = road_options(self.town.map.roads, pose)
            if argument not in {o.waypoint_id for o in roads}:
                raise InvalidActionError(
                    f"road waypoint {argument!r} is not a legal option; options: "
                    f"{', '.join(o.waypoint_id for o in roads)}"
                )
        elif action == GO_TO_CANDIDATE:
            if active is None or argument != active.candidate_id:
                raise InvalidActionError(
                    f"candidate {argument!r} is not active; active: "
                    f"{active.candidate_id if active else 'none'}"
                )
            plan = plan_to_candidate(self.town.map.roads, pose, active.polygon)
            if plan is None:
                raise InvalidActionError(f"candidate {argument} has no reachable approach node")
            sim_argument = road_waypoint_id(plan.anchor)
        elif (
            action in (CONFIRM, REJECT)
            and self.require_fresh_observation
            and self._last_ugv_action != STOP_OBSERVE
        ):
            raise InvalidActionError(f"{action} needs a fresh STOP_OBSERVE first")
        if self.take_turns and self.waits(agent):
            raise InvalidActionError(
                f"not the {agent}'s turn: the {self.next_agent()} decides first "
                "(announced on /agos/turn)"
            )
        command = SimCommand(agent=agent, action=action, argument=sim_argument)
        return PlannedStep(request=request, command=command)

    def _project(self, cell: str, pose: Pose) -> GroundCell:
        """E2A of ``cell``; without E2A the UAV's ground footprint (AGOS-Bench, appendix
        A.5, no_e2a)."""
        ground = self.town.map.ground_z
        intrinsics = self._nadir.intrinsics()
        pixels = _NOMINAL_PIXELS
        projected = project_cell(
            cell, pose, intrinsics, width=pixels, height=pixels, ground_z=ground
        )
        if uses_e2a(self.ablation):
            return projected
        footprint = project_cell(
            "C3", pose, intrinsics, width=pixels, height=pixels, ground_z=ground
        )
        return GroundCell(projected.cell, footprint.polygon, (pose.x, pose.y, ground))

    # -- applying an executed decision -------------------------------------------------

    def apply(self, planned: PlannedStep, outcome: SimOutcome | None) -> Verdict:
        """Account an executed decision; ``outcome.pose`` is the agent's ground-truth pose
        after it.

        Returns:
            The verdict: STOPPED after a CONFIRM (valid or not: the agents' own decision
            ends the episode), BUDGET_EXHAUSTED after the last decision of the budget, STEP
            otherwise. ``facts`` always hold ``agent``, ``action`` and ``decision`` (the
            agent's 1-based decision count), plus per action: ``uav_visible`` (UAV: the
            target is oracle-visible in the view this decision produced), ``candidate``
            (created or closed), ``path`` (UGV drives: the fine-node points driven),
            ``ground_support`` (STOP_OBSERVE), ``verdict`` (CONFIRM).
        """
        if outcome is None or planned.command is None:
            raise InvalidActionError("every AGOS decision is executed by the simulator")
        request, pose = planned.request, outcome.pose
        state = self.state
        before = state.poses[request.agent]
        state.poses[request.agent] = pose
        state.decisions[request.agent] += 1
        self._last_agent = request.agent
        facts: dict[str, Any] = {
            "agent": request.agent,
            "action": request.action,
            "decision": state.decisions[request.agent],
        }
        changed: CandidateRecord | None = None
        kind, reason = EventKind.STEP, ""
        if request.agent == UAV:
            facts["uav_visible"] = self.uav_sees_target(pose)
            if request.action == ANNOTATE_CANDIDATE:
                changed = self._annotate(request.argument, pose)
                facts["candidate"] = changed.to_json()
        else:
            active = state.active_candidate
            if request.action in (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE):
                anchor = parse_road_waypoint(planned.command.argument, self.town.map.roads)
                drive = drive_to(self.town.map.roads, before, anchor, self.town.map.ground_z)
                facts["path"] = [list(point) for point in drive.points[1:]]
                if request.action == GO_TO_CANDIDATE and active is not None:
                    active.arrived = True
            elif request.action == STOP_OBSERVE:
                facts["ground_support"] = self.ring_sees_target(pose)
            elif request.action == REJECT and active is not None:
                active.status = STATUS_REJECTED
                changed = active
            elif request.action == CONFIRM:
                verdict = self._check(pose)
                facts["verdict"] = verdict
                kind = EventKind.STOPPED
                reason = "valid CONFIRM" if verdict["valid"] else "false CONFIRM: " + verdict["why"]
                if active is not None:
                    active.status = STATUS_CONFIRMED
                    changed = active
            if changed is not None:
                facts["candidate"] = changed.to_json()
            self._last_ugv_action = request.action
        if kind is EventKind.STEP and state.used >= state.budget:
            kind, reason = EventKind.BUDGET_EXHAUSTED, f"decision budget of {state.budget} used"
        self._done = kind is not EventKind.STEP
        return Verdict(kind=kind, reason=reason, facts=facts, candidate=changed)

    def _annotate(self, cell: str, pose: Pose) -> CandidateRecord:
        ground = self._project(cell, pose)
        candidate = CandidateRecord(
            candidate_id=f"C{len(self.state.candidates) + 1:03d}",
            grid_cell=ground.cell,
            polygon=ground.polygon,
            center=ground.center,
        )
        if uses_rgpp(self.ablation):
            plan = plan_to_candidate(self.town.map.roads, self.state.poses[UGV], ground.polygon)
            if plan is None:
                # Not serviceable: recorded (it was proposed) but closed, so search resumes.
                candidate.status = STATUS_REJECTED
            else:
                candidate.approach_anchor = plan.anchor
        self.state.candidates.append(candidate)
        return candidate

    def _check(self, pose: Pose) -> dict[str, Any]:
        """The benchmark checker of a CONFIRM at ``pose`` (AGOS-Bench, appendix A.2.3)."""
        eye = np.asarray((pose.x, pose.y, pose.z))
        distance = math.dist(eye, self.target.centroid)
        visible = self.ring_sees_target(pose)
        line_of_sight = self._oracle.line_of_sight(eye, self.target)
        within = distance <= self.episode.success_radius_m
        why = ", ".join(
            problem
            for problem, failed in (
                ("target not visible in the six views", not visible),
                (f"target {distance:.1f} m away", not within),
                ("no line of sight", not line_of_sight),
            )
            if failed
        )
        return {
            "valid": visible and within and line_of_sight,
            "distance_m": round(distance, 3),
            "visible": visible,
            "line_of_sight": line_of_sight,
            "why": why,
        }

    def start_facts(self) -> dict[str, Any]:
        """Facts of the episode start, for the STARTED record."""
        return {
            "uav_budget": self.episode.action_budget,
            "uav_start_visible": self.uav_start_visible,
            "ablation": self.ablation,
        }
