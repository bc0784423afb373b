"""The search-handoff-verify protocol as the task manager enforces it (AGOS-Bench, "AGOS-Agent",
A.1, A.2.3, A.4): per-agent action sets under the mode (AGOS-Agent or the Baseline) and the
ablation, the shared decision budget, the decision clock that says whose decision comes
next, the candidate life cycle, the annotation and confirmation budgets, the messages
decisions carry, the deterministic tools (E2A projection, RGPP planning) and the benchmark
checker.

``AgosReferee`` is the benchmark's ``protocols.referee.Referee``: the task manager asks it to
``plan`` each requested decision (a malformed or illegal one is refused and uses no budget:
the paper's parser-validator, whose repair attempts DS does not count), has the simulator
execute the planned command, then ``apply``s the outcome, whose verdict carries the
ground-truth facts the evaluator scores. Every rule with the paper's sentence:
docs/protocols/agos.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from aerialdojo.agos.episodes import AgosEpisode, ground_truth_record
from aerialdojo.agos.planning import (
    drive_to,
    parse_road_waypoint,
    plan_to_candidate,
    road_options,
    road_waypoint_id,
)
from aerialdojo.agos.projection import GroundCell, project_cell
from aerialdojo.agos.schedule import DecisionClock, decision_seconds
from aerialdojo.agos.sensors import uav_rig, ugv_ring
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    ANNOTATION_BUDGET,
    CONFIRM,
    CONFIRMATION_BUDGET,
    GO_TO_CANDIDATE,
    MESSAGE_MAX_CHARS,
    MODE_AGENT,
    MODE_BASELINE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    NO_RELIABLE_CANDIDATE,
    NO_TOOLS,
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
from aerialdojo.agos.worlds import RefereeTown
from aerialdojo.errors import InvalidActionError
from aerialdojo.events import EventKind
from aerialdojo.geometry import Pose
from aerialdojo.protocols.referee import (
    MessageKind,
    PlannedStep,
    SimCommand,
    SimOutcome,
    StepRequest,
    TeammateMessage,
    Turn,
    Verdict,
    check_agent,
)

#: Each agent's teammate.
_OTHER = {UAV: UGV, UGV: UAV}
#: The UAV's search-stage actions about candidates, which wait while a candidate is
#: verified (AGOS-Bench, A.4.1: "When no candidate is active, the UAV may use
#: MOVE_TO_UAV_WAYPOINT, ANNOTATE_CANDIDATE, NO_RELIABLE_CANDIDATE, or WAIT").
CANDIDATE_SEARCH_ACTIONS = (ANNOTATE_CANDIDATE, NO_RELIABLE_CANDIDATE)
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

    @property
    def is_active(self) -> bool:
        return self.status == STATUS_ACTIVE

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
    """C_t: candidates, agent poses, decisions per agent, the budget left, the messages
    decisions carried, and the annotations and confirmations used."""

    budget: int
    poses: dict[str, Pose]
    candidates: list[CandidateRecord] = field(default_factory=list)
    decisions: dict[str, int] = field(default_factory=lambda: {UAV: 0, UGV: 0})
    messages: list[TeammateMessage] = field(default_factory=list)
    annotations: int = 0
    confirmations: int = 0

    def messages_to(self, agent: str) -> int:
        """How many messages ``agent`` has been sent."""
        return sum(message.receiver == agent for message in self.messages)

    @property
    def used(self) -> int:
        return self.decisions[UAV] + self.decisions[UGV]

    @property
    def budget_left(self) -> int:
        return self.budget - self.used

    @property
    def active_candidate(self) -> CandidateRecord | None:
        return next((c for c in self.candidates if c.is_active), None)

    @property
    def uav_frozen(self) -> bool:
        """Whether the UAV is frozen: a candidate is active and RGPP found it serviceable
        (AGOS-Bench, "Handoff": "Once a serviceable candidate is created, the UAV decision is
        frozen during ground approach"). Without RGPP (no_rgpp, no_both) no candidate is
        serviceable, and the UAV keeps searching while the UGV approaches by road
        waypoints, as A.5's reading of those ablations needs ("the UAV has more
        opportunities to continue searching")."""
        active = self.active_candidate
        return active is not None and active.approach_anchor is not None


class AgosReferee:
    """Rules, tools and checker of one AGOS episode.

    Args:
        episode: the episode.
        town: its loaded town (ground truth: the referee lives in the task manager): an
            embedded town, or a CARLA map with the episode's spawned vehicles
            (``agos.worlds.referee_town``).
        mode: ``agent`` (AGOS-Agent) or ``baseline`` (``MODES``).
        ablation: one of ``ABLATIONS``; ``full`` under the Baseline.
        require_fresh_observation: a CONFIRM is valid only right after a STOP_OBSERVE of
            the UGV (AGOS-Bench, appendix A.2.3, "when this requirement is enabled").
        annotation_budget: ANNOTATE_CANDIDATE decisions the UAV may make (A).
        confirmation_budget: CONFIRM decisions the UGV may make; the last one ends the
            episode whatever the checker says.
        take_turns: refuse a decision out of turn (``next_agent``); False lets a test
            script decisions in any order.

    Raises:
        InvalidActionError: an unknown mode or ablation, or an ablated Baseline.
        KeyError: the episode's target is not a vehicle of the town.
    """

    def __init__(
        self,
        episode: AgosEpisode,
        town: RefereeTown,
        *,
        mode: str = MODE_AGENT,
        ablation: str = "full",
        require_fresh_observation: bool = True,
        annotation_budget: int = ANNOTATION_BUDGET,
        confirmation_budget: int = CONFIRMATION_BUDGET,
        take_turns: bool = True,
    ) -> None:
        action_set(UAV, ablation, mode)
        self.episode = episode
        self.town = town
        self.mode = mode
        self.ablation = ablation
        self.require_fresh_observation = require_fresh_observation
        self.annotation_budget = annotation_budget
        self.confirmation_budget = confirmation_budget
        self.take_turns = take_turns
        self.target = town.vehicle(episode.target_object_id)
        self.starts = dict(episode.starts)
        self.state = CoordinationState(budget=episode.action_budget, poses=dict(episode.starts))
        self.clock = DecisionClock()
        self._oracle = town.oracle()
        self._nadir = uav_rig(_NOMINAL_PIXELS, _NOMINAL_PIXELS)[0]
        self._ring = ugv_ring(_NOMINAL_PIXELS, _NOMINAL_PIXELS)
        self._last_ugv_action = ""
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
        """The STARTED record: the episode's ground truth, ``start_facts`` and the
        conditions it runs under (mode and ablation)."""
        record = ground_truth_record(self.episode, self.start_facts())
        record["conditions"] = {
            "mode": self.mode,
            "ablation": NO_TOOLS if self.mode == MODE_BASELINE else self.ablation,
        }
        return record

    def turn(self) -> Turn | None:
        """The next decision's agent, the candidate under verification, if any, how many
        messages that agent has been delivered and how many candidates there are; under
        AGOS-Agent also where its teammate is (C_t's "agent locations", eq. 4: the Baseline
        coordinates "through short natural-language messages" only, A.4.2)."""
        active = self.state.active_candidate
        agent = self.next_agent()
        teammate = self.state.poses[_OTHER[agent]]
        return Turn(
            agent=agent,
            candidate_id=active.candidate_id if active is not None else "",
            decision=self.state.used + 1,
            budget=self.state.budget,
            messages=self.state.messages_to(agent),
            candidates=len(self.state.candidates),
            teammate_position=(teammate.x, teammate.y, teammate.z)
            if self.mode == MODE_AGENT
            else None,
        )

    def opening_messages(self) -> tuple[TeammateMessage, ...]:
        """The initial exchange of positions (AGOS-Bench, "Expert Dataset", stage 2: "The UAV
        and UGV exchange their respective positions to facilitate the planning of subsequent
        search missions"), delivered before the first decision."""
        return tuple(
            self._send(agent, MessageKind.INITIAL, f"{agent.upper()} at {_xy(pose)}")
            for agent, pose in self.starts.items()
        )

    # -- planning a decision -----------------------------------------------------------

    def next_agent(self) -> str:
        """The agent whose decision comes next: of those that may decide, the one whose
        last action ends first in simulated time (``schedule.DecisionClock``), the UAV on a
        tie. While a serviceable candidate is being verified the UAV is frozen
        (``CoordinationState.uav_frozen``) and the UGV decides alone.
        """
        ready = [UGV] if self.state.uav_frozen else [UAV, UGV]
        return self.clock.next_agent(ready)

    @property
    def last_ugv_action(self) -> str:
        """The UGV's previous decision ("" before its first)."""
        return self._last_ugv_action

    def waits(self, agent: str) -> bool:
        """Whether a decision of ``agent`` now would be out of turn."""
        return not self._done and agent != self.next_agent()

    def legal_actions(self, agent: str) -> tuple[str, ...]:
        """The actions ``agent`` may take now: the UAV none while frozen, and while a
        candidate is verified without freezing it only moves and waits (AGOS-Bench, A.4.1:
        "the prompt explicitly disables new candidate annotation and allows the UAV only to
        move, wait, or send short guidance messages"); no annotation once the annotation
        budget is used."""
        if agent == UAV and self.state.uav_frozen:
            return ()
        return tuple(
            action
            for action in action_set(agent, self.ablation, self.mode)
            if self._unavailable(agent, action) is None
        )

    def _unavailable(self, agent: str, action: str) -> str | None:
        """Why an action of ``agent``'s action set cannot be taken now; None if it can."""
        if agent != UAV or action not in CANDIDATE_SEARCH_ACTIONS:
            return None
        active = self.state.active_candidate
        if active is not None:
            return f"{action} waits until candidate {active.candidate_id} is closed"
        if action == ANNOTATE_CANDIDATE and self.state.annotations >= self.annotation_budget:
            return f"the annotation budget of {self.annotation_budget} is used"
        return None

    def plan(self, request: StepRequest) -> PlannedStep:
        """Validate one decision; every accepted one is executed by the simulator.

        Raises:
            InvalidActionError: the episode ended, the agent is not in it, the action is not
                legal now (its mode or ablation lacks it, the annotation budget is used) or
                takes no magnitude, the argument names no legal waypoint, cell or candidate,
                the message is too long, or it is not the agent's turn; the message says
                which. A refused decision uses no budget.
        """
        if self._done:
            raise InvalidActionError(f"episode {self.episode.episode_id} has ended")
        check_agent(self.episode.episode_id, self.episode.agents, request.agent)
        if request.magnitude != 0.0:
            raise InvalidActionError(
                f"{request.action} takes no magnitude, got {request.magnitude:g}"
            )
        if len(request.teammate_message) > MESSAGE_MAX_CHARS:
            raise InvalidActionError(
                f"a message to the teammate is at most {MESSAGE_MAX_CHARS} characters, got "
                f"{len(request.teammate_message)}"
            )
        agent, action, argument = request.agent, request.action, request.argument
        legal = action_set(agent, self.ablation, self.mode)
        if action not in legal:
            raise InvalidActionError(
                f"{action!r} is not a {agent} action in mode {self.mode}, ablation "
                f"{self.ablation}; legal: {', '.join(legal)}"
            )
        active = self.state.active_candidate
        if agent == UAV and self.state.uav_frozen:
            assert active is not None
            raise InvalidActionError(
                f"the UAV is frozen while candidate {active.candidate_id} is being verified"
            )
        unavailable = self._unavailable(agent, action)
        if unavailable is not None:
            raise InvalidActionError(unavailable)
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
            self.project(argument, pose)  # raises on a bad cell
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
        if self.take_turns and self.waits(agent):
            raise InvalidActionError(
                f"not the {agent}'s turn: the {self.next_agent()} decides first "
                "(announced on /agos/turn)"
            )
        command = SimCommand(agent=agent, action=action, argument=sim_argument)
        return PlannedStep(request=request, command=command)

    def project(self, cell: str, pose: Pose) -> GroundCell:
        """The candidate an annotation of ``cell`` at ``pose`` makes: E2A of the cell;
        without E2A the UAV's ground footprint (AGOS-Bench, appendix A.5, no_e2a).

        Raises:
            InvalidActionError: a bad cell label.
        """
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
            The verdict: STOPPED after a valid CONFIRM and after a false one that used the
            last of the confirmation budget (the agents' own decision ends the episode; a
            false CONFIRM with budget left closes the candidate and search resumes),
            BUDGET_EXHAUSTED after the last decision of the budget, STEP otherwise.
            ``facts`` always hold ``agent``, ``action``, ``decision`` (the agent's 1-based
            decision count) and ``ends_s`` (when its action ends on the decision clock),
            plus per action: ``uav_visible`` (UAV: the target is oracle-visible in the view
            this decision produced), ``candidate`` (created or closed), ``path`` (UGV
            drives: the fine-node points driven), ``ground_support`` (STOP_OBSERVE),
            ``verdict`` (CONFIRM), ``message`` (the text a decision sent its teammate).
        """
        if outcome is None or planned.command is None:
            raise InvalidActionError("every AGOS decision is executed by the simulator")
        request, pose = planned.request, outcome.pose
        state = self.state
        before = state.poses[request.agent]
        state.poses[request.agent] = pose
        state.decisions[request.agent] += 1
        froze_uav = state.uav_frozen
        facts: dict[str, Any] = {
            "agent": request.agent,
            "action": request.action,
            "decision": state.decisions[request.agent],
        }
        changed: CandidateRecord | None = None
        kind, reason = EventKind.STEP, ""
        moved_m = math.hypot(pose.x - before.x, pose.y - before.y)
        if request.agent == UAV:
            facts["uav_visible"] = self.uav_sees_target(pose)
            if request.action == ANNOTATE_CANDIDATE:
                changed = self._annotate(request.argument, pose)
                facts["candidate"] = changed.to_json()
        else:
            active = state.active_candidate
            if request.action in (MOVE_TO_ROAD_WAYPOINT, GO_TO_CANDIDATE):
                anchor = parse_road_waypoint(planned.command.argument, self.town.map.roads)
                drive = drive_to(
                    self.town.map.roads,
                    before,
                    anchor,
                    self.town.map.ground_z,
                    decision_graph=request.action == GO_TO_CANDIDATE,
                )
                facts["path"] = [list(point) for point in drive.points[1:]]
                moved_m = drive.length_m
                if request.action == GO_TO_CANDIDATE and active is not None:
                    active.arrived = True
            elif request.action == STOP_OBSERVE:
                facts["ground_support"] = self.ring_sees_target(pose)
            elif request.action == REJECT and active is not None:
                active.status = STATUS_REJECTED
                changed = active
            elif request.action == CONFIRM:
                kind, reason, changed = self._confirm(pose, facts, active)
            if changed is not None:
                facts["candidate"] = changed.to_json()
            self._last_ugv_action = request.action
        self.clock.advance(request.agent, decision_seconds(request.agent, moved_m))
        facts["ends_s"] = round(self.clock.free_at[request.agent], 3)
        if froze_uav and not state.uav_frozen:
            # The frozen UAV resumes its search when the UGV closes the candidate.
            self.clock.hold_until(UAV, self.clock.free_at[UGV])
        messages = []
        if request.teammate_message:
            facts["message"] = request.teammate_message
            messages.append(
                self._send(request.agent, MessageKind.FREE_TEXT, request.teammate_message)
            )
        notice = self._notice(request, pose, changed)
        if notice is not None:
            messages.append(notice)
        if kind is EventKind.STEP and state.used >= state.budget:
            kind, reason = EventKind.BUDGET_EXHAUSTED, f"decision budget of {state.budget} used"
        self._done = kind is not EventKind.STEP
        return Verdict(
            kind=kind, reason=reason, facts=facts, candidate=changed, messages=tuple(messages)
        )

    def _confirm(
        self, pose: Pose, facts: dict[str, Any], active: CandidateRecord | None
    ) -> tuple[EventKind, str, CandidateRecord | None]:
        """Judge a CONFIRM: its verdict goes into ``facts``; returns how the decision ends
        and the candidate it closed."""
        self.state.confirmations += 1
        verdict = self._check(pose, fresh=self._last_ugv_action == STOP_OBSERVE)
        facts["verdict"] = verdict
        left = self.confirmation_budget - self.state.confirmations
        if verdict["valid"]:
            kind, reason = EventKind.STOPPED, "valid CONFIRM"
        elif left <= 0:
            kind, reason = EventKind.STOPPED, "false CONFIRM: " + verdict["why"]
        else:
            kind = EventKind.STEP
            reason = f"false CONFIRM: {verdict['why']}; {left} confirmation(s) left"
        if active is not None:
            # Confirmed when the CONFIRM ends the episode; a false one with budget left
            # rejects the candidate, and the search resumes.
            active.status = STATUS_CONFIRMED if kind is EventKind.STOPPED else STATUS_REJECTED
        return kind, reason, active

    def _send(
        self, sender: str, kind: MessageKind, text: str, candidate_id: str = ""
    ) -> TeammateMessage:
        """A message from ``sender`` to the other agent, numbered for its receiver and kept
        in C_t."""
        receiver = _OTHER[sender]
        message = TeammateMessage(
            sender=sender,
            receiver=receiver,
            text=text,
            sequence=self.state.messages_to(receiver) + 1,
            kind=kind,
            candidate_id=candidate_id,
        )
        self.state.messages.append(message)
        return message

    def _notice(
        self, request: StepRequest, pose: Pose, changed: CandidateRecord | None
    ) -> TeammateMessage | None:
        """The notice of AGOS-Agent's search-handoff-verify workflow a decision causes, sent
        on its agent's behalf: the UAV's inspection request for a new serviceable candidate,
        the UGV's arrival at a candidate and its confirmation signal after a CONFIRM or
        REJECT (AGOS-Bench, "Expert Dataset", stage 2, and A.4.1, "Arrival"). The Baseline
        has no candidates; its agents say what they want in their own messages."""
        if self.mode != MODE_AGENT:
            return None
        action = request.action
        if action == ANNOTATE_CANDIDATE and changed is not None and changed.is_active:
            return self._send(
                UAV,
                MessageKind.INSPECTION_REQUEST,
                f"suspected target at {_xy(changed.center)} (cell {changed.grid_cell}); please "
                f"verify {changed.candidate_id}",
                changed.candidate_id,
            )
        if action == GO_TO_CANDIDATE:
            return self._send(
                UGV,
                MessageKind.ARRIVAL,
                f"UGV arrived near {request.argument} at {_xy(pose)}",
                request.argument,
            )
        if action in (CONFIRM, REJECT):
            verdict = "confirmed" if action == CONFIRM else "rejected"
            about = changed.candidate_id if changed is not None else ""
            return self._send(
                UGV,
                MessageKind.CONFIRMATION,
                f"UGV {verdict} {about or 'the vehicle here'} at {_xy(pose)}",
                about,
            )
        return None

    def _annotate(self, cell: str, pose: Pose) -> CandidateRecord:
        self.state.annotations += 1
        ground = self.project(cell, pose)
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

    def _check(self, pose: Pose, *, fresh: bool) -> dict[str, Any]:
        """The benchmark checker of a CONFIRM at ``pose`` (AGOS-Bench, appendix A.2.3): a
        fresh STOP_OBSERVE context (when required), the target visible in the six views,
        within the distance threshold, in line of sight. ``fresh``: the UGV's previous
        decision was STOP_OBSERVE."""
        eye = np.asarray((pose.x, pose.y, pose.z))
        distance = math.dist(eye, self.target.centroid)
        visible = self.ring_sees_target(pose)
        line_of_sight = self._oracle.line_of_sight(eye, self.target)
        within = distance <= self.episode.success_radius_m
        stale = self.require_fresh_observation and not fresh
        why = ", ".join(
            problem
            for problem, failed in (
                ("no fresh STOP_OBSERVE before it", stale),
                ("target not visible in the six views", not visible),
                (f"target {distance:.1f} m away", not within),
                ("no line of sight", not line_of_sight),
            )
            if failed
        )
        return {
            "valid": not stale and visible and within and line_of_sight,
            "fresh_observation": fresh,
            "distance_m": round(distance, 3),
            "visible": visible,
            "line_of_sight": line_of_sight,
            "why": why,
        }

    def start_facts(self) -> dict[str, Any]:
        """Facts of the episode start, for the STARTED record."""
        return {
            "uav_start_visible": self.uav_start_visible,
            "mode": self.mode,
            "ablation": self.ablation,
            "annotation_budget": self.annotation_budget,
            "confirmation_budget": self.confirmation_budget,
            "require_fresh_observation": self.require_fresh_observation,
        }


def _xy(point: Pose | tuple[float, ...]) -> str:
    """``(x, y)`` of a pose or point, to one decimal, as notices write places."""
    x, y = (point.x, point.y) if isinstance(point, Pose) else point[:2]
    return f"({x:.1f}, {y:.1f})"
