"""AirSim's ``simGetImages`` on the wire, read straight into arrays (AirSim v1.8.1, the plugin
CARLA-Air v0.1.7 bundles).

What the server sends, read from its source:
- msgpack-rpc over TCP (rpclib 2.3.0, AirSim's ``setup.sh``): a request is the array
  ``[0, msgid, method, params]``, the reply ``[1, msgid, error, result]``;
- the result of ``simGetImages`` is an array of ``ImageResponse`` maps
  (``AirLib/include/api/RpcLibAdaptorsBase.hpp:526-541``, ``MSGPACK_DEFINE_MAP``) whose
  ``image_data_uint8`` is a ``std::vector<uint8_t>``, packed as msgpack bin
  (rpclib ``include/rpc/msgpack/v1/adaptor/vector_unsigned_char.hpp:67-77``), and whose
  ``image_data_float`` is a ``std::vector<float>``, packed as an array of float32 elements:
  ``pack<float>`` calls ``pack_float`` (``v1/adaptor/float.hpp:47-50``), which writes the tag
  0xca and the four bytes big-endian for every value, integral or not (``v1/pack.hpp:1104-1112``;
  unlike msgpack-c 6.1, which ProjectAirSim's ``projectairsim_wire`` reads).

The airsim client unpacks such an answer into Python objects, one Python float per depth
value (262,144 for a 256x256 view). Here the reply is read from the socket by its structure,
each payload received straight into a buffer of its own (the caller's: an image message's),
and a float array whose elements all carry one float tag is read as fixed-size elements in one
vectorised pass; an array of mixed types is read element by element, with the same values.
"""

from __future__ import annotations

import itertools
import select
import socket
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import msgpack
import numpy as np

REQUEST, RESPONSE = 0, 1
_FLOAT32_TAG, _FLOAT64_TAG = 0xCA, 0xCB
#: Fixed-size elements of a float array: tag byte, then the big-endian value.
_FLOAT_ELEMENTS = {
    _FLOAT32_TAG: np.dtype([("tag", "u1"), ("value", ">f4")]),
    _FLOAT64_TAG: np.dtype([("tag", "u1"), ("value", ">f8")]),
}
#: What of a reply is received at once between its payloads.
_WINDOW_BYTES = 1 << 16


class AirSimWireError(Exception):
    """The server's bytes are not a msgpack-rpc reply this reader understands."""


class AirSimRpcError(Exception):
    """The server answered a call with an error (rpclib's text)."""


@dataclass(frozen=True)
class WireImage:
    """One ``ImageResponse`` as read from the wire.

    Attributes:
        camera_name: the camera that captured it.
        image_type: AirSim's ``ImageType`` value.
        width: pixels.
        height: pixels.
        time_stamp: AirSim's clock at capture, nanoseconds.
        pixels_as_float: whether the image came as floats.
        image_data_uint8: the bytes (an uncompressed Scene image: packed BGR), in a buffer
            of the reader's ``allocate``.
        image_data_float: the floats, as a 1-D float32 array (in a buffer of ``allocate``
            where the array came as one run of float elements).
    """

    camera_name: str
    image_type: int
    width: int
    height: int
    time_stamp: int
    pixels_as_float: bool
    image_data_uint8: np.ndarray
    image_data_float: np.ndarray


def request_bytes(msgid: int, method: str, params: Sequence[Any]) -> bytes:
    """A msgpack-rpc request, packed as the airsim client packs it (msgpack-rpc-python with
    msgpack 0.5: strings as raw, structures through their ``to_msgpack``)."""
    return bytes(
        msgpack.packb(
            [REQUEST, msgid, method, list(params)],
            use_bin_type=False,
            default=lambda value: value.to_msgpack(),
        )
    )


def zeroed_bytes(size: int) -> np.ndarray:
    """A payload buffer of ``size`` bytes: a zeroed uint8 array."""
    return np.zeros(size, np.uint8)


