"""What every vehicle adapter offers the safety gate, and the wiring they share."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from nav_msgs.msg import Odometry
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, ReliabilityPolicy
from sensor_msgs.msg import BatteryState

from aerialdojo.geometry import yaw_from_quaternion
from aerialdojo.nodes.qos import keep_last
from aerialdojo.robot.safety import GateOutput, OdometrySample, VehicleReport

#: What robot drivers publish with (MAVROS' local_position, PX4's /fmu/out, camera
#: drivers): best effort. A reliable reader would match none of them; a best-effort reader
#: matches reliable writers too.
DRIVER_QOS = keep_last(5, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)

#: Commands to a vehicle: reliable (a best-effort reader such as MAVROS' or PX4's still
#: matches), only the newest kept: a stale setpoint is worse than none.
COMMAND_QOS = keep_last(1, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)


@dataclass(frozen=True)
class VehicleSink:
    """Where an adapter hands what it decodes (the gate's core, under the gate's lock).

    Attributes:
        odometry: the vehicle's odometry in the site frame.
        vehicle: the autopilot's state.
        refused: the autopilot refused a command (its reason).
        clock: the gate's monotonic clock, seconds.
    """

    odometry: Callable[[OdometrySample], None]
    vehicle: Callable[[VehicleReport], None]
    refused: Callable[[str], None]
    clock: Callable[[], float]


class VehicleAdapter(Protocol):
    """The hooks a vehicle fills in (Aerostack2's ``ownSendCommand``, ``ownStopPlatform``);
    no timer and no safety logic of their own."""

    #: Whether it decodes the autopilot's state (mode, battery) into ``VehicleReport``s.
    reports_vehicle: bool

    def send(self, output: GateOutput) -> None:
        """Put the gate's decision on the wire: the setpoint (a hold when ``output.hold``),
        with the keep-alive when ``output.keepalive``. Nothing for an empty output."""

    def engage(self) -> None:
        """The operator consented: ask the autopilot for the gate's mode (and arming) where
        the adapter may, once the keep-alive allows it."""

    def close(self) -> None:
        """Release what the adapter holds."""


AdapterFactory = Callable[[Node, Mapping[str, Any], VehicleSink, CallbackGroup], VehicleAdapter]


def odometry_sample(msg: Odometry, stamp: float) -> OdometrySample:
    """A nav_msgs/Odometry (ENU, site frame) as the gate's sample; a non-finite position
    marks the estimate invalid."""
    p, q = msg.pose.pose.position, msg.pose.pose.orientation
    position = (float(p.x), float(p.y), float(p.z))
    valid = all(math.isfinite(value) for value in (*position, q.x, q.y, q.z, q.w))
    yaw = yaw_from_quaternion(q.x, q.y, q.z, q.w) if valid else 0.0
    return OdometrySample(stamp=stamp, position=position, yaw=yaw, valid=valid)


def battery_fraction(msg: BatteryState) -> float | None:
    """The remaining charge of a sensor_msgs/BatteryState (0-1), None where unknown (the
    message's NaN)."""
    value = float(msg.percentage)
    return value if math.isfinite(value) else None


def subscribe_odometry(node: Node, topic: str, sink: VehicleSink, group: CallbackGroup) -> Any:
    """Feed ``topic``'s nav_msgs/Odometry to the gate."""
    return node.create_subscription(
        Odometry,
        topic,
        lambda msg: sink.odometry(odometry_sample(msg, sink.clock())),
        DRIVER_QOS,
        callback_group=group,
    )
