"""A listener on the episode events that reports run progress to a callback (CLI use)."""

from __future__ import annotations

from collections.abc import Callable

from aerialdojo_interfaces.msg import EpisodeEvent

from aerialdojo.nodes.background import BackgroundNode
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
        self._background = BackgroundNode("aerialdojo_cli_monitor")
        self._background.node.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS
        )
        self._background.start()

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
        self._background.close()
