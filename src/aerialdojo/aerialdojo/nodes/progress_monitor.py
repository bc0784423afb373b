"""A listener on the episode events that reports run progress to a callback (CLI use)."""

from __future__ import annotations

from collections.abc import Callable

from aerialdojo_interfaces.msg import EpisodeEvent

from aerialdojo.eval_progress import EpisodeProgress
from aerialdojo.events import ENDING_NAMES
from aerialdojo.nodes.background import BackgroundNode
from aerialdojo.nodes.qos import EVENTS_QOS
from aerialdojo.runtime import another_runs

_TERMINAL = {int(kind): name for kind, name in ENDING_NAMES.items()}

#: The listener's node name, which the task manager waits for (``PROGRESS_LISTENER_ENV``).
PROGRESS_MONITOR_NODE = "aerialdojo_cli_monitor"


class ProgressMonitor:
    """Spins a private ROS context on a background thread and calls ``on_progress`` when an
    episode of the run ``run_id`` starts, takes a step or ends (another run's events in the
    domain are not this run's progress)."""

    def __init__(self, on_progress: Callable[[EpisodeProgress], None], run_id: str) -> None:
        self._on_progress = on_progress
        self._run_id = run_id
        self._background = BackgroundNode(PROGRESS_MONITOR_NODE)
        self._background.node.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS
        )
        self._background.start()

    def _on_event(self, event: EpisodeEvent) -> None:
        if event.kind not in (EpisodeEvent.STARTED, EpisodeEvent.STEP, *_TERMINAL):
            return
        if another_runs(event.run_id, self._run_id):
            return
        ended = _TERMINAL.get(event.kind, "")
        if event.message and event.kind not in (EpisodeEvent.STOPPED, EpisodeEvent.STEP):
            ended += f" ({event.message})"
        action = ""
        if event.kind == EpisodeEvent.STEP:
            agent = f"{event.agent} " if event.agent and event.agent != "uav" else ""
            magnitude = f"{event.magnitude:g}" if event.magnitude else ""
            action = " ".join(filter(None, (event.action, magnitude, event.argument)))
            action = f"{agent}{action}"
        self._on_progress(
            EpisodeProgress(
                episode_id=event.episode_id,
                index=event.episode_index,
                count=event.episode_count,
                step=event.step,
                action=action,
                ended=ended,
                scored=event.kind != EpisodeEvent.INFRA_FAILURE,
            )
        )

    def close(self) -> None:
        """Stop spinning and leave the ROS graph."""
        self._background.close()
