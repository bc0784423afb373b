"""The text of a run report: ``metrics.json``, ``report.md`` and ``episodes.csv`` content."""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aerialdojo.collector import cyclic_gc_paused
from aerialdojo.documents import write_atomic
from aerialdojo.json_text import dumps_sorted_indented, list_item_texts, list_parts
from aerialdojo.metrics.aggregate import (
    RULE_EPISODE_POOLED,
    RULE_MAP_FAMILY_EQUAL,
    ConditionGroup,
    GroupMetrics,
    RunMetrics,
)
from aerialdojo.metrics.scores import KIND_COUNT, KIND_RATE, EpisodeScore, MetricSpec

if TYPE_CHECKING:
    from aerialdojo.protocols import BenchmarkProtocol

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


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
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


def summary_rows(run: RunMetrics, protocol: BenchmarkProtocol) -> list[tuple[str, GroupMetrics]]:
    """The summary's scopes in order: the headline (overall, or each setting where the
    benchmark reports settings apart), task-weighted (where it differs), families,
    settings, then every condition whose episodes hold more than one value (ID and OOD,
    SemanticOGS and ImageOGS), named as the run's ``protocol`` names them. A run of several
    settings of a benchmark that reports them apart shows each setting and its task-weighted
    mean, and no scope that pools settings (those are in the setting x family tables)."""
    if run.pools_settings:
        rows = []
        for name, group in run.by_setting.items():
            rows.append((f"setting: {name}", group))
            rows.append((f"setting: {name} (task-weighted)", run.task_weighted_by_setting[name]))
        return rows
    rows = [("Overall", run.overall)]
    if run.rule != RULE_EPISODE_POOLED:
        rows.append(("Overall (task-weighted)", run.task_weighted))
    rows += [(f"family: {name}", group) for name, group in run.by_family.items()]
    rows += [(f"setting: {name}", group) for name, group in run.by_setting.items()]
    rows += [
        (f"{name}: {protocol.condition_label(name, value)}", group)
        for name, values in run.by_condition.items()
        if len(values) > 1
        for value, group in values.items()
    ]
    return rows


def conditions_text(run: RunMetrics, protocol: BenchmarkProtocol) -> str:
    """The conditions of a run's episodes, e.g. ``distribution: OOD; goal: ImageOGS,
    SemanticOGS; observation: front``; "" where the episodes name none."""
    return "; ".join(
        f"{name}: {', '.join(protocol.condition_label(name, value) for value in values)}"
        for name, values in run.by_condition.items()
    )


def group_title(group: ConditionGroup, protocol: BenchmarkProtocol) -> str:
    """A condition group's heading, e.g. ``OOD · SemanticOGS``."""
    return " · ".join(
        protocol.condition_label(name, value) for name, value in group.conditions.items()
    )


def summary_table(run: RunMetrics, protocol: BenchmarkProtocol) -> str:
    """The summary of a run of ``protocol``'s benchmark as a Markdown table (also what
    ``aerialdojo metrics`` prints)."""
    return markdown_table(
        ["Scope", *_group_columns(run.specs)],
        ([scope, *_group_cells(run.specs, group)] for scope, group in summary_rows(run, protocol)),
    )


def _headline_text(run: RunMetrics) -> str:
    """How the report's headline is formed, where settings are reported apart."""
    if not run.headline_by_setting:
        return ""
    text = (
        "; the headline is per setting, as the paper reports each setting in its own table "
        "(AerialDojo-200K, section 4.1, Tables 4-5; appendix B asks that the rule be stated), "
        "with the task-weighted mean beside it"
    )
    if run.pools_settings:
        text += "; no figure pools settings: run-wide, per-family and per-condition scopes are N/A"
    return text


