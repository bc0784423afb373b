"""``aerialdojo replay --video``: an episode's recorded views become an H.264 video, one frame
per recorded observation set, with a HUD; decoded back with PyAV."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from eventstream import EVENT_TYPE, TYPESTORE, event, record

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC
from aerialdojo.cli import main
from aerialdojo.errors import BagError
from aerialdojo.events import EventKind
from aerialdojo.image_codec import compress, image_fields
from aerialdojo.video import HUD_PIXELS, episode_frames

IMAGE = "sensor_msgs/msg/Image"
COMPRESSED = "sensor_msgs/msg/CompressedImage"
FRONT = "/uav/camera/front/image/compressed"
DOWN = "/uav/camera/down/image"
_types = TYPESTORE.types


def _header(stamp_s: int) -> Any:
    stamp = _types["builtin_interfaces/msg/Time"](sec=stamp_s, nanosec=0)
    return _types["std_msgs/msg/Header"](stamp=stamp, frame_id="uav/front_optical_frame")


def _raw(stamp_s: int, pixels: np.ndarray) -> Any:
    fields = image_fields(pixels, "rgb8")
    return _types[IMAGE](
        header=_header(stamp_s),
        height=fields.height,
        width=fields.width,
        encoding=fields.encoding,
        is_bigendian=fields.is_bigendian,
        step=fields.step,
        data=np.frombuffer(fields.data, dtype=np.uint8),
    )


def _compressed(stamp_s: int, pixels: np.ndarray) -> Any:
    image_format, data = compress(pixels, "rgb8")
    return _types[COMPRESSED](
        header=_header(stamp_s), format=image_format, data=np.frombuffer(data, dtype=np.uint8)
    )


def _run_bag(path: Path) -> Path:
    """A run bag as the evaluator writes it: episode "a" (target at (10, 0, 2)) moves 1 m a
    step for 6 steps and stops; every other observation set of two views is recorded (one
    down view missing), the front one PNG-compressed. Episode "b" follows, also with views."""
    recorder = BagRecorder(path, TYPESTORE)
    for topic, msgtype in ((EVENTS_TOPIC, EVENT_TYPE), (FRONT, COMPRESSED), (DOWN, IMAGE)):
        recorder.add_topic(topic, msgtype)
    truth = json.dumps(record("a") | {"start": [0.0, 0.0, 2.0, 0.0]})
    stream = [event(EventKind.STARTED, "a", episode_json=truth, stamp_s=10)]
    stream += [
        event(
            EventKind.STEP,
            "a",
            step=i,
            position=(float(i), 0.0, 2.0),
            action="MoveForward",
            stamp_s=10 + i,
        )
        for i in range(1, 7)
    ]
    stream.append(
        event(EventKind.STOPPED, "a", step=7, position=(6.0, 0.0, 2.0), action="Stop", stamp_s=17)
    )
    truth_b = json.dumps(record("b") | {"start": [0.0, 0.0, 2.0, 0.0]})
    stream.append(event(EventKind.STARTED, "b", episode_json=truth_b, stamp_s=30))
    for message in stream:
        stamp = message.header.stamp.sec
        recorder.write(EVENTS_TOPIC, stamp * 10**9, TYPESTORE.serialize_cdr(message, EVENT_TYPE))
    rows, columns = np.mgrid[0:48, 0:64]
    for stamp in [*range(10, 18, 2), 30]:  # 10, 12, 14, 16 in "a"; 30 in "b"
        # Smooth pictures, as a camera's are (noise would not survive any video codec).
        pixels = np.stack([rows * 5, columns * 4, np.full_like(rows, stamp * 7)], axis=2)
        pixels = pixels.astype(np.uint8)
        recorder.write(
            FRONT, stamp * 10**9, TYPESTORE.serialize_cdr(_compressed(stamp, pixels), COMPRESSED)
        )
        if stamp != 14:  # the recorder missed one down view
            recorder.write(DOWN, stamp * 10**9, TYPESTORE.serialize_cdr(_raw(stamp, pixels), IMAGE))
    recorder.close()
    return path


def test_each_recorded_observation_set_is_one_frame_with_its_hud(tmp_path: Path) -> None:
    frames = episode_frames(_run_bag(tmp_path / "bag"), "a")
    assert [frame.stamp_ns // 10**9 for frame in frames] == [10, 12, 14, 16]
    assert list(frames[0].views) == ["uav/front", "uav/down"]
    assert np.array_equal(frames[1].views["uav/front"], frames[1].views["uav/down"])
    # The set without its down view shows the latest down view before it.
    assert np.array_equal(frames[2].views["uav/down"], frames[1].views["uav/down"])
    assert not np.array_equal(frames[2].views["uav/front"], frames[1].views["uav/front"])
    huds = [(f.hud.step, f.hud.action, f.hud.distance_m) for f in frames]
    # Target (10, 0, 2): after step i the UAV is at x = i.
    assert huds == [
        (0, "-", 10.0),
        (2, "MoveForward", 8.0),
        (4, "MoveForward", 6.0),
        (6, "MoveForward", 4.0),
    ]


def test_the_video_decodes_back_with_one_frame_per_observation_set(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    run = tmp_path / "run"
    _run_bag(run / "bag")
    out = tmp_path / "a.mp4"
    assert main(["replay", str(run), "--episode", "a", "--video", str(out), "--fps", "4"]) == 0
    assert "4 frame(s) of a" in capsys.readouterr().out
    with av.open(str(out)) as container:
        stream = container.streams.video[0]
        assert stream.codec_context.name == "h264"
        pictures = [frame.to_ndarray(format="rgb24") for frame in container.decode(stream)]
    assert len(pictures) == 4
    # Two 64 px views side by side (widened for the HUD line), the HUD below.
    assert pictures[0].shape[0] == 48 + HUD_PIXELS and pictures[0].shape[1] >= 128
    # Below the view labels, the pictures are the recorded ones (up to the codec's loss).
    assert np.abs(pictures[0][16:48, :128].astype(int) - frames_front(run)[16:]).mean() < 6
    # The HUD changes from frame to frame (step, action and distance).
    huds = [picture[48:, :, :].astype(int) for picture in pictures]
    assert all(np.abs(a - b).mean() > 0.5 for a, b in itertools.pairwise(huds))


def frames_front(run: Path) -> np.ndarray:
    """The first recorded observation set's two views side by side."""
    views = episode_frames(run / "bag", "a")[0].views
    return np.concatenate([views["uav/front"], views["uav/down"]], axis=1).astype(int)


def test_an_unknown_episode_is_named(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    bag = _run_bag(tmp_path / "bag")
    with pytest.raises(BagError, match="episode 'zz' never started"):
        episode_frames(bag, "zz")
    assert main(["replay", str(bag), "--episode", "zz", "--video", str(tmp_path / "z.mp4")]) == 2
    assert "never started" in capsys.readouterr().err
