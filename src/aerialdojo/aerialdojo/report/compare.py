"""Run-to-run comparison (``aerialdojo compare``): per-metric and per-episode deltas between
two runs (a simulated run and a robot's scored bag of the same tasks, say), an overlay of
their paths, and several runs laid out like their benchmark's results table."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.jsonl import load_trajectory_log
from aerialdojo.metrics.scores import KIND_RATE, MetricSpec, radius_key
from aerialdojo.protocols import protocol
from aerialdojo.protocols.scoring import (
    UNVERSIONED,
    recorded_settings_sha256,
    recorded_version,
)
from aerialdojo.report.maps import SceneryLookup, plot_overlay
from aerialdojo.report.markdown import NOT_AVAILABLE, markdown_table
from aerialdojo.report.run import METRICS_JSON, TRAJECTORIES_JSONL


@dataclass(frozen=True, kw_only=True)
class ComparisonRow:
    """One metric of one scope in two runs.

    Attributes:
        scope: ``"overall"``, ``"task_weighted"``, ``"family: urban"``, ``"setting: base"``,
            ``"distribution: ood"``.
        key: metric key; label: its label; unit: ``%``, ``m`` or ``steps``.
        value_a, value_b: aggregates in report units (rates in %); None for N/A.
        delta: value_b - value_a; None if either is N/A.
        better: ``"b"``, ``"a"`` or ``""`` (equal or N/A), by the metric's direction.
    """

    scope: str
    key: str
    label: str
    unit: str
    value_a: float | None
    value_b: float | None
    delta: float | None
    better: str


@dataclass(frozen=True, kw_only=True)
class TaskDelta:
    """One episode scored in both runs (a simulated run and a robot's, say).

    Attributes:
        episode_id: the episode.
        path_a, path_b: executed path length, m.
        final_a, final_b: final distance to the target, m.
        success_a, success_b: success at each run's primary radius (or verdict).
        termination_a, termination_b: how it ended.
    """

    episode_id: str
    path_a: float
    path_b: float
    final_a: float
    final_b: float
    success_a: bool
    success_b: bool
    termination_a: str
    termination_b: str


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """Two runs compared.

    Attributes:
        rows: per-scope, per-metric deltas; scopes only one run has are kept with N/A.
        tasks: per-episode deltas of the episodes both runs scored.
        warnings: what makes the numbers less comparable than they look.
    """

    rows: list[ComparisonRow]
    tasks: list[TaskDelta]
    warnings: list[str]


def read_metrics(run_dir: Path) -> dict[str, Any]:
    """A run directory's ``metrics.json``.

    Raises:
        MetricsError: a file given instead of a run directory, or a ``metrics.json`` that is
            missing, not JSON, or not in the aerialdojo-metrics/1 format.
    """
    if run_dir.is_file():
        raise MetricsError(
            f"{run_dir} is a file; compare takes run directories (the directory holding "
            f"{METRICS_JSON}: {run_dir.parent})"
        )
    path = run_dir / METRICS_JSON
    try:
        data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as error:
        raise MetricsError(f"{path}: no metrics file (is {run_dir} a run directory?)") from error
    except json.JSONDecodeError as error:
        raise MetricsError(f"{path}: not valid JSON: {error}") from error
    if data.get("format") != "aerialdojo-metrics/1":
        raise MetricsError(f"{path}: format {data.get('format')!r} is not aerialdojo-metrics/1")
    return data


def _scopes(data: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    scopes: dict[str, Mapping[str, Any]] = {
        "overall": data["overall"],
        "task_weighted": data["task_weighted"],
    }
    scopes.update({f"family: {name}": group for name, group in data["by_family"].items()})
    scopes.update({f"setting: {name}": group for name, group in data["by_setting"].items()})
    scopes.update(
        {
            f"{name}: {value}": group
            for name, values in data.get("by_condition", {}).items()
            for value, group in values.items()
        }
    )
    return scopes


def _radii_text(data: Mapping[str, Any]) -> str:
    return (
        ", ".join(f"{radius:g}" for radius in data["radii_m"]) + " m"
        if data["radii_m"]
        else ("checker verdict")
    )


def _success_key(data: Mapping[str, Any]) -> str:
    radii = data["radii_m"]
    return radius_key("sr", float(radii[0])) if radii else "sr"


def _sample(ids: Sequence[str]) -> str:
    shown = ", ".join(ids[:5])
    return shown + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")


def scoring_differences(runs: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What makes runs (label -> ``metrics.json``) incomparable as scored: different scoring
    versions, different protocol settings (where both record theirs: a trajectory log or a
    robot's own bag records none), or a result written before scoring was versioned."""
    notes = []
    versions = {label: recorded_version(data) for label, data in runs.items()}
    if len(set(versions.values())) > 1:
        listing = ", ".join(f"{label} version {version}" for label, version in versions.items())
        notes.append(
            f"SCORING VERSIONS DIFFER ({listing}): the runs were scored under different rules "
            "and their numbers are not comparable; rescore the older bags with `aerialdojo "
            "evaluate-bag` (docs/protocols/, 'Scoring versions', says which numbers moved)"
        )
    digests = {label: recorded_settings_sha256(data) for label, data in runs.items()}
    known = {digest for digest in digests.values() if digest is not None}
    if len(known) > 1:
        listing = ", ".join(
            f"{label} {digest[:12]}" for label, digest in digests.items() if digest is not None
        )
        notes.append(
            f"PROTOCOL SETTINGS DIFFER (settings sha256: {listing}; `scoring` in each "
            "metrics.json lists them): the runs observed, or were refereed, under different "
            "settings"
        )
    unversioned = [label for label, data in runs.items() if "scoring" not in data]
    if unversioned and len(unversioned) < len(runs):
        notes.append(
            f"{', '.join(unversioned)} written before scoring was versioned (version "
            f"{UNVERSIONED}): settings cannot be checked"
        )
    return notes


def _warnings(data_a: Mapping[str, Any], data_b: Mapping[str, Any]) -> list[str]:
    notes = scoring_differences({"A": data_a, "B": data_b})
    episodes_a = [episode["episode_id"] for episode in data_a["episodes"]]
    episodes_b = [episode["episode_id"] for episode in data_b["episodes"]]
    if len(episodes_a) != len(episodes_b):
        notes.append(
            f"the runs scored different numbers of episodes: A {len(episodes_a)}, "
            f"B {len(episodes_b)}; aggregates over different episodes are not comparable"
        )
    only_a = sorted(set(episodes_a) - set(episodes_b))
    only_b = sorted(set(episodes_b) - set(episodes_a))
    if only_a:
        notes.append(f"{len(only_a)} episode(s) only in A: {_sample(only_a)}")
    if only_b:
        notes.append(f"{len(only_b)} episode(s) only in B: {_sample(only_b)}")
    if data_a["radii_m"] != data_b["radii_m"]:
        notes.append(
            f"the runs were scored at different success radii: A {_radii_text(data_a)}, "
            f"B {_radii_text(data_b)}; only metrics at a radius both share are compared"
        )
    scopes_a, scopes_b = _scopes(data_a), _scopes(data_b)
    for scope in [s for s in scopes_a if s not in scopes_b]:
        notes.append(f"{scope} only in A ({scopes_a[scope]['episodes']} episodes): B shows N/A")
    for scope in [s for s in scopes_b if s not in scopes_a]:
        notes.append(f"{scope} only in B ({scopes_b[scope]['episodes']} episodes): A shows N/A")
    return notes


def _row(scope: str, metric: Mapping[str, Any], group_a: Any, group_b: Any) -> ComparisonRow:
    spec = MetricSpec(
        key=metric["key"],
        label=metric["label"],
        kind=metric["kind"],
        higher_is_better=metric["higher_is_better"],
    )
    scale = 100.0 if spec.kind == KIND_RATE else 1.0
    a = group_a["values"][spec.key] if group_a is not None else None
    b = group_b["values"][spec.key] if group_b is not None else None
    value_a = None if a is None else scale * a
    value_b = None if b is None else scale * b
    delta = None if value_a is None or value_b is None else value_b - value_a
    better = ""
    if delta:
        better = "b" if (delta > 0) == spec.higher_is_better else "a"
    return ComparisonRow(
        scope=scope,
        key=spec.key,
        label=spec.label,
        unit=spec.unit,
        value_a=value_a,
        value_b=value_b,
        delta=delta,
        better=better,
    )


def _tasks(data_a: Mapping[str, Any], data_b: Mapping[str, Any]) -> list[TaskDelta]:
    by_id_b = {episode["episode_id"]: episode for episode in data_b["episodes"]}
    key_a, key_b = _success_key(data_a), _success_key(data_b)
    return [
        TaskDelta(
            episode_id=a["episode_id"],
            path_a=a["executed_length_m"],
            path_b=b["executed_length_m"],
            final_a=a["final_distance_m"],
            final_b=b["final_distance_m"],
            success_a=a["values"].get(key_a) == 1.0,
            success_b=b["values"].get(key_b) == 1.0,
            termination_a=a["termination"],
            termination_b=b["termination"],
        )
        for a in sorted(data_a["episodes"], key=lambda episode: episode["episode_id"])
        if (b := by_id_b.get(a["episode_id"])) is not None
    ]


def compare_runs(run_a_dir: Path, run_b_dir: Path) -> Comparison:
    """Compare two runs' ``metrics.json``: per-metric deltas (b - a) of every scope either
    run has and every metric both have, per-episode deltas of the episodes both scored, and
    warnings where the runs differ in episodes, groups or success radii.

    Args:
        run_a_dir: the baseline run directory (e.g. the simulated run).
        run_b_dir: the run compared with it (e.g. a robot's bag scored with
            ``evaluate-bag --map``).

    Raises:
        MetricsError: a missing or malformed metrics file, a file instead of a directory,
            or runs of different benchmarks.
    """
    data_a, data_b = read_metrics(run_a_dir), read_metrics(run_b_dir)
    if data_a["benchmark"] != data_b["benchmark"]:
        raise MetricsError(
            f"cannot compare a {data_a['benchmark']} run ({run_a_dir}) with a "
            f"{data_b['benchmark']} run ({run_b_dir})"
        )
    metrics_b = {metric["key"] for metric in data_b["metrics"]}
    shared = [metric for metric in data_a["metrics"] if metric["key"] in metrics_b]
    scopes_a, scopes_b = _scopes(data_a), _scopes(data_b)
    scopes = [*scopes_a, *(scope for scope in scopes_b if scope not in scopes_a)]
    rows = [
        _row(scope, metric, scopes_a.get(scope), scopes_b.get(scope))
        for scope in scopes
        for metric in shared
    ]
    return Comparison(rows=rows, tasks=_tasks(data_a, data_b), warnings=_warnings(data_a, data_b))


def compare(run_a_dir: Path, run_b_dir: Path) -> list[ComparisonRow]:
    """The per-metric rows of ``compare_runs``."""
    return compare_runs(run_a_dir, run_b_dir).rows


def task_table(tasks: Sequence[TaskDelta], name_a: str = "A", name_b: str = "B") -> str:
    """Per-episode deltas as a Markdown table: path, final distance, success."""

    def success(value: bool) -> str:
        return "yes" if value else "no"

    return markdown_table(
        [
            "Episode",
            f"Path {name_a} (m)",
            f"Path {name_b} (m)",
            "Delta path (m)",
            f"Final dist {name_a} (m)",
            f"Final dist {name_b} (m)",
            "Delta final (m)",
            f"Success {name_a}",
            f"Success {name_b}",
            "Ended",
        ],
        (
            [
                task.episode_id,
                f"{task.path_a:.2f}",
                f"{task.path_b:.2f}",
                f"{task.path_b - task.path_a:+.2f}",
                f"{task.final_a:.2f}",
                f"{task.final_b:.2f}",
                f"{task.final_b - task.final_a:+.2f}",
                success(task.success_a),
                success(task.success_b),
                f"{task.termination_a} / {task.termination_b}",
            ]
            for task in tasks
        ),
    )


def comparison_table(rows: Sequence[ComparisonRow], name_a: str = "A", name_b: str = "B") -> str:
    """``compare`` rows as a Markdown table (what ``aerialdojo compare`` prints)."""

    def number(value: float | None, signed: bool = False) -> str:
        if value is None:
            return NOT_AVAILABLE
        return f"{value:+.2f}" if signed else f"{value:.2f}"

    return markdown_table(
        ["Scope", "Metric", name_a, name_b, "Delta", "Better"],
        (
            [
                row.scope,
                f"{row.label} ({row.unit})",
                number(row.value_a),
                number(row.value_b),
                number(row.delta, signed=True),
                {"a": name_a, "b": name_b}.get(row.better, ""),
            ]
            for row in rows
        ),
    )


def comparison_text(comparison: Comparison, run_a_dir: Path, run_b_dir: Path) -> str:
    """What ``aerialdojo compare`` prints: the runs, the warnings, the per-metric and the
    per-episode tables."""
    parts = [f"A = {run_a_dir}\nB = {run_b_dir}"]
    if comparison.warnings:
        parts.append("\n".join(f"WARNING: {note}" for note in comparison.warnings))
    parts.append(comparison_table(comparison.rows))
    if comparison.tasks:
        parts.append(
            f"Per episode ({len(comparison.tasks)} scored in both):\n\n"
            + task_table(comparison.tasks)
        )
    return "\n\n".join(parts) + "\n"


def comparison_markdown(
    comparison: Comparison, run_a_dir: Path, run_b_dir: Path, overlay: str | None = None
) -> str:
    """``compare.md``: the runs, the warnings, both tables and the overlay picture."""
    parts = [f"# Comparison\n\n- A: `{run_a_dir}`\n- B: `{run_b_dir}`"]
    if comparison.warnings:
        parts.append("## Warnings\n\n" + "\n".join(f"- {note}" for note in comparison.warnings))
    parts.append("## Metrics\n\n" + comparison_table(comparison.rows))
    if comparison.tasks:
        parts.append("## Per episode\n\n" + task_table(comparison.tasks))
    if overlay:
        parts.append(f"## Paths\n\n![overlay]({overlay})")
    return "\n\n".join(parts) + "\n"


def compare_table(run_a_dir: Path, run_b_dir: Path) -> str:
    """The comparison of two run directories, printable.

    Raises:
        MetricsError: a missing or malformed ``metrics.json``, or different benchmarks.
    """
    return comparison_text(compare_runs(run_a_dir, run_b_dir), run_a_dir, run_b_dir)


def write_overlay(
    run_a_dir: Path, run_b_dir: Path, path: Path, scenery: SceneryLookup | None = None
) -> list[str]:
    """Both runs' paths over each other, one panel per episode both scored (from their
    ``trajectories.jsonl``); returns the episodes drawn.

    Raises:
        MetricsError: a run without its trajectory log, or no shared episode.
    """
    runs = {}
    for name, run_dir in (("A", run_a_dir), ("B", run_b_dir)):
        log = run_dir / TRAJECTORIES_JSONL
        if not log.is_file():
            raise MetricsError(
                f"{run_dir}: no {TRAJECTORIES_JSONL} (written by runs since "
                "the trajectory maps); no overlay"
            )
        runs[name] = {trace.episode_id: trace for trace in load_trajectory_log(log).traces}
    return plot_overlay(runs, path, scenery)


def paper_table(conditions: Mapping[str, Path]) -> str:
    """Several runs (condition name -> run directory) laid out like their benchmark's
    results table, e.g. AGOS-Bench Table 4 for ablations.

    Raises:
        MetricsError: no runs, a missing or malformed ``metrics.json``, runs of different
            benchmarks, or a benchmark without such a table.
    """
    if not conditions:
        raise MetricsError("no runs to lay out")
    runs = {name: read_metrics(directory) for name, directory in conditions.items()}
    benchmark = one_benchmark_and_version(runs)
    layout = protocol(benchmark).paper_table
    if layout is None:
        raise MetricsError(f"{benchmark} has no results-table layout; compare two runs instead")
    return layout(runs)


def one_benchmark_and_version(runs: Mapping[str, Mapping[str, Any]]) -> str:
    """The one benchmark of runs (label -> ``metrics.json``) scored under one scoring
    version, as a table of them or a rank correlation across them needs.

    Raises:
        MetricsError: runs of different benchmarks, or of different scoring versions (named
            per run: the older bags are to be rescored with ``aerialdojo evaluate-bag``).
    """
    benchmarks = sorted({str(run["benchmark"]) for run in runs.values()})
    if len(benchmarks) > 1:
        raise MetricsError(f"the runs hold different benchmarks: {', '.join(benchmarks)}")
    versions = {label: recorded_version(run) for label, run in runs.items()}
    if len(set(versions.values())) > 1:
        listing = ", ".join(f"{label}: version {version}" for label, version in versions.items())
        raise MetricsError(
            f"the runs were scored under different scoring versions ({listing}): rescore the "
            "older bags with `aerialdojo evaluate-bag` so that every run follows one set of rules"
        )
    return benchmarks[0]
