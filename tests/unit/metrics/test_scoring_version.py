"""Versioned scoring: every ``metrics.json`` and report says under which scoring version and
protocol settings its numbers were computed, and ``compare`` will not set numbers of
different rules side by side without saying so (issue 25, "Versioned scoring")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from written_runs import write_report

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import protocol
from aerialdojo.protocols.scoring import UNVERSIONED, recorded_version, score_run
from aerialdojo.report.compare import compare_runs, compare_table, paper_table
from aerialdojo.report.run import RunResult, rescoring_lines
from aerialdojo.report.sim_real import compare_sim_real

Factory = Callable[..., EpisodeTrace]
SETTINGS = {"observation": "front", "odometry": False, "agent_timeout_s": 300.0}


def _metrics(run_dir: Path) -> dict[str, Any]:
    document: dict[str, Any] = json.loads((run_dir / "metrics.json").read_text())
    return document


def _set_version(run_dir: Path, version: int | None) -> None:
    """Rewrite a run's recorded scoring version (None: as written before versioning)."""
    document = _metrics(run_dir)
    if version is None:
        del document["scoring"]
    else:
        document["scoring"]["version"] = version
    (run_dir / "metrics.json").write_text(json.dumps(document))


def test_metrics_and_report_carry_the_version_settings_and_their_digest(
    make_trace: Factory, tmp_path: Path
) -> None:
    trace = make_trace(conditions={"distribution": "id", "goal": "semantic", "odometry": "off"})
    write_report(score_run([trace]), tmp_path / "a", settings=[SETTINGS])
    scoring = _metrics(tmp_path / "a")["scoring"]
    assert scoring["version"] == protocol("aerialdojo").scoring_version
    assert scoring["settings"] == [SETTINGS]
    # Task groups (ID/OOD, goal type) are not settings; what the agent observed is.
    assert scoring["conditions"] == {"odometry": ["off"]}
    report = (tmp_path / "a" / "report.md").read_text()
    assert f"sha256 {scoring['settings_sha256'][:12]}" in report
    assert f"AerialDojo-200K scoring version {scoring['version']}" in report

    # Another setting gives another digest; the same settings the same one.
    write_report(score_run([trace]), tmp_path / "b", settings=[SETTINGS | {"odometry": True}])
    write_report(score_run([trace]), tmp_path / "c", settings=[SETTINGS])
    digest = scoring["settings_sha256"]
    assert _metrics(tmp_path / "b")["scoring"]["settings_sha256"] != digest
    assert _metrics(tmp_path / "c")["scoring"]["settings_sha256"] == digest


def test_compare_warns_across_versions_and_settings(make_trace: Factory, tmp_path: Path) -> None:
    traces = [make_trace(episode_id="e1")]
    write_report(score_run(traces), tmp_path / "a", settings=[SETTINGS])
    write_report(score_run(traces), tmp_path / "b", settings=[SETTINGS | {"odometry": True}])
    assert not any(
        "VERSIONS" in note for note in compare_runs(tmp_path / "a", tmp_path / "a").warnings
    )
    warnings = compare_runs(tmp_path / "a", tmp_path / "b").warnings
    assert any(note.startswith("PROTOCOL SETTINGS DIFFER") for note in warnings)

    _set_version(tmp_path / "b", 99)
    text = compare_table(tmp_path / "a", tmp_path / "b")
    version = protocol("aerialdojo").scoring_version
    assert f"WARNING: SCORING VERSIONS DIFFER (A version {version}, B version 99)" in text

    _set_version(tmp_path / "b", None)  # a result written before scoring was versioned
    assert recorded_version(_metrics(tmp_path / "b")) == UNVERSIONED
    warnings = compare_runs(tmp_path / "a", tmp_path / "b").warnings
    assert any("B written before scoring was versioned" in note for note in warnings)


def test_sim_real_and_results_tables_refuse_mixed_versions(
    make_trace: Factory, tmp_path: Path
) -> None:
    traces = [make_trace(episode_id="e1")]
    for name in ("sim", "real"):
        write_report(score_run(traces), tmp_path / name, settings=[SETTINGS])
    assert compare_sim_real({"a": tmp_path / "sim"}, {"a": tmp_path / "real"}).benchmark
    _set_version(tmp_path / "real", 99)
    with pytest.raises(MetricsError, match="different scoring versions"):
        compare_sim_real({"a": tmp_path / "sim"}, {"a": tmp_path / "real"})
    with pytest.raises(MetricsError, match="different scoring versions"):
        paper_table({"one": tmp_path / "sim", "two": tmp_path / "real"})


def test_rescoring_says_which_version_scored_the_bag_then_and_now(
    make_trace: Factory, tmp_path: Path
) -> None:
    run = score_run([make_trace()])
    result = RunResult(
        metrics=run, finished=True, excluded=(), traces=(), protocol=protocol("aerialdojo")
    )
    write_report(run, tmp_path / "old")
    _set_version(tmp_path / "old", None)
    bag = tmp_path / "old" / "bag"
    lines = rescoring_lines(result, [bag])
    version = protocol("aerialdojo").scoring_version
    assert lines[0].startswith(f"scored now under AerialDojo-200K scoring version {version}")
    if version != UNVERSIONED:
        assert f"was scored under version {UNVERSIONED}: the rules changed since" in lines[1]
    # A bag without its run directory's metrics says only how it is scored now.
    assert len(rescoring_lines(result, [tmp_path / "elsewhere" / "bag"])) == 1
