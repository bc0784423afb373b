"""The site file (``site.yaml``): a team's survey of a place, read and checked whole before
anything is built from it. Every problem is one line naming the file and the field
(``site.yaml: targets[2].anchor.position_m: ...``), and every problem is listed.

The format is ``schemas/site.schema.json``; what a schema cannot say is checked here:
polygons, names that refer to each other, starts and anchors inside the geofence and free
of the surveyed obstacles (or of the embedded scene's geometry), descriptions without
distances, and reference photographs that exist and decode (docs/sites.md).
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path, PurePosixPath
from typing import Any

import jsonschema_rs
import yaml
from PIL import Image

from aerialdojo.errors import ConfigError, UnknownSceneError
from aerialdojo.geofence import XY, Geofence, circle_polygon, polygon_problems
from aerialdojo.geometry import Pose, wrap_angle
from aerialdojo.sim.annotations import Landmark, TargetObject
from aerialdojo.tasks.episode import stated_distance
from aerialdojo.tasks.site_record import (
    FREE_SPACE_EMBEDDED_SCENE,
    FREE_SPACE_MAP,
    FREE_SPACE_UNMAPPED,
    SiteFrame,
    StartTolerance,
    site_frame_from_json,
    start_tolerance_from_json,
)
from aerialdojo.tasks.validation import field_path

#: The largest site file read: a site with thousands of obstacles stays far below it.
MAX_SITE_BYTES = 2**20
#: Reference photographs: the largest file and the most pixels decoded (a phone's 48 MP
#: photograph fits; a decompression bomb does not).
MAX_IMAGE_BYTES = 40 * 2**20
MAX_IMAGE_PIXELS = 64_000_000
IMAGE_FORMATS = ("JPEG", "PNG")
#: The default collision radius: AerialDojo-200K's embodiment (section 3.1).
DEFAULT_COLLISION_RADIUS_M = 0.25
DEFAULT_GEOFENCE_MARGIN_M = 0.5
#: Bottom of an obstacle whose ``min_z_m`` is not given: it stands on whatever ground.
_GROUND_BELOW_M = 1000.0
#: Sides of the polygon that stands for a round obstacle (it contains the circle).
_ROUND_SIDES = 16


@dataclass(frozen=True, kw_only=True)
class SiteStart:
    """A named start pose (site frame; yaw in radians)."""

    name: str
    pose: Pose


@dataclass(frozen=True, kw_only=True)
class SiteTarget:
    """A surveyed target object.

    Attributes:
        target_id: the id episodes name it by.
        name: the goal's object name.
        position: the measured centre (x, y, z).
        size: extent along x, y, z, None where not measured.
        anchor: where success is measured to (yaw in radians: facing the object).
        landmark: the landmark its goal refers to.
        description: appearance and relations, without distances.
        reference_image: the photograph, an absolute path.
    """

    target_id: str
    name: str
    position: tuple[float, float, float]
    size: tuple[float, float, float] | None
    anchor: Pose
    landmark: Landmark
    description: str
    reference_image: Path

    def as_object(self, instance_id: int) -> TargetObject:
        """The target as scene annotations describe objects (its box: ``size``, or the
        point ``position`` where no size was measured)."""
        half = [extent / 2.0 for extent in self.size] if self.size else [0.0, 0.0, 0.0]
        low = tuple(c - h for c, h in zip(self.position, half, strict=True))
        high = tuple(c + h for c, h in zip(self.position, half, strict=True))
        return TargetObject(
            object_id=self.target_id,
            instance_id=instance_id,
            name=self.name,
            category=self.name,
            colour="",
            description=self.description,
            centroid=self.position,
            bbox_min=(low[0], low[1], low[2]),
            bbox_max=(high[0], high[1], high[2]),
            anchor=self.anchor,
        )


@dataclass(frozen=True, kw_only=True)
class Obstacle:
    """An obstacle of the free-space map: a vertical prism over a convex footprint.

    Attributes:
        name: what a collision with it is reported as.
        footprint: convex polygon (x, y); a round obstacle's is a polygon containing it.
        min_z: bottom.
        max_z: top.
    """

    name: str
    footprint: tuple[XY, ...]
    min_z: float
    max_z: float


@dataclass(frozen=True, kw_only=True)
class Site:
    """A loaded, fully checked site file.

    Attributes:
        path: the site file; reference images are relative to it.
        sha256: digest of the file's bytes.
        name: the site's name.
        description: free text.
        family: AerialDojo-200K scene family.
        embedded_scene: the embedded scene the site is, ``""`` for a real site.
        simulator_scene: the simulator server's scene the site is (surveyed through its API),
            ``""`` otherwise.
        frame: how the site frame was surveyed.
        geofence: where the vehicle may fly.
        start_tolerance: how far the operator-placed start may be from a task's start.
        collision_radius_m: the vehicle's collision radius for planning.
        landmarks: the landmarks.
        starts: the start poses.
        targets: the targets.
        obstacles: the free-space map's obstacles (empty: none surveyed).
        pairs: (start name, target id) of every task, in order.
        pairs_listed: the file listed the pairs (else: every start with every target).
    """

    path: Path
    sha256: str
    name: str
    description: str
    family: str
    embedded_scene: str
    frame: SiteFrame
    geofence: Geofence
    start_tolerance: StartTolerance
    collision_radius_m: float
    landmarks: tuple[Landmark, ...]
    starts: tuple[SiteStart, ...]
    targets: tuple[SiteTarget, ...]
    obstacles: tuple[Obstacle, ...]
    pairs: tuple[tuple[str, str], ...]
    pairs_listed: bool
    simulator_scene: str = ""

    @property
    def free_space(self) -> str:
        """What references are planned in (``tasks.site_record.FREE_SPACES``)."""
        if self.embedded_scene:
            return FREE_SPACE_EMBEDDED_SCENE
        return FREE_SPACE_MAP if self.obstacles else FREE_SPACE_UNMAPPED

    @property
    def scene(self) -> str:
        """The scene its episodes name: the embedded or simulator scene, else the site
        itself."""
        return self.embedded_scene or self.simulator_scene or self.name

    def start(self, name: str) -> SiteStart:
        """The start called ``name``."""
        return next(start for start in self.starts if start.name == name)

    def target(self, target_id: str) -> SiteTarget:
        """The target with id ``target_id``."""
        return next(target for target in self.targets if target.target_id == target_id)


@functools.cache
def site_schema() -> dict[str, Any]:
    """The JSON Schema of site files (``aerialdojo/schemas/site.schema.json``)."""
    text = resources.files("aerialdojo").joinpath("schemas/site.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


@functools.cache
def _validator() -> jsonschema_rs.Draft202012Validator:
    return jsonschema_rs.Draft202012Validator(site_schema())


class _SiteYamlLoader(yaml.SafeLoader):
    """YAML as a survey is written: no aliases (a few lines of them expand to gigabytes),
    and dates kept as the text written (``surveyed: 2026-11-30``)."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()  # type: ignore[no-untyped-call]
            raise yaml.MarkedYAMLError(
                "while reading the site", None, "aliases (*name) are not allowed", event.start_mark
            )
        return super().compose_node(parent, index)


_SiteYamlLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _read(path: Path, source: str) -> tuple[Any, bytes, list[str]]:
    """The parsed document and the file's bytes, or the problems reading it."""
    try:
        size = path.stat().st_size
        if size > MAX_SITE_BYTES:
            return (
                None,
                b"",
                [
                    f"{source}: {size / 2**20:.1f} MiB is larger than a site file can be "
                    f"({MAX_SITE_BYTES // 2**20} MiB)"
                ],
            )
        data = path.read_bytes()
    except OSError as error:
        return None, b"", [f"{source}: cannot read: {error.strerror or error}"]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, data, [f"{source}: not a text file: byte {error.start} is not UTF-8"]
    try:
        document = yaml.load(text, Loader=_SiteYamlLoader)  # a SafeLoader
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1} column {mark.column + 1}: " if mark else ""
        problem = getattr(error, "problem", None) or str(error)
        return None, data, [f"{source}: {where}not YAML: {problem}"]
    if not isinstance(document, dict):
        return (
            None,
            data,
            [f"{source}: expected a mapping of fields, got {type(document).__name__}"],
        )
    return document, data, []


def _non_finite(value: Any, path: list[str | int]) -> Iterator[str]:
    """Field paths of every NaN or infinite number (YAML's ``.nan``, ``.inf``)."""
    if isinstance(value, float) and not math.isfinite(value):
        yield field_path(path)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _non_finite(item, [*path, str(key)])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, [*path, index])


