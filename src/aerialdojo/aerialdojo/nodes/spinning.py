"""Running the robot-side nodes: several nodes in one process, and a realtime node on an
executor and a thread of its own; only calls Humble's rclpy has (robots run Humble)."""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# Humble has ClockType in rclpy.clock only (Jazzy re-exports it there from rclpy.clock_type).
from rclpy.clock import Clock, ClockType  # type: ignore[attr-defined]
from rclpy.executors import (
    ExternalShutdownException,
    MultiThreadedExecutor,
    SingleThreadedExecutor,
)
from rclpy.node import Node

from aerialdojo.nodes.common import node_process
from aerialdojo.scheduling import BOOSTED_NICE, boost_threads, make_thread_realtime


def steady_clock() -> Clock:
    """The monotonic clock timers of robot-side nodes run on: never simulation time, and
    never stepped by NTP."""
    return Clock(clock_type=ClockType.STEADY_TIME)


def run_nodes(
    make_nodes: Callable[[], Sequence[Node]], *, threads: int, args: list[str] | None
) -> None:
    """Build the nodes and spin them on one executor until shut down.

    Args:
        make_nodes: builds the nodes (after ``rclpy.init``).
        threads: the executor's threads (its callback groups decide what runs in parallel);
            1 spins a single-threaded executor, for nodes whose callbacks never wait on
            each other (see ``run_with_realtime_thread`` for why that matters).
        args: command-line arguments for rclpy.
    """
    with node_process(args):
        nodes = make_nodes()
        executor = (
            SingleThreadedExecutor() if threads == 1 else MultiThreadedExecutor(num_threads=threads)
        )
        for node in nodes:
            executor.add_node(node)
        try:
            executor.spin()
        finally:
            executor.shutdown()
            for node in nodes:
                node.destroy_node()


@dataclass(frozen=True)
class RealtimeNodes:
    """What ``run_with_realtime_thread`` spins.

    Attributes:
        realtime: the node whose executor gets a thread of its own.
        others: the nodes on the executor beside it.
        fifo_priority: the ``SCHED_FIFO`` priority of the realtime thread (1-99), the
            process's other threads at nice ``BOOSTED_NICE``; 0 leaves every thread's
            scheduling as the process was started.
    """

    realtime: Node
    others: Sequence[Node]
    fifo_priority: int


def run_with_realtime_thread(
    make_nodes: Callable[[], RealtimeNodes], *, args: list[str] | None
) -> None:
    """Spin a realtime node on an executor and a thread of its own, the other nodes on a
    single-threaded executor beside it: two threads, each asleep in ``rcl_wait`` until
    its own work is ready.

    Not rclpy's multi-threaded executor, for either. It hands every ready callback to
    one thread pool in arrival order, so a flood queues a time-critical callback behind
    it whatever its callback group; and up to Jazzy it hands a callback that waits in the
    pool to the pool again and again without waiting (ros2/rclpy#1452, fixed upstream by
    #1547, not in the rclpy 7.1.6 wheels installed here): its spin thread then runs hot,
    holding a core and the GIL the realtime thread needs, and queues duplicates in front
    of real work.

    On a loaded machine the realtime thread still waits to be scheduled, and then for the
    GIL; ``fifo_priority`` puts it in the real-time class and boosts the threads it waits
    on (``aerialdojo.scheduling``). Where the system refuses, a warning says so and the
    process runs on at normal priority.

    Args:
        make_nodes: builds the nodes after ``rclpy.init``.
        args: command-line arguments for rclpy.
    """
    with node_process(args):
        nodes = make_nodes()
        realtime, others = nodes.realtime, nodes.others
        logger = realtime.get_logger()
        # A full collection stops every thread, the realtime one too, for as long as it
        # walks the heap: 55-167 ms measured in the safety gate, most of it the modules
        # and nodes built at start, which live as long as the process. Frozen, they are
        # never walked again; what the callbacks allocate is still collected.
        gc.collect()
        gc.freeze()
        if nodes.fifo_priority:
            # The middleware's receive threads exist now (rclpy.init, the nodes); the
            # executor threads are this one and the realtime thread it starts below.
            refused = boost_threads(BOOSTED_NICE)
            if refused:
                logger.warning(f"{refused}; the I/O and middleware threads run at normal priority")
        realtime_executor = SingleThreadedExecutor()
        realtime_executor.add_node(realtime)
        executor = SingleThreadedExecutor()
        for node in others:
            executor.add_node(node)

        def spin_realtime() -> None:
            if nodes.fifo_priority:
                refused = make_thread_realtime(nodes.fifo_priority)
                if refused:
                    logger.warning(
                        f"{refused}; the realtime thread runs at normal priority, and a loaded "
                        "machine delays it"
                    )
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
