"""The safety gate's limits from its parameters, and the geofence from the site or suite
they name: checked whole before the gate starts, each problem naming node and field."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aerialdojo.errors import AerialDojoError, ConfigError
from aerialdojo.geofence import Geofence
from aerialdojo.robot.safety import SafetyLimits


def load_geofence(site: str, suite: str, where: str) -> Geofence:
    """The geofence of the site file ``site`` or of the site block of suite ``suite``
    (exactly one of them set).

    Args:
        site: a site file path, or "".
        suite: a suite name or path built from a site, or "".
        where: how errors name the parameters, e.g. ``"config/robot.yaml: safety_gate"``.

    Raises:
        ConfigError: neither or both set, an unreadable or invalid file, a suite without a
            site block.
    """
    if bool(site) == bool(suite):
        raise ConfigError(
            f"{where}.site / {where}.suite: set exactly one (the site file, or a suite built "
            "from one), so the gate knows its geofence"
        )
    try:
        if site:
            from aerialdojo.sites.site import load_site  # noqa: PLC0415 - loads jsonschema

            return load_site(site).geofence
        from aerialdojo.tasks.suite import load_suite, resolve_suite  # noqa: PLC0415

        record = load_suite(resolve_suite(suite)).site
    except AerialDojoError as error:
        raise ConfigError(f"{where}.{'site' if site else 'suite'}: {error}") from error
    if record is None:
        raise ConfigError(
            f"{where}.suite: suite {suite!r} was not built from a site (no site block), so it "
            "has no geofence; build it with aerialdojo tasks from-site"
        )
    return record.geofence


def limits_from_parameters(
    values: Mapping[str, Any], where: str, geofence: Geofence | None = None
) -> SafetyLimits:
    """The gate's limits from its declared parameters (``params.NODE_PARAMETERS``).

    Args:
        values: the ``safety_gate`` parameters, every one present.
        where: how errors name the node, e.g. ``"safety_gate"``.
        geofence: the fence, when already loaded; else from ``site``/``suite``.

    Raises:
        ConfigError: the geofence cannot be loaded, or its margin is smaller than the
            stopping distance at the speed cap (the fence would be overrun on a stop).
    """
    fence = geofence or load_geofence(str(values["site"]), str(values["suite"]), where)
    limits = SafetyLimits(
        geofence=fence,
        max_speed_m_s=float(values["max_speed_m_s"]),
        max_accel_m_s2=float(values["max_accel_m_s2"]),
        max_step_m=float(values["max_step_m"]),
        max_yaw_rate_rad_s=math.radians(float(values["max_yaw_rate_deg_s"])),
        deadman_timeout_s=float(values["deadman_timeout_s"]),
        odometry_timeout_s=float(values["odometry_timeout_s"]),
        vehicle_timeout_s=float(values["vehicle_timeout_s"]),
        min_battery_fraction=float(values["min_battery_fraction"]),
        tracking_error_m=float(values["tracking_error_m"]),
        tracking_timeout_s=float(values["tracking_timeout_s"]),
        require_deadman=bool(values["require_deadman"]),
    )
    return limits