def _schema_problems(document: Any, source: str) -> list[str]:
    problems = [f"{source}: {where}: not a finite number" for where in _non_finite(document, [])]
    errors = sorted(
        itertools.islice(_validator().iter_errors(document), 100),
        key=lambda error: list(map(str, error.instance_path)),
    )
    problems += [
        f"{source}: {field_path(list(error.instance_path))}: {error.message[:300]}"
        for error in errors
    ]
    return problems


def _xyz(values: list[float]) -> tuple[float, float, float]:
    return (float(values[0]), float(values[1]), float(values[2]))


def _pose(position: list[float], yaw_deg: float) -> Pose:
    return Pose(*_xyz(position), wrap_angle(math.radians(yaw_deg)))


def image_problem(path: Path) -> str | None:
    """Why ``path`` is not a usable reference photograph (JPEG or PNG, at most
    ``MAX_IMAGE_BYTES`` and ``MAX_IMAGE_PIXELS``, decoding whole), or None."""
    try:
        size = path.stat().st_size
    except OSError as error:
        return f"cannot read: {error.strerror or error}"
    if not path.is_file():
        return "is not a file"
    if size > MAX_IMAGE_BYTES:
        return f"{size / 2**20:.1f} MiB is larger than {MAX_IMAGE_BYTES // 2**20} MiB"
    try:
        with Image.open(path) as image:
            if image.format not in IMAGE_FORMATS:
                return f"is {image.format}, not {' or '.join(IMAGE_FORMATS)}"
            width, height = image.size
            if width * height > MAX_IMAGE_PIXELS:
                return f"{width} x {height} pixels is more than {MAX_IMAGE_PIXELS} pixels"
            image.load()
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError) as error:
        return f"is not an image that decodes: {error}"
    return None


