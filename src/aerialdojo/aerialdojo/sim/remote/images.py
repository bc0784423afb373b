"""Image payloads of AirSim's and CARLA's wire formats, decoded into aerialdojo's arrays
(ProjectAirSim's: ``projectairsim_wire``).

RGB becomes HxWx3 uint8 in RGB order; depth becomes HxW float32 metres along the optical axis
with +inf where nothing was hit (REP-118). AirSim's are decoded in the buffers their payloads
were received into, which an image message takes as they are (``image_codec.message_array``):
past the socket, a colour image is only swapped in place, a depth image only converted from
the wire's big-endian floats. A payload of the wrong size or encoding means the
server answered nonsense: a ``SimulatorFaultError``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from aerialdojo.errors import SimulatorFaultError

#: CARLA's depth camera encodes 0..1000 m in 24 bits of the R, G and B channels.
CARLA_DEPTH_RANGE_M = 1000.0


def _buffer(data: bytes | Sequence[int], what: str) -> np.ndarray:
    if isinstance(data, bytes | bytearray | memoryview):
        return np.frombuffer(data, dtype=np.uint8)
    # Request/reply answers carry JSON arrays of byte values instead of binary.
    try:
        return np.asarray(data, dtype=np.uint8)
    except (TypeError, ValueError) as error:
        raise SimulatorFaultError(f"{what}: image data is neither bytes nor byte values") from error


def _shaped(flat: np.ndarray, shape: tuple[int, ...], what: str) -> np.ndarray:
    expected = int(np.prod(shape))
    if flat.size != expected:
        raise SimulatorFaultError(
            f"{what}: {flat.size} values for a {'x'.join(map(str, shape))} image "
            f"({expected} expected)"
        )
    return flat.reshape(shape)


def copy_reversed_channels(rgb: np.ndarray, bgr: np.ndarray) -> None:
    """Write ``bgr``'s first three channels into ``rgb`` (HxWx3) in reverse order, one channel
    plane at a time: numpy copies a reversed channel axis element by element, five times
    slower at 256² (0.34 against 0.07 ms)."""
    for channel in range(3):
        np.copyto(rgb[:, :, channel], bgr[:, :, 2 - channel])


def rgb_in_place_of_bgr(pixels: np.ndarray, width: int, height: int, what: str) -> np.ndarray:
    """An RGB image over ``pixels``, packed 3-channel BGR (AirSim's uncompressed Scene image)
    whose red and blue planes are swapped in place: a payload ``airsim_wire`` received into a
    message buffer stays that buffer.

    Raises:
        SimulatorFaultError: the payload does not hold ``height*width*3`` bytes.
    """
    rgb = _shaped(pixels, (height, width, 3), what)
    # Over pixels rather than rows and columns: one strided loop a plane, a third faster.
    by_pixel = rgb.reshape(-1, 3)
    red = by_pixel[:, 2].copy()
    np.copyto(by_pixel[:, 2], by_pixel[:, 0])
    np.copyto(by_pixel[:, 0], red)
    return rgb


def depth_from_floats(values: np.ndarray, width: int, height: int, what: str) -> np.ndarray:
    """A depth image over AirSim's ``image_data_float``, as ``airsim_wire`` reads it (a flat
    float32 array of metres, in a message buffer where the server sent one float run).

    Raises:
        SimulatorFaultError: the array does not hold ``height*width`` values.
    """
    if values.size != width * height:
        raise SimulatorFaultError(
            f"{what}: {values.size} values for a {height}x{width} image ({width * height} expected)"
        )
    return values.reshape(height, width)


def rgb_from_carla_bgra(data: bytes, width: int, height: int, what: str) -> np.ndarray:
    """An RGB image from a CARLA camera's BGRA ``raw_data``.

    Raises:
        SimulatorFaultError: wrong payload size.
    """
    bgra = _shaped(_buffer(data, what), (height, width, 4), what)
    rgb = np.empty((height, width, 3), np.uint8)
    copy_reversed_channels(rgb, bgra)
    return rgb


def depth_from_carla_bgra(data: bytes, width: int, height: int, what: str) -> np.ndarray:
    """Planar depth in metres from a CARLA depth camera's BGRA ``raw_data``.

    CARLA packs normalised depth d in [0, 1] as R + 256 G + 65536 B over 2^24 - 1, d times
    1000 m being the distance; the far plane (d = 1) is read as "no hit".

    Raises:
        SimulatorFaultError: wrong payload size.
    """
    bgra = _shaped(_buffer(data, what), (height, width, 4), what).astype(np.float64)
    normalised = (bgra[:, :, 2] + bgra[:, :, 1] * 256.0 + bgra[:, :, 0] * 65536.0) / (
        256.0**3 - 1.0
    )
    depth = (normalised * CARLA_DEPTH_RANGE_M).astype(np.float32)
    depth[normalised >= 1.0] = np.inf
    return depth
