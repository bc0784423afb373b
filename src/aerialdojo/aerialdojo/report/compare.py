"""Run-to-run comparison: per-metric deltas between two runs, and several runs laid out like
their benchmark's results table (``aerialdojo compare``)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.scores import KIND_RATE, MetricSpec
from aerialdojo.protocols import protocol
from aerialdojo.report.markdown import NOT_AVAILABLE, markdown_table
from aerialdojo.report.run import METRICS_JSON


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


def read_metrics(run_dir: Path) -> dict[str, Any]:
    """A run directory's ``metrics.json``.

    Raises:
        MetricsError: missing, not JSON, or not in the aerialdojo-metrics/1 format.
    """
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


def compare(run_a_dir: Path, run_b_dir: Path) -> list[ComparisonRow]:
    """Per-metric deltas (b - a) between two runs' ``metrics.json``, for every scope and
    metric present in both.

    Args:
        run_a_dir: the baseline run directory.
        run_b_dir: the run compared with it.

    Raises:
        MetricsError: a missing or malformed metrics file, or runs of different benchmarks.
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
    rows = []
    for scope, group_a in scopes_a.items():
        group_b = scopes_b.get(scope)
        if group_b is None:
            continue
        for metric in shared:
            spec = MetricSpec(
                key=metric["key"],
                label=metric["label"],
                kind=metric["kind"],
                higher_is_better=metric["higher_is_better"],
            )
            scale = 100.0 if spec.kind == KIND_RATE else 1.0
            a, b = group_a["values"][metric["key"]], group_b["values"][metric["key"]]
            value_a = None if a is None else scale * a
            value_b = None if b is None else scale * b
            delta = None if value_a is None or value_b is None else value_b - value_a
            better = ""
            if delta:
                better = "b" if (delta > 0) == spec.higher_is_better else "a"
            rows.append(
                ComparisonRow(
                    scope=scope,
                    key=spec.key,
                    label=spec.label,
                    unit=spec.unit,
                    value_a=value_a,
                    value_b=value_b,
                    delta=delta,
                    better=better,
                )
            )
    return rows


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


def compare_table(run_a_dir: Path, run_b_dir: Path) -> str:
    """The per-metric comparison of two run directories, printable.

    Raises:
        MetricsError: a missing or malformed ``metrics.json``, or different benchmarks.
    """
    rows = compare(run_a_dir, run_b_dir)
    return f"A = {run_a_dir}\nB = {run_b_dir}\n\n{comparison_table(rows)}\n"


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
    benchmarks = sorted({str(run["benchmark"]) for run in runs.values()})
    if len(benchmarks) > 1:
        raise MetricsError(f"the runs hold different benchmarks: {', '.join(benchmarks)}")
    layout = protocol(benchmarks[0]).paper_table
    if layout is None:
        raise MetricsError(f"{benchmarks[0]} has no results-table layout; compare two runs instead")
    return layout(runs)
