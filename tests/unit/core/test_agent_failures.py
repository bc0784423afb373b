"""What the agent does is scored (issue 25): refusals in a row beyond the allowed re-asks,
silence, and an error its policy raised end an episode as the agent's failure with the
termination named; the trace takes nothing from such an ending, and the accounting counts
how every episode ended."""

from __future__ import annotations

import json
from pathlib import Path

from eventstream import event, record, straight_episode

from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.protocols.referee import RefusalCount
from aerialdojo.report.run import REPORT_MD, STATUS_JSON, score_assembled, write_run


def test_refusals_in_a_row_past_the_allowed_ones_end_the_episode() -> None:
    count = RefusalCount(allowed=2)
    assert [count.refused("uav") for _ in range(2)] == [False, False]
    count.accepted("uav")  # an accepted step starts the count again
    assert [count.refused("uav") for _ in range(3)] == [False, False, True]
    assert count.in_a_row("uav") == 3 and count.in_a_row("ugv") == 0
    # Each agent has its own count (AGOS); none allowed: the first refusal ends it.
    assert RefusalCount(allowed=0).refused("ugv")


def _ended_by(kind: EventKind, episode_id: str) -> list[object]:
    """Two moves, then an ending that carries the refused action (or none) and no motion."""
    moves = straight_episode(episode_id, EventKind.STEP, [3.0, 6.0])[:3]
    ending = event(
        kind,
        episode_id,
        step=2,
        position=(6.0, 0.0, 2.0),
        action="MoveBackward" if kind is EventKind.INVALID_ACTION else "",
        message="uav: 3 refused steps in a row",
    )
    return [*moves, ending]


def test_agent_failures_are_scored_with_their_termination(tmp_path: Path) -> None:
    assembler = EpisodeAssembler(trace_builder)
    selection = {"selection": ["a", "b", "c"]}
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps(selection)))
    for e in [
        *_ended_by(EventKind.INVALID_ACTION, "a"),
        *_ended_by(EventKind.AGENT_TIMEOUT, "b"),
        *straight_episode("c", EventKind.STOPPED, [5.0, 9.0]),
    ]:
        assembler.add(e)
    assembler.add(event(EventKind.RUN_FINISHED, message="3 of 3 episodes ran"))
    result = score_assembled(assembler, None)
    assert result.complete and not result.excluded
    traces = {trace.episode_id: trace for trace in result.traces}
    assert traces["a"].termination == "invalid_action"
    assert traces["b"].termination == "agent_timeout"
    # The ending's event adds no position: the path is the start and the two moves.
    assert [p[0] for p in traces["a"].positions] == [0.0, 3.0, 6.0]
    assert traces["a"].steps_used == 2 and not traces["a"].stop_called
    assert result.metrics is not None
    scores = {score.episode_id: score for score in result.metrics.episodes}
    assert scores["a"].values["sr_3m"] == 0.0 and scores["b"].values["spl_3m"] == 0.0
    assert scores["c"].values["sr_3m"] == 1.0  # stopped 1 m from the target at x = 10

    write_run(tmp_path, result)
    status = json.loads((tmp_path / STATUS_JSON).read_text())
    assert status["endings"] == {"stopped": 1, "invalid_action": 1, "agent_timeout": 1}
    assert status["excluded"] == []
    report = (tmp_path / REPORT_MD).read_text()
    assert (
        "3 episode(s) selected: 3 scored, 0 excluded as infrastructure failures, 0 not started; "
        "the scored ones ended: stopped 1, invalid action 1, agent timeout 1" in report
    )


def test_a_policy_that_raised_is_scored_as_the_agents_failure(tmp_path: Path) -> None:
    assembler = EpisodeAssembler(trace_builder)
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps({"selection": ["a"]})))
    for e in _ended_by(EventKind.AGENT_ERROR, "a"):
        assembler.add(e)
    assembler.add(event(EventKind.RUN_FINISHED, message="1 of 1 episodes ran"))
    result = score_assembled(assembler, None)
    assert result.complete and not result.excluded
    (trace,) = result.traces
    assert trace.termination == "agent_error" and not trace.stop_called
    assert [p[0] for p in trace.positions] == [0.0, 3.0, 6.0]
    write_run(tmp_path, result)
    assert json.loads((tmp_path / STATUS_JSON).read_text())["endings"] == {"agent_error": 1}
    assert "the scored ones ended: agent error 1" in (tmp_path / REPORT_MD).read_text()


def test_an_agos_episode_ends_by_refusals_without_facts() -> None:
    # The AGOS trace builder folds each decision's facts; the ending names none.
    start = {
        **record("g"),
        "benchmark": "agos",
        "start": [0.0, 0.0, 0.0, 0.0],
        "agos": {"uav_budget": 40, "uav_start_visible": False},
    }
    assembler = EpisodeAssembler(trace_builder)
    assembler.add(event(EventKind.STARTED, "g", episode_json=json.dumps(start)))
    trace = assembler.add(event(EventKind.INVALID_ACTION, "g", action="CONFIRM"))
    assert trace is not None and trace.termination == "invalid_action"
    assert trace.agos is not None and trace.agos.uav_decisions == 0
