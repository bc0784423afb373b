"""The EpisodeEvent CDR decoder reads exactly what rosbags' generic deserializer reads, and
only the definitions it was written for: today's, and the one bags were recorded with before
events carried their run's id, which still score as they did."""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import pytest
from eventstream import EVENT_TYPE, TYPESTORE, event, straight_episode
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from aerialdojo.bags.event_cdr import (
    EPISODE_EVENT_HASH,
    EPISODE_EVENT_HASH_BEFORE_RUN_ID,
    DecodedEvent,
    decodable,
    decode_episode_event,
    decode_episode_event_before_run_id,
)
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, assemble_bag, read_topics
from aerialdojo.cli import main
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder

_types = TYPESTORE.types
#: EpisodeEvent.msg as it was before events carried the run id (commit d22db88), the
#: definition every bag recorded until then embeds.
BEFORE_RUN_ID_MSG = Path(__file__).with_name("EpisodeEvent_before_run_id.msg")


def _typestore_before_run_id() -> Typestore:
    store = get_typestore(Stores.ROS2_JAZZY)
    store.register(get_types_from_msg(BEFORE_RUN_ID_MSG.read_text(), EVENT_TYPE))
    return store


BEFORE_RUN_ID = _typestore_before_run_id()


def _before_run_id(message: Any) -> Any:
    """``message`` (today's EpisodeEvent) in the definition before the run id."""
    fields = BEFORE_RUN_ID.fielddefs[EVENT_TYPE][1]
    return BEFORE_RUN_ID.types[EVENT_TYPE](**{name: getattr(message, name) for name, _ in fields})


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
        run_id="rün-7",
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


@pytest.mark.parametrize(
    "message",
    [_odd_event(), *straight_episode("Mall_0-base-0000-sem", EventKind.STOPPED, [1.0])],
)
def test_it_decodes_an_event_recorded_before_the_run_id_as_rosbags_does(message: Any) -> None:
    old = _before_run_id(message)
    raw = bytes(BEFORE_RUN_ID.serialize_cdr(old, EVENT_TYPE))
    decoded = decode_episode_event_before_run_id(raw)
    assert decoded.run_id == ""
    generic = BEFORE_RUN_ID.deserialize_cdr(raw, EVENT_TYPE)
    fields = [name for name in decoded._fields if name != "run_id"]
    expected = {name: _plain(getattr(generic, name), getattr(decoded, name)) for name in fields}
    got = {name: _plain(getattr(decoded, name), getattr(decoded, name)) for name in fields}
    for fields in (got, expected):  # NaN != NaN
        fields["pose"]["orientation"]["w"] = math.isnan(fields["pose"]["orientation"]["w"])
    assert got == expected


def test_its_hash_is_the_interface_packages_definition() -> None:
    # Changing EpisodeEvent.msg fails here: update the decoder's layout and this hash.
    assert TYPESTORE.hash_rihs01(EVENT_TYPE) == EPISODE_EVENT_HASH


def test_the_hash_before_the_run_id_is_that_definitions() -> None:
    assert BEFORE_RUN_ID.hash_rihs01(EVENT_TYPE) == EPISODE_EVENT_HASH_BEFORE_RUN_ID
    assert EPISODE_EVENT_HASH_BEFORE_RUN_ID != EPISODE_EVENT_HASH


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


def _run_events(run_id: str) -> list[Any]:
    """A run of every ending: a stop, a collision, an infrastructure failure and its rerun."""
    selection = json.dumps({"selection": ["a", "b", "c"]})
    rerun = straight_episode("c", EventKind.STOPPED, [2.0, 4.5])
    for rerun_event in rerun:
        rerun_event.attempt = 1
    events = [
        event(EventKind.RUN_STARTED, episode_json=selection),
        *straight_episode("a", EventKind.STOPPED, [5.0, 9.5]),
        *straight_episode("b", EventKind.COLLIDED, [3.0]),
        *straight_episode("c", EventKind.STEP, [1.0]),
        event(EventKind.INFRA_FAILURE, "c", step=1, message="simulator fault"),
        *rerun,
        event(EventKind.RUN_FINISHED, message="3 of 3 episodes ran"),
    ]
    for each in events:
        each.run_id = run_id
    return events


def _bag(path: Path, typestore: Typestore, events: list[Any]) -> Path:
    recorder = BagRecorder(path, typestore)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    for index, each in enumerate(events):
        recorder.write(EVENTS_TOPIC, index * 1000, typestore.serialize_cdr(each, EVENT_TYPE))
    recorder.close()
    return path


def test_a_bag_recorded_before_the_run_id_scores_byte_identically(tmp_path: Path) -> None:
    """The same run recorded with each definition: ``evaluate-bag`` writes the same records,
    and the old bag's events are decoded by the definition the bag embeds (the same traces as
    rosbags' generic deserializer gives), on the fast path."""
    old_bag = _bag(tmp_path / "old", BEFORE_RUN_ID, [_before_run_id(e) for e in _run_events("")])
    new_bag = _bag(tmp_path / "new", TYPESTORE, _run_events("20261204-000000"))

    (first, *_) = read_topics(old_bag, [EVENTS_TOPIC])[EVENTS_TOPIC]
    assert type(first) is DecodedEvent and first.run_id == ""
    generic = EpisodeAssembler(trace_builder)
    with AnyReader([old_bag]) as reader:
        (connection,) = reader.connections
        assert reader.typestore.hash_rihs01(EVENT_TYPE) == EPISODE_EVENT_HASH_BEFORE_RUN_ID
        for _, _, raw in reader.messages(connections=[connection]):
            generic.add(reader.deserialize(raw, EVENT_TYPE))
    assert assemble_bag(old_bag).assembler.traces == generic.traces

    for bag in (old_bag, new_bag):
        assert main(["evaluate-bag", str(bag), "--out", str(tmp_path / f"{bag.name}-run")]) == 0
    for name in ("metrics.json", "episodes.csv", "trajectories.jsonl"):
        old = (tmp_path / "old-run" / name).read_bytes()
        assert old == (tmp_path / "new-run" / name).read_bytes(), name
    scored = json.loads((tmp_path / "old-run" / "metrics.json").read_text())
    assert len(scored["episodes"]) == 3
