"""Reading AirSim's simGetImages replies straight into arrays (``sim.remote.airsim_wire``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgpack
import numpy as np
import pytest

from aerialdojo.image_codec import byte_buffer_of, message_array
from aerialdojo.sim.remote.airsim_wire import (
    AirSimRpcError,
    AirSimWireError,
    ImageReplyReader,
    WireImage,
    request_bytes,
    zeroed_bytes,
)
from aerialdojo.sim.remote.images import depth_from_floats, rgb_in_place_of_bgr

SIZE = 64


def _responses(rng: np.random.Generator) -> list[dict[str, Any]]:
    """Four views' Scene and DepthPlanar responses with AirSim's fields."""
    responses = []
    for view in ("front", "left", "right", "down"):
        common = {
            "camera_position": {"x_val": 0.25, "y_val": -1.5, "z_val": -30.0},
            "camera_name": view,
            "camera_orientation": {"w_val": 1.0, "x_val": 0.0, "y_val": 0.0, "z_val": 0.0},
            "time_stamp": 1_764_000_000_123_000_000,
            "message": "",
            "compress": False,
            "width": SIZE,
            "height": SIZE,
        }
        bgr = rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8)
        depth = rng.uniform(0.5, 400.0, SIZE * SIZE)
        depth[::97] = np.round(depth[::97])  # integral values, packed as floats all the same
        responses.append(
            {
                **common,
                "image_data_uint8": bgr.tobytes(),
                "image_data_float": [0.0],
                "pixels_as_float": False,
                "image_type": 0,
            }
        )
        responses.append(
            {
                **common,
                "image_data_uint8": b"\x00",
                "image_data_float": depth.tolist(),
                "pixels_as_float": True,
                "image_type": 1,
            }
        )
    return responses


def _receiver(data: bytes, chunk: int = 1 << 16) -> Callable[[memoryview], int]:
    """``socket.recv_into`` over ``data``, handing out at most ``chunk`` bytes a call."""
    position = 0

    def receive_into(into: memoryview) -> int:
        nonlocal position
        piece = data[position : position + min(len(into), chunk)]
        into[: len(piece)] = piece
        position += len(piece)
        return len(piece)

    return receive_into


def read_image_reply(
    reply: bytes, msgid: int = 7, chunk: int = 1 << 16, allocate: Any = zeroed_bytes
) -> list[WireImage]:
    return ImageReplyReader(_receiver(reply, chunk), allocate).image_reply(msgid)


def _reply(result: Any, *, single_float: bool, msgid: int = 7, error: Any = None) -> bytes:
    return bytes(
        msgpack.packb([1, msgid, error, result], use_bin_type=True, use_single_float=single_float)
    )


def _decoded_as_before(reply: bytes) -> list[tuple[bytes, bytes]]:
    """What the backend made of a reply before: the client's unpacking into Python objects,
    then the float list read into doubles and cast to float32."""
    frames = []
    responses = msgpack.unpackb(reply, raw=False)[3]
    for colour, depth in zip(responses[::2], responses[1::2], strict=True):
        rgb = np.frombuffer(colour["image_data_uint8"], np.uint8).reshape(SIZE, SIZE, 3)
        floats = np.array(depth["image_data_float"], dtype=np.float64).astype(np.float32)
        frames.append((rgb[:, :, ::-1].tobytes(), floats.reshape(SIZE, SIZE).tobytes()))
    return frames


def _decoded(images: list[WireImage]) -> list[tuple[bytes, bytes]]:
    """Each view's RGB and depth bytes, as the backend decodes the images read."""
    return [
        (
            rgb_in_place_of_bgr(
                colour.image_data_uint8, colour.width, colour.height, "c"
            ).tobytes(),
            depth_from_floats(depth.image_data_float, depth.width, depth.height, "d").tobytes(),
        )
        for colour, depth in zip(images[::2], images[1::2], strict=True)
    ]


def _decoded_now(reply: bytes, chunk: int = 1 << 16) -> list[tuple[bytes, bytes]]:
    return _decoded(read_image_reply(reply, chunk=chunk))


@pytest.mark.parametrize("single_float", [True, False], ids=["float32", "float64"])
def test_images_and_depth_are_byte_identical_to_the_clients_decoding(single_float: bool) -> None:
    # float32 elements as rpclib packs a std::vector<float>; float64 as a server of doubles.
    reply = _reply(_responses(np.random.default_rng(3)), single_float=single_float)
    before = _decoded_as_before(reply)
    assert _decoded_now(reply) == before
    # However the bytes arrive.
    assert _decoded_now(reply, chunk=4093) == before


def test_each_payload_stays_in_its_own_message_buffer_from_the_socket_to_the_image() -> None:
    reply = _reply(_responses(np.random.default_rng(9)), single_float=True)
    allocated: list[np.ndarray] = []

    def message_buffer(size: int) -> np.ndarray:
        allocated.append(message_array((size,), np.uint8))
        return allocated[-1]

    images = read_image_reply(reply, chunk=4093, allocate=message_buffer)
    colour, depth = images[0], images[1]
    rgb = rgb_in_place_of_bgr(colour.image_data_uint8, SIZE, SIZE, "c")
    metres = depth_from_floats(depth.image_data_float, SIZE, SIZE, "d")
    # An image message takes each as it is (nodes.images.array_to_image): no copy of its own.
    for array_ in (rgb, metres):
        assert byte_buffer_of(array_) is not None
        assert any(np.shares_memory(array_, buffer) for buffer in allocated)
    assert not np.shares_memory(rgb, metres)
    # Each view's four payloads (a colour image also carries a one-float array, a depth image
    # one byte, as AirSim sends) and nothing else: the reader's own buffers are kept.
    assert len(allocated) == 4 * 4
    assert rgb.tobytes() == _decoded_as_before(reply)[0][0]


