"""Observation sets for the model-agent tests, as the agent node gives them. A module of its
own, not the conftest, so that a test imports it by a name no other test directory has."""

from __future__ import annotations

import numpy as np

from aerialdojo.agents.observation import AgentObservation, ViewData
from aerialdojo.geometry import Pose


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
