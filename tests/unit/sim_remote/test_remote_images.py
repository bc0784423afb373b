"""Decoding the simulators' image payloads into RGB and metric depth arrays."""

from __future__ import annotations

import numpy as np
import pytest

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.sim.remote.images import (
    depth_from_carla_bgra,
    depth_from_floats,
    rgb_from_carla_bgra,
    rgb_in_place_of_bgr,
)

RGB = np.arange(2 * 3 * 3, dtype=np.uint8).reshape(2, 3, 3)


def test_airsim_scene_bytes_are_bgr_and_become_rgb_in_their_own_buffer() -> None:
    received = np.frombuffer(bytearray(RGB[:, :, ::-1].tobytes()), np.uint8)
    decoded = rgb_in_place_of_bgr(received, 3, 2, "front")
    assert np.array_equal(decoded, RGB) and decoded.flags.c_contiguous
    assert np.shares_memory(decoded, received)
    with pytest.raises(SimulatorFaultError, match=r"front: 17 values for a 2x3x3 image"):
        rgb_in_place_of_bgr(received[:-1], 3, 2, "front")


def test_airsim_depth_floats_keep_their_metres() -> None:
    values = np.array([1.0, 2.5, 3.0, 4.0, 5.0, 1e4], dtype=np.float32)
    depth = depth_from_floats(values, 3, 2, "down")
    assert depth.dtype == np.float32 and depth.shape == (2, 3) and depth[0, 1] == 2.5


def test_airsim_depth_floats_keep_every_bit_like_a_c_cast() -> None:
    # The wire's floats as airsim_wire reads them (rounded to float32 there, see
    # test_airsim_wire.py): a subnormal and the no-hit infinity come through unchanged.
    values = [0.1, 1.0 / 3.0, 123.456789, 7, 1e-45, float("inf")]
    expected = np.fromiter(values, dtype=np.float32, count=len(values))
    depth = depth_from_floats(expected.copy(), 3, 2, "down")
    assert depth.tobytes() == expected.reshape(2, 3).tobytes()
    assert depth.flags.c_contiguous


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
        depth_from_floats(np.ones(5, np.float32), 3, 2, "down")