class ImageReplyReader:
    """Reads msgpack-rpc replies from one connection's byte stream, each image payload (an
    image's bytes, a float array's values as float32) received straight into a buffer of
    its own from ``allocate``.

    What is between the payloads is received into a window kept for the connection's life,
    and a float array's elements into a staging buffer kept too, so that the only fresh
    memory of a reply is its payloads'. A caller whose ``allocate`` makes message buffers
    (``image_codec.message_array``) hands the images to DDS without copying them again.

    Args:
        receive_into: ``socket.recv_into``-like: fills the start of the buffer it is given
            with what has arrived (waiting for at least a byte), returns the count; 0 once the
            connection has ended.
        allocate: a zeroed, writable, contiguous uint8 array of n elements.
    """

    def __init__(
        self,
        receive_into: Callable[[memoryview], int],
        allocate: Callable[[int], np.ndarray] = zeroed_bytes,
    ) -> None:
        self._receive_into = receive_into
        self._allocate = allocate
        self._window = bytearray(_WINDOW_BYTES)
        self._start = self._end = 0  # what of the window is received and not yet read
        self._staging = bytearray()

    def image_reply(self, msgid: int) -> list[WireImage]:
        """The ``simGetImages`` reply to request ``msgid``.

        Raises:
            AirSimRpcError: the server answered with an error.
            AirSimWireError: not a reply to ``msgid``, or not image responses.
            ConnectionError: the connection ended mid-reply.
        """
        if self.array_header() != 4 or self.value() != RESPONSE:
            raise AirSimWireError("not a msgpack-rpc reply")
        answered = self.value()
        error = self.value()
        if answered != msgid:
            raise AirSimWireError(f"a reply to call {answered} while waiting for call {msgid}")
        if error is not None:
            self.value()
            raise AirSimRpcError(str(error))
        return [self._image() for _ in range(self.array_header())]

    def _image(self) -> WireImage:
        fields: dict[str, Any] = {}
        for _ in range(self.map_header()):
            key = self.value()
            fields[key] = self.floats() if key == "image_data_float" else self.value()
        try:
            pixels = fields["image_data_uint8"]
            if not isinstance(pixels, np.ndarray):
                raise TypeError(f"image_data_uint8 is {type(pixels).__name__}, not binary")
            return WireImage(
                camera_name=str(fields["camera_name"]),
                image_type=int(fields["image_type"]),
                width=int(fields["width"]),
                height=int(fields["height"]),
                time_stamp=int(fields["time_stamp"]),
                pixels_as_float=bool(fields["pixels_as_float"]),
                image_data_uint8=pixels,
                image_data_float=fields["image_data_float"],
            )
        except (KeyError, TypeError, ValueError) as error:
            raise AirSimWireError(f"not an ImageResponse: {error!r}") from error

    def _receive(self, into: memoryview) -> int:
        received = self._receive_into(into)
        if not received:
            raise ConnectionError("the server closed the connection mid-reply")
        return received

    def _need(self, count: int) -> None:
        """Have at least ``count`` unread bytes in the window (moved to its start first where
        they would not fit behind it)."""
        while self._end - self._start < count:
            if self._start + count > len(self._window):
                unread = self._window[self._start : self._end]
                if count > len(self._window):
                    self._window = bytearray(count)
                self._window[: len(unread)] = unread
                self._start, self._end = 0, len(unread)
            self._end += self._receive(memoryview(self._window)[self._end :])

    def _unpack(self, layout: str) -> Any:
        size = struct.calcsize(layout)
        self._need(size)
        value = struct.unpack_from(layout, self._window, self._start)[0]
        self._start += size
        return value

    def _byte(self) -> int:
        self._need(1)
        return self._window[self._start]

    def _header(self, fixed_base: int, tag16: int) -> int:
        """The element count of a container: in a fix format's tag, or after the tag of its
        16-bit form (``tag16``) or 32-bit form (``tag16 + 1``)."""
        tag = self._byte()
        self._start += 1
        if tag == tag16:
            return int(self._unpack(">H"))
        if tag == tag16 + 1:
            return int(self._unpack(">I"))
        if tag & 0xF0 != fixed_base:
            raise AirSimWireError(f"unexpected msgpack tag 0x{tag:02x}")
        return tag & 0x0F

    def array_header(self) -> int:
        return self._header(0x90, 0xDC)

    def map_header(self) -> int:
        return self._header(0x80, 0xDE)

    def value(self) -> Any:
        """The next value as Python objects (strings decoded, bin in a buffer of
        ``allocate``)."""
        tag = self._byte()
        if 0x80 <= tag <= 0x8F or tag in (0xDE, 0xDF):
            return {self.value(): self.value() for _ in range(self.map_header())}
        if 0x90 <= tag <= 0x9F or tag in (0xDC, 0xDD):
            return [self.value() for _ in range(self.array_header())]
        self._start += 1
        if tag <= 0x7F:  # positive fixint
            return tag
        if tag >= 0xE0:  # negative fixint
            return tag - 0x100
        if 0xA0 <= tag <= 0xBF:
            return self._text(tag & 0x1F)
        if tag in _SIMPLE:
            return _SIMPLE[tag]
        if tag in _SCALARS:
            return self._unpack(_SCALARS[tag])
        if tag in _SIZED:
            kind, size_layout = _SIZED[tag]
            size = int(self._unpack(size_layout))
            return self._text(size) if kind == "str" else self._payload(size)
        raise AirSimWireError(f"unsupported msgpack tag 0x{tag:02x}")

    def _text(self, size: int) -> str:
        self._need(size)
        text = self._window[self._start : self._start + size].decode("utf-8")
        self._start += size
        return text

    def _payload(self, size: int) -> np.ndarray:
        """The next ``size`` bytes, in a buffer of ``allocate``: what the window holds of them
        is copied, the rest received straight into it."""
        payload = self._allocate(size)
        into = payload.data
        have = min(size, self._end - self._start)
        into[:have] = self._window[self._start : self._start + have]
        self._start += have
        while have < size:
            have += self._receive(into[have:size])
        return payload

    def floats(self) -> np.ndarray:
        """The next value, an array of numbers, as float32: one vectorised pass into a buffer
        of ``allocate`` when every element carries the first element's float tag, else
        element by element (values rounded to float32 as numpy rounds a double)."""
        count = self.array_header()
        if count == 0:
            return np.empty(0, np.float32)
        element = _FLOAT_ELEMENTS.get(self._byte())
        if element is not None:
            run = self._float_run(count, element)
            if run is not None:
                values = np.frombuffer(self._allocate(count * 4), np.float32)
                np.copyto(values, np.frombuffer(run, element)["value"], casting="same_kind")
                return values
        elements = [self.value() for _ in range(count)]
        try:
            return np.array(elements, dtype=np.float64).astype(np.float32)
        except (TypeError, ValueError) as error:
            raise AirSimWireError(f"a float array holds a non-number: {error}") from error

    def _float_run(self, count: int, element: np.dtype) -> memoryview | None:
        """``count`` fixed-size elements of the first element's tag, in the staging buffer,
        or None (nothing consumed) once an element with another tag shows. Tags are checked
        as bytes arrive, and more is received only while every element so far has the tag:
        an array of shorter elements must not make the reader wait for bytes past the
        reply's end."""
        size, stride = count * element.itemsize, element.itemsize
        if len(self._staging) < size:
            self._staging = bytearray(size)
        run = memoryview(self._staging)[:size]
        tags = np.frombuffer(self._staging, np.uint8, size)
        tag = self._window[self._start]
        have = min(size, self._end - self._start)
        run[:have] = self._window[self._start : self._start + have]
        self._start += have
        checked = 0  # elements whose tag byte was compared
        while True:
            if not bool((tags[checked * stride : have : stride] == tag).all()):
                # Read back as values: the window holds the run's bytes again, then the rest.
                self._window = bytearray(run[:have]) + self._window[self._start : self._end]
                self._start, self._end = 0, len(self._window)
                return None
            checked = -(-have // stride)  # elements whose tag byte is here
            if have == size:
                return run
            have += self._receive(run[have:])


_SIMPLE: dict[int, Any] = {0xC0: None, 0xC2: False, 0xC3: True}
_SCALARS = {
    0xCA: ">f",
    0xCB: ">d",
    0xCC: ">B",
    0xCD: ">H",
    0xCE: ">I",
    0xCF: ">Q",
    0xD0: ">b",
    0xD1: ">h",
    0xD2: ">i",
    0xD3: ">q",
}
_SIZED = {
    0xC4: ("bin", ">B"),
    0xC5: ("bin", ">H"),
    0xC6: ("bin", ">I"),
    0xD9: ("str", ">B"),
    0xDA: ("str", ">H"),
    0xDB: ("str", ">I"),
}


class AirSimImageChannel:
    """A connection of its own to AirSim's RPC port for ``simGetImages``, whose replies are
    read straight into buffers (``ImageReplyReader``).

    Args:
        host: the server's address.
        port: its RPC port.
        timeout_s: how long connecting and each wait for reply bytes may take.
        allocate: the buffer of n bytes each payload is received into.

    Raises:
        OSError: the server cannot be reached.
    """

    def __init__(
        self,
        host: str,
        port: int,
        timeout_s: float,
        allocate: Callable[[int], np.ndarray] = zeroed_bytes,
    ) -> None:
        self._socket = socket.create_connection((host, port), timeout=timeout_s)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._ids = itertools.count(1)
        self._reader = ImageReplyReader(self._socket.recv_into, allocate)

    def send_image_request(self, requests: Sequence[Any], vehicle: str) -> int:
        """Write a ``simGetImages`` call to the socket (it is on the wire on return); its id."""
        msgid = next(self._ids)
        self._socket.sendall(request_bytes(msgid, "simGetImages", [list(requests), vehicle, False]))
        return msgid

    def wait_for_reply(self) -> bool:
        """Wait, up to the channel's timeout, until the server's reply starts to arrive;
        whether it did. rpclib writes a reply once it is packed whole, so its first bytes
        mean the images were rendered."""
        readable, _, _ = select.select([self._socket], [], [], self._socket.gettimeout())
        return bool(readable)

    def read_images(self, msgid: int) -> list[WireImage]:
        """The reply to call ``msgid``.

        Raises:
            AirSimRpcError: the server answered with an error.
            AirSimWireError: the reply is not image responses.
            OSError: the connection failed or timed out.
        """
        return self._reader.image_reply(msgid)

    def close(self) -> None:
        self._socket.close()