def _setting_family_tables(run: RunMetrics) -> list[str]:
    sections = []
    for setting, families in run.by_setting_family.items():
        rows = [[family, *_group_cells(run.specs, group)] for family, group in families.items()]
        rows.append(["Overall", *_group_cells(run.specs, run.by_setting[setting])])
        sections.append(
            f"### Setting: {setting}\n\n"
            + markdown_table(["Family", *_group_columns(run.specs)], rows)
        )
    return sections


def _group_tables(run: RunMetrics, protocol: BenchmarkProtocol) -> list[str]:
    """One table per condition group: the group, each setting, each setting's families."""
    sections = []
    for group in run.groups:
        rows = (
            [] if run.pools_settings else [["all", "all", *_group_cells(run.specs, group.overall)]]
        )
        for setting, families in group.by_setting_family.items():
            rows.append([setting, "all", *_group_cells(run.specs, group.by_setting[setting])])
            rows += [
                [setting, family, *_group_cells(run.specs, metrics)]
                for family, metrics in families.items()
            ]
        sections.append(
            f"### {group_title(group, protocol)}\n\n"
            + markdown_table(["Setting", "Family", *_group_columns(run.specs)], rows)
        )
    return sections


def _condition_names(run: RunMetrics) -> list[str]:
    return list(run.by_condition)


def _episode_cells(run: RunMetrics) -> list[list[str]]:
    rows = []
    for score in run.episodes:
        facts = score.to_dict()
        cells = [
            f"{facts[name]:.2f}" if isinstance(facts[name], float) else str(facts[name])
            for name, _ in _EPISODE_FIELDS
        ]
        cells += [score.conditions.get(name, "") for name in _condition_names(run)]
        cells += [format_value(spec, score.values[spec.key]) for spec in run.specs]
        rows.append(cells)
    return rows


def render_report_md(
    run: RunMetrics,
    protocol: BenchmarkProtocol,
    *,
    images: Sequence[str] = (),
    sections: Sequence[str] = (),
    notices: Sequence[str] = (),
    run_name: str = "",
    scoring: str = "",
) -> str:
    """The Markdown report of a run.

    Args:
        run: the aggregated run.
        protocol: its benchmark's protocol: the title, and how conditions are named.
        images: file names of plots beside the report, embedded under "Plots".
        sections: further Markdown sections, appended in order (the benchmark's own, the
            recording's).
        notices: what a reader must know before the numbers (a privileged policy, a run cut
            short), quoted under the title.
        run_name: the run's name (its directory), after the benchmark in the title.
        scoring: the scoring version, settings and suite digests
            (``protocols.scoring.ScoringRecord``), listed first; "" where unknown.
    """
    radii = ", ".join(f"{radius:g} m" for radius in run.radii) or "none (checker verdict)"
    conditions = conditions_text(run, protocol)
    parts = [
        f"# Run report: {protocol.title}" + (f", run {run_name}" if run_name else ""),
        *(["\n".join(f"> **Note**: {notice}" for notice in notices)] if notices else []),
        (
            (f"- Scoring: {scoring}\n" if scoring else "")
            + f"- Episodes scored: {len(run.episodes)}; excluded (infrastructure failures): "
            f"{sum(not entry.intervention for entry in run.excluded)}"
            + _interventions_text(run)
            + "\n"
            f"- Aggregation: {_RULE_TEXT[run.rule]}{_headline_text(run)}\n"
            f"- Success radii: {radii}"
            + (" (first is primary)" if len(run.radii) > 1 else "")
            + (f"\n- Conditions: {conditions} (docs/protocols/)" if conditions else "")
            + "\n- Units: rates in %, distances in m, decision steps per episode; N/A where a "
            "metric has no supporting episode (definitions: docs/metrics.md)"
        ),
        "## Summary\n\n" + summary_table(run, protocol),
    ]
    if run.rule == RULE_MAP_FAMILY_EQUAL:
        parts.append("## By setting and family\n\n" + "\n\n".join(_setting_family_tables(run)))
    if len(run.groups) > 1:
        titles = [protocol.condition_titles.get(k, k) for k in run.group_keys]
        keys = " and ".join([", ".join(titles[:-1]), titles[-1]] if len(titles) > 1 else titles)
        parts.append(
            f"## By {keys}, each by setting and family\n\n"
            + "\n\n".join(_group_tables(run, protocol))
        )
    if images:
        parts.append("## Plots\n\n" + "\n\n".join(f"![{name}]({name})" for name in images))
    episode_header = [
        *(title for _, title in _EPISODE_FIELDS),
        *_condition_names(run),
        *(column_title(spec) for spec in run.specs),
    ]
    parts.append("## Episodes\n\n" + markdown_table(episode_header, _episode_cells(run)))
    excluded = (
        markdown_table(
            ["Episode", "Attempt", "Cause", "Reason"],
            (
                [entry.episode_id, str(entry.attempt), entry.cause, entry.reason]
                for entry in run.excluded
            ),
        )
        if run.excluded
        else "None."
    )
    parts.append(
        "## Excluded episodes (infrastructure failures and operator/safety interventions, "
        "not scored)\n\n" + excluded
    )
    parts += [section.strip("\n") for section in sections]
    return "\n\n".join(parts) + "\n"


