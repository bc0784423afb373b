"""Helpers of the site tests: site files as a team writes them, a walled yard surveyed with a
tape and a compass, its photographs taken with a phone (JPEG, rotated by EXIF)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from PIL import Image

# A 40 x 30 m yard with a wall from the south fence up to y = 22 m, taller than the fence's
# ceiling: from the west half to the east half a vehicle must go round its north end.
YARD: dict[str, Any] = {
    "format": "aerialdojo-site/1",
    "name": "walled_yard",
    "description": "a yard split by a wall",
    "family": "urban",
    "frame": {
        "method": "tape",
        "origin": "the yard's south-west fence post; x along the south fence (east)",
        "accuracy_m": 0.05,
        "surveyed": "2026-11-30, site team",
    },
    "geofence": {
        "polygon_m": [[0.0, 0.0], [40.0, 0.0], [40.0, 30.0], [0.0, 30.0]],
        "min_z_m": 0.0,
        "max_z_m": 10.0,
        "margin_m": 0.5,
    },
    "landmarks": [
        {"name": "water tower", "position_m": [0.0, 0.0, 15.0]},
        {"name": "flag pole", "position_m": [40.0, 30.0, 8.0]},
    ],
    "starts": [
        {"name": "west_pad", "position_m": [5.0, 5.0, 2.0], "yaw_deg": 0.0},
        {"name": "north_pad", "position_m": [5.0, 25.0, 2.0], "yaw_deg": -90.0},
    ],
    "targets": [
        {
            "id": "crate",
            "name": "blue crate",
            "position_m": [35.0, 5.0, 0.5],
            "size_m": [1.0, 1.0, 1.0],
            "anchor": {"position_m": [33.0, 5.0, 2.0], "yaw_deg": 0.0},
            "description": "a blue plastic crate by the east fence",
            "reference_image": "photos/crate.jpg",
        }
    ],
    "obstacles": [
        {"name": "wall", "polygon_m": [[18.0, -1.0], [20.0, -1.0], [20.0, 22.0], [18.0, 22.0]],
         "max_z_m": 20.0},
        {"name": "lamp post", "center_m": [30.0, 25.0], "radius_m": 0.2, "max_z_m": 5.0},
    ],
}  # fmt: skip

SiteWriter = Callable[..., Path]


def write_photo(path: Path, size: tuple[int, int] = (1200, 800), *, rotated: bool = True) -> None:
    """A phone's JPEG: a left half red and a right half blue, stored landscape with an EXIF
    orientation of 6 (shown turned 90 degrees clockwise) when ``rotated``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", size, (200, 30, 30))
    image.paste((30, 30, 200), (size[0] // 2, 0, size[0], size[1]))
    exif = Image.Exif()
    if rotated:
        exif[0x0112] = 6
    image.save(path, format="JPEG", quality=95, exif=exif)


def write_site_file(directory: Path, edit: Callable[[dict[str, Any]], None] | None = None) -> Path:
    """The yard, changed by ``edit(document)`` if given, as ``directory/site.yaml`` with its
    photographs; returns the file."""
    document = copy.deepcopy(YARD)
    if edit is not None:
        edit(document)
    directory.mkdir(parents=True, exist_ok=True)
    for target in document.get("targets", []):
        image = target.get("reference_image")
        if isinstance(image, str) and image.startswith("photos/"):
            write_photo(directory / image)
    path = directory / "site.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path
