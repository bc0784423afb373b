"""The names of PX4's uXRCE-DDS topics, and what a ``px4_msgs`` package says about them.

Since PX4 v1.16 a message whose definition declares ``MESSAGE_VERSION = N`` with N > 0 is
published and subscribed as ``<topic>_v<N>`` (docs.px4.io, v1.18, "ROS 2 Message Translation
Node"); messages at version 0 keep the bare name. The version comes from the px4_msgs a
workspace is built with, which must match the firmware (or run PX4's translation node), so
the adapter reads it from the message classes, never from a table of ours.
"""

from __future__ import annotations

import re
from pathlib import Path

#: The topics the PX4 adapter and the simulated robot use: (direction, name, message).
IN_TOPICS = (
    ("in", "offboard_control_mode", "OffboardControlMode"),
    ("in", "trajectory_setpoint", "TrajectorySetpoint"),
    ("in", "vehicle_command", "VehicleCommand"),
)
OUT_TOPICS = (
    ("out", "vehicle_status", "VehicleStatus"),
    ("out", "vehicle_odometry", "VehicleOdometry"),
    ("out", "battery_status", "BatteryStatus"),
    ("out", "vehicle_command_ack", "VehicleCommandAck"),
    ("out", "manual_control_setpoint", "ManualControlSetpoint"),
)


def topic_name(namespace: str, direction: str, name: str, message_version: int) -> str:
    """``<namespace>/<in|out>/<name>[_v<N>]``, e.g. ``/fmu/out/vehicle_status_v4``."""
    suffix = f"_v{message_version}" if message_version > 0 else ""
    return f"{namespace.rstrip('/')}/{direction}/{name}{suffix}"


def message_version(message_class: type) -> int:
    """The ``MESSAGE_VERSION`` a px4_msgs class declares (0 where it declares none, as
    ``OffboardControlMode`` does)."""
    return int(getattr(message_class, "MESSAGE_VERSION", 0))


_VERSION = re.compile(r"^\s*uint32\s+MESSAGE_VERSION\s*=\s*(\d+)", re.MULTILINE)


def definition_version(msg_file: Path) -> int:
    """The ``MESSAGE_VERSION`` of a px4_msgs ``.msg`` definition file (0 where absent)."""
    match = _VERSION.search(msg_file.read_text(encoding="utf-8"))
    return int(match.group(1)) if match else 0
