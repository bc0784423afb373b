"""The CityNav protocol: aerial vision-and-language navigation over cities (CityNav, sections
3.1-3.2 and 5.1).

Rules (``CityNavReferee``): the six actions of section 3.1 (move-forward 5 m, turn-left and
turn-right 30 deg, ascend and descend 2 m, stop); an episode ends with Stop or when the step
budget is used. The paper sets no collision ending: a motion that meets geometry is held at
the contact and the episode goes on (the step's event says so). Agents are told the
description, may use GNSS (odometry in the map frame) and the landmark map, never the goal's
coordinates. Metrics: ``metrics.citynav`` (NE, SR, OSR, SPL within a 20 m sphere), episodes
pooled; reports add the run by split, laid out like Table 2.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aerialdojo.actions import CITYNAV_ACTIONS, STOP, Action, check_action
from aerialdojo.citynav.episodes import (
    SPLITS,
    CityNavEpisode,
    CityNavSuite,
    ground_truth_record,
    load_citynav_suite,
)
from aerialdojo.citynav.stats import citynav_suite_stats
from aerialdojo.errors import InvalidActionError, MetricsError
from aerialdojo.events import EventKind, PoseTraceBuilder
from aerialdojo.metrics import citynav as metrics
from aerialdojo.metrics.aggregate import RULE_EPISODE_POOLED, RunMetrics, aggregate_group
from aerialdojo.metrics.scores import KIND_RATE
from aerialdojo.protocols import (
    BenchmarkProtocol,
    EpisodeRules,
    problems_when_loaded,
    register,
)
from aerialdojo.protocols.referee import (
    PlannedStep,
    SimCommand,
    SimOutcome,
    StepRequest,
    TeammateMessage,
    Turn,
    Verdict,
    check_agent,
)
from aerialdojo.protocols.task import ActionDescription, TaskDescription

#: What a step's event says of a motion that met geometry (no ending in CityNav).
HELD_NOTE = "held at contact with {} (CityNav sets no collision ending)"
GEOFENCE_NOTE = "held at the edge of the city (geofence)"


def action_budget(episode: CityNavEpisode, settings: Mapping[str, Any]) -> int:
    """The run's step budget (``task_manager.action_budget``) where set, else the episode's."""
    chosen = int(settings.get("action_budget", 0) or 0)
    return chosen if chosen > 0 else episode.action_budget


class CityNavReferee:
    """The rules of one CityNav episode (section 3.1, "Action Space"; section 3.2).

    Args:
        episode: the episode.
        budget: actions allowed, Stop included.
    """

    def __init__(self, episode: CityNavEpisode, budget: int) -> None:
        self.episode = episode
        self.budget = budget
        self.starts = {"uav": episode.start}
        self.scored_pose = episode.start
        self._used = 0
        self._ended = False

    @property
    def steps_used(self) -> int:
        return self._used

    @property
    def steps_left(self) -> int:
        return max(self.budget - self._used, 0)

    def start_record(self) -> dict[str, Any]:
        return {**ground_truth_record(self.episode), "action_budget": self.budget}

    def plan(self, request: StepRequest) -> PlannedStep:
        """Accept one of the six CityNav actions with its magnitude.

        Raises:
            InvalidActionError: the episode ended, the agent is not in it, or the action is
                not a CityNav action.
        """
        if self._ended:
            raise InvalidActionError(f"episode {self.episode.episode_id} has ended")
        check_agent(self.episode.episode_id, self.episode.agents, request.agent)
        check_action(Action(request.action, request.magnitude), CITYNAV_ACTIONS)
        if request.action == STOP:
            return PlannedStep(request=request, command=None)
        return PlannedStep(
            request=request,
            command=SimCommand(
                agent=request.agent, action=request.action, magnitude=request.magnitude
            ),
        )

    def apply(self, planned: PlannedStep, outcome: SimOutcome | None) -> Verdict:
        """Count the action; end the episode on Stop or the budget's last action."""
        self._used += 1
        note = ""
        if outcome is not None:
            self.scored_pose = outcome.pose
            if outcome.collided:
                note = HELD_NOTE.format(outcome.collision_object)
            elif outcome.geofenced:
                note = GEOFENCE_NOTE
        if planned.command is None:
            verdict = Verdict(kind=EventKind.STOPPED)
        elif self._used >= self.budget:
            verdict = Verdict(kind=EventKind.BUDGET_EXHAUSTED, reason=note)
        else:
            verdict = Verdict(kind=EventKind.STEP, reason=note)
        self._ended = verdict.done
        return verdict

    def turn(self) -> Turn | None:
        return None

    def opening_messages(self) -> tuple[TeammateMessage, ...]:
        return ()


