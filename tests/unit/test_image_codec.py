"""Image message conversion and CompressedImage codecs of aerialdojo.transport (no DDS)."""

from __future__ import annotations

import io
import tracemalloc
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from aerialdojo.errors import TransportError
from aerialdojo.transport import (
    DEPTH_FLOAT32_FORMAT,
    DEPTH_MILLIMETRES_FORMAT,
    IMAGE_ENCODINGS,
    array_to_compressed,
    array_to_image,
    compressed_to_array,
    image_to_array,
)


def pixels_for(encoding: str, height: int = 6, width: int = 5, seed: int = 0) -> np.ndarray:
    """Seeded pixels of an encoding's element type and layout."""
    rng = np.random.default_rng(seed)
    dtype, channels = IMAGE_ENCODINGS[encoding]
    shape = (height, width) if channels == 1 else (height, width, channels)
    if dtype.kind == "f":
        return rng.uniform(0.5, 80.0, shape).astype(dtype)
    return rng.integers(0, np.iinfo(dtype).max, shape, endpoint=True).astype(dtype)


def smooth_rgb(height: int = 48, width: int = 64) -> np.ndarray:
    """A gradient picture, the kind JPEG reproduces closely."""
    rows, cols = np.mgrid[0:height, 0:width]
    return np.stack(
        [rows * 255 // height, cols * 255 // width, (rows + cols) * 255 // (height + width)],
        axis=-1,
    ).astype(np.uint8)


@pytest.mark.parametrize("encoding", sorted(IMAGE_ENCODINGS))
def test_image_round_trip_is_exact_for_every_encoding(encoding: str) -> None:
    pixels = pixels_for(encoding)
    message = array_to_image(pixels, encoding, Header(frame_id="front_optical_frame"))

    assert (message.height, message.width, message.encoding) == (6, 5, encoding)
    assert message.step == 5 * pixels.itemsize * (1 if pixels.ndim == 2 else pixels.shape[2])
    assert message.header.frame_id == "front_optical_frame"
    assert len(message.data) == pixels.nbytes
    np.testing.assert_array_equal(image_to_array(message), pixels)


def test_image_owns_its_pixels_and_the_decoded_array_views_the_message() -> None:
    pixels = pixels_for("rgb8")
    message = array_to_image(pixels, "rgb8")
    pixels[0, 0, 0] ^= 0xFF  # the bridge may reuse its render buffer after publishing

    decoded = image_to_array(message)
    assert decoded[0, 0, 0] != pixels[0, 0, 0]
    assert np.shares_memory(decoded, np.frombuffer(message.data, dtype=np.uint8))


def test_single_channel_accepts_a_trailing_axis_and_non_contiguous_input() -> None:
    depth = pixels_for("32FC1", height=8, width=10)
    np.testing.assert_array_equal(
        image_to_array(array_to_image(depth[:, :, np.newaxis], "32FC1")), depth
    )
    flipped = depth[::-1, ::2]
    np.testing.assert_array_equal(image_to_array(array_to_image(flipped, "32FC1")), flipped)


def test_rows_padded_beyond_the_pixels_are_skipped() -> None:
    pixels = pixels_for("rgb8", height=3, width=4)
    padded = np.zeros((3, 16), dtype=np.uint8)  # 12 bytes of pixels, 4 of padding per row
    padded[:, :12] = pixels.reshape(3, 12)
    padded[:, 12:] = 0xAB
    message = Image(height=3, width=4, encoding="rgb8", step=16, data=padded.tobytes())

    np.testing.assert_array_equal(image_to_array(message), pixels)


def test_big_endian_data_reads_as_the_same_values() -> None:
    depth = pixels_for("32FC1", height=4, width=3)
    message = Image(
        height=4,
        width=3,
        encoding="32FC1",
        is_bigendian=1,
        step=12,
        data=depth.astype(">f4").tobytes(),
    )
    np.testing.assert_array_equal(image_to_array(message), depth)

    marked = array_to_image(depth.astype(">f4"), "32FC1")
    assert marked.is_bigendian == 1
    np.testing.assert_array_equal(image_to_array(marked), depth)


def test_rosbags_image_messages_decode_too() -> None:
    typestore = get_typestore(Stores.ROS2_KILTED)
    bag_image = typestore.types["sensor_msgs/msg/Image"]
    header = typestore.types["std_msgs/msg/Header"]
    time = typestore.types["builtin_interfaces/msg/Time"]
    depth = pixels_for("32FC1")
    message: Any = bag_image(  # rosbags builds its message classes at run time
        header=header(stamp=time(sec=1, nanosec=2), frame_id="down_optical_frame"),
        height=6,
        width=5,
        encoding="32FC1",
        is_bigendian=0,
        step=20,
        data=np.frombuffer(depth.tobytes(), dtype=np.uint8),
    )
    np.testing.assert_array_equal(image_to_array(message), depth)


@pytest.mark.parametrize(
    ("pixels", "encoding", "named"),
    [
        (np.zeros((4, 4, 3), np.uint8), "yuv422", "'yuv422'"),
        (np.zeros((4, 4), np.float64), "32FC1", "float64"),
        (np.zeros((4, 4, 3), np.float32), "32FC1", "(4, 4, 3)"),
        (np.zeros((4, 4), np.uint8), "rgb8", "(4, 4)"),
    ],
)
def test_conversion_errors_name_the_offending_value(
    pixels: np.ndarray, encoding: str, named: str
) -> None:
    with pytest.raises(TransportError, match=named.replace("(", r"\(").replace(")", r"\)")):
        array_to_image(pixels, encoding)


def test_a_truncated_message_is_refused() -> None:
    short = Image(height=4, width=4, encoding="mono8", step=4, data=bytes(15))
    with pytest.raises(TransportError, match="15 bytes, 16 needed"):
        image_to_array(short)
    narrow = Image(height=4, width=4, encoding="rgb8", step=8, data=bytes(64))
    with pytest.raises(TransportError, match="step=8"):
        image_to_array(narrow)


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "mono16", "16UC1"])
def test_png_is_lossless(encoding: str) -> None:
    pixels = pixels_for(encoding, height=12, width=9)
    message = array_to_compressed(pixels, encoding, Header(frame_id="left_optical_frame"))

    assert message.format == f"{encoding}; png compressed {encoding}"
    assert message.header.frame_id == "left_optical_frame"
    decoded, decoded_encoding = compressed_to_array(message)
    assert decoded_encoding == encoding
    np.testing.assert_array_equal(decoded, pixels)


