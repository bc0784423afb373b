"""Episode events fold into the traces the metrics score."""

from __future__ import annotations

import json

import pytest
from eventstream import event, record, straight_episode

from aerialdojo.errors import MetricsError
from aerialdojo.events import (
    EpisodeAssembler,
    EventKind,
    EventLike,
    PoseTraceBuilder,
    TraceBuilderFactory,
)
from aerialdojo.protocols import trace_builder


def test_a_stopped_episode_becomes_one_trace() -> None:
    assembler = EpisodeAssembler(trace_builder)
    finished = [assembler.add(e) for e in straight_episode("e1", EventKind.STOPPED, [5, 8])]
    assert finished[:-1] == [None, None, None]
    trace = finished[-1]
    assert trace is not None
    assert trace.path == ((0.0, 0.0, 2.0), (5.0, 0.0, 2.0), (8.0, 0.0, 2.0))
    assert trace.stop_called and not trace.collided
    assert trace.steps_used == 3  # two moves and the Stop
    assert trace.target == (10.0, 0.0, 2.0)
    assert trace.reference_length_m == 12.0
    assert assembler.open_episode is None


def test_collision_and_budget_endings() -> None:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("c", EventKind.COLLIDED, [5, 7]):
        assembler.add(e)
    for e in straight_episode("b", EventKind.BUDGET_EXHAUSTED, [1, 2, 3]):
        assembler.add(e)
    collided, exhausted = assembler.traces
    assert (collided.termination, collided.collision_step) == ("collided", 2)
    assert collided.collided and not collided.stop_called
    assert (exhausted.termination, exhausted.collision_step) == ("budget_exhausted", None)


def test_an_infrastructure_failure_discards_the_attempt_and_the_rerun_counts() -> None:
    assembler = EpisodeAssembler(trace_builder)
    first = straight_episode("e1", EventKind.STOPPED, [5, 8])[:2]
    for e in first:
        assembler.add(e)
    assembler.add(event(EventKind.INFRA_FAILURE, "e1", message="no answer from /sim/execute"))
    assert assembler.open_episode is None
    assert assembler.excluded_episodes() == ["e1"]
    for e in straight_episode("e1", EventKind.STOPPED, [2, 3]):
        assembler.add(e)
    assert [t.path[-1][0] for t in assembler.traces] == [3.0]
    assert assembler.excluded_episodes() == []
    assert [f.reason for f in assembler.infra_failures] == ["no answer from /sim/execute"]


def test_a_stream_cut_mid_episode_leaves_it_open_and_unscored() -> None:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("e1", EventKind.STOPPED, [5, 8])[:3]:
        assembler.add(e)
    assert assembler.open_episode == "e1"
    assert assembler.traces == []
    assert not assembler.finished
    assembler.add(event(EventKind.RUN_FINISHED, message="1 of 1 episodes ran"))
    assert assembler.finished and assembler.run_summary == "1 of 1 episodes ran"


def test_the_assembler_folds_with_the_trace_builder_it_is_handed() -> None:
    # events knows no benchmark: whoever assembles hands it each benchmark's builder by name.
    asked: list[str] = []

    class StartOnly(PoseTraceBuilder):
        def add(self, event: EventLike) -> None:
            pass  # keeps the start alone, whatever the events say

    def builders(benchmark: str) -> TraceBuilderFactory:
        asked.append(benchmark)
        return StartOnly

    assembler = EpisodeAssembler(builders)
    finished = [assembler.add(e) for e in straight_episode("e1", EventKind.STOPPED, [5, 8])]
    trace = finished[-1]
    assert asked == ["aerialdojo"]
    assert trace is not None and trace.path == ((0.0, 0.0, 2.0),)
    unknown = json.dumps({**record("e2"), "benchmark": "habitat"})
    with pytest.raises(MetricsError, match="benchmark 'habitat' is not one of"):
        EpisodeAssembler(trace_builder).add(event(EventKind.STARTED, "e2", episode_json=unknown))


def test_a_step_without_its_start_is_an_error() -> None:
    with pytest.raises(MetricsError, match="arrived without its STARTED event"):
        EpisodeAssembler(trace_builder).add(event(EventKind.STEP, "lost", step=1))


def test_records_from_a_task_file_stand_in_for_missing_ground_truth() -> None:
    bare_start = event(EventKind.STARTED, "robot-1")
    with pytest.raises(MetricsError, match="carries no ground truth"):
        EpisodeAssembler(trace_builder).add(bare_start)
    assembler = EpisodeAssembler(trace_builder, records={"robot-1": record("robot-1")})
    assembler.add(bare_start)
    assert assembler.open_episode == "robot-1"


