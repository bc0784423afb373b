"""A listener on the episode events that reports run progress to a callback (CLI use)."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable

import rclpy
from aerialdojo_interfaces.msg import EpisodeEvent
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node

from aerialdojo.nodes.qos import EVENTS_QOS

_TERMINAL = {
    EpisodeEvent.STOPPED: "stopped",
    EpisodeEvent.COLLIDED: "collided",
    EpisodeEvent.BUDGET_EXHAUSTED: "budget exhausted",
    EpisodeEvent.INFRA_FAILURE: "infrastructure failure",
}


class ProgressMonitor:
    """Spins a private ROS context on a background thread and calls
    ``on_progress(done, total, line)`` whenever an episode ends."""

    def __init__(self, on_progress: Callable[[int, int, str], None]) -> None:
        self._on_progress = on_progress
        self._done = 0
        self._context = Context()
        rclpy.init(context=self._context)
        self._node = Node("aerialdojo_cli_monitor", context=self._context)
        self._node.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS
        )
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self._node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        with contextlib.suppress(ExternalShutdownException):
            self._executor.spin()

    def _on_event(self, event: EpisodeEvent) -> None:
        if event.kind not in _TERMINAL:
            return
        if event.kind != EpisodeEvent.INFRA_FAILURE:
            self._done += 1
        line = f"{event.episode_id}: {_TERMINAL[event.kind]} after {event.step} actions"
        if event.message and event.kind != EpisodeEvent.STOPPED:
            line += f" ({event.message})"
        self._on_progress(self._done, event.episode_count, line)

    def close(self) -> None:
        """Stop spinning and leave the ROS graph."""
        self._executor.shutdown(timeout_sec=1.0)
        self._node.destroy_node()
        rclpy.shutdown(context=self._context)
        self._thread.join(timeout=2.0)
