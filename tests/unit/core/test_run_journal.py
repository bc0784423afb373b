"""The task manager's journal (issue 29, last aim): what a task manager started in place of
one that died resumes from, and what it refuses to resume from."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from aerialdojo.run_journal import JOURNAL_FILE, JournalError, RunJournal, selection_digest

SELECTION = ["ep-a", "ep-b", "ep-c"]


def _begun(tmp_path: Path) -> RunJournal:
    return RunJournal.begin(tmp_path / JOURNAL_FILE, "run-1", SELECTION)


def test_a_run_read_back_where_its_task_manager_died_names_the_attempt_under_way(
    tmp_path: Path,
) -> None:
    journal = _begun(tmp_path)
    assert journal.claim(0, last_stamp_ns=0) == 0
    journal.ended(done=True)  # ep-a scored
    assert journal.claim(1, last_stamp_ns=7_000_000_000) == 0
    journal.ended(done=False, episode_id="ep-b", scored=False)  # an infrastructure failure
    assert journal.claim(1, last_stamp_ns=9_000_000_000) == 1  # its rerun, under way

    resumed = RunJournal.load(tmp_path / JOURNAL_FILE, "run-1", SELECTION)
    assert (resumed.position, resumed.attempts, resumed.last_stamp_ns) == (1, 2, 9_000_000_000)
    interrupted = resumed.interrupted
    assert interrupted is not None
    assert (interrupted.index, interrupted.attempt, interrupted.pid) == (1, 1, os.getpid())
    assert resumed.summary is None and resumed.not_scored == []


def test_an_episode_given_up_is_listed_unscored_and_the_run_moves_past_it(tmp_path: Path) -> None:
    journal = _begun(tmp_path)
    journal.claim(0, last_stamp_ns=0)
    journal.ended(done=True, episode_id="ep-a", scored=False)
    journal.claim(1, last_stamp_ns=0)
    journal.ended(done=True)
    journal.finished("2 of 3 episodes ran")

    resumed = RunJournal.load(tmp_path / JOURNAL_FILE, "run-1", SELECTION)
    assert (resumed.position, resumed.attempts, resumed.interrupted) == (2, 0, None)
    assert resumed.not_scored == ["ep-a"] and resumed.summary == "2 of 3 episodes ran"


def test_episodes_are_claimed_in_selection_order(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="the run is at 0"):
        _begun(tmp_path).claim(1, last_stamp_ns=0)


def test_another_runs_journal_is_refused_naming_both_runs(tmp_path: Path) -> None:
    _begun(tmp_path)
    with pytest.raises(JournalError, match="it is run 'run-1''s, not this run 'run-2''s"):
        RunJournal.load(tmp_path / JOURNAL_FILE, "run-2", SELECTION)


def test_a_journal_of_another_selection_is_refused(tmp_path: Path) -> None:
    _begun(tmp_path)
    with pytest.raises(JournalError, match=r"\(3 episodes, SHA-256 .*\(2 episodes\)"):
        RunJournal.load(tmp_path / JOURNAL_FILE, "run-1", SELECTION[:2])
    reordered = list(reversed(SELECTION))
    assert selection_digest(reordered) != selection_digest(SELECTION)
    with pytest.raises(JournalError, match="selection"):
        RunJournal.load(tmp_path / JOURNAL_FILE, "run-1", reordered)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"format": 1, "run_id": "run-1"', "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        ("\xff\xfe", "not a text file"),
        ("", "not JSON"),
    ],
)
def test_a_corrupt_journal_is_refused_naming_the_file(
    tmp_path: Path, text: str, reason: str
) -> None:
    path = tmp_path / JOURNAL_FILE
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(JournalError, match=reason) as refused:
        RunJournal.load(path, "run-1", SELECTION)
    assert str(path) in str(refused.value)


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("format", 2, "format 2"),
        ("position", 4, "position 4 past the 3 episodes"),
        ("attempts", -1, "-1 is not a whole number"),
        ("attempts", True, "True is not a whole number"),
        ("claimed_by", "1234", "'1234' is not a whole number"),
        ("not_scored", "ep-a", "'ep-a' is not a list"),
        ("summary", 3, "3 is not a str"),
    ],
)
def test_a_journal_that_says_what_cannot_be_is_refused(
    tmp_path: Path, field: str, value: object, reason: str
) -> None:
    journal = _begun(tmp_path)
    document = json.loads(journal.path.read_text())
    document[field] = value
    journal.path.write_text(json.dumps(document))
    with pytest.raises(JournalError, match=reason):
        RunJournal.load(journal.path, "run-1", SELECTION)


def test_a_journal_without_a_field_is_refused(tmp_path: Path) -> None:
    journal = _begun(tmp_path)
    document = json.loads(journal.path.read_text())
    del document["position"]
    journal.path.write_text(json.dumps(document))
    with pytest.raises(JournalError, match="KeyError: 'position'"):
        RunJournal.load(journal.path, "run-1", SELECTION)


def test_an_attempt_under_way_that_was_never_claimed_is_refused(tmp_path: Path) -> None:
    journal = _begun(tmp_path)
    document = json.loads(journal.path.read_text())
    document["claimed_by"] = 1234
    journal.path.write_text(json.dumps(document))
    with pytest.raises(JournalError, match="an attempt under way, none claimed"):
        RunJournal.load(journal.path, "run-1", SELECTION)


def test_a_journal_that_cannot_be_written_leaves_the_last_one_whole(tmp_path: Path) -> None:
    journal = _begun(tmp_path)
    journal.claim(0, last_stamp_ns=0)
    before = journal.path.read_bytes()
    # The temporary file it writes first (documents.write_atomic) cannot be made: in its
    # place stands a directory (a failure root's permissions would not give).
    (tmp_path / f".{JOURNAL_FILE}.{os.getpid()}.tmp").mkdir()
    with pytest.raises(OSError):
        journal.ended(done=True)
    assert journal.path.read_bytes() == before
