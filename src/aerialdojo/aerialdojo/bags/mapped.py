"""Scores a bag that another stack recorded (a real robot's ``ros2 bag record``), as a
mapping file says (``bags.mapping``), with the same assembler and scoring as live runs.

The bag is read in one pass: the pose source, the collision, stop and action signals and
the episode cuts. Each episode then becomes the events a live run would have emitted
(STARTED, its ending) and the pose topic's positions replace the events' poses, exactly as
``evaluate-bag --pose-topic`` does for our own bags.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_typestore
from scipy.spatial.transform import Rotation

from aerialdojo.actions import STOP
from aerialdojo.bags.mapping import (
    CUT_PER_BAG,
    CUT_RANGES,
    FRAME_ANCHORED,
    FRAME_START,
    TF_STATIC_TOPIC,
    TF_TOPIC,
    BagMapping,
    Signal,
)
from aerialdojo.errors import BagError, ConfigError
from aerialdojo.events import EpisodeAssembler, EventKind, PoseTrack
from aerialdojo.geometry import Pose
from aerialdojo.protocols import trace_builder

_POSE_TYPES = (
    "nav_msgs/msg/Odometry",
    "geometry_msgs/msg/PoseStamped",
    "geometry_msgs/msg/PoseWithCovarianceStamped",
)
_NUMBER_TYPES = tuple(
    f"std_msgs/msg/{name}" for name in ("Float32", "Float64", "Int8", "Int16", "Int32", "Int64")
)
_TYPES = get_typestore(Stores.ROS2_JAZZY).types


@dataclass
class _Edge:
    """One parent -> child transform over time."""

    stamps: list[int] = field(default_factory=list)
    translations: list[tuple[float, float, float]] = field(default_factory=list)
    rotations: list[tuple[float, float, float, float]] = field(default_factory=list)
    static: bool = False


@dataclass
class Recording:
    """What one pass over a bag found for the mapping.

    Attributes:
        stamps_ns: pose stamps, ascending.
        positions: (N, 3) positions in the pose source's frame.
        yaws: (N,) headings in that frame, radians.
        collisions, stops, actions: stamps at which each signal fired.
        markers: (stamp, starts, episode id or None) of the episode topic.
        start_ns, end_ns: the bag's first and last message times.
        messages: mapped messages read (the benchmark's event count).
    """

    stamps_ns: np.ndarray
    positions: np.ndarray
    yaws: np.ndarray
    collisions: list[int]
    stops: list[int]
    actions: list[int]
    markers: list[tuple[int, bool, str | None]]
    start_ns: int
    end_ns: int
    messages: int


@dataclass(frozen=True)
class Window:
    """One episode's span in the recording, and how it ended."""

    episode_id: str
    start_ns: int
    end_ns: int
    kind: EventKind = EventKind.BUDGET_EXHAUSTED
    step: int = 0


@dataclass
class MappedEvent:
    """An ``EpisodeEvent`` made from a mapped bag (the fields the assembler reads)."""

    header: Any
    episode_id: str
    attempt: int
    kind: int
    action: str
    step: int
    pose: Any
    collided: bool
    message: str
    episode_json: str


def _stamp_ns(message: Any, log_time_ns: int) -> int:
    header = getattr(message, "header", None)
    if header is None:
        return log_time_ns
    return int(header.stamp.sec) * 1_000_000_000 + int(header.stamp.nanosec)


def _yaw(x: float, y: float, z: float, w: float) -> float:
    return math.atan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))


def _value(message: Any, msgtype: str, where: str) -> float:
    if msgtype == "sensor_msgs/msg/Range":
        return float(message.range)
    if msgtype == "sensor_msgs/msg/LaserScan":
        ranges = np.asarray(message.ranges, dtype=np.float64)
        valid = ranges[
            np.isfinite(ranges) & (ranges >= message.range_min) & (ranges <= message.range_max)
        ]
        return float(valid.min()) if valid.size else math.inf
    if msgtype in _NUMBER_TYPES:
        return float(message.data)
    raise ConfigError(
        f"{where}.below: the topic is {msgtype}, which carries no number (Range, LaserScan "
        "or a std_msgs number)"
    )


def _fires(signal: Signal, message: Any, msgtype: str, where: str) -> bool:
    if signal.below is not None:
        return _value(message, msgtype, where) < signal.below
    if msgtype == "std_msgs/msg/Bool":
        return bool(message.data)
    return True


