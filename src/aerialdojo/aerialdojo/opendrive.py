"""A small ASAM OpenDRIVE reader: roads, their reference lines and lanes, and the directed
graph of drivable lanes a map's junctions connect (ROS-free).

It reads what CARLA's maps use (OpenDRIVE 1.4, as RoadRunner writes them): ``planView``
geometries (``line``, ``arc``, ``spiral``, ``poly3``, ``paramPoly3``), ``elevationProfile``,
``laneOffset``, lane sections with their lanes' type, cubic ``width`` records and
predecessor/successor links, road links to roads and junctions, and junction connections
with their lane links. Formulas follow the ASAM OpenDRIVE 1.4 specification (sections 5.3.4
for the geometries, 5.3.5 elevation, 6.2 lane offset, 6.5 lane width, 6.6 lane links, 7.3
junction connections). Traffic drives on the right (the standard's default, CARLA's maps):
lanes with negative ids travel along the reference line, positive ids against it.

``lane_graph`` samples the chosen lane types every ``spacing_m`` along their centre lines into
a directed graph in the OpenDRIVE frame (x east, y north, z up; CARLA's world is that frame
with y negated, so it is aerialdojo's map frame of a CARLA map, docs/simulators.md "Frames").
Not read: superelevation and lateral shape (no height across a road), lane height, lane
border records (``border`` instead of ``width``), objects and signals.
"""

from __future__ import annotations

import bisect
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from aerialdojo.errors import ConfigError

#: The largest file read (CARLA's biggest town maps are a few MiB).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Quadrature points for curves without a closed form (spiral, poly3, paramPoly3).
_GAUSS_NODES, _GAUSS_WEIGHTS = np.polynomial.legendre.leggauss(24)
#: Arc length table resolution of poly3 and paramPoly3 curves (parameter steps).
_ARC_TABLE_STEPS = 256


class OpenDriveError(ConfigError):
    """An OpenDRIVE file this reader cannot use; the message names the file and element."""


@dataclass(frozen=True)
class Cubic:
    """``a + b ds + c ds^2 + d ds^3`` with ``ds = s - start`` (elevation, lane offset, width)."""

    start: float
    a: float
    b: float = 0.0
    c: float = 0.0
    d: float = 0.0

    def __call__(self, s: float) -> float:
        ds = s - self.start
        return self.a + ds * (self.b + ds * (self.c + ds * self.d))


def _piecewise(records: Sequence[Cubic], s: float, default: float = 0.0) -> float:
    """The value at ``s`` of the last record starting at or before it (records by start)."""
    if not records:
        return default
    index = bisect.bisect_right([r.start for r in records], s + 1e-9) - 1
    return records[max(index, 0)](s)


