"""A task manager started where its run's journal is not its own (issue 29, last aim): it
refuses, naming the journal and both runs, before it serves anything, and the runner does not
start it again (it would refuse again)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rostest import running, specs_for

from aerialdojo.graph import selected_episodes
from aerialdojo.protocols import load_suite
from aerialdojo.run_journal import JOURNAL_FILE, RunJournal
from aerialdojo.runner import wait_for_graph
from aerialdojo.tasks.suite import resolve_suite

pytestmark = pytest.mark.ros


def test_another_runs_journal_is_refused_and_the_task_manager_not_restarted(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "mine"
    run_dir.mkdir()
    suite = load_suite(resolve_suite("aerialdojo_mini"))[1]
    RunJournal.begin(run_dir / JOURNAL_FILE, "theirs", selected_episodes(suite, {}))
    with running(specs_for({"task_manager": {}}), run_dir) as processes:
        outcome = wait_for_graph(processes, timeout_s=120.0)
    (task_manager,) = processes
    log = task_manager.log_path.read_text(errors="replace")
    assert outcome.exit_codes == {"task_manager": 1}, log[-3000:]
    assert task_manager.restarts == 0
    assert f"task manager journal {run_dir / JOURNAL_FILE}: it is run 'theirs''s" in log
    assert "not this run 'mine''s" in log and "Traceback" not in log
