"""Forwards every topic of the run's graph to the live Foxglove server (``aerialdojo eval
--live``): a listener on a private ROS context, spun on a background thread like the CLI's
progress monitor, that subscribes to each topic as it appears and hands on its raw CDR."""

from __future__ import annotations

import functools
import importlib
import time
from typing import Any

from rclpy.qos import DurabilityPolicy, QoSProfile

from aerialdojo.graph import UNWATCHED_TOPICS
from aerialdojo.live import LiveServer
from aerialdojo.nodes.background import BackgroundNode
from aerialdojo.nodes.qos import latched_qos, sensor_qos

#: The live view's node name, which ``task_manager.await_viewers`` names to wait for it.
LIVE_VIEW_NODE = "aerialdojo_live_view"
#: How often the graph is searched for new topics, seconds.
_DISCOVERY_PERIOD_S = 0.5


def _message_class(msgtype: str) -> Any | None:
    package, _, name = msgtype.partition("/msg/")
    try:
        return getattr(importlib.import_module(f"{package}.msg"), name)
    except (ImportError, AttributeError):
        return None


class LiveView:
    """Subscribes to the graph's topics and forwards them to ``server`` until ``close``."""

    def __init__(self, server: LiveServer) -> None:
        self.server = server
        self._subscribed: set[str] = set()
        self._background = BackgroundNode(LIVE_VIEW_NODE)
        self._node = self._background.node
        self._node.create_timer(_DISCOVERY_PERIOD_S, self._discover)
        self._background.start()

    def _qos(self, topic: str, writers: list[Any]) -> QoSProfile:
        # Camera streams are watched, never waited for (best effort); what a late viewer
        # must still see (task, events, tf_static, candidates) is latched by its writers.
        if "/camera/" in topic:
            return sensor_qos(reliable=False)
        if all(w.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for w in writers):
            return latched_qos(depth=100)
        return sensor_qos(reliable=False, depth=10)

    def _discover(self) -> None:
        for topic, types in self._node.get_topic_names_and_types():
            if topic in self._subscribed or topic in UNWATCHED_TOPICS or len(types) != 1:
                continue
            message_class = _message_class(types[0])
            if message_class is None or not self.server.knows(types[0]):
                continue
            # A topic known only from its readers waits for a writer, whose QoS decides.
            writers = self._node.get_publishers_info_by_topic(topic)
            if not writers:
                continue
            self._subscribed.add(topic)
            self.server.advertise(topic, types[0])
            self._node.create_subscription(
                message_class,
                topic,
                functools.partial(self._forward, topic),
                self._qos(topic, writers),
                raw=True,
            )

    def _forward(self, topic: str, cdr: bytes) -> None:
        self.server.forward(topic, cdr, time.time_ns())

    @property
    def topics(self) -> set[str]:
        """The topics forwarded so far."""
        return set(self._subscribed)

    def close(self) -> None:
        """Leave the ROS graph and stop the server."""
        self._background.close()
        self.server.close()
