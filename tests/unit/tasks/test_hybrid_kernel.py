"""The compiled Hybrid A* loop computes its heuristic with the very floats numpy computes:
equal routes at ties need equal bits, not merely close values."""

from __future__ import annotations

import math

import numpy as np

from aerialdojo.tasks import hybrid_kernel as kernel


def test_the_polygonal_metric_is_numpys_bit_for_bit() -> None:
    rng = np.random.default_rng(30)
    params = np.zeros(kernel.PARAMS)
    half = math.radians(15.0) / 2.0
    params[kernel.HALF_STEP], params[kernel.COS_HALF_STEP] = half, math.cos(half)
    mismatches = 0
    for _ in range(20):
        goal = rng.uniform(-300.0, 300.0, 3)
        params[kernel.GOAL : kernel.GOAL + 3] = goal
        params[kernel.START_YAW] = rng.uniform(-math.pi, math.pi)
        # Offsets from a millimetre to a hundred metres, some straight along an axis.
        positions = goal + rng.normal(size=(1000, 3)) * 10.0 ** rng.uniform(-3.0, 2.0, (1000, 1))
        positions[:50, 0] = goal[0]
        positions[50:100, 1] = goal[1]
        delta = goal - positions
        past = np.arctan2(delta[:, 1], delta[:, 0])
        past -= params[kernel.START_YAW]
        np.mod(past, 2.0 * half, out=past)
        past -= half
        polygonal = np.cos(past) * np.hypot(delta[:, 0], delta[:, 1]) / math.cos(half)
        for row, (x, y, z) in enumerate(positions.tolist()):
            compiled = kernel._metric(params, x, y, z)
            mismatches += compiled != (polygonal[row], abs(delta[row, 2]))
    assert mismatches == 0
