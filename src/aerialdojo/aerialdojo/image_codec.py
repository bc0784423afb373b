"""Image pixels to and from the bytes of ROS image messages and compressed image files,
ROS-free: it reads any object with ``sensor_msgs/Image`` or ``CompressedImage`` fields (rclpy
messages, rosbags dataclasses) and returns arrays and bytes, so its tests need no ROS. The
messages themselves are built in ``nodes.images``."""

from __future__ import annotations

import array
import io
import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, Protocol

import numpy as np
from PIL import Image as PILImage

from aerialdojo.errors import TransportError

DEPTH_FLOAT32_FORMAT: Final = "32FC1; aerialdojo png float32"
DEPTH_MILLIMETRES_FORMAT: Final = "32FC1; aerialdojo png 16UC1 mm"

#: sensor_msgs/Image encodings these helpers convert: encoding -> (element type, channels).
IMAGE_ENCODINGS: Final[Mapping[str, tuple[np.dtype[Any], int]]] = {
    "rgb8": (np.dtype(np.uint8), 3),
    "bgr8": (np.dtype(np.uint8), 3),
    "rgba8": (np.dtype(np.uint8), 4),
    "bgra8": (np.dtype(np.uint8), 4),
    "mono8": (np.dtype(np.uint8), 1),
    "mono16": (np.dtype(np.uint16), 1),
    "8UC1": (np.dtype(np.uint8), 1),
    "8UC3": (np.dtype(np.uint8), 3),
    "8UC4": (np.dtype(np.uint8), 4),
    "16UC1": (np.dtype(np.uint16), 1),
    "32FC1": (np.dtype(np.float32), 1),
}

# Encodings Pillow writes as PNG/JPEG directly, and the channel order to hand it.
_PILLOW_ENCODINGS: Final = {
    "rgb8": ("RGB", None),
    "bgr8": ("RGB", slice(None, None, -1)),
    "rgba8": ("RGBA", None),
    "bgra8": ("RGBA", [2, 1, 0, 3]),
    "mono8": ("L", None),
    "8UC1": ("L", None),
    "mono16": ("I;16", None),
    "16UC1": ("I;16", None),
}
_JPEG_MODES: Final = ("RGB", "L")
_MILLIMETRES_MAX: Final = 65535

ImageCodec = Literal["png", "jpeg"]
DepthPacking = Literal["float32", "millimetres"]


class ImageLike(Protocol):
    """What ``image_to_array`` reads: a sensor_msgs/Image from rclpy or from a rosbags reader."""

    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: Any


@dataclass(frozen=True)
class ImageFields:
    """The ``sensor_msgs/Image`` fields of an array's pixels; ``data`` views the pixels of a
    C-contiguous copy (the array itself when it already is one)."""

    height: int
    width: int
    encoding: str
    is_bigendian: int
    step: int
    data: memoryview


def message_array(shape: tuple[int, ...], dtype: np.dtype[Any] | type) -> np.ndarray:
    """A zeroed array whose memory is an ``array('B')``: an image message takes that buffer as
    its data as it is (``nodes.images.array_to_image``), so a renderer that writes its pixels
    here hands them to DDS without a copy of its own."""
    element = np.dtype(dtype)
    buffer = array.array("B", b"\0") * (math.prod(shape) * element.itemsize)
    return np.frombuffer(buffer, dtype=element).reshape(shape)


def byte_buffer_of(array_: np.ndarray) -> array.array[int] | None:
    """The ``array('B')`` whose whole memory ``array_`` is, in order (``message_array``), or
    None: then a message must copy the pixels."""
    owner: Any = array_
    while isinstance(owner, np.ndarray):
        owner = owner.base
    if isinstance(owner, memoryview):  # np.frombuffer's base
        owner = owner.obj
    if not (isinstance(owner, array.array) and owner.typecode == "B"):
        return None
    if not array_.flags.c_contiguous or array_.nbytes != len(owner):
        return None
    if array_.__array_interface__["data"][0] != owner.buffer_info()[0]:
        return None
    return owner


def image_fields(array_: np.ndarray, encoding: str) -> ImageFields:
    """What a ``sensor_msgs/Image`` of ``array_`` holds, without copying contiguous pixels.

    Args:
        array_: HxW (or HxWx1) for one channel, HxWxC otherwise, of the encoding's element type
            (``IMAGE_ENCODINGS``); big-endian element types are marked ``is_bigendian``.
        encoding: a key of ``IMAGE_ENCODINGS``, e.g. ``"rgb8"`` or ``"32FC1"``.

    Raises:
        TransportError: unknown encoding, or an element type or shape that does not fit it.
    """
    dtype, channels, height, width = pixel_layout(array_, encoding)
    big_endian = array_.dtype.byteorder == ">" or (
        array_.dtype.byteorder == "=" and sys.byteorder == "big"
    )
    return ImageFields(
        height=height,
        width=width,
        encoding=encoding,
        is_bigendian=int(big_endian),
        step=width * channels * dtype.itemsize,
        data=np.ascontiguousarray(array_).data.cast("B"),
    )


