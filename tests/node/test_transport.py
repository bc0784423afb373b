"""Real DDS: full frames under the shipped profiles across processes, QoS matching, FramePublisher.

Run as a script, this module is the peer process of the cross-process test
(``python test_transport.py publisher|subscriber``).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import Image
from std_msgs.msg import Header, String

from aerialdojo.dds import PROFILE_FILE_VARIABLES, transport_profile_path
from aerialdojo.errors import TransportError
from aerialdojo.nodes.common import node_process
from aerialdojo.nodes.frame_publisher import FramePublisher
from aerialdojo.nodes.images import array_to_image
from aerialdojo.nodes.qos import latched_qos, sensor_qos

pytestmark = pytest.mark.ros

# Two of the four views keep the peers light enough for a machine shared with other test runs;
# benchmarks/transport.py measures all four.
VIEWS = ("front", "down")
FRAME_SETS = 20
RATE_HZ = 15.0
SEGMENT_BYTES = 64 * 1024 * 1024
# Fast DDS names a participant's shared-memory segment fastdds_<16 hex digits>; the port files
# (fastdds_port<n>) are shared by every participant of the host and removed by the last one.
SEGMENT_NAME = re.compile(r"^/dev/shm/fast(?:dds|rtps)_[0-9a-f]{16}$")


def frame_topics() -> list[tuple[str, str]]:
    """(topic, encoding) of every stream of one RGB-D frame set."""
    return [
        (f"/transport_test/{view}/{kind}", encoding)
        for view in VIEWS
        for kind, encoding in (("image", "rgb8"), ("depth", "32FC1"))
    ]


def mapped_shared_memory() -> dict[str, int]:
    """Files of /dev/shm this process maps, with their sizes."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if " /dev/shm/" in line}
    return {path: os.stat(path).st_size for path in sorted(paths) if os.path.exists(path)}


def run_publisher() -> None:
    """Publish FRAME_SETS full-size frame sets at RATE_HZ; print what was sent as JSON."""
    rng = np.random.default_rng(6)
    frames = {
        topic: rng.integers(0, 255, (640, 640, 3), dtype=np.uint8)
        if encoding == "rgb8"
        else rng.uniform(1.0, 200.0, (640, 640)).astype(np.float32)
        for topic, encoding in frame_topics()
    }
    sent: list[dict[str, Any]] = []
    with node_process():
        node = Node("transport_test_publisher")
        publishers = {
            topic: node.create_publisher(Image, topic, sensor_qos()) for topic, _ in frame_topics()
        }
        deadline = time.monotonic() + 10.0
        while any(p.get_subscription_count() == 0 for p in publishers.values()):
            if time.monotonic() > deadline:
                sys.exit("publisher: no subscriber matched within 10 s")
            time.sleep(0.05)
        start = time.monotonic()
        for index in range(FRAME_SETS):
            time.sleep(max(0.0, start + index / RATE_HZ - time.monotonic()))
            stamp = node.get_clock().now().to_msg()
            for topic, encoding in frame_topics():
                frames[topic].flat[0] = index + 1  # every set differs, so a stale frame shows
                message = array_to_image(frames[topic], encoding)
                message.header.stamp = stamp
                publishers[topic].publish(message)
                crc = zlib.crc32(message.data)
                sent.append({"topic": topic, "stamp": [stamp.sec, stamp.nanosec], "crc": crc})
        time.sleep(0.5)  # let the last frames leave before the participant goes away
        print(json.dumps({"sent": sent, "shm": mapped_shared_memory()}), flush=True)
        node.destroy_node()


