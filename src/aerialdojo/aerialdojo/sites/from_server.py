"""A site surveyed through a simulator server's API, for a suite of that server's own world
(``aerialdojo tasks from-server``, docs/simulators.md).

A suite only runs on the world it was made for: ProjectAirSim cannot change the Unreal level a
server runs, CARLA-Air runs one map. So the survey asks the running server, through the
bridge's own backend: its objects with their poses (ProjectAirSim: the level's
``ListObjects`` and ``GetObjectPoses``; CARLA: ``World.get_environment_objects``, with semantic
labels and bounding boxes), where episodes may start (ProjectAirSim: the scene's spawn; CARLA:
above the lane waypoints), and a photograph of each target from its anchor (the backend's own
front view, placed there). It writes a site file (``frame.method: simulator``,
``simulator_scene``) and its photographs; ``sites.build`` turns them into an AerialDojo-format
suite like any surveyed site. The server tells nothing of free space, so the site has no
obstacles: episodes carry no reference actions and their reference length is the straight
line (``tasks.site_record.FREE_SPACE_UNMAPPED``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml
from PIL import Image

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.tasks.episode import stated_distance

#: Clearance between a target's box and its anchor (AerialDojo-200K, section 3.1: about 1 m).
ANCHOR_CLEARANCE_M = 1.0
#: Half the footprint assumed for an object whose size the server does not tell.
UNKNOWN_HALF_SIZE_M = 1.0
#: How far the geofence reaches beyond every start, anchor and target, horizontally.
FENCE_REACH_M = 10.0
_IDENTIFIER = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]{0,62}")


class SurveyedBackend(Protocol):
    """What the survey uses of a remote backend."""

    server_build: str
    endpoint: Any

    def connect(self) -> None: ...

    def world_objects(self, scene: str) -> list[Any]: ...

    def start_candidates(self, scene: str, altitude_m: float) -> list[Pose]: ...

    def reset(self, scene: str, poses: dict[str, Pose]) -> None: ...

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class SurveyOptions:
    """What to take from the server's world.

    Attributes:
        name: the site's (and suite's) name.
        targets: objects whose name or kind matches become targets.
        landmarks: objects whose name or kind matches become landmarks.
        altitude_m: start altitude where the server offers starts at any height (CARLA).
        max_targets: at most this many targets, by name.
        max_starts: at most this many starts.
        agent: the agent whose front view photographs the targets.
    """

    name: str
    targets: re.Pattern[str]
    landmarks: re.Pattern[str]
    altitude_m: float = 30.0
    max_targets: int = 8
    max_starts: int = 4
    agent: str = "uav"


def survey_server(backend: SurveyedBackend, scene: str, out: Path, options: SurveyOptions) -> Path:
    """Write ``out/site.yaml`` and ``out/photos/`` for ``scene`` of the server; returns the
    site file.

    Raises:
        ConfigError: no object matches the targets or the landmarks, or the server offers no
            start.
        SimulatorFaultError: the server failed.
    """
    backend.connect()
    starts = backend.start_candidates(scene, options.altitude_m)[: options.max_starts]
    if not starts:
        raise ConfigError(f"{backend.endpoint}: {scene} offers no start")
    objects = backend.world_objects(scene)
    chosen = sorted((o for o in objects if _matches(options.targets, o)), key=lambda o: o.name)[
        : options.max_targets
    ]
    marks = [o for o in objects if _matches(options.landmarks, o) and o not in chosen]
    if not chosen or not marks:
        kinds = sorted({o.kind for o in objects if o.kind})
        raise ConfigError(
            f"{backend.endpoint}: {scene} has {len(objects)} objects; "
            f"{len(chosen)} match --targets {options.targets.pattern!r} and {len(marks)} "
            f"--landmarks {options.landmarks.pattern!r} (kinds: {', '.join(kinds) or 'none'})"
        )
    photos = out / "photos"
    photos.mkdir(parents=True, exist_ok=True)
    targets: list[dict[str, Any]] = []
    anchors: list[Pose] = []
    ids: set[str] = set()
    for item in chosen:
        target_id = _unique_id(item.name, ids)
        anchor = _anchor(item, starts)
        anchors.append(anchor)
        backend.reset(scene, {options.agent: anchor})
        observation = backend.observe(options.agent)
        photo = photos / f"{target_id}.png"
        Image.fromarray(next(iter(observation.frames.values())).rgb).save(photo)
        noun = (item.kind or "object").lower()
        description = f"the {noun} the level calls {item.name}"
        if stated_distance(description) is not None:
            description = f"a {noun} of the level"
        targets.append(
            {
                "id": target_id,
                "name": noun,
                "position_m": [item.x, item.y, item.z],
                **({"size_m": list(item.size)} if item.size else {}),
                "anchor": {
                    "position_m": [anchor.x, anchor.y, anchor.z],
                    "yaw_deg": math.degrees(anchor.yaw),
                },
                "description": description,
                "reference_image": f"photos/{photo.name}",
            }
        )
    points = [(p.x, p.y, p.z) for p in (*starts, *anchors)] + [(o.x, o.y, o.z) for o in chosen]
    site = {
        "format": "aerialdojo-site/1",
        "name": options.name,
        "description": f"{scene} as {backend.endpoint} runs it, surveyed through its API",
        "family": "urban",
        "simulator_scene": scene,
        "frame": {
            "method": "simulator",
            "origin": (
                f"the map frame of {scene} on {backend.endpoint} ({backend.server_build}): "
                "aerialdojo's ENU frame of the simulator's world (docs/simulators.md, Frames)"
            ),
        },
        "geofence": _fence(points),
        "landmarks": _landmarks(marks),
        "starts": [
            {
                "name": f"start_{index}",
                "position_m": [p.x, p.y, p.z],
                "yaw_deg": math.degrees(p.yaw),
            }
            for index, p in enumerate(starts)
        ],
        "targets": targets,
    }
    path = out / "site.yaml"
    path.write_text(yaml.safe_dump(site, sort_keys=False))
    return path


def _matches(pattern: re.Pattern[str], item: Any) -> bool:
    return bool(pattern.search(item.name) or (item.kind and pattern.search(item.kind)))


def _unique_id(name: str, taken: set[str]) -> str:
    """The server's name where a site accepts it (the doctor then finds the object by it),
    else a cleaned one."""
    base = name if _IDENTIFIER.fullmatch(name) else re.sub(r"[^A-Za-z0-9]+", "_", name)
    base = base.strip("_")[:56] or "object"
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        candidate = f"{base}_{number}"
    taken.add(candidate)
    return candidate


def _anchor(item: Any, starts: Sequence[Pose]) -> Pose:
    """A viewpoint ``ANCHOR_CLEARANCE_M`` outside the object's box, on the side of the
    nearest start, above its top, facing it."""
    nearest = min(starts, key=lambda p: math.hypot(p.x - item.x, p.y - item.y))
    dx, dy = nearest.x - item.x, nearest.y - item.y
    length = math.hypot(dx, dy) or 1.0
    ux, uy = (dx / length, dy / length) if math.hypot(dx, dy) else (1.0, 0.0)
    half = max(item.size[0], item.size[1]) / 2.0 if item.size else UNKNOWN_HALF_SIZE_M
    top = item.size[2] / 2.0 if item.size else UNKNOWN_HALF_SIZE_M
    return Pose(
        item.x + ux * (half + ANCHOR_CLEARANCE_M),
        item.y + uy * (half + ANCHOR_CLEARANCE_M),
        item.z + top + ANCHOR_CLEARANCE_M,
        math.atan2(-uy, -ux),
    )


def _fence(points: Sequence[Sequence[float]]) -> dict[str, Any]:
    xs, ys, zs = zip(*points, strict=True)
    low_x, high_x = min(xs) - FENCE_REACH_M, max(xs) + FENCE_REACH_M
    low_y, high_y = min(ys) - FENCE_REACH_M, max(ys) + FENCE_REACH_M
    return {
        "polygon_m": [[low_x, low_y], [high_x, low_y], [high_x, high_y], [low_x, high_y]],
        "min_z_m": min(zs) - 2.0,
        "max_z_m": max(zs) + 5.0,
    }


def _landmarks(marks: Sequence[Any]) -> list[dict[str, Any]]:
    taken: set[str] = set()
    return [
        {
            "name": _unique_id(mark.name, taken).replace("_", " ").lower(),
            "position_m": [mark.x, mark.y, mark.z],
        }
        for mark in marks
    ]
