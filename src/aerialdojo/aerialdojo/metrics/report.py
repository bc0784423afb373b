"""Run reports: metrics.json, report.md, episodes.csv and plots, and run-to-run comparison."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import (
    RULE_EPISODE_POOLED,
    RULE_MAP_FAMILY_EQUAL,
    GroupMetrics,
    RunMetrics,
)
from aerialdojo.metrics.scores import KIND_COUNT, KIND_RATE, MetricSpec

METRICS_JSON = "metrics.json"
REPORT_MD = "report.md"
EPISODES_CSV = "episodes.csv"

NOT_AVAILABLE = "N/A"

_RULE_TEXT = {
    RULE_MAP_FAMILY_EQUAL: (
        "maps averaged equally within each family, families averaged equally "
        "(AerialDojo-200K, section 4.1)"
    ),
    RULE_EPISODE_POOLED: "mean over episodes; conditional metrics over their support",
}

#: Per-episode facts written before the metric columns of episodes.csv and report.md.
_EPISODE_FIELDS = (
    ("episode_id", "Episode"),
    ("scene", "Scene"),
    ("family", "Family"),
    ("setting", "Setting"),
    ("split", "Split"),
    ("termination", "Termination"),
    ("steps_used", "Steps"),
    ("final_distance_m", "Final dist (m)"),
    ("executed_length_m", "Path (m)"),
    ("reference_length_m", "Ref (m)"),
)


def format_value(spec: MetricSpec, value: float | None) -> str:
    """A metric value as reports print it: rates in %, distances in m, counts as is."""
    if value is None:
        return NOT_AVAILABLE
    if spec.kind == KIND_RATE:
        return f"{100.0 * value:.2f}"
    if spec.kind == KIND_COUNT:
        return f"{value:.1f}"
    return f"{value:.2f}"


def column_title(spec: MetricSpec) -> str:
    """``"SR@3m (%)"``, ``"DTS (m)"``, ``"DS (steps)"``."""
    return f"{spec.label} ({spec.unit})"


def _markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    def line(cells: Sequence[str]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), line(["---"] * len(header)), *(line(row) for row in rows)])


def _group_columns(specs: Sequence[MetricSpec]) -> list[str]:
    titles = ["Episodes"]
    for spec in specs:
        titles.append(column_title(spec))
        if spec.conditional:
            titles.append(f"{spec.label}-Support")
    return titles


def _group_cells(specs: Sequence[MetricSpec], group: GroupMetrics) -> list[str]:
    cells = [str(group.episodes)]
    for spec in specs:
        cells.append(format_value(spec, group.values[spec.key]))
        if spec.conditional:
            cells.append(str(group.support[spec.key]))
    return cells


def summary_rows(run: RunMetrics) -> list[tuple[str, GroupMetrics]]:
    """The summary's scopes in order: overall, task-weighted (where it differs), families,
    settings."""
    rows = [("Overall", run.overall)]
    if run.rule != RULE_EPISODE_POOLED:
        rows.append(("Overall (task-weighted)", run.task_weighted))
    rows += [(f"family: {name}", group) for name, group in run.by_family.items()]
    rows += [(f"setting: {name}", group) for name, group in run.by_setting.items()]
    return rows


def summary_table(run: RunMetrics) -> str:
    """The summary as a Markdown table (also what ``aerialdojo metrics`` prints)."""
    return _markdown_table(
        ["Scope", *_group_columns(run.specs)],
        ([scope, *_group_cells(run.specs, group)] for scope, group in summary_rows(run)),
    )


def _setting_family_tables(run: RunMetrics) -> list[str]:
    sections = []
    for setting, families in run.by_setting_family.items():
        rows = [[family, *_group_cells(run.specs, group)] for family, group in families.items()]
        rows.append(["Overall", *_group_cells(run.specs, run.by_setting[setting])])
        sections.append(
            f"### Setting: {setting}\n\n"
            + _markdown_table(["Family", *_group_columns(run.specs)], rows)
        )
    return sections


def _episode_cells(run: RunMetrics) -> list[list[str]]:
    rows = []
    for score in run.episodes:
        facts = score.to_dict()
        cells = [
            f"{facts[name]:.2f}" if isinstance(facts[name], float) else str(facts[name])
            for name, _ in _EPISODE_FIELDS
        ]
        cells += [format_value(spec, score.values[spec.key]) for spec in run.specs]
        rows.append(cells)
    return rows


def render_report_md(run: RunMetrics, images: Sequence[str] = ()) -> str:
    """The Markdown report of a run.

    Args:
        run: the aggregated run.
        images: file names of plots beside the report, embedded under "Plots".
    """
    radii = ", ".join(f"{radius:g} m" for radius in run.radii) or "none (checker verdict)"
    parts = [
        f"# aerialdojo run report: {run.benchmark}",
        (
            f"- Episodes scored: {len(run.episodes)}; excluded (infrastructure failures): "
            f"{len(run.excluded)}\n"
            f"- Aggregation: {_RULE_TEXT[run.rule]}\n"
            f"- Success radii: {radii}"
            + (" (first is primary)" if len(run.radii) > 1 else "")
            + "\n- Units: rates in %, distances in m, decision steps per episode; N/A where a "
            "metric has no supporting episode (definitions: docs/metrics.md)"
        ),
        "## Summary\n\n" + summary_table(run),
    ]
    if run.rule == RULE_MAP_FAMILY_EQUAL:
        parts.append("## By setting and family\n\n" + "\n\n".join(_setting_family_tables(run)))
    if images:
        parts.append("## Plots\n\n" + "\n\n".join(f"![{name}]({name})" for name in images))
    episode_header = [title for _, title in _EPISODE_FIELDS] + [
        column_title(spec) for spec in run.specs
    ]
    parts.append("## Episodes\n\n" + _markdown_table(episode_header, _episode_cells(run)))
    excluded = (
        _markdown_table(
            ["Episode", "Attempt", "Reason"],
            ([entry.episode_id, str(entry.attempt), entry.reason] for entry in run.excluded),
        )
        if run.excluded
        else "None."
    )
    parts.append("## Excluded episodes (infrastructure failures, not scored)\n\n" + excluded)
    return "\n\n".join(parts) + "\n"


def metrics_json_text(run: RunMetrics, extra: Mapping[str, Any] | None = None) -> str:
    """``metrics.json`` content: sorted keys, plain numbers, no NaN, so that two runs with the
    same episodes give byte-identical files (live metrics are tested equal to bag metrics).

    Args:
        run: the aggregated run.
        extra: further top-level sections (e.g. ``model_usage``).
    """
    document = {**run.to_dict(), **(extra or {})}
    return json.dumps(document, sort_keys=True, indent=2, allow_nan=False) + "\n"


def write_metrics_json(run: RunMetrics, path: Path, extra: Mapping[str, Any] | None = None) -> None:
    """Write ``metrics_json_text(run, extra)`` to ``path``."""
    path.write_text(metrics_json_text(run, extra), encoding="utf-8")


def write_episodes_csv(run: RunMetrics, path: Path) -> None:
    """One row per episode: facts, then metric values (rates as fractions, empty for N/A)."""
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow([name for name, _ in _EPISODE_FIELDS] + [spec.key for spec in run.specs])
        for score in run.episodes:
            facts = score.to_dict()
            values = [score.values[spec.key] for spec in run.specs]
            writer.writerow(
                [facts[name] for name, _ in _EPISODE_FIELDS]
                + ["" if value is None else repr(value) for value in values]
            )


def write_report(
    run: RunMetrics,
    out_dir: Path,
    images: Sequence[str] = (),
    extra: Mapping[str, Any] | None = None,
) -> None:
    """Write ``metrics.json``, ``report.md`` and ``episodes.csv`` into ``out_dir``.

    Args:
        run: the aggregated run.
        out_dir: created if missing.
        images: plot file names already in ``out_dir`` to embed in the report.
        extra: further top-level sections of ``metrics.json``.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    write_metrics_json(run, out_dir / METRICS_JSON, extra)
    write_episodes_csv(run, out_dir / EPISODES_CSV)
    (out_dir / REPORT_MD).write_text(render_report_md(run, images), encoding="utf-8")


@dataclass(frozen=True, kw_only=True)
class ComparisonRow:
    """One metric of one scope in two runs.

    Attributes:
        scope: ``"overall"``, ``"task_weighted"``, ``"family: urban"``, ``"setting: base"``.
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


def _read_metrics(run_dir: Path) -> dict[str, Any]:
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
    data_a, data_b = _read_metrics(run_a_dir), _read_metrics(run_b_dir)
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

    return _markdown_table(
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
