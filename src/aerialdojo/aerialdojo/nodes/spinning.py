"""Running the robot-side nodes: several nodes in one process, and a realtime node on an
executor and a thread of its own; only calls Humble's rclpy has (robots run Humble)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Sequence

# Humble has ClockType in rclpy.clock only (Jazzy re-exports it there from rclpy.clock_type).
from rclpy.clock import Clock, ClockType  # type: ignore[attr-defined]
from rclpy.executors import (
    ExternalShutdownException,
    MultiThreadedExecutor,
    SingleThreadedExecutor,
)
from rclpy.node import Node

from aerialdojo.nodes.common import node_process


def steady_clock() -> Clock:
    """The monotonic clock timers of robot-side nodes run on: never simulation time, and
    never stepped by NTP."""
    return Clock(clock_type=ClockType.STEADY_TIME)


def run_nodes(
    make_nodes: Callable[[], Sequence[Node]], *, threads: int, args: list[str] | None
) -> None:
    """Build the nodes and spin them on one multi-threaded executor until shut down.

    Args:
        make_nodes: builds the nodes (after ``rclpy.init``).
        threads: the executor's threads (its callback groups decide what runs in parallel).
        args: command-line arguments for rclpy.
    """
    with node_process(args):
        nodes = make_nodes()
        executor = MultiThreadedExecutor(num_threads=threads)
        for node in nodes:
            executor.add_node(node)
        try:
            executor.spin()
        finally:
            executor.shutdown()
            for node in nodes:
                node.destroy_node()


def run_with_realtime_thread(
    make_nodes: Callable[[], tuple[Node, Sequence[Node]]],
    *,
    threads: int,
    args: list[str] | None,
) -> None:
    """Spin a realtime node on an executor and a thread of its own, the other nodes on a
    multi-threaded executor beside it.

    rclpy's multi-threaded executor hands every ready callback to one thread pool in
    arrival order: a flood of subscription callbacks queues a time-critical one behind
    them, whatever its callback group. A node alone on its own executor is served the
    moment its work is ready (the GIL and the OS scheduler permitting).

    Args:
        make_nodes: builds (the realtime node, the other nodes) after ``rclpy.init``.
        threads: the threads of the other nodes' executor.
        args: command-line arguments for rclpy.
    """
    with node_process(args):
        realtime, others = make_nodes()
        realtime_executor = SingleThreadedExecutor()
        realtime_executor.add_node(realtime)
        executor = MultiThreadedExecutor(num_threads=threads)
        for node in others:
            executor.add_node(node)

        def spin_realtime() -> None:
            with contextlib.suppress(ExternalShutdownException):
                realtime_executor.spin()

        spinner = threading.Thread(target=spin_realtime, name="realtime", daemon=True)
        spinner.start()
        try:
            executor.spin()
        finally:
            executor.shutdown()
            realtime_executor.shutdown()
            spinner.join(timeout=5.0)
            for node in (realtime, *others):
                node.destroy_node()
