"""sensor_msgs/Image, CompressedImage and PointCloud2 messages of numpy arrays
(``image_codec`` and ``depth_cloud`` do the pixels, points and bytes; this module only fills
messages, copying the data once)."""

from __future__ import annotations

import array
from typing import Any

import numpy as np
from sensor_msgs.msg import CompressedImage, Image, PointCloud2, PointField
from std_msgs.msg import Header

from aerialdojo.depth_cloud import FLOAT32, XYZ_FIELDS, cloud_fields
from aerialdojo.image_codec import (
    DepthPacking,
    ImageCodec,
    byte_buffer_of,
    compress,
    image_fields,
)

try:  # A ROS install's point cloud helpers; the PyPI wheels have none.
    from sensor_msgs_py.point_cloud2 import create_cloud_xyz32
except ImportError:
    create_cloud_xyz32 = None


def array_to_image(array_: np.ndarray, encoding: str, header: Header | None = None) -> Image:
    """A sensor_msgs/Image holding ``array_``'s pixels: its own buffer where the array was
    made by ``image_codec.message_array`` (the caller hands it over and must not change it
    after), a copy otherwise.

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
    buffer = byte_buffer_of(array_)
    if buffer is not None:
        message._data = buffer  # rendered into a message buffer: taken as it is, no copy
    else:
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


def points_to_cloud(points: np.ndarray, header: Header) -> PointCloud2:
    """An unordered x, y, z float32 sensor_msgs/PointCloud2 of (N, 3) ``points``: made by
    sensor_msgs_py where a ROS install provides it, else with the same layout here."""
    if create_cloud_xyz32 is not None:
        return create_cloud_xyz32(header, points)
    fields = cloud_fields(points)
    message = PointCloud2(
        header=header,
        height=1,
        width=fields.width,
        fields=[
            PointField(name=name, offset=offset, datatype=FLOAT32, count=1)
            for name, offset in XYZ_FIELDS
        ],
        is_bigendian=False,
        point_step=fields.point_step,
        row_step=fields.row_step,
        is_dense=True,
    )
    _attach_data(message, memoryview(fields.data))
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
