"""What a remote backend can tell about the server it drives, for ``aerialdojo doctor``."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class ServerCamera:
    """One camera as the server reports it (not as the bridge asked for it).

    Attributes:
        width: image width the server renders, pixels.
        height: image height, pixels.
        fov_deg: horizontal field of view, degrees.
        colour_encoding: encoding of the colour image on the wire (e.g. ``BGR``).
        depth_encoding: encoding of the depth image on the wire (e.g. ``32FC1``).
    """

    width: int
    height: int
    fov_deg: float
    colour_encoding: str
    depth_encoding: str


def fov_of_focal_length(width: int, focal_px: float) -> float:
    """Horizontal field of view, degrees, of a pinhole camera ``width`` pixels wide."""
    return math.degrees(2.0 * math.atan(width / 2.0 / focal_px))
