"""Running a robot-side node: the calls exist in Humble's rclpy too (``rclpy.init`` there is
not a context manager), because robots run Humble (docs/robots.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from aerialdojo.nodes.lifetime import exit_with_launcher


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
    exit_with_launcher()
    rclpy.init(args=args)
    nodes: Sequence[Node] = ()
    try:
        nodes = make_nodes()
        executor = MultiThreadedExecutor(num_threads=threads)
        for node in nodes:
            executor.add_node(node)
        try:
            executor.spin()
        finally:
            executor.shutdown()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for node in nodes:
            node.destroy_node()
        rclpy.try_shutdown()
