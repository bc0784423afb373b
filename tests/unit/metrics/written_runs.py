"""Scored runs written to disk as the evaluator writes them, for report and compare tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from aerialdojo.metrics.aggregate import RunMetrics
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import protocol
from aerialdojo.report.run import RunResult, write_run


def write_report(
    run: RunMetrics,
    out_dir: Path,
    traces: Sequence[EpisodeTrace] = (),
    settings: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Every file of a finished run of ``run``'s metrics in ``out_dir``; ``settings``: the
    protocol settings its record names (``RunResult.settings``)."""
    result = RunResult(
        metrics=run,
        finished=True,
        excluded=run.excluded,
        traces=tuple(traces),
        protocol=protocol(run.benchmark),
        settings=tuple(dict(entry) for entry in settings),
    )
    write_run(out_dir, result)
