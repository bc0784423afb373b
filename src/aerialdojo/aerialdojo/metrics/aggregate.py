"""Aggregation of per-episode scores: equal weights per map and family, or per episode."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any, TypeVar

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.scores import EpisodeScore, MetricSpec

#: Mean over scenes within a family, then over families (AerialDojo-200K, section 4.1).
RULE_MAP_FAMILY_EQUAL = "map_family_equal"
#: Mean over episodes (task-weighted; AGOS and CityNav totals).
RULE_EPISODE_POOLED = "episode_pooled"
RULES = (RULE_MAP_FAMILY_EQUAL, RULE_EPISODE_POOLED)
#: The value an episode without a condition is grouped under (e.g. a log that names none).
UNSTATED = "unstated"


#: Why an excluded attempt is not scored: a failure of the simulator, robot or harness...
CAUSE_INFRASTRUCTURE = "infrastructure"
#: ...or an operator or the robot's safety layer stopping the robot (docs/robots.md).
CAUSE_INTERVENTION = "intervention"
CAUSES = (CAUSE_INFRASTRUCTURE, CAUSE_INTERVENTION)

_T = TypeVar("_T")


@dataclass(frozen=True, kw_only=True)
class ExcludedEpisode:
    """An attempt lost to an infrastructure failure or an operator/safety intervention:
    listed in reports, never scored.

    Attributes:
        episode_id: the episode.
        attempt: 1-based attempt number.
        reason: what failed, e.g. ``"simulator timed out after 30 s"``.
        cause: ``CAUSE_INFRASTRUCTURE`` or ``CAUSE_INTERVENTION``.
    """

    episode_id: str
    attempt: int
    reason: str
    cause: str = CAUSE_INFRASTRUCTURE

    @property
    def intervention(self) -> bool:
        """An operator or the robot's safety layer stopped the attempt."""
        return self.cause == CAUSE_INTERVENTION

    def to_dict(self) -> dict[str, Any]:
        """As metrics.json, run_status.json and trajectory logs hold it: ``cause`` only for an
        intervention (absent: infrastructure, as files written before it existed)."""
        entry: dict[str, Any] = {
            "episode_id": self.episode_id,
            "attempt": self.attempt,
            "reason": self.reason,
        }
        if self.intervention:
            entry["cause"] = self.cause
        return entry


@dataclass(frozen=True, kw_only=True)
class GroupMetrics:
    """Aggregated metrics of a group of episodes.

    Attributes:
        episodes: episodes in the group.
        values: metric key -> aggregate; None where no episode is in the metric's support
            (reported as N/A).
        support: metric key -> episodes whose value entered the aggregate (GVA-Support for
            ``gva``).
    """

    episodes: int
    values: Mapping[str, float | None]
    support: Mapping[str, int]

    def to_dict(self) -> dict[str, Any]:
        return {
            "episodes": self.episodes,
            "values": dict(self.values),
            "support": dict(self.support),
        }


@dataclass(frozen=True, kw_only=True)
class ConditionGroup:
    """The episodes of one combination of a run's grouping conditions, broken down by
    setting and family as the whole run is (AerialDojo-200K reports ID and OOD, SemanticOGS
    and ImageOGS apart; AGOS-Bench each mode and ablation).

    Attributes:
        conditions: condition name -> value shared by the group's episodes.
        overall: the group's aggregate under the run's rule.
        by_setting: setting -> aggregate.
        by_setting_family: setting -> family -> aggregate.
    """

    conditions: Mapping[str, str]
    overall: GroupMetrics
    by_setting: Mapping[str, GroupMetrics]
    by_setting_family: Mapping[str, Mapping[str, GroupMetrics]]

    def to_dict(self) -> dict[str, Any]:
        return {
            "conditions": dict(self.conditions),
            "overall": self.overall.to_dict(),
            "by_setting": {name: group.to_dict() for name, group in self.by_setting.items()},
            "by_setting_family": {
                setting: {family: group.to_dict() for family, group in families.items()}
                for setting, families in self.by_setting_family.items()
            },
        }