class _Pass:
    """Collects what the mapping needs from one or more bags read together."""

    def __init__(self, mapping: BagMapping) -> None:
        self.mapping = mapping
        self.stamps: list[int] = []
        self.positions: list[tuple[float, float, float]] = []
        self.yaws: list[float] = []
        self.edges: dict[tuple[str, str], _Edge] = {}
        self.signals: dict[str, list[int]] = {"collision": [], "stop": [], "actions": []}
        self.markers: list[tuple[int, bool, str | None]] = []
        self.messages = 0

    def read(self, bags: Sequence[Path]) -> Recording:
        names = ", ".join(str(bag) for bag in bags)
        try:
            with AnyReader(
                list(bags), default_typestore=get_typestore(Stores.ROS2_JAZZY)
            ) as reader:
                connections = self._connections(reader, names)
                start, end = reader.start_time, reader.end_time
                for connection, log_time, raw in reader.messages(connections=connections):
                    message = reader.deserialize(raw, connection.msgtype)
                    self._take(connection.topic, connection.msgtype, message, log_time)
        except (BagError, ConfigError):
            raise
        except Exception as error:  # rosbags raises several unrelated types for unreadable bags
            raise BagError(f"{names}: cannot read bag: {error}") from error
        if self.mapping.pose.tf_child is not None:
            self._compose_tf(names)
        if not self.stamps:
            source = self.mapping.pose.topic or TF_TOPIC
            raise BagError(f"{names}: the pose source {source} holds no pose")
        order = np.argsort(np.array(self.stamps, dtype=np.int64), kind="stable")
        return Recording(
            stamps_ns=np.array(self.stamps, dtype=np.int64)[order],
            positions=np.array(self.positions, dtype=np.float64).reshape(-1, 3)[order],
            yaws=np.array(self.yaws, dtype=np.float64)[order],
            collisions=sorted(self.signals["collision"]),
            stops=sorted(self.signals["stop"]),
            actions=sorted(self.signals["actions"]),
            markers=sorted(self.markers, key=lambda marker: marker[0]),
            start_ns=int(start),
            end_ns=int(end),
            messages=self.messages,
        )

    def _connections(self, reader: AnyReader, names: str) -> list[Any]:
        present = {connection.topic: connection.msgtype for connection in reader.connections}
        wanted = self.mapping.topics()
        for topic, field_name in wanted.items():
            if topic not in present:
                raise BagError(
                    f"{names}: no {topic} topic ({self.mapping.where(field_name)}); the bag has "
                    f"{', '.join(sorted(present)) or 'no topics'}"
                )
        pose_topic = self.mapping.pose.topic
        if pose_topic is not None and present[pose_topic] not in _POSE_TYPES:
            raise BagError(
                f"{names}: {pose_topic} ({self.mapping.where('pose.topic')}) is "
                f"{present[pose_topic]}, which holds no pose; use one of {', '.join(_POSE_TYPES)}"
            )
        episodes_topic = self.mapping.episodes.topic
        if episodes_topic is not None and present[episodes_topic] not in (
            "std_msgs/msg/String",
            "std_msgs/msg/Bool",
        ):
            raise BagError(
                f"{names}: {episodes_topic} ({self.mapping.where('episodes.topic')}) is "
                f"{present[episodes_topic]}; episode cuts need std_msgs/String or Bool"
            )
        if self.mapping.pose.tf_child is not None:
            wanted = {**wanted, TF_STATIC_TOPIC: "pose.tf"}
        return [connection for connection in reader.connections if connection.topic in wanted]

    def _take(self, topic: str, msgtype: str, message: Any, log_time: int) -> None:
        self.messages += 1
        mapping = self.mapping
        if topic == mapping.pose.topic:
            pose = message.pose if msgtype == "geometry_msgs/msg/PoseStamped" else message.pose.pose
            self.stamps.append(_stamp_ns(message, log_time))
            self.positions.append((pose.position.x, pose.position.y, pose.position.z))
            q = pose.orientation
            self.yaws.append(_yaw(q.x, q.y, q.z, q.w))
        if topic in (TF_TOPIC, TF_STATIC_TOPIC) and mapping.pose.tf_child is not None:
            for transform in message.transforms:
                key = (transform.header.frame_id.lstrip("/"), transform.child_frame_id.lstrip("/"))
                edge = self.edges.setdefault(key, _Edge())
                edge.static = edge.static or topic == TF_STATIC_TOPIC
                edge.stamps.append(_stamp_ns(transform, log_time))
                t, r = transform.transform.translation, transform.transform.rotation
                edge.translations.append((t.x, t.y, t.z))
                edge.rotations.append((r.x, r.y, r.z, r.w))
        for name, signal in (
            ("collision", mapping.collision),
            ("stop", mapping.stop),
            ("actions", mapping.actions),
        ):
            if (
                signal is not None
                and topic == signal.topic
                and _fires(signal, message, msgtype, mapping.where(name))
            ):
                self.signals[name].append(_stamp_ns(message, log_time))
        if topic == mapping.episodes.topic:
            self._marker(message, msgtype, _stamp_ns(message, log_time))

    def _marker(self, message: Any, msgtype: str, stamp: int) -> None:
        cuts = self.mapping.episodes
        if msgtype == "std_msgs/msg/Bool":
            self.markers.append((stamp, bool(message.data), None))
            return
        text = str(message.data).strip()
        if text == cuts.stop_value:
            self.markers.append((stamp, False, None))
        elif text == cuts.start_value:
            self.markers.append((stamp, True, None))
        elif text.startswith(cuts.start_value + " "):
            self.markers.append((stamp, True, text[len(cuts.start_value) :].strip()))

    def _compose_tf(self, names: str) -> None:
        """The pose of the child frame in the parent frame at each stamp of the chain's
        moving link nearest the child, every other link taken at its latest stamp."""
        parent, child = self.mapping.pose.tf_parent, self.mapping.pose.tf_child
        assert parent is not None and child is not None
        parents = {edge_child: edge_parent for edge_parent, edge_child in self.edges}
        frames = sorted({frame for edge in self.edges for frame in edge})
        for frame, field_name in ((parent, "pose.tf.parent"), (child, "pose.tf.child")):
            if frame not in frames:
                raise BagError(
                    f"{names}: frame {frame!r} ({self.mapping.where(field_name)}) is on neither "
                    f"/tf nor /tf_static; frames: {', '.join(frames) or 'none'}"
                )
        chain = [child]
        while chain[-1] != parent:
            if chain[-1] not in parents or len(chain) > len(frames):
                raise BagError(
                    f"{names}: no chain of transforms from {parent!r} down to {child!r} "
                    f"({self.mapping.where('pose.tf')}); {child!r} hangs under "
                    f"{' <- '.join(reversed(chain))}"
                )
            chain.append(parents[chain[-1]])
        links = [self.edges[(chain[i + 1], chain[i])] for i in range(len(chain) - 1)][::-1]
        moving = [link for link in links if not link.static]
        if not moving:
            raise BagError(f"{names}: every transform from {parent!r} to {child!r} is static")
        times = np.array(sorted(set(moving[-1].stamps)), dtype=np.int64)
        rotation = Rotation.identity(len(times))
        translation = np.zeros((len(times), 3))
        for link in links:
            order = np.argsort(np.array(link.stamps, dtype=np.int64), kind="stable")
            stamps = np.array(link.stamps, dtype=np.int64)[order]
            index = np.clip(np.searchsorted(stamps, times, side="right") - 1, 0, len(stamps) - 1)
            if link.static:
                index = np.full(len(times), len(stamps) - 1)
            link_t = np.array(link.translations)[order][index]
            link_r = Rotation.from_quat(np.array(link.rotations)[order][index])
            translation = translation + rotation.apply(link_t)
            rotation = rotation * link_r
        quaternions = rotation.as_quat()
        self.stamps = [int(stamp) for stamp in times]
        self.positions = [tuple(p) for p in translation.tolist()]  # type: ignore[misc]
        self.yaws = [_yaw(*q) for q in quaternions.tolist()]