def test_one_reader_reads_replies_back_to_back_on_its_stream() -> None:
    # A window filled past one reply's end keeps the next reply's first bytes.
    first = _reply(_responses(np.random.default_rng(10)), single_float=True, msgid=7)
    second = _reply(_responses(np.random.default_rng(11)), single_float=True, msgid=8)
    reader = ImageReplyReader(_receiver(first + second, chunk=1 << 20))
    for reply, msgid in ((first, 7), (second, 8)):
        assert _decoded(reader.image_reply(msgid)) == _decoded_as_before(reply)


def test_the_fields_come_through() -> None:
    reply = _reply(_responses(np.random.default_rng(4)), single_float=True)
    images = read_image_reply(reply)
    assert [(i.camera_name, i.image_type, i.pixels_as_float) for i in images[:2]] == [
        ("front", 0, False),
        ("front", 1, True),
    ]
    assert images[1].time_stamp == 1_764_000_000_123_000_000
    assert (images[1].width, images[1].height) == (SIZE, SIZE)
    assert images[1].image_data_float.dtype == np.float32


def test_mixed_element_types_are_read_value_by_value_with_the_same_rounding() -> None:
    # Values float32 cannot hold, an integer (msgpack-c 6 packs integral floats so), a
    # subnormal, the no-hit infinity; then a float32 run broken by one double.
    values = [0.1, 1.0 / 3.0, 123.456789, 7, 1e-45, float("inf")]
    broken = msgpack.packb([1.5] * 3, use_single_float=True)[:-5] + msgpack.packb(0.1)
    for packed, expected_values in (
        (msgpack.packb(values), values),
        (broken, [1.5, 1.5, 0.1]),
    ):
        response = {**_responses(np.random.default_rng(5))[1], "image_data_float": 0}
        body = msgpack.packb([1, 7, None, [response]], use_bin_type=True)
        reply = body.replace(b"\xb0image_data_float\x00", b"\xb0image_data_float" + packed)
        depth = read_image_reply(reply)[0].image_data_float
        expected = np.fromiter(expected_values, dtype=np.float32, count=len(expected_values))
        assert depth.tobytes() == expected.tobytes()


def test_short_elements_at_the_end_of_a_reply_do_not_make_the_reader_wait_past_it() -> None:
    # A float32 first, then one-byte integers, as the reply's last bytes: reading 5 bytes an
    # element would ask for bytes the server never sends (the receiver here then says EOF).
    response = {**_responses(np.random.default_rng(8))[1]}
    del response["image_data_float"]
    response["image_data_float"] = [1.5] + [7] * 40
    reply = _reply([response], single_float=True)
    depth = read_image_reply(reply)[0].image_data_float
    assert depth.tolist() == [1.5] + [7.0] * 40


def test_a_non_number_in_a_float_array_is_a_named_error() -> None:
    response = {**_responses(np.random.default_rng(6))[1], "image_data_float": [1.0, "x"]}
    with pytest.raises(AirSimWireError, match="a float array holds a non-number"):
        read_image_reply(_reply([response], single_float=True))


def test_an_error_reply_a_stranger_reply_and_a_cut_reply_are_errors() -> None:
    text = "rpclib: function 'simGetImages' (called with 3 arg(s)) threw an exception."
    with pytest.raises(AirSimRpcError, match="threw an exception"):
        read_image_reply(_reply(None, single_float=True, error=text))
    with pytest.raises(AirSimWireError, match="a reply to call 8 while waiting for call 7"):
        read_image_reply(_reply([], single_float=True, msgid=8))
    reply = _reply(_responses(np.random.default_rng(7)), single_float=True)
    with pytest.raises(ConnectionError, match="closed the connection mid-reply"):
        read_image_reply(reply[: len(reply) // 2])
    with pytest.raises(AirSimWireError, match="not an ImageResponse"):
        read_image_reply(_reply([{"width": 1}], single_float=True))
    as_text = {**_responses(np.random.default_rng(7))[0], "image_data_uint8": "BGR"}
    with pytest.raises(AirSimWireError, match="image_data_uint8 is str, not binary"):
        read_image_reply(_reply([as_text], single_float=True))


class _Request:
    """A structure packed through ``to_msgpack``, as airsim's ``MsgpackMixin`` is."""

    def to_msgpack(self) -> dict[str, Any]:
        return {"camera_name": "front", "image_type": 1, "pixels_as_float": True, "compress": False}


def test_a_request_is_packed_as_the_airsim_client_packs_it() -> None:
    packed = request_bytes(3, "simGetImages", [[_Request()], "", False])
    assert msgpack.unpackb(packed, raw=False) == [
        0,
        3,
        "simGetImages",
        [[_Request().to_msgpack()], "", False],
    ]
