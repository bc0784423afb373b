"""The AGOS-Bench model agents (appendix A.4): one vision-language model per role, the UAV and
the UGV, each asked for one JSON decision per turn under its role prompt.

AGOS-Agent (A.4.1) rebuilds the user prompt at every decision: the UAV's with its status,
task memory, teammate messages and waypoint options over the grid-overlaid aerial image; the
UGV's switching between stages (free exploration, candidate reminder, arrival, six-view
verification, post-rejection search). The Baseline (A.4.2) has no candidate tools and no
task memory: the UAV classifies its evidence and sends its position as a search anchor, the
UGV drives towards the anchor it reads from the UAV's messages. Which one an agent runs is
the task's ``mode`` (``AgosTask.baseline``). A reply's message goes with the decision's step;
the prompt shows the messages the teammate's decisions carried, as the task manager
delivered and the turn counted them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from aerialdojo.agents.vlm.chat import Message
from aerialdojo.agents.vlm.config import VlmSettings
from aerialdojo.agents.vlm.images import encode_rgb, labelled_image
from aerialdojo.agents.vlm.parsing import AgosReply, parse_agos_reply
from aerialdojo.agents.vlm.prompts import PromptSet, prompt_directory
from aerialdojo.agents.vlm.session import ModelSession
from aerialdojo.agos.grid import CELL_COLUMNS, CELL_ROWS, cell_label, overlay_grid
from aerialdojo.agos.planning import road_options, road_waypoint_id
from aerialdojo.agos.policies import AgosObservation, AgosTask, Decision, search_anchor
from aerialdojo.agos.sensors import UAV_VIEW, UGV_FRONT_VIEW
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    ARGUMENT_ACTIONS,
    CONFIRM,
    GO_TO_CANDIDATE,
    MOVE_TO_ROAD_WAYPOINT,
    MOVE_TO_UAV_WAYPOINT,
    NO_RELIABLE_CANDIDATE,
    REJECT,
    STOP_OBSERVE,
    UAV,
    UAV_ACTIONS,
    UGV,
    UGV_ACTIONS,
    WAIT,
)
from aerialdojo.errors import ConfigError

#: What each action does, as the system prompts list the role's actions.
ACTION_HELP = {
    MOVE_TO_UAV_WAYPOINT: "fly to one of the nearby UAV waypoints listed (argument: its id)",
    ANNOTATE_CANDIDATE: "mark exactly one grid cell as the suspected target (argument: the "
    "cell, e.g. C3)",
    NO_RELIABLE_CANDIDATE: "report that the current view holds no reliable candidate (no argument)",
    WAIT: "stay where you are (no argument)",
    MOVE_TO_ROAD_WAYPOINT: "drive to one of the road waypoint options listed (argument: its id)",
    GO_TO_CANDIDATE: "drive to the approach point of the active UAV candidate (argument: the "
    "candidate id, e.g. C001)",
    STOP_OBSERVE: "stop and take the six views (no argument)",
    CONFIRM: "declare the target found here (no argument; only right after STOP_OBSERVE)",
    REJECT: "declare that the vehicle here is not the target (no argument; only right after "
    "STOP_OBSERVE)",
}
#: The six ring panels in the order the prompts name them (A.4.1, "Six-view verification").
SIX_VIEW_ORDER = (
    ("ring_front_left", "front-left"),
    ("ring_front", "front"),
    ("ring_front_right", "front-right"),
    ("ring_back_left", "back-left"),
    ("ring_back", "back"),
    ("ring_back_right", "back-right"),
)
#: Without GO_TO_CANDIDATE the UGV has reached a candidate's area this close to its centre.
ARRIVAL_RADIUS_M = 30.0
#: The Baseline UAV is reminded not to stall after this many WAITs at one waypoint (A.4.2).
ANTI_STALL_WAITS = 2
_GRID_CELLS = tuple(
    cell_label(row, column) for row in range(len(CELL_ROWS)) for column in range(CELL_COLUMNS)
)

_REPLY_FORMATS = {
    UAV: '{"action": "<an available action>", "argument": "<waypoint id or grid cell; '
    'empty if the action takes none>", "message": "<optional short message to the UGV>"}',
    UGV: '{"action": "<an available action>", "argument": "<road waypoint id or candidate '
    'id; empty if the action takes none>", "message": "<optional short message to the UAV>"}',
}
_BASELINE_UAV_FORMAT = (
    '{"evidence": "CLEAR_MATCH | AMBIGUOUS | NONE", "action": "<an available action>", '
    '"argument": "<waypoint id; empty if the action takes none>", "message": "<a short '
    'message to the UGV; with WAIT, your current position>"}'
)

_SYSTEM = frozenset({"altitude_m", "success_radius_m", "action_list", "reply_format"})
_UAV_USER = frozenset(
    {
        "step",
        "budget",
        "x",
        "y",
        "altitude_m",
        "annotations_used",
        "candidate_status",
        "memory",
        "messages",
        "waypoints",
        "available_actions",
    }
)
_BASELINE_UAV_USER = frozenset(
    {
        "step",
        "budget",
        "x",
        "y",
        "altitude_m",
        "messages",
        "waypoints",
        "waypoint_ids",
        "available_actions",
        "anti_stall",
    }
)
_UGV_USER = frozenset(
    {
        "step",
        "budget",
        "steps_left",
        "confirmations_left",
        "x",
        "y",
        "mode",
        "messages",
        "candidate_status",
        "waypoints",
        "available_actions",
        "stage",
    }
)
_BASELINE_UGV_USER = frozenset(
    {"step", "budget", "x", "y", "mode", "messages", "anchor", "waypoints", "available_actions"}
)
_REPAIR = frozenset({"error", "reply_format"})
#: Each role's template stems -> the placeholders the code fills (docs/vlm_agents.md).
TEMPLATE_FIELDS: dict[str, dict[str, frozenset[str]]] = {
    UAV: {
        "uav_system": _SYSTEM,
        "uav_user": _UAV_USER,
        "baseline_uav_system": _SYSTEM,
        "baseline_uav_user": _BASELINE_UAV_USER,
        "repair": _REPAIR,
    },
    UGV: {
        "ugv_system": _SYSTEM,
        "ugv_user": _UGV_USER,
        "ugv_stage_free": frozenset(),
        "ugv_stage_candidate": frozenset({"candidate_id", "recommendation"}),
        "ugv_stage_arrival": frozenset({"candidate_id"}),
        "ugv_stage_six_view": frozenset(),
        "ugv_stage_post_rejection": frozenset({"rejected"}),
        "baseline_ugv_system": _SYSTEM,
        "baseline_ugv_user": _BASELINE_UGV_USER,
        "repair": _REPAIR,
    },
}


def describe_decision(decision: Decision) -> dict[str, Any]:
    """A decision as transcripts record it."""
    return {"action": decision.action, "argument": decision.argument, "message": decision.message}


def parse_agos_fallback(agent: str, text: str) -> str:
    """The configured fallback decision of ``agent``: one of its actions that takes no
    argument (e.g. ``WAIT``).

    Raises:
        ConfigError: not such an action.
    """
    name = text.strip()
    allowed = [
        a for a in (UAV_ACTIONS if agent == UAV else UGV_ACTIONS) if a not in ARGUMENT_ACTIONS
    ]
    if name not in allowed:
        raise ConfigError(
            f"vlm_fallback {text!r} is not a {agent} action without argument; one of "
            f"{', '.join(allowed)}"
        )
    return name


def _xy(x: float, y: float) -> str:
    return f"({x:.1f}, {y:.1f})"


@dataclass
class VlmAgosPolicy:
    """An ``AgosPolicy`` that asks a vision-language model for every decision of one role.

    Args:
        agent: ``uav`` or ``ugv``.
        session: the model conversation (live or replayed).
        prompts: the role's templates of ``TEMPLATE_FIELDS``.
        image_format: ``png`` or ``jpeg`` for the images.
        history: task memory entries and teammate messages shown.
        fallback: the decision when no reply is legal within the repair turns (an action
            without argument; WAIT when it is not available at that moment).
        description: the model and server, as the agent node announces them.
    """

    agent: str
    session: ModelSession
    prompts: PromptSet
    image_format: str = "png"
    history: int = 8
    fallback: str = WAIT
    description: str = ""
    _task: AgosTask | None = None
    _system: str = ""
    _references: list[dict[str, Any]] = field(default_factory=list)
    _memory: list[str] = field(default_factory=list)
    _noted: set[str] = field(default_factory=set)
    _visited: set[str] = field(default_factory=set)
    _decisions: int = 0
    _last: Decision | None = None
    _waits_here: int = 0
    _arrived_at: str = ""
    _used: dict[str, int] = field(default_factory=dict)
    #: The memory before the last decision, restored when the referee refuses it.
    _before: tuple[Any, ...] = ()
    #: The repair text of the referee's refusal of the last decision ("" none).
    _refusal: str = ""

    @property
    def baseline(self) -> bool:
        """The current episode runs the Baseline prompts."""
        return self._task is not None and self._task.baseline

    def reset(self, task: AgosTask) -> None:
        """Start a new episode (or a rerun of one)."""
        if task.agent != self.agent:
            raise ConfigError(f"a {self.agent} model agent was given the {task.agent}'s task")
        self._task = task
        self._memory, self._noted, self._visited = [], set(), set()
        self._decisions, self._last, self._waits_here, self._arrived_at = 0, None, 0, ""
        self._used = {}
        self._before, self._refusal = (), ""
        self._references = []
        for index, image in enumerate(task.reference_images, start=1):
            self._references += labelled_image(
                f"Target reference image {index}:", encode_rgb(image, self.image_format)
            )
        self.session.start_episode(task.episode_id)
        prefix = "baseline_" if task.baseline else ""
        self._system = self.prompts.render(
            f"{prefix}{self.agent}_system",
            {
                "altitude_m": f"{task.town.uav_grid.altitude_m:g}",
                "success_radius_m": f"{task.success_radius_m:g}",
                "action_list": "\n".join(f"- {a}: {ACTION_HELP[a]}" for a in task.actions),
                "reply_format": self._reply_format(),
            },
        )

    def act(self, observation: AgosObservation) -> Decision:
        """Ask the model for the next decision.

        Raises:
            ModelServerError: the server failed (an infrastructure failure).
            ReplayError: a replay diverged from its recording.
        """
        if self._task is None:
            raise RuntimeError("act() before reset()")
        self._note_closed_candidates(observation)
        request, options = self.request(observation)
        fallback = Decision(self.fallback if self.fallback in options else WAIT)
        outcome = self.session.decide(
            request,
            lambda text: _decision(parse_agos_reply(text, options)),
            lambda error: self.prompts.render(
                "repair", {"error": error, "reply_format": self._reply_format()}
            ),
            fallback,
            describe_decision,
        )
        self._before = self._memory_state()
        self._account(observation, outcome.value)
        self._refusal = ""
        return outcome.value

    def refused(self, reason: str) -> None:
        """The referee refused the last decision: it was not executed, so the memory
        returns to before it, and the next request (the same turn) says why."""
        last = self._last
        if self._before:
            (
                self._decisions,
                self._used,
                self._visited,
                self._waits_here,
                self._arrived_at,
                self._memory,
                self._last,
            ) = self._before
        refused = f"{last.action} {last.argument}".rstrip() if last else "your last decision"
        self._refusal = self.prompts.render(
            "repair",
            {
                "error": f"the referee refused {refused}: {reason}",
                "reply_format": self._reply_format(),
            },
        )

    def _memory_state(self) -> tuple[Any, ...]:
        return (
            self._decisions,
            dict(self._used),
            set(self._visited),
            self._waits_here,
            self._arrived_at,
            list(self._memory),
            self._last,
        )

    def request(
        self, observation: AgosObservation
    ) -> tuple[list[Message], dict[str, list[str] | None]]:
        """The request of one decision (system prompt, user prompt, images) and the actions
        available now, each with its legal arguments (None: it takes none)."""
        options = self.available(observation)
        if self.agent == UAV:
            content = self._uav_content(observation, options)
        else:
            content = self._ugv_content(observation, options)
        if self._refusal:
            content = [*content, {"type": "text", "text": self._refusal}]
        return [
            {"role": "system", "content": self._system},
            {"role": "user", "content": content},
        ], options

    def available(self, observation: AgosObservation) -> dict[str, list[str] | None]:
        """The role's actions that are legal now, with their legal arguments: no annotation
        while a candidate is verified, CONFIRM and REJECT only right after STOP_OBSERVE,
        GO_TO_CANDIDATE only to the active candidate, moves only where an option exists,
        none beyond its budget (``AgosTask.max_uses``)."""
        task = self._task
        assert task is not None
        pose = observation.pose
        active = observation.active
        six_view = self._six_view()
        options: dict[str, list[str] | None] = {}
        for action in task.actions:
            if self._left(action) == 0:
                continue
            if action == MOVE_TO_UAV_WAYPOINT:
                ids = [
                    w.waypoint_id for w in task.town.uav_grid.options(pose.x, pose.y, task.region)
                ]
                if ids:
                    options[action] = ids
            elif action == ANNOTATE_CANDIDATE:
                if active is None:
                    options[action] = list(_GRID_CELLS)
            elif action == NO_RELIABLE_CANDIDATE:
                if active is None:
                    options[action] = None
            elif action == MOVE_TO_ROAD_WAYPOINT:
                ids = [o.waypoint_id for o in road_options(task.town.roads, pose)]
                if ids:
                    options[action] = ids
            elif action == GO_TO_CANDIDATE:
                if active is not None:
                    options[action] = [active.candidate_id]
            elif action in (CONFIRM, REJECT):
                if six_view:
                    options[action] = None
            else:
                options[action] = None
        return options

    # -- the UAV -----------------------------------------------------------------------

    def _uav_content(
        self, observation: AgosObservation, options: Mapping[str, list[str] | None]
    ) -> list[dict[str, Any]]:
        task = self._task
        assert task is not None
        pose = observation.pose
        grid = task.town.uav_grid
        here = grid.nearest_active(pose.x, pose.y, task.region)
        waypoints = grid.options(pose.x, pose.y, task.region)
        common = self._status(observation, options) | {"altitude_m": f"{grid.altitude_m:g}"}
        nadir = observation.views[UAV_VIEW].rgb
        if self.baseline:
            stall = ""
            if self._waits_here >= ANTI_STALL_WAITS:
                stall = (
                    f"\nAnti-stall Reminder. You have waited {self._waits_here} times at "
                    f"waypoint {here.waypoint_id}; unless the UGV is about to verify what you "
                    "see, move on to an unvisited waypoint."
                )
            text = self.prompts.render(
                "baseline_uav_user",
                {
                    **common,
                    "waypoints": "\n".join(
                        f"- {w.waypoint_id}: {_xy(w.x, w.y)}, "
                        f"{math.hypot(w.x - pose.x, w.y - pose.y):.0f} m, "
                        f"{'visited' if w.waypoint_id in self._visited else 'unvisited'}"
                        for w in waypoints
                    )
                    or "(none)",
                    "waypoint_ids": ", ".join(w.waypoint_id for w in waypoints) or "(none)",
                    "anti_stall": stall,
                },
            )
            image = labelled_image("Aerial image:", encode_rgb(nadir, self.image_format))
        else:
            active = observation.active
            status = (
                f"{active.candidate_id} at {_xy(*active.center)}, being verified by the UGV"
                if active is not None
                else "none"
            )
            text = self.prompts.render(
                "uav_user",
                {
                    **common,
                    "annotations_used": self._uses(ANNOTATE_CANDIDATE),
                    "candidate_status": status,
                    "memory": self._recent(self._memory),
                    "waypoints": "\n".join(
                        f"- {w.waypoint_id}: {_xy(w.x, w.y)}, "
                        f"{math.hypot(w.x - pose.x, w.y - pose.y):.0f} m"
                        for w in waypoints
                    )
                    or "(none)",
                },
            )
            image = labelled_image(
                "Aerial grid image:", encode_rgb(overlay_grid(nadir), self.image_format)
            )
        return [{"type": "text", "text": text}, *image, *self._references]

    # -- the UGV -----------------------------------------------------------------------

    def _ugv_content(
        self, observation: AgosObservation, options: Mapping[str, list[str] | None]
    ) -> list[dict[str, Any]]:
        task = self._task
        assert task is not None
        pose = observation.pose
        roads = task.town.roads
        six_view = self._six_view()
        mode = "STOP_6VIEW" if six_view else "driving (front view)"
        common = self._status(observation, options) | {"mode": mode}
        choices = road_options(roads, pose)
        if self.baseline:
            anchor = search_anchor(observation.messages)
            if anchor is None:
                anchor_text = "No UAV message holds a coordinate yet: explore the road network."
            else:
                anchor_text = (
                    f"The UAV reported a possible target near {_xy(*anchor)}, "
                    f"{math.dist((pose.x, pose.y), anchor):.0f} m from you."
                )
            lines = []
            for option in choices:
                x, y = roads.xy(option.anchor)
                to_anchor = f"{math.dist((x, y), anchor):.0f} m" if anchor else "n/a"
                visited = "visited" if option.waypoint_id in self._visited else "unvisited"
                lines.append(
                    f"- {option.waypoint_id}: {_xy(x, y)}, {option.distance_m:.0f} m, "
                    f"{visited}, {to_anchor} to the anchor"
                )
            text = self.prompts.render(
                "baseline_ugv_user",
                {**common, "anchor": anchor_text, "waypoints": "\n".join(lines) or "(none)"},
            )
        else:
            waypoints = "\n".join(
                f"- {o.waypoint_id}: {_xy(*roads.xy(o.anchor))}, {o.distance_m:.0f} m"
                for o in choices
            )
            text = self.prompts.render(
                "ugv_user",
                {
                    **common,
                    "steps_left": max(task.action_budget - self._step(observation) + 1, 0),
                    "confirmations_left": _or_unlimited(self._left(CONFIRM)),
                    "candidate_status": self._candidate_status(observation),
                    "waypoints": waypoints or "(none)",
                    "stage": self._stage(observation, options),
                },
            )
        if six_view:
            images: list[dict[str, Any]] = []
            for name, label in SIX_VIEW_ORDER:
                images += labelled_image(
                    f"Six-view panel, {label}:",
                    encode_rgb(observation.views[name].rgb, self.image_format),
                )
        else:
            images = labelled_image(
                "Forward view:",
                encode_rgb(observation.views[UGV_FRONT_VIEW].rgb, self.image_format),
            )
        return [{"type": "text", "text": text}, *images, *self._references]

    def _candidate_status(self, observation: AgosObservation) -> str:
        pose = observation.pose
        active_id = observation.active.candidate_id if observation.active is not None else ""
        parts = []
        for candidate in observation.candidates.values():
            distance = math.dist((pose.x, pose.y), candidate.center)
            if active_id == candidate.candidate_id:
                state = "active"
            elif candidate.confirmed:
                state = "confirmed"
            elif candidate.active:
                state = "reported"
            else:
                state = "rejected"
            parts.append(
                f"{candidate.candidate_id} {state} at {_xy(*candidate.center)}, "
                f"{distance:.0f} m from you"
            )
        return "; ".join(parts) or "none reported"

    def _stage(self, observation: AgosObservation, options: Mapping[str, list[str] | None]) -> str:
        """The stage-conditioned part of the UGV's user prompt (A.4.1)."""
        active = observation.active
        if self._six_view():
            return self.prompts.render("ugv_stage_six_view", {})
        if active is not None:
            near = math.dist((observation.pose.x, observation.pose.y), active.center)
            if self._arrived_at == active.candidate_id or (
                GO_TO_CANDIDATE not in options and near <= ARRIVAL_RADIUS_M
            ):
                return self.prompts.render(
                    "ugv_stage_arrival", {"candidate_id": active.candidate_id}
                )
            if GO_TO_CANDIDATE in options:
                recommendation = (
                    f"The recommended action is GO_TO_CANDIDATE with candidate ID "
                    f"{active.candidate_id}."
                )
            else:
                recommendation = (
                    f"GO_TO_CANDIDATE is not available: choose the road waypoints that bring "
                    f"you closest to its centre {_xy(*active.center)}, {near:.0f} m away."
                )
            return self.prompts.render(
                "ugv_stage_candidate",
                {"candidate_id": active.candidate_id, "recommendation": recommendation},
            )
        rejected = [
            f"{c.candidate_id} at {_xy(*c.center)}"
            for c in observation.candidates.values()
            if not c.active and not c.confirmed
        ]
        if rejected:
            return self.prompts.render(
                "ugv_stage_post_rejection", {"rejected": "; ".join(rejected)}
            )
        return self.prompts.render("ugv_stage_free", {})

    # -- shared ------------------------------------------------------------------------

    def _status(
        self, observation: AgosObservation, options: Mapping[str, list[str] | None]
    ) -> dict[str, object]:
        """What both roles' user prompts state: step, budget, position, the teammate's
        messages and the actions available."""
        assert self._task is not None
        return {
            "step": self._step(observation),
            "budget": self._task.action_budget,
            "x": f"{observation.pose.x:.1f}",
            "y": f"{observation.pose.y:.1f}",
            "messages": self._messages(observation),
            "available_actions": ", ".join(options),
        }

    def _reply_format(self) -> str:
        if self.agent == UAV and self.baseline:
            return _BASELINE_UAV_FORMAT
        return _REPLY_FORMATS[self.agent]

    def _left(self, action: str) -> int | None:
        """Uses of ``action`` left this episode; None where unlimited."""
        assert self._task is not None
        limit = self._task.max_uses.get(action)
        return None if limit is None else max(limit - self._used.get(action, 0), 0)

    def _uses(self, action: str) -> str:
        """``a/A``: uses of ``action`` so far of its budget (``a`` where unlimited)."""
        assert self._task is not None
        used, limit = self._used.get(action, 0), self._task.max_uses.get(action)
        return f"{used}/{limit}" if limit else str(used)

    def _six_view(self) -> bool:
        return self._last is not None and self._last.action == STOP_OBSERVE

    def _step(self, observation: AgosObservation) -> int:
        return observation.decision or self._decisions + 1

    def _recent(self, lines: Sequence[str]) -> str:
        shown = list(lines[-self.history :]) if self.history else []
        return "\n".join(f"- {line}" for line in shown) or "(none)"

    def _messages(self, observation: AgosObservation) -> str:
        return self._recent([m.text for m in observation.messages])

    def _note_closed_candidates(self, observation: AgosObservation) -> None:
        """Task memory of the UAV: what became of its candidates."""
        for candidate in observation.candidates.values():
            closed = not candidate.active or candidate.confirmed
            if closed and candidate.candidate_id not in self._noted:
                self._noted.add(candidate.candidate_id)
                verdict = "confirmed" if candidate.confirmed else "rejected"
                self._memory.append(f"candidate {candidate.candidate_id} {verdict} by the UGV")

    def _account(self, observation: AgosObservation, decision: Decision) -> None:
        task = self._task
        assert task is not None
        pose = observation.pose
        self._decisions += 1
        self._used[decision.action] = self._used.get(decision.action, 0) + 1
        if self.agent == UAV:
            here = task.town.uav_grid.nearest_active(pose.x, pose.y, task.region).waypoint_id
        else:
            here = road_waypoint_id(task.town.roads.nearest_anchor(pose.x, pose.y))
        self._visited.add(here)
        if decision.action in (MOVE_TO_UAV_WAYPOINT, MOVE_TO_ROAD_WAYPOINT):
            self._visited.add(decision.argument)
        self._waits_here = self._waits_here + 1 if decision.action == WAIT else 0
        if decision.action == GO_TO_CANDIDATE:
            self._arrived_at = decision.argument
        self._memory.append(
            f"step {self._step(observation)}: {decision.action} {decision.argument}".rstrip()
            + f" at {_xy(pose.x, pose.y)}"
        )
        self._last = decision


def _or_unlimited(count: int | None) -> str:
    return "unlimited" if count is None else str(count)


def _decision(reply: AgosReply) -> Decision:
    return Decision(reply.action, reply.argument, reply.message)


def vlm_agos_policy(agent: str, values: Mapping[str, Any], where: str) -> VlmAgosPolicy:
    """The model agent an AGOS agent node's ``vlm_*`` parameters describe.

    Raises:
        ConfigError: settings no request could use, a fallback that is not an action of the
            role without argument, or a prompt template with an unknown placeholder; naming
            ``<where>.<parameter>``.
    """
    settings = VlmSettings.from_parameters(values, where)
    try:
        fallback = parse_agos_fallback(agent, settings.fallback)
    except ConfigError as error:
        raise ConfigError(f"{where}.{error}") from error
    return VlmAgosPolicy(
        agent=agent,
        session=settings.session(agent),
        prompts=PromptSet.load(
            prompt_directory(settings.prompt_dir, "agos"), TEMPLATE_FIELDS[agent]
        ),
        image_format=settings.image_format,
        history=settings.history,
        fallback=fallback,
        description=settings.description,
    )
