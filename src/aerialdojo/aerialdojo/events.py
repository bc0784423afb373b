"""Episode events to metric traces: the one path from what a run emitted to what is scored.

The evaluator node feeds it live ``EpisodeEvent`` messages; ``aerialdojo evaluate-bag`` feeds
it the same messages read back from a bag. Both get identical traces, hence identical metrics.
Events are duck-typed (rclpy messages and rosbags dataclasses have the same fields).

How one episode's events become its trace is the benchmark's: whoever assembles events
hands the assembler each benchmark's trace builder by name (``protocols.trace_builder``),
which takes the STARTED record and then every later event of the episode. The usual one,
``PoseTraceBuilder``, takes the positions the events carry; AGOS folds the facts its
referee put in each decision's ``episode_json`` (``protocols.agos``). This module knows no
benchmark: it sits below the registry (``docs/architecture.md``, "Layers").
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol

import numpy as np

from aerialdojo.actions import STOP
from aerialdojo.documents import RECORD, DocumentError, parse_json
from aerialdojo.errors import MetricsError
from aerialdojo.geometry import Pose
from aerialdojo.metrics.aggregate import CAUSE_INFRASTRUCTURE, CAUSE_INTERVENTION
from aerialdojo.metrics.trace import (
    POSITIONS_FROM_ACTIONS,
    POSITIONS_FROM_POSE_TRACK,
    TERMINATION_AGENT_ERROR,
    TERMINATION_AGENT_TIMEOUT,
    TERMINATION_BUDGET_EXHAUSTED,
    TERMINATION_COLLIDED,
    TERMINATION_INVALID_ACTION,
    TERMINATION_STOPPED,
    EpisodeTrace,
    Point3,
)
from aerialdojo.runtime import NodeRecord


class EventKind(IntEnum):
    """Mirror of the ``aerialdojo_interfaces/msg/EpisodeEvent`` constants (a test keeps the
    two in step), so that ROS-free code can read events."""

    STARTED = 0
    STEP = 1
    STOPPED = 2
    COLLIDED = 3
    BUDGET_EXHAUSTED = 4
    INFRA_FAILURE = 5
    RUN_FINISHED = 6
    RUN_STARTED = 7
    INTERVENTION = 8
    INVALID_ACTION = 9
    AGENT_TIMEOUT = 10
    AGENT_ERROR = 11


#: The events that end an attempt without scoring it, and why.
_EXCLUSIONS = {
    EventKind.INFRA_FAILURE: CAUSE_INFRASTRUCTURE,
    EventKind.INTERVENTION: CAUSE_INTERVENTION,
}

#: EventKind by value, looked up once per event of a bag.
_KINDS = {int(kind): kind for kind in EventKind}

_TERMINATIONS = {
    EventKind.STOPPED: TERMINATION_STOPPED,
    EventKind.COLLIDED: TERMINATION_COLLIDED,
    EventKind.BUDGET_EXHAUSTED: TERMINATION_BUDGET_EXHAUSTED,
    EventKind.INVALID_ACTION: TERMINATION_INVALID_ACTION,
    EventKind.AGENT_TIMEOUT: TERMINATION_AGENT_TIMEOUT,
    EventKind.AGENT_ERROR: TERMINATION_AGENT_ERROR,
}
#: Endings that are the agent's failure to act (legally, or at all): their event carries no
#: executed action, so the trace takes nothing from it.
AGENT_FAILURES = frozenset(
    {EventKind.INVALID_ACTION, EventKind.AGENT_TIMEOUT, EventKind.AGENT_ERROR}
)
#: How logs and progress lines name each ending of an attempt.
ENDING_NAMES = {
    EventKind.STOPPED: "stopped",
    EventKind.COLLIDED: "collided",
    EventKind.BUDGET_EXHAUSTED: "budget exhausted",
    EventKind.INVALID_ACTION: "invalid action",
    EventKind.AGENT_TIMEOUT: "agent timeout",
    EventKind.AGENT_ERROR: "agent error",
    EventKind.INFRA_FAILURE: "infrastructure failure",
    EventKind.INTERVENTION: "operator/safety intervention",
}


class _Vector(Protocol):
    x: float
    y: float
    z: float


class _Pose(Protocol):
    position: _Vector


class _Time(Protocol):
    sec: int
    nanosec: int


class _Header(Protocol):
    stamp: _Time


class EventLike(Protocol):
    """The fields of an EpisodeEvent the assembler reads."""

    header: _Header
    episode_id: str
    attempt: int
    kind: int
    action: str
    step: int
    pose: _Pose
    collided: bool
    message: str
    episode_json: str


@dataclass(frozen=True)
class PoseTrack:
    """Positions from a pose topic (a robot's odometry, say), to score with instead of the
    poses the events carry.

    Attributes:
        stamps_ns: header stamps, ascending.
        positions: (N, 3) positions.
        relative_to_start: the poses are in a frame that starts at the episode's start pose
            (odometry reset per episode); False: they are in the map frame.
    """

    stamps_ns: np.ndarray
    positions: np.ndarray
    relative_to_start: bool

    def between(self, start_ns: int, end_ns: int, start: Pose) -> list[tuple[float, float, float]]:
        """Map-frame positions stamped within [start_ns, end_ns]."""
        chosen = (self.stamps_ns >= start_ns) & (self.stamps_ns <= end_ns)
        points = self.positions[chosen]
        if self.relative_to_start:
            points = np.array([start.body_to_world(*p) + start.position for p in points])
        return [(float(x), float(y), float(z)) for x, y, z in points]


@dataclass(frozen=True)
class AgentRecord:
    """Who acted for an agent (an ``AgentInfo`` message, duck-typed).

    Attributes:
        agent: ``uav`` or ``ugv``.
        policy: the policy's name.
        privileged: the policy read ground truth (an oracle).
        description: what else identifies it.
    """

    agent: str
    policy: str
    privileged: bool
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent,
            "policy": self.policy,
            "privileged": self.privileged,
            "description": self.description,
        }


@dataclass(frozen=True)
class InfraFailure:
    """An attempt that ended for reasons outside the agent; never scored. ``cause`` says
    whether the simulator, robot or harness failed or an operator or the robot's safety layer
    stopped it (``metrics.aggregate.CAUSES``)."""

    episode_id: str
    attempt: int
    reason: str
    cause: str = CAUSE_INFRASTRUCTURE


@dataclass(frozen=True)
class SupersededAttempt:
    """An attempt whose outcome a later attempt of the same episode replaced.

    Attributes:
        episode_id: the episode.
        attempt: the replaced attempt (0-based, as events number them).
        outcome: what it had ended in, e.g. ``"scored (stopped)"``.
    """

    episode_id: str
    attempt: int
    outcome: str


#: Why an attempt that started and never ended is excluded.
CUT_SHORT = "cut short: the run ended during this attempt"
#: Why an attempt that another attempt's start interrupted is excluded.
CUT_OFF = "cut short: another attempt started before it ended"


class TraceBuilder(Protocol):
    """Folds the events of one episode into what its trace needs (a benchmark's own).

    Attributes:
        positions: the scored agent's positions so far, map frame, the start first.
        follows_pose_track: ``positions`` may be replaced by a pose topic's
            (``PoseTrack``, e.g. a robot's odometry); False where they come from facts.
    """

    positions: list[Point3]
    follows_pose_track: bool

    def add(self, event: EventLike) -> None:
        """Take the next event of the episode after its STARTED event."""
        ...

    def trace_fields(self) -> dict[str, Any]:
        """Benchmark-specific ``EpisodeTrace`` fields (e.g. ``agos``), at the end."""
        ...


#: Starts the ``TraceBuilder`` of one episode from its STARTED record and start position.
TraceBuilderFactory = Callable[[Mapping[str, Any], Point3], TraceBuilder]


class PoseTraceBuilder:
    """The path is where the events put the agent: the start, then the pose after every
    action that moved (Stop moves nothing)."""

    follows_pose_track = True

    def __init__(self, record: Mapping[str, Any], start: Point3) -> None:
        self.positions: list[Point3] = [start]

    def add(self, event: EventLike) -> None:
        if event.action != STOP:
            self.positions.append(event_position(event))

    def trace_fields(self) -> dict[str, Any]:
        return {}


@dataclass
class _OpenEpisode:
    record: dict[str, Any]
    attempt: int
    started_ns: int
    builder: TraceBuilder


@dataclass
class EpisodeAssembler:
    """Folds an ordered stream of episode events into finished ``EpisodeTrace``s.

    Every episode has one outcome, that of its last attempt: a later attempt of an episode
    supersedes the earlier one (``superseded`` lists what it replaced), so no episode is
    scored twice. An attempt that starts while another is open cuts that one short.

    Attributes:
        trace_builder: how each benchmark's episodes fold into traces, by the benchmark
            name their STARTED records carry (``protocols.trace_builder``).
        records: ground-truth records by episode id, for events that carry none (bags
            recorded on a real robot, scored against a task file).
        traces: scored episodes, one per episode, in the order they finished.
        infra_failures: every attempt that ended in an infrastructure failure.
        superseded: attempts whose outcome a later attempt replaced.
        selection: the episodes the run selected (RUN_STARTED), in order; several runs
            folded one after another (a run and its reruns) select their union.
        suites: the suites the run's RUN_STARTED events name (name and SHA-256 of the
            file), each once; a record without one (a robot's bag) names none.
        settings: the protocol settings the run's RUN_STARTED events name (the task
            manager parameters that change the numbers), each distinct set once.
        run_summary: the RUN_FINISHED message, once it arrived.
        track: where positions come from instead of the events' poses, if given.
        agents: who acted for each agent (``add_agent_info``), by agent name.
        nodes: what each node runs on (``add_node_info``), by node name.
        gaps: why events are missing, once per ``gap`` (a damaged chunk of a bag, events the
            recorder lost).
        benchmark: the benchmark of the latest episode that started, once one did.
    """

    trace_builder: Callable[[str], TraceBuilderFactory]
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    track: PoseTrack | None = None
    traces: list[EpisodeTrace] = field(default_factory=list)
    infra_failures: list[InfraFailure] = field(default_factory=list)
    superseded: list[SupersededAttempt] = field(default_factory=list)
    selection: list[str] = field(default_factory=list)
    suites: list[dict[str, str]] = field(default_factory=list)
    settings: list[dict[str, Any]] = field(default_factory=list)
    run_summary: str | None = None
    agents: dict[str, AgentRecord] = field(default_factory=dict)
    nodes: dict[str, NodeRecord] = field(default_factory=dict)
    gaps: list[str] = field(default_factory=list)
    benchmark: str | None = None
    _open: _OpenEpisode | None = None
    _outcomes: dict[str, tuple[int, EpisodeTrace | InfraFailure]] = field(default_factory=dict)

    def add_agent_info(self, info: Any) -> None:
        """Take an ``AgentInfo`` message; the last one per agent counts."""
        self.agents[str(info.agent)] = AgentRecord(
            agent=str(info.agent),
            policy=str(info.policy),
            privileged=bool(info.privileged),
            description=str(info.description),
        )

    def add_node_info(self, info: Any) -> None:
        """Take a ``NodeInfo`` message; the last one per node counts."""
        record = NodeRecord.of(info)
        self.nodes[record.node] = record

    @property
    def finished(self) -> bool:
        """The run announced its end."""
        return self.run_summary is not None

    @property
    def open_episode(self) -> str | None:
        """The id of an episode that started and has not ended (e.g. a bag cut short)."""
        return self._open.record["episode_id"] if self._open else None

    def excluded(self) -> list[InfraFailure]:
        """Episodes whose last attempt failed for reasons outside the agent, or is still
        open (cut short when the stream ends here), by episode id."""
        failures = {
            episode_id: outcome
            for episode_id, (_, outcome) in self._outcomes.items()
            if isinstance(outcome, InfraFailure)
        }
        if self._open is not None:
            episode_id = self._open.record["episode_id"]
            failures[episode_id] = InfraFailure(episode_id, self._open.attempt, CUT_SHORT)
        return [failures[episode_id] for episode_id in sorted(failures)]

    def excluded_episodes(self) -> list[str]:
        """Ids of the ``excluded`` episodes."""
        return [failure.episode_id for failure in self.excluded()]

    def not_started(self) -> list[str]:
        """Selected episodes with no attempt at all, in selection order."""
        attempted = set(self._outcomes) | set(filter(None, [self.open_episode]))
        return [episode_id for episode_id in self.selection if episode_id not in attempted]

    def add(self, event: EventLike) -> EpisodeTrace | None:
        """Take the next event; returns the trace of the episode it finished, if any.

        Raises:
            MetricsError: an event that does not fit the stream (a step before any start,
                a STARTED without a ground-truth record), or a STARTED record naming a
                benchmark ``trace_builder`` does not know.
        """
        kind = _KINDS.get(event.kind)  # the enum's own call is slow
        if kind is None:
            kind = EventKind(event.kind)  # raises ValueError, naming the value
        if kind is EventKind.RUN_FINISHED:
            self.run_summary = event.message
            return None
        if kind is EventKind.RUN_STARTED:
            started = _event_json(event, "RUN_STARTED")
            selection = started.get("selection")
            if not isinstance(selection, list) or not all(isinstance(e, str) for e in selection):
                raise MetricsError("RUN_STARTED: its selection is not a list of episode ids")
            self.selection += [e for e in selection if e not in self.selection]
            suite = started.get("suite")
            if suite is not None and suite not in self.suites:
                self.suites.append(suite)
            settings = started.get("settings")
            if settings is not None and settings not in self.settings:
                self.settings.append(settings)
            return None
        if kind is EventKind.STARTED:
            record = self._record(event)
            if self._open is not None:
                cut = self._open
                self._conclude(InfraFailure(cut.record["episode_id"], cut.attempt, CUT_OFF))
            self._supersede(record["episode_id"])
            builder = self.trace_builder(record["benchmark"])(record, event_position(event))
            self.benchmark = record["benchmark"]
            self._open = _OpenEpisode(record, event.attempt, event_stamp_ns(event), builder)
            return None
        if kind in _EXCLUSIONS:
            failure = InfraFailure(
                event.episode_id, event.attempt, event.message, _EXCLUSIONS[kind]
            )
            self.infra_failures.append(failure)
            if self._open is not None and self._open.record["episode_id"] == event.episode_id:
                self._open = None
            else:  # a reset that failed: the attempt never started
                self._supersede(event.episode_id)
            self._outcomes[event.episode_id] = (event.attempt, failure)
            return None
        current = self._open
        if current is None or current.record["episode_id"] != event.episode_id:
            outcome = self._outcomes.get(event.episode_id)
            if (
                outcome is not None
                and outcome[0] == event.attempt
                and isinstance(outcome[1], InfraFailure)
            ):
                # The rest of an attempt already excluded (its recorder lost some of its
                # events): nothing of it is scored.
                return None
        if (current is None or current.record["episode_id"] != event.episode_id) and self.gaps:
            self._orphan(event)
            return None
        if current is None or current.record["episode_id"] != event.episode_id:
            raise MetricsError(
                f"event {kind.name} of episode {event.episode_id!r} step {event.step} "
                "arrived without its STARTED event"
            )
        if kind not in AGENT_FAILURES:
            current.builder.add(event)
        if kind is EventKind.STEP:
            return None
        self._open = None
        positions = current.builder.positions
        source = POSITIONS_FROM_ACTIONS
        if self.track is not None and current.builder.follows_pose_track:
            source = POSITIONS_FROM_POSE_TRACK
            record = current.record
            positions = self.track.between(
                current.started_ns, event_stamp_ns(event), Pose(*record["start"])
            )
            if not positions:
                raise MetricsError(
                    f"episode {record['episode_id']!r}: no pose on the pose topic between its "
                    "start and end"
                )
        trace = _trace(current, positions, kind, event, positions_source=source)
        self.traces.append(trace)
        self._outcomes[trace.episode_id] = (current.attempt, trace)
        return trace

    def gap(self, reason: str) -> None:
        """Events are missing here (a damaged chunk of a bag, messages the recorder lost):
        the attempt under way is excluded with ``reason``, not scored on what is left of
        it, and the events of an attempt that started within the gap are dropped, its
        attempt excluded too, until the next start."""
        self.gaps.append(reason)
        if self._open is not None:
            cut = self._open
            self._conclude(InfraFailure(cut.record["episode_id"], cut.attempt, reason))

    def _orphan(self, event: EventLike) -> None:
        """An event of an attempt whose start fell into a gap: that attempt is excluded."""
        outcome = self._outcomes.get(event.episode_id)
        if outcome is None or outcome[0] <= event.attempt:
            self._outcomes[event.episode_id] = (
                event.attempt,
                InfraFailure(event.episode_id, event.attempt, self.gaps[-1]),
            )

    def _conclude(self, failure: InfraFailure) -> None:
        self.infra_failures.append(failure)
        self._outcomes[failure.episode_id] = (failure.attempt, failure)
        self._open = None

    def _supersede(self, episode_id: str) -> None:
        """Drop the outcome of an earlier attempt of ``episode_id``, which a new one
        replaces."""
        previous = self._outcomes.pop(episode_id, None)
        if previous is None:
            return
        attempt, outcome = previous
        if isinstance(outcome, InfraFailure):
            return  # a failure is what a rerun is for; no need to list it again
        self.traces.remove(outcome)
        self.superseded.append(
            SupersededAttempt(episode_id, attempt, f"scored ({outcome.termination})")
        )

    def _record(self, event: EventLike) -> dict[str, Any]:
        if event.episode_json:
            record = _event_json(event, f"episode {event.episode_id!r}: STARTED")
            for name in ("episode_id", "benchmark"):
                if not isinstance(record.get(name), str):
                    raise MetricsError(
                        f"episode {event.episode_id!r}: its STARTED record's {name} is missing "
                        "or malformed"
                    )
            return record
        if event.episode_id in self.records:
            return self.records[event.episode_id]
        raise MetricsError(
            f"episode {event.episode_id!r}: its STARTED event carries no ground truth and no "
            "task file provides it"
        )


def _event_json(event: EventLike, what: str) -> dict[str, Any]:
    """The JSON object an event carries, bounded (``documents.RECORD``).

    Raises:
        MetricsError: not a JSON object.
    """
    try:
        document = parse_json(event.episode_json, RECORD, what)
    except DocumentError as error:
        raise MetricsError(str(error)) from None
    if not isinstance(document, dict):
        raise MetricsError(f"{what}: its record is not a JSON object")
    return document


def event_stamp_ns(event: EventLike) -> int:
    """An event's header stamp in nanoseconds."""
    return int(event.header.stamp.sec) * 1_000_000_000 + int(event.header.stamp.nanosec)


def event_position(event: EventLike) -> Point3:
    """The position an event's pose carries, map frame."""
    position = event.pose.position
    return (float(position.x), float(position.y), float(position.z))


def _trace(
    current: _OpenEpisode,
    positions: list[Point3],
    kind: EventKind,
    event: EventLike,
    *,
    positions_source: str,
) -> EpisodeTrace:
    record = current.record
    collided = kind is EventKind.COLLIDED
    return EpisodeTrace(
        episode_id=record["episode_id"],
        benchmark=record["benchmark"],
        scene=record["scene"],
        family=record["family"],
        setting=record["setting"],
        split=record["split"],
        positions=positions,
        stop_called=kind is EventKind.STOPPED,
        collided=collided,
        collision_step=int(event.step) if collided else None,
        steps_used=int(event.step),
        action_budget=int(record["action_budget"]),
        target=tuple(record["target"]),
        reference_length_m=float(record["reference_length_m"]),
        termination=_TERMINATIONS[kind],
        conditions=record.get("conditions", {}),
        positions_source=positions_source,
        **current.builder.trace_fields(),
    )
