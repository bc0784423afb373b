"""What ``aerialdojo metrics`` and ``aerialdojo compare`` print and write for trajectory logs."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from aerialdojo.errors import TrajectoryLogError
from aerialdojo.metrics.jsonl import write_trajectory_log
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.report.compare import compare_table
from aerialdojo.report.markdown import summary_table
from aerialdojo.report.run import headline, score_trajectory_log, write_run

Factory = Callable[..., EpisodeTrace]


def metrics_table(path: Path, radii: tuple[float, ...] | None = None) -> str:
    result = score_trajectory_log(path, radii)
    assert result.metrics is not None and result.protocol is not None
    return f"{headline(result, path)}\n\n{summary_table(result.metrics, result.protocol)}"


def write_jsonl_report(path: Path, out_dir: Path) -> None:
    write_run(out_dir, score_trajectory_log(path))


def test_metrics_table_scores_at_the_requested_radii(make_trace: Factory, tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    write_trajectory_log(path, [make_trace(positions=((10, 0, 10), (4, 0, 10)), steps_used=2)])
    default = metrics_table(path)
    assert "aerialdojo, 1 episode(s) scored, 0 excluded; success radii: 3 m, 5 m" in default
    assert "| Overall | 1 | 0.00 | 0.00 | 0.00 | 100.00 |" in default
    custom = metrics_table(path, radii=(4.0,))
    assert "SR@4m (%)" in custom
    assert "SR@3m" not in custom


def test_metrics_table_lists_bad_lines(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps({"schema_version": "1.0"}) + "\n")
    with pytest.raises(TrajectoryLogError, match=r"bad.jsonl:1: episode_id: required"):
        metrics_table(path)


def test_jsonl_report_and_compare(make_trace: Factory, tmp_path: Path) -> None:
    log_a, log_b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_trajectory_log(log_a, [make_trace(positions=((10, 0, 10), (4, 0, 10)), steps_used=2)])
    write_trajectory_log(log_b, [make_trace()])
    write_jsonl_report(log_a, tmp_path / "run_a")
    write_jsonl_report(log_b, tmp_path / "run_b")
    assert sorted(p.name for p in (tmp_path / "run_a").iterdir()) == [
        "episodes.csv",
        "failures.png",
        "maps",
        "metrics.json",
        "radar.png",
        "radius_sweep.png",
        "report.html",
        "report.md",
        "run_notes.md",
        "run_status.json",
        "trajectories.jsonl",
    ]
    assert "![radar.png](radar.png)" in (tmp_path / "run_a" / "report.md").read_text()
    table = compare_table(tmp_path / "run_a", tmp_path / "run_b")
    assert table.startswith(f"A = {tmp_path / 'run_a'}\nB = {tmp_path / 'run_b'}\n")
    assert "| overall | SR@3m (%) | 0.00 | 100.00 | +100.00 | B |" in table
    assert "| overall | DTS (m) | 4.00 | 1.00 | -3.00 | B |" in table
