"""The worlds AGOS episodes run in, by town name: the embedded towns (``agos.town``) and
CARLA maps (``agos.carla_town``). The task manager's referee, the agents and the map M find a
town's public map and its ground truth here, so nothing else compares town names."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np

from aerialdojo.agos.town import TOWN_NAMES, TownMap, load_town
from aerialdojo.agos.town import town_map as embedded_town_map
from aerialdojo.errors import UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec

if TYPE_CHECKING:
    from aerialdojo.agos.episodes import AgosEpisode


class VisibilityOracle(Protocol):
    """What the checker and the evaluator ask of a world's ground truth."""

    def visible_in_views(
        self,
        pose: Pose,
        cameras: Sequence[CameraSpec],
        target: TargetObject,
        max_range_m: float = math.inf,
    ) -> bool: ...

    def line_of_sight(self, eye: Sequence[float] | np.ndarray, target: TargetObject) -> bool: ...


class RefereeTown(Protocol):
    """A town as the referee of one episode knows it."""

    @property
    def map(self) -> TownMap: ...

    def vehicle(self, object_id: str) -> TargetObject: ...

    def oracle(self) -> VisibilityOracle: ...


def town_names() -> tuple[str, ...]:
    """Every town AGOS episodes can be made on."""
    from aerialdojo.agos.carla_town import CARLA_TOWN_NAMES  # noqa: PLC0415

    return (*TOWN_NAMES, *CARLA_TOWN_NAMES)


def town_map(name: str) -> TownMap:
    """The public map of town ``name`` (roads, UAV grid, bounds).

    Raises:
        UnknownSceneError: no such town.
    """
    if name in TOWN_NAMES:
        return embedded_town_map(name)
    from aerialdojo.agos.carla_town import CARLA_TOWN_NAMES, carla_town_map  # noqa: PLC0415

    if name in CARLA_TOWN_NAMES:
        return carla_town_map(name)
    raise UnknownSceneError(f"unknown AGOS town {name!r}; towns: {', '.join(town_names())}")


def referee_town(episode: AgosEpisode) -> RefereeTown:
    """The town of an episode with its ground truth: an embedded town with its parked
    vehicles, or a CARLA map with the vehicles the episode spawns.

    Raises:
        UnknownSceneError: no such town.
    """
    if episode.scene in TOWN_NAMES:
        return load_town(episode.scene)
    from aerialdojo.agos.carla_town import CarlaTown, spawned_vehicle  # noqa: PLC0415
    from aerialdojo.carla_maps.blueprints import colour_name, vehicle_model  # noqa: PLC0415

    vehicles = []
    for number, spawn in enumerate(episode.spawns, start=1):
        model = vehicle_model(spawn.blueprint)
        colour = colour_name(dict(spawn.attributes).get("color", ""))
        vehicles.append(
            spawned_vehicle(
                spawn,
                instance_id=number,
                name=f"{colour} {model.words}".strip(),
                category=model.category,
                colour=colour,
            )
        )
    return CarlaTown(map=town_map(episode.scene), vehicles=tuple(vehicles))
