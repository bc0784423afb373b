"""What a remote simulator gives each benchmark's agents, by the benchmark's name (CARLA-Air's
``carla_air_benchmark``): their camera rigs, their odometry frame, where the UGV's cameras
sit, the actions planned as a robot's, and the action that shows views the first observation
leaves out. The bridge's backend, the doctor and the AirSim settings it writes read them here,
without the simulator's client."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from aerialdojo.actions import Action
from aerialdojo.agos.planning import UGV_HEIGHT_M
from aerialdojo.agos.sensors import agos_rigs
from aerialdojo.agos.vocabulary import STOP_OBSERVE, UAV_ACTIONS, UGV_ACTIONS
from aerialdojo.errors import ConfigError
from aerialdojo.sim.backend import CameraSpec, SimulatorBackend

RigBuilder = Callable[[Sequence[str], int, int, float], dict[str, list[CameraSpec]]]


@dataclass(frozen=True, kw_only=True)
class RemoteBenchmark:
    """One benchmark as a remote simulator serves it.

    Attributes:
        rigs: each agent's camera rig from the image size and the default FOV.
        global_localization: odometry in the map frame, not from the episode start.
        ugv_body_height_m: how far above its vehicle's origin (on the road) the UGV's pose
            and cameras are.
        decisions: actions planned as a robot's (``robot.motions``) on the map's road graph
            and UAV grid; every other action is an AerialDojo motion.
        reveal_actions: per agent, the action after which it sees the views its first
            observation leaves out (the doctor checks those too).
    """

    rigs: RigBuilder
    global_localization: bool = False
    ugv_body_height_m: float = 0.0
    decisions: frozenset[str] = frozenset()
    reveal_actions: Mapping[str, Action] = field(default_factory=dict)


def _agos(
    agents: Sequence[str], width: int, height: int, fov_deg: float
) -> dict[str, list[CameraSpec]]:
    del fov_deg  # AGOS-Bench fixes each camera's own
    return agos_rigs(agents, width, height)


#: AerialDojo's four views for every agent (``SimulatorBackend``'s default) and its motions;
#: AGOS-Bench's nadir UAV camera and the UGV's front view and six-view ring, in the map frame
#: ("Sensors": global localisation), the UGV's pose its body frame at camera height as in
#: the embedded towns, and its decisions.
BENCHMARKS: dict[str, RemoteBenchmark] = {
    "aerialdojo": RemoteBenchmark(rigs=SimulatorBackend.camera_rigs),
    "agos": RemoteBenchmark(
        rigs=_agos,
        global_localization=True,
        ugv_body_height_m=UGV_HEIGHT_M,
        decisions=frozenset((*UAV_ACTIONS, *UGV_ACTIONS)),
        reveal_actions={"ugv": Action(STOP_OBSERVE)},
    ),
}


def remote_benchmark(name: str) -> RemoteBenchmark:
    """The benchmark called ``name``.

    Raises:
        ConfigError: no such benchmark.
    """
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ConfigError(f"no remote benchmark {name!r}; known: {', '.join(BENCHMARKS)}") from None


def benchmark_rigs(
    benchmark: str, agents: Sequence[str], width: int, height: int, fov_deg: float
) -> dict[str, list[CameraSpec]]:
    """The rig of each of ``agents`` under ``benchmark``.

    Raises:
        ConfigError: an unknown benchmark, or an agent it has no rig for.
    """
    return remote_benchmark(benchmark).rigs(agents, width, height, fov_deg)
