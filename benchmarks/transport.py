"""Four-view RGB-D frame sets through real DDS: the shipped profile against a bare rclpy publisher.

One publisher process sends 4 x (rgb8 + 32FC1) 640x640 images per frame set (11.5 MB,
AerialDojo-200K section 3.1) at 15 Hz and then as fast as it can, to two subscriber processes: one
reliable, one best-effort. The same messages go once through the shipped configuration
(``sensor_qos`` publisher and subscribers, ``config/transport/fastdds_shm.xml``) and once through a
bare rclpy setup (depth-10 default QoS publisher, default-QoS and ``qos_profile_sensor_data``
subscribers, Fast DDS's default transports). A frame set counts as delivered when all its images
arrived full-size; its latency is the last arrival minus the publish stamp. CPU is each process's
CPU time per frame set sent. Before that, in-process, it measures what building the messages costs:
``array_to_image`` against ``Image(data=array.tobytes())`` and a list conversion (time and bytes
allocated per frame set).

Usage: tools/run.sh python benchmarks/transport.py [--seconds 10] [--max-rate-seconds 4]
The last line is ``RESULT transport_best_effort_delivered value=<fraction at 15 Hz with the
profile> baseline=<fraction for the bare publisher> ratio=<value/baseline>``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import threading
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import Image

# Measure this checkout's helpers, not whatever version the install/ overlay last built.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))
from aerialdojo.dds import PROFILE_FILE_VARIABLES, transport_profile_path
from aerialdojo.nodes.common import node_process
from aerialdojo.nodes.images import array_to_image
from aerialdojo.nodes.qos import sensor_qos

VIEWS = ("front", "left", "right", "down")
SIZE = 640
RATE_HZ = 15.0
SUBSCRIBERS = ("reliable", "best_effort")
CONFIGS = ("profile", "bare")
SEGMENT_NAME = re.compile(r"^/dev/shm/fast(?:dds|rtps)_[0-9a-f]{16}$")
PROFILE_VARIABLES = (*PROFILE_FILE_VARIABLES, "RMW_FASTRTPS_USE_QOS_FROM_XML")
BARE_DEPTH = 10  # rclpy's customary queue depth for create_publisher(..., 10)


def frame_set(seed: int = 0) -> dict[str, tuple[np.ndarray, str]]:
    """topic -> (pixels, encoding) of one seeded four-view RGB-D frame set."""
    rng = np.random.default_rng(seed)
    frames: dict[str, tuple[np.ndarray, str]] = {}
    for view in VIEWS:
        frames[f"/bench/{view}/image"] = (
            rng.integers(0, 256, (SIZE, SIZE, 3), dtype=np.uint8),
            "rgb8",
        )
        frames[f"/bench/{view}/depth"] = (
            rng.uniform(0.5, 300.0, (SIZE, SIZE)).astype(np.float32),
            "32FC1",
        )
    return frames


def frame_set_bytes() -> int:
    return sum(pixels.nbytes for pixels, _ in frame_set().values())


def shared_memory_segments() -> list[str]:
    """Fast DDS segments (not the shared port files) this process maps."""
    with open("/proc/self/maps", encoding="utf-8") as maps:
        paths = {line.split()[-1] for line in maps if " /dev/shm/" in line}
    return sorted(path for path in paths if SEGMENT_NAME.match(path))


# --- peer processes --------------------------------------------------------------------------


def publisher_qos(config: str) -> QoSProfile | int:
    return sensor_qos() if config == "profile" else BARE_DEPTH


def subscriber_qos(config: str, kind: str) -> QoSProfile | int:
    if config == "profile":
        return sensor_qos(reliable=kind == "reliable")
    return BARE_DEPTH if kind == "reliable" else qos_profile_sensor_data


def run_publisher(config: str, rate_hz: float, seconds: float) -> None:
    """Publish frame sets for ``seconds`` (at ``rate_hz``, or back to back if 0); print JSON."""
    messages = {
        topic: array_to_image(pixels, encoding) for topic, (pixels, encoding) in frame_set().items()
    }
    stamps: list[int] = []
    with node_process():
        node = Node("transport_bench_publisher")
        publishers = {
            topic: node.create_publisher(Image, topic, publisher_qos(config)) for topic in messages
        }
        deadline = time.monotonic() + 15.0
        while any(p.get_subscription_count() < len(SUBSCRIBERS) for p in publishers.values()):
            if time.monotonic() > deadline:
                sys.exit("publisher: subscribers did not match within 15 s")
            time.sleep(0.02)
        cpu_start, start = time.process_time(), time.monotonic()
        while time.monotonic() - start < seconds:
            if rate_hz:
                time.sleep(max(0.0, start + len(stamps) / rate_hz - time.monotonic()))
            stamp = time.time_ns()
            for topic, message in messages.items():
                message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp, 10**9)
                publishers[topic].publish(message)
            stamps.append(stamp)
        duration, cpu = time.monotonic() - start, time.process_time() - cpu_start
        time.sleep(1.0)  # reliable repairs and the last samples still need this participant
        report = {"stamps": stamps, "seconds": duration, "cpu_s": cpu}
        print(json.dumps({**report, "shm": shared_memory_segments()}), flush=True)
        node.destroy_node()


def run_subscriber(config: str, kind: str) -> None:
    """Record each full-size frame's arrival until stdin closes; print JSON."""
    arrivals: dict[int, list[int]] = {}  # stamp -> [full images received, last arrival ns]
    expected = {topic: pixels.nbytes for topic, (pixels, _) in frame_set().items()}

    def recorder(topic: str) -> Callable[[Image], None]:
        def on_image(message: Image) -> None:
            arrived = time.time_ns()
            if len(message.data) != expected[topic]:
                return
            stamp = message.header.stamp.sec * 10**9 + message.header.stamp.nanosec
            entry = arrivals.setdefault(stamp, [0, 0])
            entry[0] += 1
            entry[1] = max(entry[1], arrived)

        return on_image

    with node_process():
        node = Node(f"transport_bench_{kind}")
        for topic in expected:
            node.create_subscription(Image, topic, recorder(topic), subscriber_qos(config, kind))
        stdin_closed = threading.Event()

        def wait_for_end_of_input() -> None:
            sys.stdin.read()
            stdin_closed.set()

        threading.Thread(target=wait_for_end_of_input, daemon=True).start()
        executor = SingleThreadedExecutor()
        executor.add_node(node)
        cpu_start = time.process_time()
        print("READY", flush=True)
        while not stdin_closed.is_set():
            executor.spin_once(timeout_sec=0.05)
        cpu = time.process_time() - cpu_start
        report = {"arrivals": {str(stamp): entry for stamp, entry in arrivals.items()}}
        print(json.dumps({**report, "cpu_s": cpu, "shm": shared_memory_segments()}), flush=True)
        node.destroy_node()


