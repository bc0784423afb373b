"""Reads a run's episode events back from a bag, with rosbags (and mcap for salvage) only."""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

import numpy as np
from mcap.exceptions import McapError
from mcap.records import Channel, Chunk, Footer, Message, Schema
from mcap.stream_reader import CRCValidationError, StreamReader, breakup_chunk
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.base import TypesysError

from aerialdojo.bags.event_cdr import decodable, decoder_for
from aerialdojo.bags.integrity import (
    being_recorded,
    check_mcap_magic,
    check_recorded_digests,
)
from aerialdojo.collector import cyclic_gc_paused
from aerialdojo.errors import BagError, MetricsError
from aerialdojo.events import EpisodeAssembler, PoseTrack
from aerialdojo.protocols import trace_builder
from aerialdojo.runtime import NODES_TOPIC

EVENTS_TOPIC = "/aerialdojo/episode_events"
EVENT_TYPE = "aerialdojo_interfaces/msg/EpisodeEvent"
#: Who acted for each agent (``AgentInfo``), latched by the agent nodes.
AGENTS_TOPIC = "/aerialdojo/agents"


def _side_topics(assembler: EpisodeAssembler) -> dict[str, Callable[[Any], None]]:
    """The latched topics beside the events that a replay folds in, and where each goes."""
    return {AGENTS_TOPIC: assembler.add_agent_info, NODES_TOPIC: assembler.add_node_info}


@dataclass
class ReplayedBag:
    """The events of a bag folded into traces, and what the reader had to say about the bag.

    Attributes:
        assembler: the folded events.
        warnings: e.g. that the bag was never closed and only its complete chunks were read.
        digests: the last bag's files (``integrity.bag_digests``), for its run's record.
    """

    assembler: EpisodeAssembler
    warnings: list[str] = field(default_factory=list)
    digests: dict[str, dict[str, Any]] = field(default_factory=dict)


def read_events(bag: Path, topic: str = EVENTS_TOPIC, *, required: bool = True) -> Iterator[Any]:
    """Yield the messages of ``topic`` (by default the episode events) of a closed bag in
    recording order, deserialized with the message definitions embedded in the bag (no
    aerialdojo build needed).

    Raises:
        BagError: not a bag, or no ``topic`` in it when ``required``.
    """
    yield from read_topics(bag, [topic], required=[topic] if required else [])[topic]


def read_topics(
    bag: Path, topics: Sequence[str], *, required: Sequence[str] = ()
) -> dict[str, list[Any]]:
    """The messages of each of ``topics`` of a closed bag, each topic's in recording order,
    read in one pass. Episode events of a definition ``bags.event_cdr`` knows (by the type
    hash of the definition the bag recorded) are decoded by it, anything else with the
    message definitions embedded in the bag.

    Raises:
        BagError: not a bag, or a topic of ``required`` missing from it.
    """
    messages: dict[str, list[Any]] = {topic: [] for topic in topics}
    try:
        with AnyReader([bag]) as reader:
            connections = [c for c in reader.connections if c.topic in messages]
            missing = [t for t in required if not any(c.topic == t for c in connections)]
            if missing:
                present = sorted({c.topic for c in reader.connections})
                raise BagError(
                    f"{bag}: no {missing[0]} topic; the bag has {', '.join(present) or 'none'}"
                )
            fast = {
                c.id: decoder
                for c in connections
                if c.msgtype == EVENT_TYPE
                and (decoder := decoder_for(reader.typestore.hash_rihs01(c.msgtype)))
            }
            for connection, _timestamp, raw in reader.messages(connections=connections):
                decode = fast.get(connection.id)
                if decode is not None and decodable(raw):
                    message: Any = decode(raw)
                else:
                    message = reader.deserialize(raw, connection.msgtype)
                messages[connection.topic].append(message)
    except BagError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for unreadable bags
        raise BagError(f"{bag}: cannot read bag: {error}") from error
    return messages


#: The MCAP schema encoding of ROS 2 message definitions (what rosbag2 writes).
ROS2_SCHEMA_ENCODING = "ros2msg"


