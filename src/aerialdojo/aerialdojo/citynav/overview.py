"""A PNG overview of an embedded CityNav city: the nadir view from above its centre, with the
landmark outlines and names of its public map drawn over it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from aerialdojo.citynav.city import load_city
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import nadir_rig
from aerialdojo.sim.embedded.renderer import render_views

_OUTLINES = {
    "street": (250, 250, 250),
    "building": (250, 60, 60),
    "park": (30, 90, 30),
    "square": (60, 60, 220),
}


def write_city_overview(name: str, out: Path, *, size: int = 640) -> Path:
    """Render city ``name`` from straight above its centre (its whole extent in view) and
    write the PNG with its landmarks outlined and named.

    Raises:
        UnknownSceneError: not an embedded CityNav city.
    """
    city = load_city(name)
    x0, y0, x1, y1 = city.map.bounds
    altitude = max(x1 - x0, y1 - y0) / 2.0 + 5.0  # a 90 deg view spans twice the altitude
    pose = Pose((x0 + x1) / 2.0, (y0 + y1) / 2.0, city.map.ground_z + altitude, np.pi / 2.0)
    frame = render_views(city.scene, pose, nadir_rig(size, size), with_ground_truth_ids=False)
    picture = Image.fromarray(frame["down"].rgb)
    draw = ImageDraw.Draw(picture)
    scale = size / (2.0 * altitude)

    def pixel(x: float, y: float) -> tuple[float, float]:
        # Facing north: image up is north, image right is east.
        return size / 2.0 + (x - pose.x) * scale, size / 2.0 - (y - pose.y) * scale

    for landmark in city.map.landmarks:
        colour = _OUTLINES[landmark.kind]
        draw.polygon([pixel(x, y) for x, y in landmark.polygon], outline=colour)
        if landmark.kind != "street" or landmark.polygon[2][0] - landmark.polygon[0][0] < 20.0:
            cx, cy = landmark.centroid
            draw.text(pixel(cx, cy), landmark.name, fill=colour)
    out.parent.mkdir(parents=True, exist_ok=True)
    picture.save(out)
    return out
