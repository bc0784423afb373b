"""The topic wire format of the public ProjectAirSim server (``iamaisim/ProjectAirSim`` 06dff61).

What the server sends and expects on its topic socket, read from its source:
- the socket is NNG pair1 in polyamorous mode (``core_sim/src/topic_manager.cpp``
  ``nng_pair1_open_poly``); it answers each client pipe on its own, and NNG refuses a peer of
  another protocol (pair0) without telling either side;
- a frame is the msgpack array ``[type, topic, body]`` (``TopicManager::Impl::Frame``,
  ``MSGPACK_DEFINE``): 0 subscribe, 1 unsubscribe, 2 message, 3 unsubscribe all (the topic is
  ignored); subscribing answers with the topic's last value (``Subscribe``);
- an image message is a map in the order of ``image_message.hpp``'s ``MSGPACK_DEFINE_MAP``:
  ``time_stamp, height, width, encoding, big_endian, step, data, pos_x, pos_y, pos_z, rot_w,
  rot_x, rot_y, rot_z, annotations, data_float``. Scene images are BGR bytes in ``data``; depth
  is ``32FC1`` floats in ``data_float`` with ``data`` empty
  (``ImagePackingAsyncTask.cpp``). ``pos_*``/``rot_*`` are the camera's world pose in NED at
  capture (``UnrealCamera.cpp``: ``UnrealTransform::GetPoseNed(this)``).
- core_sim packs with msgpack-c cpp-6.1.0 (its ``CMakeLists.txt``), whose ``pack_float``
  writes a float with an integral value as an integer (``include/msgpack/v1/pack.hpp``): a
  depth array mixes float32 elements with integers, and only a float-only array can be read
  as fixed 5-byte elements.
- depth is in metres: the planar-depth material multiplies the camera-relative distance in
  Unreal centimetres by 0.01 ("convert to meters", ``Content/Sensors/MaterialFunctions/
  DepthPlannerMaterialFunc.uasset``); the ``DepthMilli`` name and "depth in mm" comment of
  ``ImagePackingAsyncTask.cpp`` are stale. ``aerialdojo doctor`` checks it against the
  altitude on a live server.

Images are kept as received and decoded once, when an observation uses them: a 640x640 depth
message is 409,600 msgpack elements, about 23 ms to unpack into Python floats, and the server
sends 15 of them per view and simulated second while the clock runs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import msgpack
import numpy as np

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.sim.remote.images import copy_reversed_channels

FRAME_SUBSCRIBE, FRAME_UNSUBSCRIBE, FRAME_MESSAGE, FRAME_UNSUBSCRIBE_ALL = 0, 1, 2, 3
TOPIC_LIST = "/$topics"
#: msgpack's float32 tag; a float-only array is a run of 5-byte elements with it.
_FLOAT32_TAG = 0xCA
_ELEMENT = np.dtype([("tag", "u1"), ("value", ">f4")])
_HEADER_KEYS = frozenset(
    {"time_stamp", "height", "width", "encoding", "pos_x", "pos_y", "pos_z"}
    | {"rot_w", "rot_x", "rot_y", "rot_z"}
)
_COLOUR_ENCODINGS = {"BGR": True, "RGB": False}
#: Largest finite IEEE half float: the depth render target's saturation value.
HALF_FLOAT_MAX = 65504.0


def subscribe_frame(topic: str) -> bytes:
    """The frame that subscribes to ``topic`` (the server then sends its last value)."""
    return bytes(msgpack.packb([FRAME_SUBSCRIBE, topic, ""], use_bin_type=True))


def unsubscribe_frame(topic: str) -> bytes:
    """The frame that ends this connection's subscription to ``topic``."""
    return bytes(msgpack.packb([FRAME_UNSUBSCRIBE, topic, ""], use_bin_type=True))


def unsubscribe_all_frame() -> bytes:
    """The frame that ends every subscription of this connection."""
    return bytes(msgpack.packb([FRAME_UNSUBSCRIBE_ALL, "", ""], use_bin_type=True))


def read_frame(raw: bytes) -> tuple[int, str, bytes]:
    """(type, topic, body) of a received frame; the body stays packed.

    Raises:
        ValueError: not a topic frame.
    """
    frame = msgpack.unpackb(raw, raw=True)
    if not isinstance(frame, list | tuple) or len(frame) != 3:
        raise ValueError(f"not a topic frame: {type(frame).__name__}")
    kind, topic, body = frame
    return int(kind), bytes(topic).decode(), bytes(body)


