"""Generation progress on the console: a live bar per scene where stdout is a terminal,
plain lines where it is not (a log file, a pipe, CI)."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from aerialdojo.tasks.shards import ProgressSink, ShardProgress

#: A plain line per scene at most this often, besides the one when it finishes.
PLAIN_INTERVAL_S = 10.0


class _PlainLines:
    """One line when a scene finishes, and now and then while it runs."""

    def __init__(self, console: Console, shards: Sequence[str], unit: str) -> None:
        self._console = console
        self._count = len(shards)
        self._unit = unit
        self._finished = 0
        self._started = time.monotonic()
        self._last_line: dict[str, float] = {}

    def __call__(self, progress: ShardProgress) -> None:
        now = time.monotonic()
        if not progress.finished and now - self._last_line.get(progress.shard, -1e9) < (
            PLAIN_INTERVAL_S
        ):
            return
        self._last_line[progress.shard] = now
        self._finished += progress.finished
        total = "?" if progress.total is None else progress.total
        state = "done" if progress.finished else "running"
        self._console.print(
            f"[{self._finished}/{self._count} scenes] {progress.shard}: {state}, "
            f"{progress.done}/{total} {self._unit}, {progress.kept} kept, "
            f"{now - self._started:.0f} s",
            soft_wrap=True,
            highlight=False,
        )


class _LiveBars:
    """A rich progress bar per scene and one for the whole suite."""

    def __init__(self, progress: Progress, shards: Sequence[str], unit: str) -> None:
        self._progress = progress
        self._unit = unit
        self._overall = progress.add_task("scenes", total=len(shards), kept="")
        self._bars: dict[str, TaskID] = {}

    def __call__(self, update: ShardProgress) -> None:
        bar = self._bars.get(update.shard)
        if bar is None:
            bar = self._bars[update.shard] = self._progress.add_task(
                update.shard, total=update.total, kept=""
            )
        self._progress.update(
            bar,
            completed=update.done,
            total=update.total,
            kept=f"{update.kept} kept, {self._unit}",
        )
        if update.finished:
            self._progress.advance(self._overall)


@contextmanager
def console_progress(
    shards: Sequence[str], *, unit: str, console: Console | None = None
) -> Iterator[ProgressSink]:
    """A progress sink for ``tasks.shards.run_shards`` that shows it on ``console``.

    Args:
        shards: the scenes (or towns) about to be generated.
        unit: what ``ShardProgress.done`` counts, e.g. ``"candidate pairs"``.
        console: where to show it (default: stdout).
    """
    console = console or Console()
    if not console.is_terminal:
        yield _PlainLines(console, shards, unit)
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[kept]}"),
        TimeElapsedColumn(),
        console=console,
    ) as progress:
        yield _LiveBars(progress, shards, unit)
