"""The vehicle adapter registry: each way of commanding a robot registers once.

An adapter is a few hooks behind the safety gate (Aerostack2's ``ownSendCommand``,
``ownStopPlatform``...): it turns the gate's setpoints, keep-alive and holds into one
autopilot's messages and decodes the autopilot's odometry and state. It has no timer and no
safety logic of its own. Entries hold dotted references, so that looking a vehicle up
imports nothing (the PX4 adapter needs ``px4_msgs``, which only a PX4 workspace has). The
gate's ``vehicle`` parameter offers every registered name; nothing else compares them.

A new adapter is a class with the ``nodes.vehicles.base.VehicleAdapter`` methods plus one
``register`` call: in this package an entry in ``BUILTIN_VEHICLES``, elsewhere an entry point
in the ``aerialdojo.vehicles`` group whose object is a ``VehicleEntry``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from aerialdojo.registry import NamedRegistry, resolve

#: Entry-point group through which other packages register vehicle adapters.
ENTRY_POINT_GROUP = "aerialdojo.vehicles"


@dataclass(frozen=True, kw_only=True)
class VehicleEntry:
    """One vehicle adapter, as the registry knows it.

    Attributes:
        name: the gate's ``vehicle`` parameter value.
        adapter: ``"module:Class"`` of the adapter (a ROS module under ``nodes/``).
        description: one line for ``aerialdojo params`` and error messages.
        frame: the frame its wire messages use, declared (a goal is always the site's ENU
            ``map`` frame; the adapter converts, never guesses).
    """

    name: str
    adapter: str
    description: str
    frame: str


#: The adapters shipped with aerialdojo.
BUILTIN_VEHICLES = (
    VehicleEntry(
        name="mavros",
        adapter="aerialdojo.nodes.vehicles.pose_setpoint:PoseSetpointAdapter",
        description="pose setpoints (geometry_msgs/PoseStamped) streamed to MAVROS or any "
        "REP-147-shaped driver, nav_msgs/Odometry feedback, mavros_msgs/State watched",
        frame="ENU map (MAVROS converts to NED itself)",
    ),
    VehicleEntry(
        name="px4",
        adapter="aerialdojo.nodes.vehicles.px4:Px4Adapter",
        description="PX4 over uXRCE-DDS (px4_msgs): OffboardControlMode keep-alive, "
        "TrajectorySetpoint in NED, VehicleCommand for offboard and arming",
        frame="NED local (PX4), converted from and to the site's ENU",
    ),
    VehicleEntry(
        name="ugv",
        adapter="aerialdojo.nodes.vehicles.ground:GroundAdapter",
        description="a ground robot: geometry_msgs/Twist on cmd_vel, closed on its odometry",
        frame="FLU body velocities, from the site's ENU setpoints and odometry",
    ),
)

_VEHICLES: NamedRegistry[VehicleEntry] = NamedRegistry("vehicle", VehicleEntry, ENTRY_POINT_GROUP)


def register(entry: VehicleEntry) -> None:
    """Make ``entry`` known by its name.

    Raises:
        ConfigError: another adapter already has that name.
    """
    _VEHICLES.register(entry)


def vehicle_names() -> tuple[str, ...]:
    """Every registered adapter's name, built-in ones first."""
    return _VEHICLES.names()


def vehicle_entry(name: str) -> VehicleEntry:
    """The adapter called ``name``.

    Raises:
        ConfigError: no adapter of that name.
    """
    return _VEHICLES.entry(name)


def adapter_class(name: str) -> Any:
    """The adapter class of vehicle ``name`` (importing its module).

    Raises:
        ConfigError: no adapter of that name.
    """
    return resolve(vehicle_entry(name).adapter)


for _entry in BUILTIN_VEHICLES:
    register(_entry)
