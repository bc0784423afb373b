"""A simulated robot and its safety gate as real processes, and a client in the agent's
namespace that drives the gate and watches the robot's own wire (tests/node/test_robot_*)."""

from __future__ import annotations

import importlib.util
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from aerialdojo_interfaces.msg import SafetyStatus
from aerialdojo_interfaces.srv import VehicleGoal
from rostest import RosClient, running
from std_msgs.msg import Empty, String
from std_srvs.srv import Trigger

from aerialdojo.graph import NodeSpec
from aerialdojo.nodes.qos import latched_qos
from aerialdojo.nodes.sim_robot import INJECT_QOS
from aerialdojo.params import validate_parameters
from aerialdojo.runner import NodeProcess

#: The rehearsal site's suite gives the gate its geofence; the robot starts on its first pad.
SUITE = "alley_rehearsal"
START = (-13.09, 2.89, 1.38)
NAMESPACE = "uav"


def needs(module: str) -> None:
    """Skip where the robot test messages are not built (make robot-msgs)."""
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not built here: run make robot-msgs (tools/build_robot_msgs.sh)")


def px4_topic(direction: str, name: str, message: type) -> str:
    """A PX4 topic under /fmu with the version suffix of the px4_msgs built here (the
    literal names are checked in test_robot_vehicles.py)."""
    version = int(getattr(message, "MESSAGE_VERSION", 0))
    return f"/fmu/{direction}/{name}" + (f"_v{version}" if version else "")


def robot_specs(
    contract: str, gate: Mapping[str, Any], robot: Mapping[str, Any] | None = None
) -> list[NodeSpec]:
    """The simulated robot (root namespace, as a robot's driver) and its gate (in /uav)."""
    robot_values = {"contract": contract, "start_position_m": list(START), **(robot or {})}
    # A shared 2-core machine stalls processes for half a second at times; the gate's
    # odometry watchdog gets room for that here (a dropout still trips it).
    gate_values = {"suite": SUITE, "odometry_timeout_s": 1.5, **gate}
    return [
        NodeSpec(
            executable="sim_robot",
            name="sim_robot",
            namespace="",
            parameters=validate_parameters("sim_robot", robot_values, "test"),
        ),
        NodeSpec(
            executable="safety_gate",
            name="safety_gate",
            namespace=NAMESPACE,
            parameters=validate_parameters("safety_gate", gate_values, "test"),
        ),
    ]


class GateClient(RosClient):
    """The backend's and the operator's side of the gate, plus eyes on the robot's wire."""

    def __init__(self, processes: list[NodeProcess]) -> None:
        super().__init__("robot_test", namespace=NAMESPACE)
        self.processes = {process.spec.name: process for process in processes}
        self.status: list[SafetyStatus] = self.collect(
            SafetyStatus, "safety/status", latched_qos(1)
        )
        self._inject = self.node.create_publisher(String, "/sim_robot/inject", INJECT_QOS)
        self._deadman = self.node.create_publisher(Empty, "safety/deadman", 10)
        self._heartbeat: Any = None
        self._clients: dict[str, Any] = {}

    def start_heartbeat(self) -> None:
        """The operator console's dead-man heartbeat at 10 Hz while the client spins."""
        self._heartbeat = self.node.create_timer(0.1, lambda: self._deadman.publish(Empty()))

    def stop_heartbeat(self) -> None:
        """The operator lets go."""
        self.node.destroy_timer(self._heartbeat)
        self._heartbeat = None

    def call(self, srv_type: type, name: str, request: Any, timeout_s: float = 60.0) -> Any:
        """A service call through one client per service (a client per call floods
        discovery when a test polls)."""
        client = self._clients.get(name)
        if client is None:
            client = self._clients[name] = self.node.create_client(srv_type, name)
        assert client.wait_for_service(timeout_sec=timeout_s), f"{name} never appeared"
        future = client.call_async(request)
        self.executor.spin_until_future_complete(future, timeout_sec=timeout_s)
        assert future.done(), f"{name} did not answer within {timeout_s} s"
        return future.result()

    def trigger(self, name: str, timeout_s: float = 30.0) -> Trigger.Response:
        return self.call(Trigger, f"safety/{name}", Trigger.Request(), timeout_s)

    def goal(
        self, position: tuple[float, float, float], yaw: float = 0.0, speed: float = 0.0
    ) -> VehicleGoal.Response:
        request = VehicleGoal.Request(max_speed_m_s=speed)
        request.target.header.frame_id = "map"
        p = request.target.pose.position
        p.x, p.y, p.z = position
        request.target.pose.orientation.z = math.sin(yaw / 2.0)
        request.target.pose.orientation.w = math.cos(yaw / 2.0)
        return self.call(VehicleGoal, "safety/goal", request)

    def inject(self, fault: str) -> None:
        self._inject.publish(String(data=fault))

    def spin_for(self, seconds: float) -> None:
        self.spin_until(lambda: False, seconds)

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float, what: str) -> None:
        if self.spin_until(predicate, timeout_s):
            return
        last = self.status[-1] if self.status else None
        said = f"state {last.state}, fault {last.fault!r}: {last.detail}" if last else "nothing"
        raise AssertionError(f"{what} within {timeout_s} s; the gate's last status: {said}")

    def engage(self, timeout_s: float = 60.0) -> None:
        """Engage once the gate has what it needs (odometry, a heartbeat) and say READY."""
        deadline = time.monotonic() + timeout_s
        while True:
            answer = self.trigger("engage")
            if answer.success:
                break
            assert time.monotonic() < deadline, f"engage refused: {answer.message}"
            self.spin_for(0.3)
        self.wait_for(lambda: self.state() == SafetyStatus.STATE_READY, 10.0, "READY")

    def state(self) -> int | None:
        return self.status[-1].state if self.status else None

    def fault(self) -> tuple[str, int] | None:
        if not self.status or self.status[-1].state != SafetyStatus.STATE_FAULT:
            return None
        return self.status[-1].fault, self.status[-1].fault_class


@contextmanager
def robot_graph(tmp_path: Path, specs: list[NodeSpec]) -> Iterator[GateClient]:
    """The processes of ``specs`` and a client; both stopped at the end."""
    with running(specs, tmp_path) as processes:
        client = GateClient(processes)
        try:
            yield client
        finally:
            client.close()
