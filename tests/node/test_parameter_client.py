"""The preflight's reading of MAVROS' parameters over real DDS, when a request goes
unanswered: Fast DDS sends a just-discovered client's response to nobody if the client's
response reader has not matched within 100 ms (rmw_fastrtps ``rmw_response.cpp``), so a
first request can go unanswered on a loaded machine. The reads are idempotent and are asked
again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
import rclpy
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.callback_groups import ReentrantCallbackGroup
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future

from aerialdojo.nodes.parameter_client import RESEND_S, read_mavros

pytestmark = pytest.mark.ros


class ParamsLosingFirstAnswers:
    """MAVROS' ``param`` node's two services (``mavros/mavros/param.py``) with one
    parameter, where the first request of each service is never answered: its coroutine
    callback waits on a future nobody completes, as a lost response leaves a client."""

    def __init__(self, namespace: str) -> None:
        self.context = Context()
        rclpy.init(context=self.context)
        # Not rclpy's own parameter services of a node named param: these two in their place.
        self.node = Node(
            "param", namespace=namespace, context=self.context, start_parameter_services=False
        )
        self.requests = {"list": 0, "get": 0}
        self._never = Future()
        # Reentrant: a waiting callback holds a mutually exclusive group, and every later
        # request would wait behind it.
        group = ReentrantCallbackGroup()
        self.node.create_service(
            ListParameters, "param/list_parameters", self._list, callback_group=group
        )
        self.node.create_service(
            GetParameters, "param/get_parameters", self._get, callback_group=group
        )
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self.executor.spin, daemon=True)
        self._thread.start()

    async def _list(self, _: Any, response: Any) -> Any:
        await self._first_unanswered("list")
        response.result.names = ["COM_OBL_RC_ACT"]
        return response

    async def _get(self, request: Any, response: Any) -> Any:
        await self._first_unanswered("get")
        response.values = [
            ParameterValue(type=ParameterType.PARAMETER_INTEGER, integer_value=5)
            for _ in request.names
        ]
        return response

    async def _first_unanswered(self, service: str) -> None:
        self.requests[service] += 1
        if self.requests[service] == 1:
            await self._never

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)
        self._thread.join(timeout=5.0)


@pytest.fixture
def mavros_params() -> Iterator[ParamsLosingFirstAnswers]:
    params = ParamsLosingFirstAnswers("/lossy_mavros")
    try:
        yield params
    finally:
        params.close()


def test_an_unanswered_parameter_request_is_asked_again(mavros_params) -> None:
    parameters, battery = read_mavros("/lossy_mavros", timeout_s=4 * RESEND_S)
    assert parameters == {"COM_OBL_RC_ACT": 5.0}
    assert mavros_params.requests == {"list": 2, "get": 2}
    assert battery is None  # this MAVROS publishes no battery