def test_png_is_a_standard_file_in_true_colours() -> None:
    rgb = pixels_for("rgb8")
    message = array_to_compressed(rgb[..., ::-1], "bgr8")
    with PILImage.open(io.BytesIO(bytes(message.data))) as picture:
        assert picture.format == "PNG"
        np.testing.assert_array_equal(np.asarray(picture), rgb)


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8"])
def test_jpeg_is_close_and_much_smaller(encoding: str) -> None:
    pixels = smooth_rgb()
    message = array_to_compressed(pixels, encoding, codec="jpeg", jpeg_quality=90)

    assert message.format == f"{encoding}; jpeg compressed {encoding}"
    assert len(message.data) < pixels.nbytes / 5
    decoded, decoded_encoding = compressed_to_array(message)
    assert decoded_encoding == encoding
    assert decoded.shape == pixels.shape
    assert np.abs(decoded.astype(int) - pixels.astype(int)).mean() < 3.0


def test_float32_depth_packing_is_exact_including_no_return() -> None:
    depth = pixels_for("32FC1", height=10, width=7)
    depth[0, 0], depth[1, 1], depth[2, 2] = np.inf, np.nan, 0.0
    message = array_to_compressed(depth, "32FC1")

    assert message.format == DEPTH_FLOAT32_FORMAT
    decoded, encoding = compressed_to_array(message)
    assert encoding == "32FC1"
    assert decoded.dtype == np.float32
    np.testing.assert_array_equal(decoded, depth)  # NaN == NaN for assert_array_equal


