"""Reads a run's episode events back from a bag, with rosbags only."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from rosbags.highlevel import AnyReader

from aerialdojo.errors import BagError
from aerialdojo.events import EpisodeAssembler

EVENTS_TOPIC = "/aerialdojo/episode_events"


def read_events(bag: Path, topic: str = EVENTS_TOPIC) -> Iterator[Any]:
    """Yield the episode events of ``bag`` in recording order, deserialized with the message
    definitions embedded in the bag (no aerialdojo build needed).

    Raises:
        BagError: not a bag, or no ``topic`` in it.
    """
    try:
        with AnyReader([bag]) as reader:
            connections = [c for c in reader.connections if c.topic == topic]
            if not connections:
                topics = sorted({c.topic for c in reader.connections})
                raise BagError(
                    f"{bag}: no {topic} topic; the bag has {', '.join(topics) or 'none'}"
                )
            for connection, _timestamp, raw in reader.messages(connections=connections):
                yield reader.deserialize(raw, connection.msgtype)
    except BagError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for unreadable bags
        raise BagError(f"{bag}: cannot read bag: {error}") from error


def assemble_bag(bag: Path, records: dict[str, dict[str, Any]] | None = None) -> EpisodeAssembler:
    """Fold every episode event of ``bag`` into finished traces.

    Args:
        bag: a rosbag2 directory or file.
        records: ground-truth records by episode id, for bags whose events carry none.
    """
    assembler = EpisodeAssembler(records=dict(records or {}))
    for event in read_events(bag):
        assembler.add(event)
    return assembler
