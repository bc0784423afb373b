"""Construct a simulator backend by name (the bridge's ``backend`` parameter)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from aerialdojo.errors import ConfigError
from aerialdojo.sim.backend import CameraSpec, SimulatorBackend

BACKENDS = ("embedded",)


def create_backend(
    name: str,
    *,
    seed: int,
    agent_radius_m: float,
    rigs: Mapping[str, Sequence[CameraSpec]],
    seconds_per_action: float,
) -> SimulatorBackend:
    """Build the backend called ``name``.

    Raises:
        ConfigError: no backend of that name.
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
    raise ConfigError(f"unknown simulator backend {name!r}; known: {', '.join(BACKENDS)}")