def read_recording(bags: Sequence[Path], mapping: BagMapping) -> Recording:
    """One pass over ``bags`` (read together as one recording).

    Raises:
        BagError: unreadable, a missing topic or frame (named with the mapping's field), a
            pose topic of the wrong type, or no pose at all.
        ConfigError: a threshold on a topic that carries no number.
    """
    return _Pass(mapping).read(bags)


def _windows(recording: Recording, mapping: BagMapping, warnings: list[str]) -> list[Window]:
    cuts = mapping.episodes
    if cuts.kind == CUT_RANGES:
        windows = [
            Window(
                item.episode_id,
                recording.start_ns + round(item.start_s * 1e9),
                recording.start_ns + round(item.end_s * 1e9),
            )
            for item in cuts.ranges
        ]
        ordered = sorted(windows, key=lambda window: window.start_ns)
        for before, after in itertools.pairwise(ordered):
            if after.start_ns < before.end_ns:
                raise ConfigError(
                    f"{mapping.where('episodes.ranges')}: episodes {before.episode_id} and "
                    f"{after.episode_id} overlap"
                )
        return windows
    windows, open_start, open_id, unnamed = [], None, None, list(cuts.episode_ids)
    for stamp, starts, named in recording.markers:
        if starts and open_start is None:
            episode_id = named
            if episode_id is None:
                if not unnamed:
                    raise ConfigError(
                        f"{mapping.where('episodes.episode_ids')}: episode {len(windows) + 1} "
                        f"started on {cuts.topic} without an id, and the list names only "
                        f"{len(cuts.episode_ids)}"
                    )
                episode_id = unnamed.pop(0)
            open_start, open_id = stamp, episode_id
        elif not starts and open_start is not None:
            assert open_id is not None
            windows.append(Window(open_id, open_start, stamp))
            open_start = None
    if open_start is not None:
        warnings.append(
            f"episode {open_id} started on {cuts.topic} and never stopped: cut short, not scored"
        )
    if not windows:
        raise BagError(f"{cuts.topic} ({mapping.where('episodes.topic')}) starts no episode")
    return windows


