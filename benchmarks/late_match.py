"""Frames lost to a subscriber that matched its publisher a moment before the publisher matched it.

DDS discovery is not symmetric: a subscription can report its publisher as matched
(``get_publisher_count() > 0``) while the publisher has not yet matched the subscription. A
frame published in that window is never delivered to a volatile reader, however reliable. The
agents and the node tests wait for exactly that reader-side match before the step whose frames
they need, so each lost frame is a stalled episode.

Each trial, in a fresh topic: a publisher process (the bridge) creates its publisher and sends a
frame; the parent (the agent) subscribes, waits until its subscription is matched, then asks for
the step's frame and waits up to 2 s for it. Trials alternate between the baseline (reliable,
volatile, depth 5: the sensor QoS before it became transient local) and the shipped
``sensor_qos()``. Busy processes load the CPUs (``--load``), as a test run or a render does;
on an idle machine the window rarely opens.

Usage: tools/run.sh python benchmarks/late_match.py [--trials 200] [--load 2]
The last line is ``RESULT late_match_frames_lost_per_1000 value=<shipped> baseline=<volatile>
ratio=<value/baseline>``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import Image

# Measure this checkout's helpers, not whatever version the install/ overlay last built.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))
from aerialdojo.nodes.qos import sensor_qos

CONFIGS = ("volatile", "shipped")
WAIT_S = 2.0


def qos_for(config: str) -> QoSProfile:
    """The baseline's reliable volatile QoS, or the shipped sensor QoS."""
    if config == "shipped":
        return sensor_qos()
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=5,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def publisher_process() -> None:
    """Reads ``<topic> <config> <frame_id>`` lines; publishes one frame each and answers with
    the publisher's matched-subscription count at that moment."""
    context = Context()
    rclpy.init(context=context)
    node = Node("late_match_publisher", context=context)
    publishers = {}
    for line in sys.stdin:
        topic, config, frame_id = line.split()
        if topic not in publishers:
            publishers[topic] = node.create_publisher(Image, topic, qos_for(config))
        matched = publishers[topic].get_subscription_count()
        message = Image(height=24, width=32, encoding="rgb8", step=96, data=bytes(32 * 24 * 3))
        message.header.frame_id = frame_id
        publishers[topic].publish(message)
        print(matched, flush=True)
    node.destroy_node()
    rclpy.shutdown(context=context)


def busy() -> None:
    while True:
        pass


class Trials:
    """The agent side: one subscription per trial, on a private context."""

    def __init__(self) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("late_match_subscriber", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.publisher = subprocess.Popen(
            [sys.executable, __file__, "--publisher"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def _publish(self, topic: str, config: str, frame_id: str) -> int:
        assert self.publisher.stdin is not None and self.publisher.stdout is not None
        self.publisher.stdin.write(f"{topic} {config} {frame_id}\n")
        self.publisher.stdin.flush()
        return int(self.publisher.stdout.readline())

    def _spin_until(self, done: Callable[[], bool], timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not done() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.005)
        return done()

    def run(self, index: int, config: str) -> tuple[bool, bool]:
        """(whether the step's frame was lost, whether the publisher had not matched yet)."""
        topic = f"/late_match/t{index}"
        self._publish(topic, config, "before_subscribe")
        received: list[Image] = []
        subscription = self.node.create_subscription(Image, topic, received.append, qos_for(config))
        if not self._spin_until(lambda: subscription.get_publisher_count() > 0, 10.0):
            raise RuntimeError(f"{topic}: the subscription never matched its publisher")
        matched_by_publisher = self._publish(topic, config, "step") > 0
        arrived = self._spin_until(
            lambda: any(m.header.frame_id == "step" for m in received), WAIT_S
        )
        self.node.destroy_subscription(subscription)
        return not arrived, not matched_by_publisher

    def close(self) -> None:
        assert self.publisher.stdin is not None
        self.publisher.stdin.close()
        self.publisher.wait(10.0)
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200, help="per configuration")
    parser.add_argument("--load", type=int, default=2, help="busy processes during the trials")
    parser.add_argument("--publisher", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publisher:
        publisher_process()
        return
    load = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.load)]
    for process in load:
        process.start()
    lost = dict.fromkeys(CONFIGS, 0)
    unmatched = dict.fromkeys(CONFIGS, 0)
    trials = Trials()
    try:
        for index in range(args.trials * len(CONFIGS)):
            config = CONFIGS[index % len(CONFIGS)]
            frame_lost, publisher_unmatched = trials.run(index, config)
            lost[config] += frame_lost
            unmatched[config] += publisher_unmatched
    finally:
        trials.close()
        for process in load:
            process.terminate()
    print(f"{args.trials} trials per configuration, {args.load} busy processes")
    print(f"{'config':<10} {'publisher not matched yet':>26} {'step frame lost':>16}")
    for config in CONFIGS:
        print(f"{config:<10} {unmatched[config]:>26} {lost[config]:>16}")
    value, baseline = (1000.0 * lost[c] / args.trials for c in ("shipped", "volatile"))
    ratio = f"{value / baseline:.3f}" if baseline else "nan"
    print(
        f"RESULT late_match_frames_lost_per_1000 value={value:.2f} "
        f"baseline={baseline:.2f} ratio={ratio}"
    )


if __name__ == "__main__":
    main()
