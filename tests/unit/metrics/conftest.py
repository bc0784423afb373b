"""Builders of episode traces for the metrics tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from aerialdojo.metrics.trace import EpisodeTrace

TraceFactory = Callable[..., EpisodeTrace]


@pytest.fixture
def make_trace() -> TraceFactory:
    """An AerialDojo trace with anchor (0, 0, 10) that stops 1 m away; override any field."""

    def build(**overrides: Any) -> EpisodeTrace:
        fields: dict[str, Any] = {
            "episode_id": "ep",
            "benchmark": "aerialdojo",
            "scene": "Mall_0",
            "family": "urban",
            "setting": "base",
            "split": "test",
            "positions": ((10.0, 0.0, 10.0), (5.0, 0.0, 10.0), (1.0, 0.0, 10.0)),
            "stop_called": True,
            "collided": False,
            "collision_step": None,
            "steps_used": 3,
            "action_budget": 90,
            "target": (0.0, 0.0, 10.0),
            "reference_length_m": 12.0,
            "termination": "stopped",
        }
        fields.update(overrides)
        return EpisodeTrace(**fields)

    return build
