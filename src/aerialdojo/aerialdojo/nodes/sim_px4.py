"""The simulated robot's PX4 contract: px4_msgs on PX4's uXRCE-DDS topics, around the PX4
commander model (``robot.px4_model``) and the simulated body.

As PX4's client names and serves them (``src/modules/uxrce_dds_client``): ``fmu/in/*``
read best effort and volatile (``utilities.hpp`` ``create_data_reader``), ``fmu/out/*``
written best effort and transient local (``create_data_writer``), with the message version
suffix on the name (``robot.px4_topics``); ``vehicle_status`` at 5 Hz, ``battery_status``
at 1 Hz, ``vehicle_odometry`` at the simulation rate (``dds_topics.yaml`` rate limits 5, 1
and 100 Hz). Every ``VehicleCommand`` PX4 handles gets a ``VehicleCommandAck``
(``Commander.cpp`` ``answer_command``), addressed to its sender.

px4_msgs is imported here only (``sim_robot`` loads this module for ``contract: px4``).
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

from aerialdojo.nodes.qos import keep_last
from aerialdojo.nodes.vehicles.px4 import px4_messages
from aerialdojo.robot.frames import (
    enu_to_ned,
    enu_yaw_to_ned,
    ned_to_enu,
    ned_yaw_to_enu,
    yaw_quaternion_wxyz,
)
from aerialdojo.robot.px4_model import NAV_OFFBOARD, VehicleCommandRequest
from aerialdojo.robot.px4_topics import message_version, topic_name
from aerialdojo.robot.sim_autopilot import SimAutopilot, autopilot_time_us
from aerialdojo.robot.sim_vehicle import SimFault

#: PX4's data readers (``uxrce_dds_client/utilities.hpp``): best effort, volatile.
PX4_READER_QOS = keep_last(10, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)
#: PX4's data writers: best effort, transient local, the last sample.
PX4_WRITER_QOS = keep_last(1, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.TRANSIENT_LOCAL)
STATUS_PERIOD_S = 0.2
BATTERY_PERIOD_S = 1.0
MANUAL_CONTROL_PERIOD_S = 0.04
ARMING_STATE = {False: 1, True: 2}
VEHICLE_TYPE_ROTARY_WING = 1


class Px4Contract:
    """PX4's topics around the simulated drone."""

    def __init__(self, node: Node, values: Mapping[str, Any], autopilot: SimAutopilot) -> None:
        msgs = px4_messages()
        self._msgs = msgs
        self._node = node
        self._autopilot = autopilot
        namespace = str(values["px4_namespace"]).lstrip("/")  # relative: under the node's ns

        def name(direction: str, topic: str, message: type) -> str:
            return topic_name(namespace, direction, topic, message_version(message))

        node.create_subscription(
            msgs.OffboardControlMode,
            name("in", "offboard_control_mode", msgs.OffboardControlMode),
            self._on_offboard_control_mode,
            PX4_READER_QOS,
        )
        node.create_subscription(
            msgs.TrajectorySetpoint,
            name("in", "trajectory_setpoint", msgs.TrajectorySetpoint),
            self._on_trajectory_setpoint,
            PX4_READER_QOS,
        )
        node.create_subscription(
            msgs.VehicleCommand,
            name("in", "vehicle_command", msgs.VehicleCommand),
            self._on_vehicle_command,
            PX4_READER_QOS,
        )
        self._status_pub = node.create_publisher(
            msgs.VehicleStatus, name("out", "vehicle_status", msgs.VehicleStatus), PX4_WRITER_QOS
        )
        self._odometry_pub = node.create_publisher(
            msgs.VehicleOdometry,
            name("out", "vehicle_odometry", msgs.VehicleOdometry),
            PX4_WRITER_QOS,
        )
        self._battery_pub = node.create_publisher(
            msgs.BatteryStatus, name("out", "battery_status", msgs.BatteryStatus), PX4_WRITER_QOS
        )
        self._ack_pub = node.create_publisher(
            msgs.VehicleCommandAck,
            name("out", "vehicle_command_ack", msgs.VehicleCommandAck),
            PX4_WRITER_QOS,
        )
        self._sticks_pub = node.create_publisher(
            msgs.ManualControlSetpoint,
            name("out", "manual_control_setpoint", msgs.ManualControlSetpoint),
            PX4_WRITER_QOS,
        )
        self._sent = {"status": 0.0, "battery": 0.0, "sticks": 0.0}
        #: TrajectorySetpoints that arrived outside OFFBOARD: on a real PX4 they would reach
        #: its controllers in any mode (offboard.md); a correct sender sends none.
        self.setpoints_outside_offboard = 0

    def extra_nodes(self) -> list[Node]:
        return []

    # -- in -------------------------------------------------------------------------------

    def _on_offboard_control_mode(self, msg: Any) -> None:
        if not self._autopilot.link_up():
            return
        any_mode = bool(
            msg.position or msg.velocity or msg.acceleration or msg.attitude or msg.body_rate
            or msg.thrust_and_torque or msg.direct_actuator
        )  # fmt: skip
        self._autopilot.commander.on_proof_of_life(
            autopilot_time_us(time.time()), int(msg.timestamp), any_mode
        )

    def _on_trajectory_setpoint(self, msg: Any) -> None:
        if not self._autopilot.link_up():
            return
        if self._autopilot.commander.nav_state != NAV_OFFBOARD:
            self.setpoints_outside_offboard += 1
            self._node.get_logger().error(
                "TrajectorySetpoint received outside OFFBOARD: PX4 would pass it to its "
                "controllers in any mode"
            )
            return
        position = tuple(float(v) for v in msg.position)
        if not all(math.isfinite(v) for v in position):
            return  # NaN: position not controlled; the model only flies positions
        self._autopilot.on_setpoint(
            time.time(),
            ned_to_enu(position),  # type: ignore[arg-type]
            ned_yaw_to_enu(float(msg.yaw)) if math.isfinite(msg.yaw) else self._autopilot.body.yaw,
        )

    def _on_vehicle_command(self, msg: Any) -> None:
        if not self._autopilot.link_up():
            return
        result = self._autopilot.commander.handle_command(
            autopilot_time_us(time.time()),
            VehicleCommandRequest(
                command=int(msg.command),
                param1=float(msg.param1),
                param2=float(msg.param2),
                target_system=int(msg.target_system),
                target_component=int(msg.target_component),
            ),
        )
        if result is None:
            return
        self._ack_pub.publish(
            self._msgs.VehicleCommandAck(
                timestamp=autopilot_time_us(time.time()),
                command=int(msg.command),
                result=result,
                target_system=int(msg.source_system),
                target_component=int(msg.source_component),
            )
        )

    # -- out ------------------------------------------------------------------------------

    def tick(self, now: float) -> None:
        autopilot = self._autopilot
        autopilot.step(now)
        stamp = autopilot_time_us(now)
        measured = autopilot.body.odometry()
        if measured is not None:
            position, yaw, valid = measured
            odometry = self._msgs.VehicleOdometry(
                timestamp=stamp,
                timestamp_sample=stamp,
                pose_frame=self._msgs.VehicleOdometry.POSE_FRAME_NED,
                velocity_frame=self._msgs.VehicleOdometry.VELOCITY_FRAME_NED,
            )
            odometry.position = [float(v) for v in enu_to_ned(position)]
            odometry.q = [float(v) for v in yaw_quaternion_wxyz(enu_yaw_to_ned(yaw))]
            if not valid:
                odometry.q = [math.nan, 0.0, 0.0, 0.0]
            self._odometry_pub.publish(odometry)
        commander = autopilot.commander
        if now - self._sent["status"] >= STATUS_PERIOD_S:
            self._sent["status"] = now
            self._status_pub.publish(
                self._msgs.VehicleStatus(
                    timestamp=stamp,
                    arming_state=ARMING_STATE[commander.armed],
                    nav_state=commander.nav_state,
                    nav_state_user_intention=commander.user_intention,
                    failsafe=commander.failsafe,
                    vehicle_type=VEHICLE_TYPE_ROTARY_WING,
                    system_id=int(commander.parameters["MAV_SYS_ID"]),
                    component_id=1,
                )
            )
        if now - self._sent["battery"] >= BATTERY_PERIOD_S:
            self._sent["battery"] = now
            self._battery_pub.publish(
                self._msgs.BatteryStatus(
                    timestamp=stamp,
                    connected=True,
                    remaining=float(autopilot.body.battery),
                    warning=int(commander.battery_warning),
                )
            )
        if now - self._sent["sticks"] >= MANUAL_CONTROL_PERIOD_S:
            self._sent["sticks"] = now
            self._sticks_pub.publish(
                self._msgs.ManualControlSetpoint(
                    timestamp=stamp,
                    timestamp_sample=stamp,
                    valid=True,
                    sticks_moving=SimFault.RC_STICKS in autopilot.body.faults,
                )
            )
