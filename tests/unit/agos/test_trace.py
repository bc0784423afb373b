"""From the referee's facts to the evaluator's AgosRecord and the AGOS metrics: the event
stream of a refereed episode folds into the record the paper's formulas score."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from aerialdojo.agos.generate import verifying_anchors
from aerialdojo.agos.protocol import AgosReferee
from aerialdojo.agos.town import Town
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    CONFIRM,
    GO_TO_CANDIDATE,
    MOVE_TO_UAV_WAYPOINT,
    REJECT,
    STOP_OBSERVE,
    UAV,
    UGV,
)
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.geometry import Pose
from aerialdojo.metrics.agos import score_episode
from aerialdojo.metrics.jsonl import write_trajectory_log
from aerialdojo.metrics.spatial import polygon_distance_xy
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import trace_builder
from aerialdojo.protocols.referee import Verdict

from .referees import episode_for, far_anchor, orange_target, run_decision, target_cell


@dataclass
class _Vector:
    x: float = 0.0
    y: float = 0.0
    z: float = 0.0


@dataclass
class _Pose:
    position: _Vector = field(default_factory=_Vector)


@dataclass
class _Time:
    sec: int = 0
    nanosec: int = 0


@dataclass
class _Header:
    stamp: _Time = field(default_factory=_Time)


@dataclass
class _Event:
    """The EpisodeEvent fields the assembler reads."""

    kind: int
    episode_id: str
    step: int = 0
    action: str = ""
    episode_json: str = ""
    message: str = ""
    attempt: int = 0
    collided: bool = False
    header: _Header = field(default_factory=_Header)
    pose: _Pose = field(default_factory=_Pose)


def _event(referee: AgosReferee, verdict: Verdict) -> _Event:
    assert verdict.facts is not None
    return _Event(
        verdict.kind,
        referee.episode.episode_id,
        step=referee.state.used,
        action=verdict.facts["action"],
        episode_json=json.dumps(verdict.facts),
    )


def test_a_refereed_episode_folds_into_the_record_and_scores(town: Town) -> None:
    target_id = orange_target(town)
    episode = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    referee = AgosReferee(episode, town, take_turns=False)
    assembler = EpisodeAssembler(trace_builder)
    record = referee.start_record()
    assembler.add(_Event(EventKind.STARTED, episode.episode_id, episode_json=json.dumps(record)))

    uav = referee.state.poses[UAV]
    option = town.map.uav_grid.options(uav.x, uav.y, episode.region)[0]
    decisions = [
        (UAV, MOVE_TO_UAV_WAYPOINT, option.waypoint_id),
        (UAV, ANNOTATE_CANDIDATE, "A1"),  # a wrong cell first
        (UGV, STOP_OBSERVE, ""),
        (UGV, REJECT, ""),
    ]
    for agent, action, argument in decisions:
        assert (
            assembler.add(_event(referee, run_decision(referee, agent, action, argument))) is None
        )
    good_cell = target_cell(referee)
    for agent, action, argument in [
        (UAV, ANNOTATE_CANDIDATE, good_cell),
        (UGV, GO_TO_CANDIDATE, "C002"),
        (UGV, STOP_OBSERVE, ""),
        (UGV, CONFIRM, ""),
    ]:
        trace = assembler.add(_event(referee, run_decision(referee, agent, action, argument)))
    assert trace is not None and trace.stop_called
    agos = trace.agos
    assert agos is not None
    assert (agos.uav_decisions, agos.ugv_decisions) == (3, 5)
    assert [c.candidate_id for c in agos.candidates] == ["C001", "C002"]
    assert agos.confirmations == 1 and agos.confirmation_valid
    assert agos.ground_observation_support
    # T_e is the UAV's own share of the team's 80 decisions (AGOS-Bench, A.2.1): its 3.
    assert agos.uav_budget == agos.uav_decisions == 3
    # Decision k acts on the view before it: the start view, then the moved-to waypoint's.
    moved = Pose(option.x, option.y, option.z, uav.yaw)
    views = [
        referee.uav_sees_target(uav),
        referee.uav_sees_target(moved),
        referee.uav_sees_target(moved),
    ]
    assert agos.oracle_visible_uav_step == next(k for k, seen in enumerate(views, 1) if seen)
    # Positions are the UGV's: its start, then the fine points it drove, ending near the target.
    assert trace.path[0] == pytest.approx((episode.ugv_start.x, episode.ugv_start.y, 1.6))
    assert math.dist(trace.final_position[:2], episode.target_center[:2]) <= 50.0
    driven = sum(math.dist(a, b) for a, b in zip(trace.path, trace.path[1:], strict=False))
    assert driven > 50.0

    score = score_episode(trace)
    values = score.values
    assert values["sr"] == 1.0 and values["osr"] == 1.0 and values["gva"] == 1.0
    assert values["ds"] == 8.0 and values["ds_uav"] == 3.0
    gaps = [polygon_distance_xy(episode.target_center, c.polygon_xy) for c in agos.candidates]
    expected = max((1 / math.log2(rank + 1)) * 50 / (50 + gap) for rank, gap in enumerate(gaps, 1))
    assert values["acg"] == pytest.approx(expected)
    assert values["ne_m"] == pytest.approx(math.dist(trace.final_position, episode.target_center))


def _played(
    referee: AgosReferee, episode_id: str, decisions: list[tuple[str, str]]
) -> EpisodeTrace:
    """The trace the evaluator folds from the UGV decisions ``decisions`` (the last ends the
    episode), under ``episode_id``."""
    assembler = EpisodeAssembler(trace_builder)
    record = {**referee.start_record(), "episode_id": episode_id}
    assembler.add(_Event(EventKind.STARTED, episode_id, episode_json=json.dumps(record)))
    trace = None
    for action, argument in decisions:
        event = _event(referee, run_decision(referee, UGV, action, argument))
        trace = assembler.add(replace(event, episode_id=episode_id))
    assert trace is not None
    return trace


def _metrics_of(traces: list[EpisodeTrace], tmp_path: Path) -> dict:
    """``aerialdojo metrics`` on a trajectory log of ``traces``: the project's own reloader."""
    log = tmp_path / "trajectories.jsonl"
    write_trajectory_log(log, traces)
    scored = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "metrics", str(log), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert scored.returncode == 0, scored.stderr
    return json.loads((tmp_path / "metrics.json").read_text())


