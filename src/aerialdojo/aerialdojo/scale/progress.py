"""Progress of a sharded run across its workers: episodes done, failures, rate and ETA, as a
live rich bar on a terminal and as plain lines elsewhere (a log file, CI)."""

from __future__ import annotations

import time
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from aerialdojo.scale.worker import EpisodeEnding, JobOutcome


class RunProgress:
    """Counts endings from every worker and shows them.

    Args:
        console: where to show it.
        total: the run's selected episodes.
        finished_before: those an earlier invocation finished (skipped now).
        workers: how many worker graphs run at once.
    """

    def __init__(self, console: Console, total: int, finished_before: int, workers: int) -> None:
        self._console = console
        self._total = total
        self._done = finished_before
        self._done_now = 0
        self._failures = 0
        self._started = time.monotonic()
        self._bar: Progress | None = None
        console.print(
            f"[bold]aerialdojo eval[/]: {total} episode(s) on {workers} worker(s), "
            f"{finished_before} already finished",
            highlight=False,
        )
        if console.is_terminal:
            self._bar = Progress(
                TextColumn("episodes"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[status]}"),
                TimeElapsedColumn(),
                console=console,
            )
            self._task = self._bar.add_task("run", total=total, completed=self._done, status="")

    def __enter__(self) -> RunProgress:
        if self._bar is not None:
            self._bar.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._bar is not None:
            self._bar.stop()

    @property
    def status(self) -> str:
        """Failures, rate (episodes per minute, this invocation) and the time left."""
        elapsed_min = (time.monotonic() - self._started) / 60.0
        rate = self._done_now / elapsed_min if elapsed_min > 0 else 0.0
        left = self._total - self._done
        eta = f"ETA {_duration(left / rate * 60.0)}" if rate > 0 else "ETA ?"
        return f"{self._failures} failed, {rate:.1f}/min, {eta}"

    def ending(self, ending: EpisodeEnding) -> None:
        """An attempt ended in some worker's graph."""
        if ending.scored:
            self._done += 1
            self._done_now += 1
        else:
            self._failures += 1
        self._show(f"{ending.episode_id}: {ending.ending}")

    def job_lost(self, outcome: JobOutcome, reason: str) -> None:
        """A worker died: its unfinished episodes failed."""
        self._failures += len(outcome.excluded)
        self._show(f"graph {outcome.graph}: {reason}")

    def _show(self, line: str) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self._done, status=self.status)
            self._bar.console.print(f"  {line}", highlight=False)
        else:
            self._console.print(
                f"[{self._done}/{self._total}] {line}; {self.status}", highlight=False
            )


def _duration(seconds: float) -> str:
    minutes, second = divmod(int(seconds), 60)
    hours, minute = divmod(minutes, 60)
    days, hour = divmod(hours, 24)
    if days:
        return f"{days}d{hour:02d}h"
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute}:{second:02d}"