def _ending(window: Window, recording: Recording, mapping: BagMapping, budget: int) -> Window:
    """Where the episode really ended (collision, Stop, budget) and with how many actions."""

    def first(stamps: Sequence[int]) -> int | None:
        inside = [stamp for stamp in stamps if window.start_ns < stamp <= window.end_ns]
        return inside[0] if inside else None

    actions = [s for s in recording.actions if window.start_ns < s <= window.end_ns]
    endings = [
        (stamp, order, kind)
        for order, (stamp, kind) in enumerate(
            (
                (first(recording.collisions), EventKind.COLLIDED),
                (first(recording.stops), EventKind.STOPPED),
                (
                    actions[budget - 1] if len(actions) >= budget else None,
                    EventKind.BUDGET_EXHAUSTED,
                ),
            )
        )
        if stamp is not None
    ]
    if endings:
        end, _, kind = min(endings)
    else:
        end, kind = window.end_ns, EventKind.BUDGET_EXHAUSTED
        if mapping.still_stop is not None and _held_still(recording, window, mapping):
            kind = EventKind.STOPPED
    before = sum(1 for stamp in actions if stamp < end)
    step = {
        EventKind.BUDGET_EXHAUSTED: min(before + (end in actions), budget),
        EventKind.STOPPED: before + 1,
        EventKind.COLLIDED: before + 1,
    }[kind]
    return Window(window.episode_id, window.start_ns, end, kind, step)


def _held_still(recording: Recording, window: Window, mapping: BagMapping) -> bool:
    still = mapping.still_stop
    assert still is not None
    since = window.end_ns - round(still.for_s * 1e9)
    if since < window.start_ns:
        return False
    chosen = (recording.stamps_ns >= since) & (recording.stamps_ns <= window.end_ns)
    stamps, points = recording.stamps_ns[chosen], recording.positions[chosen]
    if len(stamps) < 2:
        return False
    seconds = np.diff(stamps) / 1e9
    speeds = np.linalg.norm(np.diff(points, axis=0), axis=1) / np.maximum(seconds, 1e-9)
    return bool(np.all(speeds < still.speed_below_mps))


def _track(
    recording: Recording,
    mapping: BagMapping,
    windows: Sequence[Window],
    records: Mapping[str, Mapping[str, Any]],
) -> PoseTrack:
    """The positions to score, in the task's map frame (or start-relative, for the
    assembler to place)."""
    if mapping.pose.frame != FRAME_ANCHORED:
        return PoseTrack(
            stamps_ns=recording.stamps_ns,
            positions=recording.positions,
            relative_to_start=mapping.pose.frame == FRAME_START,
        )
    stamps: list[np.ndarray] = []
    positions: list[np.ndarray] = []
    for window in windows:
        start = Pose(*records[window.episode_id]["start"])
        inside = (recording.stamps_ns > window.start_ns) & (recording.stamps_ns <= window.end_ns)
        anchor = max(int(np.searchsorted(recording.stamps_ns, window.start_ns, "right")) - 1, 0)
        origin, heading = recording.positions[anchor], recording.yaws[anchor]
        turn = start.yaw - heading
        rotation = np.array(
            (
                (math.cos(turn), -math.sin(turn), 0.0),
                (math.sin(turn), math.cos(turn), 0.0),
                (0.0, 0.0, 1.0),
            )
        )
        moved = (recording.positions[inside] - origin) @ rotation.T + np.array(start.position)
        stamps += [np.array([window.start_ns]), recording.stamps_ns[inside]]
        positions += [np.array([start.position]), moved]
    return PoseTrack(
        stamps_ns=np.concatenate(stamps),
        positions=np.concatenate(positions),
        relative_to_start=False,
    )


