"""What a suite built from a surveyed site records about that site (the suite file's ``site``
block, schema 2.0): the site file it came from and the command that built it, the site
frame, the geofence, the start tolerance the robot route checks the operator's placement
against, and what free space the references were planned in (docs/sites.md)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from aerialdojo.geofence import Geofence
from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.tasks.serialization import JsonObject, written_value

#: The references were planned around the site's surveyed obstacles.
FREE_SPACE_MAP = "map"
#: The site is an embedded scene: the references were planned in its geometry.
FREE_SPACE_EMBEDDED_SCENE = "embedded_scene"
#: No free-space map: episodes carry no reference actions, and their reference length is
#: the straight-line distance from start to anchor (a lower bound of any route).
FREE_SPACE_UNMAPPED = "unmapped"
FREE_SPACES = (FREE_SPACE_MAP, FREE_SPACE_EMBEDDED_SCENE, FREE_SPACE_UNMAPPED)

#: How far the operator-placed start may be from a task's start by default.
DEFAULT_START_TOLERANCE_M = 0.5
DEFAULT_START_TOLERANCE_DEG = 10.0


@dataclass(frozen=True, kw_only=True)
class Datum:
    """The WGS 84 position of a site frame's origin (GNSS surveys)."""

    latitude_deg: float
    longitude_deg: float
    altitude_m: float


@dataclass(frozen=True, kw_only=True)
class SiteFrame:
    """How a site's ENU frame was laid out and surveyed.

    Attributes:
        method: ``gnss``, ``total_station``, ``motion_capture``, ``tape``, ``simulator`` or
            ``embedded_scene``.
        origin: where (0, 0, 0) is, how it is marked, and how +x was aligned with east.
        datum: the origin's WGS 84 position (GNSS surveys), else None.
        accuracy_m: the stated accuracy of surveyed positions, else None.
        surveyed: when and by whom, free text.
    """

    method: str
    origin: str
    datum: Datum | None = None
    accuracy_m: float | None = None
    surveyed: str = ""


@dataclass(frozen=True, kw_only=True)
class StartTolerance:
    """How far the start the operator placed a robot at may be from the task's start.

    Attributes:
        position_m: 3D distance.
        yaw_rad: heading difference, radians (the file says degrees).
    """

    position_m: float = DEFAULT_START_TOLERANCE_M
    yaw_rad: float = math.radians(DEFAULT_START_TOLERANCE_DEG)

    def refusal(self, agent: str, asked: Pose, placed: Pose) -> str:
        """Why a robot placed at ``placed`` may not start a task that starts at ``asked``
        (both map frame), or "" when it may; the message says how far off it is."""
        offset_m = placed.distance_to(asked.position)
        yaw_deg = abs(math.degrees(wrap_angle(placed.yaw - asked.yaw)))
        if offset_m <= self.position_m and yaw_deg <= math.degrees(self.yaw_rad):
            return ""
        return (
            f"the {agent} is placed {offset_m:.2f} m and {yaw_deg:.1f} deg from its start "
            f"({asked.x:.2f}, {asked.y:.2f}, {asked.z:.2f}, yaw "
            f"{math.degrees(asked.yaw):.1f} deg); the site allows {self.position_m:g} m and "
            f"{math.degrees(self.yaw_rad):g} deg"
        )


@dataclass(frozen=True, kw_only=True)
class SiteRecord:
    """The site a suite was built from.

    Attributes:
        name: the site's name.
        sha256: digest of the site file the suite was built from.
        command: the command line that built the suite.
        frame: the site frame's survey.
        geofence: the site's geofence (site frame).
        start_tolerance: the robot route's tolerance on the operator-placed start.
        free_space: ``FREE_SPACES``: what the references were planned in.
        embedded_scene: the embedded scene the site is, or ``""`` for a real site.
        simulator_scene: the simulator server's scene the site is (``aerialdojo tasks
            from-server``), or ``""``.
    """

    name: str
    sha256: str
    command: str
    frame: SiteFrame
    geofence: Geofence
    start_tolerance: StartTolerance
    free_space: str
    embedded_scene: str = ""
    simulator_scene: str = ""

    @property
    def scene(self) -> str:
        """The scene the suite's episodes name."""
        return self.embedded_scene or self.simulator_scene or self.name


def site_record_to_json(record: SiteRecord) -> JsonObject:
    """The suite file's ``site`` block of ``record``."""
    frame: JsonObject = {"method": record.frame.method, "origin": record.frame.origin}
    if record.frame.datum is not None:
        frame["datum"] = vars(record.frame.datum)
    if record.frame.accuracy_m is not None:
        frame["accuracy_m"] = record.frame.accuracy_m
    if record.frame.surveyed:
        frame["surveyed"] = record.frame.surveyed
    fence = record.geofence
    document: JsonObject = {
        "name": record.name,
        "sha256": record.sha256,
        "command": record.command,
        "frame": frame,
        "geofence": {
            "polygon_xy_m": [[written_value(x), written_value(y)] for x, y in fence.polygon],
            "min_z_m": written_value(fence.min_z),
            "max_z_m": written_value(fence.max_z),
            "margin_m": written_value(fence.margin),
        },
        "start_tolerance": {
            "position_m": written_value(record.start_tolerance.position_m),
            "yaw_deg": written_value(math.degrees(record.start_tolerance.yaw_rad)),
        },
        "free_space": record.free_space,
    }
    if record.embedded_scene:
        document["embedded_scene"] = record.embedded_scene
    if record.simulator_scene:
        document["simulator_scene"] = record.simulator_scene
    return document


def site_frame_from_json(frame: JsonObject) -> SiteFrame:
    """The frame of a site file's or a suite's ``frame`` block (they share its fields)."""
    datum = frame.get("datum")
    return SiteFrame(
        method=frame["method"],
        origin=frame["origin"],
        datum=Datum(**datum) if datum is not None else None,
        accuracy_m=frame.get("accuracy_m"),
        surveyed=frame.get("surveyed", ""),
    )


def start_tolerance_from_json(tolerance: JsonObject) -> StartTolerance:
    """The tolerance of a ``start_tolerance`` block, its defaults where a field is absent."""
    return StartTolerance(
        position_m=float(tolerance.get("position_m", DEFAULT_START_TOLERANCE_M)),
        yaw_rad=math.radians(float(tolerance.get("yaw_deg", DEFAULT_START_TOLERANCE_DEG))),
    )


def site_record_from_json(data: JsonObject) -> SiteRecord:
    """The record of a ``site`` block that passed the suite schema."""
    fence = data["geofence"]
    return SiteRecord(
        name=data["name"],
        sha256=data["sha256"],
        command=data["command"],
        frame=site_frame_from_json(data["frame"]),
        geofence=Geofence(
            polygon=tuple((float(x), float(y)) for x, y in fence["polygon_xy_m"]),
            min_z=float(fence["min_z_m"]),
            max_z=float(fence["max_z_m"]),
            margin=float(fence.get("margin_m", 0.0)),
        ),
        start_tolerance=start_tolerance_from_json(data.get("start_tolerance", {})),
        free_space=data["free_space"],
        embedded_scene=data.get("embedded_scene", ""),
        simulator_scene=data.get("simulator_scene", ""),
    )
