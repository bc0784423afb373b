"""What ``aerialdojo metrics`` and ``aerialdojo compare`` print and write."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from aerialdojo.metrics.aggregate import RunMetrics
from aerialdojo.metrics.jsonl import load_trajectory_log, score_jsonl
from aerialdojo.metrics.plots import write_plots
from aerialdojo.metrics.report import (
    compare,
    comparison_table,
    summary_table,
    write_report,
)
from aerialdojo.metrics.scoring import score_run


def _headline(run: RunMetrics, source: Path) -> str:
    radii = ", ".join(f"{radius:g} m" for radius in run.radii) or "checker verdict"
    return (
        f"{source}: {run.benchmark}, {len(run.episodes)} episode(s) scored, "
        f"{len(run.excluded)} excluded; success radii: {radii}"
    )


def metrics_table(path: Path, radii: Sequence[float] | None = None) -> str:
    """Score a trajectory log and return the printable summary.

    Args:
        path: a ``.jsonl`` trajectory log.
        radii: success radii in metres (``--radius``); None for the benchmark's defaults.

    Raises:
        TrajectoryLogError: bad lines, all listed.
        MetricsError: nothing to score, mixed benchmarks or a bad radius.
    """
    run = score_jsonl(path, radii)
    return f"{_headline(run, path)}\n\n{summary_table(run)}\n"


def write_jsonl_report(
    path: Path, out_dir: Path, radii: Sequence[float] | None = None
) -> RunMetrics:
    """Score a trajectory log and write the full report (``metrics.json``, ``report.md``,
    ``episodes.csv`` and the plots) into ``out_dir``.

    Raises:
        TrajectoryLogError: bad lines, all listed.
        MetricsError: nothing to score, mixed benchmarks or a bad radius.
    """
    log = load_trajectory_log(path)
    run = score_run(log.traces, radii, log.excluded)
    write_report(run, out_dir, write_plots(run, out_dir, log.traces))
    return run


def compare_table(run_a_dir: Path, run_b_dir: Path) -> str:
    """The per-metric comparison of two run directories, printable.

    Raises:
        MetricsError: a missing or malformed ``metrics.json``, or different benchmarks.
    """
    rows = compare(run_a_dir, run_b_dir)
    return f"A = {run_a_dir}\nB = {run_b_dir}\n\n{comparison_table(rows)}\n"
