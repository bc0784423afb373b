"""The AGOS-Bench protocol: UAV-UGV search, handoff and verification (appendices A.1-A.5).

Rules: ``agos.protocol.AgosReferee`` (per-agent action sets under the mode, AGOS-Agent or
the Baseline, and the ablation; the shared decision budget and the decision clock; the
frozen UAV during verification; the E2A and RGPP tools; the annotation and confirmation
budgets; the checker). Traces: the UGV's path and the air-ground record, folded from the
facts the referee put in each decision's event (``AgosTraceBuilder``). Metrics:
``metrics.agos``, episodes pooled. Reports add the run laid out like Table 3 (by mode) and
Table 4 (by ablation); ``aerialdojo compare NAME=RUN ...`` lays several runs out so. Every
rule with the paper's sentence: docs/protocols/agos.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aerialdojo.agos.episodes import AgosEpisode, AgosSuite, load_agos_suite, task_text
from aerialdojo.agos.sensors import observes_view
from aerialdojo.agos.stats import agos_suite_stats
from aerialdojo.agos.vocabulary import (
    ANNOTATE_CANDIDATE,
    ANNOTATION_BUDGET,
    ARGUMENT_ACTIONS,
    CONFIRM,
    CONFIRMATION_BUDGET,
    MODE_AGENT,
    MODE_BASELINE,
    NO_TOOLS,
    action_set,
    settings_problems,
)
from aerialdojo.errors import MetricsError
from aerialdojo.events import EventLike
from aerialdojo.metrics import agos as metrics
from aerialdojo.metrics.aggregate import RULE_EPISODE_POOLED, RunMetrics, mean_or_none
from aerialdojo.metrics.scores import EpisodeScore, MetricSpec
from aerialdojo.metrics.trace import AgosCandidate, AgosRecord, EpisodeTrace, Point3
from aerialdojo.protocols import (
    BenchmarkProtocol,
    EpisodeRules,
    problems_when_loaded,
    register,
)
from aerialdojo.protocols.referee import Referee
from aerialdojo.protocols.task import ActionDescription, TaskDescription


@dataclass
class AgosTraceBuilder:
    """The UGV's path (its start, then every fine-graph point it drove through) and the
    air-ground record, tallied from the facts of each decision's event."""

    uav_start_visible: bool
    candidate_workflow: bool
    fresh_observation_required: bool
    positions: list[Point3]
    decisions: dict[str, int] = field(default_factory=lambda: {"uav": 0, "ugv": 0})
    uav_visible_after: list[bool] = field(default_factory=list)
    candidates: dict[str, AgosCandidate] = field(default_factory=dict)
    confirmations: int = 0
    confirmation_valid: bool = False
    ground_support: bool = False

    #: Positions come from the referee's facts, not from a pose topic.
    follows_pose_track = False

    @classmethod
    def from_record(cls, record: Mapping[str, Any], _start: Point3) -> AgosTraceBuilder:
        """Start from the STARTED record (its ``agos`` start facts and the UGV start)."""
        x, y, z = record["start"][:3]
        facts = record["agos"]
        return cls(
            uav_start_visible=bool(facts["uav_start_visible"]),
            candidate_workflow=facts.get("mode", MODE_AGENT) != MODE_BASELINE,
            fresh_observation_required=bool(facts.get("require_fresh_observation", True)),
            positions=[(float(x), float(y), float(z))],
        )

    def add(self, event: EventLike) -> None:
        facts = json.loads(event.episode_json)
        self.decisions[facts["agent"]] += 1
        if "uav_visible" in facts:
            self.uav_visible_after.append(bool(facts["uav_visible"]))
        candidate = facts.get("candidate")
        if candidate is not None and candidate["candidate_id"] not in self.candidates:
            self.candidates[candidate["candidate_id"]] = AgosCandidate(
                candidate_id=candidate["candidate_id"],
                polygon_xy=tuple(tuple(vertex) for vertex in candidate["polygon"]),
                center=tuple(candidate["center"]),
            )
        self.ground_support |= bool(facts.get("ground_support", False))
        verdict = facts.get("verdict")
        if verdict is not None:
            self.confirmations += 1
            self.confirmation_valid = bool(verdict["valid"])
            # The checker's six views are a ground observation of this decision too when the
            # UGV looked around right before, or where the protocol does not ask it to (A.2.3,
            # "when this requirement is enabled"): then the CONFIRM itself is the six-view
            # check. Otherwise the UGV never looked around.
            looked = verdict.get("fresh_observation", True) or not self.fresh_observation_required
            self.ground_support |= bool(verdict["visible"]) and looked
        self.positions.extend((float(x), float(y), float(z)) for x, y, z in facts.get("path", ()))

    def trace_fields(self) -> dict[str, Any]:
        return {"agos": self.record()}

    def record(self) -> AgosRecord:
        """The air-ground record of the decisions so far."""
        # The view decision k acts on: the start view for k = 1, else decision k-1's result.
        seen = [self.uav_start_visible, *self.uav_visible_after][: self.decisions["uav"]]
        tau = next((k for k, visible in enumerate(seen, start=1) if visible), None)
        return AgosRecord(
            uav_decisions=self.decisions["uav"],
            ugv_decisions=self.decisions["ugv"],
            # T_e, the UAV's own search budget (AGOS-Bench, A.2.1): the 80 decisions are
            # the team's, and the decision clock gives the UAV its share of them.
            uav_budget=self.decisions["uav"],
            oracle_visible_uav_step=tau,
            candidates=tuple(self.candidates.values()),
            confirmations=self.confirmations,
            confirmation_valid=self.confirmation_valid,
            ground_observation_support=self.ground_support,
            candidate_workflow=self.candidate_workflow,
        )


