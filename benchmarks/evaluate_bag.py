"""Throughput of ``aerialdojo evaluate-bag`` against plain rosbags iteration over the same bag.

Writes a synthetic run bag the way the evaluator does (episode events with ground-truth
records, odometry, ground-truth poses and decimated images), then times, on that bag:
  baseline: rosbags' AnyReader iterating and deserializing every episode event (the least any
            reader of the run must do);
  value:    evaluate-bag's path: read the events, fold them into traces, score and aggregate.

    tools/run.sh python benchmarks/evaluate_bag.py [--episodes 200] [--steps 60]

Last line: RESULT evaluate_bag_events_per_s value=<evaluate-bag> baseline=<plain rosbags>;
the aim is a ratio of at least 0.5.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader

from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, assemble_bag
from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.events import EventKind
from aerialdojo.report.run import score_assembled

MSG_DIR = Path(__file__).resolve().parents[1] / "src" / "aerialdojo_interfaces" / "msg"
EVENT = "aerialdojo_interfaces/msg/EpisodeEvent"
POSE = "geometry_msgs/msg/PoseStamped"
IMAGE = "sensor_msgs/msg/CompressedImage"


def write_bag(path: Path, episodes: int, steps: int) -> int:
    """A run bag of ``episodes`` episodes of ``steps`` actions; returns the events written."""
    typestore = aerialdojo_typestore(MSG_DIR)
    types = typestore.types
    rng = np.random.default_rng(0)
    recorder = BagRecorder(path, typestore)
    for topic, msgtype in ((EVENTS_TOPIC, EVENT), ("/sim/ground_truth/uav/pose", POSE),
                           ("/uav/camera/front/image/compressed", IMAGE)):  # fmt: skip
        recorder.add_topic(topic, msgtype)
    picture = rng.integers(0, 255, 20_000, dtype=np.uint8)  # a PNG-sized payload

    def header(ns: int):
        stamp = types["builtin_interfaces/msg/Time"](sec=ns // 10**9, nanosec=ns % 10**9)
        return types["std_msgs/msg/Header"](stamp=stamp, frame_id="map")

    def pose(x: float, y: float):
        return types["geometry_msgs/msg/Pose"](
            position=types["geometry_msgs/msg/Point"](x, y, 5.0),
            orientation=types["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
        )

    events, now = 0, 0
    for index in range(episodes):
        episode_id = f"bench-{index:05d}"
        record = {"episode_id": episode_id, "benchmark": "aerialdojo",
                  "scene": f"Scene_{index % 7}",
                  "family": ("urban", "natural", "infrastructure", "disaster")[index % 4],
                  "setting": "base", "split": "test", "action_budget": steps + 1,
                  "start": [0.0, 0.0, 5.0, 0.0], "target": [20.0, 5.0, 5.0],
                  "reference_length_m": 25.0, "success_radius_m": 3.0}  # fmt: skip
        x, y = 0.0, 0.0
        for step in range(steps + 1):
            now += 10**9
            kind = EventKind.STARTED if step == 0 else EventKind.STEP
            if step == steps:
                kind = EventKind.STOPPED
            x, y = x + rng.uniform(0, 1), y + rng.uniform(-0.5, 0.5)
            event = types[EVENT](
                header=header(now), episode_id=episode_id, attempt=0, episode_index=index,
                episode_count=episodes, agent="uav", kind=int(kind),
                action="Stop" if kind is EventKind.STOPPED else "MoveForward", magnitude=1.0,
                argument="", step=step, pose=pose(x, y), collided=False, collision_object="",
                message="", episode_json=json.dumps(record) if step == 0 else "",
            )  # fmt: skip
            recorder.write(EVENTS_TOPIC, now, typestore.serialize_cdr(event, EVENT))
            events += 1
            truth = types[POSE](header=header(now), pose=pose(x, y))
            recorder.write("/sim/ground_truth/uav/pose", now, typestore.serialize_cdr(truth, POSE))
            if step % 5 == 0:
                image = types[IMAGE](header=header(now), format="rgb8; png compressed rgb8",
                                     data=picture)  # fmt: skip
                recorder.write("/uav/camera/front/image/compressed", now,
                               typestore.serialize_cdr(image, IMAGE))  # fmt: skip
        recorder.checkpoint()
    recorder.close()
    return events


def plain_iteration(bag: Path) -> int:
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic == EVENTS_TOPIC]
        return sum(
            1
            for connection, _, raw in reader.messages(connections=connections)
            if reader.deserialize(raw, connection.msgtype) is not None
        )


def evaluate_bag(bag: Path) -> int:
    replayed = assemble_bag(bag)
    result = score_assembled(replayed.assembler, [3.0, 5.0], replayed.warnings)
    assert result.metrics is not None
    return len(result.metrics.episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        bag = Path(directory) / "bag"
        events = write_bag(bag, args.episodes, args.steps)
        size_mb = sum(f.stat().st_size for f in bag.iterdir()) / 1e6
        plain, evaluated = [], []
        for _ in range(args.repeats):  # interleaved, so load changes hit both alike
            start = time.perf_counter()
            assert plain_iteration(bag) == events
            plain.append(time.perf_counter() - start)
            start = time.perf_counter()
            assert evaluate_bag(bag) == args.episodes
            evaluated.append(time.perf_counter() - start)
    plain_rate = events / statistics.median(plain)
    evaluate_rate = events / statistics.median(evaluated)
    print(f"bag: {args.episodes} episodes, {events} events, {size_mb:.1f} MB")
    print(
        f"plain rosbags iteration: {statistics.median(plain):.3f} s; "
        f"evaluate-bag: {statistics.median(evaluated):.3f} s (medians of {args.repeats})"
    )
    print(
        f"RESULT evaluate_bag_events_per_s value={evaluate_rate:.0f} baseline={plain_rate:.0f} "
        f"ratio={evaluate_rate / plain_rate:.3f}"
    )


if __name__ == "__main__":
    main()
