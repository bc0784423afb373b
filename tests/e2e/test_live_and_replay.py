"""One short run watched live and replayed: ``aerialdojo eval --live`` serves the graph to a
Foxglove WebSocket client (every topic of the shipped Foxglove layout and RViz config, point
clouds included), and afterwards ``aerialdojo replay`` renders the episode's recorded views
to a video that decodes back to one frame per recorded observation set."""

from __future__ import annotations

import json
import re
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
import yaml
from rosbags.highlevel import AnyReader
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from websockets.sync.client import connect

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

#: The Foxglove WebSocket protocol's binary opcode for message data.
MESSAGE_DATA = 0x01


def _layout_topics(repo: Path) -> set[str]:
    layout = json.loads((repo / "config" / "foxglove" / "aerialdojo.json").read_text())
    topics: set[str] = set()
    for config in layout["configById"].values():
        topics |= set(config.get("topics", {}))
        if "imageMode" in config:
            topics.add(config["imageMode"]["imageTopic"])
        if "topicPath" in config:
            topics.add(config["topicPath"])
        topics |= {path["value"].split(".")[0] for path in config.get("paths", [])}
    return topics


def _rviz_topics(repo: Path) -> set[str]:
    rviz = yaml.safe_load((repo / "config" / "rviz" / "aerialdojo.rviz").read_text())
    displays = rviz["Visualization Manager"]["Displays"]
    return {display["Topic"]["Value"] for display in displays if "Topic" in display}


def _config(repo: Path, tmp_path: Path) -> Path:
    config = yaml.safe_load((repo / "config" / "eval.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(
        image_width=96, image_height=96, publish_point_clouds=True
    )
    config.setdefault("evaluator", {"ros__parameters": {}})["ros__parameters"].update(
        image_decimation=2
    )
    path = tmp_path / "eval.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


class _Watcher:
    """A Foxglove WebSocket client: subscribes to every channel advertised and counts (and
    keeps the first few of) the messages of each topic."""

    KEPT_PER_TOPIC = 20

    def __init__(self, url: str) -> None:
        self.channels: dict[int, dict[str, Any]] = {}
        self.kept: dict[str, list[bytes]] = {}
        self.counts: dict[str, int] = {}
        self.statuses: list[str] = []
        self.ended = "still receiving"
        self._subscriptions: dict[int, str] = {}
        self._socket = connect(url, subprotocols=["foxglove.sdk.v1"], max_size=None)
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._receive, daemon=True)
        self._thread.start()

    def _receive(self) -> None:
        while not self._done.is_set():
            try:
                message = self._socket.recv(timeout=0.5)
            except TimeoutError:
                continue
            except Exception as error:  # the server stopped with the run
                self.ended = repr(error)
                return
            if isinstance(message, str):
                self._control(json.loads(message))
            elif message[0] == MESSAGE_DATA:
                (subscription,) = struct.unpack_from("<I", message, 1)
                topic = self._subscriptions[subscription]
                self.counts[topic] = self.counts.get(topic, 0) + 1
                kept = self.kept.setdefault(topic, [])
                if len(kept) < self.KEPT_PER_TOPIC:
                    kept.append(bytes(message[13:]))

    def _control(self, message: dict[str, Any]) -> None:
        if message["op"] == "status":
            self.statuses.append(message["message"])
            # The server can refuse a subscription that follows its advertisement too
            # closely (foxglove-sdk 0.30 logs "unknown channel"); a client asks again.
            refused = re.search(
                r"unknown channel(?: ID)?: (\d+)", message["message"], re.IGNORECASE
            )
            if refused:
                time.sleep(0.1)
                self._subscribe([self.channels[int(refused.group(1))]])
        if message["op"] == "advertise":
            for channel in message["channels"]:
                self.channels[channel["id"]] = channel
            self._subscribe(message["channels"])

    def _subscribe(self, channels: list[dict[str, Any]]) -> None:
        subscriptions = []
        for channel in channels:
            subscription = len(self._subscriptions) + 1
            self._subscriptions[subscription] = channel["topic"]
            subscriptions.append({"id": subscription, "channelId": channel["id"]})
        self._socket.send(json.dumps({"op": "subscribe", "subscriptions": subscriptions}))

    def decode(self, topic: str) -> list[Any]:
        """The kept messages of ``topic``, decoded with the schema the server advertised."""
        channel = next(c for c in self.channels.values() if c["topic"] == topic)
        assert (channel["encoding"], channel["schemaEncoding"]) == ("cdr", "ros2msg")
        typestore = get_typestore(Stores.EMPTY)
        typestore.register(get_types_from_msg(channel["schema"], channel["schemaName"]))
        return [typestore.deserialize_cdr(raw, channel["schemaName"]) for raw in self.kept[topic]]

    def close(self) -> None:
        self._done.set()
        self._socket.close()
        self._thread.join(timeout=5)


