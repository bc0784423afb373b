"""Fixtures of the model-agent tests: the fakes package on the path, a goal to seek."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # for ``import fakes``

from aerialdojo.agents.observation import GoalDescription  # noqa: E402


@pytest.fixture
def goal() -> GoalDescription:
    return GoalDescription(
        object_name="red pickup truck",
        landmark_name="water tower",
        direction="northeast",
        description="a red pickup truck parked beside the water tower",
        action_budget=90,
        success_radius_m=3.0,
        episode_id="ep-1",
    )
