"""AGOS episode generation: Table 2's rules and the solvability guarantee always, the rules
AGOS-Bench does not give only when asked for by name."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from aerialdojo.agos.episodes import REGION_SIZE_M, AgosEpisode, load_agos_suite
from aerialdojo.agos.generate import (
    EXTRA_RULES,
    MIN_START_ROUTE_M,
    ExtraRules,
    generate_suite,
    look_alikes,
    same_colour,
    verifying_anchors,
)
from aerialdojo.agos.oracle import TownOracle
from aerialdojo.agos.sensors import uav_rig
from aerialdojo.agos.town import NEUTRAL_COLOURS, Town
from aerialdojo.errors import ConfigError
from aerialdojo.tasks.suite import resolve_suite


def _start_route_m(town: Town, episode: AgosEpisode) -> float:
    roads = town.map.roads
    start = roads.nearest_anchor(episode.ugv_start.x, episode.ugv_start.y)
    reachable = roads.decision_distances(start)
    verifiers = verifying_anchors(town, town.vehicle(episode.target_object_id), 50.0)
    return min(reachable.get(anchor, math.inf) for anchor in verifiers)


def _uav_starts_seeing(town: Town, episode: AgosEpisode) -> bool:
    target = town.vehicle(episode.target_object_id)
    return TownOracle(town.scene).visible_in_views(episode.uav_start, uav_rig(100, 100), target)


def _check_table_2(town: Town, episode: AgosEpisode) -> None:
    region, target = episode.region, town.vehicle(episode.target_object_id)
    size = REGION_SIZE_M[episode.setting]
    assert (region.x_max - region.x_min, region.y_max - region.y_min) == pytest.approx((size, size))
    distractors = look_alikes(town, target, region)
    assert tuple(v.object_id for v in distractors) == episode.distractor_ids
    assert (2 <= len(distractors) <= 3) if episode.setting == "hard" else not distractors
    assert 0.0 < _start_route_m(town, episode) == pytest.approx(episode.reference_length_m)


def test_extra_rules_are_named_options_off_by_default() -> None:
    assert ExtraRules().names == ()
    every = ExtraRules.named(EXTRA_RULES)
    assert every.names == EXTRA_RULES and every.ugv_start_60m_away
    with pytest.raises(ConfigError, match=r"unknown extra rule\(s\) no_red; rules: no_neutral"):
        ExtraRules.named(["no_red"])


def test_the_shipped_suite_follows_table_2_and_none_of_the_extra_rules(town: Town) -> None:
    # agos_mini is `aerialdojo tasks generate --scenes AgosTown_1 --per-setting 2 --seed 0`
    # (tests/unit/tasks/test_tasks_cli.py checks it): Table 2 holds, and episodes the extra
    # rules would have refused are in it.
    suite = load_agos_suite(resolve_suite("agos_mini"))
    assert "extra rules" not in suite.description
    for episode in suite.episodes:
        _check_table_2(town, episode)
    target_colours = [town.vehicle(e.target_object_id).colour for e in suite.episodes]
    assert set(target_colours) & set(NEUTRAL_COLOURS)
    assert min(_start_route_m(town, e) for e in suite.episodes) < MIN_START_ROUTE_M


def test_generation_with_every_extra_rule_applies_each(town: Town, tmp_path: Path) -> None:
    path = generate_suite(
        tmp_path / "strict",
        towns=["AgosTown_1"],
        per_setting=2,
        split="test",
        seed=1,
        name="strict",
        rules=ExtraRules.named(EXTRA_RULES),
    )
    suite = load_agos_suite(path)
    assert suite.description.endswith("; extra rules: " + ", ".join(EXTRA_RULES))
    for episode in suite.episodes:
        _check_table_2(town, episode)
        target = town.vehicle(episode.target_object_id)
        assert target.colour not in NEUTRAL_COLOURS
        if episode.setting != "hard":
            assert not same_colour(town, target, episode.region)
        assert _start_route_m(town, episode) >= MIN_START_ROUTE_M
        assert not _uav_starts_seeing(town, episode)
