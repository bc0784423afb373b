"""The PX4 native adapter: px4_msgs over uXRCE-DDS (docs/robots.md, "Vehicles").

- Keep-alive: ``OffboardControlMode`` (position control) with every setpoint, at the gate's
  rate (PX4 wants more than 2 Hz, engages offboard after more than a second of it, and
  runs ``COM_OBL_RC_ACT`` ``COM_OF_LOSS_T`` after it stops: ``offboardCheck.cpp``,
  ``failsafe.cpp``). Its ``timestamp`` is the host's system time in microseconds: PX4
  judges liveness by the sender's stamp, shifted by uXRCE-DDS's time sync, so a stamp on
  simulation time would read as stale (or, ahead, mask a loss).
- Setpoints: ``TrajectorySetpoint`` in NED (position, the ramp's velocity as feed-forward,
  heading from north), converted from the site's ENU; no implicit conversion exists. Sent
  only while PX4 reports OFFBOARD: "PX4 has no means of filtering ROS 2 messages from
  internal messages", so a setpoint published in another mode reaches its controllers too
  (``docs/en/flight_modes/offboard.md``, ROS 2 warning).
- Offboard and arming: ``VehicleCommand`` DO_SET_MODE (custom main mode 6) then
  COMPONENT_ARM_DISARM, only after the operator's consent (``safety/engage``) and
  ``px4_offboard_warmup_s`` of keep-alive; every ``VehicleCommandAck`` other than ACCEPTED
  is a fault (``vehicle_refused``).
- State: ``vehicle_status`` (nav_state 14 = OFFBOARD and armed is the gate's mode; leaving
  it is a takeover, or the autopilot's own failsafe when its flag is set),
  ``manual_control_setpoint.sticks_moving`` (the pilot's hands on the sticks is a takeover
  even where COM_RC_OVERRIDE lets PX4 ignore them), ``battery_status.remaining``;
  ``vehicle_odometry`` (NED) feeds the gate and is republished as ``vehicle/odom`` in ENU.
- Topic names carry the message versions of the px4_msgs this runs with
  (``robot.px4_topics``), under ``px4_namespace``.

px4_msgs is imported here only: the rest of aerialdojo runs without it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from nav_msgs.msg import Odometry
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.nodes.conversions import pose_msg
from aerialdojo.nodes.qos import keep_last
from aerialdojo.nodes.vehicles.base import DRIVER_QOS, VehicleSink
from aerialdojo.robot.frames import (
    enu_to_ned,
    enu_yaw_to_ned,
    ned_to_enu,
    ned_yaw_to_enu,
    yaw_of_quaternion_wxyz,
)
from aerialdojo.robot.px4_model import (
    MODE_FLAG_CUSTOM_MODE_ENABLED,
    MODE_NAMES,
    NAV_OFFBOARD,
    PX4_CUSTOM_MAIN_MODE_OFFBOARD,
    VEHICLE_CMD_COMPONENT_ARM_DISARM,
    VEHICLE_CMD_DO_SET_MODE,
)
from aerialdojo.robot.px4_topics import message_version, topic_name
from aerialdojo.robot.ramp import Setpoint
from aerialdojo.robot.safety import GateOutput, OdometrySample, VehicleReport
from aerialdojo.tf_tree import MAP_FRAME

#: Commands to PX4: reliable (its best-effort readers still match) and queued, so that the
#: mode request and the arming that follows it both go out.
VEHICLE_COMMAND_QOS = keep_last(10, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)
#: How long PX4 may take to acknowledge a command before it counts as unanswered.
ACK_TIMEOUT_S = 2.0
#: The MAVLink system id the gate sends as (a companion's; QGroundControl uses 255).
SOURCE_SYSTEM = 191
ARMING_STATE_ARMED = 2
#: Where the gate republishes PX4's odometry in ENU (docs/robots.md, "Contract"): not
#: ``odom``, which in the agent's namespace is the bridge's odometry for the agent.
ODOMETRY_TOPIC = "vehicle/odom"
#: The odometry the gate republishes in ENU: reliable (a best-effort reader matches too).
ODOM_QOS = VEHICLE_COMMAND_QOS
_COMMAND_NAMES = {VEHICLE_CMD_DO_SET_MODE: "DO_SET_MODE(OFFBOARD)",
                  VEHICLE_CMD_COMPONENT_ARM_DISARM: "COMPONENT_ARM_DISARM(arm)"}  # fmt: skip


def px4_messages() -> Any:
    """``px4_msgs.msg``, imported on first use.

    Raises:
        ConfigError: px4_msgs is not installed.
    """
    try:
        import px4_msgs.msg as messages  # noqa: PLC0415 - only where PX4's messages exist
    except ImportError as error:
        raise ConfigError(
            "safety_gate.vehicle: px4 needs px4_msgs, which no registry serves: build the "
            "PX4/px4_msgs branch matching the firmware in the robot's workspace and source it "
            '(docs/robots.md, "Vehicles"; tools/build_robot_msgs.sh builds the subset the tests '
            "use)"
        ) from error
    return messages


@dataclass
class _Pending:
    command: int
    sent: float


class Px4Adapter:
    """OffboardControlMode + TrajectorySetpoint out, vehicle status and odometry in."""

    reports_vehicle = True

    def __init__(
        self, node: Node, values: Mapping[str, Any], sink: VehicleSink, group: CallbackGroup
    ) -> None:
        msgs = px4_messages()
        self._msgs = msgs
        self._node = node
        self._sink = sink
        self._system_id = int(values["px4_system_id"])
        self._warmup_s = float(values["px4_offboard_warmup_s"])
        namespace = str(values["px4_namespace"])

        def name(direction: str, topic: str, message: type) -> str:
            return topic_name(namespace, direction, topic, message_version(message))

        self._mode_pub = node.create_publisher(
            msgs.OffboardControlMode,
            name("in", "offboard_control_mode", msgs.OffboardControlMode),
            VEHICLE_COMMAND_QOS,
        )
        self._setpoint_pub = node.create_publisher(
            msgs.TrajectorySetpoint,
            name("in", "trajectory_setpoint", msgs.TrajectorySetpoint),
            VEHICLE_COMMAND_QOS,
        )
        self._command_pub = node.create_publisher(
            msgs.VehicleCommand,
            name("in", "vehicle_command", msgs.VehicleCommand),
            VEHICLE_COMMAND_QOS,
        )
        self._odom_pub = node.create_publisher(Odometry, ODOMETRY_TOPIC, ODOM_QOS)
        for topic, message, handler in (
            ("vehicle_status", msgs.VehicleStatus, self._on_status),
            ("vehicle_odometry", msgs.VehicleOdometry, self._on_odometry),
            ("battery_status", msgs.BatteryStatus, self._on_battery),
            ("vehicle_command_ack", msgs.VehicleCommandAck, self._on_ack),
            ("manual_control_setpoint", msgs.ManualControlSetpoint, self._on_sticks),
        ):
            node.create_subscription(
                message, name("out", topic, message), handler, DRIVER_QOS, callback_group=group
            )
        self._battery: float | None = None
        self._sticks = False
        self._in_offboard = False
        self._engaged_at: float | None = None
        self._requested = False
        self._pending: list[_Pending] = []

    # -- out ------------------------------------------------------------------------------

    def send(self, output: GateOutput) -> None:
        """The setpoint in NED, preceded by the keep-alive when streaming."""
        setpoint = output.setpoint
        if setpoint is None:
            return
        stamp = time.time_ns() // 1000  # system time, like the agent's time sync reference
        if output.keepalive:
            self._mode_pub.publish(self._msgs.OffboardControlMode(timestamp=stamp, position=True))
            self._after_keepalive()
        else:
            self._engaged_at = None  # the stream stopped: a new consent starts over
        if self._in_offboard:
            self._setpoint_pub.publish(self._setpoint_msg(stamp, setpoint))

    def _setpoint_msg(self, stamp: int, setpoint: Setpoint) -> Any:
        msg = self._msgs.TrajectorySetpoint(timestamp=stamp)
        msg.position = [float(v) for v in enu_to_ned(setpoint.position)]
        msg.velocity = [float(v) for v in enu_to_ned(setpoint.velocity)]
        msg.acceleration = [math.nan] * 3
        msg.jerk = [math.nan] * 3
        msg.yaw = float(enu_yaw_to_ned(setpoint.yaw))
        msg.yawspeed = float(-setpoint.yaw_rate)  # about NED's down axis
        return msg

    def engage(self) -> None:
        """Ask for OFFBOARD and arming once the keep-alive has run ``px4_offboard_warmup_s``."""
        self._engaged_at = self._sink.clock()
        self._requested = False
        self._pending = []

    def _after_keepalive(self) -> None:
        now = self._sink.clock()
        engaged = self._engaged_at
        if engaged is not None and not self._requested and now - engaged >= self._warmup_s:
            self._requested = True
            self._command(VEHICLE_CMD_DO_SET_MODE, MODE_FLAG_CUSTOM_MODE_ENABLED,
                          PX4_CUSTOM_MAIN_MODE_OFFBOARD)  # fmt: skip
            self._command(VEHICLE_CMD_COMPONENT_ARM_DISARM, 1.0, 0.0)
        for pending in self._pending:
            if now - pending.sent > ACK_TIMEOUT_S:
                self._pending = []
                self._sink.refused(
                    f"PX4 did not acknowledge {_COMMAND_NAMES[pending.command]} within "
                    f"{ACK_TIMEOUT_S:g} s"
                )
                return

    def _command(self, command: int, param1: float, param2: float) -> None:
        msg = self._msgs.VehicleCommand(
            timestamp=time.time_ns() // 1000,
            command=command,
            param1=float(param1),
            param2=float(param2),
            target_system=self._system_id,
            target_component=1,
            source_system=SOURCE_SYSTEM,
            source_component=1,
            from_external=True,
        )
        self._pending.append(_Pending(command, self._sink.clock()))
        self._command_pub.publish(msg)

    # -- in -------------------------------------------------------------------------------

    def _on_ack(self, msg: Any) -> None:
        pending = next((p for p in self._pending if p.command == msg.command), None)
        if pending is None:
            return
        self._pending.remove(pending)
        if msg.result != self._msgs.VehicleCommandAck.VEHICLE_CMD_RESULT_ACCEPTED:
            self._sink.refused(
                f"PX4 answered {_COMMAND_NAMES[pending.command]} with result {msg.result} "
                "(1 temporarily rejected, 2 denied, 3 unsupported, 4 failed)"
            )

    def _on_status(self, msg: Any) -> None:
        controllable = msg.nav_state == NAV_OFFBOARD and msg.arming_state == ARMING_STATE_ARMED
        self._in_offboard = msg.nav_state == NAV_OFFBOARD
        mode = MODE_NAMES.get(int(msg.nav_state), f"nav_state {msg.nav_state}")
        self._sink.vehicle(
            VehicleReport(
                stamp=self._sink.clock(),
                controllable=controllable,
                mode=mode if msg.arming_state == ARMING_STATE_ARMED else f"{mode}, disarmed",
                takeover="the pilot is moving the sticks (manual_control_setpoint)"
                if self._sticks
                else "",
                failsafe="vehicle_status.failsafe" if msg.failsafe else "",
                battery_fraction=self._battery,
            )
        )

    def _on_sticks(self, msg: Any) -> None:
        self._sticks = bool(msg.valid and msg.sticks_moving)

    def _on_battery(self, msg: Any) -> None:
        remaining = float(msg.remaining)
        self._battery = remaining if msg.connected and 0.0 <= remaining <= 1.0 else None

    def _on_odometry(self, msg: Any) -> None:
        position = ned_to_enu(tuple(float(v) for v in msg.position))  # type: ignore[arg-type]
        w, x, y, z = (float(v) for v in msg.q)
        valid = msg.pose_frame == msg.POSE_FRAME_NED and all(
            math.isfinite(v) for v in (*position, w, x, y, z)
        )
        yaw = ned_yaw_to_enu(yaw_of_quaternion_wxyz(w, x, y, z)) if valid else 0.0
        self._sink.odometry(
            OdometrySample(stamp=self._sink.clock(), position=position, yaw=yaw, valid=valid)
        )
        if valid:
            odom = Odometry()
            odom.header.stamp = self._node.get_clock().now().to_msg()
            odom.header.frame_id = MAP_FRAME
            odom.child_frame_id = "base_link"
            odom.pose.pose = pose_msg(Pose.from_position(position, yaw))
            self._odom_pub.publish(odom)

    def close(self) -> None:
        """Nothing held."""
