"""Camera images as the model sees them: base64 data URLs of RGB (PNG or JPEG) and of depth
rendered to grey levels as the prompts describe."""

from __future__ import annotations

import base64
import hashlib
import io
import os
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

    @property
    def digest(self) -> str:
        """SHA-256 of the bytes: the image's name in transcripts."""
        return hashlib.sha256(self.data).hexdigest()

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
    buffer = io.BytesIO()
    picture = Image.fromarray(np.ascontiguousarray(rgb, dtype=np.uint8), mode="RGB")
    if image_format == "jpeg":
        picture.save(buffer, format="JPEG", quality=JPEG_QUALITY)
    else:
        # compress_level 1: a 640x640 view in a few milliseconds; level 6 costs ~5x more time
        # for ~10 % fewer bytes, which the request's latency never notices.
        picture.save(buffer, format="PNG", compress_level=1)
    return EncodedImage(buffer.getvalue(), _MIME[image_format])


def depth_to_grey(depth: np.ndarray, max_depth_m: float) -> np.ndarray:
    """Planar depth (m, +inf for sky) as 8-bit grey: 255 at 0 m falling linearly to 0 at
    ``max_depth_m``; farther and sky are 0 (black). Near is bright, as the prompts say."""
    finite = np.where(np.isfinite(depth), depth, max_depth_m)
    scaled = 1.0 - np.clip(finite, 0.0, max_depth_m) / max_depth_m
    grey: np.ndarray = np.round(scaled * 255.0).astype(np.uint8)
    return grey


def encode_depth(depth: np.ndarray, max_depth_m: float) -> EncodedImage:
    """Depth rendered by ``depth_to_grey``, as a greyscale PNG (lossless: grey levels are
    distances)."""
    buffer = io.BytesIO()
    Image.fromarray(depth_to_grey(depth, max_depth_m), mode="L").save(
        buffer, format="PNG", compress_level=1
    )
    return EncodedImage(buffer.getvalue(), "image/png")


#: Encodes a decision's images side by side: Pillow releases the GIL while it compresses, and
#: the eight PNGs of four 640x640 RGB-D views were most of the adapter's time per decision.
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
