"""Map frame <-> geographic coordinates (CityNav, section 3.1, "OpenStreetMap" and "For the
use of GNSS").

The projection is the local tangent plane of the WGS 84 ellipsoid at a scene's geographic
origin: the map frame is East-North-Up (REP-103) with its origin at that latitude, longitude
and ellipsoidal height, so ``x`` points east, ``y`` north and ``z`` up. Geodetic coordinates
go to Earth-centred, Earth-fixed (ECEF) coordinates and are rotated into the origin's ENU
frame; the inverse solves the latitude by fixed-point iteration, exact to well below a
millimetre over a city (tested both ways). A GNSS receiver reports the geodetic coordinates
of the map-frame pose; the goal's coordinates are never given (section 3.1).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: WGS 84 semi-major axis, metres.
WGS84_A = 6_378_137.0
#: WGS 84 flattening.
WGS84_F = 1.0 / 298.257223563
_E2 = WGS84_F * (2.0 - WGS84_F)


def geodetic_to_ecef(lat_deg: float, lon_deg: float, height_m: float) -> np.ndarray:
    """ECEF position of a geodetic point (degrees, metres above the ellipsoid)."""
    lat, lon = math.radians(lat_deg), math.radians(lon_deg)
    normal = WGS84_A / math.sqrt(1.0 - _E2 * math.sin(lat) ** 2)
    return np.array(
        (
            (normal + height_m) * math.cos(lat) * math.cos(lon),
            (normal + height_m) * math.cos(lat) * math.sin(lon),
            (normal * (1.0 - _E2) + height_m) * math.sin(lat),
        )
    )


def ecef_to_geodetic(point: np.ndarray) -> tuple[float, float, float]:
    """Latitude and longitude (degrees) and ellipsoidal height (metres) of an ECEF point."""
    x, y, z = (float(v) for v in point)
    lon = math.atan2(y, x)
    radius = math.hypot(x, y)
    lat = math.atan2(z, radius * (1.0 - _E2))
    height = 0.0
    for _ in range(8):
        normal = WGS84_A / math.sqrt(1.0 - _E2 * math.sin(lat) ** 2)
        height = radius / math.cos(lat) - normal
        lat = math.atan2(z, radius * (1.0 - _E2 * normal / (normal + height)))
    return math.degrees(lat), math.degrees(lon), height


@dataclass(frozen=True, kw_only=True)
class GeoReference:
    """Where a scene's map frame lies on Earth.

    Attributes:
        latitude_deg: latitude of the map origin, degrees north.
        longitude_deg: longitude of the map origin, degrees east.
        height_m: ellipsoidal height of the map origin, metres.
    """

    latitude_deg: float
    longitude_deg: float
    height_m: float = 0.0

    def _rotation(self) -> np.ndarray:
        """Rows: east, north and up unit vectors of the origin, in ECEF."""
        lat, lon = math.radians(self.latitude_deg), math.radians(self.longitude_deg)
        return np.array(
            (
                (-math.sin(lon), math.cos(lon), 0.0),
                (-math.sin(lat) * math.cos(lon), -math.sin(lat) * math.sin(lon), math.cos(lat)),
                (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat)),
            )
        )

    def to_geodetic(self, x: float, y: float, z: float) -> tuple[float, float, float]:
        """Latitude, longitude (degrees) and ellipsoidal height (metres) of a map point."""
        origin = geodetic_to_ecef(self.latitude_deg, self.longitude_deg, self.height_m)
        return ecef_to_geodetic(origin + self._rotation().T @ np.array((x, y, z)))

    def to_map(
        self, latitude_deg: float, longitude_deg: float, height_m: float
    ) -> tuple[float, float, float]:
        """Map-frame position (ENU metres from the origin) of a geodetic point."""
        origin = geodetic_to_ecef(self.latitude_deg, self.longitude_deg, self.height_m)
        local = self._rotation() @ (
            geodetic_to_ecef(latitude_deg, longitude_deg, height_m) - origin
        )
        return float(local[0]), float(local[1]), float(local[2])

    def to_json(self) -> dict[str, float]:
        """The JSON object of this reference (city map files)."""
        return {
            "latitude_deg": self.latitude_deg,
            "longitude_deg": self.longitude_deg,
            "height_m": self.height_m,
        }
