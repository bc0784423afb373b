"""Camera images as the model sees them: base64 data URLs of RGB (PNG or JPEG) and of depth
rendered to grey levels as the prompts describe."""

from __future__ import annotations

import base64
import io
import os
import struct
import zlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from aerialdojo.errors import ConfigError

IMAGE_FORMATS = ("png", "jpeg")
_MIME = {"png": "image/png", "jpeg": "image/jpeg"}
#: JPEG quality of RGB views sent as JPEG.
JPEG_QUALITY = 90


@dataclass(frozen=True)
class EncodedImage:
    """One image ready to send.

    Attributes:
        data: the file bytes (PNG or JPEG).
        mime: ``image/png`` or ``image/jpeg``.
    """

    data: bytes
    mime: str

    def data_url(self) -> str:
        """``data:<mime>;base64,<bytes>`` as the chat-completions ``image_url`` takes it."""
        return f"data:{self.mime};base64,{base64.b64encode(self.data).decode('ascii')}"


def encode_rgb(rgb: np.ndarray, image_format: str = "png") -> EncodedImage:
    """An HxWx3 uint8 image as PNG (lossless) or JPEG.

    Raises:
        ConfigError: an unknown format.
    """
    if image_format not in _MIME:
        raise ConfigError(f"image format {image_format!r} is not one of {', '.join(_MIME)}")
    pixels = np.ascontiguousarray(rgb, dtype=np.uint8)
    if image_format == "png":
        return EncodedImage(png_bytes(pixels), _MIME["png"])
    buffer = io.BytesIO()
    Image.fromarray(pixels, mode="RGB").save(buffer, format="JPEG", quality=JPEG_QUALITY)
    return EncodedImage(buffer.getvalue(), _MIME[image_format])


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_PNG_COLOUR_TYPES = {1: 0, 3: 2}  # channels -> PNG colour type (greyscale, truecolour)
_PNG_FILTER_UP = 2


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(pixels: np.ndarray) -> bytes:
    """An HxW (grey) or HxWx3 (RGB) uint8 image as an 8-bit PNG (ISO/IEC 15948: IHDR, one
    IDAT, IEND; no interlace).

    Every row is filtered by "Up" (its difference from the row above), computed by numpy in
    one pass, and deflated at zlib level 1: about three times faster than Pillow's encoder,
    which tries the five filters on every row, for files within a few per cent of its size
    on rendered views. zlib releases the GIL while it compresses, so the images of a
    decision encode side by side.
    """
    height, width = pixels.shape[:2]
    channels = 1 if pixels.ndim == 2 else pixels.shape[2]
    rows = pixels.reshape(height, width * channels)
    filtered = np.empty((height, width * channels + 1), dtype=np.uint8)
    filtered[:, 0] = _PNG_FILTER_UP
    filtered[0, 1:] = rows[0]
    np.subtract(rows[1:], rows[:-1], out=filtered[1:, 1:])  # modulo 256, as PNG's Up is
    header = struct.pack(">IIBBBBB", width, height, 8, _PNG_COLOUR_TYPES[channels], 0, 0, 0)
    return b"".join(
        (
            _PNG_SIGNATURE,
            _png_chunk(b"IHDR", header),
            _png_chunk(b"IDAT", zlib.compress(filtered.data, 1)),
            _png_chunk(b"IEND", b""),
        )
    )


def depth_to_grey(depth: np.ndarray, max_depth_m: float) -> np.ndarray:
    """Planar depth (m, +inf for sky) as 8-bit grey: 255 at 0 m falling linearly to 0 at
    ``max_depth_m``; farther and sky are 0 (black). Near is bright, as the prompts say."""
    # The same operations in the same order as 1 - clip(d) / max, in one buffer.
    scaled = np.where(np.isfinite(depth), depth, max_depth_m)
    np.clip(scaled, 0.0, max_depth_m, out=scaled)
    scaled /= max_depth_m
    np.subtract(1.0, scaled, out=scaled)
    scaled *= 255.0
    np.round(scaled, out=scaled)
    grey: np.ndarray = scaled.astype(np.uint8)
    return grey


def encode_depth(depth: np.ndarray, max_depth_m: float) -> EncodedImage:
    """Depth rendered by ``depth_to_grey``, as a greyscale PNG (lossless: grey levels are
    distances)."""
    return EncodedImage(png_bytes(depth_to_grey(depth, max_depth_m)), _MIME["png"])


#: Encodes a decision's images side by side: zlib and Pillow release the GIL while they
#: compress, and the eight PNGs of four 640x640 RGB-D views were most of the adapter's time.
_ENCODERS = ThreadPoolExecutor(
    max_workers=max(1, min(4, os.cpu_count() or 1)), thread_name_prefix="aerialdojo-image-encode"
)


def encode_concurrently(encodings: Sequence[Callable[[], EncodedImage]]) -> list[EncodedImage]:
    """Run ``encodings`` (e.g. ``lambda: encode_rgb(view.rgb)``) on the encoder threads;
    their images in the same order, the same bytes as one after another."""
    return list(_ENCODERS.map(lambda encode: encode(), encodings))


def labelled_image(label: str, image: EncodedImage) -> list[dict[str, Any]]:
    """A chat message's content parts for one image: its label, then the image."""
    return [
        {"type": "text", "text": label},
        {"type": "image_url", "image_url": {"url": image.data_url()}},
    ]