def _events(window: Window, record: Mapping[str, Any]) -> list[MappedEvent]:
    def event(kind: EventKind, stamp: int, step: int, action: str = "") -> MappedEvent:
        x, y, z = record["start"][:3]
        return MappedEvent(
            header=_TYPES["std_msgs/msg/Header"](
                stamp=_TYPES["builtin_interfaces/msg/Time"](
                    sec=stamp // 1_000_000_000, nanosec=stamp % 1_000_000_000
                ),
                frame_id="map",
            ),
            episode_id=window.episode_id,
            attempt=0,
            kind=int(kind),
            action=action,
            step=step,
            pose=_TYPES["geometry_msgs/msg/Pose"](
                position=_TYPES["geometry_msgs/msg/Point"](x=x, y=y, z=z),
                orientation=_TYPES["geometry_msgs/msg/Quaternion"](x=0.0, y=0.0, z=0.0, w=1.0),
            ),
            collided=kind is EventKind.COLLIDED,
            message="",
            episode_json=json.dumps(dict(record)) if kind is EventKind.STARTED else "",
        )

    action = STOP if window.kind is EventKind.STOPPED else ""
    return [
        event(EventKind.STARTED, window.start_ns, 0),
        event(window.kind, window.end_ns, window.step, action),
    ]


@dataclass
class MappedRun:
    """A mapped bag folded into traces.

    Attributes:
        assembler: the folded episodes.
        warnings: what a reader of the numbers must know (how they were mapped, what was
            cut short).
        messages: the mapped messages read.
    """

    assembler: EpisodeAssembler
    warnings: list[str]
    messages: int


def score_mapped_bags(
    bags: Sequence[Path], mapping: BagMapping, records: Mapping[str, Mapping[str, Any]]
) -> MappedRun:
    """Cut ``bags`` into episodes as ``mapping`` says and fold them into traces.

    Args:
        bags: rosbag2 directories (SQLite3 or MCAP); with ``per_bag`` cuts, one episode each
            in order, otherwise read together as one recording.
        mapping: the checked mapping file.
        records: the task file's ground-truth records by episode id.

    Raises:
        BagError: a missing topic or frame, an unreadable bag, no episode.
        ConfigError: episode ids that the task file lacks, or too few of them.
    """
    warnings = [f"scored from a bag mapped by {mapping.path}; no agent events were recorded"]
    if mapping.episodes.kind == CUT_PER_BAG:
        ids = mapping.episodes.episode_ids
        if len(ids) != len(bags):
            raise ConfigError(
                f"{mapping.where('episodes.per_bag')}: {len(ids)} episode id(s) for "
                f"{len(bags)} bag(s); give one per bag, in the order of the command line"
            )
        # Each bag keeps its own clock: bags recorded in simulation time may all start at 0.
        recordings = [read_recording([bag], mapping) for bag in bags]
        cuts = [
            ([Window(episode_id, int(r.stamps_ns[0]), int(r.stamps_ns[-1]))], r)
            for episode_id, r in zip(ids, recordings, strict=True)
        ]
    else:
        recording = read_recording(bags, mapping)
        recordings = [recording]
        cuts = [(_windows(recording, mapping, warnings), recording)]
    for windows, _ in cuts:
        for window in windows:
            _check_episode(window.episode_id, records, mapping)
    assembler = EpisodeAssembler(
        trace_builder, records={key: dict(value) for key, value in records.items()}
    )
    ended: list[tuple[Window, PoseTrack]] = []
    for windows, recording in cuts:
        finished = [
            _ending(window, recording, mapping, int(records[window.episode_id]["action_budget"]))
            for window in windows
        ]
        track = _track(recording, mapping, finished, records)
        ended += [(window, track) for window in finished]
    for window, track in sorted(ended, key=lambda item: item[0].start_ns):
        assembler.track = track
        for event in _events(window, records[window.episode_id]):
            assembler.add(event)
    assembler.run_summary = f"{len(ended)} episode(s) cut from {len(bags)} mapped bag(s)"
    return MappedRun(assembler, warnings, sum(r.messages for r in recordings))


def _check_episode(
    episode_id: str, records: Mapping[str, Mapping[str, Any]], mapping: BagMapping
) -> None:
    if episode_id not in records:
        raise ConfigError(
            f"{mapping.path}: episode {episode_id!r} is not in the task file "
            f"(it has {len(records)} episodes, e.g. {', '.join(sorted(records)[:3])})"
        )
