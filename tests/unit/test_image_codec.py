"""The ROS-free image codec: pixels to and from image message fields and compressed files,
read back through rosbags' message classes (no ROS installation needed)."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from PIL import Image as PILImage
from rosbags.typesys import Stores, get_typestore

from aerialdojo.errors import TransportError
from aerialdojo.image_codec import (
    DEPTH_FLOAT32_FORMAT,
    DEPTH_MILLIMETRES_FORMAT,
    IMAGE_ENCODINGS,
    byte_buffer_of,
    compress,
    compressed_to_array,
    image_fields,
    image_to_array,
    message_array,
)

TYPES = get_typestore(Stores.ROS2_JAZZY).types
# rosbags builds its message classes at run time.
Image: Any = TYPES["sensor_msgs/msg/Image"]
CompressedImage: Any = TYPES["sensor_msgs/msg/CompressedImage"]
Header: Any = TYPES["std_msgs/msg/Header"]
Time: Any = TYPES["builtin_interfaces/msg/Time"]


def _bytes(data: Any) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype=np.uint8)


def array_to_image(pixels: np.ndarray, encoding: str) -> Any:
    """A rosbags Image of ``pixels``, the fields as the codec gives them."""
    fields = image_fields(pixels, encoding)
    return Image(
        header=Header(stamp=Time(sec=1, nanosec=2), frame_id="front_optical_frame"),
        height=fields.height,
        width=fields.width,
        encoding=fields.encoding,
        is_bigendian=fields.is_bigendian,
        step=fields.step,
        data=_bytes(fields.data),
    )


def raw_image(*, is_bigendian: int = 0, **fields: Any) -> Any:
    """A rosbags Image with the given fields, as another tool might write one."""
    data = _bytes(fields.pop("data"))
    return Image(
        header=Header(stamp=Time(sec=0, nanosec=0), frame_id=""),
        is_bigendian=is_bigendian,
        data=data,
        **fields,
    )


def compressed(image_format: str, data: Any) -> Any:
    return CompressedImage(
        header=Header(stamp=Time(sec=0, nanosec=0), frame_id=""),
        format=image_format,
        data=_bytes(data),
    )


def array_to_compressed(pixels: np.ndarray, encoding: str, **options: Any) -> Any:
    return compressed(*compress(pixels, encoding, **options))


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
    message = array_to_image(pixels, encoding)

    assert (message.height, message.width, message.encoding) == (6, 5, encoding)
    assert message.step == 5 * pixels.itemsize * (1 if pixels.ndim == 2 else pixels.shape[2])
    assert len(message.data) == pixels.nbytes
    np.testing.assert_array_equal(image_to_array(message), pixels)


def test_fields_view_contiguous_pixels_and_the_decoded_array_views_the_message() -> None:
    pixels = pixels_for("rgb8")
    assert np.shares_memory(np.frombuffer(image_fields(pixels, "rgb8").data, np.uint8), pixels)
    message = array_to_image(pixels, "rgb8")
    decoded = image_to_array(message)
    assert np.shares_memory(decoded, message.data)


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
    message = raw_image(height=3, width=4, encoding="rgb8", step=16, data=padded.tobytes())

    np.testing.assert_array_equal(image_to_array(message), pixels)


def test_big_endian_data_reads_as_the_same_values() -> None:
    depth = pixels_for("32FC1", height=4, width=3)
    message = raw_image(
        height=4, width=3, encoding="32FC1", is_bigendian=1, step=12, data=depth.astype(">f4")
    )
    np.testing.assert_array_equal(image_to_array(message), depth)

    marked = array_to_image(depth.astype(">f4"), "32FC1")
    assert marked.is_bigendian == 1
    np.testing.assert_array_equal(image_to_array(marked), depth)


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
        image_fields(pixels, encoding)


def test_a_truncated_message_is_refused() -> None:
    short = raw_image(height=4, width=4, encoding="mono8", step=4, data=bytes(15))
    with pytest.raises(TransportError, match="15 bytes, 16 needed"):
        image_to_array(short)
    narrow = raw_image(height=4, width=4, encoding="rgb8", step=8, data=bytes(64))
    with pytest.raises(TransportError, match="step=8"):
        image_to_array(narrow)


@pytest.mark.parametrize("encoding", ["rgb8", "bgr8", "rgba8", "bgra8", "mono8", "mono16", "16UC1"])
def test_png_is_lossless(encoding: str) -> None:
    pixels = pixels_for(encoding, height=12, width=9)
    message = array_to_compressed(pixels, encoding)

    assert message.format == f"{encoding}; png compressed {encoding}"
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
    decoded, encoding = compressed_to_array(compressed("png", buffer.getvalue()))
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
        compressed_to_array(compressed("mono8; tiff compressed mono8", png.data))
    with pytest.raises(TransportError, match="unreadable image"):
        compressed_to_array(compressed(DEPTH_FLOAT32_FORMAT, b"not a png"))
    with pytest.raises(TransportError, match="needs an RGBA png, got mode L"):
        compressed_to_array(compressed(DEPTH_FLOAT32_FORMAT, png.data))


def test_a_message_array_is_the_whole_of_its_byte_buffer() -> None:
    depth = message_array((3, 4), np.float32)
    assert depth.dtype == np.float32 and depth.shape == (3, 4) and not depth.any()
    buffer = byte_buffer_of(depth)
    assert buffer is not None and len(buffer) == depth.nbytes
    depth[1, 2] = 5.0
    assert np.frombuffer(buffer, np.float32)[6] == 5.0
    assert byte_buffer_of(depth[1:]) is None  # part of it: a message must copy
    assert byte_buffer_of(depth.T) is None  # not in order
    assert byte_buffer_of(np.zeros((3, 4), np.float32)) is None