def metrics_json_text(
    run: RunMetrics,
    context: Mapping[str, Any] | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> str:
    """``metrics.json`` content: sorted keys, plain numbers, no NaN, so that two runs with the
    same episodes give byte-identical files (live metrics are tested equal to bag metrics).

    Args:
        run: the aggregated run.
        context: facts about the run beside its metrics (e.g. who acted), under ``"run"``;
            left out when empty.
        scoring: the scoring version and protocol settings
            (``protocols.scoring.ScoringRecord.to_dict``), under ``"scoring"``; left out
            when None.
    """
    # The document (three dicts an episode) holds no cycle and is dropped whole: the
    # collector's passes over it were a third of building it for 200,000 episodes.
    with cyclic_gc_paused():
        written: dict[str, list[str]] = {}
        if run.episode_texts is not None:
            # Written already (``episode_texts``): the entries' dicts are not built.
            written["episodes"] = list_parts(run.episode_texts, 1)
            run = replace(run, episodes=())
        document = run.to_dict()
        if context:
            document["run"] = dict(context)
        if scoring is not None:
            document["scoring"] = dict(scoring)
        return dumps_sorted_indented(document, written, end="\n")


def episode_texts(scores: Iterable[EpisodeScore]) -> list[str]:
    """The text of each of ``scores``' entries in ``metrics_json_text``'s ``episodes`` list
    (``RunMetrics.episode_texts``)."""
    return list_item_texts([score.to_dict() for score in scores], 1)


def write_metrics_json(
    run: RunMetrics,
    path: Path,
    context: Mapping[str, Any] | None = None,
    scoring: Mapping[str, Any] | None = None,
) -> None:
    """Write ``metrics_json_text(run, context, scoring)`` to ``path``, whole or not at all."""
    write_atomic(path, metrics_json_text(run, context, scoring))


def write_episodes_csv(run: RunMetrics, path: Path) -> None:
    """One row per episode: facts, then metric values (rates as fractions, empty for N/A)."""
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        conditions = _condition_names(run)
        writer.writerow(
            [name for name, _ in _EPISODE_FIELDS] + conditions + [spec.key for spec in run.specs]
        )
        for score in run.episodes:
            facts = score.to_dict()
            values = [score.values[spec.key] for spec in run.specs]
            writer.writerow(
                [facts[name] for name, _ in _EPISODE_FIELDS]
                + [score.conditions.get(name, "") for name in conditions]
                + ["" if value is None else repr(value) for value in values]
            )


def _interventions_text(run: RunMetrics) -> str:
    """The report's count of operator/safety interventions, where a robot run had any."""
    interventions = sum(entry.intervention for entry in run.excluded)
    return f"; operator/safety interventions: {interventions}" if interventions else ""
