"""Objects a simulator spawns by blueprint when an episode starts (ROS-free).

A suite made for a simulator's own world can bring its targets with it: an episode lists the
objects to spawn (CARLA-Air: actors of the server's blueprint library, as AGOS-Bench spawns
its target and distractor vehicles), the task manager hands them to the bridge with the
reset (``SimReset.objects``), and a backend that can spawn places them before the agents
(``SimulatorBackend.place_objects``); one that cannot refuses the episode.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aerialdojo.geometry import Pose

#: What a blueprint id looks like (``vehicle.tesla.model3``, ``static.prop.vendingmachine``).
BLUEPRINT_PATTERN = re.compile(r"^[a-z0-9_\-]+(\.[a-z0-9_\- ]+)+$")
_OBJECT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")


@dataclass(frozen=True, kw_only=True)
class SpawnedObject:
    """One object spawned when an episode starts.

    Attributes:
        object_id: the episode's name for it (a target's ``target_object_id``).
        blueprint: the simulator's blueprint id.
        pose: map frame; ``z`` the ground it stands on, ``yaw`` its heading.
        attributes: blueprint attributes to set, as (name, value), e.g. ``("color",
            "200,20,20")``.
        size: its approximate box (length along its heading, width, height), metres.
    """

    object_id: str
    blueprint: str
    pose: Pose
    attributes: tuple[tuple[str, str], ...] = ()
    size: tuple[float, float, float]

    @property
    def centre(self) -> tuple[float, float, float]:
        """The middle of its box, map frame."""
        return (self.pose.x, self.pose.y, self.pose.z + self.size[2] / 2.0)

    def box(self) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
        """The axis-aligned box around it (its heading's footprint), map frame."""
        length, width, height = self.size
        c, s = abs(math.cos(self.pose.yaw)), abs(math.sin(self.pose.yaw))
        half_x = (length * c + width * s) / 2.0
        half_y = (length * s + width * c) / 2.0
        x, y, z = self.pose.x, self.pose.y, self.pose.z
        return (x - half_x, y - half_y, z), (x + half_x, y + half_y, z + height)


def spawn_to_json(spawn: SpawnedObject) -> dict[str, Any]:
    """The JSON object of a spawned object (suite files)."""
    pose = spawn.pose
    return {
        "object_id": spawn.object_id,
        "blueprint": spawn.blueprint,
        "pose": [round(pose.x, 4), round(pose.y, 4), round(pose.z, 4), round(pose.yaw, 6)],
        "attributes": dict(spawn.attributes),
        "size": [round(v, 4) for v in spawn.size],
    }


def spawn_from_json(raw: Any, where: str, problems: list[str]) -> SpawnedObject | None:
    """A spawned object of a JSON object, or None with every problem appended."""
    count = len(problems)
    if not isinstance(raw, Mapping):
        problems.append(f"{where}: not an object")
        return None
    object_id: Any = raw.get("object_id")
    blueprint: Any = raw.get("blueprint")
    if not (isinstance(object_id, str) and _OBJECT_ID.match(object_id)):
        problems.append(f"{where}: object_id: {object_id!r} is not [A-Za-z0-9][A-Za-z0-9_-]*")
    if not (isinstance(blueprint, str) and BLUEPRINT_PATTERN.match(blueprint)):
        problems.append(f"{where}: blueprint: {blueprint!r} is not a blueprint id")
    pose: Any = raw.get("pose")
    size: Any = raw.get("size")
    if not _numbers(pose, 4):
        problems.append(f"{where}: pose: {pose!r} is not [x, y, z, yaw]")
    if not (_numbers(size, 3) and all(v > 0 for v in size)):
        problems.append(f"{where}: size: {size!r} is not [length, width, height] > 0")
    attributes: Any = raw.get("attributes", {})
    if not (
        isinstance(attributes, Mapping)
        and all(isinstance(k, str) and isinstance(v, str) for k, v in attributes.items())
    ):
        problems.append(f"{where}: attributes: {attributes!r} is not a map of strings")
    if len(problems) > count:
        return None
    return SpawnedObject(
        object_id=object_id,
        blueprint=blueprint,
        pose=Pose(*(float(v) for v in pose)),
        attributes=tuple(sorted(attributes.items())),
        size=(float(size[0]), float(size[1]), float(size[2])),
    )


def _numbers(value: Any, count: int) -> bool:
    return (
        isinstance(value, list)
        and len(value) == count
        and all(
            isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)
            for v in value
        )
    )
