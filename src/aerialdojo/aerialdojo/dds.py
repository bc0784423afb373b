"""The DDS transport profiles shipped in ``config/transport/`` and the environment that makes
a ROS process use one (ROS-free: a launcher sets it before any node starts)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

from aerialdojo.errors import ConfigError

#: Transport profiles shipped in ``config/transport/``: name -> (file, discovery range).
TRANSPORT_PROFILES: Final[Mapping[str, tuple[str, str]]] = {
    "single_host": ("fastdds_shm.xml", "LOCALHOST"),
    "multi_host": ("fastdds_multi_host.xml", "SUBNET"),
}


#: A run's ``task_manager.discovery`` -> the transport profile its nodes use.
DISCOVERY_PROFILES: Final[Mapping[str, str]] = {"localhost": "single_host", "subnet": "multi_host"}


#: Where Fast DDS looks for its XML profile: ``FASTDDS_...`` from Fast DDS 3 on (Kilted),
#: ``FASTRTPS_...`` before (Fast DDS 2: Humble, Jazzy). Each version ignores the other's, and a
#: profile that is not read leaves the default transports, whose 512 KB shared-memory segment
#: loses large frames to 3 s repairs (a Jazzy step took 2 s instead of 70 ms).
PROFILE_FILE_VARIABLES: Final = ("FASTDDS_DEFAULT_PROFILES_FILE", "FASTRTPS_DEFAULT_PROFILES_FILE")


def transport_profile_path(profile: str = "single_host") -> Path:
    """The Fast DDS XML file of a shipped transport profile.

    Looks in the source tree first (running from a checkout), then in the installed
    ``share/aerialdojo/config/transport``.

    Args:
        profile: a key of ``TRANSPORT_PROFILES``.

    Raises:
        ConfigError: unknown profile name, or its file is in neither place.
    """
    if profile not in TRANSPORT_PROFILES:
        raise ConfigError(
            f"transport profile {profile!r} is not one of {sorted(TRANSPORT_PROFILES)}"
        )
    file_name = TRANSPORT_PROFILES[profile][0]
    candidates = [Path(__file__).resolve().parents[3] / "config" / "transport" / file_name]
    try:
        share = Path(get_package_share_directory("aerialdojo"))
        candidates.append(share / "config" / "transport" / file_name)
    except PackageNotFoundError:
        pass  # not installed: running from the source tree only
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = ", ".join(str(candidate) for candidate in candidates)
    raise ConfigError(f"transport profile {profile!r}: {file_name} not found in {searched}")


def transport_environment(
    profile: str = "single_host", environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Environment variables that make a ROS process use a shipped transport profile.

    Fast DDS reads them when the process creates its first participant (``rclpy.init``), so a
    launcher sets them on the child process (or in ``os.environ`` before ``rclpy.init`` when
    nodes are composed in the launcher's own process). Variables the user already set in
    ``environ`` are left out, so their choice wins; a profile file named in either of
    ``PROFILE_FILE_VARIABLES`` is named in both. ``RMW_FASTRTPS_USE_QOS_FROM_XML`` must stay
    unset: the profile configures transports only and the QoS comes from the code.

    Args:
        profile: a key of ``TRANSPORT_PROFILES``.
        environ: the environment to complete; ``os.environ`` if None.

    Returns:
        The variables to add: ``RMW_IMPLEMENTATION``, the ``PROFILE_FILE_VARIABLES`` and
        ``ROS_AUTOMATIC_DISCOVERY_RANGE`` (LOCALHOST for single_host, SUBNET for multi_host).

    Raises:
        ConfigError: unknown profile, or its file is missing.
    """
    current = os.environ if environ is None else environ
    shipped = str(transport_profile_path(profile))
    chosen = [current[name] for name in PROFILE_FILE_VARIABLES if current.get(name)]
    profile_file = chosen[0] if chosen else shipped
    wanted = {
        "RMW_IMPLEMENTATION": "rmw_fastrtps_cpp",
        **dict.fromkeys(PROFILE_FILE_VARIABLES, profile_file),
        "ROS_AUTOMATIC_DISCOVERY_RANGE": TRANSPORT_PROFILES[profile][1],
    }
    return {name: value for name, value in wanted.items() if not current.get(name)}


def run_environment(discovery: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``transport_environment`` for a run whose config chose ``discovery``.

    ``localhost``, the default, leaves a range the user exported alone. ``subnet`` is a
    config's explicit opt-out (a robot's driver or an agent on another host must be found),
    so it beats an inherited ``LOCALHOST`` (``tools/run.sh`` exports one).

    Raises:
        ConfigError: ``discovery`` is not a key of ``DISCOVERY_PROFILES``.
    """
    if discovery not in DISCOVERY_PROFILES:
        raise ConfigError(
            f"task_manager.discovery: {discovery!r} is not one of {', '.join(DISCOVERY_PROFILES)}"
        )
    profile = DISCOVERY_PROFILES[discovery]
    wanted = transport_environment(profile, environ)
    if discovery == "subnet":
        wanted["ROS_AUTOMATIC_DISCOVERY_RANGE"] = TRANSPORT_PROFILES[profile][1]
    return wanted
