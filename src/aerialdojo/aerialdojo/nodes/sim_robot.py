"""The simulated robot (pure Python, no GPU): what the safety gate commands in tests and
rehearsals, speaking one robot's own topics (docs/robots.md, "Simulated robot").

``contract`` chooses the robot: ``mavros`` (MAVROS' topics over the PX4 commander model:
``mavros/setpoint_position/local`` in, ``mavros/local_position/odom``, ``mavros/state``,
``mavros/battery`` out, the autopilot's parameters as ROS parameters of ``mavros/param``
like MAVROS 2's param plugin), ``px4`` (px4_msgs over the uXRCE-DDS topic names,
``nodes.sim_px4``) or ``ugv`` (``cmd_vel`` in, ``odom`` out). Topic names are relative:
run one robot per namespace. With ``scene`` set it also publishes a camera rendered by the
embedded simulator at the robot's pose as a RealSense driver does (``camera/color/
image_raw`` rgb8, ``camera/depth/image_rect_raw`` 16UC1 millimetres, their
``camera_info``), stamped with its own clock. Faults are injected on ``sim_robot/inject``
(std_msgs/String: ``keepalive_loss``, ``-keepalive_loss`` to end it; ``robot.sim_vehicle.
SimFault``).
"""

from __future__ import annotations

import importlib
import math
import time
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np
from geometry_msgs.msg import PoseStamped, Twist
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import BatteryState, CameraInfo, Image
from std_msgs.msg import Header, String

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.common import announce_node, declare_node_parameters, parameters_of
from aerialdojo.nodes.conversions import camera_info_msg, pose_from_msg, pose_msg
from aerialdojo.nodes.images import array_to_image
from aerialdojo.nodes.qos import latched_qos
from aerialdojo.nodes.spinning import run_nodes, steady_clock
from aerialdojo.nodes.vehicles.base import COMMAND_QOS, DRIVER_QOS
from aerialdojo.robot.px4_model import (
    MAV_STATE_ACTIVE,
    MAV_STATE_CRITICAL,
    MAV_STATE_FLIGHT_TERMINATION,
    MAV_STATE_STANDBY,
    MODE_NAMES,
    NAV_OFFBOARD,
    NAV_TERMINATION,
    Px4Commander,
    autopilot_parameters,
    parameter_value,
)
from aerialdojo.robot.sim_autopilot import SimAutopilot, autopilot_time_us
from aerialdojo.robot.sim_vehicle import BodyConfig, SimBody, SimFault
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.tf_tree import MAP_FRAME

#: diff_drive_controller's default ``cmd_vel_timeout``: a base stops when commands stop
#: (control.ros.org, ros2_controllers ``diff_drive_controller`` user docs).
GROUND_COMMAND_TIMEOUT_S = 0.5
#: Injected faults are kept for a test client that matches late (latched, reliable).
INJECT_QOS = latched_qos(depth=10)
#: Where each contract's wiring lives (the px4 one imports px4_msgs, so only on use).
CONTRACTS = {
    "mavros": "aerialdojo.nodes.sim_robot:MavrosContract",
    "px4": "aerialdojo.nodes.sim_px4:Px4Contract",
    "ugv": "aerialdojo.nodes.sim_robot:GroundContract",
}


class Contract(Protocol):
    """One robot's wire protocol around the simulated body."""

    def tick(self, now: float) -> None:
        """Advance the robot to ``now`` (system time, s) and publish its state."""

    def extra_nodes(self) -> list[Node]:
        """Further nodes the robot runs (MAVROS' ``param`` node)."""


def odometry_msg(node: Node, position: tuple[float, float, float], yaw: float) -> Odometry:
    """nav_msgs/Odometry in the site frame, stamped with the driver's own clock."""
    msg = Odometry(header=Header(stamp=node.get_clock().now().to_msg(), frame_id=MAP_FRAME))
    msg.child_frame_id = "base_link"
    msg.pose.pose = pose_msg(Pose.from_position(position, yaw))
    return msg