def test_without_the_fresh_observation_rule_a_confirm_is_its_own_six_view_check(
    town: Town, tmp_path: Path
) -> None:
    # A.2.3: a fresh STOP_OBSERVE is required "when this requirement is enabled". Disabled,
    # a CONFIRM near the target succeeds without one, and its checker's six views are the
    # ground observation: the success counts in OSR and in GVA's support.
    target_id = orange_target(town)
    near = verifying_anchors(town, town.vehicle(target_id), 50.0)[0]
    episode = episode_for(town, near, target_id=target_id)
    relaxed = AgosReferee(episode, town, take_turns=False, require_fresh_observation=False)
    trace = _played(relaxed, "relaxed", [(CONFIRM, "")])
    metrics = _metrics_of([trace], tmp_path)
    (scored,) = metrics["episodes"]
    assert scored["termination"] == "stopped"
    values = scored["values"]
    assert (values["sr"], values["osr"], values["gva"]) == (1.0, 1.0, 1.0)
    assert metrics["overall"]["support"]["gva"] == 1


def test_with_several_confirmations_false_ones_close_candidates_and_the_episode_goes_on(
    town: Town, tmp_path: Path
) -> None:
    target_id = orange_target(town)
    near = verifying_anchors(town, town.vehicle(target_id), 50.0)[0]
    episode = episode_for(town, near, target_id=target_id)
    # A false CONFIRM (no STOP_OBSERVE before it), then a valid one: the second of three.
    second = AgosReferee(episode, town, take_turns=False, confirmation_budget=3)
    succeeded = _played(second, "second", [(CONFIRM, ""), (STOP_OBSERVE, ""), (CONFIRM, "")])
    # Three false ones, far from the target: the third ends the episode.
    far = episode_for(town, far_anchor(town, target_id), target_id=target_id)
    exhausted = AgosReferee(far, town, take_turns=False, confirmation_budget=3)
    failed = _played(exhausted, "failed", [(STOP_OBSERVE, ""), (CONFIRM, "")] * 3)
    metrics = _metrics_of([succeeded, failed], tmp_path)
    by_id = {e["episode_id"]: e for e in metrics["episodes"]}
    assert by_id["second"]["termination"] == by_id["failed"]["termination"] == "stopped"
    assert by_id["second"]["values"]["sr"] == 1.0 and by_id["second"]["values"]["gva"] == 1.0
    assert by_id["failed"]["values"]["sr"] == 0.0 and by_id["failed"]["values"]["gva"] == 0.0
    assert metrics["overall"]["support"]["gva"] == 2
