"""sensor_msgs/Image and CompressedImage messages of numpy pixels (``image_codec`` does the
pixels and bytes; this module only fills messages, copying the pixels once)."""

from __future__ import annotations

import array
from typing import Any

import numpy as np
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from aerialdojo.image_codec import DepthPacking, ImageCodec, compress, image_fields


def array_to_image(array_: np.ndarray, encoding: str, header: Header | None = None) -> Image:
    """A sensor_msgs/Image holding a copy of ``array_``'s pixels.

    The pixels are copied once, straight from the array's buffer into the message's
    ``array('B')``; ``Image(data=array.tobytes())`` makes three copies and a list conversion is
    hundreds of times slower (``benchmarks/transport.py``). A non-contiguous array costs one extra
    copy.

    Args:
        array_: HxW (or HxWx1) for one channel, HxWxC otherwise, of the encoding's element type
            (``IMAGE_ENCODINGS``); big-endian element types are marked ``is_bigendian``.
        encoding: a key of ``IMAGE_ENCODINGS``, e.g. ``"rgb8"`` or ``"32FC1"``.
        header: stamp and optical frame; an empty header if None.

    Raises:
        TransportError: unknown encoding, or an element type or shape that does not fit it.
    """
    fields = image_fields(array_, encoding)
    message = Image(
        height=fields.height,
        width=fields.width,
        encoding=fields.encoding,
        is_bigendian=fields.is_bigendian,
        step=fields.step,
    )
    _attach_data(message, fields.data)
    if header is not None:
        message.header = header
    return message


def array_to_compressed(
    array_: np.ndarray,
    encoding: str,
    header: Header | None = None,
    *,
    codec: ImageCodec = "png",
    jpeg_quality: int = 90,
    depth_packing: DepthPacking = "float32",
) -> CompressedImage:
    """A sensor_msgs/CompressedImage of ``array_`` (formats: ``image_codec.compress``).

    Raises:
        TransportError: what ``image_codec.compress`` refuses.
    """
    image_format, data = compress(
        array_, encoding, codec=codec, jpeg_quality=jpeg_quality, depth_packing=depth_packing
    )
    message = CompressedImage(format=image_format)
    _attach_data(message, data)
    if header is not None:
        message.header = header
    return message


def _attach_data(message: Any, pixels: memoryview) -> None:
    """Copy ``pixels`` once into ``message.data``.

    The generated ``data`` setter copies whatever it is given, even an ``array('B')``, unless
    ROS_PYTHON_CHECK_FIELDS is set (and ``Image(data=...)`` copies twice more); so the array is
    stored in the slot the setter fills, the one the C conversion reads through the getter.
    """
    data = array.array("B")
    data.frombytes(pixels)
    message._data = data
