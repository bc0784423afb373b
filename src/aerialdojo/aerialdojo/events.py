"""Episode events to metric traces: the one path from what a run emitted to what is scored.

The evaluator node feeds it live ``EpisodeEvent`` messages; ``aerialdojo evaluate-bag`` feeds
it the same messages read back from a bag. Both get identical traces, hence identical metrics.
Events are duck-typed (rclpy messages and rosbags dataclasses have the same fields).

AGOS events carry, in ``episode_json`` of every decision's event, the task manager's
ground-truth facts of that decision (``agos.protocol.AgosReferee.apply``); the trace's
positions are the UGV's (its start, then every fine-graph point it drove through) and its
``AgosRecord`` is tallied from those facts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Protocol

import numpy as np

from aerialdojo.errors import MetricsError
from aerialdojo.geometry import Pose
from aerialdojo.metrics.trace import (
    TERMINATION_BUDGET_EXHAUSTED,
    TERMINATION_COLLIDED,
    TERMINATION_STOPPED,
    AgosCandidate,
    AgosRecord,
    EpisodeTrace,
)
from aerialdojo.tasks.episode import Episode


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


_TERMINATIONS = {
    EventKind.STOPPED: TERMINATION_STOPPED,
    EventKind.COLLIDED: TERMINATION_COLLIDED,
    EventKind.BUDGET_EXHAUSTED: TERMINATION_BUDGET_EXHAUSTED,
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


def ground_truth_record(episode: Episode) -> dict[str, Any]:
    """What the evaluator must know about an episode to score it (STARTED's episode_json).

    Only ground truth and bookkeeping: the target anchor, the reference length, the budget.
    """
    anchor, start = episode.target_anchor, episode.start
    return {
        "episode_id": episode.episode_id,
        "benchmark": episode.benchmark,
        "scene": episode.scene,
        "family": episode.family,
        "setting": episode.setting,
        "split": episode.split,
        "action_budget": episode.action_budget,
        "start": [start.x, start.y, start.z, start.yaw],
        "target": [anchor.x, anchor.y, anchor.z],
        "reference_length_m": episode.reference.length_m,
        "success_radius_m": episode.success_radius_m,
    }


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
class InfraFailure:
    """An attempt that ended for reasons outside the agent; never scored."""

    episode_id: str
    attempt: int
    reason: str


@dataclass
class _AgosTally:
    """The AGOS record of an episode, folded from its decisions' facts."""

    uav_budget: int
    uav_start_visible: bool
    decisions: dict[str, int] = field(default_factory=lambda: {"uav": 0, "ugv": 0})
    uav_visible_after: list[bool] = field(default_factory=list)
    candidates: dict[str, AgosCandidate] = field(default_factory=dict)
    confirmations: int = 0
    confirmation_valid: bool = False
    ground_support: bool = False

    def add(self, facts: dict[str, Any]) -> None:
        self.decisions[facts["agent"]] += 1
        if "uav_visible" in facts:
            self.uav_visible_after.append(bool(facts["uav_visible"]))
        candidate = facts.get("candidate")
        if candidate is not None and candidate["candidate_id"] not in self.candidates:
            self.candidates[candidate["candidate_id"]] = AgosCandidate(
                candidate_id=candidate["candidate_id"],
                polygon_xy=tuple(tuple(vertex) for vertex in candidate["polygon"]),
                center=tuple(candidate["center"]),
            )
        self.ground_support |= bool(facts.get("ground_support", False))
        verdict = facts.get("verdict")
        if verdict is not None:
            self.confirmations += 1
            self.confirmation_valid = bool(verdict["valid"])
            # The checker's six views are the ground observation of this decision too.
            self.ground_support |= bool(verdict["visible"])

    def record(self) -> AgosRecord:
        # The view decision k acts on: the start view for k = 1, else decision k-1's result.
        seen = [self.uav_start_visible, *self.uav_visible_after][: self.decisions["uav"]]
        tau = next((k for k, visible in enumerate(seen, start=1) if visible), None)
        return AgosRecord(
            uav_decisions=self.decisions["uav"],
            ugv_decisions=self.decisions["ugv"],
            uav_budget=self.uav_budget,
            oracle_visible_uav_step=tau,
            candidates=tuple(self.candidates.values()),
            confirmations=self.confirmations,
            confirmation_valid=self.confirmation_valid,
            ground_observation_support=self.ground_support,
        )


@dataclass
class _OpenEpisode:
    record: dict[str, Any]
    attempt: int
    started_ns: int
    positions: list[tuple[float, float, float]]
    agos: _AgosTally | None = None


@dataclass
class EpisodeAssembler:
    """Folds an ordered stream of episode events into finished ``EpisodeTrace``s.

    Attributes:
        records: ground-truth records by episode id, for events that carry none (bags
            recorded on a real robot, scored against a task file).
        traces: finished episodes, in the order they finished.
        infra_failures: attempts that ended in an infrastructure failure.
        run_summary: the RUN_FINISHED message, once it arrived.
        track: where positions come from instead of the events' poses, if given.
    """

    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    track: PoseTrack | None = None
    traces: list[EpisodeTrace] = field(default_factory=list)
    infra_failures: list[InfraFailure] = field(default_factory=list)
    run_summary: str | None = None
    _open: _OpenEpisode | None = None

    @property
    def finished(self) -> bool:
        """The run announced its end."""
        return self.run_summary is not None

    @property
    def open_episode(self) -> str | None:
        """The id of an episode that started and has not ended (e.g. a bag cut short)."""
        return self._open.record["episode_id"] if self._open else None

    def excluded_episodes(self) -> list[str]:
        """Episodes whose every attempt failed for infrastructure reasons."""
        scored = {trace.episode_id for trace in self.traces}
        return sorted({f.episode_id for f in self.infra_failures} - scored)

    def add(self, event: EventLike) -> EpisodeTrace | None:
        """Take the next event; returns the trace of the episode it finished, if any.

        Raises:
            MetricsError: an event that does not fit the stream (a step before any start,
                a STARTED without a ground-truth record).
        """
        kind = EventKind(event.kind)
        if kind is EventKind.RUN_FINISHED:
            self.run_summary = event.message
            return None
        if kind is EventKind.STARTED:
            record = self._record(event)
            if record["benchmark"] == "agos":
                self._open = _OpenEpisode(
                    record,
                    event.attempt,
                    _stamp_ns(event),
                    [tuple(record["start"][:3])],
                    _AgosTally(
                        uav_budget=int(record["agos"]["uav_budget"]),
                        uav_start_visible=bool(record["agos"]["uav_start_visible"]),
                    ),
                )
            else:
                self._open = _OpenEpisode(
                    record, event.attempt, _stamp_ns(event), [_position(event)]
                )
            return None
        if kind is EventKind.INFRA_FAILURE:
            self.infra_failures.append(InfraFailure(event.episode_id, event.attempt, event.message))
            self._open = None
            return None
        current = self._open
        if current is None or current.record["episode_id"] != event.episode_id:
            raise MetricsError(
                f"event {kind.name} of episode {event.episode_id!r} step {event.step} "
                "arrived without its STARTED event"
            )
        if current.agos is not None:
            facts = json.loads(event.episode_json)
            current.agos.add(facts)
            current.positions.extend(tuple(point) for point in facts.get("path", ()))
        elif event.action != "Stop":
            current.positions.append(_position(event))
        if kind is EventKind.STEP:
            return None
        self._open = None
        if self.track is not None and current.agos is None:
            record = current.record
            current.positions = self.track.between(
                current.started_ns, _stamp_ns(event), Pose(*record["start"])
            )
            if not current.positions:
                raise MetricsError(
                    f"episode {record['episode_id']!r}: no pose on the pose topic between its "
                    "start and end"
                )
        trace = _trace(current, kind, event)
        self.traces.append(trace)
        return trace

    def _record(self, event: EventLike) -> dict[str, Any]:
        if event.episode_json:
            record: dict[str, Any] = json.loads(event.episode_json)
            return record
        if event.episode_id in self.records:
            return self.records[event.episode_id]
        raise MetricsError(
            f"episode {event.episode_id!r}: its STARTED event carries no ground truth and no "
            "task file provides it"
        )


def _stamp_ns(event: EventLike) -> int:
    return int(event.header.stamp.sec) * 1_000_000_000 + int(event.header.stamp.nanosec)


def _position(event: EventLike) -> tuple[float, float, float]:
    position = event.pose.position
    return (float(position.x), float(position.y), float(position.z))


def _trace(current: _OpenEpisode, kind: EventKind, event: EventLike) -> EpisodeTrace:
    record = current.record
    collided = kind is EventKind.COLLIDED
    return EpisodeTrace(
        episode_id=record["episode_id"],
        benchmark=record["benchmark"],
        scene=record["scene"],
        family=record["family"],
        setting=record["setting"],
        split=record["split"],
        positions=current.positions,
        stop_called=kind is EventKind.STOPPED,
        collided=collided,
        collision_step=int(event.step) if collided else None,
        steps_used=int(event.step),
        action_budget=int(record["action_budget"]),
        target=tuple(record["target"]),
        reference_length_m=float(record["reference_length_m"]),
        termination=_TERMINATIONS[kind],
        agos=current.agos.record() if current.agos is not None else None,
    )
