"""Reading an autopilot's parameters and battery through MAVROS, for ``aerialdojo
preflight``: MAVROS 2 serves the FCU's parameters as ROS parameters of its ``param`` node
(``mavros/mavros/param.py``: ``param/list_parameters``, ``param/get_parameters``), and the
battery as sensor_msgs/BatteryState on ``battery``."""

from __future__ import annotations

import math
import time
from typing import Any

import rclpy
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.utilities import try_shutdown
from sensor_msgs.msg import BatteryState

from aerialdojo.errors import ConfigError
from aerialdojo.nodes.vehicles.base import DRIVER_QOS

_NUMBERS = {
    ParameterType.PARAMETER_INTEGER: "integer_value",
    ParameterType.PARAMETER_DOUBLE: "double_value",
    ParameterType.PARAMETER_BOOL: "bool_value",
}


def read_mavros(namespace: str, timeout_s: float) -> tuple[dict[str, float], float | None]:
    """The FCU's numeric parameters and the battery fraction (None where none came within
    the timeout) from the MAVROS under ``namespace`` (e.g. ``/mavros``).

    Raises:
        ConfigError: MAVROS' parameter services did not answer.
    """
    context = Context()
    rclpy.init(context=context)
    node = Node("aerialdojo_preflight", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    base = namespace.rstrip("/")
    try:
        batteries: list[BatteryState] = []
        node.create_subscription(BatteryState, f"{base}/battery", batteries.append, DRIVER_QOS)
        names = _call(
            node, executor, ListParameters, f"{base}/param/list_parameters",
            ListParameters.Request(), timeout_s=timeout_s,
        ).result.names  # fmt: skip
        values = _call(
            node, executor, GetParameters, f"{base}/param/get_parameters",
            GetParameters.Request(names=list(names)), timeout_s=timeout_s,
        ).values  # fmt: skip
        parameters = {
            name: float(getattr(value, _NUMBERS[value.type]))
            for name, value in zip(names, values, strict=True)
            if value.type in _NUMBERS
        }
        deadline = time.monotonic() + min(timeout_s, 3.0)
        while not batteries and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.1)
        fraction = float(batteries[-1].percentage) if batteries else math.nan
        return parameters, fraction if math.isfinite(fraction) else None
    finally:
        executor.shutdown()
        node.destroy_node()
        try_shutdown(context=context)


def _call(
    node: Node,
    executor: SingleThreadedExecutor,
    srv_type: type,
    name: str,
    request: object,
    *,
    timeout_s: float,
) -> Any:
    client: Any = node.create_client(srv_type, name)
    if not client.wait_for_service(timeout_sec=timeout_s):
        raise ConfigError(
            f"--mavros: {name} did not appear within {timeout_s:g} s; is MAVROS running with "
            "its param plugin, in this ROS domain?"
        )
    # A service that has only just been discovered can drop its first answer: Fast DDS's
    # server waits 100 ms for the client's response reader to match and otherwise sends the
    # response to nobody ("client will not receive response", rmw_fastrtps
    # rmw_response.cpp, ros2/rmw_fastrtps#390 and #467), which a loaded machine exceeds.
    # The reads are idempotent, so an unanswered request is asked again.
    deadline = time.monotonic() + timeout_s
    while True:
        future = client.call_async(request)
        wait_s = min(RESEND_S, max(0.0, deadline - time.monotonic()))
        executor.spin_until_future_complete(future, timeout_sec=wait_s)
        if future.done() and future.result() is not None:
            return future.result()
        client.remove_pending_request(future)
        if time.monotonic() >= deadline:
            raise ConfigError(f"--mavros: {name} did not answer within {timeout_s:g} s")


#: How long one request to MAVROS' parameter services waits before it is asked again.
RESEND_S = 2.0