def run_subscriber() -> None:
    """Subscribe best-effort to every stream until stdin closes; print what arrived as JSON."""
    received: list[dict[str, Any]] = []
    with node_process():
        node = Node("transport_test_subscriber")

        def record(topic: str) -> Callable[[Image], None]:
            def on_image(message: Image) -> None:
                received.append(
                    {
                        "topic": topic,
                        "stamp": [message.header.stamp.sec, message.header.stamp.nanosec],
                        "crc": zlib.crc32(message.data),
                        "size": [message.width, message.height, len(message.data)],
                    }
                )

            return on_image

        for topic, _ in frame_topics():
            node.create_subscription(Image, topic, record(topic), sensor_qos(reliable=False))
        stdin_closed = threading.Event()

        def wait_for_end_of_input() -> None:
            sys.stdin.read()
            stdin_closed.set()

        threading.Thread(target=wait_for_end_of_input, daemon=True).start()
        print("READY", flush=True)
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        while not stdin_closed.is_set():
            executor.spin_once(timeout_sec=0.05)
        print(json.dumps({"received": received, "shm": mapped_shared_memory()}), flush=True)
        node.destroy_node()


def peer(role: str, profile: str) -> subprocess.Popen[str]:
    """This module as a peer process under a shipped transport profile."""
    # Only the profile file changes: discovery stays as the test session set it (LOCALHOST).
    environment = {
        **os.environ,
        **dict.fromkeys(PROFILE_FILE_VARIABLES, str(transport_profile_path(profile))),
    }
    return subprocess.Popen(
        [sys.executable, __file__, role],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("profile", ["single_host", "multi_host"])
def test_best_effort_subscriber_in_another_process_receives_full_frames(profile: str) -> None:
    subscriber = peer("subscriber", profile)
    try:
        assert subscriber.stdout is not None
        assert subscriber.stdout.readline().strip() == "READY"
        publisher = peer("publisher", profile)
        publisher_out, publisher_err = publisher.communicate(timeout=60)
        assert publisher.returncode == 0, publisher_err
        subscriber_out, subscriber_err = subscriber.communicate(input="", timeout=30)
    finally:
        subscriber.kill()  # no-op once it exited; a hung peer must not outlive the test
    assert subscriber.returncode == 0, subscriber_err
    sent = json.loads(publisher_out)
    received = json.loads(subscriber_out)

    # A broken profile only logs XML errors and falls back to the default transports.
    for stderr in (publisher_err, subscriber_err):
        assert "Error" not in stderr, stderr
    for report in (sent, received):
        assert max(report["shm"].values()) >= SEGMENT_BYTES, report["shm"]

    crc_sent = {(item["topic"], tuple(item["stamp"])): item["crc"] for item in sent["sent"]}
    assert len(crc_sent) == FRAME_SETS * len(frame_topics())
    # The default transports delivered 35-45% of these frames best-effort in trials; the profile
    # all of them. 90% leaves room for a machine busy with other test runs.
    assert len(received["received"]) >= 0.9 * len(crc_sent)
    for item in received["received"]:
        width, height, size = item["size"]
        assert (width, height) == (640, 640)
        assert size == 640 * 640 * (3 if item["topic"].endswith("image") else 4)
        assert crc_sent[(item["topic"], tuple(item["stamp"]))] == item["crc"]

    leftovers = [
        path
        for path in (*sent["shm"], *received["shm"])
        if SEGMENT_NAME.match(path) and os.path.exists(path)
    ]
    assert leftovers == []


@pytest.fixture
def context() -> Iterator[Context]:
    """An rclpy context of its own (domain from ROS_DOMAIN_ID, set per test session)."""
    ros_context = Context()
    rclpy.init(context=ros_context)
    try:
        yield ros_context
    finally:
        rclpy.try_shutdown(context=ros_context)


def spin_until(
    context: Context, node: Node, condition: Callable[[], bool], timeout: float = 10.0
) -> None:
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        executor.spin_once(timeout_sec=0.05)
    executor.remove_node(node)


def test_sensor_publisher_serves_reliable_and_best_effort_subscribers(context: Context) -> None:
    node = Node("transport_test_qos", context=context)
    reliable: list[Image] = []
    best_effort: list[Image] = []
    node.create_subscription(Image, "/transport_test/qos", reliable.append, sensor_qos())
    node.create_subscription(
        Image, "/transport_test/qos", best_effort.append, sensor_qos(reliable=False)
    )
    publisher = node.create_publisher(Image, "/transport_test/qos", sensor_qos())
    best_effort_publisher = node.create_publisher(
        Image, "/transport_test/qos", sensor_qos(reliable=False)
    )
    spin_until(context, node, lambda: publisher.get_subscription_count() == 2)
    # Why sensor publishers stay reliable: a best-effort writer cannot serve a reliable reader.
    assert best_effort_publisher.get_subscription_count() == 1

    publisher.publish(array_to_image(np.zeros((4, 4), np.float32), "32FC1"))
    spin_until(context, node, lambda: bool(reliable) and bool(best_effort))
    assert reliable[0].encoding == best_effort[0].encoding == "32FC1"
    node.destroy_node()


def test_sensor_publisher_hands_its_kept_frames_to_a_subscriber_that_matches_late(
    context: Context,
) -> None:
    # What lets an agent wait for the frames of its step: a subscription may count its
    # publisher as matched before the publisher has matched it (benchmarks/late_match.py).
    node = Node("transport_test_late_match", context=context)
    publisher = node.create_publisher(Image, "/transport_test/late", sensor_qos(depth=2))
    for step in range(3):
        publisher.publish(Image(header=Header(frame_id=f"step {step}")))
    late: list[Image] = []
    viewer: list[Image] = []
    node.create_subscription(Image, "/transport_test/late", late.append, sensor_qos())
    node.create_subscription(
        Image, "/transport_test/late", viewer.append, sensor_qos(reliable=False)
    )
    spin_until(context, node, lambda: len(late) == 2)
    assert [message.header.frame_id for message in late] == ["step 1", "step 2"]
    assert viewer == []  # a viewer wants the live stream only
    node.destroy_node()


def test_latched_qos_hands_the_last_message_to_a_late_subscriber(context: Context) -> None:
    node = Node("transport_test_latched", context=context)
    publisher = node.create_publisher(String, "/transport_test/latched", latched_qos())
    publisher.publish(String(data="first"))
    publisher.publish(String(data="current task"))
    late: list[String] = []
    node.create_subscription(String, "/transport_test/latched", late.append, latched_qos())
    spin_until(context, node, lambda: bool(late))
    assert [message.data for message in late] == ["current task"]
    node.destroy_node()


def test_frame_publisher_publishes_batches_in_submission_order(context: Context) -> None:
    node = Node("transport_test_frame_publisher", context=context)
    received: list[String] = []
    node.create_subscription(
        String, "/transport_test/frames", received.append, sensor_qos(depth=50)
    )
    publisher = node.create_publisher(String, "/transport_test/frames", sensor_qos(depth=50))
    spin_until(context, node, lambda: publisher.get_subscription_count() == 1)

    expected = [f"{step}/{view}" for step in range(5) for view in ("front", "left", "right")]
    with FramePublisher(max_pending=1) as frames:
        for step in range(5):
            frames.submit(
                (publisher, String(data=text)) for text in expected if text.startswith(f"{step}/")
            )
        frames.flush()
        spin_until(context, node, lambda: len(received) == len(expected))
    assert [message.data for message in received] == expected
    with pytest.raises(TransportError, match="closed"):
        frames.submit([(publisher, String(data="late"))])
    node.destroy_node()


def test_frame_publisher_reports_a_failed_publish_to_the_caller(context: Context) -> None:
    node = Node("transport_test_frame_failure", context=context)
    publisher = node.create_publisher(String, "/transport_test/failure", sensor_qos())
    node.destroy_publisher(publisher)

    reported: list[BaseException] = []
    frames = FramePublisher(on_failure=reported.append)
    frames.submit([(publisher, String(data="after destroy"))])
    with pytest.raises(TransportError, match="publishing a queued frame failed"):
        frames.flush()
    assert len(reported) == 1  # at once, for the owner's log
    with pytest.raises(TransportError):
        frames.submit([(publisher, String(data="again"))])
    with pytest.raises(TransportError):
        frames.close()
    node.destroy_node()


if __name__ == "__main__":
    {"publisher": run_publisher, "subscriber": run_subscriber}[sys.argv[1]]()
