"""One run per ROS domain: before a run's nodes start (``aerialdojo eval``, the launch file)
and before its task manager serves anything, look for another run's task manager in the domain.

Nodes only meet within a domain. Two runs in one answer each other's requests (a service
request reaches every server of its name, and the first answer wins) and record each other's
episodes, so both runs' scores are wrong and nothing says why. Every task manager announces
its run on ``/aerialdojo/nodes`` (``common.announce_node``); the ROS graph shows one that has
not announced yet.
"""

from __future__ import annotations

import os
import socket
import time

import rclpy
from aerialdojo_interfaces.msg import NodeInfo
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from aerialdojo.errors import ConfigError, DomainTakenError
from aerialdojo.nodes.qos import NODES_QOS
from aerialdojo.runtime import (
    NODES_TOPIC,
    TASK_MANAGER_NODE,
    RunSighting,
    announces_task_manager,
    domain_taken_message,
)

#: How long a starting run listens for another run's task manager. Discovery on one host is
#: bimodal: about 0.15 s, or, when a participant's first announcements were missed, at Fast
#: DDS's next one (every 3 s by default): 0.13-3.08 s measured at load 4-6 on two cores
#: (benchmarks/domain_guard.py). The window covers one announcement period and a margin.
DISCOVERY_WINDOW_S = 5.0
#: Overrides the window, in seconds (0: do not look): for a host whose domains only its own
#: runs use, such as a test session's private domain.
WINDOW_ENV = "AERIALDOJO_DOMAIN_WINDOW_S"


def discovery_window_s() -> float:
    """The window a starting run listens in: ``WINDOW_ENV`` if set, else
    ``DISCOVERY_WINDOW_S``.

    Raises:
        ConfigError: ``WINDOW_ENV`` is not a number of seconds, 0 or more.
    """
    text = os.environ.get(WINDOW_ENV, "")
    if not text:
        return DISCOVERY_WINDOW_S
    try:
        window = float(text)
    except ValueError:
        window = -1.0
    if not window >= 0:
        raise ConfigError(f"environment: {WINDOW_ENV}={text!r} is not a number of seconds >= 0")
    return window


def other_runs(node: Node, window_s: float = DISCOVERY_WINDOW_S) -> list[RunSighting]:
    """The task managers of other runs in ``node``'s domain, listening for up to ``window_s``.

    Returns as soon as every task manager in the graph has announced its run; otherwise
    after ``window_s``, with an empty sighting for each one that did not. ``node`` must not
    be spinning elsewhere (it is spun here, briefly); if it is itself a task manager, it
    does not count.
    """
    own = (socket.gethostname(), os.getpid())
    heard: dict[tuple[str, int], RunSighting] = {}

    def on_info(info: NodeInfo) -> None:
        if announces_task_manager(info) and (info.host, info.pid) != own:
            heard[(info.host, info.pid)] = RunSighting.of(info)

    def in_graph() -> int:
        names = [name for name, _ in node.get_node_names_and_namespaces()]
        mine = 1 if node.get_name() == TASK_MANAGER_NODE else 0
        return max(0, names.count(TASK_MANAGER_NODE) - mine)

    subscription = node.create_subscription(NodeInfo, NODES_TOPIC, on_info, NODES_QOS)
    executor = SingleThreadedExecutor(context=node.context)
    executor.add_node(node)
    deadline = time.monotonic() + window_s
    try:
        while time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
            if heard and len(heard) >= in_graph():
                break
    finally:
        executor.remove_node(node)
        executor.shutdown()
        node.destroy_subscription(subscription)
    unannounced = max(0, in_graph() - len(heard))
    return [*heard.values(), *[RunSighting()] * unannounced]


def refuse_if_domain_taken(node: Node, window_s: float | None = None) -> None:
    """Raise when another run's task manager is in ``node``'s domain, listening for
    ``window_s`` (default ``discovery_window_s()``).

    Raises:
        DomainTakenError: naming the other run(s) and the ways out.
    """
    window_s = discovery_window_s() if window_s is None else window_s
    if window_s == 0:
        return
    others = other_runs(node, window_s)
    if others:
        raise DomainTakenError(domain_taken_message(os.environ.get("ROS_DOMAIN_ID", ""), others))


def check_domain_free(window_s: float | None = None) -> None:
    """``refuse_if_domain_taken`` from a launcher, before any node of its run starts: a
    listener of its own joins the domain of ``ROS_DOMAIN_ID`` and leaves it.

    Raises:
        DomainTakenError: naming the other run(s) and the ways out.
    """
    window_s = discovery_window_s() if window_s is None else window_s
    if window_s == 0:
        return  # not looking: no listener need join the domain
    context = Context()
    rclpy.init(context=context)
    try:
        node = Node("aerialdojo_domain_guard", context=context)
        try:
            refuse_if_domain_taken(node, window_s)
        finally:
            node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
