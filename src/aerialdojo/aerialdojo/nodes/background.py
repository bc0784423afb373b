"""A node that listens inside another program (the CLI's progress monitor and live view):
its own ROS context, spun on a daemon thread, left cleanly by ``close``."""

from __future__ import annotations

import contextlib
import threading

import rclpy
from rclpy.context import Context
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node


class BackgroundNode:
    """Create the subscriptions and timers on ``node``, then ``start`` spinning."""

    def __init__(self, name: str, domain_id: int | None = None) -> None:
        """A node ``name`` in ``domain_id`` (default: this process's ``ROS_DOMAIN_ID``)."""
        self._context = Context()
        rclpy.init(context=self._context, domain_id=domain_id)
        self.node = Node(name, context=self._context)
        self._executor = SingleThreadedExecutor(context=self._context)
        self._executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)

    def start(self) -> None:
        """Spin on the background thread."""
        self._thread.start()

    def _spin(self) -> None:
        with contextlib.suppress(ExternalShutdownException):
            self._executor.spin()

    def close(self) -> None:
        """Stop spinning and leave the ROS graph."""
        self._executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()
        rclpy.shutdown(context=self._context)
        self._thread.join(timeout=2.0)
