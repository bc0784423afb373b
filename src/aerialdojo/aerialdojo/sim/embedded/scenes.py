"""The 42 scenes of AerialDojo-200K (AerialDojo-200K, Table 7): 21 types in four families, each with
an in-distribution (``<Type>_0``) and an out-of-distribution (``<Type>_1``) instance."""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from aerialdojo.errors import UnknownSceneError
from aerialdojo.sim.embedded.builder import SceneBuilder
from aerialdojo.sim.embedded.families import disaster, infrastructure, natural, urban
from aerialdojo.sim.embedded.world import EmbeddedScene

__all__ = ["SCENE_TYPES", "EmbeddedScene", "SceneType", "load_scene", "scene_names"]


@dataclass(frozen=True)
class SceneType:
    """A scene type and the generator that lays out its instances.

    Attributes:
        name: the paper's Table 7 name, e.g. ``"ParkingLot"``.
        family: ``urban``, ``natural``, ``infrastructure`` or ``disaster``.
        generate: lays out one instance; the second argument is 0 (ID) or 1 (OOD).
    """

    name: str
    family: str
    generate: Callable[[SceneBuilder, int], None]


SCENE_TYPES: tuple[SceneType, ...] = (
    SceneType("Mall", "urban", urban.mall),
    SceneType("Stadium", "urban", urban.stadium),
    SceneType("Park", "urban", urban.park),
    SceneType("ParkingLot", "urban", urban.parking_lot),
    SceneType("Community", "urban", urban.community),
    SceneType("Neighborhood", "urban", urban.neighborhood),
    SceneType("Alley", "urban", urban.alley),
    SceneType("Factory", "urban", urban.factory),
    SceneType("ConstructionSite", "urban", urban.construction_site),
    SceneType("Desert", "natural", natural.desert),
    SceneType("Forest", "natural", natural.forest),
    SceneType("Mountain", "natural", natural.mountain),
    SceneType("Snowfield", "natural", natural.snowfield),
    SceneType("Island", "natural", natural.island),
    SceneType("Coast", "natural", natural.coast),
    SceneType("Bridge", "infrastructure", infrastructure.bridge),
    SceneType("RailCorridor", "infrastructure", infrastructure.rail_corridor),
    SceneType("Harbor", "infrastructure", infrastructure.harbor),
    SceneType("Earthquake", "disaster", disaster.earthquake),
    SceneType("Flood", "disaster", disaster.flood),
    SceneType("Explosion", "disaster", disaster.explosion),
)
_BY_NAME = {scene_type.name: scene_type for scene_type in SCENE_TYPES}
_DISTRIBUTIONS = ("id", "ood")


def scene_names() -> list[str]:
    """All scene names in Table 7 order: ``Mall_0``, ``Mall_1``, ``Stadium_0``, ..."""
    return [f"{scene_type.name}_{variant}" for scene_type in SCENE_TYPES for variant in (0, 1)]


def parse_scene_name(name: str) -> tuple[SceneType, int]:
    """The type and variant (0 = ID, 1 = OOD) of a scene name.

    Raises:
        UnknownSceneError: the name is not ``<Type>_0`` or ``<Type>_1`` of a known type.
    """
    type_name, _, variant = name.rpartition("_")
    if type_name not in _BY_NAME or variant not in ("0", "1"):
        raise UnknownSceneError(
            f"unknown scene {name!r}; expected <Type>_0 or <Type>_1 with Type one of "
            f"{', '.join(_BY_NAME)}"
        )
    return _BY_NAME[type_name], int(variant)


def load_scene(name: str, seed: int = 0, *, agent_radius_m: float = 0.25) -> EmbeddedScene:
    """Generate a scene; the same name, seed and radius always give the same scene.

    Args:
        name: scene name, e.g. ``"Mall_0"``.
        seed: varies the layout within the type's design.
        agent_radius_m: radius the object anchors must be collision-free for.

    Raises:
        UnknownSceneError: no such scene.
    """
    _, variant = parse_scene_name(name)
    started = time.perf_counter()
    builder = laid_out_scene(name, seed)
    return builder.build(
        distribution=_DISTRIBUTIONS[variant], agent_radius_m=agent_radius_m, started=started
    )


def laid_out_scene(name: str, seed: int = 0) -> SceneBuilder:
    """A scene's builder with all its pieces added, before anything is built from them.

    Raises:
        UnknownSceneError: no such scene.
    """
    scene_type, variant = parse_scene_name(name)
    builder = SceneBuilder(
        scene=name,
        scene_type=scene_type.name,
        family=scene_type.family,
        seed=(seed, zlib.crc32(name.encode())),
    )
    scene_type.generate(builder, variant)
    return builder
