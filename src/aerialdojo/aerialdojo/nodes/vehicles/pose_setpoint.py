"""The pose-setpoint adapter: the MAVROS shape (REP-147's ``command_pose``).

Setpoints go out as geometry_msgs/PoseStamped in the site's ENU frame, faster than 2 Hz
(MAVROS converts to NED and forwards SET_POSITION_TARGET_LOCAL_NED; PX4 treats the stream
itself as the offboard keep-alive: mavros ``setpoint_position.cpp``, PX4 ``offboard.md``);
the feedback is nav_msgs/Odometry. Every topic name is a parameter, so the same adapter
drives any driver of that shape by remapping.

The autopilot's mode and arming come as ``mavros_msgs/State``, which no PyPI wheel carries:
the type is imported only where ``state_topic`` is set, and a missing package is a
configuration error naming the parameter, never a silently unwatched mode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from geometry_msgs.msg import PoseStamped
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import BatteryState

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.conversions import pose_msg
from aerialdojo.nodes.vehicles.base import (
    COMMAND_QOS,
    DRIVER_QOS,
    VehicleSink,
    battery_fraction,
    subscribe_odometry,
)
from aerialdojo.robot.px4_model import (
    MAV_STATE_CRITICAL,
    MAV_STATE_EMERGENCY,
    MAV_STATE_FLIGHT_TERMINATION,
)
from aerialdojo.robot.safety import GateOutput, VehicleReport
from aerialdojo.tf_tree import MAP_FRAME

#: The MAV_STATE values an autopilot's HEARTBEAT reports during its own failsafe (PX4:
#: ``mavlink/streams/HEARTBEAT.hpp``; ArduPilot's ``send_heartbeat`` alike); MAVROS passes
#: them on as ``State.system_status``.
FAILSAFE_STATES = {
    MAV_STATE_CRITICAL: "CRITICAL",
    MAV_STATE_EMERGENCY: "EMERGENCY",
    MAV_STATE_FLIGHT_TERMINATION: "FLIGHT_TERMINATION",
}
#: MAVROS' own odometry topic (``local_position.cpp``), used when ``odom_topic`` is empty.
MAVROS_ODOMETRY = "/mavros/local_position/odom"


def mavros_state_type() -> Any:
    """``mavros_msgs.msg.State``, imported on first use.

    Raises:
        ConfigError: mavros_msgs is not installed.
    """
    try:
        from mavros_msgs.msg import State  # noqa: PLC0415 - only where MAVROS is installed
    except ImportError as error:
        raise ConfigError(
            "safety_gate.state_topic: watching the autopilot's mode needs mavros_msgs, which "
            "is not installed here (it comes with MAVROS, not from PyPI); source the MAVROS "
            "workspace, or set state_topic to '' to run without mode and takeover watching "
            '(docs/robots.md, "Vehicles")'
        ) from error
    return State


class PoseSetpointAdapter:
    """Streams PoseStamped setpoints; reads Odometry, and State where a topic is set."""

    def __init__(
        self, node: Node, values: Mapping[str, Any], sink: VehicleSink, group: CallbackGroup
    ) -> None:
        self._node = node
        self._sink = sink
        self._controlled = frozenset(values["controlled_modes"])
        self._battery: float | None = None
        state_topic = str(values["state_topic"])
        self.reports_vehicle = bool(state_topic)
        state_type = mavros_state_type() if state_topic else None
        self._publisher = node.create_publisher(
            PoseStamped, str(values["setpoint_topic"]), COMMAND_QOS
        )
        subscribe_odometry(node, str(values["odom_topic"]) or MAVROS_ODOMETRY, sink, group)
        if state_type is not None:
            node.create_subscription(
                state_type, state_topic, self._on_state, DRIVER_QOS, callback_group=group
            )
        if values["battery_topic"]:
            node.create_subscription(
                BatteryState,
                str(values["battery_topic"]),
                self._on_battery,
                DRIVER_QOS,
                callback_group=group,
            )

    def _on_battery(self, msg: BatteryState) -> None:
        self._battery = battery_fraction(msg)

    def _on_state(self, msg: Any) -> None:
        connected = bool(msg.connected)
        status = int(msg.system_status)
        self._sink.vehicle(
            VehicleReport(
                stamp=self._sink.clock(),
                controllable=connected and msg.mode in self._controlled,
                mode=str(msg.mode) if connected else "(autopilot not connected)",
                failsafe=f"HEARTBEAT system_status {FAILSAFE_STATES[status]}"
                if status in FAILSAFE_STATES
                else "",
                battery_fraction=self._battery,
            )
        )

    def send(self, output: GateOutput) -> None:
        """A setpoint is its own keep-alive here: MAVROS has no separate one."""
        setpoint = output.setpoint
        if setpoint is None:
            return
        msg = PoseStamped()
        msg.header.stamp = self._node.get_clock().now().to_msg()
        msg.header.frame_id = MAP_FRAME
        msg.pose = pose_msg(Pose.from_position(setpoint.position, setpoint.yaw))
        self._publisher.publish(msg)

    def engage(self) -> None:
        """Nothing to ask: through MAVROS the pilot switches to OFFBOARD (RC switch or
        ground station) once the stream runs; the gate sees it in State."""

    def close(self) -> None:
        """Nothing held."""
