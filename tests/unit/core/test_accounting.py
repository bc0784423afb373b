"""Every selected episode ends scored, excluded (with the reason) or not started, in the
report, the run notes and ``run_status.json`` alike (issue 15, rows 2, 3 and 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from eventstream import event, straight_episode

from aerialdojo.cli import main
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.graph import config_of, run_specs
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import (
    NOTES_FILE,
    REPORT_MD,
    STATUS_JSON,
    TRAJECTORIES_JSONL,
    score_assembled,
    score_trajectory_log,
    write_run,
)


def _run(*, cut: bool) -> EpisodeAssembler:
    assembler = EpisodeAssembler(trace_builder)
    selection = {"selection": ["a", "b", "c"]}
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps(selection)))
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    assembler.add(straight_episode("b", EventKind.STOPPED, [5])[0])
    if not cut:
        assembler.add(event(EventKind.INFRA_FAILURE, "b", message="no answer from /sim/reset"))
        assembler.add(event(EventKind.RUN_FINISHED, message="1 of 3 episodes ran"))
    return assembler


def test_a_run_with_exclusions_says_so_and_lists_what_to_rerun(tmp_path: Path) -> None:
    # Row 12: such a run's notes said every started episode was scored.
    result = score_assembled(_run(cut=False), None)
    assert not result.complete
    write_run(tmp_path, result)
    status = json.loads((tmp_path / STATUS_JSON).read_text())
    assert status["complete"] is False
    assert status["scored"] == ["a"]
    assert [(e["episode_id"], e["reason"]) for e in status["excluded"]] == [
        ("b", "no answer from /sim/reset")
    ]
    assert status["not_started"] == ["c"]
    notes = (tmp_path / NOTES_FILE).read_text()
    assert "every started episode was scored" not in notes
    assert "the task manager ended the run: 1 of 3 episodes ran" in notes  # why c never ran
    assert "3 episode(s) selected: 1 scored, 1 excluded" in notes
    report = (tmp_path / REPORT_MD).read_text()
    assert "| b | excluded (attempt 1): no answer from /sim/reset |" in report
    assert "| c | not started |" in report


def test_an_interrupted_run_excludes_the_running_episode(tmp_path: Path) -> None:
    # Row 2: the running episode was "cut short", listed nowhere a rerun could find it.
    result = score_assembled(_run(cut=True), None)
    write_run(tmp_path, result)
    status = json.loads((tmp_path / STATUS_JSON).read_text())
    assert status["finished"] is False
    assert [e["episode_id"] for e in status["excluded"]] == ["b"]
    assert "cut short" in status["excluded"][0]["reason"]
    assert status["not_started"] == ["c"]
    metrics = json.loads((tmp_path / "metrics.json").read_text())
    assert [e["episode_id"] for e in metrics["excluded"]] == ["b"]


def test_a_complete_run_says_it_is_complete(tmp_path: Path) -> None:
    assembler = EpisodeAssembler(trace_builder)
    assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps({"selection": ["a"]})))
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    assembler.add(event(EventKind.RUN_FINISHED, message="1 of 1 episodes ran"))
    result = score_assembled(assembler, None)
    write_run(tmp_path, result)
    assert result.complete
    assert json.loads((tmp_path / STATUS_JSON).read_text())["complete"] is True
    assert "the run is complete" in (tmp_path / NOTES_FILE).read_text()


def test_an_intervention_is_counted_and_reported_apart_never_scored_and_rerun(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    # A robot run: b's attempt ended by the operator's e-stop, c's by a robot failure.
    assembler = EpisodeAssembler(trace_builder)
    selection = json.dumps({"selection": ["a", "b", "c"]})
    assembler.add(event(EventKind.RUN_STARTED, episode_json=selection))
    for e in straight_episode("a", EventKind.STOPPED, [5]):
        assembler.add(e)
    assembler.add(straight_episode("b", EventKind.STOPPED, [5])[0])
    reason = "operator/safety intervention: estop: latched by the operator"
    assembler.add(event(EventKind.INTERVENTION, "b", message=reason))
    assembler.add(straight_episode("c", EventKind.STOPPED, [5])[0])
    assembler.add(event(EventKind.INFRA_FAILURE, "c", message="arrival missed"))
    assembler.add(event(EventKind.RUN_FINISHED, message="3 of 3 episodes ran"))
    result = score_assembled(assembler, None)
    assert [trace.episode_id for trace in result.traces] == ["a"]
    assert not result.complete
    assert result.accounting == (
        "3 episode(s) selected: 1 scored, 1 excluded as infrastructure failures, "
        "1 excluded as operator/safety interventions, 0 not started"
    )
    run_dir = tmp_path / "r1"
    write_run(run_dir, result)
    status = json.loads((run_dir / STATUS_JSON).read_text())
    assert status["excluded"] == [
        {"episode_id": "b", "attempt": 1, "reason": reason, "cause": "intervention"},
        {"episode_id": "c", "attempt": 1, "reason": "arrival missed"},
    ]
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["excluded"] == status["excluded"]
    report = (run_dir / REPORT_MD).read_text()
    assert "excluded (infrastructure failures): 1; operator/safety interventions: 1" in report
    assert f"| b | 1 | intervention | {reason} |" in report
    assert f"| b | excluded (attempt 1, operator/safety intervention): {reason} |" in report
    notes = (run_dir / NOTES_FILE).read_text()
    assert f"episode b is excluded (attempt 1, an operator/safety intervention): {reason}" in notes
    # The trajectory log keeps the cause, and `aerialdojo rerun` runs it with the failure.
    log = score_trajectory_log(run_dir / TRAJECTORIES_JSONL)
    assert [(e.episode_id, e.cause) for e in log.excluded] == [
        ("b", "intervention"),
        ("c", "infrastructure"),
    ]
    specs = run_specs(repo / "config" / "eval.yaml", run_id="r1", output_dir=str(tmp_path))
    (run_dir / "config.yaml").write_text(yaml.safe_dump(config_of(specs)))
    assert main(["rerun", str(run_dir), "--dry-run"]) == 0
    assert "rerunning 2 episode(s): b, c" in capsys.readouterr().out
    # A rerun that scores b supersedes the intervention: nothing is listed twice.
    for e in straight_episode("b", EventKind.STOPPED, [5]):
        e.attempt = 1
        assembler.add(e)
    again = score_assembled(assembler, None)
    assert sorted(trace.episode_id for trace in again.traces) == ["a", "b"]
    assert [entry.episode_id for entry in again.excluded] == ["c"]
