"""Throughput of ``aerialdojo evaluate-bag`` against plain rosbags iteration over the same bag.

Writes a synthetic run bag the way the evaluator does (episode events with ground-truth
records, odometry, ground-truth poses and decimated images), then times, on that bag:
  baseline: rosbags' AnyReader iterating and deserializing every episode event (the least any
            reader of the run must do);
  value:    evaluate-bag's path: read the events, fold them into traces, score and aggregate.

With ``--mapped``, the mapped-bag path instead (``evaluate-bag --map``): a robot's bag of
nav_msgs/Odometry at 20 Hz, a std_msgs/String mission topic cutting the episodes and a
std_msgs/Bool bumper, no aerialdojo topic; timed on that bag:
  baseline: AnyReader iterating and deserializing every message of those three topics;
  value:    the mapped path: one pass over them, cut into episodes, scored and aggregated.

    tools/run.sh python benchmarks/evaluate_bag.py [--episodes 200] [--steps 60]
    tools/run.sh python benchmarks/evaluate_bag.py --mapped [--episodes 100] [--steps 300]

Last line: RESULT evaluate_bag_events_per_s (or evaluate_mapped_bag_events_per_s)
value=<evaluate-bag> baseline=<plain rosbags>; the aim is a ratio of at least 0.5.
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
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.typesys import Stores, get_typestore

from aerialdojo.bags.mapped import score_mapped_bags
from aerialdojo.bags.mapping import parse_mapping
from aerialdojo.bags.recorder import BagRecorder
from aerialdojo.bags.replay import EVENTS_TOPIC, assemble_bag
from aerialdojo.bags.typestore import aerialdojo_typestore
from aerialdojo.events import EventKind
from aerialdojo.report.run import score_assembled

MSG_DIR = Path(__file__).resolve().parents[1] / "src" / "aerialdojo_interfaces" / "msg"
EVENT = "aerialdojo_interfaces/msg/EpisodeEvent"
POSE = "geometry_msgs/msg/PoseStamped"
IMAGE = "sensor_msgs/msg/CompressedImage"


def _record(index: int, steps: int) -> dict[str, object]:
    return {
        "episode_id": f"bench-{index:05d}",
        "benchmark": "aerialdojo",
        "scene": f"Scene_{index % 7}",
        "family": ("urban", "natural", "infrastructure", "disaster")[index % 4],
        "setting": "base",
        "split": "test",
        "action_budget": steps + 1,
        "start": [0.0, 0.0, 5.0, 0.0],
        "target": [20.0, 5.0, 5.0],
        "reference_length_m": 25.0,
        "success_radius_m": 3.0,
    }


def write_bag(path: Path, episodes: int, steps: int) -> int:
    """A run bag of ``episodes`` episodes of ``steps`` actions; returns the events written."""
    typestore = aerialdojo_typestore(MSG_DIR)
    types = typestore.types
    rng = np.random.default_rng(0)
    recorder = BagRecorder(path, typestore)
    for topic, msgtype in (
        (EVENTS_TOPIC, EVENT),
        ("/sim/ground_truth/uav/pose", POSE),
        ("/uav/camera/front/image/compressed", IMAGE),
    ):
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
        record = _record(index, steps)
        x, y = 0.0, 0.0
        for step in range(steps + 1):
            now += 10**9
            kind = EventKind.STARTED if step == 0 else EventKind.STEP
            if step == steps:
                kind = EventKind.STOPPED
            x, y = x + rng.uniform(0, 1), y + rng.uniform(-0.5, 0.5)
            event = types[EVENT](
                header=header(now),
                run_id="bench",
                episode_id=episode_id,
                attempt=0,
                episode_index=index,
                episode_count=episodes,
                agent="uav",
                kind=int(kind),
                action="Stop" if kind is EventKind.STOPPED else "MoveForward",
                magnitude=1.0,
                argument="",
                step=step,
                pose=pose(x, y),
                collided=False,
                collision_object="",
                message="",
                episode_json=json.dumps(record) if step == 0 else "",
            )
            recorder.write(EVENTS_TOPIC, now, typestore.serialize_cdr(event, EVENT))
            events += 1
            truth = types[POSE](header=header(now), pose=pose(x, y))
            recorder.write("/sim/ground_truth/uav/pose", now, typestore.serialize_cdr(truth, POSE))
            if step % 5 == 0:
                image = types[IMAGE](
                    header=header(now), format="rgb8; png compressed rgb8", data=picture
                )
                recorder.write(
                    "/uav/camera/front/image/compressed", now, typestore.serialize_cdr(image, IMAGE)
                )
        recorder.checkpoint()
    recorder.close()
    return events


ODOM, MISSION, BUMPER = "/robot/odom", "/robot/mission", "/robot/bumper"
MAPPING = {
    "pose": {"topic": ODOM, "frame": "anchored"},
    "collision": {"topic": BUMPER},
    "episodes": {"topic": MISSION},
}


def write_robot_bag(path: Path, episodes: int, samples: int) -> int:
    """A robot's bag of ``episodes`` flights of ``samples`` odometry messages at 20 Hz, each
    cut by the mission topic, every fifth bumping into something; returns the messages."""
    typestore = get_typestore(Stores.ROS2_JAZZY)
    types = typestore.types
    rng = np.random.default_rng(0)
    covariance = np.zeros(36)
    zero = types["geometry_msgs/msg/Vector3"](0.0, 0.0, 0.0)
    twist = types["geometry_msgs/msg/TwistWithCovariance"](
        twist=types["geometry_msgs/msg/Twist"](linear=zero, angular=zero), covariance=covariance
    )
    written, now = 0, 10**9
    with Writer(path, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        odom = writer.add_connection(ODOM, "nav_msgs/msg/Odometry", typestore=typestore)
        mission = writer.add_connection(MISSION, "std_msgs/msg/String", typestore=typestore)
        bumper = writer.add_connection(BUMPER, "std_msgs/msg/Bool", typestore=typestore)

        def put(connection, msgtype: str, message) -> None:
            nonlocal written
            writer.write(connection, now, typestore.serialize_cdr(message, msgtype))
            written += 1

        x = y = 0.0
        for index in range(episodes):
            put(
                mission,
                "std_msgs/msg/String",
                types["std_msgs/msg/String"](f"start bench-{index:05d}"),
            )
            for sample in range(samples):
                now += 50_000_000
                x, y = x + rng.uniform(0, 0.2), y + rng.uniform(-0.1, 0.1)
                stamp = types["builtin_interfaces/msg/Time"](sec=now // 10**9, nanosec=now % 10**9)
                pose = types["geometry_msgs/msg/Pose"](
                    position=types["geometry_msgs/msg/Point"](x, y, 5.0),
                    orientation=types["geometry_msgs/msg/Quaternion"](0.0, 0.0, 0.0, 1.0),
                )
                message = types["nav_msgs/msg/Odometry"](
                    header=types["std_msgs/msg/Header"](stamp=stamp, frame_id="odom"),
                    child_frame_id="base_link",
                    pose=types["geometry_msgs/msg/PoseWithCovariance"](
                        pose=pose, covariance=covariance
                    ),
                    twist=twist,
                )
                put(odom, "nav_msgs/msg/Odometry", message)
                if sample % 20 == 0:
                    contact = index % 5 == 0 and sample == samples // 2
                    put(bumper, "std_msgs/msg/Bool", types["std_msgs/msg/Bool"](contact))
            now += 50_000_000
            put(mission, "std_msgs/msg/String", types["std_msgs/msg/String"]("stop"))
    return written


def plain_mapped_iteration(bag: Path) -> int:
    with AnyReader([bag]) as reader:
        connections = [c for c in reader.connections if c.topic in (ODOM, MISSION, BUMPER)]
        return sum(
            1
            for connection, _, raw in reader.messages(connections=connections)
            if reader.deserialize(raw, connection.msgtype) is not None
        )


def evaluate_mapped_bag(bag: Path, records: dict[str, dict[str, object]]) -> int:
    mapped = score_mapped_bags([bag], parse_mapping(Path("robot.yaml"), MAPPING), records)
    result = score_assembled(mapped.assembler, [3.0, 5.0], mapped.warnings)
    assert result.metrics is not None
    return len(result.metrics.episodes)


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


def _expecting(run, expected: int, what: str):
    """``run`` as a timed call that fails the benchmark if it does not count ``expected``."""

    def call() -> None:
        if (got := run()) != expected:
            raise SystemExit(f"{what}: counted {got}, expected {expected}")

    return call


def _timed(repeats: int, baseline, value) -> tuple[list[float], list[float]]:
    plain, evaluated = [], []
    for _ in range(repeats):  # interleaved, so load changes hit both alike
        start = time.perf_counter()
        baseline()
        plain.append(time.perf_counter() - start)
        start = time.perf_counter()
        value()
        evaluated.append(time.perf_counter() - start)
    return plain, evaluated


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mapped", action="store_true", help="time the mapped-bag path")
    parser.add_argument("--episodes", type=int, help="default: 200 (100 with --mapped)")
    parser.add_argument("--steps", type=int, help="per episode; default: 60 (300 with --mapped)")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    episodes = args.episodes or (100 if args.mapped else 200)
    steps = args.steps or (300 if args.mapped else 60)
    with tempfile.TemporaryDirectory() as directory:
        bag = Path(directory) / "bag"
        if args.mapped:
            events = write_robot_bag(bag, episodes, steps)
            records = {f"bench-{i:05d}": _record(i, steps) for i in range(episodes)}
            plain, evaluated = _timed(
                args.repeats,
                _expecting(lambda: plain_mapped_iteration(bag), events, "plain iteration"),
                _expecting(lambda: evaluate_mapped_bag(bag, records), episodes, "episodes scored"),
            )
        else:
            events = write_bag(bag, episodes, steps)
            plain, evaluated = _timed(
                args.repeats,
                _expecting(lambda: plain_iteration(bag), events, "plain iteration"),
                _expecting(lambda: evaluate_bag(bag), episodes, "episodes scored"),
            )
        size_mb = sum(f.stat().st_size for f in bag.iterdir()) / 1e6
    name = "evaluate_mapped_bag_events_per_s" if args.mapped else "evaluate_bag_events_per_s"
    plain_rate = events / statistics.median(plain)
    evaluate_rate = events / statistics.median(evaluated)
    print(
        f"bag: {episodes} episodes, {events} {'mapped messages' if args.mapped else 'events'}, "
        f"{size_mb:.1f} MB"
    )
    print(
        f"plain rosbags iteration: {statistics.median(plain):.3f} s; "
        f"evaluate-bag{' --map' if args.mapped else ''}: {statistics.median(evaluated):.3f} s "
        f"(medians of {args.repeats})"
    )
    print(
        f"RESULT {name} value={evaluate_rate:.0f} baseline={plain_rate:.0f} "
        f"ratio={evaluate_rate / plain_rate:.3f}"
    )


if __name__ == "__main__":
    main()
