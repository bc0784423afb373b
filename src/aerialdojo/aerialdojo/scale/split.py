"""Cuts a worker graph's bag into one bag per episode, each a complete one-episode run that
``aerialdojo evaluate-bag`` scores alone or together with the others; ROS-free (rosbags)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rosbags.highlevel import AnyReader
from rosbags.typesys.store import Typestore

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import AGENTS_TOPIC, EVENTS_TOPIC
from aerialdojo.errors import BagError
from aerialdojo.events import EventKind
from aerialdojo.runtime import NODES_TOPIC

#: Latched topics every episode's bag needs wherever they were recorded: who acted and on
#: what (the report names both) and the static frames (a replay places the cameras).
SHARED_TOPICS = frozenset({AGENTS_TOPIC, NODES_TOPIC, "/tf_static"})


def split_bag(bag: Path, destinations: Mapping[str, Path], typestore: Typestore) -> dict[str, int]:
    """Write the messages of each episode in ``destinations`` from ``bag`` into its own bag.

    A message belongs to the episode whose STARTED event came last before it (the frames of
    its last step arrive after its ending). Each episode's bag also gets what was recorded
    before the first episode and the ``SHARED_TOPICS``, the run's RUN_STARTED narrowed to
    that episode, and RUN_FINISHED, so that it is a run of its own.

    Args:
        bag: a closed rosbag2 directory written by the evaluator.
        destinations: episode id -> bag directory to create; other episodes are dropped.
        typestore: knows aerialdojo's messages (``bags.typestore.aerialdojo_typestore``).

    Returns:
        Messages written per episode.

    Raises:
        BagError: an unreadable bag, or a wanted episode that is not in it.
    """
    writers: dict[str, BagRecorder] = {}
    counts: dict[str, int] = {}
    before_first: list[tuple[Any, int, bytes]] = []
    finished: tuple[Any, int, bytes] | None = None
    run_started: Any = None
    current: str | None = None
    try:
        with AnyReader([bag]) as reader:
            for connection, timestamp, raw in reader.messages():
                topic = connection.topic
                if topic == EVENTS_TOPIC:
                    event: Any = reader.deserialize(raw, connection.msgtype)
                    kind = EventKind(event.kind)
                    if kind is EventKind.RUN_STARTED:
                        run_started = (connection, timestamp, event)
                        continue
                    if kind is EventKind.RUN_FINISHED:
                        finished = (connection, timestamp, raw)
                        continue
                    if kind is EventKind.STARTED:
                        current = str(event.episode_id)
                        if current in destinations and current not in writers:
                            writers[current] = _open_episode_bag(
                                destinations[current],
                                current,
                                before_first,
                                run_started,
                                typestore,
                            )
                if current is None or topic in SHARED_TOPICS:
                    before_first.append((connection, timestamp, raw))
                    targets = list(writers.values())
                else:
                    targets = [writers[current]] if current in writers else []
                for writer in targets:
                    _write(writer, connection, timestamp, raw)
    except BagError:
        raise
    except Exception as error:  # rosbags raises several unrelated types for unreadable bags
        raise BagError(f"{bag}: cannot split bag: {error}") from error
    missing = sorted(set(destinations) - set(writers))
    for episode_id, writer in writers.items():
        if finished is not None:
            _write(writer, *finished)
        writer.close()
        counts[episode_id] = writer.messages_written
    if missing:
        raise BagError(f"{bag}: no STARTED event of {', '.join(missing)}")
    return counts


def _open_episode_bag(
    path: Path,
    episode_id: str,
    before_first: list[tuple[Any, int, bytes]],
    run_started: Any,
    typestore: Typestore,
) -> BagRecorder:
    path.parent.mkdir(parents=True, exist_ok=True)
    writer = BagRecorder(path, typestore)
    if run_started is not None:
        connection, timestamp, event = run_started
        started = json.loads(event.episode_json) | {"selection": [episode_id]}
        narrowed = dataclasses.replace(event, episode_count=1, episode_json=json.dumps(started))
        _write(writer, connection, timestamp, typestore.serialize_cdr(narrowed, connection.msgtype))
    for message in before_first:
        _write(writer, *message)
    return writer


def _write(writer: BagRecorder, connection: Any, timestamp: int, raw: bytes | memoryview) -> None:
    writer.add_topic(connection.topic, connection.msgtype)
    writer.write(connection.topic, timestamp, raw)
