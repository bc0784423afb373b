"""The geographic semantic map (GSM; CityNav, section 4.2 and appendix C.2), ROS-free.

Five binary layers on one grid aligned with the map frame: the current field of view and the
explored area (from the agent's GNSS pose: the nadir view's square footprint), the landmarks
the description names (their map polygons), potential goals and surrounding objects (from
the agent's own nadir view, projected to the map with its depth). Nothing comes from the
goal's coordinates. The paper detects goals and surroundings with Grounding DINO prompted
with names a language model extracted; here the detector is colour: the goal's colour word
from the description, and the SensatUrban classes that colour tells apart (vegetation and
roads) for the surroundings.

Layout: layer ``[row, column]`` is the cell whose lower-left corner is
``origin + (column, row) * resolution``, rows along +y: the data order of
``nav_msgs/OccupancyGrid``, so the layers publish without reshuffling. Polygons are filled
with Pillow's rasteriser; the landmark layer is filled once per episode.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from aerialdojo.citynav.city import CityMap, Landmark
from aerialdojo.geometry import Pose

LAYERS = ("current_view", "explored", "landmarks", "potential_goals", "surroundings")
#: Metres per cell unless told otherwise (a 540 m city is 270 x 270 cells).
DEFAULT_RESOLUTION_M = 2.0
#: Hue (degrees) of each colour word the detector knows; a pixel matches within the tolerance.
COLOUR_HUES = {
    "red": 0.0,
    "orange": 26.0,
    "yellow": 50.0,
    "green": 110.0,
    "cyan": 190.0,
    "blue": 222.0,
    "purple": 276.0,
}
HUE_TOLERANCE_DEG = 12.0
MIN_SATURATION = 0.35
MIN_VALUE = 0.2


@dataclass(frozen=True, kw_only=True)
class GridSpec:
    """A grid over the map frame.

    Attributes:
        origin: map-frame ``(x, y)`` of the lower-left corner of cell ``[0, 0]``.
        resolution_m: cell edge, metres.
        width: columns (along x).
        height: rows (along y).
    """

    origin: tuple[float, float]
    resolution_m: float
    width: int
    height: int

    @classmethod
    def covering(cls, bounds: tuple[float, float, float, float], resolution_m: float) -> GridSpec:
        """The smallest grid of ``resolution_m`` cells covering ``bounds`` (the paper's "smallest
        2D map that encompasses the entire 3D scene")."""
        x0, y0, x1, y1 = bounds
        return cls(
            origin=(x0, y0),
            resolution_m=resolution_m,
            width=math.ceil((x1 - x0) / resolution_m),
            height=math.ceil((y1 - y0) / resolution_m),
        )

    def to_cells(self, xy: np.ndarray) -> np.ndarray:
        """Fractional ``(column, row)`` of map points (N, 2)."""
        return (np.asarray(xy, dtype=np.float64) - self.origin) / self.resolution_m

    def cell_centres(self) -> tuple[np.ndarray, np.ndarray]:
        """Map ``x`` and ``y`` of every cell centre, each (height, width)."""
        xs = self.origin[0] + (np.arange(self.width) + 0.5) * self.resolution_m
        ys = self.origin[1] + (np.arange(self.height) + 0.5) * self.resolution_m
        return np.meshgrid(xs, ys)

    def fill_polygons(self, polygons: list[np.ndarray]) -> np.ndarray:
        """A boolean layer with every map polygon (N, 2) filled: cell ``[r, c]`` is marked
        when its lower-left corner lies in a polygon or on its outline (Pillow's fill of
        the polygon in cell coordinates, its vertices rounded to whole cells)."""
        canvas = Image.new("1", (self.width, self.height), 0)
        draw = ImageDraw.Draw(canvas)
        for polygon in polygons:
            cells = self.to_cells(polygon)
            draw.polygon([(float(c), float(r)) for c, r in cells], fill=1, outline=1)
        return np.asarray(canvas, dtype=bool)


def nadir_footprint(
    pose: Pose, intrinsics: np.ndarray, size: tuple[int, int], ground_z: float
) -> np.ndarray:
    """The map-frame corners (4, 2) of a nadir camera's view of the ground: a square twice the
    altitude across for 90 deg (CityNav, appendix C.2), turned with the yaw."""
    height, width = size
    corners = np.array(((0.0, 0.0), (width, 0.0), (width, height), (0.0, height)))
    return nadir_ground_points(pose, intrinsics, corners, np.full(4, pose.z - ground_z))


def nadir_ground_points(
    pose: Pose, intrinsics: np.ndarray, pixels: np.ndarray, depth: np.ndarray
) -> np.ndarray:
    """Map ``(x, y)`` of image points (N, 2: u right, v down) of a nadir camera at ``pose``
    whose planar depths are ``depth``: image up is the body's forward, image left its left
    (the CityNav rig, ``sim.backend.nadir_rig``)."""
    f_x, f_y = intrinsics[0, 0], intrinsics[1, 1]
    c_x, c_y = intrinsics[0, 2], intrinsics[1, 2]
    forward = (c_y - pixels[:, 1]) / f_y * depth
    left = (c_x - pixels[:, 0]) / f_x * depth
    c, s = math.cos(pose.yaw), math.sin(pose.yaw)
    return np.stack((pose.x + c * forward - s * left, pose.y + s * forward + c * left), axis=1)


@dataclass(frozen=True)
class Hsv:
    """Hue (degrees), saturation and value (both in [0, 1]) of an RGB image's pixels."""

    hue: np.ndarray
    saturation: np.ndarray
    value: np.ndarray

    @classmethod
    def of(cls, rgb: np.ndarray) -> Hsv:
        """The HSV planes of an HxWx3 uint8 image."""
        r, g, b = (rgb[..., k].astype(np.float32) for k in range(3))
        high = np.maximum(np.maximum(r, g), b)
        chroma = high - np.minimum(np.minimum(r, g), b)
        safe = np.maximum(chroma, np.float32(1e-6))
        hue = np.where(
            high == r,
            np.mod((g - b) / safe, 6.0),
            np.where(high == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0),
        )
        return cls(hue * 60.0, chroma / np.maximum(high, 1.0), high / 255.0)

    def colour(self, hue_deg: float, tolerance_deg: float = HUE_TOLERANCE_DEG) -> np.ndarray:
        """Pixels of a saturated colour within ``tolerance_deg`` of ``hue_deg``."""
        off = np.abs(np.mod(self.hue - hue_deg + 180.0, 360.0) - 180.0)
        return np.asarray(
            (off <= tolerance_deg) & (self.saturation >= MIN_SATURATION) & (self.value >= MIN_VALUE)
        )

    def asphalt(self) -> np.ndarray:
        """Dark grey pixels (roads)."""
        return np.asarray((self.value < 0.38) & (self.saturation < 0.16))


def goal_colour(description: str) -> str | None:
    """The first colour word of a description (the goal's, as CityNav descriptions name the
    goal first), or None."""
    words = re.findall(r"[a-z]+", description.lower())
    return next((word for word in words if word in COLOUR_HUES), None)


@dataclass
class GeoSemanticMap:
    """One agent's GSM for one episode.

    Args:
        city: the city's public map.
        description: the goal description (which landmarks and which colour).
        resolution_m: cell edge, metres.
    """

    city: CityMap
    description: str
    resolution_m: float = DEFAULT_RESOLUTION_M

    def __post_init__(self) -> None:
        self.grid = GridSpec.covering(self.city.bounds, self.resolution_m)
        shape = (self.grid.height, self.grid.width)
        self.named: list[Landmark] = self.city.landmarks_named_in(self.description)
        self.landmark_masks = {
            landmark.name: self.grid.fill_polygons([np.asarray(landmark.polygon)])
            for landmark in self.named
        }
        self.layers = {name: np.zeros(shape, dtype=bool) for name in LAYERS}
        for mask in self.landmark_masks.values():
            self.layers["landmarks"] |= mask
        #: Height of the surface where a potential goal was seen, map frame (NaN elsewhere).
        self.goal_height = np.full(shape, np.nan, dtype=np.float32)
        self.colour = goal_colour(self.description)

    def update(
        self, pose: Pose, rgb: np.ndarray, depth: np.ndarray, intrinsics: np.ndarray
    ) -> None:
        """Mark the current view, the explored area and what the nadir view shows.

        Args:
            pose: the agent's GNSS pose, map frame.
            rgb: the nadir view, HxWx3 uint8.
            depth: its planar depth, HxW metres (+inf where nothing was hit).
            intrinsics: its 3x3 pinhole matrix.
        """
        footprint = nadir_footprint(pose, intrinsics, depth.shape, self.city.ground_z)
        view = self.grid.fill_polygons([footprint])
        self.layers["current_view"] = view
        self.layers["explored"] |= view
        finite = np.isfinite(depth)
        # What the view shows replaces what was seen there before.
        self.layers["potential_goals"] &= ~view
        self.layers["surroundings"] &= ~view
        self.goal_height[view] = np.nan
        planes = Hsv.of(rgb)
        if self.colour is not None:
            goals = planes.colour(COLOUR_HUES[self.colour]) & finite
            self._mark(pose, goals, depth, intrinsics, "potential_goals")
        surroundings = (planes.colour(COLOUR_HUES["green"], 35.0) | planes.asphalt()) & finite
        self._mark(pose, surroundings, depth, intrinsics, "surroundings")

    def _mark(
        self, pose: Pose, mask: np.ndarray, depth: np.ndarray, intrinsics: np.ndarray, layer: str
    ) -> None:
        rows, columns = np.nonzero(mask)
        if not len(rows):
            return
        pixels = np.stack((columns + 0.5, rows + 0.5), axis=1)
        distances = depth[rows, columns].astype(np.float64)
        cells = np.floor(
            self.grid.to_cells(nadir_ground_points(pose, intrinsics, pixels, distances))
        ).astype(int)
        inside = (
            (cells[:, 0] >= 0)
            & (cells[:, 0] < self.grid.width)
            & (cells[:, 1] >= 0)
            & (cells[:, 1] < self.grid.height)
        )
        cells = cells[inside]
        self.layers[layer][cells[:, 1], cells[:, 0]] = True
        if layer == "potential_goals":
            self.goal_height[cells[:, 1], cells[:, 0]] = (pose.z - distances[inside]).astype(
                np.float32
            )

    def stacked(self) -> np.ndarray:
        """The five layers (5, rows, columns) as 0 / 100 (OccupancyGrid's occupied)."""
        return np.stack([self.layers[name] for name in LAYERS]).astype(np.int8) * np.int8(100)
