"""Other runs' task managers heard in a domain while a node listens there: a sharded run's
worker listens in its graph's domain for the graph's life, and the run's coordinator in each
domain it holds for its workers, between their graphs too (``scale.run.HeldDomains``)."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from aerialdojo_interfaces.msg import NodeInfo
from rclpy.node import Node

from aerialdojo.nodes.background import BackgroundNode
from aerialdojo.nodes.qos import NODES_QOS
from aerialdojo.runtime import NODES_TOPIC, RunSighting, announces_task_manager


class OtherRuns:
    """Collects, on ``node``, the task managers of other runs that announce themselves in
    its domain; those of graphs under ``own_graphs`` on this host are the same sharded run's
    and do not count. Announcements are latched, so a task manager that started before the
    listening began is heard as well, as long as it lives."""

    def __init__(self, node: Node, own_graphs: Path) -> None:
        self._own_graphs = own_graphs
        self._host = socket.gethostname()
        self._lock = threading.Lock()
        self._heard: list[RunSighting] = []
        node.create_subscription(NodeInfo, NODES_TOPIC, self._on_node, NODES_QOS)

    def _on_node(self, info: NodeInfo) -> None:
        if not announces_task_manager(info):
            return
        if info.host == self._host and Path(info.run_dir).parent == self._own_graphs:
            return
        with self._lock:
            self._heard.append(RunSighting.of(info))

    @property
    def heard(self) -> list[RunSighting]:
        """The other runs' task managers heard so far."""
        with self._lock:
            return list(self._heard)


class DomainListener:
    """``OtherRuns`` of ``domain`` on a node of its own, spun in the background until
    ``close``."""

    def __init__(self, domain: int, own_graphs: Path) -> None:
        self._background = BackgroundNode("aerialdojo_domain_listener", domain_id=domain)
        self.other_runs = OtherRuns(self._background.node, own_graphs)
        self._background.start()

    def close(self) -> None:
        """Leave the domain."""
        self._background.close()