@dataclass
class PackedImage:
    """An image message as the server sent it, with the few fields read at once.

    Attributes:
        body: the packed message.
        time_stamp: capture time, simulated nanoseconds.
        width: pixels.
        height: pixels.
        encoding: ``BGR`` (scene) or ``32FC1`` (depth).
        position_ned: the camera's world position at capture, NED metres.
        rotation_wxyz: the camera's world orientation at capture (NED).
    """

    body: bytes
    time_stamp: int
    width: int
    height: int
    encoding: str
    position_ned: tuple[float, float, float]
    rotation_wxyz: tuple[float, float, float, float]
    _pixels: np.ndarray | None = field(default=None, repr=False)

    @classmethod
    def read(cls, body: bytes, what: str) -> PackedImage:
        """The header fields of a packed image message, without unpacking its pixels.

        Raises:
            SimulatorFaultError: not an image message.
        """
        header: dict[str, Any] = {}
        unpacker = msgpack.Unpacker(raw=False)
        unpacker.feed(body)
        try:
            for _ in range(unpacker.read_map_header()):
                key = unpacker.unpack()
                if key in _HEADER_KEYS:
                    header[key] = unpacker.unpack()
                    if len(header) == len(_HEADER_KEYS):
                        break
                else:
                    unpacker.skip()
            return cls(
                body=body,
                time_stamp=int(header["time_stamp"]),
                width=int(header["width"]),
                height=int(header["height"]),
                encoding=str(header["encoding"]),
                position_ned=(
                    float(header["pos_x"]),
                    float(header["pos_y"]),
                    float(header["pos_z"]),
                ),
                rotation_wxyz=(
                    float(header["rot_w"]),
                    float(header["rot_x"]),
                    float(header["rot_y"]),
                    float(header["rot_z"]),
                ),
            )
        except (KeyError, ValueError, TypeError, msgpack.UnpackException) as error:
            raise SimulatorFaultError(f"{what}: not an image message ({error!r})") from error

    def rgb(self, what: str) -> np.ndarray:
        """HxWx3 uint8 RGB of a scene image, decoded once.

        Raises:
            SimulatorFaultError: another encoding, or a payload of the wrong size.
        """
        if self._pixels is None:
            if self.encoding not in _COLOUR_ENCODINGS:
                raise SimulatorFaultError(f"{what}: colour encoding {self.encoding!r}")
            data = self._field("data", what)
            expected = self.height * self.width * 3
            if not isinstance(data, bytes) or len(data) != expected:
                raise SimulatorFaultError(
                    f"{what}: {len(data)} bytes for a {self.width}x{self.height} "
                    f"{self.encoding} image ({expected} expected)"
                )
            pixels = np.frombuffer(data, np.uint8).reshape(self.height, self.width, 3)
            if _COLOUR_ENCODINGS[self.encoding]:
                self._pixels = np.empty_like(pixels)
                copy_reversed_channels(self._pixels, pixels)
            else:
                self._pixels = np.ascontiguousarray(pixels)
        return self._pixels

    def depth(self, what: str) -> np.ndarray:
        """HxW float32 planar depth in metres, +inf where nothing was hit (zero, non-finite or
        the half float's saturation value 65504), decoded once.

        Raises:
            SimulatorFaultError: not 32FC1 floats in ``data_float``, or the wrong count.
        """
        if self._pixels is None:
            if self.encoding != "32FC1":
                raise SimulatorFaultError(
                    f"{what}: depth encoding {self.encoding!r}; the public server sends 32FC1"
                )
            depth = self._floats(what).reshape(self.height, self.width)
            depth[(depth == 0.0) | ~np.isfinite(depth) | (depth >= HALF_FLOAT_MAX)] = np.inf
            self._pixels = depth
        return self._pixels

    def _field(self, name: str, what: str) -> Any:
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(self.body) + 1)
        unpacker.feed(self.body)
        for _ in range(unpacker.read_map_header()):
            if unpacker.unpack() == name:
                return unpacker.unpack()
            unpacker.skip()
        raise SimulatorFaultError(f"{what}: the message has no {name!r}")

    def _floats(self, what: str) -> np.ndarray:
        """``data_float`` as float32: read in one vectorised pass when every element is a
        msgpack float32; otherwise (msgpack-c wrote integral values as integers) unpacked by
        msgpack's C unpacker and converted once."""
        count = self.width * self.height
        unpacker = msgpack.Unpacker(raw=False, max_buffer_size=len(self.body) + 1)
        unpacker.feed(self.body)
        for _ in range(unpacker.read_map_header()):
            if unpacker.unpack() != "data_float":
                unpacker.skip()
                continue
            size = unpacker.read_array_header()
            if size != count:
                raise SimulatorFaultError(
                    f"{what}: {size} depth values for a {self.width}x{self.height} image"
                )
            offset = unpacker.tell()
            if offset + 5 * size <= len(self.body):
                elements = np.frombuffer(self.body, _ELEMENT, count=size, offset=offset)
                if bool((elements["tag"] == _FLOAT32_TAG).all()):
                    return elements["value"].astype(np.float32)
            values = msgpack.unpackb(self.body, raw=False)["data_float"]
            return np.asarray(values, dtype=np.float32)
        raise SimulatorFaultError(f"{what}: the message has no 'data_float'")