@dataclass(frozen=True)
class Gap:
    """Where a salvaged stream of events misses some: a chunk that failed its CRC or could
    not be decoded. The attempt under way there is not scored (``EpisodeAssembler.gap``)."""

    reason: str


@dataclass
class Salvage:
    """What could be read of an MCAP file record by record.

    Attributes:
        messages: each wanted topic's messages in the order written; the first topic's
            (the events) with a ``Gap`` wherever a chunk was lost.
        lost_bytes: bytes after the last whole record (a writer that died mid-record).
        closed: the file ends with its footer: its writer closed it.
        damaged: one line per chunk that failed its CRC or could not be decoded.
        unverified: chunks written without a CRC (an older recorder's), read on trust.
    """

    messages: dict[str, list[Any]]
    lost_bytes: int = 0
    closed: bool = False
    damaged: list[str] = field(default_factory=list)
    unverified: int = 0


def salvage_events(mcap_file: Path, topic: str = EVENTS_TOPIC) -> tuple[list[Any], int]:
    """The events of an MCAP file whose writer never closed it (see ``salvage``), and the
    bytes after the last whole record; chunks that fail their CRC are left out.

    Raises:
        BagError: not an MCAP file, or ``topic`` is not encoded as ROS 2 messages.
    """
    salvaged = salvage(mcap_file, [topic])
    events = [event for event in salvaged.messages[topic] if not isinstance(event, Gap)]
    return events, salvaged.lost_bytes


def salvage(mcap_file: Path, topics: Sequence[str]) -> Salvage:
    """The messages of ``topics`` in an MCAP file whose writer never closed it (no summary,
    no footer, no metadata.yaml), that was cut short or that is damaged, read record by
    record without holding more than one chunk in memory, until the file ends or breaks off.
    Every chunk's CRC is checked where it has one; a chunk that fails is skipped, and the
    first topic's messages get a ``Gap`` there.

    Raises:
        BagError: not an MCAP file, or a topic not encoded as ROS 2 messages (e.g. a
            JSON-schema channel).
    """
    check_mcap_magic(mcap_file)
    typestore = get_typestore(Stores.EMPTY)
    schemas: dict[int, Schema] = {}
    wanted: dict[int, tuple[str, str]] = {}  # channel id -> (topic, message type)
    found = Salvage(messages={topic: [] for topic in topics})
    events = found.messages[topics[0]]
    size = mcap_file.stat().st_size

    def take(record: Any) -> None:
        if isinstance(record, Schema):
            schemas[record.id] = record
        elif isinstance(record, Channel) and record.topic in found.messages:
            schema = schemas.get(record.schema_id)
            if schema is None or schema.encoding != ROS2_SCHEMA_ENCODING:
                encoding = schema.encoding if schema else "no schema"
                raise BagError(
                    f"{mcap_file}: {record.topic} is encoded as {encoding!r}, not as ROS 2 "
                    "messages: not an aerialdojo bag"
                )
            try:
                typestore.register(get_types_from_msg(schema.data.decode(), schema.name))
            except (TypesysError, UnicodeDecodeError) as error:
                # Schemas lie outside the chunks, without a CRC: a damaged one is refused
                # rather than used to decode (it could decode to other numbers).
                raise BagError(
                    f"{mcap_file}: the message definition of {record.topic} ({schema.name}) "
                    f"is damaged: {error}"
                ) from None
            wanted[record.id] = (record.topic, schema.name)
        elif isinstance(record, Message) and record.channel_id in wanted:
            topic, msgtype = wanted[record.channel_id]
            try:
                found.messages[topic].append(typestore.deserialize_cdr(record.data, msgtype))
            except Exception as error:  # rosbags raises several types for bad CDR
                reason = f"a {topic} message at log time {record.log_time} cannot be decoded"
                found.damaged.append(f"{reason} ({error})")
                events.append(Gap(f"its recording is damaged: {reason}"))

    whole = 0  # the end of the last record read whole
    with mcap_file.open("rb") as stream:
        try:
            # The reader only ever calls read(): a plain stand-in for the file will do.
            clamped = cast(BinaryIO, _ClampedReads(stream, size))
            records = StreamReader(clamped, record_size_limit=size, emit_chunks=True).records
            for record in records:
                start, whole = whole, stream.tell()
                if isinstance(record, Footer):
                    found.closed = True
                    break
                if not isinstance(record, Chunk):
                    take(record)
                    continue
                try:
                    inner = breakup_chunk(record, validate_crc=True)
                except (McapError, ValueError, EOFError, struct.error) as error:  # CRC too
                    reason = f"the chunk at byte {start} of {mcap_file.name} fails its CRC"
                    if not isinstance(error, CRCValidationError):
                        reason = f"the chunk at byte {start} of {mcap_file.name} cannot be read"
                    found.damaged.append(f"{reason} ({error})")
                    events.append(Gap(f"its recording is damaged: {reason}"))
                    continue
                found.unverified += record.uncompressed_crc == 0
                for inner_record in inner:
                    take(inner_record)
        except (McapError, EOFError, ValueError, struct.error):
            # The writer died here, or a record's length is damaged (the mcap library
            # unpacks past the end: struct.error): everything before it is whole.
            pass
    found.lost_bytes = 0 if found.closed else size - whole
    return found


