"""CityNav metrics worked by hand from CityNav, section 3.2 (goal at the origin)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest

from aerialdojo.metrics import citynav
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import score_run


@pytest.fixture
def make_citynav(make_trace: Callable[..., EpisodeTrace]) -> Callable[..., EpisodeTrace]:
    def build(positions: Any, **overrides: Any) -> EpisodeTrace:
        fields: dict[str, Any] = {
            "benchmark": "citynav",
            "scene": "birmingham_block_1",
            "family": "birmingham",
            "setting": "test_unseen",
            "positions": positions,
            "target": (0.0, 0.0, 0.0),
            "reference_length_m": 150.0,
            "action_budget": 200,
        }
        fields.update(overrides)
        return make_trace(**fields)

    return build


@pytest.mark.parametrize(("altitude", "success"), [(20.0, 1.0), (20.0 + 1e-9, 0.0)])
def test_spherical_radius_is_inclusive(
    make_citynav: Callable[..., EpisodeTrace], altitude: float, success: float
) -> None:
    # Descends from 130 m straight above the goal: l = 130 - altitude < L = 150.
    values = citynav.score_episode(make_citynav(((0, 0, 130), (0, 0, altitude)))).values
    assert values == {
        "ne_m": altitude,
        "sr_20m": success,
        "osr_20m": success,
        "spl_20m": success,
    }


def test_distance_is_3d_not_horizontal(make_citynav: Callable[..., EpisodeTrace]) -> None:
    # 15 m away horizontally but 15 m up: 21.2 m, outside the sphere.
    values = citynav.score_episode(make_citynav(((100, 0, 100), (15, 0, 15)))).values
    assert values["ne_m"] == pytest.approx(math.hypot(15.0, 15.0))
    assert (values["sr_20m"], values["osr_20m"]) == (0.0, 0.0)


def test_oracle_success_along_a_passing_segment(make_citynav: Callable[..., EpisodeTrace]) -> None:
    # The move passes (0, 10, 5), 11.2 m from the goal; both ends are over 30 m away.
    trace = make_citynav(((-30, 10, 5), (30, 10, 5), (60, 10, 5)))
    values = citynav.score_episode(trace).values
    assert (values["osr_20m"], values["sr_20m"], values["spl_20m"]) == (1.0, 0.0, 0.0)


def test_final_position_counts_without_an_explicit_stop(
    make_citynav: Callable[..., EpisodeTrace],
) -> None:
    # CityNav scores where the agent stops; running out of budget 5 m away still succeeds.
    # l = 100 + 300 + 105.1 m > L = 150 m, so SPL = 150 / l.
    trace = make_citynav(
        ((0, 300, 5), (0, 200, 5), (0, -100, 5), (0, 5, 0)),
        stop_called=False,
        termination="budget_exhausted",
    )
    values = citynav.score_episode(trace).values
    assert values["sr_20m"] == 1.0
    assert values["spl_20m"] == pytest.approx(150.0 / (100.0 + 300.0 + math.hypot(105.0, 5.0)))


def test_run_pools_episodes_at_the_default_radius(
    make_citynav: Callable[..., EpisodeTrace],
) -> None:
    run = score_run(
        [
            make_citynav(((0, 0, 130), (0, 0, 10)), episode_id="a"),
            make_citynav(((0, 0, 130), (0, 0, 50)), episode_id="b", scene="other", family="x"),
        ]
    )
    assert run.radii == (20.0,)
    assert run.overall.values == run.task_weighted.values
    assert (run.overall.values["sr_20m"], run.overall.values["ne_m"]) == (0.5, 30.0)
