"""AerialDojo metrics worked by hand from AerialDojo-200K, sections 3.2-3.3 (anchor (0, 0, 10))."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from aerialdojo.errors import MetricsError
from aerialdojo.metrics import aerialdojo
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import score_run

Factory = Callable[..., EpisodeTrace]


def test_stop_inside_scores_every_metric(make_trace: Factory) -> None:
    # 10 -> 5 -> 1 m from the anchor: l = 9 m, L = 12 m, final distance 1 m.
    score = aerialdojo.score_episode(make_trace())
    assert score.values == {
        "sr_3m": 1.0,
        "osr_3m": 1.0,
        "spl_3m": 1.0,  # L / max(L, l) = 12 / 12: a path shorter than the reference earns no bonus
        "sr_5m": 1.0,
        "osr_5m": 1.0,
        "spl_5m": 1.0,
        "dts_m": 1.0,
        "cr": 0.0,
    }
    assert score.executed_length_m == 9.0


def test_spl_divides_by_the_longer_executed_path(make_trace: Factory) -> None:
    # 10 -> 20 -> 1: l = 10 + 19 = 29 m, L = 12 m.
    trace = make_trace(positions=((10, 0, 10), (20, 0, 10), (1, 0, 10)))
    assert aerialdojo.score_episode(trace).values["spl_3m"] == pytest.approx(12.0 / 29.0)


@pytest.mark.parametrize(
    ("stop_x", "inside"),
    [(3.0, True), (3.0 - 1e-9, True), (3.0 + 1e-9, False)],
)
def test_radius_is_inclusive(make_trace: Factory, stop_x: float, inside: bool) -> None:
    trace = make_trace(positions=((10.0, 0.0, 10.0), (stop_x, 0.0, 10.0)))
    values = aerialdojo.score_episode(trace).values
    assert values["sr_3m"] == float(inside)
    assert values["osr_3m"] == float(inside)
    assert values["sr_5m"] == 1.0
    assert values["dts_m"] == stop_x


def test_oracle_success_is_checked_along_segments(make_trace: Factory) -> None:
    # Both ends of the first move are sqrt(2^2 + 2.5^2) = 3.20 m away, but the move passes
    # (2, 0, 10), 2 m from the anchor; the episode then stops 7.76 m away.
    trace = make_trace(positions=((2.0, -2.5, 10.0), (2.0, 2.5, 10.0), (2.0, 7.5, 10.0)))
    values = aerialdojo.score_episode(trace).values
    assert values["osr_3m"] == 1.0
    assert values["sr_3m"] == 0.0
    assert values["dts_m"] == pytest.approx(math.hypot(2.0, 7.5))


def test_oracle_success_uses_the_third_dimension(make_trace: Factory) -> None:
    # Directly above the anchor, 4 m higher: inside in 2D, outside the 3 m sphere.
    trace = make_trace(positions=((10.0, 0.0, 14.0), (0.0, 0.0, 14.0)))
    values = aerialdojo.score_episode(trace).values
    assert values["osr_3m"] == 0.0
    assert values["sr_3m"] == 0.0
    assert values["sr_5m"] == 1.0


def test_collision_after_entering_keeps_oracle_success_only(make_trace: Factory) -> None:
    trace = make_trace(
        positions=((10, 0, 10), (5, 0, 10), (2, 0, 10), (2, 5, 10)),
        stop_called=False,
        collided=True,
        collision_step=3,
        termination="collided",
    )
    values = aerialdojo.score_episode(trace).values
    assert (values["osr_3m"], values["sr_3m"], values["spl_3m"], values["cr"]) == (1, 0, 0, 1)
    assert values["dts_m"] == pytest.approx(math.hypot(2.0, 5.0))


def test_collision_before_a_stop_inside_fails(make_trace: Factory) -> None:
    # A harness that goes on after a scrape: the Stop lands inside, the collision still fails it.
    trace = make_trace(collided=True, collision_step=1)
    values = aerialdojo.score_episode(trace).values
    assert (values["sr_3m"], values["osr_3m"], values["cr"]) == (0.0, 1.0, 1.0)


def test_budget_exhausted_inside_without_stop_fails(make_trace: Factory) -> None:
    trace = make_trace(stop_called=False, termination="budget_exhausted", steps_used=90)
    values = aerialdojo.score_episode(trace).values
    assert (values["sr_3m"], values["osr_3m"], values["dts_m"]) == (0.0, 1.0, 1.0)


def test_stop_after_the_budget_fails(make_trace: Factory) -> None:
    values = aerialdojo.score_episode(make_trace(steps_used=91, action_budget=90)).values
    assert values["sr_3m"] == 0.0


def test_zero_executed_length_gives_spl_sigma(make_trace: Factory) -> None:
    # Stops where it started (after one turn): l = 0, SPL = L / max(L, 0) = 1.
    trace = make_trace(positions=np.array([[1.0, 0.0, 10.0], [1.0, 0.0, 10.0]]), steps_used=2)
    score = aerialdojo.score_episode(trace)
    assert score.executed_length_m == 0.0
    assert score.values["spl_3m"] == 1.0


def test_spl_never_exceeds_one(make_trace: Factory) -> None:
    rng = np.random.default_rng(7)
    for _ in range(200):
        path = np.vstack([[4.0, 0.0, 10.0], rng.uniform(-3, 3, size=(rng.integers(1, 6), 3))])
        trace = make_trace(positions=path, reference_length_m=float(rng.uniform(0.1, 40.0)))
        values = aerialdojo.score_episode(trace, radii=(3.0, 5.0, 10.0)).values
        for radius in ("3m", "5m", "10m"):
            assert 0.0 <= values[f"spl_{radius}"] <= values[f"sr_{radius}"] <= 1.0
            assert values[f"sr_{radius}"] <= values[f"osr_{radius}"]


def test_any_list_of_radii(make_trace: Factory) -> None:
    values = aerialdojo.score_episode(make_trace(), radii=(0.5, 2.5)).values
    assert set(values) == {"sr_0.5m", "osr_0.5m", "spl_0.5m", "sr_2.5m", "osr_2.5m"} | {
        "spl_2.5m",
        "dts_m",
        "cr",
    }
    assert (values["sr_0.5m"], values["sr_2.5m"]) == (0.0, 1.0)
    assert [spec.key for spec in aerialdojo.metric_specs((0.5, 2.5))] == list(values)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"termination": "stopped", "stop_called": False}, "contradicts"),
        ({"termination": "landed"}, "'landed'"),
        ({"collided": True}, "collision_step"),
        ({"collided": True, "collision_step": 4}, "collision_step=4"),
        ({"positions": ((1.0, 2.0),)}, "shape"),
        ({"positions": ((1.0, 2.0, 3.0), (1.0, 2.0))}, "not numeric triples"),
        ({"positions": ((1.0, math.nan, 2.0),)}, "non-finite"),
        ({"reference_length_m": 0.0}, "reference_length_m=0.0"),
    ],
)
def test_inconsistent_traces_are_refused(
    make_trace: Factory, overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(MetricsError, match=message) as error:
        make_trace(**overrides)
    assert "'ep'" in str(error.value)


def test_a_trace_of_an_unknown_benchmark_is_refused_when_scored(make_trace: Factory) -> None:
    # A trace is the metrics' plain record; only the registry knows which benchmarks exist.
    with pytest.raises(MetricsError, match="episode 'ep': benchmark 'habitat' is not one of"):
        score_run([make_trace(benchmark="habitat")])
