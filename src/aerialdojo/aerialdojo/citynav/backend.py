"""``CityNavBackend``: the embedded simulator flying the CityNav cities.

The UAV carries one camera looking straight down with a 90 deg field of view: the view
CityNav's evaluation renders from the 5D pose (its square footprint is twice the altitude
across, CityNav, appendix C.2), so the pose's pitch is the camera's and no action changes
it. Odometry is global (GNSS is allowed, section 3.1). Motions are swept like every
embedded motion; the referee decides what a contact means for the episode.
"""

from __future__ import annotations

from collections.abc import Sequence

from aerialdojo.citynav.city import CITY_NAMES, load_city
from aerialdojo.errors import ConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import BackendOptions, CameraSpec, nadir_rig
from aerialdojo.sim.embedded.backend import EmbeddedBackend


class CityNavBackend(EmbeddedBackend):
    """Runs the CityNav cities (``citynav.city.CITY_NAMES``) in the embedded simulator.

    Args:
        rigs: camera rig per agent (``camera_rigs``).
        seconds_per_action: simulated time one action takes.
        agent_radius_m: radius of the UAV's collision sphere.
    """

    #: GNSS is allowed (CityNav, section 3.1): odometry in the map frame.
    global_localization = True

    @classmethod
    def camera_rigs(
        cls, agents: Sequence[str], width: int, height: int, fov_deg: float
    ) -> dict[str, list[CameraSpec]]:
        """The nadir camera for the UAV; its 90 deg field of view is the benchmark's own.

        Raises:
            ConfigError: an agent other than ``uav``.
        """
        unknown = sorted(set(agents) - {"uav"})
        if unknown:
            raise ConfigError(f"CityNav flies one UAV, not {unknown}")
        return {agent: nadir_rig(width, height) for agent in agents}

    @classmethod
    def from_options(cls, options: BackendOptions) -> CityNavBackend:
        # Cities are fixed maps: no seed.
        return cls(
            rigs=options.rigs(cls),
            seconds_per_action=options.seconds_per_action,
            agent_radius_m=options.agent_radius_m,
        )

    def __init__(
        self,
        *,
        rigs: dict[str, list[CameraSpec]],
        seconds_per_action: float = 1.0,
        agent_radius_m: float = 0.5,
    ) -> None:
        super().__init__(
            rigs=rigs, seed=0, agent_radius_m=agent_radius_m, seconds_per_action=seconds_per_action
        )

    def scenes(self) -> list[str]:
        return list(CITY_NAMES)

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load city ``scene`` and place the agents; the clock restarts at 0.

        Raises:
            UnknownSceneError: no such city.
            ConfigError: an agent without a camera rig.
        """
        self._check_rigged(poses)
        self._scene = load_city(scene).scene
        self._place(poses)
