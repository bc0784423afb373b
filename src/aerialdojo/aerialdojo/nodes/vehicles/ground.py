"""The ground-robot adapter: geometry_msgs/Twist (or TwistStamped) on ``cmd_vel``, closed on
the robot's own odometry, for the AGOS UGV.

Like nav2's ``DriveOnHeading`` and ``Spin`` behaviours (``nav2_behaviors``), the loop runs
on the companion at the gate's rate and reads the robot's odometry each cycle; the velocity
stream is the keep-alive (``diff_drive_controller`` stops the robot after its command
timeout, twist_mux zeroes a stale input), and a hold is a zero command.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from geometry_msgs.msg import Twist, TwistStamped
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node

from aerialdojo.nodes.vehicles.base import COMMAND_QOS, VehicleSink, subscribe_odometry
from aerialdojo.robot.ground import GroundGains, velocity_command
from aerialdojo.robot.safety import GateOutput, OdometrySample

#: A ground robot's odometry topic by convention (REP-105), when ``odom_topic`` is empty.
GROUND_ODOMETRY = "odom"


class GroundAdapter:
    """Velocity commands from the gate's setpoints and the latest odometry."""

    reports_vehicle = False

    def __init__(
        self, node: Node, values: Mapping[str, Any], sink: VehicleSink, group: CallbackGroup
    ) -> None:
        self._node = node
        self._stamped = bool(values["cmd_vel_stamped"])
        self._gains = GroundGains(
            max_speed=float(values["max_speed_m_s"]),
            max_turn_rate=math.radians(float(values["max_angular_speed_deg_s"])),
        )
        self._odometry: OdometrySample | None = None
        self._publisher = node.create_publisher(
            TwistStamped if self._stamped else Twist, str(values["cmd_vel_topic"]), COMMAND_QOS
        )

        def on_odometry(sample: OdometrySample) -> None:
            self._odometry = sample
            sink.odometry(sample)

        subscribe_odometry(
            node,
            str(values["odom_topic"]) or GROUND_ODOMETRY,
            VehicleSink(
                odometry=on_odometry, vehicle=sink.vehicle, refused=sink.refused, clock=sink.clock
            ),
            group,
        )

    def send(self, output: GateOutput) -> None:
        """The loop's command towards the setpoint (a hold is the pose where the robot
        stopped, or the goal it is settling on); a zero command for the last message before
        silence (a fault) or without trusted odometry."""
        if output.setpoint is None:
            return
        speed, turn = 0.0, 0.0
        odometry = self._odometry
        if output.keepalive and odometry is not None and odometry.valid:
            speed, turn = velocity_command(odometry, output.setpoint, self._gains)
        twist = Twist()
        twist.linear.x, twist.angular.z = speed, turn
        if self._stamped:
            msg = TwistStamped(twist=twist)
            msg.header.stamp = self._node.get_clock().now().to_msg()
            msg.header.frame_id = "base_link"
            self._publisher.publish(msg)
        else:
            self._publisher.publish(twist)

    def engage(self) -> None:
        """Nothing to ask: a ground base takes velocity commands whenever they come."""

    def close(self) -> None:
        """Nothing held."""
