"""The model agent's image encoding: PNGs that a standard decoder reads back exactly."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from aerialdojo.agents.vlm.images import depth_to_grey, encode_depth, encode_rgb, png_bytes


@pytest.mark.parametrize("shape", [(1, 1), (1, 5, 3), (7, 1), (33, 17, 3), (256, 320, 3)])
def test_png_decodes_to_the_same_pixels(shape: tuple[int, ...]) -> None:
    # Random bytes make every row differ from the one above by every value, so the Up
    # filter's differences wrap modulo 256 both ways.
    pixels = np.random.default_rng(len(shape)).integers(0, 256, shape, dtype=np.uint8)
    decoded = Image.open(io.BytesIO(png_bytes(pixels)))
    assert decoded.mode == ("RGB" if len(shape) == 3 else "L")
    np.testing.assert_array_equal(np.asarray(decoded), pixels)


def test_views_are_sent_as_png_data_urls_the_decoder_reads() -> None:
    rgb = np.zeros((48, 64, 3), dtype=np.uint8)
    rgb[10:20, 5:50] = (200, 30, 90)
    depth = np.full((48, 64), 12.5, dtype=np.float32)
    depth[:8] = np.inf
    for image, expected in (
        (encode_rgb(rgb), rgb),
        (encode_depth(depth, 50.0), depth_to_grey(depth, 50.0)),
    ):
        header, _, payload = image.data_url().partition(",")
        assert header == "data:image/png;base64"
        decoded = np.asarray(Image.open(io.BytesIO(base64.b64decode(payload))))
        np.testing.assert_array_equal(decoded, expected)


def test_depth_grey_is_near_bright_far_and_sky_black() -> None:
    depth = np.array([[0.0, 25.0, 50.0, 80.0, np.inf, np.nan]], dtype=np.float32)
    np.testing.assert_array_equal(depth_to_grey(depth, 50.0), [[255, 128, 0, 0, 0, 0]])
