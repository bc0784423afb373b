"""An agent's sensor subscriptions carry no event handlers (``qos.subscription_without_events``),
so a publisher whose messages can never reach them is found by asking the graph: a camera
driver publishing best effort, as robots' drivers commonly do (the sensor-data profile), to
the agent's reliable subscription, or a topic of another type. Real DDS, one process."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import rclpy
from nav_msgs.msg import Odometry
from nav_msgs.msg import Path as NavPath
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import CameraInfo, Image

from aerialdojo.nodes.qos import SENSOR_QOS, STATE_QOS
from aerialdojo.nodes.sensor_sync import ObservationSync

pytestmark = pytest.mark.ros


def _context() -> Iterator[Context]:
    context = Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


# Two participants, as an agent and a driver are: Fast DDS refuses a second type on a topic
# within one.
context = pytest.fixture(_context)
driver_context = pytest.fixture(_context)


def _sync_seeing_publishers(context: Context) -> ObservationSync:
    """The agent's sensor subscriptions, once every one of its topics has a publisher."""
    agent = Node("uav_agent", namespace="/uav", context=context)
    sync = ObservationSync(agent, ["front"], lambda: None)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(agent)
    deadline = time.monotonic() + 30.0
    while not sync.publishers_matched:
        assert time.monotonic() < deadline, "the driver's publishers were never seen"
        executor.spin_once(timeout_sec=0.1)
    return sync


def test_a_best_effort_camera_and_a_wrong_type_are_named(
    context: Context, driver_context: Context
) -> None:
    driver = Node("camera_driver", namespace="/uav", context=driver_context)
    driver.create_publisher(Image, "camera/front/image", qos_profile_sensor_data)
    driver.create_publisher(Image, "camera/front/depth", SENSOR_QOS)
    driver.create_publisher(CameraInfo, "camera/front/camera_info", SENSOR_QOS)
    driver.create_publisher(NavPath, "odom", STATE_QOS)
    sync = _sync_seeing_publishers(context)

    # The driver's node is announced apart from its endpoints, and can be seen after them.
    deadline = time.monotonic() + 30.0
    problems = sync.unreachable_publishers()
    while not all("camera_driver" in problem for problem in problems):
        assert time.monotonic() < deadline, problems
        time.sleep(0.1)
        problems = sync.unreachable_publishers()

    assert len(problems) == 2, problems
    image, odometry = problems
    assert image.startswith("/uav/camera/front/image: publisher /uav/camera_driver ")
    assert "reliab" in image.lower(), image
    assert odometry == (
        "/uav/odom: publisher /uav/camera_driver sends nav_msgs/msg/Path, "
        "this node takes nav_msgs/msg/Odometry"
    )
    # Named again when the agent has waited past its timeout for a set.
    assert image in sync.starvation(expected_ns=1, waited_s=20.0, timeout_s=10.0)


def test_publishers_that_reach_the_agent_give_no_problem(
    context: Context, driver_context: Context
) -> None:
    driver = Node("sim_bridge", namespace="/uav", context=driver_context)
    for kind, msg_type in (("image", Image), ("depth", Image), ("camera_info", CameraInfo)):
        driver.create_publisher(msg_type, f"camera/front/{kind}", SENSOR_QOS)
    driver.create_publisher(Odometry, "odom", STATE_QOS)
    sync = _sync_seeing_publishers(context)

    assert sync.unreachable_publishers() == []
    assert "no complete observation set" in sync.starvation(1, 20.0, 10.0)
