"""ROS-side transport: QoS, the shipped DDS profile, image messages, off-path publishing."""

from __future__ import annotations

import array
import io
import os
import queue
import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal, Protocol

import numpy as np
from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from PIL import Image as PILImage
from rclpy.publisher import Publisher
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import CompressedImage, Image
from std_msgs.msg import Header

from aerialdojo.errors import ConfigError, TransportError

#: Transport profiles shipped in ``config/transport/``: name -> (file, discovery range).
TRANSPORT_PROFILES: Final[Mapping[str, tuple[str, str]]] = {
    "single_host": ("fastdds_shm.xml", "LOCALHOST"),
    "multi_host": ("fastdds_multi_host.xml", "SUBNET"),
}

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


# --- QoS -------------------------------------------------------------------------------------


def sensor_qos(*, reliable: bool = True, depth: int = 5) -> QoSProfile:
    """QoS for camera images, depth and camera_info.

    Publishers keep the reliable default: a reliable writer serves reliable and best-effort
    readers alike, so an agent that must see the frames of each step subscribes reliably while a
    viewer subscribes with ``reliable=False`` and never slows the stream down. Best-effort
    delivery of full frames needs the shipped transport profile (``transport_environment``).

    The reliable profile is also transient local. Discovery is not symmetric: a subscription
    can count its publisher as matched while the publisher has not matched it yet, and a frame
    published in that window never reaches a volatile reader (148 of 500 fresh matches with
    both cores busy, ``benchmarks/late_match.py``). A transient-local writer hands the frames
    it keeps anyway to a reader that matches late. Viewers stay volatile: they want the live stream.

    Args:
        reliable: RELIABLE and transient local (publishers, agents, the recorder) or
            BEST_EFFORT and volatile (viewers).
        depth: frames kept per topic, by the writer for repairs and late readers and by the
            reader until taken; five (a third of a second at 15 Hz) ride out a subscriber
            stalled by a busy CPU, where two lost frame sets even to reliable subscribers.

    Raises:
        ConfigError: ``depth`` is below 1.
    """
    if reliable:
        return latched_qos(depth)
    return _keep_last(depth, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)


def latched_qos(depth: int = 1) -> QoSProfile:
    """QoS for data a subscriber that matches late must still get (task, poses, frames):
    reliable, transient local, the last ``depth`` messages.

    Raises:
        ConfigError: ``depth`` is below 1.
    """
    return _keep_last(depth, ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL)


def _keep_last(
    depth: int, reliability: ReliabilityPolicy, durability: DurabilityPolicy
) -> QoSProfile:
    if depth < 1:
        raise ConfigError(f"QoS depth={depth} must be at least 1")
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=reliability,
        durability=durability,
    )


# --- DDS transport profile -------------------------------------------------------------------


def transport_profile_path(profile: str = "single_host") -> Path:
    """The Fast DDS XML file of a shipped transport profile.

    Looks in the source tree first (running from a checkout), then in the installed
    ``share/aerialdojo/config/transport``.

    Args:
        profile: a key of ``TRANSPORT_PROFILES``.

    Raises:
        ConfigError: unknown profile name, or its file is in neither place.
    """
    if profile not in TRANSPORT_PROFILES:
        raise ConfigError(
            f"transport profile {profile!r} is not one of {sorted(TRANSPORT_PROFILES)}"
        )
    file_name = TRANSPORT_PROFILES[profile][0]
    candidates = [Path(__file__).resolve().parents[3] / "config" / "transport" / file_name]
    try:
        share = Path(get_package_share_directory("aerialdojo"))
        candidates.append(share / "config" / "transport" / file_name)
    except PackageNotFoundError:
        pass  # not installed: running from the source tree only
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(candidate) for candidate in candidates)
    raise ConfigError(f"transport profile {profile!r}: {file_name} not found in {searched}")


