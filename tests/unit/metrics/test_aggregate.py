"""Aggregation: equal map/family weights (AerialDojo-200K, 4.1) against task weights; N/A."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import (
    RULE_EPISODE_POOLED,
    RULE_MAP_FAMILY_EQUAL,
    aggregate,
    aggregate_group,
)
from aerialdojo.metrics.scores import KIND_DISTANCE, KIND_RATE, EpisodeScore, MetricSpec
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import score_run

SR = MetricSpec(key="sr", label="SR", kind=KIND_RATE, higher_is_better=True)
NE = MetricSpec(
    key="ne_m", label="NE", kind=KIND_DISTANCE, higher_is_better=False, conditional=True
)


def _score(
    episode_id: str,
    scene: str,
    family: str,
    sr: float,
    *,
    ne: float | None = 0.0,
    setting: str = "base",
) -> EpisodeScore:
    return EpisodeScore(
        episode_id=episode_id,
        benchmark="aerialdojo",
        scene=scene,
        family=family,
        setting=setting,
        split="test",
        termination="stopped",
        steps_used=1,
        final_distance_m=0.0,
        closest_approach_m=0.0,
        executed_length_m=0.0,
        reference_length_m=1.0,
        values={"sr": sr, "ne_m": ne},
    )


# Urban: Mall_0 has three episodes (SR 1, 0, 0), Mall_1 one (SR 1); natural: one (SR 0).
UNEQUAL = [
    _score("a1", "Mall_0", "urban", 1.0),
    _score("a2", "Mall_0", "urban", 0.0),
    _score("a3", "Mall_0", "urban", 0.0),
    _score("b1", "Mall_1", "urban", 1.0),
    _score("c1", "Mountain_0", "natural", 0.0),
]


def test_equal_weights_and_task_weights_differ_on_unequal_counts() -> None:
    run = aggregate(UNEQUAL, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,))
    # urban = mean(Mall_0 = 1/3, Mall_1 = 1) = 2/3; natural = 0; overall = (2/3 + 0) / 2.
    assert run.by_family["urban"].values["sr"] == pytest.approx(2.0 / 3.0)
    assert run.by_family["natural"].values["sr"] == 0.0
    assert run.overall.values["sr"] == pytest.approx(1.0 / 3.0)
    # Task-weighted: 2 successes in 5 episodes.
    assert run.task_weighted.values["sr"] == pytest.approx(0.4)
    assert run.by_scene["Mall_0"].values["sr"] == pytest.approx(1.0 / 3.0)
    assert run.overall.episodes == 5
    assert run.by_family["urban"].support["sr"] == 4


def test_settings_are_aggregated_separately_with_the_same_rule() -> None:
    scores = [
        *UNEQUAL,
        _score("d1", "Mall_0", "urban", 1.0, setting="standard"),
        _score("d2", "Mountain_0", "natural", 1.0, setting="standard"),
    ]
    run = aggregate(scores, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,))
    assert run.by_setting["base"].values["sr"] == pytest.approx(1.0 / 3.0)
    assert run.by_setting["standard"].values["sr"] == 1.0
    assert run.by_setting_family["base"]["urban"].values["sr"] == pytest.approx(2.0 / 3.0)
    assert set(run.by_setting_family["standard"]) == {"urban", "natural"}


def test_conditional_metric_averages_its_support_and_is_none_without() -> None:
    scores = [
        _score("a", "Mall_0", "urban", 1.0, ne=10.0),
        _score("b", "Mall_0", "urban", 0.0, ne=None),
        _score("c", "Mall_0", "urban", 0.0, ne=20.0),
    ]
    group = aggregate_group(scores, [NE], RULE_EPISODE_POOLED)
    assert (group.values["ne_m"], group.support["ne_m"]) == (15.0, 2)
    empty = aggregate_group(scores[1:2], [NE], RULE_EPISODE_POOLED)
    assert (empty.values["ne_m"], empty.support["ne_m"]) == (None, 0)


def test_a_map_without_support_does_not_count_as_zero() -> None:
    scores = [
        _score("a", "Mall_0", "urban", 0.0, ne=None),
        _score("b", "Mall_1", "urban", 0.0, ne=30.0),
        _score("c", "Mountain_0", "natural", 0.0, ne=10.0),
    ]
    run = aggregate(scores, [NE], rule=RULE_MAP_FAMILY_EQUAL, radii=())
    assert run.by_family["urban"].values["ne_m"] == 30.0
    assert run.overall.values["ne_m"] == 20.0


def test_result_does_not_depend_on_episode_order() -> None:
    forward = aggregate(UNEQUAL, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,))
    backward = aggregate(UNEQUAL[::-1], [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,))
    assert forward.to_dict() == backward.to_dict()
    assert [score.episode_id for score in forward.episodes] == ["a1", "a2", "a3", "b1", "c1"]


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ([], "no episodes"),
        ([UNEQUAL[0], UNEQUAL[0]], "more than once: a1"),
    ],
)
def test_bad_runs_are_refused(scores: list[EpisodeScore], message: str) -> None:
    with pytest.raises(MetricsError, match=message):
        aggregate(scores, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,))


def test_unknown_rule_is_refused() -> None:
    with pytest.raises(MetricsError, match="'median'"):
        aggregate(UNEQUAL, [SR], rule="median", radii=(3.0,))


def test_score_run_refuses_mixed_benchmarks_and_bad_radii(
    make_trace: Callable[..., EpisodeTrace],
) -> None:
    citynav = make_trace(episode_id="c", benchmark="citynav")
    with pytest.raises(MetricsError, match="aerialdojo, citynav"):
        score_run([make_trace(), citynav])
    with pytest.raises(MetricsError, match="-3"):
        score_run([make_trace()], radii=(3.0, -3.0))
    with pytest.raises(MetricsError, match="repeat a radius"):
        score_run([make_trace()], radii=(3.0, 3.0000001))


def test_score_run_uses_the_benchmark_defaults(make_trace: Callable[..., EpisodeTrace]) -> None:
    run = score_run([make_trace()])
    assert run.radii == (3.0, 5.0)
    assert run.rule == RULE_MAP_FAMILY_EQUAL
    assert run.overall.values["sr_3m"] == 1.0


def test_a_per_setting_headline_pools_no_settings() -> None:
    # AerialDojo-200K reports each setting in a table of its own (Tables 4-5) and asks that
    # the aggregation rule be stated (appendix B): no figure of a run pools Base with Standard.
    scores = [
        *UNEQUAL,
        _score("d1", "Mall_0", "urban", 1.0, setting="standard"),
        _score("d2", "Mountain_0", "natural", 1.0, setting="standard"),
    ]
    run = aggregate(
        scores, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,), headline_by_setting=True
    )
    assert run.pools_settings
    assert run.by_setting["base"].values["sr"] == pytest.approx(1.0 / 3.0)
    assert run.task_weighted_by_setting["base"].values["sr"] == pytest.approx(0.4)
    assert run.task_weighted_by_setting["standard"].values["sr"] == 1.0
    for withheld in (run.overall, run.task_weighted, run.by_family["urban"]):
        assert (withheld.values["sr"], withheld.support["sr"], withheld.episodes) == (
            None,
            0,
            withheld.episodes,
        )
    assert run.overall.episodes == 7
    assert run.to_dict()["headline"] == "by_setting"
    # One setting pools nothing: its run-wide figures are that setting's.
    single = aggregate(
        UNEQUAL, [SR], rule=RULE_MAP_FAMILY_EQUAL, radii=(3.0,), headline_by_setting=True
    )
    assert not single.pools_settings
    assert single.overall.values["sr"] == single.by_setting["base"].values["sr"]
