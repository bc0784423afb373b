"""Bags hold the run's events with their definitions; replaying them gives the same traces."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from eventstream import (
    EVENT_TYPE,
    TYPESTORE,
    checkpointed_bag,
    event,
    record,
    straight_episode,
)
from rosbags.highlevel import AnyReader

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, assemble_bag, read_events, read_pose_track
from aerialdojo.errors import BagError, MetricsError
from aerialdojo.events import EpisodeAssembler, EventKind
from aerialdojo.protocols import trace_builder
from aerialdojo.report.run import score_assembled


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
    live = EpisodeAssembler(trace_builder)
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
    assert result.excluded == ()


def _odometry(stamp_s: float, x: float, y: float) -> object:
    types = TYPESTORE.types
    seconds = int(stamp_s)
    header = types["std_msgs/msg/Header"](
        stamp=types["builtin_interfaces/msg/Time"](
            sec=seconds, nanosec=round((stamp_s - seconds) * 1e9)
        ),
        frame_id="uav/odom",
    )
    pose = types["geometry_msgs/msg/Pose"](
        position=types["geometry_msgs/msg/Point"](x, y, 0.0),
        orientation=types["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
    )
    covariance = np.zeros(36)
    twist = types["geometry_msgs/msg/Twist"](
        linear=types["geometry_msgs/msg/Vector3"](0.0, 0.0, 0.0),
        angular=types["geometry_msgs/msg/Vector3"](0.0, 0.0, 0.0),
    )
    return types["nav_msgs/msg/Odometry"](
        header=header,
        child_frame_id="uav/base_link",
        pose=types["geometry_msgs/msg/PoseWithCovariance"](pose=pose, covariance=covariance),
        twist=types["geometry_msgs/msg/TwistWithCovariance"](twist=twist, covariance=covariance),
    )


def test_a_robot_bag_is_scored_from_its_odometry_and_a_task_file(tmp_path: Path) -> None:
    # A robot's run: events without ground truth, odometry from the episode start (facing
    # north, so odometry x is map y), sampled densely between the decisions.
    truth = record("robot-1") | {"start": [2.0, 3.0, 2.0, math.pi / 2], "target": [2.0, 9.0, 2.0]}
    events = [
        event(EventKind.STARTED, "robot-1", stamp_s=10),
        event(EventKind.STEP, "robot-1", step=1, stamp_s=12, action="MoveForward"),
        event(EventKind.STOPPED, "robot-1", step=2, stamp_s=14, action="Stop"),
    ]
    odometry = [_odometry(10 + 0.5 * i, x, y) for i, (x, y) in enumerate(
        [(0, 0), (1, 0), (2, 0.5), (3, 0), (4, 0), (5, 0), (6, 0), (6, 0), (6, 0)]
    )]  # fmt: skip
    odometry.append(_odometry(20.0, 50.0, 50.0))  # after the episode: ignored
    recorder = BagRecorder(tmp_path / "bag", TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    recorder.add_topic("/uav/odom", "nav_msgs/msg/Odometry")
    stream = [(e.header.stamp.sec, EVENTS_TOPIC, EVENT_TYPE, e) for e in events] + [
        (
            o.header.stamp.sec + o.header.stamp.nanosec * 1e-9,
            "/uav/odom",
            "nav_msgs/msg/Odometry",
            o,
        )
        for o in odometry
    ]
    for when, topic, msgtype, message in sorted(stream, key=lambda item: item[0]):
        recorder.write(topic, int(when * 1e9), TYPESTORE.serialize_cdr(message, msgtype))
    recorder.close()

    with pytest.raises(MetricsError, match="carries no ground truth"):
        assemble_bag(tmp_path / "bag")
    track = read_pose_track(tmp_path / "bag", "/uav/odom", relative_to_start=True)
    replayed = assemble_bag(tmp_path / "bag", {"robot-1": truth}, track)
    (trace,) = replayed.assembler.traces
    assert trace.path[0] == pytest.approx((2.0, 3.0, 2.0))
    assert trace.final_position == pytest.approx((2.0, 9.0, 2.0))
    assert len(trace.path) == 9  # every odometry sample inside the episode, none after
    result = score_assembled(replayed.assembler, [3.0])
    (score,) = result.metrics.episodes
    assert score.executed_length_m == pytest.approx(4.0 + 2 * math.hypot(1.0, 0.5))
    assert score.values["sr_3m"] == 1.0
    with pytest.raises(BagError, match="no pose topic /robot/odom"):
        read_pose_track(tmp_path / "bag", "/robot/odom", relative_to_start=True)


def test_a_bag_cut_in_half_gives_back_the_episodes_before_the_cut(tmp_path: Path) -> None:
    # Issue 15, row 10: with its metadata.yaml present, such a bag gave "File end magic is
    # invalid" and nothing; without it, the warning said "0 bytes incomplete".
    recorder = BagRecorder(tmp_path / "bag", TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    stream = [e for name in "abcdef" for e in straight_episode(name, EventKind.STOPPED, [4, 8])]
    for index, e in enumerate(stream):
        recorder.write(EVENTS_TOPIC, index, TYPESTORE.serialize_cdr(e, EVENT_TYPE))
        if e.kind == EventKind.STOPPED:
            recorder.checkpoint()
    recorder.close()
    (mcap,) = (tmp_path / "bag").glob("*.mcap")
    whole = mcap.read_bytes()
    mcap.write_bytes(whole[: len(whole) // 2])

    replayed = assemble_bag(tmp_path / "bag")
    scored = [trace.episode_id for trace in replayed.assembler.traces]
    assert 1 <= len(scored) < 6 and scored == list("abcdef"[: len(scored)])
    lost = int(replayed.warnings[-1].split(" bytes at its end")[0].rsplit(" ", 1)[1])
    assert 0 < lost < len(whole) // 2


def test_an_mcap_of_json_channels_is_refused_by_name(tmp_path: Path) -> None:
    # Issue 15, row 8: a raw traceback from the message parser.
    from mcap.writer import Writer

    (tmp_path / "bag").mkdir()
    with (tmp_path / "bag" / "other.mcap").open("wb") as stream:
        writer = Writer(stream)
        writer.start()
        schema = writer.register_schema("Event", "jsonschema", b'{"type": "object"}')
        channel = writer.register_channel(EVENTS_TOPIC, "json", schema)
        writer.add_message(channel, log_time=0, data=b"{}", publish_time=0)
        writer.finish()
    with pytest.raises(BagError, match="encoded as 'jsonschema', not as ROS 2 messages"):
        assemble_bag(tmp_path / "bag")


def _chunks(mcap_file: Path) -> list[tuple[int, int, int]]:
    """(start, end, CRC) of every chunk record of an MCAP file."""
    from mcap.records import Chunk
    from mcap.stream_reader import StreamReader

    spans = []
    with mcap_file.open("rb") as stream:
        start = 0
        for record in StreamReader(stream, emit_chunks=True).records:
            end = stream.tell()
            if isinstance(record, Chunk):
                spans.append((start, end, record.uncompressed_crc))
            start = end
    return spans


TWO_EPISODES = [
    event(EventKind.RUN_STARTED, episode_json='{"selection": ["a", "b"]}'),
    *straight_episode("a", EventKind.STOPPED, [5, 9]),
    *straight_episode("b", EventKind.STOPPED, [3, 4]),
    event(EventKind.RUN_FINISHED, message="2 of 2 episodes ran"),
]


def test_every_chunk_carries_a_crc_that_the_mcap_library_verifies(tmp_path: Path) -> None:
    # Issue 29, item 5: rosbags writes 0 ("not computed") in every chunk's CRC.
    from mcap.stream_reader import StreamReader

    mcap_file = checkpointed_bag(tmp_path / "bag", TWO_EPISODES)
    chunks = _chunks(mcap_file)
    assert len(chunks) >= 3 and all(crc != 0 for _, _, crc in chunks)
    with mcap_file.open("rb") as stream:
        assert sum(1 for _ in StreamReader(stream, validate_crcs=True).records) > len(chunks)


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x10
    path.write_bytes(bytes(data))


def test_a_flipped_bit_in_a_chunk_is_reported_and_its_episode_not_scored(tmp_path: Path) -> None:
    # Issue 29, item 5: one flipped bit changed a distance from 12.41 m to 9.16 m, scored
    # without a word. The chunk that holds episode b's steps and end is damaged (chunks:
    # the selection, a's start, a's steps and end, b's start, b's steps and end, the end).
    mcap_file = checkpointed_bag(tmp_path / "bag", TWO_EPISODES)
    start, end, _ = _chunks(mcap_file)[4]
    _flip(mcap_file, (start + end) // 2)
    replayed = assemble_bag(tmp_path / "bag")
    result = score_assembled(replayed.assembler, None, replayed.warnings)
    assert [trace.episode_id for trace in result.traces] == ["a"]
    assert [(e.episode_id, e.reason) for e in result.excluded] == [
        ("b", f"its recording is damaged: the chunk at byte {start} of bag.mcap fails its CRC")
    ]
    assert any(f"the chunk at byte {start} of bag.mcap fails its CRC" in w for w in result.warnings)
    assert not result.complete


def test_a_damaged_length_inside_a_chunk_is_reported_without_allocating_it(
    tmp_path: Path,
) -> None:
    # Found by tests/fuzz: a chunk whose data length reads 2**62 made the mcap library
    # allocate that much (MemoryError) before any CRC could be checked.
    import struct

    mcap_file = checkpointed_bag(tmp_path / "bag", TWO_EPISODES)
    start, _, _ = _chunks(mcap_file)[2]
    data = bytearray(mcap_file.read_bytes())
    compression_at = start + 1 + 8 + 8 + 8 + 8 + 4  # opcode, length, times, size, CRC
    (compression_length,) = struct.unpack_from("<I", data, compression_at)
    struct.pack_into("<Q", data, compression_at + 4 + compression_length, 2**62)
    mcap_file.write_bytes(bytes(data))
    (tmp_path / "bag" / "metadata.yaml").unlink()  # a killed writer's bag: salvaged
    replayed = assemble_bag(tmp_path / "bag")
    result = score_assembled(replayed.assembler, None, replayed.warnings)
    assert [trace.episode_id for trace in result.traces] == []  # a's steps were in that chunk
    assert not result.complete and any("bag.mcap" in note for note in result.source_notes)


def test_a_bag_that_changed_since_its_run_recorded_it_is_refused(tmp_path: Path) -> None:
    from aerialdojo.bags.integrity import bag_digests

    mcap_file = checkpointed_bag(tmp_path / "run" / "bag", TWO_EPISODES)
    status = tmp_path / "run" / "run_status.json"
    status.write_text(json.dumps({"complete": True, "bag": bag_digests(mcap_file.parent)}))
    assert assemble_bag(mcap_file.parent).assembler.traces  # as recorded: scored
    _flip(mcap_file, mcap_file.stat().st_size - 40)  # in the footer's summary: no chunk CRC
    with pytest.raises(BagError, match="its SHA-256 differs from the one its run recorded in"):
        assemble_bag(mcap_file.parent)


def test_random_bytes_are_not_an_mcap_file_and_a_bag_being_recorded_is_refused(
    tmp_path: Path,
) -> None:
    # Issue 29, item 11: random bytes were "cut short", and a live episode "cut short".
    (tmp_path / "noise").mkdir()
    (tmp_path / "noise" / "noise.mcap").write_bytes(np.random.default_rng(3).bytes(5000))
    with pytest.raises(BagError, match=r"noise\.mcap: not an MCAP file"):
        assemble_bag(tmp_path / "noise")
    recorder = BagRecorder(tmp_path / "live", TYPESTORE)
    recorder.add_topic(EVENTS_TOPIC, EVENT_TYPE)
    recorder.write(EVENTS_TOPIC, 0, TYPESTORE.serialize_cdr(TWO_EPISODES[0], EVENT_TYPE))
    recorder.checkpoint()
    try:
        with pytest.raises(BagError, match=r"still being recorded .*held open by its evaluator"):
            assemble_bag(tmp_path / "live")
    finally:
        recorder.close()
    assert assemble_bag(tmp_path / "live").assembler.selection == ["a", "b"]