def image_to_array(message: ImageLike) -> np.ndarray:
    """The pixels of an image message as an HxW or HxWxC array viewing ``message.data``.

    No pixel is copied: the result shares memory with the message (writing to it changes the
    message) and keeps the message's buffer alive. Row padding (``step`` wider than a row) and
    big-endian data are handled by the view's strides and byte order.

    Args:
        message: a sensor_msgs/Image from rclpy or rosbags (``data`` any bytes-like buffer).

    Raises:
        TransportError: unknown encoding, or ``step``/``data`` too short for the image size.
    """
    dtype, channels = encoding_layout(message.encoding)
    dtype = dtype.newbyteorder(">" if message.is_bigendian else "<")
    row_bytes = message.width * channels * dtype.itemsize
    if message.step < row_bytes:
        raise TransportError(
            f"{message.encoding} image {message.width}x{message.height}: step={message.step} "
            f"is shorter than a row of {row_bytes} bytes"
        )
    buffer = np.frombuffer(message.data, dtype=np.uint8)
    needed = message.step * message.height
    if buffer.size < needed:
        raise TransportError(
            f"{message.encoding} image {message.width}x{message.height} (step {message.step}): "
            f"data holds {buffer.size} bytes, {needed} needed"
        )
    rows = buffer[:needed].reshape(message.height, message.step)[:, :row_bytes]
    pixels: np.ndarray = rows.view(dtype)
    if channels == 1:
        return pixels
    return pixels.reshape(message.height, message.width, channels)


def encoding_layout(encoding: str) -> tuple[np.dtype[Any], int]:
    """Element type and channel count of an image encoding.

    Raises:
        TransportError: an encoding this module does not know.
    """
    if encoding not in IMAGE_ENCODINGS:
        raise TransportError(f"image encoding {encoding!r} is not one of {sorted(IMAGE_ENCODINGS)}")
    return IMAGE_ENCODINGS[encoding]


def pixel_layout(pixels: np.ndarray, encoding: str) -> tuple[np.dtype[Any], int, int, int]:
    """Element type, channels, height and width of ``pixels`` checked against ``encoding``.

    Raises:
        TransportError: unknown encoding, or an element type or shape that does not fit it.
    """
    dtype, channels = encoding_layout(encoding)
    if pixels.dtype.newbyteorder("=") != dtype:
        raise TransportError(
            f"encoding {encoding!r} needs {dtype.name} pixels, got dtype {pixels.dtype}"
        )
    shape = pixels.shape
    fits = (len(shape) == 3 and shape[2] == channels) or (len(shape) == 2 and channels == 1)
    if not fits:
        layout = "HxW" if channels == 1 else f"HxWx{channels}"
        raise TransportError(f"encoding {encoding!r} needs an {layout} array, got shape {shape}")
    return dtype, channels, shape[0], shape[1]


def compress(
    array_: np.ndarray,
    encoding: str,
    *,
    codec: ImageCodec = "png",
    jpeg_quality: int = 90,
    depth_packing: DepthPacking = "float32",
) -> tuple[str, memoryview]:
    """``array_`` as a compressed image file for bags and remote viewers: its
    ``CompressedImage.format`` and bytes.

    The formats written (``CompressedImage.format``):

    * ``"<enc>; png compressed <enc>"`` and ``"<enc>; jpeg compressed <enc>"`` for 8- and 16-bit
      encodings: a standard PNG or JPEG file of the image in its true colours, named as
      image_transport's ``compressed`` transport names its formats.
    * ``DEPTH_FLOAT32_FORMAT``, lossless depth: an RGBA8 PNG of the depth's size whose four
      channels of a pixel hold the four bytes of that pixel's little-endian IEEE float32 value,
      so +inf (no return) and NaN survive exactly.
    * ``DEPTH_MILLIMETRES_FORMAT``: a 16-bit greyscale PNG of depth in millimetres, rounded
      (error <= 0.5 mm), 0 meaning no return within range: +inf, NaN, values <= 0 and values
      beyond 65.535 m all encode as 0 and decode as +inf. Usually smaller than float32 packing
      and readable by any image viewer; use it where 65 m of range is enough.

    Args:
        array_: pixels laid out as for ``array_to_image``.
        encoding: ``32FC1`` depth in metres, or an encoding Pillow writes (rgb8, bgr8, rgba8,
            bgra8, mono8, 8UC1, mono16, 16UC1).
        codec: ``"png"`` (lossless) or ``"jpeg"`` (lossy; 3-channel colour and mono8 only).
        jpeg_quality: JPEG quality, 1 to 95.
        depth_packing: for 32FC1, ``"float32"`` (lossless) or ``"millimetres"`` (16-bit, 0.5 mm,
            65.535 m range), laid out as above.

    Raises:
        TransportError: an encoding, codec or packing that does not fit, or a quality out of
            range.
    """
    dtype, channels, _, _ = pixel_layout(array_, encoding)
    if codec not in ("png", "jpeg"):
        raise TransportError(f"codec {codec!r} is neither 'png' nor 'jpeg'")
    if encoding == "32FC1":
        if codec != "png":
            raise TransportError(f"32FC1 depth is compressed as png only, not {codec!r}")
        picture, image_format = _depth_picture(array_, depth_packing)
    elif encoding in _PILLOW_ENCODINGS:
        mode, channel_order = _PILLOW_ENCODINGS[encoding]
        if codec == "jpeg" and mode not in _JPEG_MODES:
            raise TransportError(f"{encoding} cannot be written as jpeg; use png")
        pixels = array_.astype(dtype.newbyteorder("<"), copy=False).reshape(
            array_.shape[:2] if channels == 1 else array_.shape
        )
        if channel_order is not None:
            pixels = pixels[..., channel_order]
        picture = PILImage.fromarray(np.ascontiguousarray(pixels))
        image_format = f"{encoding}; {codec} compressed {encoding}"
    else:
        raise TransportError(f"encoding {encoding!r} has no compressed form")
    buffer = io.BytesIO()
    if codec == "jpeg":
        if not 1 <= jpeg_quality <= 95:
            raise TransportError(f"jpeg_quality={jpeg_quality} is outside 1..95")
        picture.save(buffer, format="JPEG", quality=jpeg_quality)
    else:
        picture.save(buffer, format="PNG")
    return image_format, buffer.getbuffer()


