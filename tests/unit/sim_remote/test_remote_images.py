"""Decoding the simulators' image payloads into RGB and metric depth arrays."""

from __future__ import annotations

import numpy as np
import pytest

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.sim.remote.images import (
    depth_from_carla_bgra,
    depth_from_floats,
    depth_from_projectairsim,
    rgb_from_bgr_bytes,
    rgb_from_carla_bgra,
    rgb_from_projectairsim,
)

RGB = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)


def test_airsim_scene_bytes_are_bgr() -> None:
    decoded = rgb_from_bgr_bytes(RGB[:, :, ::-1].tobytes(), 3, 2, "front")
    assert np.array_equal(decoded, RGB) and decoded.flags.c_contiguous
    with pytest.raises(SimulatorFaultError, match=r"front: 17 values for a 2x3x3 image"):
        rgb_from_bgr_bytes(RGB.tobytes()[:-1], 3, 2, "front")


def test_airsim_depth_floats_keep_their_metres() -> None:
    depth = depth_from_floats([1.0, 2.5, 3.0, 4.0, 5.0, 1e4], 3, 2, "down")
    assert depth.dtype == np.float32 and depth.shape == (2, 3) and depth[0, 1] == 2.5


def test_projectairsim_colour_in_both_orders_and_as_byte_lists() -> None:
    bgr = {"encoding": "BGR", "height": 2, "width": 3, "data": RGB[:, :, ::-1].tobytes()}
    assert np.array_equal(rgb_from_projectairsim(bgr, "v"), RGB)
    rgb_list = {"encoding": "RGB", "height": 2, "width": 3, "data": list(RGB.tobytes())}
    assert np.array_equal(rgb_from_projectairsim(rgb_list, "v"), RGB)
    with pytest.raises(SimulatorFaultError, match="unsupported colour encoding 'PNG'"):
        rgb_from_projectairsim({**bgr, "encoding": "PNG"}, "v")


def test_projectairsim_half_float_depth_with_no_hit_as_infinity() -> None:
    depth = np.array([[1.5, np.inf, 0.0], [0.25, 30.0, 100.0]], dtype="<f2")
    message = {"encoding": "16FC1", "height": 2, "width": 3, "data": depth.tobytes()}
    decoded = depth_from_projectairsim(message, "down")
    assert decoded.dtype == np.float32
    assert decoded[0, 0] == 1.5 and np.isinf(decoded[0, 1]) and np.isinf(decoded[0, 2])
    assert decoded[1, 1] == 30.0
    with pytest.raises(SimulatorFaultError, match=r"down: 10 bytes for a 3x2 16FC1 image"):
        depth_from_projectairsim({**message, "data": depth.tobytes()[:10]}, "down")


def test_projectairsim_public_depth_is_floats_in_data_float() -> None:
    # The public server: 32FC1 floats in data_float, data empty (ImagePackingAsyncTask.cpp);
    # 65504 is where the half-float depth target saturates.
    floats = [2.0, 0.0, 65504.0, 7.5, 1.0, 3.0]
    message = {"encoding": "32FC1", "height": 2, "width": 3, "data": b"", "data_float": floats}
    decoded = depth_from_projectairsim(message, "down")
    assert decoded.dtype == np.float32 and decoded.shape == (2, 3)
    assert decoded[0, 0] == 2.0 and decoded[1, 0] == 7.5
    assert np.isinf(decoded[0, 1]) and np.isinf(decoded[0, 2])
    as_bytes = {**message, "data": np.asarray(floats, "<f4").tobytes(), "data_float": []}
    assert np.array_equal(depth_from_projectairsim(as_bytes, "down"), decoded)
    with pytest.raises(SimulatorFaultError, match=r"down: 5 values for a 2x3 image"):
        depth_from_projectairsim({**message, "data_float": floats[:5]}, "down")


def test_carla_bgra_colour_and_24_bit_depth() -> None:
    bgra = np.zeros((2, 3, 4), dtype=np.uint8)
    bgra[:, :, :3] = RGB[:, :, ::-1]
    assert np.array_equal(rgb_from_carla_bgra(bgra.tobytes(), 3, 2, "front"), RGB)
    code = round(12.5 / 1000.0 * (256**3 - 1))
    depth = np.zeros((1, 2, 4), dtype=np.uint8)
    depth[0, 0, 2], depth[0, 0, 1], depth[0, 0, 0] = code % 256, code // 256 % 256, code // 65536
    depth[0, 1, :3] = 255  # the far plane
    decoded = depth_from_carla_bgra(depth.tobytes(), 2, 1, "front")
    assert decoded[0, 0] == pytest.approx(12.5, abs=1e-4) and np.isinf(decoded[0, 1])


def test_a_float_list_of_the_wrong_length_is_a_fault() -> None:
    with pytest.raises(SimulatorFaultError, match=r"down: 5 values for a 2x3 image \(6 expected\)"):
        depth_from_floats([1.0] * 5, 3, 2, "down")
