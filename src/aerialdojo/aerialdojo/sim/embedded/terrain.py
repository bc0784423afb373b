"""Smooth random height fields and terrain colourings for scene generators."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aerialdojo.sim.embedded.builder import ColourFunction, HeightFunction


def waves(
    rng: np.random.Generator, amplitude: float, wavelength: float, count: int = 6
) -> HeightFunction:
    """A sum of ``count`` plane waves in random directions: gentle, seamless relief."""
    angles = rng.uniform(0.0, math.pi, count)
    phases = rng.uniform(0.0, 2.0 * math.pi, count)
    lengths = wavelength * rng.uniform(0.6, 1.4, count)
    weights = amplitude * rng.uniform(0.5, 1.0, count) / math.sqrt(count)

    def height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        total = np.zeros(np.shape(x))
        for angle, phase, length, weight in zip(angles, phases, lengths, weights, strict=True):
            along = x * math.cos(angle) + y * math.sin(angle)
            total += weight * np.sin(2.0 * math.pi * along / length + phase)
        return total

    return height


def flat(level: float = 0.0) -> HeightFunction:
    """Level ground."""

    def height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.full(np.shape(x), level, dtype=np.float64)

    return height


def combine(*parts: HeightFunction) -> HeightFunction:
    """The sum of several height functions."""

    def height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return np.asarray(np.sum([part(x, y) for part in parts], axis=0))

    return height


def bump(cx: float, cy: float, radius: float, peak: float) -> HeightFunction:
    """A smooth hill (negative ``peak``: a crater or basin) of ``radius`` at ``cx``, ``cy``."""

    def height(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return peak * np.exp(-((x - cx) ** 2 + (y - cy) ** 2) / (radius * radius))

    return height


def speckled(rng: np.random.Generator, base: Sequence[int], spread: float = 14.0) -> ColourFunction:
    """One colour with per-triangle brightness noise (grass, sand, asphalt)."""
    colour = np.asarray(base, dtype=np.float64)
    seed = int(rng.integers(1 << 31))

    def paint(centres: np.ndarray, normal_z: np.ndarray) -> np.ndarray:
        noise = np.random.default_rng(seed).normal(0.0, spread, (len(centres), 1))
        return colour + noise

    return paint


def by_height_and_slope(
    rng: np.random.Generator,
    bands: Sequence[tuple[float, Sequence[int]]],
    steep: Sequence[int] | None = None,
    spread: float = 10.0,
) -> ColourFunction:
    """Colour by altitude bands ``(upper_height, colour)`` (the last band catches the rest),
    with rock colour ``steep`` on slopes steeper than about 35 degrees."""
    seed = int(rng.integers(1 << 31))
    limits = np.array([limit for limit, _ in bands])
    palette = np.array([colour for _, colour in bands], dtype=np.float64)

    def paint(centres: np.ndarray, normal_z: np.ndarray) -> np.ndarray:
        band = np.minimum(np.searchsorted(limits, centres[:, 2]), len(palette) - 1)
        colours = palette[band]
        if steep is not None:
            colours = np.where(
                (normal_z < 0.82)[:, None], np.asarray(steep, dtype=np.float64), colours
            )
        return colours + np.random.default_rng(seed).normal(0.0, spread, (len(centres), 1))

    return paint