def transport_environment(
    profile: str = "single_host", environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment variables that make a ROS process use a shipped transport profile.

    Fast DDS reads them when the process creates its first participant (``rclpy.init``), so a
    launcher sets them on the child process (or in ``os.environ`` before ``rclpy.init`` when
    nodes are composed in the launcher's own process). Variables the user already set in
    ``environ`` are left out, so their choice wins. ``RMW_FASTRTPS_USE_QOS_FROM_XML`` must stay
    unset: the profile configures transports only and the QoS comes from the code.

    Args:
        profile: a key of ``TRANSPORT_PROFILES``.
        environ: the environment to complete; ``os.environ`` if None.

    Returns:
        The variables to add: ``RMW_IMPLEMENTATION``, ``FASTDDS_DEFAULT_PROFILES_FILE`` and
        ``ROS_AUTOMATIC_DISCOVERY_RANGE`` (LOCALHOST for single_host, SUBNET for multi_host).

    Raises:
        ConfigError: unknown profile, or its file is missing.
    """
    current = os.environ if environ is None else environ
    wanted = {
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        "FASTDDS_DEFAULT_PROFILES_FILE": str(transport_profile_path(profile)),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": TRANSPORT_PROFILES[profile][1],
    }
    return {name: value for name, value in wanted.items() if not current.get(name)}


# --- sensor_msgs/Image -----------------------------------------------------------------------


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
    dtype, channels, height, width = _pixel_layout(array_, encoding)
    big_endian = array_.dtype.byteorder == ">" or (
        array_.dtype.byteorder == "=" and sys.byteorder == "big"
    )
    message = Image(
        height=height,
        width=width,
        encoding=encoding,
        is_bigendian=int(big_endian),
        step=width * channels * dtype.itemsize,
    )
    _attach_data(message, np.ascontiguousarray(array_).data.cast("B"))
    if header is not None:
        message.header = header
    return message


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
    dtype, channels = _encoding_layout(message.encoding)
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


def _attach_data(message: Any, pixels: memoryview) -> None:
    """Copy ``pixels`` once into ``message.data``.

    The generated ``data`` setter copies whatever it is given, even an ``array('B')``, unless
    ROS_PYTHON_CHECK_FIELDS is set (and ``Image(data=...)`` copies twice more); so the array is
    stored in the slot the setter fills, the one the C conversion reads through the getter.
    """
    data = array.array("B")
    data.frombytes(pixels)
    message._data = data


def _encoding_layout(encoding: str) -> tuple[np.dtype[Any], int]:
    if encoding not in IMAGE_ENCODINGS:
        raise TransportError(f"image encoding {encoding!r} is not one of {sorted(IMAGE_ENCODINGS)}")
    return IMAGE_ENCODINGS[encoding]


def _pixel_layout(pixels: np.ndarray, encoding: str) -> tuple[np.dtype[Any], int, int, int]:
    """Element type, channels, height and width of ``pixels`` checked against ``encoding``."""
    dtype, channels = _encoding_layout(encoding)
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


# --- sensor_msgs/CompressedImage -------------------------------------------------------------


def array_to_compressed(
    array_: np.ndarray,
    encoding: str,
    header: Header | None = None,
    *,
    codec: ImageCodec = "png",
    jpeg_quality: int = 90,
    depth_packing: DepthPacking = "float32",
) -> CompressedImage:
    """A sensor_msgs/CompressedImage of ``array_`` for bags and remote viewers.

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
        header: stamp and optical frame; an empty header if None.
        codec: ``"png"`` (lossless) or ``"jpeg"`` (lossy; 3-channel colour and mono8 only).
        jpeg_quality: JPEG quality, 1 to 95.
        depth_packing: for 32FC1, ``"float32"`` (lossless) or ``"millimetres"`` (16-bit, 0.5 mm,
            65.535 m range), laid out as above.

    Raises:
        TransportError: an encoding, codec or packing that does not fit, or a quality out of
            range.
    """
    dtype, channels, _, _ = _pixel_layout(array_, encoding)
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
    message = CompressedImage(format=image_format)
    _attach_data(message, buffer.getbuffer())
    if header is not None:
        message.header = header
    return message


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


# --- publishing off the control path ---------------------------------------------------------


class FramePublisher:
    """Publishes batches of messages on a thread of its own, in the order they were submitted.

    A frame set of four 640x640 RGB-D views takes 10-20 ms of CPU to serialize and hand to DDS,
    and rclpy holds the GIL during each ``publish`` call. Submitting the set here lets
    the bridge answer the ``step`` request first; the worker then publishes image by image, so
    other callbacks interleave between images instead of waiting for the whole set. At most
    ``max_pending`` batches wait; ``submit`` blocks beyond that rather than drop an observation
    an agent is waiting for. The caller hands the messages over and must not change them after.

    Use as a context manager, or call ``close``; a publish that failed is raised as
    ``TransportError`` from the next ``submit``, ``flush`` or ``close``.
    """

    def __init__(
        self,
        max_pending: int = 2,
        name: str = "aerialdojo-frame-publisher",
        on_failure: Callable[[BaseException], None] | None = None,
    ) -> None:
        """Start the worker thread.

        Args:
            max_pending: batches that may wait before ``submit`` blocks.
            name: the worker thread's name (shown by debuggers and ``py-spy``).
            on_failure: called on the worker thread when a publish fails, so the owner can
                log it at once rather than at the next ``submit``.

        Raises:
            ConfigError: ``max_pending`` is below 1.
        """
        if max_pending < 1:
            raise ConfigError(f"FramePublisher max_pending={max_pending} must be at least 1")
        self._batches: queue.Queue[list[tuple[Publisher[Any], Any]] | None] = queue.Queue(
            max_pending
        )
        self._failure: BaseException | None = None
        self._on_failure = on_failure
        self._closed = False
        self._worker = threading.Thread(target=self._publish_batches, name=name, daemon=True)
        self._worker.start()

    def submit(self, batch: Iterable[tuple[Publisher[Any], Any]]) -> None:
        """Queue one batch of (publisher, message) pairs, e.g. every view of one step.

        Raises:
            TransportError: the publisher is closed, or an earlier publish failed.
        """
        self._raise_failure()
        if self._closed:
            raise TransportError("FramePublisher is closed; no more batches are accepted")
        self._batches.put(list(batch))

    def flush(self) -> None:
        """Wait until every submitted batch has been published.

        Raises:
            TransportError: a publish failed.
        """
        self._batches.join()
        self._raise_failure()

    def close(self) -> None:
        """Publish what is queued, then stop the worker.

        Raises:
            TransportError: a publish failed.
        """
        if not self._closed:
            self._closed = True
            self._batches.put(None)
            self._worker.join()
        self._raise_failure()

    def __enter__(self) -> FramePublisher:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _publish_batches(self) -> None:
        while True:
            batch = self._batches.get()
            try:
                if batch is None:
                    return
                if self._failure is None:
                    for publisher, message in batch:
                        publisher.publish(message)
            except Exception as error:  # handed to the caller's thread
                self._failure = error
                if self._on_failure is not None:
                    self._on_failure(error)
            finally:
                self._batches.task_done()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise TransportError(f"publishing a queued frame failed: {self._failure!r}") from (
                self._failure
            )
