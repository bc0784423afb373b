"""Bags hold the run's events with their definitions; replaying them gives the same traces."""

from __future__ import annotations

from pathlib import Path

import pytest
from eventstream import EVENT_TYPE, TYPESTORE, event, straight_episode
from rosbags.highlevel import AnyReader

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, assemble_bag, read_events
from aerialdojo.errors import BagError
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.run_report import score_assembled


def _record(path: Path, events: list) -> None:
    recorder = BagRecorder(path, TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    for index, e in enumerate(events):
        recorder.write(EVENTS_TOPIC, index * 1000, TYPESTORE.serialize_cdr(e, EVENT_TYPE))
    recorder.close()


def test_replayed_bag_gives_the_live_traces(tmp_path: Path) -> None:
    events = [
        *straight_episode("a", EventKind.STOPPED, [5, 9]),
        *straight_episode("b", EventKind.COLLIDED, [3]),
        event(EventKind.RUN_FINISHED, message="2 of 2 episodes ran"),
    ]
    live = EpisodeAssembler()
    for e in events:
        live.add(e)
    _record(tmp_path / "bag", events)

    replayed = assemble_bag(tmp_path / "bag")
    assert replayed.assembler.traces == live.traces
    assert replayed.assembler.finished and replayed.warnings == []


def test_bag_is_a_rosbag2_mcap_readable_without_our_code(tmp_path: Path) -> None:
    _record(tmp_path / "bag", straight_episode("a", EventKind.STOPPED, [5]))
    assert (tmp_path / "bag" / "metadata.yaml").is_file()
    assert [p.suffix for p in (tmp_path / "bag").glob("*.mcap")] == [".mcap"]
    # AnyReader with no typestore of ours: the definitions come from the bag itself.
    with AnyReader([tmp_path / "bag"]) as reader:
        kinds = [
            reader.deserialize(raw, connection.msgtype).kind
            for connection, _, raw in reader.messages()
        ]
    assert kinds == [EventKind.STARTED, EventKind.STEP, EventKind.STOPPED]


def test_missing_topic_and_missing_bag_are_named(tmp_path: Path) -> None:
    recorder = BagRecorder(tmp_path / "empty", TYPESTORE)
    recorder.add_topic("/other", "std_msgs/msg/String")
    recorder.close()
    with pytest.raises(BagError, match="no /aerialdojo/episode_events topic; the bag has /other"):
        assemble_bag(tmp_path / "empty")
    with pytest.raises(BagError, match="nowhere: cannot read bag"):
        assemble_bag(tmp_path / "nowhere")


_KILLED_WRITER = """
import os, sys
sys.path[:0] = {paths!r}
from eventstream import EVENT_TYPE, TYPESTORE, straight_episode
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC
from aerialdojo.events import EventKind
recorder = BagRecorder({bag!r}, TYPESTORE)
recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
stream = straight_episode("done", EventKind.STOPPED, [4, 8]) + straight_episode(
    "cut", EventKind.STOPPED, [1, 2, 3])[:3]
for index, event in enumerate(stream):
    recorder.write(EVENTS_TOPIC, index, TYPESTORE.serialize_cdr(event, EVENT_TYPE))
    if event.kind == EventKind.STOPPED:
        recorder.checkpoint()
os._exit(9)  # killed: no close, no footer, no metadata.yaml
"""


def test_a_bag_whose_writer_was_killed_yields_its_complete_episodes(tmp_path: Path) -> None:
    import subprocess
    import sys

    here = Path(__file__).resolve()
    paths = [str(here.parent), str(here.parents[2]), *sys.path]
    script = _KILLED_WRITER.format(paths=paths, bag=str(tmp_path / "bag"))
    assert subprocess.run([sys.executable, "-c", script], check=False).returncode == 9
    assert not (tmp_path / "bag" / "metadata.yaml").exists()
    with pytest.raises(BagError):
        list(read_events(tmp_path / "bag"))

    replayed = assemble_bag(tmp_path / "bag")
    assert [t.episode_id for t in replayed.assembler.traces] == ["done"]
    assert "bag.mcap was never closed" in replayed.warnings[0]
    result = score_assembled(replayed.assembler, None, replayed.warnings)
    assert result.metrics is not None and len(result.metrics.episodes) == 1
    assert any("never closed" in warning for warning in result.warnings)
    # The cut episode's events came after the last checkpoint and never reached the file.
    assert result.cut_short is None