@dataclass(frozen=True, kw_only=True)
class RunMetrics:
    """Everything a run's report states, computed from its episode scores.

    Attributes:
        benchmark: the benchmark of every episode.
        rule: how ``overall`` and the family/setting groups weight episodes (``RULES``).
        radii: success radii in metres (empty for AGOS, whose success is the checker's).
        specs: the metrics, in report order.
        episodes: scores sorted by episode id.
        overall: the benchmark's headline aggregate.
        task_weighted: the mean over all episodes.
        by_family, by_setting, by_scene: groups, aggregated with ``rule`` (a scene is a
            single map, so its aggregate is its episode mean).
        by_setting_family: setting -> family -> group, as in AerialDojo-200K, Tables 4-5.
        by_condition: condition name -> value -> group, for every condition an episode
            names (``EpisodeTrace.conditions``; ``UNSTATED`` where one does not).
        group_keys: the conditions ``groups`` combine, in the benchmark's order.
        groups: one per combination of ``group_keys`` values present, in sorted order.
        excluded: infrastructure failures, listed and never scored.
        headline_by_setting: the benchmark reports each setting apart (AerialDojo-200K:
            Base, Standard and Long-Horizon in tables of their own): ``by_setting`` is the
            headline, and where the run holds several settings every scope that would pool
            them (``overall``, ``task_weighted``, ``by_family``, ``by_condition``, each
            group's ``overall``) is withheld: N/A, with its episode count.
        task_weighted_by_setting: the mean over the episodes of each setting, beside the
            headline rule's (AerialDojo-200K, appendix B).
        episode_texts: the text of each of ``episodes``' entries in ``metrics.json``, where
            written beside the scoring (a merge's readers: ``scale.records``); None: written
            from ``episodes``.
    """

    benchmark: str
    rule: str
    radii: tuple[float, ...]
    specs: tuple[MetricSpec, ...]
    episodes: tuple[EpisodeScore, ...]
    overall: GroupMetrics
    task_weighted: GroupMetrics
    by_family: Mapping[str, GroupMetrics]
    by_setting: Mapping[str, GroupMetrics]
    by_scene: Mapping[str, GroupMetrics]
    by_setting_family: Mapping[str, Mapping[str, GroupMetrics]]
    by_condition: Mapping[str, Mapping[str, GroupMetrics]] = field(default_factory=dict)
    group_keys: tuple[str, ...] = ()
    groups: tuple[ConditionGroup, ...] = ()
    excluded: tuple[ExcludedEpisode, ...] = field(default=())
    headline_by_setting: bool = False
    task_weighted_by_setting: Mapping[str, GroupMetrics] = field(default_factory=dict)
    episode_texts: Sequence[str] | None = field(default=None, compare=False, repr=False)

    @property
    def pools_settings(self) -> bool:
        """The run-wide scopes are withheld because they would pool settings the benchmark
        reports apart."""
        return self.headline_by_setting and len(self.by_setting) > 1

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready form; ``report.write_metrics_json`` writes it with sorted keys."""
        return {
            "format": "aerialdojo-metrics/1",
            "benchmark": self.benchmark,
            "rule": self.rule,
            "radii_m": list(self.radii),
            "metrics": [
                {
                    "key": spec.key,
                    "label": spec.label,
                    "kind": spec.kind,
                    "higher_is_better": spec.higher_is_better,
                    "conditional": spec.conditional,
                }
                for spec in self.specs
            ],
            "overall": self.overall.to_dict(),
            "task_weighted": self.task_weighted.to_dict(),
            "by_family": {name: group.to_dict() for name, group in self.by_family.items()},
            "by_setting": {name: group.to_dict() for name, group in self.by_setting.items()},
            "headline": "by_setting" if self.headline_by_setting else "overall",
            "task_weighted_by_setting": {
                name: group.to_dict() for name, group in self.task_weighted_by_setting.items()
            },
            "by_scene": {name: group.to_dict() for name, group in self.by_scene.items()},
            "by_setting_family": {
                setting: {family: group.to_dict() for family, group in families.items()}
                for setting, families in self.by_setting_family.items()
            },
            "by_condition": {
                name: {value: group.to_dict() for value, group in values.items()}
                for name, values in self.by_condition.items()
            },
            "group_keys": list(self.group_keys),
            "groups": [group.to_dict() for group in self.groups],
            "episodes": [score.to_dict() for score in self.episodes],
            "excluded": [entry.to_dict() for entry in self.excluded],
        }


def mean_or_none(values: Iterable[float | None]) -> float | None:
    """Mean of the defined values (exactly rounded sum: order-independent); None if none."""
    defined = [value for value in values if value is not None]
    return math.fsum(defined) / len(defined) if defined else None


def _grouped(items: Iterable[_T], key: Callable[[_T], str]) -> dict[str, list[_T]]:
    groups: dict[str, list[_T]] = defaultdict(list)
    for item in items:
        groups[key(item)].append(item)
    return dict(sorted(groups.items()))


#: A group's metric values, one list per key in the order of its episodes (None where an
#: episode lies outside a conditional metric's support).
_Columns = dict[str, list[float | None]]


class _Table:
    """A run's metric values in columns, one per key, with each episode's family and scene:
    a group picks its rows by index, where reading every score again for each of the ~100
    groups of a large run cost as much as scoring it.

    Raises:
        MetricsError: a score missing a metric.
    """

    def __init__(self, scores: Sequence[EpisodeScore], keys: Sequence[str]) -> None:
        wanted = set(keys)
        for score in scores:
            if not wanted <= score.values.keys():
                missing = [key for key in keys if key not in score.values]
                raise MetricsError(
                    f"episode {score.episode_id!r}: no value for {', '.join(missing)}"
                )
        self.rows = len(scores)
        self.columns: _Columns = {key: [score.values[key] for score in scores] for key in keys}
        self.families = [score.family for score in scores]
        self.scenes = [score.scene for score in scores]

    def group(self, rows: Sequence[int], rule: str) -> GroupMetrics:
        """The aggregate of the episodes at ``rows`` (in order) under ``rule`` (checked)."""
        if len(rows) == self.rows:  # the whole run: its columns as they are
            columns, families, scenes = self.columns, self.families, self.scenes
        else:
            columns = {
                key: list(map(column.__getitem__, rows)) for key, column in self.columns.items()
            }
            families = list(map(self.families.__getitem__, rows))
            scenes = list(map(self.scenes.__getitem__, rows))
        return GroupMetrics(
            episodes=len(rows),
            values=_RULE_VALUES[rule](columns, families, scenes),
            support={key: len(column) - column.count(None) for key, column in columns.items()},
        )


def _pooled_values(
    columns: _Columns, _families: Sequence[str], _scenes: Sequence[str]
) -> dict[str, float | None]:
    return {key: mean_or_none(column) for key, column in columns.items()}


def _map_family_equal_values(
    columns: _Columns, families: Sequence[str], scenes: Sequence[str]
) -> dict[str, float | None]:
    """(1/F) sum_f (1/M_f) sum_m mean_{i in m} x_i over families and maps with support, per
    key; the episodes are grouped once for every key (a run of 200,000 has ~60 groups), by
    their positions in the columns."""
    grouped: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for index, (family, scene) in enumerate(zip(families, scenes, strict=True)):
        grouped[family][scene].append(index)
    pickers = [
        [itemgetter(*indices) if len(indices) > 1 else _single(indices[0]) for indices in maps]
        for maps in (family.values() for family in grouped.values())
    ]
    return {
        key: mean_or_none(
            mean_or_none(mean_or_none(pick(column)) for pick in maps) for maps in pickers
        )
        for key, column in columns.items()
    }


def _single(index: int) -> Callable[[list[float | None]], tuple[float | None]]:
    return lambda column: (column[index],)


_RULE_VALUES = {
    RULE_MAP_FAMILY_EQUAL: _map_family_equal_values,
    RULE_EPISODE_POOLED: _pooled_values,
}


def _check_rule(rule: str) -> None:
    if rule not in _RULE_VALUES:
        raise MetricsError(f"aggregation rule {rule!r} is not one of {', '.join(RULES)}")


def aggregate_group(
    scores: Sequence[EpisodeScore], specs: Sequence[MetricSpec], rule: str
) -> GroupMetrics:
    """Aggregate ``scores`` under ``rule``.

    ``RULE_MAP_FAMILY_EQUAL`` (AerialDojo-200K, section 4.1: "We average all map-level scores
    equally within each family, then average the four family means equally"): a map's score is its
    episode mean, a family's the mean of its maps, the group's the mean of its families.
    ``RULE_EPISODE_POOLED``: the mean over episodes. Either way a conditional metric only
    averages the episodes in its support, and a group without support gets None.

    Args:
        scores: the group's episodes.
        specs: metrics to aggregate; every score must hold each key.
        rule: one of ``RULES``.

    Raises:
        MetricsError: unknown rule, or a score missing a metric.
    """
    _check_rule(rule)
    return _Table(scores, [spec.key for spec in specs]).group(range(len(scores)), rule)


def withheld(group: GroupMetrics) -> GroupMetrics:
    """``group`` with every value N/A and no support: a scope a benchmark does not report
    (one that would pool its settings), its episode count kept."""
    return GroupMetrics(
        episodes=group.episodes,
        values=dict.fromkeys(group.values),
        support=dict.fromkeys(group.support, 0),
    )


def aggregate(
    scores: Iterable[EpisodeScore],
    specs: Sequence[MetricSpec],
    *,
    rule: str,
    radii: Sequence[float],
    excluded: Sequence[ExcludedEpisode] = (),
    group_keys: Sequence[str] = (),
    headline_by_setting: bool = False,
) -> RunMetrics:
    """Aggregate a run's episode scores into every group its report shows.

    Args:
        scores: one per episode, all of one benchmark, in any order.
        specs: the benchmark's metrics (``metric_specs`` of its module).
        rule: ``overall``'s and the groups' weighting (``RULES``).
        radii: the radii the scores were computed at (recorded in the result).
        excluded: infrastructure failures to list.
        group_keys: conditions whose value combinations get a group of their own
            (the benchmark's ``group_keys``).
        headline_by_setting: the benchmark reports each setting apart
            (``RunMetrics.headline_by_setting``): no scope of a run of several settings
            pools them.

    Raises:
        MetricsError: no scores, mixed benchmarks, a repeated episode id, or an unknown rule.
    """
    ordered = sorted(scores, key=lambda score: score.episode_id)
    if not ordered:
        raise MetricsError("no episodes to aggregate")
    benchmarks = sorted({score.benchmark for score in ordered})
    if len(benchmarks) > 1:
        raise MetricsError(f"one run must hold one benchmark, got {', '.join(benchmarks)}")
    repeated = sorted(
        {a.episode_id for a, b in itertools.pairwise(ordered) if a.episode_id == b.episode_id}
    )
    if repeated:
        raise MetricsError(f"episode ids scored more than once: {', '.join(repeated)}")

    _check_rule(rule)
    table = _Table(ordered, [spec.key for spec in specs])
    every = range(len(ordered))
    # Each episode's setting by its row, looked up by the list's own method: a lambda per
    # row was a quarter of aggregating 200,000 episodes (families and scenes: ``table``).
    setting_of = [score.setting for score in ordered].__getitem__
    family_of = table.families.__getitem__
    settings = _grouped(every, setting_of)
    pooled_withheld = headline_by_setting and len(settings) > 1

    # The same rows under the same rule aggregate to the same values, computed once: a run of
    # one setting and one combination of group conditions asks for the whole run's aggregate
    # four times and each family's three times (as a family, in its setting, in its
    # combination).
    aggregated: dict[tuple[str, tuple[int, ...]], GroupMetrics] = {}

    def group(members: Sequence[int], group_rule: str = rule) -> GroupMetrics:
        rows = (group_rule, tuple(members))
        found = aggregated.get(rows)
        if found is None:
            found = aggregated[rows] = table.group(members, group_rule)
        return found

    def pooled(members: Sequence[int], group_rule: str = rule) -> GroupMetrics:
        """A scope over every setting of ``members``: withheld where it pools settings."""
        found = group(members, group_rule)
        if pooled_withheld and len({ordered[i].setting for i in members}) > 1:
            return withheld(found)
        return found

    names = sorted({name for score in ordered for name in score.conditions})
    keys = tuple(group_keys)
    # Each condition's value by row, read once: a lambda per row and condition was about a
    # sixth of aggregating 200,000 episodes (cProfile).
    conditions = {
        name: [score.conditions.get(name, UNSTATED) for score in ordered]
        for name in {*names, *keys}
    }

    def by_value(name: str) -> dict[str, GroupMetrics]:
        values = _grouped(every, conditions[name].__getitem__)
        return {value: pooled(members) for value, members in values.items()}

    def by_setting_family(members: Sequence[int]) -> dict[str, dict[str, GroupMetrics]]:
        return {
            setting: {
                family: group(family_members)
                for family, family_members in _grouped(setting_members, family_of).items()
            }
            for setting, setting_members in _grouped(members, setting_of).items()
        }

    combined = list(map("\x1f".join, zip(*(conditions[name] for name in keys), strict=True)))
    combinations = _grouped(every, combined.__getitem__) if keys else {}
    return RunMetrics(
        benchmark=benchmarks[0],
        rule=rule,
        radii=tuple(float(radius) for radius in radii),
        specs=tuple(specs),
        episodes=tuple(ordered),
        overall=pooled(every),
        task_weighted=pooled(every, RULE_EPISODE_POOLED),
        by_family={name: pooled(members) for name, members in _grouped(every, family_of).items()},
        by_setting={name: group(members) for name, members in settings.items()},
        by_scene={
            name: group(members, RULE_EPISODE_POOLED)
            for name, members in _grouped(every, table.scenes.__getitem__).items()
        },
        by_setting_family=by_setting_family(every),
        by_condition={name: by_value(name) for name in names},
        group_keys=keys,
        groups=tuple(
            ConditionGroup(
                conditions={name: conditions[name][members[0]] for name in keys},
                overall=pooled(members),
                by_setting={
                    name: group(setting_members)
                    for name, setting_members in _grouped(members, setting_of).items()
                },
                by_setting_family=by_setting_family(members),
            )
            for members in combinations.values()
        )
        if keys
        else (),
        excluded=tuple(excluded),
        headline_by_setting=headline_by_setting,
        task_weighted_by_setting={
            name: group(members, RULE_EPISODE_POOLED) for name, members in settings.items()
        },
    )