class MavrosContract:
    """MAVROS in front of the PX4 commander model."""

    def __init__(self, node: Node, values: Mapping[str, Any], autopilot: SimAutopilot) -> None:
        self._node = node
        self._autopilot = autopilot
        self._operator_switch = bool(values["operator_offboard_switch"])
        self._switched = False
        node.create_subscription(
            PoseStamped, "mavros/setpoint_position/local", self._on_setpoint, DRIVER_QOS
        )
        self._odom_pub = node.create_publisher(Odometry, "mavros/local_position/odom", DRIVER_QOS)
        self._battery_pub = node.create_publisher(BatteryState, "mavros/battery", DRIVER_QOS)
        self._state_pub = None
        self._state_type: Any = None
        self._last_state: tuple[Any, ...] | None = None
        self._state_sent = 0.0
        try:
            from mavros_msgs.msg import State  # noqa: PLC0415 - where MAVROS' messages exist

            self._state_type = State
            self._state_pub = node.create_publisher(State, "mavros/state", latched_qos(1))
        except ImportError:
            node.get_logger().warning("mavros_msgs is not installed: mavros/state not published")
        # Its own name and namespace: a launcher's global remaps (__node:=sim_robot) would
        # otherwise rename it too.
        self._param_node = Node(
            "param",
            namespace=_join(node.get_namespace(), "mavros"),
            use_global_arguments=False,
        )
        for name in sorted(autopilot.commander.parameters):
            self._param_node.declare_parameter(
                name, parameter_value(autopilot.commander.parameters, name)
            )

    def extra_nodes(self) -> list[Node]:
        return [self._param_node]

    def _on_setpoint(self, msg: PoseStamped) -> None:
        if not self._autopilot.link_up():
            return
        now = time.time()
        # MAVLink setpoints are the proof of life; PX4 stamps them on arrival
        # (``mavlink/mavlink_receiver.cpp``).
        self._autopilot.commander.on_proof_of_life(autopilot_time_us(now), autopilot_time_us(now))
        pose = pose_from_msg(msg.pose)
        self._autopilot.on_setpoint(now, (pose.x, pose.y, pose.z), pose.yaw)

    def tick(self, now: float) -> None:
        commander = self._autopilot.commander
        if (
            self._operator_switch
            and not self._switched
            and commander.armed
            and commander.nav_state != NAV_OFFBOARD
            and commander._offboard_can_start(autopilot_time_us(now))
        ):
            self._switched = True  # the pilot flips the switch once; a takeover is final
            commander.switch_mode(NAV_OFFBOARD)
        self._autopilot.step(now)
        measured = self._autopilot.body.odometry()
        if measured is not None:
            position, yaw, _valid = measured
            self._odom_pub.publish(odometry_msg(self._node, position, yaw))
        battery = BatteryState(percentage=float(self._autopilot.body.battery))
        battery.header.stamp = self._node.get_clock().now().to_msg()
        self._battery_pub.publish(battery)
        self._publish_state(now)

    def _publish_state(self, now: float) -> None:
        if self._state_pub is None:
            return
        commander = self._autopilot.commander
        state = (
            commander.armed,
            MODE_NAMES.get(commander.nav_state, "UNKNOWN"),
            heartbeat_system_status(commander),
        )
        # MAVROS publishes State on every heartbeat (1 Hz) and the fake also on a change.
        if state == self._last_state and now - self._state_sent < 1.0:
            return
        self._last_state, self._state_sent = state, now
        msg = self._state_type(
            connected=True,
            armed=state[0],
            guided=True,
            mode=state[1],
            system_status=heartbeat_system_status(commander),
        )
        msg.header.stamp = self._node.get_clock().now().to_msg()
        self._state_pub.publish(msg)


def heartbeat_system_status(commander: Px4Commander) -> int:
    """The HEARTBEAT's MAV_STATE as PX4 sends it (``mavlink/streams/HEARTBEAT.hpp``): armed
    is ACTIVE (4), or CRITICAL (5) while a failsafe is active; Termination is
    FLIGHT_TERMINATION (7); disarmed is STANDBY (3). MAVROS passes it on as
    ``State.system_status``."""
    if commander.nav_state == NAV_TERMINATION:
        return MAV_STATE_FLIGHT_TERMINATION
    if not commander.armed:
        return MAV_STATE_STANDBY
    return MAV_STATE_CRITICAL if commander.failsafe else MAV_STATE_ACTIVE


class GroundContract:
    """A ground base: Twist on ``cmd_vel``, nav_msgs/Odometry on ``odom``."""

    def __init__(self, node: Node, values: Mapping[str, Any], autopilot: SimAutopilot) -> None:
        self._node = node
        self._body = autopilot.body
        self._last_command: float | None = None
        node.create_subscription(Twist, "cmd_vel", self._on_cmd_vel, COMMAND_QOS)
        self._odom_pub = node.create_publisher(Odometry, "odom", DRIVER_QOS)

    def extra_nodes(self) -> list[Node]:
        return []

    def _on_cmd_vel(self, msg: Twist) -> None:
        if SimFault.KEEPALIVE_LOSS in self._body.faults:
            return
        now = time.time()
        self._last_command = now
        self._body.command_velocity(now, float(msg.linear.x), float(msg.angular.z))

    def tick(self, now: float) -> None:
        if self._last_command is not None and now - self._last_command > GROUND_COMMAND_TIMEOUT_S:
            self._body.command_velocity(now, 0.0, 0.0)
            self._last_command = None
        self._body.step(now)
        measured = self._body.odometry()
        if measured is not None:
            self._odom_pub.publish(odometry_msg(self._node, measured[0], measured[1]))


def _join(namespace: str, name: str) -> str:
    return f"{namespace.rstrip('/')}/{name}" if namespace != "/" else f"/{name}"


