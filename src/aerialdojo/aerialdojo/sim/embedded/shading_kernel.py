"""The renderer's per-pixel shading after the cast, compiled with numba: one pass over a
chunk's pixels instead of about a dozen numpy passes (gathers of colour and ids, blend,
cast to bytes, sky, interleaving).

Every pixel gets the operations of the numpy shading it replaces, in the same order and in
float32: the gathered colour less the haze colour, times the pixel's haze factor, plus the
haze colour, truncated to a byte. numba compiles without fast-math unless asked, so LLVM
neither reassociates these nor contracts them into a fused multiply-add
(https://numba.readthedocs.io/en/stable/user/performance-tips.html#fastmath), and the
bytes are numpy's: ``tests/unit/sim/test_renderer.py`` holds them against digests. What
numpy computes with its own vectorised transcendental functions (the haze factor's ``exp``,
the water's ``sin``) stays in numpy, in the renderer.

Compiled once per machine and cached beside this file (numba's ``cache=True``), as
``tasks/hybrid_kernel.py`` is; ``nogil`` lets the render threads shade side by side.
"""

# numba compiles positional parameters only (no keyword-only ones): the kernel takes its
# arrays one by one.
# ruff: noqa: PLR0917

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True, nogil=True)
def shade_chunk(
    primitive: np.ndarray,
    haze: np.ndarray,
    lit_less_haze: np.ndarray,
    haze_colour: np.ndarray,
    sky: np.ndarray,
    rgb: np.ndarray,
    pattern_table: np.ndarray,
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
        patterned: (N,) intp, filled from the start with the positions of the hits on a
            patterned triangle, which are left for the caller to shade.
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
