"""Construct a simulator backend by name (the bridge's ``backend`` parameter).

The one place that knows backend names: it lives above ``sim/`` because the AGOS backend
comes from ``agos/``. Each backend class says which camera rigs its agents carry
(``SimulatorBackend.camera_rigs``) and whether its odometry is global
(``global_localization``), so the bridge node needs no backend names.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aerialdojo.errors import ConfigError
from aerialdojo.sim.backend import SimulatorBackend

BACKENDS = ("embedded", "projectairsim", "carla_air", "agos", "citynav", "pointcloud")

#: The venv each real-simulator backend's client lives in (tools/bootstrap_backend.sh).
BACKEND_VENVS = {"projectairsim": ".venv-projectairsim", "carla_air": ".venv-carla-air"}


def create_backend(
    name: str,
    *,
    agents: Sequence[str],
    image_width: int,
    image_height: int,
    fov_deg: float,
    seed: int,
    agent_radius_m: float,
    seconds_per_action: float,
    parameters: Mapping[str, Any] | None = None,
) -> SimulatorBackend:
    """Build the backend called ``name`` with its own camera rig for each of ``agents``.

    Args:
        name: one of ``BACKENDS``.
        agents: the agents whose sensors it renders.
        image_width: pixels across every camera image.
        image_height: pixels down every camera image.
        fov_deg: horizontal field of view where the rig does not fix its own.
        seed: scene generation seed (embedded).
        agent_radius_m: collision radius (embedded).
        seconds_per_action: simulated time one action takes.
        parameters: the bridge's parameter values; the remote backends read their server
            address, ports, timeouts and map settings from them.

    Raises:
        ConfigError: no backend of that name, bad settings, an agent the backend has no rig
            for, or a remote backend's client not importable (the bridge runs in the wrong
            venv).
    """
    if name not in BACKENDS:
        raise ConfigError(f"unknown simulator backend {name!r}; known: {', '.join(BACKENDS)}")
    camera = (agents, image_width, image_height, fov_deg)
    if name == "embedded":
        # Imported here: the embedded simulator pulls in Embree, which other backends'
        # processes do not need.
        from aerialdojo.sim.embedded.backend import EmbeddedBackend  # noqa: PLC0415

        return EmbeddedBackend(
            seed=seed,
            agent_radius_m=agent_radius_m,
            rigs=EmbeddedBackend.camera_rigs(*camera),
            seconds_per_action=seconds_per_action,
        )
    if name == "agos":
        # AGOS towns on the embedded simulator (AGOS-Bench); towns are fixed maps, no seed.
        from aerialdojo.agos.backend import AgosBackend  # noqa: PLC0415

        return AgosBackend(
            rigs=AgosBackend.camera_rigs(*camera), seconds_per_action=seconds_per_action
        )
    if name == "citynav":
        # CityNav's embedded cities (CityNav): nadir camera, GNSS odometry.
        from aerialdojo.citynav.backend import CityNavBackend  # noqa: PLC0415

        return CityNavBackend(
            rigs=CityNavBackend.camera_rigs(*camera),
            seconds_per_action=seconds_per_action,
            agent_radius_m=agent_radius_m,
        )
    if name == "pointcloud":
        from aerialdojo.sim.pointcloud import PointCloudBackend  # noqa: PLC0415

        values = parameters or {}
        return PointCloudBackend(
            directory=str(values.get("pointcloud_dir", "")),
            voxel_m=float(values.get("pointcloud_voxel_m", 0.5)),
            rigs=PointCloudBackend.camera_rigs(*camera),
            seconds_per_action=seconds_per_action,
        )
    # Settings first: a bad parameter is reported even where the client is missing.
    from aerialdojo.sim.remote.settings import (  # noqa: PLC0415
        CarlaAirSettings,
        ProjectAirSimSettings,
    )

    settings = parameters or {}
    # Imported here: each client lives in its own venv, never next to the other's.
    try:
        if name == "projectairsim":
            projectairsim_settings = ProjectAirSimSettings.from_parameters(settings)
            from aerialdojo.sim.projectairsim import ProjectAirSimBackend  # noqa: PLC0415

            return ProjectAirSimBackend(
                settings=projectairsim_settings,
                rigs=ProjectAirSimBackend.camera_rigs(*camera),
                seconds_per_action=seconds_per_action,
            )
        carla_air_settings = CarlaAirSettings.from_parameters(settings)
        from aerialdojo.sim.carla_air import CarlaAirBackend  # noqa: PLC0415

        return CarlaAirBackend(
            settings=carla_air_settings,
            rigs=CarlaAirBackend.camera_rigs(*camera),
            seconds_per_action=seconds_per_action,
        )
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"backend {name!r} needs the {error.name!r} client, which lives in "
            f"{BACKEND_VENVS[name]}: create it with tools/bootstrap_backend.sh "
            f"{BACKEND_VENVS[name].removeprefix('.venv-')} and run the bridge with "
            f"{BACKEND_VENVS[name]}/bin/python"
        ) from error