def compressed_to_array(message: Any) -> tuple[np.ndarray, str]:
    """Decode a sensor_msgs/CompressedImage written by ``array_to_compressed``.

    Plain ``"png"``/``"jpeg"`` formats from other tools are read too; their encoding follows the
    picture (RGB -> rgb8, L -> mono8, 16-bit -> mono16, RGBA -> rgba8).

    Args:
        message: a CompressedImage from rclpy or rosbags (``format`` and bytes-like ``data``).

    Returns:
        The pixels (float32 metres with +inf for no return, for depth) and their encoding.

    Raises:
        TransportError: a format this module does not know, or data that is not a readable image.
    """
    image_format = message.format
    try:
        with PILImage.open(io.BytesIO(memoryview(message.data))) as picture:
            picture.load()
            mode = picture.mode
            pixels = np.asarray(picture)
    except (OSError, ValueError) as error:
        raise TransportError(
            f"CompressedImage ({image_format!r}): unreadable image: {error}"
        ) from error
    if image_format == DEPTH_FLOAT32_FORMAT:
        if mode != "RGBA":
            raise TransportError(f"{image_format!r} needs an RGBA png, got mode {mode}")
        depth = np.ascontiguousarray(pixels).view("<f4")[..., 0]
        return depth.astype(np.float32, copy=False), "32FC1"
    if image_format == DEPTH_MILLIMETRES_FORMAT:
        millimetres = pixels.astype(np.float32)
        return np.where(millimetres > 0, millimetres / 1000.0, np.inf).astype(np.float32), "32FC1"
    encoding = _compressed_encoding(image_format, mode)
    expected_mode, channel_order = _PILLOW_ENCODINGS[encoding]
    if mode != expected_mode and not (expected_mode == "I;16" and mode.startswith("I;16")):
        raise TransportError(f"{image_format!r}: picture mode {mode} does not hold {encoding}")
    if channel_order is not None:
        pixels = pixels[..., channel_order]
    dtype = IMAGE_ENCODINGS[encoding][0]
    return np.ascontiguousarray(pixels).astype(dtype, copy=False), encoding


def _compressed_encoding(image_format: str, mode: str) -> str:
    head, separator, tail = image_format.partition(";")
    if separator:
        encoding, words = head.strip(), tail.split()
        codec = words[0] if words else ""
        if encoding in _PILLOW_ENCODINGS and codec in ("png", "jpeg"):
            return encoding
    elif image_format.strip().lower() in ("png", "jpeg", "jpg"):
        by_mode = {"RGB": "rgb8", "RGBA": "rgba8", "L": "mono8", "I;16": "mono16"}
        if mode in by_mode:
            return by_mode[mode]
    raise TransportError(f"CompressedImage format {image_format!r} (picture mode {mode}) unknown")


def _depth_picture(depth: np.ndarray, packing: str) -> tuple[PILImage.Image, str]:
    metres = depth.reshape(depth.shape[:2])
    if packing == "float32":
        packed = np.ascontiguousarray(metres, dtype="<f4").view(np.uint8)
        rgba = packed.reshape(*metres.shape, 4)
        return PILImage.fromarray(rgba), DEPTH_FLOAT32_FORMAT
    if packing == "millimetres":
        millimetres = np.rint(metres.astype(np.float64) * 1000.0)
        in_range = np.isfinite(millimetres) & (metres > 0) & (millimetres <= _MILLIMETRES_MAX)
        # A positive depth under half a millimetre still is a return, not "no return".
        encoded = np.where(in_range, np.maximum(millimetres, 1.0), 0.0).astype("<u2")
        return PILImage.fromarray(encoded), DEPTH_MILLIMETRES_FORMAT
    raise TransportError(f"depth_packing {packing!r} is neither 'float32' nor 'millimetres'")
