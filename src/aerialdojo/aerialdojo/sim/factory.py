"""Construct a simulator backend by name (the bridge's ``backend`` parameter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from aerialdojo.errors import ConfigError
from aerialdojo.sim.backend import CameraSpec, SimulatorBackend

BACKENDS = ("embedded", "projectairsim", "carla_air", "agos")

#: The venv each real-simulator backend's client lives in (tools/bootstrap_backend.sh).
BACKEND_VENVS = {"projectairsim": ".venv-projectairsim", "carla_air": ".venv-carla-air"}


def create_backend(
    name: str,
    *,
    seed: int,
    agent_radius_m: float,
    rigs: Mapping[str, Sequence[CameraSpec]],
    seconds_per_action: float,
    parameters: Mapping[str, Any] | None = None,
) -> SimulatorBackend:
    """Build the backend called ``name``.

    Args:
        name: one of ``BACKENDS``.
        seed: scene generation seed (embedded).
        agent_radius_m: collision radius (embedded).
        rigs: camera rig per agent.
        seconds_per_action: simulated time one action takes.
        parameters: the bridge's parameter values; the remote backends read their server
            address, ports, timeouts and map settings from them (defaults where absent).

    Raises:
        ConfigError: no backend of that name, bad settings, or a remote backend's client
            not importable (the bridge runs in the wrong venv).
    """
    if name == "embedded":
        # Imported here: the embedded simulator pulls in Embree, which other backends'
        # processes do not need.
        from aerialdojo.sim.embedded.backend import EmbeddedBackend  # noqa: PLC0415

        return EmbeddedBackend(
            seed=seed,
            agent_radius_m=agent_radius_m,
            rigs=rigs,
            seconds_per_action=seconds_per_action,
        )
    if name == "agos":
        # AGOS towns on the embedded simulator (AGOS-Bench); towns are fixed maps, no seed.
        from aerialdojo.agos.backend import AgosBackend  # noqa: PLC0415

        return AgosBackend(rigs=rigs, seconds_per_action=seconds_per_action)
    if name in BACKEND_VENVS:
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
                    rigs=rigs,
                    seconds_per_action=seconds_per_action,
                )
            carla_air_settings = CarlaAirSettings.from_parameters(settings)
            from aerialdojo.sim.carla_air import CarlaAirBackend  # noqa: PLC0415

            return CarlaAirBackend(
                settings=carla_air_settings,
                rigs=rigs,
                seconds_per_action=seconds_per_action,
            )
        except ModuleNotFoundError as error:
            raise ConfigError(
                f"backend {name!r} needs the {error.name!r} client, which lives in "
                f"{BACKEND_VENVS[name]}: create it with tools/bootstrap_backend.sh "
                f"{BACKEND_VENVS[name].removeprefix('.venv-')} and run the bridge with "
                f"{BACKEND_VENVS[name]}/bin/python"
            ) from error
    raise ConfigError(f"unknown simulator backend {name!r}; known: {', '.join(BACKENDS)}")
