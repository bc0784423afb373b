"""Helpers for tests that talk to real node processes over DDS."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import rclpy
from aerialdojo_interfaces.msg import EpisodeEvent, TaskSpec
from aerialdojo_interfaces.srv import SimReset, Step
from geometry_msgs.msg import Pose
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node

from aerialdojo.graph import EVALUATOR_NODE, NodeSpec, node_specs
from aerialdojo.nodes.qos import EVENTS_QOS, TASK_QOS
from aerialdojo.params import validate_parameters
from aerialdojo.runner import NodeProcess, start_graph, stop_graph
from aerialdojo.runtime import DOMAIN_CHECKED_ENV
from aerialdojo.tasks.suite import load_suite, resolve_suite


def specs_for(nodes: dict[str, dict[str, Any]]) -> list[NodeSpec]:
    """Node specs of a graph made of ``nodes`` (name -> parameters)."""
    config = {name: validate_parameters(name, values, "test") for name, values in nodes.items()}
    config.setdefault("sim_bridge", {})
    config.setdefault("task_manager", {})
    config.setdefault("evaluator", {})
    return [spec for spec in node_specs(config) if spec.name in nodes]


def first_mini_reset() -> SimReset.Request:
    """A bridge's reset into the first episode of ``aerialdojo_mini``, the UAV at its start."""
    suite = load_suite(resolve_suite("aerialdojo_mini"))
    episode = suite.episode(suite.select()[0])
    start = Pose()
    start.position.x, start.position.y, start.position.z = (
        episode.start.x,
        episode.start.y,
        episode.start.z,
    )
    return SimReset.Request(
        episode_id=episode.episode_id, scene=episode.scene, agents=["uav"], poses=[start]
    )


@contextmanager
def running(
    specs: list[NodeSpec], run_dir: Path, env: Mapping[str, str] | None = None
) -> Iterator[list[NodeProcess]]:
    """Node processes (in ``env``, default this process's environment) that are stopped, and
    their logs closed, at the end.

    By default a task manager does not look for other runs in the domain first (5 s): the
    test session's domain is its own (tests/conftest.py), as an ``aerialdojo eval`` run's is.
    """
    if env is None:
        env = {**os.environ, DOMAIN_CHECKED_ENV: os.environ.get("ROS_DOMAIN_ID", "")}
    processes = start_graph(specs, run_dir, env)
    try:
        yield processes
    finally:
        stop_graph(processes, grace_s=5.0)


class RosClient:
    """A node in the test process, on a private context, for calling services and
    collecting messages."""

    def __init__(self, name: str = "test_client", namespace: str = "") -> None:
        """Args:
        name: node name.
        namespace: e.g. ``uav`` for a client that stands in for the UAV agent
            (``stand_in_for_agent``).
        """
        self.context = Context()
        rclpy.init(context=self.context)
        self.node = Node(name, namespace=namespace, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._stand_ins: list[Node] = []

    def call(self, srv_type: type, name: str, request: Any, timeout_s: float = 60.0) -> Any:
        client = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=timeout_s), f"{name} never appeared"
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout_s)
        assert future.done(), f"{name} did not answer within {timeout_s} s"
        return future.result()

    def collect(self, msg_type: type, topic: str, qos: Any) -> list[Any]:
        """A list that fills with the messages of ``topic`` while the client spins."""
        received: list[Any] = []
        self.node.create_subscription(msg_type, topic, received.append, qos)
        return received

    def stand_in_for_agent(self) -> list[TaskSpec]:
        """Be the agent of this client's namespace: the task manager starts a run once the
        namespace subscribes to the task topic and has a client of the step service. Returns
        the list the tasks fill while the client spins."""
        self.node.create_client(Step, "/aerialdojo/step")
        return self.collect(TaskSpec, "/aerialdojo/task", TASK_QOS)

    def stand_in_for_evaluator(self) -> list[EpisodeEvent]:
        """Be the run's evaluator: a node of its name, spun with this client, subscribed to
        the episode events (a task manager starts a run only once the evaluator listens).
        Returns the list the events fill while the client spins."""
        evaluator = Node(EVALUATOR_NODE, context=self.context)
        self._stand_ins.append(evaluator)
        self.executor.add_node(evaluator)
        received: list[EpisodeEvent] = []
        evaluator.create_subscription(
            EpisodeEvent, "/aerialdojo/episode_events", received.append, EVENTS_QOS
        )
        return received

    def spin_until(self, predicate: Any, timeout_s: float) -> bool:
        import time

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if predicate():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return predicate()

    def close(self) -> None:
        self.executor.shutdown()
        for node in (*self._stand_ins, self.node):
            node.destroy_node()
        rclpy.shutdown(context=self.context)
