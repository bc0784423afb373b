"""The robot backend's ROS half (``nodes.robot_link``) over real DDS, against publishers that
behave as the drivers and the gate do: best-effort odometry and camera frames (a RealSense's
rgb8 or a webcam's bgr8, 16UC1 millimetre depth with 0 for no return), the gate's latched
status, a contact sensor and the operator's collision mark. The gate itself answers in the
end-to-end tests (tests/e2e/test_robot.py)."""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import numpy as np
import rclpy
from aerialdojo_interfaces.msg import SafetyStatus
from nav_msgs.msg import Odometry
from rclpy.context import Context
from rclpy.executors import MultiThreadedExecutor
from rclpy.node import Node
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Bool, Empty, Header

from aerialdojo.image_codec import image_to_array
from aerialdojo.nodes.images import array_to_image
from aerialdojo.nodes.qos import latched_qos
from aerialdojo.nodes.robot_link import RosVehicleLink, RosVehicleTransport
from aerialdojo.nodes.vehicles.base import DRIVER_QOS
from aerialdojo.robot.link import CameraTopics, LinkSettings, SafetyState
from aerialdojo.robot.safety import FaultClass, GateState


def _until(condition: Callable[[], bool], timeout_s: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _quiet_after_clearing(link: RosVehicleLink, quiet_s: float = 0.3) -> bool:
    """Clear the link's collisions; whether none was reported again within ``quiet_s``."""
    link.clear_collisions()
    time.sleep(quiet_s)
    return link.collision() == ""


def test_the_link_reads_the_robot_and_relays_its_frames_as_agents_read_them() -> None:
    context = Context()
    rclpy.init(context=context)
    bridge = Node("robot_link_bridge", context=context)
    robot = Node("robot_link_drivers", context=context)
    executor = MultiThreadedExecutor(num_threads=3, context=context)
    executor.add_node(bridge)
    executor.add_node(robot)
    spinner = threading.Thread(target=executor.spin, daemon=True)
    spinner.start()
    try:
        settings = LinkSettings(
            odometry_topic="/mavros/local_position/odom",
            cameras=(
                CameraTopics(
                    view="front", image="/cam/color", depth="/cam/depth", camera_info="/cam/info"
                ),
            ),
            contact_topic="bumper",
            proximity_view="front",
            proximity_m=0.4,
        )
        link = RosVehicleTransport(bridge).vehicle_link("uav", settings)
        changes: list[SafetyState] = []
        link.on_safety_change(changes.append)
        odometry = robot.create_publisher(Odometry, "/mavros/local_position/odom", DRIVER_QOS)
        status = robot.create_publisher(SafetyStatus, "/uav/safety/status", latched_qos(1))
        color = robot.create_publisher(Image, "/cam/color", DRIVER_QOS)
        depth = robot.create_publisher(Image, "/cam/depth", DRIVER_QOS)
        info = robot.create_publisher(CameraInfo, "/cam/info", DRIVER_QOS)
        contact = robot.create_publisher(Bool, "/uav/bumper", DRIVER_QOS)
        mark = robot.create_publisher(Empty, "/uav/operator/collision", 10)

        # Odometry: pose and speed in the site frame.
        message = Odometry()
        message.pose.pose.position.x, message.pose.pose.position.z = 2.0, 1.5
        message.pose.pose.orientation.z = math.sin(math.pi / 8)
        message.pose.pose.orientation.w = math.cos(math.pi / 8)
        message.twist.twist.linear.x, message.twist.twist.linear.y = 0.3, 0.4
        assert _until(lambda: (odometry.publish(message), link.vehicle())[1] is not None)
        vehicle = link.vehicle()
        assert vehicle is not None
        assert (vehicle.pose.x, vehicle.pose.z) == (2.0, 1.5)
        assert abs(vehicle.pose.yaw - math.pi / 4) < 1e-9
        assert abs(vehicle.speed_m_s - 0.5) < 1e-9

        # The gate's status, each change once to the listener.
        fault = SafetyStatus(
            state=SafetyStatus.STATE_FAULT,
            fault_class=SafetyStatus.FAULT_INTERVENTION,
            fault="rc_takeover",
            detail="mode POSCTL",
        )
        status.publish(SafetyStatus(state=SafetyStatus.STATE_READY))
        assert _until(lambda: link.safety() is not None)
        status.publish(fault)
        status.publish(fault)  # the periodic republication of the same fault
        assert _until(lambda: len(changes) == 2)
        time.sleep(0.3)
        assert [(c.state, c.fault_class, c.fault) for c in changes] == [
            (GateState.READY, FaultClass.NONE, ""),
            (GateState.FAULT, FaultClass.INTERVENTION, "rc_takeover"),
        ]

        # Frames: missing until each topic has one after the moment asked about.
        since = link.now()
        assert link.frames_missing(since) == ["/cam/color", "/cam/depth", "/cam/info"]
        bgr = np.zeros((4, 6, 3), dtype=np.uint8)
        bgr[..., 0] = 200  # blue in bgr8
        millimetres = np.full((4, 6), 2500, dtype=np.uint16)
        millimetres[0, 0] = 0  # no return
        header = Header(frame_id="camera_color_optical_frame")
        color.publish(array_to_image(bgr, "bgr8", header))
        depth.publish(array_to_image(millimetres, "16UC1", header))
        info.publish(CameraInfo(header=header, width=6, height=4))
        assert _until(lambda: link.frames_missing(since) == [])
        (view,) = link.relayed_views().values()
        rgb = image_to_array(view.image)
        assert view.image.encoding == "rgb8" and rgb[0, 0].tolist() == [0, 0, 200]
        metres = image_to_array(view.depth)
        assert view.depth.encoding == "32FC1" and metres[1, 1] == np.float32(2.5)
        assert math.isnan(metres[0, 0])
        assert link.collision() == ""

        # Collisions: a return nearer than the proximity threshold, contact, the operator.
        millimetres[2, 3] = 350
        depth.publish(array_to_image(millimetres, "16UC1", header))
        assert _until(lambda: link.collision() != "")
        assert link.collision() == "depth proximity: 0.35 m < 0.4 m in view front"
        link.clear_collisions()
        contact.publish(Bool(data=False))
        time.sleep(0.3)
        assert link.collision() == ""
        assert _until(lambda: (contact.publish(Bool(data=True)), link.collision())[1] != "")
        assert link.collision() == "contact on /uav/bumper"
        # Contact messages published while waiting may still arrive: release the bumper and
        # clear until none comes for a while, so the next collision is the operator's mark.
        contact.publish(Bool(data=False))
        assert _until(lambda: _quiet_after_clearing(link))
        assert _until(lambda: (mark.publish(Empty()), link.collision())[1] != "")
        assert link.collision() == "the operator marked a collision"

        # The gate's services: none here, so a goal is refused, naming it.
        refused = link.hold()
        assert refused == "uav/safety/hold is not served (is the safety gate running?)"
    finally:
        executor.shutdown()
        bridge.destroy_node()
        robot.destroy_node()
        rclpy.shutdown(context=context)
