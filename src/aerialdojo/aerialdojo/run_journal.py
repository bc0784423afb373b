"""The task manager's journal of an automatic run: how far through its selection the run is,
how many attempts the episode there has had, whether one is under way and which episodes
ended unscored. The task manager rewrites it whole (write then rename) in the run directory
as each attempt is claimed and as it ends, so that one started in place of a task manager
that died (``runner.RESTARTABLE``) resumes the run: it serves no episode again that ended,
ends the attempt its predecessor left under way as an infrastructure failure, and reruns that
episode within ``max_attempts``.

An automatic run serves its selection in order, so the episodes before ``position`` are the
ones it is through with: the journal stays a few hundred bytes for a selection of 200,000.

A journal is trusted only by the run that wrote it: one of another run id, of another
selection, of another format, or that does not parse is refused with ``JournalError``, never
resumed from. ROS-free.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aerialdojo.documents import RECORD, DocumentError, load_json, write_atomic
from aerialdojo.errors import AerialDojoError

#: The journal's name in the run directory.
JOURNAL_FILE = "task_manager_journal.json"
#: Written into every journal; a journal of another format is refused.
JOURNAL_FORMAT = 1


class JournalError(AerialDojoError):
    """A journal that cannot be resumed from; the message names the file and why."""


def selection_digest(selection: Sequence[str]) -> str:
    """SHA-256 of a selection (its ids in order): a journal names the selection it ran by it."""
    digest = hashlib.sha256()
    for episode_id in selection:
        digest.update(episode_id.encode("utf-8", "surrogatepass") + b"\n")
    return digest.hexdigest()


@dataclass(frozen=True)
class InterruptedAttempt:
    """The attempt a task manager claimed and did not see end.

    Attributes:
        index: its episode's position in the selection.
        attempt: its attempt number (from 0).
        pid: the task manager process that claimed it.
    """

    index: int
    attempt: int
    pid: int


@dataclass
class RunJournal:
    """What the task manager of run ``run_id`` has done of its selection so far.

    Attributes:
        path: where it is written.
        run_id: the run it belongs to.
        selection: ``selection_digest`` of the run's episodes.
        count: how many episodes the run selected.
        position: the selection index of the episode the run is at; it is through with
            every episode before it (scored, or given up), and with all at ``count``.
        attempts: attempts claimed of the episode at ``position`` (a reset that failed
            counts).
        claimed_by: the task manager process whose attempt (number ``attempts - 1``) is
            under way; None when none is.
        not_scored: the episodes given up (out of attempts, or an intervention), in order.
        last_stamp_ns: the latest stamp the bridge gave, as of the last claim: a rerun's
            reset must come later.
        summary: the ``RUN_FINISHED`` message, once the run was announced finished.
    """

    path: Path
    run_id: str
    selection: str
    count: int
    position: int = 0
    attempts: int = 0
    claimed_by: int | None = None
    not_scored: list[str] = field(default_factory=list)
    last_stamp_ns: int = 0
    summary: str | None = None

    @classmethod
    def begin(cls, path: Path, run_id: str, selection: Sequence[str]) -> RunJournal:
        """The journal of a run that starts now, written.

        Raises:
            OSError: it could not be written.
        """
        journal = cls(path, run_id, selection_digest(selection), len(selection))
        journal._write()
        return journal

    @classmethod
    def load(cls, path: Path, run_id: str, selection: Sequence[str]) -> RunJournal:
        """The journal at ``path``, checked to be run ``run_id``'s, of ``selection``.

        Raises:
            JournalError: it cannot be read or parsed, is of another format, another run
                or another selection, or says what cannot be (a position past the end).
        """
        try:
            document = load_json(path, RECORD)
        except DocumentError as error:
            raise JournalError(f"task manager journal {error}") from None
        try:
            journal = cls._of(path, document)
        except (KeyError, TypeError, ValueError) as error:
            raise JournalError(
                f"task manager journal {path}: not a journal of format {JOURNAL_FORMAT} "
                f"({type(error).__name__}: {error})"
            ) from None
        if journal.run_id != run_id:
            raise JournalError(
                f"task manager journal {path}: it is run {journal.run_id!r}'s, not this run "
                f"{run_id!r}'s; a run directory holds one run"
            )
        if journal.selection != selection_digest(selection) or journal.count != len(selection):
            raise JournalError(
                f"task manager journal {path}: its selection ({journal.count} episodes, "
                f"SHA-256 {journal.selection[:12]}) is not this task manager's "
                f"({len(selection)} episodes): the run's suite or config changed under it"
            )
        return journal

    @classmethod
    def _of(cls, path: Path, document: Any) -> RunJournal:
        if not isinstance(document, dict):
            raise TypeError(f"a JSON {type(document).__name__}, not an object")
        if document.get("format") != JOURNAL_FORMAT:
            raise ValueError(f"format {document.get('format')!r}")
        summary = document["summary"]
        claimed_by = document["claimed_by"]
        journal = cls(
            path=path,
            run_id=_typed(document["run_id"], str),
            selection=_typed(document["selection"], str),
            count=_count(document["count"]),
            position=_count(document["position"]),
            attempts=_count(document["attempts"]),
            claimed_by=None if claimed_by is None else _count(claimed_by),
            not_scored=[_typed(item, str) for item in _typed(document["not_scored"], list)],
            last_stamp_ns=_count(document["last_stamp_ns"]),
            summary=None if summary is None else _typed(summary, str),
        )
        if journal.position > journal.count:
            raise ValueError(f"position {journal.position} past the {journal.count} episodes")
        if journal.claimed_by is not None and not journal.attempts:
            raise ValueError("an attempt under way, none claimed")
        return journal

    @property
    def interrupted(self) -> InterruptedAttempt | None:
        """The attempt under way, if one is (when read back: its task manager died)."""
        if self.claimed_by is None:
            return None
        return InterruptedAttempt(self.position, self.attempts - 1, self.claimed_by)

    def claim(self, index: int, last_stamp_ns: int) -> int:
        """The next attempt of the episode at ``index`` is about to start (before its reset:
        a task manager that dies during the reset has claimed it); returns its number.

        Raises:
            ValueError: ``index`` is not the journal's position (episodes go in order).
            OSError: the journal could not be written.
        """
        if index != self.position:
            raise ValueError(f"attempt claimed at index {index}; the run is at {self.position}")
        self.attempts += 1
        self.claimed_by = os.getpid()
        self.last_stamp_ns = last_stamp_ns
        self._write()
        return self.attempts - 1

    def ended(self, *, done: bool, episode_id: str = "", scored: bool = True) -> None:
        """The claimed attempt ended; ``done``: the run is through with its episode
        (``scored``, or given up: then ``episode_id`` names it).

        Raises:
            OSError: the journal could not be written.
        """
        self.claimed_by = None
        if done:
            self.position += 1
            self.attempts = 0
            if not scored:
                self.not_scored.append(episode_id)
        self._write()

    def finished(self, summary: str) -> None:
        """The run was announced finished with ``summary``.

        Raises:
            OSError: the journal could not be written.
        """
        self.summary = summary
        self._write()

    def _write(self) -> None:
        document = {
            "format": JOURNAL_FORMAT,
            "run_id": self.run_id,
            "selection": self.selection,
            "count": self.count,
            "position": self.position,
            "attempts": self.attempts,
            "claimed_by": self.claimed_by,
            "not_scored": self.not_scored,
            "last_stamp_ns": self.last_stamp_ns,
            "summary": self.summary,
        }
        write_atomic(self.path, json.dumps(document, indent=1))


def _typed(value: Any, kind: type) -> Any:
    """``value`` if it is a ``kind``, else ValueError."""
    if not isinstance(value, kind):
        raise ValueError(f"{value!r} is not a {kind.__name__}")
    return value


def _count(value: Any) -> int:
    """``value`` if it is a whole number >= 0 (a JSON true is no number), else ValueError."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{value!r} is not a whole number >= 0")
    return value
