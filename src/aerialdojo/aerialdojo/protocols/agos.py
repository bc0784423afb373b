"""The AGOS-Bench protocol: UAV-UGV search, handoff and verification (appendices A.1-A.5).

Rules: ``agos.protocol.AgosReferee`` (per-agent action sets, the shared decision budget, the
frozen UAV during verification, the E2A and RGPP tools and the checker). Traces: the UGV's
path and the air-ground record, folded from the facts the referee put in each decision's
event (``AgosTraceBuilder``). Metrics: ``metrics.agos``, episodes pooled. Reports add the
run laid out like Table 4.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aerialdojo.agos.episodes import AgosEpisode, AgosSuite, load_agos_suite, task_text
from aerialdojo.agos.vocabulary import ARGUMENT_ACTIONS, action_set
from aerialdojo.errors import MetricsError, TaskFileError
from aerialdojo.events import EventLike
from aerialdojo.metrics import agos as metrics
from aerialdojo.metrics.aggregate import RULE_EPISODE_POOLED, RunMetrics
from aerialdojo.metrics.scores import EpisodeScore, MetricSpec
from aerialdojo.metrics.trace import AgosCandidate, AgosRecord, EpisodeTrace, Point3
from aerialdojo.protocols import BenchmarkProtocol, EpisodeRules, register
from aerialdojo.protocols.referee import Referee
from aerialdojo.protocols.task import ActionDescription, TaskDescription


@dataclass
class AgosTraceBuilder:
    """The UGV's path (its start, then every fine-graph point it drove through) and the
    air-ground record, tallied from the facts of each decision's event."""

    uav_budget: int
    uav_start_visible: bool
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
        return cls(
            uav_budget=int(record["agos"]["uav_budget"]),
            uav_start_visible=bool(record["agos"]["uav_start_visible"]),
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
            # The checker's six views are the ground observation of this decision too.
            self.ground_support |= bool(verdict["visible"])
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
            uav_budget=self.uav_budget,
            oracle_visible_uav_step=tau,
            candidates=tuple(self.candidates.values()),
            confirmations=self.confirmations,
            confirmation_valid=self.confirmation_valid,
            ground_observation_support=self.ground_support,
        )


def describe_task(
    episode: AgosEpisode, suite: AgosSuite, settings: Mapping[str, Any]
) -> TaskDescription:
    """The multi-view reference images, the town and region in the instruction text, each
    agent's actions under the run's ablation, the shared decision budget; never the target's
    identity or position."""
    ablation = str(settings.get("ablation", "full"))
    return TaskDescription(
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        object_name="vehicle",
        image_goal=True,
        description=task_text(episode),
        reference_images=tuple(suite.reference_image_paths(episode)),
        agents=episode.agents,
        actions=tuple(
            ActionDescription(agent=agent, name=name, takes_argument=name in ARGUMENT_ACTIONS)
            for agent in episode.agents
            for name in action_set(agent, ablation)
        ),
        action_budget=episode.action_budget,
        success_radius_m=episode.success_radius_m,
        global_localization=True,
    )


def _referee(episode: AgosEpisode, _suite: Any, settings: Mapping[str, Any]) -> Referee:
    # Imported here: towns pull in the embedded renderer, which scoring never needs.
    from aerialdojo.agos.protocol import AgosReferee  # noqa: PLC0415
    from aerialdojo.agos.town import load_town  # noqa: PLC0415

    return AgosReferee(
        episode, load_town(episode.scene), ablation=str(settings.get("ablation", "full"))
    )


def _validate_suite(path: Path) -> list[str]:
    try:
        load_agos_suite(path)
    except TaskFileError as error:
        return list(error.problems)
    return []


#: Table 4's columns: (metric key, header, format: "%" rate as percent, "r" rate as 0.xxx,
#: "m" metres, "s" steps).
TABLE4_COLUMNS = (
    ("sr", "SR ↑", "%"),
    ("osr", "OSR ↑", "%"),
    ("spl", "SPL ↑", "r"),
    ("ne_m", "NE ↓", "m"),
    ("ase", "ASE ↑", "r"),
    ("acg", "ACG ↑", "r"),
    ("gva", "GVA ↑", "%"),
    ("ds", "DS ↓", "s"),
    ("cerr_m", "CErr ↓", "m"),
)
DIFFICULTIES = (("easy", "Easy"), ("mid", "Mid"), ("hard", "Hard"))


def _table4_cell(value: float | None, style: str) -> str:
    if value is None:
        return "N/A"
    if style == "%":
        return f"{100.0 * value:.1f}%"
    if style == "r":
        return f"{value:.3f}"
    return f"{value:.1f}"


def table4(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Several conditions' ``metrics.json`` laid out like AGOS-Bench Table 4 (appendix A.5):
    one block per condition, a row per difficulty and a Total.

    Difficulties a run did not hold are left out of its block; ``Total`` is the run's
    overall aggregate (episode-pooled, conditional metrics over their support).

    Raises:
        MetricsError: a condition that is not an AGOS run.
    """
    header = "| Condition | Diff. | " + " | ".join(title for _, title, _ in TABLE4_COLUMNS) + " |"
    lines = [header, "|" + " --- |" * (len(TABLE4_COLUMNS) + 2)]
    for condition, run in conditions.items():
        if run.get("benchmark") != "agos":
            raise MetricsError(f"{condition}: a {run.get('benchmark')} run, not an AGOS run")
        groups = [
            (label, run["by_setting"][key])
            for key, label in DIFFICULTIES
            if key in run["by_setting"]
        ]
        groups.append(("Total", run["overall"]))
        for row, (label, group) in enumerate(groups):
            values = group["values"]
            cells = [_table4_cell(values.get(key), style) for key, _, style in TABLE4_COLUMNS]
            name = condition if row == 0 else ""
            lines.append(f"| {name} | {label} ({group['episodes']}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _report_sections(run: RunMetrics) -> list[str]:
    return [
        "## AGOS by difficulty (AGOS-Bench, Table 4 layout)\n\n"
        + table4({"this run": run.to_dict()})
        + "\nCompare conditions: `aerialdojo compare full=RUN_DIR no_e2a=RUN_DIR ...`"
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
        paper_table=table4,
        episodes=EpisodeRules(
            load_suite=load_agos_suite,
            validate_suite=_validate_suite,
            referee=_referee,
            describe_task=describe_task,
        ),
    )
)