def test_millimetre_depth_packing_rounds_to_half_a_millimetre_and_keeps_65_m() -> None:
    depth = np.array(
        [[1.23449, 0.0002, 65.535], [65.536, np.inf, np.nan], [-1.0, 0.0, 12.0]], np.float32
    )
    message = array_to_compressed(depth, "32FC1", depth_packing="millimetres")

    assert message.format == DEPTH_MILLIMETRES_FORMAT
    decoded, _ = compressed_to_array(message)
    np.testing.assert_allclose(decoded[0, 0], 1.234, atol=1e-6)
    assert decoded[0, 1] == pytest.approx(0.001)  # a return closer than 0.5 mm stays a return
    assert decoded[0, 2] == pytest.approx(65.535)
    assert decoded[2, 2] == pytest.approx(12.0)
    # Beyond range, no return, invalid and non-positive depths all read back as no return.
    assert np.isposinf(
        [decoded[1, 0], decoded[1, 1], decoded[1, 2], decoded[2, 0], decoded[2, 1]]
    ).all()
    with PILImage.open(io.BytesIO(bytes(message.data))) as picture:
        assert picture.mode == "I;16"


def test_plain_formats_from_other_tools_are_read() -> None:
    rgb = pixels_for("rgb8")
    buffer = io.BytesIO()
    PILImage.fromarray(rgb).save(buffer, format="PNG")
    decoded, encoding = compressed_to_array(CompressedImage(format="png", data=buffer.getvalue()))
    assert encoding == "rgb8"
    np.testing.assert_array_equal(decoded, rgb)


@pytest.mark.parametrize(
    ("pixels", "encoding", "options", "named"),
    [
        (np.zeros((4, 4), np.float32), "32FC1", {"codec": "jpeg"}, "'jpeg'"),
        (np.zeros((4, 4, 4), np.uint8), "rgba8", {"codec": "jpeg"}, "rgba8"),
        (np.zeros((4, 4), np.float32), "32FC1", {"depth_packing": "half"}, "'half'"),
        (np.zeros((4, 4, 3), np.uint8), "rgb8", {"codec": "jpeg", "jpeg_quality": 0}, "=0"),
        (np.zeros((4, 4, 3), np.uint8), "rgb8", {"codec": "webp"}, "'webp'"),
        (np.zeros((4, 4, 3), np.uint8), "8UC3", {}, "'8UC3'"),
    ],
)
def test_compression_errors_name_the_offending_value(
    pixels: np.ndarray, encoding: str, options: dict[str, object], named: str
) -> None:
    with pytest.raises(TransportError, match=named):
        array_to_compressed(pixels, encoding, **options)  # type: ignore[arg-type]


def test_unknown_or_corrupt_compressed_images_are_refused() -> None:
    png = array_to_compressed(pixels_for("mono8"), "mono8")
    with pytest.raises(TransportError, match="'mono8; tiff compressed mono8'"):
        compressed_to_array(CompressedImage(format="mono8; tiff compressed mono8", data=png.data))
    with pytest.raises(TransportError, match="unreadable image"):
        compressed_to_array(CompressedImage(format=DEPTH_FLOAT32_FORMAT, data=b"not a png"))
    with pytest.raises(TransportError, match="needs an RGBA png, got mode L"):
        compressed_to_array(CompressedImage(format=DEPTH_FLOAT32_FORMAT, data=png.data))


def test_a_full_size_image_costs_one_copy_of_its_pixels() -> None:
    rgb = pixels_for("rgb8", height=640, width=640)
    array_to_image(rgb[:1, :1], "rgb8")  # a first message may load its type support
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        message = array_to_image(rgb, "rgb8")
        allocated = tracemalloc.get_traced_memory()[1] - before
    finally:
        tracemalloc.stop()
    assert rgb.nbytes <= allocated < 1.2 * rgb.nbytes  # the array's growth slack, no second copy
    np.testing.assert_array_equal(image_to_array(message), rgb)
