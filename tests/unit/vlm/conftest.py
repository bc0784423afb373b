"""Fixtures of the model-agent tests: the fakes package on the path, observations to show."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

TESTS = Path(__file__).resolve().parents[2]
if str(TESTS) not in sys.path:
    sys.path.insert(0, str(TESTS))  # for ``import fakes``

from aerialdojo.agents.observation import AgentObservation, GoalDescription, ViewData  # noqa: E402
from aerialdojo.geometry import Pose  # noqa: E402


def view(size: int = 64, seed: int = 0) -> ViewData:
    rng = np.random.default_rng(seed)
    depth = rng.uniform(1.0, 80.0, (size, size)).astype(np.float32)
    depth[0, :] = np.inf  # sky
    intrinsics = np.array([[size / 2, 0, size / 2], [0, size / 2, size / 2], [0, 0, 1.0]])
    return ViewData(
        rgb=rng.integers(0, 256, (size, size, 3), dtype=np.uint8),
        depth=depth,
        intrinsics=intrinsics,
    )


def observation(
    size: int = 64,
    seed: int = 0,
    views: tuple[str, ...] = ("front",),
    *,
    odometry: bool = False,
) -> AgentObservation:
    """An observation set as the node gives it: the task's views (AerialDojo-200K's
    protocol: the front view) and odometry only where the task gives it."""
    return AgentObservation(
        views={name: view(size, seed + k) for k, name in enumerate(views)},
        odometry=Pose(1.0, 2.0, 3.0, 0.0) if odometry else None,
    )


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