class _Checker:
    """Builds a ``Site`` from a document that passed the schema, collecting a problem per
    bad field."""

    def __init__(self, document: dict[str, Any], path: Path, source: str) -> None:
        self.document = document
        self.path = path
        self.source = source
        self.problems: list[str] = []
        #: A broken fence or obstacle: positions cannot be checked against them.
        self.geometry_broken = False

    def problem(self, field: str, message: str, *, geometry: bool = False) -> None:
        self.problems.append(f"{self.source}: {field}: {message}")
        self.geometry_broken = self.geometry_broken or geometry

    def unique(self, section: str, key: str) -> None:
        seen: dict[str, int] = {}
        for index, item in enumerate(self.document.get(section, [])):
            if item[key] in seen:
                self.problem(
                    f"{section}[{index}].{key}",
                    f"{item[key]!r} is also {section}[{seen[item[key]]}]",
                )
            seen.setdefault(item[key], index)

    def geofence(self) -> Geofence:
        raw = self.document["geofence"]
        for problem in polygon_problems(raw["polygon_m"]):
            self.problem("geofence.polygon_m", problem, geometry=True)
        fence = Geofence(
            polygon=tuple((float(x), float(y)) for x, y in raw["polygon_m"]),
            min_z=float(raw["min_z_m"]),
            max_z=float(raw["max_z_m"]),
            margin=float(raw.get("margin_m", DEFAULT_GEOFENCE_MARGIN_M)),
        )
        if not fence.max_z - fence.min_z > 2.0 * fence.margin:
            self.problem(
                "geofence.max_z_m",
                f"the band {fence.min_z:g}..{fence.max_z:g} m leaves no room inside the margin "
                f"{fence.margin:g} m",
                geometry=True,
            )
        return fence

    def inside(self, fence: Geofence, field: str, point: tuple[float, float, float]) -> None:
        if self.geometry_broken:
            return  # the fence's problems are listed; positions against it would mislead
        violation = fence.violation(point)
        if violation is not None:
            self.problem(field, violation)

    def landmarks(self) -> tuple[Landmark, ...]:
        self.unique("landmarks", "name")
        return tuple(
            Landmark(
                name=raw["name"],
                position=_xyz(raw["position_m"]),
                description=raw.get("description", ""),
            )
            for raw in self.document["landmarks"]
        )

    def starts(self, fence: Geofence) -> tuple[SiteStart, ...]:
        self.unique("starts", "name")
        starts = []
        for index, raw in enumerate(self.document["starts"]):
            start = SiteStart(name=raw["name"], pose=_pose(raw["position_m"], raw["yaw_deg"]))
            self.inside(fence, f"starts[{index}].position_m", _xyz(raw["position_m"]))
            starts.append(start)
        return tuple(starts)

    def targets(self, fence: Geofence, landmarks: tuple[Landmark, ...]) -> tuple[SiteTarget, ...]:
        self.unique("targets", "id")
        start_names = {raw["name"] for raw in self.document["starts"]}
        by_name = {landmark.name: landmark for landmark in landmarks}
        targets = []
        for index, raw in enumerate(self.document["targets"]):
            where = f"targets[{index}]"
            if raw["id"] in start_names:
                self.problem(f"{where}.id", f"{raw['id']!r} is also a start's name")
            position = _xyz(raw["position_m"])
            anchor = raw["anchor"]
            self.inside(fence, f"{where}.anchor.position_m", _xyz(anchor["position_m"]))
            if "landmark" in raw:
                landmark = by_name.get(raw["landmark"])
                if landmark is None:
                    self.problem(
                        f"{where}.landmark",
                        f"{raw['landmark']!r} is not a landmark ({', '.join(sorted(by_name))})",
                    )
                    landmark = landmarks[0]
            else:
                landmark = min(
                    landmarks, key=lambda mark: math.dist(mark.position[:2], position[:2])
                )
            distance = stated_distance(raw["description"])
            if distance is not None:
                self.problem(
                    f"{where}.description",
                    f"states a distance ({distance!r}): describe appearance and relations; "
                    "the goal's landmark and direction locate the target",
                )
            image = self.image(f"{where}.reference_image", raw["reference_image"])
            size = raw.get("size_m")
            targets.append(
                SiteTarget(
                    target_id=raw["id"],
                    name=raw["name"],
                    position=position,
                    size=_xyz(size) if size is not None else None,
                    anchor=_pose(anchor["position_m"], anchor["yaw_deg"]),
                    landmark=landmark,
                    description=raw["description"],
                    reference_image=image,
                )
            )
        return tuple(targets)

    def image(self, field: str, relative: str) -> Path:
        path = self.path.parent / relative
        posix = PurePosixPath(relative)
        if posix.is_absolute() or ".." in posix.parts or "\\" in relative:
            self.problem(field, f"{relative!r} must be a path below the site file's directory")
            return path
        problem = image_problem(path)
        if problem is not None:
            self.problem(field, f"{relative}: {problem}")
        return path

    def obstacles(self) -> tuple[Obstacle, ...]:
        obstacles = []
        for index, raw in enumerate(self.document.get("obstacles", [])):
            where = f"obstacles[{index}]"
            if "polygon_m" in raw:
                footprint = tuple((float(x), float(y)) for x, y in raw["polygon_m"])
                for problem in polygon_problems(raw["polygon_m"], convex=True):
                    self.problem(f"{where}.polygon_m", problem, geometry=True)
            else:
                circle = circle_polygon(raw["center_m"], float(raw["radius_m"]), _ROUND_SIDES)
                footprint = tuple((float(x), float(y)) for x, y in circle)
            min_z = float(raw.get("min_z_m", -_GROUND_BELOW_M))
            if not float(raw["max_z_m"]) > min_z:
                self.problem(f"{where}.max_z_m", f"is not above min_z_m {min_z:g}", geometry=True)
            obstacles.append(
                Obstacle(
                    name=raw["name"], footprint=footprint, min_z=min_z, max_z=float(raw["max_z_m"])
                )
            )
        return tuple(obstacles)

    def pairs(self) -> tuple[tuple[tuple[str, str], ...], bool]:
        listed = self.document.get("tasks")
        starts = [raw["name"] for raw in self.document["starts"]]
        targets = [raw["id"] for raw in self.document["targets"]]
        if listed is None:
            return tuple(itertools.product(starts, targets)), False
        seen: set[tuple[str, str]] = set()
        for index, task in enumerate(listed):
            pair = (task["start"], task["target"])
            if task["start"] not in starts:
                self.problem(f"tasks[{index}].start", f"{task['start']!r} is not a start")
            if task["target"] not in targets:
                self.problem(f"tasks[{index}].target", f"{task['target']!r} is not a target")
            if pair in seen:
                self.problem(f"tasks[{index}]", f"lists {pair[0]} -> {pair[1]} again")
            seen.add(pair)
        return tuple((task["start"], task["target"]) for task in listed), True


