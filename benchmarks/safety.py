"""The safety gate's stop latency: from an e-stop request to the hold on the wire and the end
of the keep-alive, while the gate's other callbacks are busy.

A simulated robot (MAVROS shape) and the safety gate run as processes, as on a robot. Each
trial engages the gate, lets the keep-alive stream, then calls ``safety/estop`` and watches
the setpoint topic the autopilot reads: the e-stop's hold is the last message there, so the
latency is the arrival of the last setpoint after the request (the wire then stays silent
for ``--quiet-s``), measured in the receiving process by its middleware's reception stamp:
where an autopilot's driver would have the hold. The same stop as this script's Python
callback sees it (later by that callback's own scheduling, which is no part of the gate) is
printed beside it. A flood process keeps the gate's other threads busy meanwhile: goal
requests back to back (two in flight) and the operator's heartbeat at 100 Hz, on top of the
robot's odometry at ``--odometry-hz``.

The baseline is the keep-alive period (the gate's ``rate_hz``): a stop slower than one
period would let another keep-alive out. Aim (issue 27): p99 under 20 ms.

Usage: tools/run.sh python benchmarks/safety.py [--trials 200] [--rate-hz 20]
The last line is ``RESULT safety_stop_latency_ms value=<p99> baseline=<period> ratio=<p99/period>``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import rclpy
from aerialdojo_interfaces.srv import VehicleGoal
from geometry_msgs.msg import PoseStamped
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from std_msgs.msg import Empty
from std_srvs.srv import Trigger

# Measure this checkout's nodes, not whatever version the install/ overlay last built.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))
from aerialdojo.graph import NodeSpec
from aerialdojo.params import validate_parameters
from aerialdojo.runner import start_graph, stop_graph

HERE = Path(__file__).resolve().parent
SETPOINTS = "/mavros/setpoint_position/local"
START = (-13.09, 2.89, 1.38)


def flood(namespace: str, stop_after_s: float) -> None:
    """Keep the gate's requests and inputs groups busy until ``stop_after_s``."""
    rclpy.init()
    try:
        _flood(namespace, stop_after_s)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise  # a spin cut short by the shutdown is how this process ends; else a bug
    finally:
        rclpy.try_shutdown()


def _flood(namespace: str, stop_after_s: float) -> None:
    node = Node("safety_flood", namespace=namespace)
    deadman = node.create_publisher(Empty, "safety/deadman", 10)
    node.create_timer(0.01, lambda: deadman.publish(Empty()))
    client = node.create_client(VehicleGoal, "safety/goal")
    client.wait_for_service(timeout_sec=60.0)
    request = VehicleGoal.Request()
    request.target.header.frame_id = "map"
    request.target.pose.position.x, request.target.pose.position.y = START[0], START[1]
    request.target.pose.position.z = START[2]
    request.target.pose.orientation.w = 1.0
    deadline = time.monotonic() + stop_after_s
    in_flight: list = []
    while time.monotonic() < deadline:
        # Goals back to back, two in flight: the requests group always has work, without
        # this process spinning a core of its own.
        in_flight = [future for future in in_flight if not future.done()]
        while len(in_flight) < 2:
            in_flight.append(client.call_async(request))
        rclpy.spin_once(node, timeout_sec=0.005)