def test_a_live_run_is_served_to_foxglove_and_replayed_as_a_video(
    repo: Path, tmp_path: Path
) -> None:
    command = [
        sys.executable,
        "-m",
        "aerialdojo.cli",
        "eval",
        "--config",
        str(_config(repo, tmp_path)),
        "--episodes",
        "1",
        "--output",
        str(tmp_path / "runs"),
        "--run-id",
        "live",
        "--live",
        "--live-port",
        "0",
    ]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stderr), daemon=True)
    reader.start()
    watcher = None
    try:
        deadline = time.monotonic() + 120
        while watcher is None:
            found = [m for line in lines if (m := re.search(r"ws://127\.0\.0\.1:(\d+)", line))]
            if found:
                watcher = _Watcher(f"ws://127.0.0.1:{found[0].group(1)}")
            assert process.poll() is None, "".join(lines)[-3000:]
            assert time.monotonic() < deadline, "the CLI never announced its live view"
            time.sleep(0.1)
        stdout, _ = process.communicate(timeout=600)
    finally:
        if process.poll() is None:
            process.kill()
        if watcher is not None:
            watcher.close()
    reader.join(timeout=5)
    assert process.returncode == 0, "".join(lines)[-3000:]

    advertised = {channel["topic"] for channel in watcher.channels.values()}
    wanted = _layout_topics(repo) | _rviz_topics(repo)
    assert wanted <= advertised, f"not served live: {sorted(wanted - advertised)}"
    for topic in (
        "/aerialdojo/episode_events",
        "/uav/camera/front/image",
        "/uav/camera/front/points",
        "/tf",
        "/sim/ground_truth/uav/pose",
    ):
        assert watcher.counts.get(topic, 0) >= 1, (
            f"no live message on {topic}: {watcher.counts} {watcher.statuses} {watcher.ended}"
        )
    # The run's own event (RUN_STARTED) names no episode; the first episode's do.
    started = next(e for e in watcher.decode("/aerialdojo/episode_events") if e.episode_id)
    image = watcher.decode("/uav/camera/front/image")[0]
    cloud = watcher.decode("/uav/camera/front/points")[0]
    assert (image.height, image.width, image.encoding) == (96, 96, "rgb8")
    assert cloud.width > 0 and cloud.point_step == 12

    # The first episode waited for the live view, as the run's config says.
    run_dir = tmp_path / "runs" / "live"
    ran = yaml.safe_load((run_dir / "config.yaml").read_text())
    assert ran["task_manager"]["ros__parameters"]["await_viewers"] == ["aerialdojo_live_view"]

    # The recorded run, replayed: one frame per recorded observation set of the episode.
    episode_id = json.loads((run_dir / "metrics.json").read_text())["episodes"][0]["episode_id"]
    assert started.episode_id == episode_id
    with AnyReader([run_dir / "bag"]) as bag:
        events = [c for c in bag.connections if c.topic == "/aerialdojo/episode_events"]
        stamps = [
            bag.deserialize(raw, c.msgtype).header.stamp for c, _, raw in bag.messages(events)
        ]
        first, last = (s.sec * 10**9 + s.nanosec for s in (stamps[0], stamps[-1]))
        views = [c for c in bag.connections if "/camera/" in c.topic]
        recorded_sets = set()
        for connection, _, raw in bag.messages(views):
            stamp = bag.deserialize(raw, connection.msgtype).header.stamp
            recorded_sets.add(stamp.sec * 10**9 + stamp.nanosec)
        recorded = len({stamp for stamp in recorded_sets if first <= stamp <= last})
    video = tmp_path / "episode.mp4"
    replay = subprocess.run(
        [
            sys.executable,
            "-m",
            "aerialdojo.cli",
            "replay",
            str(run_dir),
            "--episode",
            episode_id,
            "--video",
            str(video),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert replay.returncode == 0, replay.stderr
    with av.open(str(video)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    assert recorded >= 1 and len(frames) == recorded
    assert np.asarray(frames[0]).shape[0] > 96  # the view and the HUD below it

    # The report of the live run: HTML beside the Markdown, a map over the scene.
    assert (run_dir / "report.html").is_file()
    assert (run_dir / "maps" / f"{episode_id}.png").is_file()
    assert f"![map: {episode_id}]" in (run_dir / "report.md").read_text()
    assert "report:" in stdout
