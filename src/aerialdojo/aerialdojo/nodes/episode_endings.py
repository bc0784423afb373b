"""A listener that reports every episode ending of a graph to a callback (a sharded run's
worker reports them to the run's progress display), and hears any other run's task manager
in the graph's domain while the graph lives."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from aerialdojo_interfaces.msg import EpisodeEvent

from aerialdojo.events import ENDING_NAMES
from aerialdojo.nodes.background import BackgroundNode
from aerialdojo.nodes.other_runs import OtherRuns
from aerialdojo.nodes.qos import EVENTS_QOS
from aerialdojo.runtime import another_runs

_ENDINGS = {int(kind): name for kind, name in ENDING_NAMES.items()}


class EpisodeEndings:
    """Calls ``on_ending(episode_id, ending, scored)`` from a background thread whenever an
    attempt of the run ``run_id`` ends in the graph of this process's ``ROS_DOMAIN_ID``;
    ``scored`` is False for an infrastructure failure. Meanwhile ``other_runs`` collects the
    task managers of runs other than the one whose graphs are under ``own_graphs``."""

    def __init__(
        self, on_ending: Callable[[str, str, bool], None], run_id: str, own_graphs: Path
    ) -> None:
        self._on_ending = on_ending
        self._run_id = run_id
        self._background = BackgroundNode("aerialdojo_shard_listener")
        self._background.node.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", self._on_event, EVENTS_QOS
        )
        self.other_runs = OtherRuns(self._background.node, own_graphs)
        self._background.start()

    def _on_event(self, event: EpisodeEvent) -> None:
        ending = _ENDINGS.get(event.kind)
        if ending is not None and not another_runs(event.run_id, self._run_id):
            self._on_ending(event.episode_id, ending, event.kind != EpisodeEvent.INFRA_FAILURE)

    def close(self) -> None:
        """Leave the graph."""
        self._background.close()
