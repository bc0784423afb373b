"""A scored run records which suite it ran (name and SHA-256 of the file): from the task
manager's RUN_STARTED when the record holds events, else from the suite it was scored
against (a robot's bag with ``evaluate-bag --map --task``), so that ``aerialdojo compare``
can refuse runs of different suites."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from eventstream import event, straight_episode

from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import METRICS_JSON, NOTES_FILE, score_assembled, write_run
from aerialdojo.tasks.records import suite_identity
from aerialdojo.tasks.suite import resolve_suite

MINI = {"name": "aerialdojo_mini", "sha256": "0" * 64}
REBUILT = {"name": "aerialdojo_mini", "sha256": "1" * 64}


def _assembled(*suites: dict[str, str]) -> EpisodeAssembler:
    assembler = EpisodeAssembler(trace_builder)
    for index, suite in enumerate(suites):
        started = {"selection": [f"e{index}"], "suite": suite}
        assembler.add(event(EventKind.RUN_STARTED, episode_json=json.dumps(started)))
        for e in straight_episode(f"e{index}", EventKind.STOPPED, [5.0, 9.0]):
            assembler.add(e)
    return assembler


def test_the_suite_run_started_names_is_in_metrics_json(tmp_path: Path) -> None:
    result = score_assembled(_assembled(MINI, MINI), None)
    assert result.suites == (MINI,)
    # A suite given as well (the evaluator's parameter) does not override the record.
    write_run(tmp_path, result, suite=resolve_suite("aerialdojo_mini"))
    metrics = json.loads((tmp_path / METRICS_JSON).read_text())
    assert metrics["run"]["suites"] == [MINI]


def test_a_run_over_two_suites_says_so(tmp_path: Path) -> None:
    result = score_assembled(_assembled(MINI, REBUILT), None)
    assert result.suites == (MINI, REBUILT)
    write_run(tmp_path, result)
    notes = (tmp_path / NOTES_FILE).read_text()
    assert "the run's episodes come from 2 suites: aerialdojo_mini (000000000000), " in notes


def test_a_record_without_events_takes_the_suite_it_was_scored_against(tmp_path: Path) -> None:
    assembler = EpisodeAssembler(trace_builder)
    for e in straight_episode("e0", EventKind.STOPPED, [5.0]):
        assembler.add(e)
    result = score_assembled(assembler, None)
    assert result.suites == ()
    path = resolve_suite("alley_rehearsal")
    write_run(tmp_path / "robot", result, suite=path)
    metrics = json.loads((tmp_path / "robot" / METRICS_JSON).read_text())
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    assert metrics["run"]["suites"] == [{"name": "alley_rehearsal", "sha256": digest}]
    assert suite_identity(path) == {"name": "alley_rehearsal", "sha256": digest}
    write_run(tmp_path / "log", result)  # a trajectory log: nothing says which suite
    assert "run" not in json.loads((tmp_path / "log" / METRICS_JSON).read_text())