class SimRobot(Node):
    """The simulated robot: its body, its autopilot (drones), its contract and camera."""

    def __init__(self) -> None:
        super().__init__("sim_robot")
        declare_node_parameters(self, "sim_robot")
        announce_node(self)
        values = parameters_of(self, "sim_robot")
        start = tuple(float(v) for v in values["start_position_m"])
        if len(start) != 3:
            raise ConfigError(f"sim_robot.start_position_m: {list(start)} is not [x, y, z]")
        body = SimBody(
            BodyConfig(
                time_constant=float(values["time_constant_s"]),
                max_speed=float(values["max_speed_m_s"]),
                latency=float(values["latency_s"]),
                odometry_noise=float(values["odometry_noise_m"]),
                battery_drain_per_s=float(values["battery_drain_per_s"]),
                seed=int(values["seed"]),
            ),
            position=(start[0], start[1], start[2]),
            yaw=math.radians(float(values["start_yaw_deg"])),
        )
        # The operator took off and flew to the start pose by hand: armed, Position mode.
        commander = Px4Commander(
            autopilot_parameters(
                list(values["autopilot_parameters"]), "sim_robot.autopilot_parameters"
            ),
            armed=True,
        )
        autopilot = SimAutopilot(commander=commander, body=body, home=body.position)
        module, _, name = CONTRACTS[str(values["contract"])].partition(":")
        self._contract: Contract = getattr(importlib.import_module(module), name)(
            self, values, autopilot
        )
        self._body = body
        self.create_subscription(String, "sim_robot/inject", self._on_inject, INJECT_QOS)
        self.create_timer(1.0 / float(values["rate_hz"]), self._on_tick, clock=steady_clock())
        self._camera = _Camera(self, values) if values["scene"] else None
        if self._camera is not None:
            self.create_timer(
                1.0 / float(values["camera_rate_hz"]), self._camera.publish, clock=steady_clock()
            )
        self.get_logger().info(
            f"simulated robot ({values['contract']}) at {body.position}, "
            f"{'camera on scene ' + str(values['scene']) if values['scene'] else 'no camera'}"
        )

    def extra_nodes(self) -> list[Node]:
        """Nodes to spin beside this one."""
        return self._contract.extra_nodes()

    @property
    def body(self) -> SimBody:
        """The simulated body (tests read its true pose)."""
        return self._body

    def _on_tick(self) -> None:
        self._contract.tick(time.time())

    def _on_inject(self, msg: String) -> None:
        text = msg.data.strip()
        remove = text.startswith("-")
        try:
            fault = SimFault(text.lstrip("+-"))
        except ValueError:
            self.get_logger().error(
                f"unknown fault {text!r}; known: {', '.join(f.value for f in SimFault)}"
            )
            return
        if remove:
            self._body.faults.discard(fault)
        else:
            self._body.faults.add(fault)
        self.get_logger().warning(f"fault {'ended' if remove else 'injected'}: {fault.value}")


class _Camera:
    """A RealSense-like camera rendered by the embedded simulator at the body's pose."""

    def __init__(self, node: SimRobot, values: Mapping[str, Any]) -> None:
        from aerialdojo.sim.embedded.scenes import load_scene  # noqa: PLC0415 - loads Embree

        self._node = node
        self._scene = load_scene(str(values["scene"]))
        self._spec = CameraSpec(
            name="front",
            width=int(values["image_width"]),
            height=int(values["image_height"]),
            fov_deg=float(values["fov_deg"]),
        )
        self._color = node.create_publisher(Image, "camera/color/image_raw", DRIVER_QOS)
        self._depth = node.create_publisher(Image, "camera/depth/image_rect_raw", DRIVER_QOS)
        self._color_info = node.create_publisher(CameraInfo, "camera/color/camera_info", DRIVER_QOS)
        self._depth_info = node.create_publisher(CameraInfo, "camera/depth/camera_info", DRIVER_QOS)

    def publish(self) -> None:
        from aerialdojo.sim.embedded.renderer import render_views  # noqa: PLC0415

        body = self._node.body
        pose = Pose.from_position(body.position, body.yaw)
        frame = render_views(self._scene, pose, [self._spec], with_ground_truth_ids=False)["front"]
        stamp = self._node.get_clock().now().to_msg()
        for image, info, frame_id, pixels, encoding in (
            (self._color, self._color_info, "camera_color_optical_frame", frame.rgb, "rgb8"),
            (
                self._depth,
                self._depth_info,
                "camera_depth_optical_frame",
                _millimetres(frame.depth),
                "16UC1",
            ),
        ):
            header = Header(stamp=stamp, frame_id=frame_id)
            image.publish(array_to_image(pixels, encoding, header))
            message = camera_info_msg(self._spec, frame_id)
            message.header.stamp = stamp
            info.publish(message)


def _millimetres(depth_m: np.ndarray) -> np.ndarray:
    """Depth as a RealSense driver sends it: uint16 millimetres, 0 where nothing returned."""
    finite = np.isfinite(depth_m) & (depth_m > 0.0)
    millimetres = np.where(finite, np.clip(depth_m * 1000.0, 0.0, 65535.0), 0.0)
    return millimetres.astype(np.uint16)


def main(args: list[str] | None = None) -> None:
    def make_nodes() -> list[Node]:
        robot = SimRobot()
        return [robot, *robot.extra_nodes()]

    # One thread: no callback here waits for another, and rclpy's multi-threaded executor
    # would run hot on the cores the safety gate needs (aerialdojo.nodes.spinning).
    run_nodes(make_nodes, threads=1, args=args)


if __name__ == "__main__":
    main()
