"""How a bag recorded by someone else's stack maps onto a scored run (``evaluate-bag --map``).

A mapping YAML names where the robot's pose comes from (an odometry or pose topic, or a
``/tf`` chain between two frames), optional collision, stop and action signals, and how the
recording is cut into episodes (a start/stop topic, time ranges, or one episode per bag).
Every field is checked here, before any bag is opened, and errors name the file and field.
An example with every field: ``docs/replay.md``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.documents import MAPPING, DocumentError, load_yaml
from aerialdojo.errors import ConfigError

#: Pose frames: the task's map frame; a frame whose origin is each episode's start pose
#: (odometry reset per episode, as the bridge does); or a continuous odometry frame
#: anchored at each episode's start (a real robot's odometry, reset only at power-on).
FRAME_MAP = "map"
FRAME_START = "start"
FRAME_ANCHORED = "anchored"
POSE_FRAMES = (FRAME_MAP, FRAME_START, FRAME_ANCHORED)

TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"


@dataclass(frozen=True, kw_only=True)
class PoseSource:
    """Where the scored positions come from: a pose topic, or a ``/tf`` chain.

    Attributes:
        topic: ``nav_msgs/Odometry``, ``geometry_msgs/PoseStamped`` or
            ``PoseWithCovarianceStamped`` topic; None when the pose is a tf chain.
        tf_parent: with ``tf_child``: the pose of ``tf_child`` in ``tf_parent``, composed
            along ``/tf`` and ``/tf_static``.
        tf_child: the robot's body frame, e.g. ``base_link``.
        frame: one of ``POSE_FRAMES``: how the positions relate to the task's map frame.
    """

    topic: str | None = None
    tf_parent: str | None = None
    tf_child: str | None = None
    frame: str = FRAME_ANCHORED


@dataclass(frozen=True, kw_only=True)
class Signal:
    """A topic whose messages mark a moment (a collision, a Stop, an action).

    A message fires when it is a ``std_msgs/Bool`` that is true; with ``below``, when its
    value (``sensor_msgs/Range`` range, ``LaserScan`` nearest valid range, a ``std_msgs``
    number's data) is below it; any other message fires on arrival.

    Attributes:
        topic: the topic.
        below: threshold for numeric messages; None to fire on every (true) message.
    """

    topic: str
    below: float | None = None


@dataclass(frozen=True, kw_only=True)
class StillStop:
    """A Stop judged from the pose: the robot held still at the end of the episode.

    Attributes:
        speed_below_mps: speeds under this count as still.
        for_s: it must have been still this long before the episode's end.
    """

    speed_below_mps: float
    for_s: float


@dataclass(frozen=True, kw_only=True)
class TimeRange:
    """One episode by time, in seconds from the bag's first message."""

    episode_id: str
    start_s: float
    end_s: float


#: Episode cuts.
CUT_TOPIC = "topic"
CUT_RANGES = "ranges"
CUT_PER_BAG = "per_bag"


@dataclass(frozen=True, kw_only=True)
class EpisodeCuts:
    """How the recording is cut into episodes.

    Attributes:
        kind: ``CUT_TOPIC``, ``CUT_RANGES`` or ``CUT_PER_BAG``.
        topic: a ``std_msgs/String`` (``start_value`` [episode id] / ``stop_value``) or
            ``std_msgs/Bool`` (true starts, false stops) topic, for ``CUT_TOPIC``.
        start_value, stop_value: the strings that start and stop an episode.
        episode_ids: episodes in the order they start (``CUT_TOPIC``, where the start
            message names none) or in the order of the bags (``CUT_PER_BAG``).
        ranges: the episodes of ``CUT_RANGES``.
    """

    kind: str
    topic: str | None = None
    start_value: str = "start"
    stop_value: str = "stop"
    episode_ids: tuple[str, ...] = ()
    ranges: tuple[TimeRange, ...] = ()


@dataclass(frozen=True, kw_only=True)
class BagMapping:
    """A whole mapping file.

    Attributes:
        path: the file, named in errors.
        pose: where positions come from.
        collision: what marks a collision; None: the robot never collided.
        stop: a topic whose message is the agent's Stop.
        still_stop: or: a Stop judged from the pose at the end of an episode.
        actions: a topic with one message per discrete action, counted against the task's
            budget; None: no budget check (a robot moving continuously takes no actions).
        episodes: how the recording is cut.
    """

    path: Path
    pose: PoseSource
    collision: Signal | None
    stop: Signal | None
    still_stop: StillStop | None
    actions: Signal | None
    episodes: EpisodeCuts

    def where(self, field_name: str) -> str:
        """``mapping.yaml pose.topic``: where a value came from, for error messages."""
        return f"{self.path.name} {field_name}"

    def topics(self) -> dict[str, str]:
        """Every topic the mapping reads, with the field that names it."""
        named = {
            "pose.topic": self.pose.topic,
            "collision.topic": self.collision.topic if self.collision else None,
            "stop.topic": self.stop.topic if self.stop else None,
            "actions.topic": self.actions.topic if self.actions else None,
            "episodes.topic": self.episodes.topic,
        }
        if self.pose.tf_child is not None:
            named["pose.tf"] = TF_TOPIC
        return {topic: field_name for field_name, topic in named.items() if topic is not None}


class _Fields:
    """Reads one mapping of the YAML, naming file and field in every error."""

    def __init__(self, path: Path, prefix: str, data: Any, allowed: tuple[str, ...]) -> None:
        self.path = path
        self.prefix = prefix
        if not isinstance(data, Mapping):
            raise self.error("", f"must be a mapping, got {data!r}")
        unknown = sorted(set(data) - set(allowed))
        if unknown:
            raise self.error(unknown[0], f"unknown field; allowed: {', '.join(allowed)}")
        self.data: Mapping[str, Any] = data

    def error(self, name: str, problem: str) -> ConfigError:
        field_name = f"{self.prefix}.{name}" if self.prefix and name else self.prefix or name
        return ConfigError(f"{self.path}: {field_name or '(top level)'}: {problem}")

    def has(self, name: str) -> bool:
        return name in self.data

    def text(self, name: str, default: str | None = None) -> str | None:
        value = self.data.get(name, default)
        if value is not None and (not isinstance(value, str) or not value):
            raise self.error(name, f"must be a non-empty string, got {value!r}")
        return value

    def topic(self, name: str) -> str | None:
        value = self.text(name)
        if value is not None and not value.startswith("/"):
            raise self.error(name, f"a topic name starts with '/', got {value!r}")
        return value

    def number(self, name: str, *, minimum: float = 0.0, strict: bool = False) -> float | None:
        value = self.data.get(name)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.error(name, f"must be a number, got {value!r}")
        number = float(value)
        if not math.isfinite(number) or number < minimum or (strict and number == minimum):
            bound = f"> {minimum:g}" if strict else f">= {minimum:g}"
            raise self.error(name, f"must be a finite number {bound}, got {value!r}")
        return number

    def ids(self, name: str) -> tuple[str, ...]:
        value = self.data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.error(name, f"must be a list of episode ids, got {value!r}")
        if len(set(value)) != len(value):
            raise self.error(name, f"repeats an episode id: {value!r}")
        return tuple(value)


def _signal(path: Path, name: str, data: Any) -> Signal:
    fields = _Fields(path, name, data, ("topic", "below"))
    topic = fields.topic("topic")
    if topic is None:
        raise fields.error("topic", "required")
    return Signal(topic=topic, below=fields.number("below", minimum=-math.inf))


def _pose(path: Path, data: Any) -> PoseSource:
    fields = _Fields(path, "pose", data, ("topic", "tf", "frame"))
    frame = fields.text("frame", FRAME_ANCHORED)
    if frame not in POSE_FRAMES:
        raise fields.error("frame", f"must be one of {', '.join(POSE_FRAMES)}, got {frame!r}")
    topic = fields.topic("topic")
    if (topic is None) == (not fields.has("tf")):
        raise fields.error("", "give exactly one of topic (a pose topic) and tf (two frames)")
    if topic is not None:
        return PoseSource(topic=topic, frame=str(frame))
    tf = _Fields(path, "pose.tf", fields.data["tf"], ("parent", "child"))
    parent, child = tf.text("parent"), tf.text("child")
    if parent is None or child is None:
        raise tf.error("parent" if parent is None else "child", "required (a frame id)")
    if parent == child:
        raise tf.error("child", f"must differ from parent, both are {child!r}")
    return PoseSource(tf_parent=parent, tf_child=child, frame=str(frame))


def _stop(path: Path, data: Any) -> tuple[Signal | None, StillStop | None]:
    fields = _Fields(path, "stop", data, ("topic", "below", "speed_below_mps", "for_s"))
    if fields.has("topic"):
        if fields.has("speed_below_mps") or fields.has("for_s"):
            raise fields.error("", "give either topic or speed_below_mps and for_s, not both")
        return _signal(path, "stop", data), None
    speed = fields.number("speed_below_mps", strict=True)
    duration = fields.number("for_s", strict=True)
    if speed is None or duration is None:
        raise fields.error("", "give topic, or speed_below_mps and for_s (a Stop held still)")
    return None, StillStop(speed_below_mps=speed, for_s=duration)


def _episodes(path: Path, data: Any) -> EpisodeCuts:
    fields = _Fields(
        path,
        "episodes",
        data,
        ("topic", "start_value", "stop_value", "episode_ids", "ranges", "per_bag"),
    )
    chosen = [kind for kind in (CUT_TOPIC, CUT_RANGES, CUT_PER_BAG) if fields.has(kind)]
    if len(chosen) != 1:
        raise fields.error("", "give exactly one of topic (start/stop messages), ranges or per_bag")
    if chosen == [CUT_PER_BAG]:
        return EpisodeCuts(kind=CUT_PER_BAG, episode_ids=fields.ids(CUT_PER_BAG))
    if chosen == [CUT_RANGES]:
        ranges = fields.data[CUT_RANGES]
        if not isinstance(ranges, list) or not ranges:
            raise fields.error(CUT_RANGES, f"must be a non-empty list, got {ranges!r}")
        parsed = []
        for index, item in enumerate(ranges):
            entry = _Fields(
                path, f"episodes.ranges[{index}]", item, ("episode_id", "start_s", "end_s")
            )
            episode_id = entry.text("episode_id")
            start, end = entry.number("start_s"), entry.number("end_s")
            if episode_id is None or start is None or end is None:
                raise entry.error("", "needs episode_id, start_s and end_s")
            if end <= start:
                raise entry.error("end_s", f"{end:g} must be after start_s {start:g}")
            parsed.append(TimeRange(episode_id=episode_id, start_s=start, end_s=end))
        ids = [item.episode_id for item in parsed]
        if len(set(ids)) != len(ids):
            raise fields.error(CUT_RANGES, f"repeats an episode id: {ids}")
        return EpisodeCuts(kind=CUT_RANGES, ranges=tuple(parsed))
    start_value, stop_value = fields.text("start_value", "start"), fields.text("stop_value", "stop")
    assert start_value is not None and stop_value is not None
    if start_value == stop_value:
        raise fields.error("stop_value", f"must differ from start_value {start_value!r}")
    return EpisodeCuts(
        kind=CUT_TOPIC,
        topic=fields.topic("topic"),
        start_value=start_value,
        stop_value=stop_value,
        episode_ids=fields.ids("episode_ids"),
    )


def parse_mapping(path: Path, data: Any) -> BagMapping:
    """A mapping from its parsed YAML.

    Raises:
        ConfigError: a missing, unknown or malformed field, named with file and field.
    """
    fields = _Fields(path, "", data, ("pose", "collision", "stop", "actions", "episodes"))
    for required in ("pose", "episodes"):
        if not fields.has(required):
            raise fields.error(required, "required")
    stop, still = (None, None) if not fields.has("stop") else _stop(path, fields.data["stop"])
    return BagMapping(
        path=path,
        pose=_pose(path, fields.data["pose"]),
        collision=_signal(path, "collision", fields.data["collision"])
        if fields.has("collision")
        else None,
        stop=stop,
        still_stop=still,
        actions=_signal(path, "actions", fields.data["actions"]) if fields.has("actions") else None,
        episodes=_episodes(path, fields.data["episodes"]),
    )


def load_mapping(path: Path) -> BagMapping:
    """Read and check a mapping YAML file.

    Raises:
        ConfigError: unreadable, not YAML, or a bad field (file and field named).
    """
    try:
        data = load_yaml(path, MAPPING)
    except DocumentError as error:
        raise ConfigError(str(error)) from None
    return parse_mapping(path, data)