# --- orchestration ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Delivery:
    """What one subscriber got from one run."""

    fraction: float
    images_fraction: float
    rate_hz: float
    latency_p50_ms: float
    latency_p95_ms: float
    cpu_ms_per_set: float


@dataclass(frozen=True)
class Run:
    """One publisher and both subscribers, one configuration, one rate."""

    config: str
    rate_hz: float
    sent: int
    publish_rate_hz: float
    publisher_cpu_ms_per_set: float
    subscribers: dict[str, Delivery]
    segments: list[str]


def peer_environment(config: str, domain_id: int) -> dict[str, str]:
    environment = {
        name: value for name, value in os.environ.items() if name not in PROFILE_VARIABLES
    }
    environment["ROS_DOMAIN_ID"] = str(domain_id)
    environment["RMW_IMPLEMENTATION"] = "rmw_fastrtps_cpp"
    if config == "profile":
        profile_file = str(transport_profile_path("single_host"))
        environment.update(dict.fromkeys(PROFILE_FILE_VARIABLES, profile_file))
    return environment


def spawn(arguments: list[str], environment: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, __file__, "--peer", *arguments],
        env=environment,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str], role: str, timeout: float) -> dict[str, Any]:
    output, errors = process.communicate(input="", timeout=timeout)
    if process.returncode != 0:
        raise RuntimeError(f"{role} exited with {process.returncode}:\n{errors}")
    if "Error" in errors:  # e.g. an XML profile that did not parse: defaults would be measured
        raise RuntimeError(f"{role} reported errors:\n{errors}")
    result: dict[str, Any] = json.loads(output.splitlines()[-1])
    return result


def measure(config: str, rate_hz: float, seconds: float, domain_id: int) -> Run:
    environment = peer_environment(config, domain_id)
    subscribers = {kind: spawn(["subscriber", config, kind], environment) for kind in SUBSCRIBERS}
    try:
        for kind, process in subscribers.items():
            assert process.stdout is not None
            if process.stdout.readline().strip() != "READY":
                raise RuntimeError(f"{kind} subscriber did not start:\n{process.communicate()[1]}")
        publisher = spawn(["publisher", config, str(rate_hz), str(seconds)], environment)
        published = finish(publisher, "publisher", timeout=seconds + 60)
        received = {
            kind: finish(process, kind, timeout=30) for kind, process in subscribers.items()
        }
    finally:
        for process in subscribers.values():
            process.kill()  # only acts on a peer that hung; the others have exited
    stamps, sent = published["stamps"], len(published["stamps"])
    deliveries = {}
    for kind, report in received.items():
        arrivals = report["arrivals"]
        complete = [
            arrivals[str(stamp)][1] - stamp
            for stamp in stamps
            if str(stamp) in arrivals and arrivals[str(stamp)][0] == len(frame_set())
        ]
        latencies_ms = np.array(complete, dtype=np.float64) / 1e6
        images = sum(arrivals.get(str(stamp), (0, 0))[0] for stamp in stamps)
        deliveries[kind] = Delivery(
            fraction=len(complete) / sent,
            images_fraction=images / (sent * len(frame_set())),
            rate_hz=len(complete) / published["seconds"],
            latency_p50_ms=float(np.percentile(latencies_ms, 50)) if complete else float("nan"),
            latency_p95_ms=float(np.percentile(latencies_ms, 95)) if complete else float("nan"),
            cpu_ms_per_set=report["cpu_s"] * 1e3 / sent,
        )
    segments = [*published["shm"], *(path for r in received.values() for path in r["shm"])]
    return Run(
        config=config,
        rate_hz=rate_hz,
        sent=sent,
        publish_rate_hz=sent / published["seconds"],
        publisher_cpu_ms_per_set=published["cpu_s"] * 1e3 / sent,
        subscribers=deliveries,
        segments=segments,
    )


