"""Settings, the paper's candidate filters, and split assignment."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from aerialdojo.tasks.settings import (
    SETTINGS,
    SPLIT_PERCENTAGES,
    assign_splits,
    filter_problems,
    legal_splits,
    setting_for_length,
)


@pytest.mark.parametrize(
    ("length_m", "expected"),
    [
        (4.999, None),
        (5.0, "base"),
        (29.999, "base"),
        (30.0, "standard"),
        (59.999, "standard"),
        (60.0, "long_horizon"),
        (99.999, "long_horizon"),
        (100.0, None),
    ],
)
def test_settings_are_half_open_length_ranges(length_m: float, expected: str | None) -> None:
    setting = setting_for_length(length_m)
    assert (setting.name if setting else None) == expected


def test_budgets_are_the_seeds_and_long_horizon_keeps_three_actions_per_metre() -> None:
    budgets = {setting.name: setting.action_budget for setting in SETTINGS}
    assert budgets == {"base": 90, "standard": 180, "long_horizon": 300}
    for setting in SETTINGS:
        assert setting.action_budget == 3 * setting.max_length_m


def test_filters_follow_the_seed() -> None:
    assert filter_problems(10.0, 9.0) == []
    assert filter_problems(10.0, 3.0) != []  # d_E must exceed 3 m
    assert filter_problems(4.9, 4.0) != []  # L below 5 m
    assert filter_problems(100.0, 50.0) != []  # L reaches 100 m
    assert filter_problems(10.4, 10.0) != []  # kappa 1.04
    assert filter_problems(10.5, 10.0) == []  # kappa exactly 1.05 is kept


def test_split_names_per_distribution() -> None:
    assert legal_splits("id") == ("train", "test")
    assert legal_splits("ood") == ("adaptation", "test")


@pytest.mark.parametrize("distribution", ["id", "ood"])
def test_splits_are_within_half_a_task_per_scene_and_one_per_setting(distribution: str) -> None:
    (first, percent), _ = SPLIT_PERCENTAGES[distribution]
    rng = random.Random(7)
    for trial in range(300):
        settings = [
            rng.choice(["base", "standard", "long_horizon"]) for _ in range(rng.randrange(1, 60))
        ]
        splits = assign_splits(settings, distribution, seed=trial)
        assert set(splits) <= set(legal_splits(distribution))
        assert abs(splits.count(first) - percent * len(settings) / 100) <= 0.5
        for name, count in Counter(settings).items():
            chosen = sum(
                1 for s, split in zip(settings, splits, strict=True) if s == name and split == first
            )
            assert abs(chosen - percent * count / 100) < 1.0


def test_splits_are_seeded() -> None:
    settings = ["base"] * 30
    assert assign_splits(settings, "id", seed=1) == assign_splits(settings, "id", seed=1)
    assert assign_splits(settings, "id", seed=1) != assign_splits(settings, "id", seed=2)


def test_unknown_distribution_is_refused() -> None:
    with pytest.raises(KeyError):
        assign_splits(["base"], "weird", seed=0)
