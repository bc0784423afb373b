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

import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from aerialdojo.errors import ConfigError

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

_REGISTRY: dict[str, VehicleEntry] = {}
_entry_points_loaded = False


def register(entry: VehicleEntry) -> None:
    """Make ``entry`` known by its name.

    Raises:
        ConfigError: another adapter already has that name.
    """
    known = _REGISTRY.get(entry.name)
    if known is not None and known != entry:
        raise ConfigError(f"vehicle adapter {entry.name!r} is registered twice")
    _REGISTRY[entry.name] = entry


def _load_entry_points() -> None:
    global _entry_points_loaded  # noqa: PLW0603 - loaded once per process
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    for point in entry_points(group=ENTRY_POINT_GROUP):
        entry = point.load()
        if not isinstance(entry, VehicleEntry):
            raise ConfigError(
                f"entry point {point.name!r} of {ENTRY_POINT_GROUP} is not a VehicleEntry"
            )
        register(entry)


def vehicle_names() -> tuple[str, ...]:
    """Every registered adapter's name, built-in ones first."""
    _load_entry_points()
    return tuple(_REGISTRY)


def vehicle_entry(name: str) -> VehicleEntry:
    """The adapter called ``name``.

    Raises:
        ConfigError: no adapter of that name.
    """
    _load_entry_points()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"unknown vehicle {name!r}; known: {', '.join(_REGISTRY)}") from None


def adapter_class(name: str) -> Any:
    """The adapter class of vehicle ``name`` (importing its module).

    Raises:
        ConfigError: no adapter of that name.
    """
    module_name, _, attribute = vehicle_entry(name).adapter.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


for _entry in BUILTIN_VEHICLES:
    register(_entry)