class _ClampedReads:
    """A binary file whose reads never ask for more than is left of it. The mcap library
    bounds a record's length (``record_size_limit``) but not the lengths inside it: a
    damaged chunk data length would have it allocate that many bytes (a MemoryError)."""

    def __init__(self, stream: BinaryIO, size: int) -> None:
        self._stream = stream
        self._size = size

    def read(self, length: int = -1) -> bytes:
        left = max(0, self._size - self._stream.tell())
        return self._stream.read(left if length < 0 else min(length, left))


def read_pose_track(bag: Path, topic: str, *, relative_to_start: bool) -> PoseTrack:
    """The positions of a pose topic (nav_msgs/Odometry, geometry_msgs/PoseStamped or
    PoseWithCovarianceStamped) by header stamp.

    Args:
        bag: a closed rosbag2 directory.
        topic: e.g. ``/uav/odom``.
        relative_to_start: the topic's frame starts at each episode's start pose.

    Raises:
        BagError: no such topic, a message type without a pose, or no messages.
    """
    stamps: list[int] = []
    positions: list[tuple[float, float, float]] = []
    try:
        with AnyReader([bag]) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                topics = sorted({c.topic for c in reader.connections})
                raise BagError(f"{bag}: no pose topic {topic}; the bag has {', '.join(topics)}")
            for connection, _timestamp, raw in reader.messages(connections=connections):
                message: Any = reader.deserialize(raw, connection.msgtype)
                pose = _pose_of(message, connection.msgtype, topic)
                stamp = message.header.stamp
                stamps.append(int(stamp.sec) * 1_000_000_000 + int(stamp.nanosec))
                positions.append((pose.position.x, pose.position.y, pose.position.z))
    except BagError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for unreadable bags
        raise BagError(f"{bag}: cannot read bag: {error}") from error
    if not stamps:
        raise BagError(f"{bag}: pose topic {topic} holds no messages")
    order = np.argsort(np.array(stamps), kind="stable")
    return PoseTrack(
        stamps_ns=np.array(stamps, dtype=np.int64)[order],
        positions=np.array(positions, dtype=np.float64)[order],
        relative_to_start=relative_to_start,
    )


def _pose_of(message: Any, msgtype: str, topic: str) -> Any:
    if msgtype in ("nav_msgs/msg/Odometry", "geometry_msgs/msg/PoseWithCovarianceStamped"):
        return message.pose.pose
    if msgtype == "geometry_msgs/msg/PoseStamped":
        return message.pose
    raise BagError(f"pose topic {topic} is {msgtype}, which holds no pose")


def assemble_bag(
    bag: Path, records: dict[str, dict[str, Any]] | None = None, track: PoseTrack | None = None
) -> ReplayedBag:
    """Fold every episode event of ``bag`` into finished traces.

    Args:
        bag: a rosbag2 directory.
        records: ground-truth records by episode id, for bags whose events carry none.
        track: positions to score with instead of the events' poses (a robot's odometry).

    Raises:
        BagError: neither a readable bag nor a salvageable MCAP file.
    """
    return assemble_bags([bag], records, track)


