"""Evaluation progress on the console (``aerialdojo eval``): on a terminal, a live line for
the episode under way (step, last action, elapsed) under a run bar with its ETA; elsewhere (a
log file, a pipe, CI) one plain line per episode that ends. ROS-free: the CLI's progress
monitor turns episode events into ``EpisodeProgress`` updates."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)


@dataclass(frozen=True, kw_only=True)
class EpisodeProgress:
    """One update of an episode.

    Attributes:
        episode_id: the episode.
        index: its position in the run's selection, from 0.
        count: episodes selected for the run.
        step: actions used so far.
        action: the last action taken (with its magnitude), empty before the first.
        ended: how the episode ended (``"stopped"``, ``"budget exhausted"``...); empty
            while it runs.
        scored: an episode that ended counts as done (an infrastructure failure is rerun).
    """

    episode_id: str
    index: int
    count: int
    step: int = 0
    action: str = ""
    ended: str = ""
    scored: bool = False


def console_for_progress() -> Console:
    """The console ``aerialdojo eval`` talks on: stderr (stdout keeps the report), never
    wrapping a line (a wrapped path cannot be copied)."""
    return Console(stderr=True, soft_wrap=True, highlight=False)


class EvalProgress:
    """Shows ``EpisodeProgress`` updates on ``console``; call ``close`` when the run ends.

    Updates may come from another thread (the monitor's listener).
    """

    def __init__(self, console: Console) -> None:
        self._console = console
        self._lock = threading.Lock()
        self._done = 0
        self._started_at: dict[str, float] = {}
        self._progress: Progress | None = None
        self._run: TaskID | None = None
        self._episode: TaskID | None = None
        if console.is_terminal:
            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(bar_width=24),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=console,
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self._run = self._progress.add_task("episodes", total=None, status="")
            self._progress.start()

    def __call__(self, update: EpisodeProgress) -> None:
        """Show one update."""
        with self._lock:
            now = time.monotonic()
            started = self._started_at.setdefault(update.episode_id, now)
            if update.ended:
                self._done += update.scored
                self._ended(update, now - started)
                self._started_at.pop(update.episode_id, None)
            elif self._progress is not None:
                self._running(update, self._progress)

    def _ended(self, update: EpisodeProgress, elapsed_s: float) -> None:
        self._console.print(
            f"  [{self._done}/{update.count}] {update.episode_id}: {update.ended} after "
            f"{update.step} actions ({elapsed_s:.0f} s)",
            markup=False,
        )
        if self._progress is not None and self._run is not None:
            self._progress.update(self._run, completed=self._done, total=update.count)
            if self._episode is not None:
                self._progress.remove_task(self._episode)
                self._episode = None

    def _running(self, update: EpisodeProgress, progress: Progress) -> None:
        assert self._run is not None
        progress.update(self._run, total=update.count, completed=self._done)
        # The episode's bar counts its steps (its budget is the referee's to know).
        status = f"last action: {update.action}" if update.action else "starting"
        if self._episode is None:
            self._episode = progress.add_task(
                update.episode_id, total=None, completed=update.step, status=status
            )
        else:
            progress.update(
                self._episode, description=update.episode_id, completed=update.step, status=status
            )

    def close(self) -> None:
        """End the live display, leaving the lines printed above it."""
        with self._lock:
            if self._progress is not None:
                if self._episode is not None:
                    self._progress.remove_task(self._episode)
                    self._episode = None
                self._progress.stop()
                self._progress = None