@dataclass(frozen=True)
class Geometry:
    """One ``planView`` geometry: a curve starting at (``x``, ``y``) heading ``hdg``.

    Attributes:
        s: where it starts along the road's reference line.
        length: its length along the reference line.
        kind: ``line``, ``arc``, ``spiral``, ``poly3`` or ``paramPoly3``.
        parameters: the curve's attributes (``curvature``; ``curvStart``, ``curvEnd``;
            ``a``..``d``; ``aU``..``dV`` and ``pRange`` as 1.0 for ``normalized``, else the
            length).
    """

    s: float
    x: float
    y: float
    hdg: float
    length: float
    kind: str
    parameters: dict[str, float] = field(default_factory=dict)
    _arc_table: tuple[np.ndarray, np.ndarray] | None = field(default=None, compare=False)

    def local(self, u: float) -> tuple[float, float, float]:
        """(x, y, heading) in the geometry's own frame (start at the origin, heading 0)
        at ``u`` metres along it."""
        p = self.parameters
        if self.kind == "line":
            return (u, 0.0, 0.0)
        if self.kind == "arc":
            k = p["curvature"]
            if abs(k) < 1e-12:
                return (u, 0.0, 0.0)
            return (math.sin(k * u) / k, (1.0 - math.cos(k * u)) / k, k * u)
        if self.kind == "spiral":
            k0 = p["curvStart"]
            rate = (p["curvEnd"] - k0) / self.length if self.length > 0.0 else 0.0
            return _integrated(lambda t: k0 * t + rate * t * t / 2.0, u)
        assert self._arc_table is not None  # poly3 and paramPoly3 get one at construction
        lengths, parameters = self._arc_table
        param = float(np.interp(u, lengths, parameters))
        if self.kind == "poly3":
            v, dv = _cubic_and_slope(p["a"], p["b"], p["c"], p["d"], param)
            return (param, v, math.atan2(dv, 1.0))
        x, dx = _cubic_and_slope(p["aU"], p["bU"], p["cU"], p["dU"], param)
        y, dy = _cubic_and_slope(p["aV"], p["bV"], p["cV"], p["dV"], param)
        return (x, y, math.atan2(dy, dx))

    def pose(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) of the reference line at road position ``s`` (clamped to this
        geometry)."""
        u = min(max(s - self.s, 0.0), self.length)
        lx, ly, lh = self.local(u)
        cos_h, sin_h = math.cos(self.hdg), math.sin(self.hdg)
        return (
            self.x + lx * cos_h - ly * sin_h,
            self.y + lx * sin_h + ly * cos_h,
            self.hdg + lh,
        )


def _cubic_and_slope(a: float, b: float, c: float, d: float, t: float) -> tuple[float, float]:
    return (a + t * (b + t * (c + t * d)), b + t * (2.0 * c + t * 3.0 * d))


def _integrated(heading: Callable[[float], float], u: float) -> tuple[float, float, float]:
    """(x, y, heading) after ``u`` metres of a curve whose heading at arc length t is
    ``heading(t)`` (Gauss-Legendre over [0, u], in pieces of at most 10 m)."""
    pieces = max(1, math.ceil(u / 10.0))
    x = y = 0.0
    for k in range(pieces):
        low, high = u * k / pieces, u * (k + 1) / pieces
        t = (high - low) / 2.0 * _GAUSS_NODES + (high + low) / 2.0
        angles = np.array([heading(float(v)) for v in t])
        half = (high - low) / 2.0
        x += half * float(np.dot(_GAUSS_WEIGHTS, np.cos(angles)))
        y += half * float(np.dot(_GAUSS_WEIGHTS, np.sin(angles)))
    return (x, y, heading(u))


def _arc_table(geometry: Geometry) -> tuple[np.ndarray, np.ndarray]:
    """Arc length against curve parameter for poly3 (the parameter is local x) and
    paramPoly3 (p over [0, pRange])."""
    p = geometry.parameters
    if geometry.kind == "poly3":
        # Local x runs at most the arc length: tabulate a little beyond it, then cut.
        top = geometry.length

        def speed(t: np.ndarray) -> np.ndarray:
            slope = p["b"] + t * (2.0 * p["c"] + t * 3.0 * p["d"])
            return np.asarray(np.hypot(1.0, slope))

    else:
        top = p["pRange"]

        def speed(t: np.ndarray) -> np.ndarray:
            du = p["bU"] + t * (2.0 * p["cU"] + t * 3.0 * p["dU"])
            dv = p["bV"] + t * (2.0 * p["cV"] + t * 3.0 * p["dV"])
            return np.asarray(np.hypot(du, dv))

    params = np.linspace(0.0, top, _ARC_TABLE_STEPS + 1)
    lengths = np.zeros_like(params)
    for i in range(_ARC_TABLE_STEPS):
        low, high = params[i], params[i + 1]
        t = (high - low) / 2.0 * _GAUSS_NODES + (high + low) / 2.0
        lengths[i + 1] = lengths[i] + (high - low) / 2.0 * float(np.dot(_GAUSS_WEIGHTS, speed(t)))
    return lengths, params


@dataclass(frozen=True)
class Lane:
    """One lane of a lane section.

    Attributes:
        lane_id: its id (0 is the centre lane, negative on the right of the reference line).
        kind: its ``type`` (``driving``, ``shoulder``, ``sidewalk``, ...).
        widths: its ``width`` records, ``start`` being the road position they start at.
        predecessor: the lane it continues from across the section's start, if linked.
        successor: the lane it continues to across the section's end, if linked.
    """

    lane_id: int
    kind: str
    widths: tuple[Cubic, ...]
    predecessor: int | None
    successor: int | None

    def width(self, s: float) -> float:
        return max(_piecewise(self.widths, s), 0.0)


@dataclass(frozen=True)
class LaneSection:
    """Lanes between road positions ``s`` and ``end`` (the next section's start)."""

    s: float
    end: float
    lanes: dict[int, Lane]


@dataclass(frozen=True)
class RoadLink:
    """A road's predecessor or successor: a road (entered at its ``contact`` end) or a
    junction."""

    element_type: str
    element_id: str
    contact: str = ""


@dataclass(frozen=True)
class Road:
    """One road: its reference line, elevation, lane offset, lane sections and links."""

    road_id: str
    length: float
    junction: str
    geometries: tuple[Geometry, ...]
    elevations: tuple[Cubic, ...]
    lane_offsets: tuple[Cubic, ...]
    sections: tuple[LaneSection, ...]
    predecessor: RoadLink | None
    successor: RoadLink | None

    @property
    def in_junction(self) -> bool:
        return self.junction != "-1"

    def reference(self, s: float) -> tuple[float, float, float]:
        """(x, y, heading) of the reference line at ``s``."""
        starts = [g.s for g in self.geometries]
        index = max(bisect.bisect_right(starts, s + 1e-9) - 1, 0)
        return self.geometries[index].pose(s)

    def lane_point(self, section: LaneSection, lane_id: int, s: float) -> tuple[float, ...]:
        """(x, y, z, heading along the reference line, width) of lane ``lane_id``'s centre
        at ``s``."""
        side = 1 if lane_id > 0 else -1
        inner = sum(section.lanes[side * k].width(s) for k in range(1, abs(lane_id)))
        width = section.lanes[lane_id].width(s)
        t = _piecewise(self.lane_offsets, s) + side * (inner + width / 2.0)
        x, y, heading = self.reference(s)
        return (
            x - t * math.sin(heading),
            y + t * math.cos(heading),
            _piecewise(self.elevations, s),
            heading,
            width,
        )


@dataclass(frozen=True)
class Connection:
    """A junction connection: lanes of ``incoming`` lead into ``connecting``, entered at its
    ``contact`` end; ``lane_links`` maps incoming lane ids to connecting lane ids."""

    incoming: str
    connecting: str
    contact: str
    lane_links: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class OpenDrive:
    """A read OpenDRIVE file: its roads by id and junction connections by junction id."""

    source: str
    roads: dict[str, Road]
    junctions: dict[str, tuple[Connection, ...]]


# -- reading ---------------------------------------------------------------------------------


def read_opendrive(path: str | Path) -> OpenDrive:
    """Read an OpenDRIVE file.

    Raises:
        OpenDriveError: unreadable, too large, not OpenDRIVE, a document type declaration
            (entities are never expanded), or an element without a needed attribute.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise OpenDriveError(f"{path}: {size} bytes, more than {MAX_FILE_BYTES}")
        text = path.read_bytes()
    except OSError as error:
        raise OpenDriveError(f"{path}: cannot read: {error}") from error
    return parse_opendrive(text, str(path))


def parse_opendrive(text: bytes, source: str) -> OpenDrive:
    """Parse OpenDRIVE XML; ``source`` names it in errors.

    Raises:
        OpenDriveError: as ``read_opendrive``.
    """
    if b"<!DOCTYPE" in text[:4096] or b"<!ENTITY" in text:
        raise OpenDriveError(f"{source}: document type declarations are not accepted")
    try:
        root = ET.fromstring(text)
    except ET.ParseError as error:
        raise OpenDriveError(f"{source}: not XML: {error}") from error
    if root.tag != "OpenDRIVE":
        raise OpenDriveError(f"{source}: the root element is <{root.tag}>, not <OpenDRIVE>")
    roads = {}
    for element in root.findall("road"):
        road = _road(element, source)
        roads[road.road_id] = road
    junctions = {
        _attribute(j, "id", source): tuple(_connection(c, source) for c in j.findall("connection"))
        for j in root.findall("junction")
    }
    return OpenDrive(source=source, roads=roads, junctions=junctions)


def _attribute(element: ET.Element, name: str, source: str) -> str:
    value = element.get(name)
    if value is None:
        raise OpenDriveError(f"{source}: <{element.tag}> has no {name!r} attribute")
    return value


def _number(element: ET.Element, name: str, source: str, default: float | None = None) -> float:
    text = element.get(name)
    if text is None:
        if default is not None:
            return default
        raise OpenDriveError(f"{source}: <{element.tag}> has no {name!r} attribute")
    try:
        value = float(text)
    except ValueError:
        raise OpenDriveError(f"{source}: <{element.tag}> {name}={text!r} is not a number") from None
    if not math.isfinite(value):
        raise OpenDriveError(f"{source}: <{element.tag}> {name}={text!r} is not finite")
    return value


def _cubic(element: ET.Element, start: float, source: str) -> Cubic:
    return Cubic(start, *(_number(element, k, source, 0.0) for k in "abcd"))


def _road(element: ET.Element, source: str) -> Road:
    road_id = _attribute(element, "id", source)
    where = f"{source}: road {road_id}"
    length = _number(element, "length", where)
    plan = element.find("planView")
    if plan is None or not plan.findall("geometry"):
        raise OpenDriveError(f"{where}: no planView geometry")
    geometries = tuple(_geometry(g, where) for g in plan.findall("geometry"))
    elevations = tuple(
        _cubic(e, _number(e, "s", where), where)
        for e in element.iterfind("elevationProfile/elevation")
    )
    lanes = element.find("lanes")
    if lanes is None:
        raise OpenDriveError(f"{where}: no <lanes>")
    offsets = tuple(_cubic(o, _number(o, "s", where), where) for o in lanes.findall("laneOffset"))
    starts = [_number(section, "s", where) for section in lanes.findall("laneSection")]
    sections = tuple(
        _section(section, start, end, where)
        for section, start, end in zip(
            lanes.findall("laneSection"), starts, [*starts[1:], length], strict=True
        )
    )
    link = element.find("link")
    return Road(
        road_id=road_id,
        length=length,
        junction=element.get("junction", "-1"),
        geometries=geometries,
        elevations=elevations,
        lane_offsets=offsets,
        sections=sections,
        predecessor=_road_link(link, "predecessor", where),
        successor=_road_link(link, "successor", where),
    )


def _road_link(link: ET.Element | None, which: str, where: str) -> RoadLink | None:
    element = link.find(which) if link is not None else None
    if element is None:
        return None
    return RoadLink(
        element_type=_attribute(element, "elementType", where),
        element_id=_attribute(element, "elementId", where),
        contact=element.get("contactPoint", ""),
    )


def _geometry(element: ET.Element, where: str) -> Geometry:
    values = {k: _number(element, k, where) for k in ("s", "x", "y", "hdg", "length")}
    curve = next(iter(element), None)
    if curve is None:
        raise OpenDriveError(f"{where}: geometry at s={values['s']:g} has no curve")
    names = {
        "line": (),
        "arc": ("curvature",),
        "spiral": ("curvStart", "curvEnd"),
        "poly3": ("a", "b", "c", "d"),
        "paramPoly3": ("aU", "bU", "cU", "dU", "aV", "bV", "cV", "dV"),
    }
    if curve.tag not in names:
        raise OpenDriveError(
            f"{where}: geometry at s={values['s']:g} is <{curve.tag}>, not one of "
            f"{', '.join(names)}"
        )
    parameters = {name: _number(curve, name, where) for name in names[curve.tag]}
    if curve.tag == "paramPoly3":
        normalised = curve.get("pRange", "normalized") == "normalized"
        parameters["pRange"] = 1.0 if normalised else values["length"]
    geometry = Geometry(
        s=values["s"],
        x=values["x"],
        y=values["y"],
        hdg=values["hdg"],
        length=values["length"],
        kind=curve.tag,
        parameters=parameters,
    )
    if curve.tag in ("poly3", "paramPoly3"):
        object.__setattr__(geometry, "_arc_table", _arc_table(geometry))
    return geometry


def _section(element: ET.Element, start: float, end: float, where: str) -> LaneSection:
    lanes = {}
    for side in ("left", "right"):
        for lane in element.iterfind(f"{side}/lane"):
            lane_id = int(_number(lane, "id", where))
            widths = tuple(
                _cubic(w, start + _number(w, "sOffset", where), where)
                for w in lane.findall("width")
            )
            if not widths and lane.findall("border"):
                raise OpenDriveError(
                    f"{where}: lane {lane_id} at s={start:g} gives borders, not widths"
                )
            link = lane.find("link")
            lanes[lane_id] = Lane(
                lane_id=lane_id,
                kind=lane.get("type", "none"),
                widths=widths,
                predecessor=_lane_link(link, "predecessor", where),
                successor=_lane_link(link, "successor", where),
            )
    return LaneSection(s=start, end=end, lanes=lanes)


def _lane_link(link: ET.Element | None, which: str, where: str) -> int | None:
    element = link.find(which) if link is not None else None
    return None if element is None else int(_number(element, "id", where))


def _connection(element: ET.Element, source: str) -> Connection:
    where = f"{source}: junction connection {element.get('id', '?')}"
    return Connection(
        incoming=_attribute(element, "incomingRoad", where),
        connecting=_attribute(element, "connectingRoad", where),
        contact=_attribute(element, "contactPoint", where),
        lane_links=tuple(
            (int(_number(link, "from", where)), int(_number(link, "to", where)))
            for link in element.findall("laneLink")
        ),
    )


# -- the lane graph --------------------------------------------------------------------------


#: A lane of one lane section: (road id, section index, lane id).
LaneKey = tuple[str, int, int]


@dataclass(frozen=True)
class LaneSamples:
    """One lane's centre line sampled in its direction of travel.

    Attributes:
        key: (road, section index, lane id).
        points: (N, 5) rows of x, y, z, heading of travel, lane width.
        junction: the id of the junction whose connecting road the lane belongs to, "" for
            a lane outside junctions.
    """

    key: LaneKey
    points: np.ndarray
    junction: str

    @property
    def in_junction(self) -> bool:
        return bool(self.junction)


@dataclass(frozen=True)
class LaneGraph:
    """Sampled lanes of the chosen types and which lane leads to which.

    Attributes:
        lanes: every sampled lane, by key.
        successors: lane -> lanes a vehicle can drive on to from its end (lane links,
            road links and junction connections).
        unmatched: links skipped because they lead against a lane's direction of travel or
            to a lane that is missing or of another type (said, not silently dropped).
    """

    lanes: dict[LaneKey, LaneSamples]
    successors: dict[LaneKey, tuple[LaneKey, ...]]
    unmatched: tuple[str, ...]


def _forward(lane_id: int) -> bool:
    """Whether a lane travels along its road's reference line (right-hand traffic)."""
    return lane_id < 0


def lane_graph(
    drive: OpenDrive, *, spacing_m: float = 2.0, lane_types: Iterable[str] = ("driving",)
) -> LaneGraph:
    """Sample every lane of ``lane_types`` about every ``spacing_m`` (each lane's first point
    at its start of travel; its end point is its successors' first) and link them.

    Raises:
        OpenDriveError: a non-positive spacing.
    """
    if spacing_m <= 0.0:
        raise OpenDriveError(f"{drive.source}: spacing_m={spacing_m} must be positive")
    kinds = set(lane_types)
    lanes: dict[LaneKey, LaneSamples] = {}
    for road in drive.roads.values():
        for index, section in enumerate(road.sections):
            for lane in section.lanes.values():
                if lane.kind in kinds:
                    key = (road.road_id, index, lane.lane_id)
                    lanes[key] = LaneSamples(
                        key,
                        _sample(road, section, lane.lane_id, spacing_m),
                        road.junction if road.in_junction else "",
                    )
    unmatched: list[str] = []
    successors = {
        key: tuple(
            target[0]
            for target in _next_lanes(drive, key, unmatched)
            if _usable(target, lanes, key, unmatched)
        )
        for key in lanes
    }
    return LaneGraph(lanes=lanes, successors=successors, unmatched=tuple(unmatched))


def _sample(road: Road, section: LaneSection, lane_id: int, spacing_m: float) -> np.ndarray:
    """Points at the lane's start of travel and then every ``length / n`` (n the fewest
    steps of at most ``spacing_m``), the end excluded: it is the next lane's start."""
    length = section.end - section.s
    steps = max(1, math.ceil(length / spacing_m - 1e-9))
    along = [section.s + length * k / steps for k in range(steps)]
    if not _forward(lane_id):
        along = [section.end - (s - section.s) for s in along]
    rows = []
    for s in along:
        x, y, z, heading, width = road.lane_point(section, lane_id, s)
        rows.append((x, y, z, heading if _forward(lane_id) else heading + math.pi, width))
    points = np.asarray(rows, dtype=np.float64)
    points[:, 3] = np.arctan2(np.sin(points[:, 3]), np.cos(points[:, 3]))
    return points


def _next_lanes(drive: OpenDrive, key: LaneKey, unmatched: list[str]) -> list[tuple[LaneKey, str]]:
    """The lanes that continue ``key`` at the end it travels towards, each with the end of
    its road section it is entered at (``start`` or ``end``)."""
    road_id, index, lane_id = key
    road = drive.roads[road_id]
    lane = road.sections[index].lanes[lane_id]
    forward = _forward(lane_id)
    last = len(road.sections) - 1
    if forward and index < last:
        return [] if lane.successor is None else [((road_id, index + 1, lane.successor), "start")]
    if not forward and index > 0:
        return [] if lane.predecessor is None else [((road_id, index - 1, lane.predecessor), "end")]
    link = road.successor if forward else road.predecessor
    linked_lane = lane.successor if forward else lane.predecessor
    if link is None:
        return []
    if link.element_type == "road":
        if linked_lane is None or link.element_id not in drive.roads:
            return []
        return [_entered(drive.roads[link.element_id], link.contact, linked_lane)]
    if link.element_type != "junction":
        unmatched.append(f"road {road_id}: a link to a {link.element_type!r} is not followed")
        return []
    return [
        _entered(drive.roads[connection.connecting], connection.contact, target)
        for connection in drive.junctions.get(link.element_id, ())
        if connection.incoming == road_id and connection.connecting in drive.roads
        for source, target in connection.lane_links
        if source == lane_id
    ]


def _entered(road: Road, contact: str, lane_id: int) -> tuple[LaneKey, str]:
    """Lane ``lane_id`` of ``road`` in the section at its ``contact`` end, and that end."""
    index = 0 if contact == "start" else len(road.sections) - 1
    return (road.road_id, index, lane_id), contact


def _usable(
    target: tuple[LaneKey, str],
    lanes: dict[LaneKey, LaneSamples],
    source: LaneKey,
    unmatched: list[str],
) -> bool:
    """A linked lane is used when it is sampled (of the chosen types) and its travel starts
    at the end it is entered at: along its road from the start, against it from the end."""
    key, contact = target
    if key not in lanes:
        return False
    if _forward(key[2]) != (contact == "start"):
        unmatched.append(f"{source} -> {key}: entered at its {contact}, against its travel")
        return False
    return True
