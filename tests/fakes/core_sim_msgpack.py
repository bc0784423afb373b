"""msgpack as ProjectAirSim's core_sim writes it, for the fake server.

core_sim packs with msgpack-c cpp-6.1.0 (``CMakeLists.txt`` of iamaisim/ProjectAirSim), whose
``packer::pack_float`` writes a float with an integral value as the smallest integer that holds
it and every other float as float32 (``include/msgpack/v1/pack.hpp`` of msgpack/msgpack-c at
that tag): a depth image's ``data_float`` is a mix of 5-byte float32 elements and 1- to 9-byte
integers. Python's msgpack writes float64 instead, so the fake packs these values itself.
Image messages are maps in ``image_message.hpp``'s ``MSGPACK_DEFINE_MAP`` order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgpack
import numpy as np

_UINT64_MAX_AS_FLOAT32 = float(np.float32(2.0**64))
_INT64_MIN = -(2.0**63)
#: Order of ``ImageMessage``'s fields (core_sim/src/message/image_message.cpp).
IMAGE_FIELDS = (
    "time_stamp",
    "height",
    "width",
    "encoding",
    "big_endian",
    "step",
    "data",
    "pos_x",
    "pos_y",
    "pos_z",
    "rot_w",
    "rot_x",
    "rot_y",
    "rot_z",
    "annotations",
    "data_float",
)


def _integral(values: np.ndarray) -> np.ndarray:
    finite = np.isfinite(values)
    whole = np.zeros(values.shape, dtype=bool)
    whole[finite] = np.floor(values[finite]) == values[finite]
    return whole & (values <= _UINT64_MAX_AS_FLOAT32) & (values >= _INT64_MIN)


def pack_float(value: float) -> bytes:
    """One float as ``pack_float`` writes it."""
    return pack_floats(np.array([value], dtype=np.float32))[1:]


def pack_floats(values: np.ndarray) -> bytes:
    """A msgpack array of float32 values as msgpack-c writes a ``std::vector<float>``."""
    flat = np.asarray(values, dtype=np.float32).ravel()
    count = flat.size
    if count < 16:
        header = bytes([0x90 | count])
    elif count < 65536:
        header = b"\xdc" + count.to_bytes(2, "big")
    else:
        header = b"\xdd" + count.to_bytes(4, "big")
    integral = _integral(flat)
    # Integers as pack_imp_uint64 / pack_imp_int64 choose them; other values as float32.
    ints = np.where(integral, flat, 0.0).astype(np.int64)
    kinds = [
        (~integral, 5, 0xCA),
        (integral & (ints >= 0) & (ints < 128), 1, None),
        (integral & (ints >= 128) & (ints < 256), 2, 0xCC),
        (integral & (ints >= 256) & (ints < 65536), 3, 0xCD),
        (integral & (ints >= 65536) & (ints < 2**32), 5, 0xCE),
        (integral & (ints >= 2**32), 9, 0xCF),
        (integral & (ints < 0) & (ints >= -32), 1, None),
        (integral & (ints < -32) & (ints >= -128), 2, 0xD0),
        (integral & (ints < -128) & (ints >= -32768), 3, 0xD1),
        (integral & (ints < -32768) & (ints >= -(2**31)), 5, 0xD2),
        (integral & (ints < -(2**31)), 9, 0xD3),
    ]
    lengths = np.zeros(count, dtype=np.int64)
    for mask, length, _tag in kinds:
        lengths[mask] = length
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    out = np.zeros(int(lengths.sum()), dtype=np.uint8)
    for mask, length, tag in kinds:
        where = starts[mask]
        if where.size == 0:
            continue
        if tag is None:  # fixint: the value is the byte
            out[where] = ints[mask].astype(np.int8).view(np.uint8)
            continue
        out[where] = tag
        width = length - 1
        if tag == 0xCA:
            payload = flat[mask].astype(">f4").view(np.uint8).reshape(-1, 4)
        else:
            signed = ">i8" if tag >= 0xD0 else ">u8"
            payload = ints[mask].astype(signed).view(np.uint8).reshape(-1, 8)[:, 8 - width :]
        out[where[:, None] + 1 + np.arange(width)] = payload
    return header + out.tobytes()


def pack_image_message(fields: Mapping[str, Any]) -> bytes:
    """An ``ImageMessage`` map: floats as msgpack-c writes them, ``data`` as bin."""
    parts = [b"\xde" + len(IMAGE_FIELDS).to_bytes(2, "big")]
    for name in IMAGE_FIELDS:
        parts.append(msgpack.packb(name))
        value = fields[name]
        if name == "data_float":
            parts.append(pack_floats(np.asarray(value, dtype=np.float32)))
        elif name.startswith(("pos_", "rot_")):
            parts.append(pack_float(float(value)))
        else:
            parts.append(msgpack.packb(value, use_bin_type=True))
    return b"".join(parts)