def run_settings(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The AGOS settings of the task manager's parameters, the paper's where they name none:
    ``mode``, ``ablation``, ``annotation_budget``, ``confirmation_budget``,
    ``require_fresh_observation`` (``AgosReferee``'s keyword arguments)."""
    return {
        "mode": str(settings.get("mode", MODE_AGENT)),
        "ablation": str(settings.get("ablation", "full")),
        "annotation_budget": int(settings.get("annotation_budget", ANNOTATION_BUDGET)),
        "confirmation_budget": int(settings.get("confirmation_budget", CONFIRMATION_BUDGET)),
        "require_fresh_observation": bool(settings.get("require_fresh_observation", True)),
    }


def check_settings(settings: Mapping[str, Any]) -> list[str]:
    """Problems of a run's AGOS settings that one parameter alone cannot show (an ablated
    Baseline)."""
    chosen = run_settings(settings)
    return settings_problems(chosen["mode"], chosen["ablation"])


def describe_task(
    episode: AgosEpisode, suite: AgosSuite, settings: Mapping[str, Any]
) -> TaskDescription:
    """The multi-view reference images, the town and region in the instruction text, the
    top-down map of the region, each agent's actions under the run's mode and ablation
    (with the annotation and confirmation budgets as their most uses), the shared decision
    budget and the mode; never the target's identity or position."""
    # Imported here: towns pull in the embedded renderer, which scoring never needs.
    from aerialdojo.agos.maps import region_map  # noqa: PLC0415
    from aerialdojo.agos.worlds import town_map  # noqa: PLC0415

    chosen = run_settings(settings)
    limits = {
        ANNOTATE_CANDIDATE: chosen["annotation_budget"],
        CONFIRM: chosen["confirmation_budget"],
    }
    return TaskDescription(
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        object_name="vehicle" if episode.reference_images else episode.target_name,
        image_goal=bool(episode.reference_images),
        description=task_text(episode),
        reference_images=tuple(suite.reference_image_paths(episode)),
        agents=episode.agents,
        actions=tuple(
            ActionDescription(
                agent=agent,
                name=name,
                takes_argument=name in ARGUMENT_ACTIONS,
                max_uses=limits.get(name, 0),
            )
            for agent in episode.agents
            for name in action_set(agent, chosen["ablation"], chosen["mode"])
        ),
        action_budget=episode.action_budget,
        success_radius_m=episode.success_radius_m,
        global_localization=True,
        mode=chosen["mode"],
        map_image=region_map(town_map(episode.scene), episode.region),
    )


def _suite_stats(path: Path) -> tuple[str, str]:
    return agos_suite_stats(load_agos_suite(path))


def _referee(episode: AgosEpisode, _suite: Any, settings: Mapping[str, Any]) -> Referee:
    # Imported here: towns pull in the embedded renderer, which scoring never needs.
    from aerialdojo.agos.protocol import AgosReferee  # noqa: PLC0415
    from aerialdojo.agos.worlds import referee_town  # noqa: PLC0415

    return AgosReferee(episode, referee_town(episode), **run_settings(settings))


#: Table 4's columns: (metric key, header, format: "%" rate as percent, "m" metres, "s"
#: steps). Every rate in percent, as everywhere in aerialdojo's reports: the paper's Table 4
#: prints SPL, ASE and ACG as fractions (its 0.453 is 45.3% here).
TABLE4_COLUMNS = (
    ("sr", "SR ↑", "%"),
    ("osr", "OSR ↑", "%"),
    ("spl", "SPL ↑", "%"),
    ("ne_m", "NE ↓", "m"),
    ("ase", "ASE ↑", "%"),
    ("acg", "ACG ↑", "%"),
    ("gva", "GVA ↑", "%"),
    ("ds", "DS ↓", "s"),
    ("cerr_m", "CErr ↓", "m"),
)
#: Table 3's columns per difficulty; it prints SPL in percent as well.
TABLE3_COLUMNS = (
    ("sr", "SR ↑", "%"),
    ("osr", "OSR ↑", "%"),
    ("spl", "SPL ↑", "%"),
    ("ne_m", "NE ↓", "m"),
    ("ds", "DS ↓", "s"),
)
DIFFICULTIES = (("easy", "Easy"), ("mid", "Mid"), ("hard", "Hard"))
MODE_LABELS = {MODE_AGENT: "AGOS-Agent", MODE_BASELINE: "Baseline"}
#: Where a run mixes the values of a condition (a run is meant to hold one).
MIXED = "mixed"


def _table_cell(value: float | None, style: str) -> str:
    if value is None:
        return "N/A"
    if style == "%":
        return f"{100.0 * value:.1f}%"
    return f"{value:.1f}"


def _checked(conditions: Mapping[str, Mapping[str, Any]]) -> None:
    for condition, run in conditions.items():
        if run.get("benchmark") != "agos":
            raise MetricsError(f"{condition}: a {run.get('benchmark')} run, not an AGOS run")


def _condition(run: Mapping[str, Any], name: str) -> str:
    """The value of condition ``name`` the run's episodes share, as the tables print it."""
    values = [str(value) for value in run.get("by_condition", {}).get(name, {})]
    if len(values) != 1:
        return MIXED if values else "?"
    return PROTOCOL.condition_label(name, values[0])


def table4(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Several conditions' ``metrics.json`` laid out like AGOS-Bench Table 4 (appendix A.5),
    with the mode beside the ablation so that Baseline runs fit in: one block per
    condition, a row per difficulty and a Total.

    Mode and ablation are read from each run's episodes, not from its name. Difficulties a
    run did not hold are left out of its block; ``Total`` is the run's overall aggregate
    (episode-pooled, conditional metrics over their support).

    Raises:
        MetricsError: a condition that is not an AGOS run.
    """
    _checked(conditions)
    titles = " | ".join(title for _, title, _ in TABLE4_COLUMNS)
    lines = [
        f"| Condition | Mode | Ablation | Diff. | {titles} |",
        "|" + " --- |" * (len(TABLE4_COLUMNS) + 4),
    ]
    for condition, run in conditions.items():
        groups = [
            (label, run["by_setting"][key])
            for key, label in DIFFICULTIES
            if key in run["by_setting"]
        ]
        groups.append(("Total", run["overall"]))
        for row, (label, group) in enumerate(groups):
            values = group["values"]
            cells = [_table_cell(values.get(key), style) for key, _, style in TABLE4_COLUMNS]
            named = (
                [condition, _condition(run, "mode"), _condition(run, "ablation")]
                if row == 0
                else ["", "", ""]
            )
            lines.append(
                "| " + " | ".join([*named, f"{label} ({group['episodes']})", *cells]) + " |"
            )
    return "\n".join(lines) + "\n"


def macro_over_difficulties(run: Mapping[str, Any], key: str) -> float | None:
    """Metric ``key`` averaged over the run's difficulties with equal weight, the paper's
    "Overall" (AGOS-Bench, "Effect of the agentic protocol": Qwen3.7-Plus "rises from 7.6%
    to 48.9% SR", the means of its Easy, Mid and Hard SR in Table 3: (14.3 + 4.3 + 4.3) / 3
    and (68.1 + 44.3 + 34.3) / 3). Difficulties the run did not hold, or where the metric is
    undefined (NE without a CONFIRM), are left out; None when none is left."""
    return mean_or_none(
        run["by_setting"][setting]["values"].get(key)
        for setting, _ in DIFFICULTIES
        if setting in run["by_setting"]
    )


def table3(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Several conditions' ``metrics.json`` laid out like AGOS-Bench Table 3: one row per
    condition, SR, OSR, SPL, NE and DS for Easy, Mid and Hard, then Overall, the macro
    average over the difficulties (``macro_over_difficulties``); "N/A" where a run held no
    episode of a difficulty.

    Raises:
        MetricsError: a condition that is not an AGOS run.
    """
    _checked(conditions)
    scopes = [*(label for _, label in DIFFICULTIES), "Overall"]
    header = [
        "Condition",
        "Method",
        *(f"{scope} {title}" for scope in scopes for _, title, _ in TABLE3_COLUMNS),
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for condition, run in conditions.items():
        groups = [run["by_setting"].get(key) for key, _ in DIFFICULTIES]
        cells = [
            _table_cell(group["values"].get(key), style) if group is not None else "N/A"
            for group in groups
            for key, _, style in TABLE3_COLUMNS
        ]
        cells += [
            _table_cell(macro_over_difficulties(run, key), style)
            for key, _, style in TABLE3_COLUMNS
        ]
        method = _condition(run, "mode")
        if method == MODE_LABELS[MODE_AGENT] and _condition(run, "ablation") != "full":
            method += f" ({_condition(run, 'ablation')})"
        lines.append("| " + " | ".join([condition, method, *cells]) + " |")
    return "\n".join(lines) + "\n"


def paper_tables(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Several runs laid out as AGOS-Bench lays out its results: Table 3 (Baseline against
    AGOS-Agent by difficulty), then Table 4 (each mode and ablation by difficulty).

    Raises:
        MetricsError: a condition that is not an AGOS run.
    """
    return (
        "AGOS-Bench, Table 3 layout (methods by difficulty):\n\n"
        + table3(conditions)
        + "\nAGOS-Bench, Table 4 layout (mode and ablation by difficulty):\n\n"
        + table4(conditions)
    )


def _report_sections(run: RunMetrics) -> list[str]:
    this = {"this run": run.to_dict()}
    return [
        "## AGOS by method and difficulty (AGOS-Bench, Table 3 layout)\n\n" + table3(this),
        "## AGOS by mode, ablation and difficulty (AGOS-Bench, Table 4 layout)\n\n"
        + table4(this)
        + "\nCompare conditions: `aerialdojo compare baseline=RUN_DIR full=RUN_DIR "
        "no_e2a=RUN_DIR ...`",
    ]


def _metric_specs(_radii: tuple[float, ...]) -> tuple[MetricSpec, ...]:
    return metrics.METRIC_SPECS


def _score(trace: EpisodeTrace, _radii: tuple[float, ...]) -> EpisodeScore:
    return metrics.score_episode(trace)


PROTOCOL = register(
    BenchmarkProtocol(
        name="agos",
        title="AGOS-Bench",
        default_radii=(),
        aggregation_rule=RULE_EPISODE_POOLED,
        metric_specs=_metric_specs,
        score_episode=_score,
        trace_builder=AgosTraceBuilder.from_record,
        air_ground=True,
        report_sections=_report_sections,
        paper_table=paper_tables,
        group_keys=("mode", "ablation"),
        condition_labels={"mode": MODE_LABELS, "ablation": {NO_TOOLS: "–"}},
        # docs/protocols/agos.md, "Scoring versions": which rule moved which number.
        scoring_version=4,
        scoring_settings=tuple(run_settings({})),
        observes_view=observes_view,
        episodes=EpisodeRules(
            load_suite=load_agos_suite,
            validate_suite=problems_when_loaded(load_agos_suite),
            referee=_referee,
            describe_task=describe_task,
            check_settings=check_settings,
            suite_stats=_suite_stats,
        ),
    )
)