def assemble_bags(
    bags: Sequence[Path],
    records: dict[str, dict[str, Any]] | None = None,
    track: PoseTrack | None = None,
) -> ReplayedBag:
    """Fold the episode events of ``bags``, one after another, into one run: a run and its
    reruns, where a later attempt of an episode supersedes an earlier one.

    A bag whose writer was killed (no ``metadata.yaml``) or whose file was cut short is
    salvaged: its complete records are read and the warnings name what was lost.

    Raises:
        BagError: a bag that is neither readable nor a salvageable MCAP file.
        MetricsError: events that do not form a run (named with their bag).
    """
    replayed = ReplayedBag(
        EpisodeAssembler(trace_builder, records=dict(records or {}), track=track)
    )
    # Every event stays alive until the run is folded: the cyclic collector would walk them
    # all again every few hundred allocations (a third of the time), and they hold no cycle.
    with cyclic_gc_paused():
        for bag in bags:
            for event in _bag_events(bag, replayed):
                if isinstance(event, Gap):
                    replayed.assembler.gap(event.reason)
                    continue
                try:
                    replayed.assembler.add(event)
                except MetricsError as error:  # e.g. a STEP whose STARTED is not in the bag
                    raise MetricsError(f"{bag}: {error}") from None
    return replayed


def _bag_events(bag: Path, replayed: ReplayedBag) -> list[Any]:
    """The episode events of one bag (with a ``Gap`` where some are lost); takes its agent
    and node infos, digests and warnings into ``replayed``.

    Raises:
        BagError: not a bag, not MCAP, still being recorded, or changed since its run
            recorded its digests.
    """
    if not bag.is_dir():
        raise BagError(f"{bag}: cannot read bag: not a bag directory (runs/<id>/bag)")
    mcap_files = sorted(bag.glob("*.mcap"))
    recording = [path.name for path in mcap_files if being_recorded(path)]
    if recording:
        raise BagError(
            f"{bag}: still being recorded ({', '.join(recording)} is held open by its "
            "evaluator); the episode under way has not ended: score the bag once the run has"
        )
    replayed.digests = check_recorded_digests(bag) or {}
    side_topics = _side_topics(replayed.assembler)
    if (bag / "metadata.yaml").exists():
        try:
            # One pass over the bag for the events and every side topic.
            infos = read_topics(bag, [EVENTS_TOPIC, *side_topics], required=[EVENTS_TOPIC])
            events = infos[EVENTS_TOPIC]
        except BagError as error:
            if not mcap_files or "no /aerialdojo" in str(error):
                raise
            replayed.warnings.append(f"{bag} is damaged ({error}); salvaging its records")
        else:
            for topic, add in side_topics.items():
                for info in infos[topic]:
                    add(info)
            return events
    if not mcap_files:
        raise BagError(f"{bag}: no metadata.yaml and no .mcap file: not a bag")
    events = []
    for mcap_file in mcap_files:
        salvaged = salvage(mcap_file, [EVENTS_TOPIC, *side_topics])
        events += salvaged.messages[EVENTS_TOPIC]
        read = sum(not isinstance(event, Gap) for event in salvaged.messages[EVENTS_TOPIC])
        if salvaged.damaged:
            replayed.warnings += [
                f"{bag}: {damage}; the attempt under way there is not scored"
                for damage in salvaged.damaged
            ]
        if salvaged.unverified:
            replayed.warnings.append(
                f"{mcap_file.name}: {salvaged.unverified} chunk(s) carry no CRC and were read "
                "unverified"
            )
        if not salvaged.closed:
            replayed.warnings.append(
                f"{mcap_file.name} was never closed or was cut short: read {read} events, "
                f"{salvaged.lost_bytes} bytes at its end were incomplete"
            )
        for topic, add in side_topics.items():
            for info in salvaged.messages[topic]:
                add(info)
    return events
