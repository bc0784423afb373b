"""The fake AirSim server's packing: its numpy-built float runs and Scene images are the bytes
msgpack wrote for the same values before (``fakes.airsim_server.pack_reply``,
``textured_bgr``), so the wire did not change when the fake got cheaper."""

from __future__ import annotations

import socket
from typing import Any

import msgpack
import numpy as np
import pytest
from fakes.airsim_server import FakeAirSim, pack_reply, textured_bgr

from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.remote.airsim_settings import settings_for_rig
from aerialdojo.sim.remote.airsim_wire import request_bytes

#: Values float32 holds only rounded, negative ones, signed zeros, the smallest subnormal,
#: the largest float32, and the non-finite ones.
AWKWARD = [
    0.1,
    1.0 / 3.0,
    30.1,
    -30.1,
    -1e-3,
    0.0,
    -0.0,
    1.401298464324817e-45,
    3.4028234663852886e38,
    float("inf"),
    float("-inf"),
    float("nan"),
]


def _msgpack_of_floats(reply: Any) -> bytes:
    """How the fake packed a reply before: every float run a list of Python floats."""
    return msgpack.packb(reply, use_bin_type=True, use_single_float=True)


def _depth_response(floats: list[float]) -> dict[str, Any]:
    return {
        "camera_position": {"x_val": 0.25, "y_val": -1.5, "z_val": -30.0},
        "camera_name": "down",
        "time_stamp": 1_764_000_000_123_000_000,
        "image_data_uint8": b"\x00",
        "image_data_float": floats,
        "pixels_as_float": True,
        "width": len(floats),
        "height": 1,
    }


@pytest.mark.parametrize("count", [0, 1, 15, 16, 65535, 65536, 256 * 256 + 1])
def test_a_float_run_is_packed_as_msgpack_packs_its_floats_as_float32(count: int) -> None:
    # Lengths on each side of msgpack's fixarray / array16 / array32 headers.
    values = np.random.default_rng(count).uniform(-400.0, 400.0, count)
    values[: len(AWKWARD)] = AWKWARD[:count]
    floats = values.tolist()
    as_fake = [1, 7, None, [_depth_response(np.asarray(floats, dtype=np.float32))]]
    assert pack_reply(as_fake) == _msgpack_of_floats([1, 7, None, [_depth_response(floats)]])


@pytest.mark.parametrize("depth", [100.0, 69.9, -0.5])
def test_a_depth_image_of_one_value_is_packed_as_before(depth: float) -> None:
    # As the fake builds a 256x256 DepthPlanar run: one double, held as a C++ float.
    image = np.full(256 * 256, depth, np.float32)
    packed = pack_reply({"image_data_float": image})
    assert packed == _msgpack_of_floats({"image_data_float": [depth] * (256 * 256)})
    assert packed[len(b"\x81\xb0image_data_float") :][:5] == b"\xdd\x00\x01\x00\x00"


def test_a_float_run_that_is_not_float32_is_refused() -> None:
    with pytest.raises(TypeError, match="float32"):
        pack_reply([np.zeros(3)])


@pytest.mark.parametrize("width, height", [(256, 256), (256, 144), (7, 5), (1, 1)])
def test_a_scene_image_is_the_flat_colour_with_its_lower_half_textured(
    width: int, height: int
) -> None:
    rgb = (12, 200, 255)
    pixels = np.frombuffer(textured_bgr(rgb, width, height), np.uint8).reshape(height, width, 3)
    bgr = np.array(rgb[::-1], np.uint8)
    assert (pixels[: height // 2] == bgr).all()
    assert (pixels[height // 2 :, 1::2] == bgr).all()
    assert (pixels[height // 2 :, ::2] == 255 - bgr).all()


def _reply_bytes(connection: socket.socket) -> bytes:
    """One whole reply as it came off the wire."""
    received = bytearray()
    unpacker = msgpack.Unpacker(raw=False)
    while True:
        chunk = connection.recv(1 << 20)
        assert chunk, "the fake closed the connection mid-reply"
        received += chunk
        unpacker.feed(chunk)
        for _ in unpacker:
            return bytes(received)


def test_the_fakes_256px_answer_on_the_wire_is_what_msgpack_writes_for_its_values() -> None:
    # The whole simGetImages answer, four views' Scene and DepthPlanar images, read off the
    # socket: unpacked and packed again by msgpack (every float as float32) it must give the
    # same bytes, so no element, header or map order differs from msgpack's.
    rig = aerialdojo_uav_rig(256, 256)
    requests = [
        {
            "camera_name": spec.name,
            "image_type": kind,
            "pixels_as_float": kind == 1,
            "compress": False,
        }
        for spec in rig
        for kind in (0, 1)
    ]
    settings = settings_for_rig(rig)
    with (
        FakeAirSim(settings, ground_down=30.1, render_on_tick=False) as fake,
        socket.create_connection(("127.0.0.1", fake.port), timeout=10.0) as link,
    ):
        link.sendall(request_bytes(3, "simGetImages", [requests, "", False]))
        wire = _reply_bytes(link)
    reply = msgpack.unpackb(wire, raw=False)
    assert reply[:3] == [1, 3, None]
    depths = [image["image_data_float"] for image in reply[3] if image["pixels_as_float"]]
    assert [len(floats) for floats in depths] == [256 * 256] * 4
    assert float(np.float32(30.1)) in {floats[0] for floats in depths}  # the down view
    assert _msgpack_of_floats(reply) == wire