def conversion_costs(repeats: int) -> dict[str, tuple[float, float]]:
    """Building one frame set's messages: method -> (ms per set, MB allocated per set).

    Allocation is the tracemalloc peak while building each image, summed over the set: the
    pixel bytes the method writes, i.e. one frame set per copy it makes.
    """
    frames = list(frame_set().values())
    methods: dict[str, Callable[[np.ndarray, str], Image]] = {
        "array_to_image (one copy)": array_to_image,
        "Image(data=array.tobytes())": lambda pixels, encoding: Image(
            encoding=encoding, data=pixels.tobytes()
        ),
        "Image(data=list of bytes)": lambda pixels, encoding: Image(
            encoding=encoding, data=pixels.view(np.uint8).ravel().tolist()
        ),
    }
    costs = {}
    for name, build in methods.items():
        rounds = 1 if "list" in name else repeats
        start = time.perf_counter()
        for _ in range(rounds):
            for pixels, encoding in frames:
                build(pixels, encoding)
        milliseconds = (time.perf_counter() - start) * 1e3 / rounds
        allocated = 0
        tracemalloc.start()
        for pixels, encoding in frames:
            before = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            build(pixels, encoding)
            allocated += tracemalloc.get_traced_memory()[1] - before
        tracemalloc.stop()
        costs[name] = (milliseconds, allocated / 1e6)
    return costs


def print_run(run: Run) -> None:
    rate = f"{run.rate_hz:.0f} Hz" if run.rate_hz else "max"
    print(
        f"  {run.config:8} {rate:6} sent {run.sent:4} sets at {run.publish_rate_hz:5.1f} Hz, "
        f"publisher CPU {run.publisher_cpu_ms_per_set:5.1f} ms/set"
    )
    for kind, delivery in run.subscribers.items():
        print(
            f"      {kind:12} delivered {delivery.fraction:6.1%} ({delivery.rate_hz:5.1f} Hz; "
            f"images {delivery.images_fraction:6.1%}), "
            f"loss {1.0 - delivery.fraction:6.1%}, latency p50 {delivery.latency_p50_ms:6.1f} ms "
            f"p95 {delivery.latency_p95_ms:6.1f} ms, CPU {delivery.cpu_ms_per_set:5.1f} ms/set"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of the 15 Hz runs")
    parser.add_argument("--max-rate-seconds", type=float, default=4.0, help="back-to-back runs")
    parser.add_argument("--domain-id", type=int, default=1 + os.getpid() % 99)
    parser.add_argument("--json", type=Path, help="also write every figure to this file")
    parser.add_argument("--peer", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.peer:
        role, config, *rest = args.peer
        if role == "publisher":
            run_publisher(config, float(rest[0]), float(rest[1]))
        else:
            run_subscriber(config, rest[0])
        return

    megabytes = frame_set_bytes() / 1e6
    print(
        f"transport: {len(VIEWS)} views x (rgb8 + 32FC1) {SIZE}x{SIZE} = {megabytes:.2f} MB per "
        f"frame set; load average {os.getloadavg()[0]:.2f} at start, {os.cpu_count()} CPUs"
    )
    print("building the messages of one frame set (in process, no DDS):")
    costs = conversion_costs(repeats=20)
    for name, (milliseconds, allocated) in costs.items():
        print(f"  {name:30} {milliseconds:8.1f} ms  {allocated:7.1f} MB allocated")

    print("one publisher -> a reliable and a best-effort subscriber process (real DDS):")
    runs = []
    for rate_hz, seconds in ((RATE_HZ, args.seconds), (0.0, args.max_rate_seconds)):
        for config in CONFIGS:
            runs.append(measure(config, rate_hz, seconds, args.domain_id))
            print_run(runs[-1])
    left = sorted({path for run in runs for path in run.segments if os.path.exists(path)})
    print(f"shared-memory segments left in /dev/shm: {len(left)} {' '.join(left)}".rstrip())
    print(f"load average {os.getloadavg()[0]:.2f} at end")
    if args.json:
        figures = {"conversion": costs, "runs": [asdict(run) for run in runs]}
        args.json.write_text(json.dumps(figures, indent=2))

    value = runs[0].subscribers["best_effort"].fraction
    baseline = runs[1].subscribers["best_effort"].fraction
    if baseline == 0:
        print("the bare publisher delivered no complete frame set best-effort: ratio is inf")
    ratio = f"{value / baseline:.2f}" if baseline else "inf"
    print(
        f"RESULT transport_best_effort_delivered value={value:.4f} baseline={baseline:.4f} "
        f"ratio={ratio}"
    )


if __name__ == "__main__":
    main()