class Probe:
    """The operator's e-stop and the autopilot's view of the setpoint topic."""

    def __init__(self, namespace: str) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node("safety_probe", namespace=namespace, context=self.context)
        #: (monotonic time in the callback, system time in the callback, system time the
        #: middleware received it, the header's stamp) per setpoint.
        self.arrivals: list[tuple[float, float, float, float]] = []
        self._lock = threading.Lock()
        self.node.create_subscription(PoseStamped, SETPOINTS, self._on_setpoint, 100)
        self.clients = {
            name: self.node.create_client(Trigger, f"safety/{name}")
            for name in ("estop", "clear", "engage")
        }
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._spinner = threading.Thread(target=self.executor.spin, daemon=True)
        self._spinner.start()

    def _on_setpoint(self, msg: PoseStamped, info: dict[str, int]) -> None:
        now, now_system = time.monotonic(), time.time()
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        with self._lock:
            self.arrivals.append((now, now_system, info["received_timestamp"] * 1e-9, stamp))

    def call(self, name: str) -> tuple[float, float, Trigger.Response]:
        client = self.clients[name]
        if not client.wait_for_service(timeout_sec=60.0):
            raise SystemExit(f"safety/{name} never appeared")
        sent, sent_system = time.monotonic(), time.time()
        future = client.call_async(Trigger.Request())
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        if not done.wait(30.0):
            raise SystemExit(f"safety/{name} did not answer")
        return sent, sent_system, future.result()

    def last_arrival(self) -> tuple[float, float, float, float] | None:
        with self._lock:
            return self.arrivals[-1] if self.arrivals else None

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered) + 0.5) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=200)
    parser.add_argument("--rate-hz", type=float, default=20.0, help="the gate's keep-alive rate")
    parser.add_argument("--odometry-hz", type=float, default=100.0)
    parser.add_argument("--quiet-s", type=float, default=0.3, help="silence that ends a stop")
    parser.add_argument(
        "--no-flood", action="store_true", help="without the flood process (the gate idle)"
    )
    args = parser.parse_args()
    os.environ.setdefault("ROS_DOMAIN_ID", "97")
    period_ms = 1000.0 / args.rate_hz
    specs = [
        NodeSpec(
            executable="sim_robot", name="sim_robot", namespace="",
            parameters=validate_parameters("sim_robot", {
                "contract": "mavros", "start_position_m": list(START),
                "rate_hz": args.odometry_hz, "odometry_noise_m": 0.0}, "benchmark"),
        ),
        NodeSpec(
            executable="safety_gate", name="safety_gate", namespace="uav",
            parameters=validate_parameters("safety_gate", {
                "suite": "alley_rehearsal", "state_topic": "", "require_deadman": False,
                "rate_hz": args.rate_hz, "odometry_timeout_s": 2.0}, "benchmark"),
        ),
    ]  # fmt: skip
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory() as run_dir:
        processes = start_graph(specs, Path(run_dir))
        flooder = None if args.no_flood else subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(HERE)!r}); import "
             f"safety; safety.flood('uav', {args.trials * 1.5 + 60.0})"],
        )  # fmt: skip
        probe = Probe("uav")
        latencies: list[float] = []
        in_callback: list[float] = []
        in_gate: list[float] = []
        try:
            for trial in range(args.trials):
                while not probe.call("engage")[2].success:
                    time.sleep(0.2)
                time.sleep(0.25 + (trial % 5) * 0.011)  # stream, at varied phases
                sent, sent_system, answer = probe.call("estop")
                assert answer.success, answer.message
                while True:  # until the wire has been quiet for quiet_s
                    last = probe.last_arrival()
                    if time.monotonic() - max(last[0] if last else sent, sent) >= args.quiet_s:
                        break
                    time.sleep(0.01)
                # Zero where nothing came after the request (a hold sent by then, or none).
                _, called, received, stamp = last or (sent, sent_system, sent_system, sent_system)
                latencies.append(max(0.0, received - sent_system) * 1000.0)
                in_callback.append(max(0.0, called - sent_system) * 1000.0)
                # The same stop by the gate's own stamp on the hold: its handling alone,
                # without the delivery to this process.
                in_gate.append(max(0.0, stamp - sent_system) * 1000.0)
                probe.call("clear")
        finally:
            probe.close()
            if flooder is not None:
                flooder.terminate()
                flooder.wait(10)
            stop_graph(processes, grace_s=5.0)
    load_end = os.getloadavg()
    p50, p99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
    print(
        f"{len(latencies)} e-stops at {args.rate_hz:g} Hz keep-alive, "
        + (
            "the gate otherwise idle but for "
            if args.no_flood
            else "goal requests, heartbeats and "
        )
        + f"{args.odometry_hz:g} Hz odometry: "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms, max {max(latencies):.1f} ms to the hold's "
        f"reception (request to the hold's stamp in the gate: p50 "
        f"{percentile(in_gate, 0.5):.1f} ms, p99 {percentile(in_gate, 0.99):.1f} ms; to this "
        f"script's callback: p50 {percentile(in_callback, 0.5):.1f} ms, p99 "
        f"{percentile(in_callback, 0.99):.1f} ms); load average "
        f"{load_start[0]:.2f} at start, {load_end[0]:.2f} at end, {os.cpu_count()} CPUs"
    )
    print(
        f"RESULT safety_stop_latency_ms value={p99:.2f} baseline={period_ms:.2f} "
        f"ratio={p99 / period_ms:.3f}"
    )


if __name__ == "__main__":
    main()
