"""Trajectory logs: round trip, scoring with the evaluator's code, every bad line reported."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from aerialdojo.errors import MetricsError, TrajectoryLogError
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.metrics.jsonl import (
    load_trajectory_log,
    record_to_trace,
    records_to_traces,
    trace_to_record,
    write_trajectory_log,
)
from aerialdojo.metrics.scores import PathFacts
from aerialdojo.metrics.trace import AgosCandidate, AgosRecord, EpisodeTrace
from aerialdojo.protocols.scoring import score_run
from aerialdojo.report.markdown import metrics_json_text
from aerialdojo.report.run import score_trajectory_log

Factory = Callable[..., EpisodeTrace]


def _write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records),
        encoding="utf-8",
    )
    return path


def test_a_valid_log_scores_like_the_traces_it_holds(make_trace: Factory, tmp_path: Path) -> None:
    traces = [
        make_trace(episode_id="a"),
        make_trace(
            episode_id="b",
            positions=((10, 0, 10), (5, 0, 10), (2, 0, 10), (2, 5, 10)),
            stop_called=False,
            collided=True,
            collision_step=3,
            termination="collided",
        ),
    ]
    excluded = [ExcludedEpisode(episode_id="c", attempt=2, reason="renderer crashed")]
    path = tmp_path / "run.jsonl"
    write_trajectory_log(path, traces, excluded)

    log = load_trajectory_log(path)
    assert log.traces == tuple(traces)
    assert log.excluded == tuple(excluded)
    from_file = score_trajectory_log(path, radii=(3.0,)).metrics
    assert from_file is not None
    assert metrics_json_text(from_file) == metrics_json_text(score_run(traces, (3.0,), excluded))
    assert from_file.overall.values["sr_3m"] == 0.5
    assert from_file.overall.values["osr_3m"] == 1.0


def test_agos_records_round_trip(make_trace: Factory, tmp_path: Path) -> None:
    record = AgosRecord(
        uav_decisions=3,
        ugv_decisions=4,
        uav_budget=40,
        oracle_visible_uav_step=None,
        candidates=(
            AgosCandidate(
                candidate_id="c1",
                polygon_xy=((0, 0), (1, 0), (1, 1)),
                center=(0.5, 0.3, 0.0),
            ),
        ),
        confirmations=1,
    )
    trace = make_trace(benchmark="agos", agos=record)
    path = tmp_path / "agos.jsonl"
    write_trajectory_log(path, [trace])
    assert load_trajectory_log(path).traces == (trace,)
    scored = score_trajectory_log(path).metrics
    assert scored is not None and scored.overall.values["ds"] == 7.0


def test_every_bad_line_is_listed(make_trace: Factory, tmp_path: Path) -> None:
    good = trace_to_record(make_trace(episode_id="good"))
    missing_target = {key: value for key, value in good.items() if key != "target"}
    path = _write_lines(
        tmp_path / "bad.jsonl",
        [
            good,  # line 1
            {**missing_target, "episode_id": "m"},  # line 2
            '{"schema_version": "1.0", "episode_id": ',  # line 3
            "",  # line 4: blank lines are skipped
            {**good, "episode_id": "p", "positions": [[0, 0, 0], [1, "x", 2]]},  # line 5
            {**good, "episode_id": "t", "termination": "stopped", "stop_called": False},  # 6
            {**good},  # line 7: repeats "good"
            {**good, "episode_id": "v", "schema_version": "2.0", "speed": 3},  # line 8
            {"schema_version": "1.0", "record": "excluded", "episode_id": "x"},  # line 9
            '{"schema_version": "1.0", "reference_length_m": NaN}',  # line 10
        ],
    )
    with pytest.raises(TrajectoryLogError) as caught:
        load_trajectory_log(path)
    problems = caught.value.problems
    assert f"{path}:2: target: required field is missing" in problems
    assert f"{path}:3: (line): line 1 column 41: not JSON: Expecting value" in problems
    assert not any(p.startswith(f"{path}:4:") for p in problems)
    assert f"{path}:5: positions[1][1]: 'x' is not of type 'number'" in problems
    assert any(p.startswith(f"{path}:6: episode 't'") and "contradicts" in p for p in problems)
    assert f"{path}:7: episode_id: 'good' repeats line 1" in problems
    assert any(p.startswith(f"{path}:8: schema_version: '2.0' does not match") for p in problems)
    assert any(p.startswith(f"{path}:8: (record): Additional properties") for p in problems)
    assert f"{path}:9: attempt: required field is missing" in problems
    assert f"{path}:9: reason: required field is missing" in problems
    assert f"{path}:10: (line): not JSON: NaN is not a JSON number" in problems
    assert not any(p.startswith(f"{path}:1:") for p in problems)
    assert str(path) in str(caught.value)


def test_a_log_without_episodes_cannot_be_scored(tmp_path: Path) -> None:
    path = _write_lines(
        tmp_path / "only_failures.jsonl",
        [{"schema_version": "1.0", "record": "excluded", "episode_id": "a", "attempt": 1,
          "reason": "timeout"}],
    )  # fmt: skip
    assert load_trajectory_log(path).excluded[0].reason == "timeout"
    with pytest.raises(MetricsError, match="no episode records"):
        score_trajectory_log(path)


def test_a_missing_file_is_reported(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryLogError, match="cannot read"):
        load_trajectory_log(tmp_path / "absent.jsonl")


def test_impossible_records_are_refused(make_trace: Factory, tmp_path: Path) -> None:
    # Issue 15, row 9: each of these was scored.
    good = trace_to_record(make_trace(episode_id="good"))
    agos = trace_to_record(
        make_trace(
            benchmark="agos",
            agos=AgosRecord(
                uav_decisions=2, ugv_decisions=2, uav_budget=40,
                oracle_visible_uav_step=None, confirmations=1,
            ),
        )
    )  # fmt: skip
    path = _write_lines(
        tmp_path / "impossible.jsonl",
        [
            {**good, "episode_id": "budget", "steps_used": 1_000_000},  # line 1
            {**good, "episode_id": "still", "steps_used": 90, "positions": [[1, 0, 10]]},  # 2
            good,  # line 3
            {"schema_version": "1.0", "record": "excluded", "episode_id": "good",
             "attempt": 1, "reason": "timeout"},  # line 4
            {**agos, "episode_id": "blind",
             "agos": {**agos["agos"], "confirmation_valid": True}},  # line 5
            {**agos, "episode_id": "silent", "agos": {**agos["agos"], "confirmations": 0}},  # 6
            {**agos, "episode_id": "going_on", "stop_called": False,
             "termination": "budget_exhausted",
             "agos": {**agos["agos"], "confirmation_valid": True,
                      "ground_observation_support": True}},  # line 7
        ],
    )  # fmt: skip
    with pytest.raises(TrajectoryLogError) as caught:
        load_trajectory_log(path)
    problems = "\n".join(caught.value.problems)
    assert f"{path}:1: episode 'budget': steps_used=1000000 exceeds action_budget=90" in problems
    assert f"{path}:2: episode 'still': positions: 1 for 90 actions; expected 90" in problems
    assert f"{path}:4: episode_id: 'good' is scored on line 3 and excluded here" in problems
    assert f"{path}:5: episode 'blind': agos.confirmation_valid without ground_observation" in (
        problems
    )
    assert f"{path}:6: episode 'silent': stop_called=True with agos.confirmations=0" in problems
    assert f"{path}:7: episode 'going_on': agos.confirmation_valid with stop_called=False" in (
        problems
    )


def test_a_huge_line_is_refused_unread_and_problems_are_capped(tmp_path: Path) -> None:
    # Issue 15, row 4: a log is read one line at a time, never whole.
    from aerialdojo.metrics import jsonl

    path = tmp_path / "huge.jsonl"
    with path.open("w", encoding="utf-8") as stream:
        stream.write("x" * (jsonl.MAX_LINE_BYTES + 10) + "\n")
        stream.writelines("{}\n" for _ in range(jsonl.MAX_PROBLEMS * 2))
    with pytest.raises(TrajectoryLogError) as caught:
        load_trajectory_log(path)
    problems = caught.value.problems
    assert problems[0] == f"{path}:1: (line): longer than {jsonl.MAX_LINE_BYTES} bytes"
    assert len(problems) == jsonl.MAX_PROBLEMS + 1
    assert problems[-1].endswith("more problems")


def test_records_converted_together_make_the_traces_each_makes_alone(make_trace: Factory) -> None:
    traces = [
        make_trace(episode_id="one", positions=((1.0, 0.0, 10.0),), steps_used=0),
        make_trace(episode_id="still", positions=((1.0, 0.5, 10.0),) * 3),
        make_trace(episode_id="ep", positions=((-0.0, 2.5, 10.0), (1e-300, 0.1, 9.5))),
    ]
    records = [json.loads(json.dumps(trace_to_record(trace))) for trace in traces]
    together, alone = records_to_traces(records), [record_to_trace(r) for r in records]
    assert together == alone == traces
    assert [t.position_array.tolist() for t in together] == [list(map(list, t.path)) for t in alone]
    assert not any(t.position_array.flags.writeable for t in together)
    PathFacts.measure(together)
    assert [PathFacts.of(t) for t in together] == [PathFacts.of(t) for t in alone]

    # An int among the floats: each record converts its own, to the same values.
    records[2]["positions"][0][1] = 2
    assert records_to_traces(records)[2].path[0] == (-0.0, 2.0, 10.0)
    # A record each would refuse is refused together too, with the same error.
    records[1]["positions"] = [[1.0, 0.0]]
    with pytest.raises(MetricsError, match=r"episode 'still': positions must be \(N>=1, 3\)"):
        records_to_traces(records)
    records[1]["positions"] = [[1.0, 0.0, float("nan")]]
    with pytest.raises(MetricsError, match="episode 'still': positions contain non-finite"):
        records_to_traces(records)
