"""The renderer's per-pixel shading after the cast, compiled with numba: one pass over a
chunk's pixels instead of about a dozen numpy passes (gathers of colour and ids, window
grid, blend, cast to bytes, sky, interleaving).

Every pixel gets the operations of the numpy shading it replaces, in the same order and in
float32: the gathered colour less the haze colour, times the pixel's haze factor, plus the
haze colour, truncated to a byte. numba compiles without fast-math unless asked, so LLVM
neither reassociates these nor contracts them into a fused multiply-add
(https://numba.readthedocs.io/en/stable/user/performance-tips.html#fastmath), and the
bytes are numpy's: ``tests/unit/sim/test_renderer.py`` holds them against digests. The
window grid's float32 remainder is numpy's formula (``npy_divmodf`` in numpy's
``npy_math_internal.h.src``: ``fmod``, which is exact, then the divisor added to a negative
result, and +0 for a zero one). What numpy computes with its own vectorised transcendental functions
(the haze factor's ``exp``, the water's ``sin``) stays in numpy, in the renderer.

Compiled once per machine and cached beside this file (numba's ``cache=True``), as
``tasks/hybrid_kernel.py`` is; ``nogil`` lets the render threads shade side by side.
"""

# numba compiles positional parameters only (no keyword-only ones): the kernel takes its
# arrays one by one.
# ruff: noqa: PLR0917

from __future__ import annotations

import numpy as np
from numba import njit

from aerialdojo.sim.embedded.world import PATTERN_WINDOWS

# The window grid: storeys 3.2 m high with glass from 30 % to 80 % of each, bays 2.6 m wide
# with glass from 20 % to 80 % of each; glass is the wall's lit colour darkened. float32, as
# numpy took these Python floats against float32 arrays.
_FLOOR = np.float32(3.2)
_BAY = np.float32(2.6)
_FLOOR_LOW, _FLOOR_HIGH = np.float32(0.3), np.float32(0.8)
_BAY_LOW, _BAY_HIGH = np.float32(0.2), np.float32(0.8)
_GLASS_SCALE, _GLASS_ADD = np.float32(0.35), np.float32(20.0)


@njit(cache=True, nogil=True)
def _remainder(value: np.float32, divisor: np.float32) -> np.float32:
    """numpy's float32 ``np.mod`` for a positive divisor."""
    result: np.float32 = np.float32(np.fmod(value, divisor))
    if result < 0:
        result = np.float32(result + divisor)
    elif result == 0:
        result = np.float32(0.0)
    return result


@njit(cache=True, nogil=True)
def _is_glass(
    point_x: np.float32,
    point_y: np.float32,
    point_z: np.float32,
    normal_x: np.float32,
    normal_y: np.float32,
) -> bool:
    """Whether a point on a windowed wall is glass (the wall runs along y when its normal is
    mostly x)."""
    across = point_y if abs(normal_x) > abs(normal_y) else point_x
    floor_phase: np.float32 = _remainder(point_z, _FLOOR) / _FLOOR
    bay_phase: np.float32 = _remainder(across, _BAY) / _BAY
    return bool(
        floor_phase > _FLOOR_LOW
        and floor_phase < _FLOOR_HIGH
        and bay_phase > _BAY_LOW
        and bay_phase < _BAY_HIGH
    )


@njit(cache=True, nogil=True)
def shade_chunk(
    primitive: np.ndarray,
    haze: np.ndarray,
    lit_less_haze: np.ndarray,
    haze_colour: np.ndarray,
    sky: np.ndarray,
    rgb: np.ndarray,
    pattern_table: np.ndarray,
    lit: np.ndarray,
    normals: np.ndarray,
    origin: np.ndarray,
    directions: np.ndarray,
    depth: np.ndarray,
    patterned: np.ndarray,
    instance_table: np.ndarray,
    semantic_table: np.ndarray,
    instance_ids: np.ndarray,
    semantic_ids: np.ndarray,
) -> int:
    """Shade a chunk's pixels into ``rgb`` and their ids into the id images.

    Args:
        primitive: (N,) int32 triangle hit per pixel, -1 for a miss.
        haze: (N,) float32 haze factor per pixel.
        lit_less_haze: (3, T + 1) float32 lit colour less the haze colour per triangle.
        haze_colour: (3,) float32 the haze colour plus 0.5 for rounding.
        sky: (3, N) uint8 what a miss shows.
        rgb: (N, 3) uint8 the frame's pixels, written.
        pattern_table: (T + 1,) uint8 pattern per triangle (0: none).
        lit: (3, T + 1) float32 lit colour per triangle (what window glass darkens).
        normals: (T, 3) float32 unit normal per triangle.
        origin: (3,) float32 the rays' origin; directions: (N, 3) float32 the rays;
            depth: (N,) float32 their hit distances (a window pixel's hit point is
            origin + direction * depth, as numpy computes it).
        patterned: (N,) intp, filled from the start with the positions of the hits on a
            patterned triangle other than windows (water), left for the caller to shade.
        instance_table, semantic_table: (T + 1,) int32 ids per triangle, last a miss's.
        instance_ids, semantic_ids: (N,) int32 written; both empty to skip the ids.

    Returns:
        How many positions ``patterned`` holds.
    """
    count = 0
    miss_row = lit_less_haze.shape[1] - 1
    with_ids = instance_ids.shape[0] > 0
    for pixel in range(primitive.shape[0]):
        face = primitive[pixel]
        if face < 0:
            face = miss_row
            for channel in range(3):
                rgb[pixel, channel] = sky[channel, pixel]
        elif pattern_table[face] == PATTERN_WINDOWS:
            distance = depth[pixel]
            glass = _is_glass(
                origin[0] + directions[pixel, 0] * distance,
                origin[1] + directions[pixel, 1] * distance,
                origin[2] + directions[pixel, 2] * distance,
                normals[face, 0],
                normals[face, 1],
            )
            factor = haze[pixel]
            for channel in range(3):
                if glass:
                    hazed = (lit[channel, face] * _GLASS_SCALE + _GLASS_ADD) - haze_colour[channel]
                else:
                    hazed = lit_less_haze[channel, face]
                rgb[pixel, channel] = np.uint8(hazed * factor + haze_colour[channel])
        elif pattern_table[face] != 0:
            patterned[count] = pixel
            count += 1
        else:
            factor = haze[pixel]
            for channel in range(3):
                rgb[pixel, channel] = np.uint8(
                    lit_less_haze[channel, face] * factor + haze_colour[channel]
                )
        if with_ids:
            instance_ids[pixel] = instance_table[face]
            semantic_ids[pixel] = semantic_table[face]
    return count
