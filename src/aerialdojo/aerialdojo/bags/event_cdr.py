"""EpisodeEvent messages decoded straight from their CDR bytes into light records.

Scoring a bag is mostly reading its episode events. rosbags' generic deserializer builds six
message objects per event (the event, its header, stamp, pose, point and quaternion); this
decoder reads the same fields in one pass of ``struct`` calls into named tuples, about three
times faster. It knows exactly two layouts of ``aerialdojo_interfaces/msg/EpisodeEvent``, each
by the RIHS01 type hash of its definition: today's (``EPISODE_EVENT_HASH``) and the one bags
recorded before events carried their run's id (``EPISODE_EVENT_HASH_BEFORE_RUN_ID``), whose
events it gives ``run_id`` "" (no run named, like a task manager started by hand). The
reader picks the layout by the hash of the definition recorded in the bag (``decoder_for``),
never by the bytes; a bag recorded with another definition (or big-endian CDR) is read by
rosbags as before (``bags.replay``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import NamedTuple

#: The RIHS01 hash of today's EpisodeEvent definition; a test holds it to the interface
#: package's .msg files, so that changing the message fails until this is updated.
EPISODE_EVENT_HASH = "RIHS01_0ba22377271fb9594c0cde89d3eb12b64e4e3226ac4697754e1a97374d6b4b0c"
#: The RIHS01 hash of the definition before ``run_id`` followed the header (issue 29); a
#: test holds it to that definition, kept beside the test.
EPISODE_EVENT_HASH_BEFORE_RUN_ID = (
    "RIHS01_46161e64f38a7a67cf97b24b4847c74849174ed169a2006e9924c512f70b27dc"
)

_CDR_LITTLE_ENDIAN = 1
_STAMP = struct.Struct("<iI")
_U32 = struct.Struct("<I")
_FOUR_U32 = struct.Struct("<IIII")
_F64_U32 = struct.Struct("<dI")
_POSE_BOOL = struct.Struct("<7d?")


class Time(NamedTuple):
    sec: int
    nanosec: int


class Header(NamedTuple):
    stamp: Time
    frame_id: str


class Point(NamedTuple):
    x: float
    y: float
    z: float


class Quaternion(NamedTuple):
    x: float
    y: float
    z: float
    w: float


class PoseRecord(NamedTuple):
    position: Point
    orientation: Quaternion


class DecodedEvent(NamedTuple):
    """An EpisodeEvent's fields, named and typed as the message's (``events.EventLike``)."""

    header: Header
    run_id: str
    episode_id: str
    attempt: int
    episode_index: int
    episode_count: int
    agent: str
    kind: int
    action: str
    magnitude: float
    argument: str
    step: int
    pose: PoseRecord
    collided: bool
    collision_object: str
    message: str
    episode_json: str


def decodable(raw: bytes | memoryview) -> bool:
    """Whether ``raw`` is little-endian CDR, the encoding this decoder reads."""
    return len(raw) >= 4 and raw[1] == _CDR_LITTLE_ENDIAN


def decoder_for(type_hash: str) -> Callable[[bytes | memoryview], DecodedEvent] | None:
    """The decoder of the EpisodeEvent definition whose RIHS01 hash is ``type_hash``, or
    None for a definition this module does not know (rosbags reads those)."""
    return _DECODERS.get(type_hash)


def decode_episode_event(raw: bytes | memoryview) -> DecodedEvent:
    """The event serialized in ``raw`` (little-endian CDR with its 4-byte encapsulation
    header, of the definition ``EPISODE_EVENT_HASH`` names).

    Raises:
        struct.error, UnicodeDecodeError: bytes that do not hold such an event.
    """
    return _decode(raw, with_run_id=True)


def decode_episode_event_before_run_id(raw: bytes | memoryview) -> DecodedEvent:
    """The event serialized in ``raw`` with the definition ``EPISODE_EVENT_HASH_BEFORE_RUN_ID``
    names (no ``run_id``: the record's is "").

    Raises:
        struct.error, UnicodeDecodeError: bytes that do not hold such an event.
    """
    return _decode(raw, with_run_id=False)


def _decode(raw: bytes | memoryview, *, with_run_id: bool) -> DecodedEvent:
    # CDR aligns each primitive to its size, counted from the end of the 4-byte header; a
    # string is its length (NUL included) and its bytes. Written out in line: this runs once
    # per event of a bag.
    buffer = bytes(raw)
    u32 = _U32.unpack_from
    sec, nanosec = _STAMP.unpack_from(buffer, 4)
    (length,) = u32(buffer, 12)
    frame_id = buffer[16 : 15 + length].decode()
    pos = 16 + length
    pos += -pos & 3
    run_id = ""
    if with_run_id:
        (length,) = u32(buffer, pos)
        run_id = buffer[pos + 4 : pos + 3 + length].decode()
        pos += 4 + length
        pos += -pos & 3
    (length,) = u32(buffer, pos)
    episode_id = buffer[pos + 4 : pos + 3 + length].decode()
    pos += 4 + length
    pos += -pos & 3
    attempt, episode_index, episode_count, length = _FOUR_U32.unpack_from(buffer, pos)
    agent = buffer[pos + 16 : pos + 15 + length].decode()
    pos += 16 + length
    kind = buffer[pos]
    pos += 1
    pos += -pos & 3
    (length,) = u32(buffer, pos)
    action = buffer[pos + 4 : pos + 3 + length].decode()
    pos += 4 + length
    pos += -(pos - 4) & 7
    magnitude, length = _F64_U32.unpack_from(buffer, pos)
    argument = buffer[pos + 12 : pos + 11 + length].decode()
    pos += 12 + length
    pos += -pos & 3
    (step,) = u32(buffer, pos)
    pos += 4
    pos += -(pos - 4) & 7
    px, py, pz, qx, qy, qz, qw, collided = _POSE_BOOL.unpack_from(buffer, pos)
    pos += 57
    pos += -pos & 3
    (length,) = u32(buffer, pos)
    collision_object = buffer[pos + 4 : pos + 3 + length].decode()
    pos += 4 + length
    pos += -pos & 3
    (length,) = u32(buffer, pos)
    message = buffer[pos + 4 : pos + 3 + length].decode()
    pos += 4 + length
    pos += -pos & 3
    (length,) = u32(buffer, pos)
    if pos + 4 + length > len(buffer):
        raise struct.error(
            f"the event's last string runs {pos + 4 + length - len(buffer)} bytes past its end"
        )
    episode_json = buffer[pos + 4 : pos + 3 + length].decode()
    new = tuple.__new__
    return new(
        DecodedEvent,
        (
            new(Header, (new(Time, (sec, nanosec)), frame_id)),
            run_id,
            episode_id,
            attempt,
            episode_index,
            episode_count,
            agent,
            kind,
            action,
            magnitude,
            argument,
            step,
            new(PoseRecord, (new(Point, (px, py, pz)), new(Quaternion, (qx, qy, qz, qw)))),
            collided,
            collision_object,
            message,
            episode_json,
        ),
    )


_DECODERS: dict[str, Callable[[bytes | memoryview], DecodedEvent]] = {
    EPISODE_EVENT_HASH: decode_episode_event,
    EPISODE_EVENT_HASH_BEFORE_RUN_ID: decode_episode_event_before_run_id,
}
