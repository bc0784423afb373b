"""The EpisodeEvent CDR decoder reads exactly what rosbags' generic deserializer reads, and
only the definition it was written for."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from eventstream import EVENT_TYPE, TYPESTORE, event, straight_episode

from aerialdojo.bags.event_cdr import EPISODE_EVENT_HASH, decodable, decode_episode_event
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, read_topics
from aerialdojo.events import EventKind

_types = TYPESTORE.types


def _plain(message: Any, like: Any) -> Any:
    """``message`` (a rosbags message or a decoded tuple) as nested plain values, with the
    fields of the decoded tuple ``like`` (a rosbags message also has its constants)."""
    if not hasattr(like, "_fields"):
        return message
    return {name: _plain(getattr(message, name), getattr(like, name)) for name in like._fields}


def _odd_event() -> Any:
    """Every field set, with strings of every length modulo 4 (CDR pads after them) and
    non-ASCII text, so that each alignment rule is exercised."""
    pose = _types["geometry_msgs/msg/Pose"](
        position=_types["geometry_msgs/msg/Point"](1.5, -2.25, 1e-300),
        orientation=_types["geometry_msgs/msg/Quaternion"](0.1, 0.2, 0.3, math.nan),
    )
    header = _types["std_msgs/msg/Header"](
        stamp=_types["builtin_interfaces/msg/Time"](sec=-3, nanosec=999_999_999), frame_id="m"
    )
    return _types[EVENT_TYPE](
        header=header,
        episode_id="ép",
        attempt=4_000_000_000,
        episode_index=7,
        episode_count=9,
        agent="ugv",
        kind=int(EventKind.COLLIDED),
        action="",
        magnitude=-0.5,
        argument="abc",
        step=11,
        pose=pose,
        collided=True,
        collision_object="wall 1",
        message="held at the edge",
        episode_json=json.dumps({"k": "värde"}),
    )


@pytest.mark.parametrize(
    "message",
    [
        _odd_event(),
        *straight_episode("Mall_0-base-0000-sem", EventKind.COLLIDED, [1.0, 2.0]),
        event(EventKind.RUN_FINISHED, message="2 of 2 episodes ran"),
    ],
)
def test_it_decodes_what_rosbags_decodes(message: Any) -> None:
    raw = bytes(TYPESTORE.serialize_cdr(message, EVENT_TYPE))
    assert decodable(raw)
    decoded = decode_episode_event(raw)
    expected = _plain(TYPESTORE.deserialize_cdr(raw, EVENT_TYPE), decoded)
    got = _plain(decoded, decoded)
    # NaN != NaN: compare its bits' meaning apart.
    assert math.isnan(got["pose"]["orientation"].pop("w")) == math.isnan(
        expected["pose"]["orientation"].pop("w")
    )
    assert got == expected
    assert type(decoded.kind) is int and type(decoded.collided) is bool


def test_its_hash_is_the_interface_packages_definition() -> None:
    # Changing EpisodeEvent.msg fails here: update the decoder's layout and this hash.
    assert TYPESTORE.hash_rihs01(EVENT_TYPE) == EPISODE_EVENT_HASH


def test_big_endian_and_cut_messages_are_not_taken_for_events() -> None:
    raw = bytes(TYPESTORE.serialize_cdr(_odd_event(), EVENT_TYPE))
    assert not decodable(b"\x00\x00\x00\x00" + raw[4:])  # CDR_BE
    with pytest.raises(struct.error):
        decode_episode_event(raw[:-8])


def test_a_bag_of_another_event_definition_is_read_by_rosbags(tmp_path: Path) -> None:
    """An EpisodeEvent whose definition differs (a field added) has another hash: the
    reader falls back on the definitions embedded in the bag."""
    other = TYPESTORE.__class__()
    other.register(
        {
            name: value
            for name, value in TYPESTORE.fielddefs.items()
            if not name.startswith("aerialdojo_interfaces/")
        }
    )
    consts, fields = TYPESTORE.fielddefs[EVENT_TYPE][:2]
    other.register({EVENT_TYPE: (consts, [*fields, ("extra", fields[1][1])])})
    odd = _odd_event()
    message = other.types[EVENT_TYPE](
        **{name: getattr(odd, name) for name, _ in fields}, extra="more"
    )
    recorder = BagRecorder(tmp_path / "bag", other)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    recorder.write(EVENTS_TOPIC, 1, other.serialize_cdr(message, EVENT_TYPE))
    recorder.close()

    (read,) = read_topics(tmp_path / "bag", [EVENTS_TOPIC])[EVENTS_TOPIC]
    assert read.extra == "more" and read.episode_id == "ép"
