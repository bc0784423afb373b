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
_RECEIVE_CHUNK = 1 << 20


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
        image_data_uint8: the bytes (an uncompressed Scene image: packed BGR).
        image_data_float: the floats, as a 1-D float32 array.
    """

    camera_name: str
    image_type: int
    width: int
    height: int
    time_stamp: int
    pixels_as_float: bool
    image_data_uint8: bytes
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


class _Reader:
    """A msgpack reader pulling bytes from ``receive`` as it needs them."""

    def __init__(self, receive: Callable[[int], bytes]) -> None:
        self._receive = receive
        self._buffer = b""
        self._position = 0

    def _take(self, count: int) -> bytes | bytearray:
        end = self._position + count
        if end <= len(self._buffer):
            taken = self._buffer[self._position : end]
            self._position = end
            return taken
        # What the buffer lacks is received straight into the result, so that a large run
        # (an image) is copied once.
        result = bytearray(count)
        have = len(self._buffer) - self._position
        result[:have] = self._buffer[self._position :]
        view = memoryview(result)
        while have < count:
            chunk = self._receive(min(count - have, _RECEIVE_CHUNK))
            if not chunk:
                raise ConnectionError("the server closed the connection mid-reply")
            view[have : have + len(chunk)] = chunk
            have += len(chunk)
        self._buffer, self._position = b"", 0
        return result

    def _peek_byte(self) -> int:
        if self._position >= len(self._buffer):
            chunk = self._receive(_RECEIVE_CHUNK)
            if not chunk:
                raise ConnectionError("the server closed the connection mid-reply")
            self._buffer, self._position = self._buffer[self._position :] + chunk, 0
        return self._buffer[self._position]

    def _unpack(self, layout: str) -> Any:
        return struct.unpack(layout, self._take(struct.calcsize(layout)))[0]

    def _header(self, fixed_base: int, tag16: int) -> int:
        """The element count of a container: in a fix format's tag, or after the tag of its
        16-bit form (``tag16``) or 32-bit form (``tag16 + 1``)."""
        tag = self._take(1)[0]
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
        """The next value as Python objects (strings decoded, bin as bytes)."""
        tag = self._peek_byte()
        if tag <= 0x7F:  # positive fixint
            return self._take(1)[0]
        if tag >= 0xE0:  # negative fixint
            return int(self._unpack(">b"))
        if 0x80 <= tag <= 0x8F or tag in (0xDE, 0xDF):
            return {self.value(): self.value() for _ in range(self.map_header())}
        if 0x90 <= tag <= 0x9F or tag in (0xDC, 0xDD):
            return [self.value() for _ in range(self.array_header())]
        self._take(1)
        if 0xA0 <= tag <= 0xBF:
            return bytes(self._take(tag & 0x1F)).decode("utf-8")
        if tag in _SIMPLE:
            return _SIMPLE[tag]
        if tag in _SCALARS:
            return self._unpack(_SCALARS[tag])
        if tag in _SIZED:
            kind, size_layout = _SIZED[tag]
            data = bytes(self._take(int(self._unpack(size_layout))))
            return data.decode("utf-8") if kind == "str" else data
        raise AirSimWireError(f"unsupported msgpack tag 0x{tag:02x}")

    def floats(self) -> np.ndarray:
        """The next value, an array of numbers, as float32: one vectorised pass when every
        element carries the first element's float tag, else element by element (values
        rounded to float32 as numpy rounds a double)."""
        count = self.array_header()
        if count == 0:
            return np.empty(0, np.float32)
        element = _FLOAT_ELEMENTS.get(self._peek_byte())
        if element is not None:
            run = self._float_run(count, element)
            if run is not None:
                return np.frombuffer(run, element)["value"].astype(np.float32)
        values = [self.value() for _ in range(count)]
        try:
            return np.array(values, dtype=np.float64).astype(np.float32)
        except (TypeError, ValueError) as error:
            raise AirSimWireError(f"a float array holds a non-number: {error}") from error

    def _float_run(self, count: int, element: np.dtype) -> bytearray | None:
        """``count`` fixed-size elements of the first element's tag, or None (nothing
        consumed) once an element with another tag shows. Tags are checked as bytes arrive,
        and more is received only while every element so far has the tag: an array of
        shorter elements must not make the reader wait for bytes past the reply's end."""
        size, stride = count * element.itemsize, element.itemsize
        tag = self._buffer[self._position]
        run = bytearray(size)
        view, tags = memoryview(run), np.frombuffer(run, np.uint8)
        have = min(size, len(self._buffer) - self._position)
        view[:have] = self._buffer[self._position : self._position + have]
        self._position += have
        checked = 0  # elements whose tag byte was compared
        while True:
            arrived = -(-have // stride)  # elements whose tag byte is here
            if not bool((tags[checked * stride : have : stride] == tag).all()):
                self._buffer = bytes(run[:have]) + self._buffer[self._position :]
                self._position = 0
                return None
            checked = arrived
            if have == size:
                return run
            chunk = self._receive(min(size - have, _RECEIVE_CHUNK))
            if not chunk:
                raise ConnectionError("the server closed the connection mid-reply")
            view[have : have + len(chunk)] = chunk
            have += len(chunk)


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


def read_image_reply(receive: Callable[[int], bytes], msgid: int) -> list[WireImage]:
    """The ``simGetImages`` reply to request ``msgid``, pulling bytes from ``receive``
    (``socket.recv``-like: up to n bytes, empty at the end).

    Raises:
        AirSimRpcError: the server answered with an error.
        AirSimWireError: not a reply to ``msgid``, or not image responses.
        ConnectionError: the connection ended mid-reply.
    """
    reader = _Reader(receive)
    if reader.array_header() != 4 or reader.value() != RESPONSE:
        raise AirSimWireError("not a msgpack-rpc reply")
    answered = reader.value()
    error = reader.value()
    if answered != msgid:
        raise AirSimWireError(f"a reply to call {answered} while waiting for call {msgid}")
    if error is not None:
        reader.value()
        raise AirSimRpcError(str(error))
    return [_read_image(reader) for _ in range(reader.array_header())]


def _read_image(reader: _Reader) -> WireImage:
    fields: dict[str, Any] = {}
    for _ in range(reader.map_header()):
        key = reader.value()
        fields[key] = reader.floats() if key == "image_data_float" else reader.value()
    try:
        return WireImage(
            camera_name=str(fields["camera_name"]),
            image_type=int(fields["image_type"]),
            width=int(fields["width"]),
            height=int(fields["height"]),
            time_stamp=int(fields["time_stamp"]),
            pixels_as_float=bool(fields["pixels_as_float"]),
            image_data_uint8=bytes(fields["image_data_uint8"]),
            image_data_float=fields["image_data_float"],
        )
    except (KeyError, TypeError, ValueError) as error:
        raise AirSimWireError(f"not an ImageResponse: {error!r}") from error


class AirSimImageChannel:
    """A connection of its own to AirSim's RPC port for ``simGetImages``, whose replies are
    read straight into arrays.

    Args:
        host: the server's address.
        port: its RPC port.
        timeout_s: how long connecting and each wait for reply bytes may take.

    Raises:
        OSError: the server cannot be reached.
    """

    def __init__(self, host: str, port: int, timeout_s: float) -> None:
        self._socket = socket.create_connection((host, port), timeout=timeout_s)
        self._socket.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._ids = itertools.count(1)

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
        return read_image_reply(self._socket.recv, msgid)

    def close(self) -> None:
        self._socket.close()
