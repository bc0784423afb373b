"""The camera rigs a remote simulator gives each benchmark's agents, by the benchmark's name
(CARLA-Air's ``carla_air_benchmark``): the bridge's backend, the doctor and the AirSim settings
it writes read them here, without the simulator's client."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aerialdojo.agos.sensors import agos_rigs
from aerialdojo.errors import ConfigError
from aerialdojo.sim.backend import CameraSpec, SimulatorBackend

RigBuilder = Callable[[Sequence[str], int, int, float], dict[str, list[CameraSpec]]]


def _agos(
    agents: Sequence[str], width: int, height: int, fov_deg: float
) -> dict[str, list[CameraSpec]]:
    del fov_deg  # AGOS-Bench fixes each camera's own
    return agos_rigs(agents, width, height)


#: Each benchmark's rigs: AerialDojo's four views for every agent (``SimulatorBackend``'s
#: default), or AGOS-Bench's nadir UAV camera and the UGV's front view and six-view ring.
BENCHMARK_RIGS: dict[str, RigBuilder] = {
    "aerialdojo": SimulatorBackend.camera_rigs,
    "agos": _agos,
}


def benchmark_rigs(
    benchmark: str, agents: Sequence[str], width: int, height: int, fov_deg: float
) -> dict[str, list[CameraSpec]]:
    """The rig of each of ``agents`` under ``benchmark``.

    Raises:
        ConfigError: an unknown benchmark, or an agent it has no rig for.
    """
    try:
        build = BENCHMARK_RIGS[benchmark]
    except KeyError:
        raise ConfigError(
            f"no camera rigs for benchmark {benchmark!r}; known: {', '.join(BENCHMARK_RIGS)}"
        ) from None
    return build(agents, width, height, fov_deg)