def describe_task(
    episode: CityNavEpisode, _suite: CityNavSuite, settings: Mapping[str, Any]
) -> TaskDescription:
    """The description, the action set, the budget and GNSS; never the goal's coordinates.
    The goal's name and first landmark are what a language model extracts from the
    description before navigation (section 4.2), given here so agents without one can act."""
    return TaskDescription(
        episode_id=episode.episode_id,
        benchmark=episode.benchmark,
        scene=episode.scene,
        setting=episode.setting,
        object_name=episode.goal_name,
        landmark_name=episode.landmark_names[0],
        description=episode.description,
        agents=episode.agents,
        actions=tuple(
            ActionDescription(
                agent="uav", name=kind.name, magnitudes=kind.magnitudes, unit=kind.unit
            )
            for kind in CITYNAV_ACTIONS
        ),
        action_budget=action_budget(episode, settings),
        success_radius_m=episode.success_radius_m,
        global_localization=True,
    )


def _suite_stats(path: Path) -> tuple[str, str]:
    return citynav_suite_stats(load_citynav_suite(path))


def _referee(episode: CityNavEpisode, _suite: Any, settings: Mapping[str, Any]) -> CityNavReferee:
    return CityNavReferee(episode, action_budget(episode, settings))


#: Table 2's metric columns: (key at the primary radius, header, percent).
TABLE2_COLUMNS = (
    ("ne_m", "NE ↓", False),
    ("sr_20m", "SR ↑", True),
    ("osr_20m", "OSR ↑", True),
    ("spl_20m", "SPL ↑", True),
)


def _cell(value: float | None, percent: bool, digits: int = 1) -> str:
    if value is None:
        return "N/A"
    return f"{100.0 * value:.2f}" if percent else f"{value:.{digits}f}"


def table2(conditions: Mapping[str, Mapping[str, Any]]) -> str:
    """Several runs' ``metrics.json`` laid out like CityNav Table 2: a row per condition, NE,
    SR, OSR and SPL (20 m) per split the runs hold.

    Raises:
        MetricsError: a condition that is not a CityNav run.
    """
    splits: list[str] = []
    for condition, run in conditions.items():
        if run.get("benchmark") != "citynav":
            raise MetricsError(f"{condition}: a {run.get('benchmark')} run, not a CityNav run")
        held = {episode["split"] for episode in run["episodes"]}
        splits += [split for split in SPLITS if split in held and split not in splits]
    header = ["Method", *(f"{split} {title}" for split in splits for _, title, _ in TABLE2_COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for condition, run in conditions.items():
        cells = [condition]
        for split in splits:
            group = _split_values(run, split)
            cells += [_cell(group.get(key), percent) for key, _, percent in TABLE2_COLUMNS]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _split_values(run: Mapping[str, Any], split: str) -> dict[str, float | None]:
    """Episode means of a ``metrics.json``'s episodes of ``split`` (empty if it has none)."""
    members = [episode["values"] for episode in run["episodes"] if episode["split"] == split]
    if not members:
        return {}
    return {
        key: sum(float(values[key]) for values in members) / len(members)
        for key, _, _ in TABLE2_COLUMNS
        if all(values.get(key) is not None for values in members)
    }


def _report_sections(run: RunMetrics) -> list[str]:
    rows = []
    for split in SPLITS:
        members = [score for score in run.episodes if score.split == split]
        if not members:
            continue
        group = aggregate_group(members, run.specs, RULE_EPISODE_POOLED)
        cells = [
            _cell(group.values[spec.key], spec.kind == KIND_RATE, digits=2) for spec in run.specs
        ]
        rows.append(f"| {split} ({group.episodes}) | " + " | ".join(cells) + " |")
    header = "| Split | " + " | ".join(f"{spec.label} ({spec.unit})" for spec in run.specs) + " |"
    return [
        "## CityNav by split (CityNav, Table 2 layout)\n\n"
        + "\n".join([header, "|" + " --- |" * (len(run.specs) + 1), *rows])
        + "\n\nCompare methods: `aerialdojo compare gsm=RUN_DIR colour=RUN_DIR ...`"
    ]


PROTOCOL = register(
    BenchmarkProtocol(
        name="citynav",
        title="CityNav",
        default_radii=metrics.DEFAULT_RADII,
        aggregation_rule=RULE_EPISODE_POOLED,
        metric_specs=metrics.metric_specs,
        score_episode=metrics.score_episode,
        trace_builder=PoseTraceBuilder,
        report_sections=_report_sections,
        paper_table=table2,
        # docs/protocols/citynav.md, "Scoring versions": which rule moved which number.
        scoring_version=3,
        scoring_settings=("action_budget",),
        episodes=EpisodeRules(
            load_suite=load_citynav_suite,
            validate_suite=problems_when_loaded(load_citynav_suite),
            referee=_referee,
            describe_task=describe_task,
            ground_truth_record=ground_truth_record,
            suite_stats=_suite_stats,
        ),
    )
)
