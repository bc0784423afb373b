"""Every selected episode ends scored, excluded (with the reason) or not started, in the
report, the run notes and ``run_status.json`` alike (issue 15, rows 2, 3 and 12)."""

from __future__ import annotations

import json
from pathlib import Path

from eventstream import event, straight_episode

from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import NOTES_FILE, REPORT_MD, STATUS_JSON, score_assembled, write_run


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