def _accounting(assembler: EpisodeAssembler) -> tuple[list[str], list[str], list[str]]:
    return (
        [trace.episode_id for trace in assembler.traces],
        [failure.episode_id for failure in assembler.excluded()],
        assembler.not_started(),
    )


def test_a_second_attempt_supersedes_the_first_instead_of_duplicating_it() -> None:
    # Issue 15, row 3: start_episode ran an episode that had already finished; the run then
    # held it twice and nothing could be scored.
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("e1", EventKind.STOPPED, [5, 8]):
        assembler.add(e)
    rerun = straight_episode("e1", EventKind.COLLIDED, [2])
    rerun[0].attempt = rerun[1].attempt = 1
    for e in rerun:
        assembler.add(e)
    (trace,) = assembler.traces
    assert trace.termination == "collided"
    assert [(s.episode_id, s.attempt, s.outcome) for s in assembler.superseded] == [
        ("e1", 0, "scored (stopped)")
    ]


def test_every_selected_episode_is_scored_excluded_or_not_started() -> None:
    # Issue 15, row 2: the episode running when the run was cut was "cut short" and listed
    # nowhere a rerun could find it; episodes that never started were not listed at all.
    assembler = EpisodeAssembler(trace_builder)
    assembler.add(
        event(EventKind.RUN_STARTED, episode_json=json.dumps({"selection": ["a", "b", "c", "d"]}))
    )
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    assembler.add(straight_episode("b", EventKind.STOPPED, [5])[0])
    assembler.add(event(EventKind.INFRA_FAILURE, "b", message="no answer from /sim/execute"))
    for e in straight_episode("c", EventKind.STOPPED, [5, 6])[:2]:
        assembler.add(e)
    assert _accounting(assembler) == (["a"], ["b", "c"], ["d"])
    reasons = {failure.episode_id: failure.reason for failure in assembler.excluded()}
    assert reasons["b"] == "no answer from /sim/execute"
    assert "cut short" in reasons["c"]


def test_an_episode_left_open_by_the_next_start_is_cut_short() -> None:
    assembler = EpisodeAssembler(trace_builder)
    assembler.add(straight_episode("a", EventKind.STOPPED, [5])[0])
    for e in straight_episode("b", EventKind.STOPPED, [5]):
        assembler.add(e)
    assert _accounting(assembler) == (["b"], ["a"], [])


def test_a_gap_excludes_the_attempt_under_way_and_the_attempt_that_began_in_it() -> None:
    # Issue 29, item 5: events lost in a damaged chunk are never scored from what is left.
    assembler = EpisodeAssembler(trace_builder)
    a, b, c = (straight_episode(e, EventKind.STOPPED, [4, 8]) for e in "abc")
    for e in a[:2]:
        assembler.add(e)
    assembler.gap("its recording is damaged: chunk 3")
    for e in b[2:]:  # b's start fell into the gap: its steps and end come without it
        assembler.add(e)
    for e in c:
        assembler.add(e)
    assert [trace.episode_id for trace in assembler.traces] == ["c"]
    assert [(f.episode_id, f.reason) for f in assembler.excluded()] == [
        ("a", "its recording is damaged: chunk 3"),
        ("b", "its recording is damaged: chunk 3"),
    ]


def test_the_rest_of_an_attempt_excluded_for_lost_events_is_not_scored() -> None:
    # The evaluator records an INFRA_FAILURE where events of an attempt never reached it; the
    # events of that attempt that follow are ignored, live and from the bag alike.
    assembler = EpisodeAssembler(trace_builder)
    a = straight_episode("a", EventKind.STOPPED, [4, 8, 12])
    assembler.add(a[0])
    assembler.add(event(EventKind.INFRA_FAILURE, "a", message="not recorded whole"))
    for e in a[2:]:
        assert assembler.add(e) is None
    assert not assembler.traces
    assert [f.reason for f in assembler.excluded()] == ["not recorded whole"]


@pytest.mark.parametrize(
    ("kind", "episode_json", "message"),
    [
        (EventKind.RUN_STARTED, "[1]", "RUN_STARTED: its record is not a JSON object"),
        (EventKind.RUN_STARTED, '{"selection": 3}', "its selection is not a list of episode ids"),
        (EventKind.RUN_STARTED, "{", "RUN_STARTED: line 1 column 2: not JSON"),
        (EventKind.STARTED, '{"episode_id": "e"}', "STARTED record's benchmark is missing"),
        (EventKind.STARTED, "[" * 50 + "]" * 50, "nested 50 levels deep"),
    ],
)
def test_a_malformed_event_record_is_named(
    kind: EventKind, episode_json: str, message: str
) -> None:
    with pytest.raises(MetricsError, match=message):
        EpisodeAssembler(trace_builder).add(event(kind, "e", episode_json=episode_json))
