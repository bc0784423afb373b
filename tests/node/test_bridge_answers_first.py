"""An embedded simulator's action is answered before its observation is rendered
(``sim_bridge``; docs/performance.md, change 37): the set rendered after the answer carries
the answer's stamp, and a render that fails after the answer reaches the task manager as the
simulator's fault on ``/sim/faults`` (which ends the attempt as an infrastructure failure),
never as an agent left waiting for a set that does not come."""

from __future__ import annotations

import threading

import pytest
import rclpy
from aerialdojo_interfaces.msg import BackendFault
from aerialdojo_interfaces.srv import SimExecute, SimReset
from rclpy.executors import SingleThreadedExecutor
from rostest import RosClient, first_mini_reset
from sensor_msgs.msg import Image

from aerialdojo.errors import SimulatorFaultError
from aerialdojo.nodes.common import time_ns
from aerialdojo.nodes.qos import FAULTS_QOS, SENSOR_QOS
from aerialdojo.nodes.sim_bridge import SimBridge
from aerialdojo.sim.backend import Observation

pytestmark = pytest.mark.ros


def _fail_render(agent: str, with_ground_truth_ids: bool = False) -> Observation:
    """A renderer that fails as ``SimulatorBackend.observe`` documents it may."""
    raise SimulatorFaultError(f"the render of {agent} failed")


def test_the_set_after_an_early_answer_has_its_stamp_and_a_failed_render_is_a_fault() -> None:
    rclpy.init(args=["--ros-args", "-p", "image_width:=32", "-p", "image_height:=32"])
    bridge = SimBridge()
    assert bridge._backend.next_observation_time_s() is not None  # the embedded simulator
    executor = SingleThreadedExecutor()
    executor.add_node(bridge)
    spinning = threading.Thread(target=executor.spin, daemon=True)
    spinning.start()
    client = RosClient()
    try:
        images = client.collect(Image, "/uav/camera/front/image", SENSOR_QOS)
        faults = client.collect(BackendFault, "/sim/faults", FAULTS_QOS)
        request = first_mini_reset()
        reset = client.call(SimReset, "/sim/reset", request)
        assert reset.success, reset.message
        step = SimExecute.Request(agent="uav", action="MoveUp", magnitude=1.0)
        answer = client.call(SimExecute, "/sim/execute", step)
        assert answer.success, answer.message
        stamp = time_ns(answer.stamp)
        assert stamp > time_ns(reset.stamp)
        assert client.spin_until(
            lambda: any(time_ns(image.header.stamp) == stamp for image in images), 30
        ), f"no front image of the answer's stamp; got {[time_ns(i.header.stamp) for i in images]}"

        bridge._backend.observe = _fail_render  # type: ignore[method-assign]
        answer = client.call(SimExecute, "/sim/execute", step)
        assert answer.success, answer.message  # the outcome was known; the render failed after
        assert client.spin_until(lambda: bool(faults), 30), "the failed render was not reported"
        assert faults[0].episode_id == request.episode_id and faults[0].agent == "uav"
        assert not faults[0].intervention
        assert "the render of uav failed" in faults[0].reason
        assert all(time_ns(image.header.stamp) != time_ns(answer.stamp) for image in images)
    finally:
        client.close()
        executor.shutdown()
        bridge.destroy_node()
        rclpy.shutdown()
        spinning.join(timeout=5)