def _embedded_scene_problems(site: Site, source: str) -> list[str]:
    """An embedded scene site: a known scene of the site's family, the fence within the
    scene's flyable box."""
    from aerialdojo.sim.embedded.scenes import parse_scene_name  # noqa: PLC0415

    try:
        scene_type, _ = parse_scene_name(site.embedded_scene)
    except UnknownSceneError as error:
        return [f"{source}: embedded_scene: {error}"]
    if scene_type.family != site.family:
        return [
            f"{source}: family: {site.family!r} but {site.embedded_scene} is {scene_type.family!r}"
        ]
    return []


def load_site(path: str | Path, *, source: str | None = None) -> Site:
    """Load and fully check a site file.

    Checks the schema, then the polygons, unique names and the names tasks and targets
    refer to, the starts and anchors inside the geofence (with its margin) and in free
    space (of the obstacles, or of the embedded scene, at the collision radius), the
    descriptions, and that every reference photograph decodes.

    Args:
        path: the site file.
        source: how problems name the file (default: ``path``).

    Raises:
        ConfigError: every problem, one per line, naming the file and the field.
    """
    path = Path(path)
    label = source or str(path)
    document, data, problems = _read(path, label)
    if problems:
        raise ConfigError(*problems)
    problems = _schema_problems(document, label)
    if problems:
        raise ConfigError(*problems)
    checker = _Checker(document, path, label)
    fence = checker.geofence()
    landmarks = checker.landmarks()
    starts = checker.starts(fence)
    targets = checker.targets(fence, landmarks)
    obstacles = checker.obstacles()
    pairs, listed = checker.pairs()
    site = Site(
        path=path,
        sha256=hashlib.sha256(data).hexdigest(),
        name=document["name"],
        description=document.get("description", ""),
        family=document["family"],
        embedded_scene=document.get("embedded_scene", ""),
        simulator_scene=document.get("simulator_scene", ""),
        frame=site_frame_from_json(document["frame"]),
        geofence=fence,
        start_tolerance=start_tolerance_from_json(document.get("start_tolerance", {})),
        collision_radius_m=float(
            document.get("planning", {}).get("collision_radius_m", DEFAULT_COLLISION_RADIUS_M)
        ),
        landmarks=landmarks,
        starts=starts,
        targets=targets,
        obstacles=obstacles,
        pairs=pairs,
        pairs_listed=listed,
    )
    problems = checker.problems
    scene_problems = _embedded_scene_problems(site, label) if site.embedded_scene else []
    problems += scene_problems
    if not checker.geometry_broken and not scene_problems:
        problems += _free_space_problems(site, label)
    if problems:
        raise ConfigError(*problems)
    return site


def _box_text(low: Sequence[float], high: Sequence[float]) -> str:
    return " x ".join(f"[{a:g}, {b:g}]" for a, b in zip(low, high, strict=True))


def _free_space_problems(site: Site, source: str) -> list[str]:
    """Starts and anchors clear of the site's obstacles and scene geometry."""
    from aerialdojo.sites.world import site_world  # noqa: PLC0415 - Embree for scenes

    world = site_world(site)
    problems = []
    if world.scene_bounds is not None:
        (low, high), (scene_low, scene_high) = site.geofence.bounds(), world.scene_bounds
        if any(a < b for a, b in zip(low, scene_low, strict=True)) or any(
            a > b for a, b in zip(high, scene_high, strict=True)
        ):
            problems.append(
                f"{source}: geofence: the fence (inside its margin) spans "
                f"{_box_text(low, high)}, beyond {site.embedded_scene}'s flyable box "
                f"{_box_text(scene_low, scene_high)}"
            )
    for index, start in enumerate(site.starts):
        hit = world.obstruction(start.pose.position, site.collision_radius_m)
        if hit:
            problems.append(f"{source}: starts[{index}].position_m: {hit}")
    for index, target in enumerate(site.targets):
        hit = world.obstruction(target.anchor.position, site.collision_radius_m)
        if hit:
            problems.append(f"{source}: targets[{index}].anchor.position_m: {hit}")
    return problems
