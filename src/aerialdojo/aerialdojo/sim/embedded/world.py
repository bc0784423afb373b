"""A loaded embedded scene: geometry, materials, lighting, ray caster, collision world and
annotations."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from aerialdojo.sim.annotations import SceneAnnotations
from aerialdojo.sim.embedded.collision import CollisionHit, CollisionWorld
from aerialdojo.sim.embedded.raycast import RayCaster

#: Surface patterns the shader draws procedurally from the hit point.
PATTERN_PLAIN = 0
PATTERN_WINDOWS = 1
PATTERN_WATER = 2


@dataclass(frozen=True, kw_only=True)
class Lighting:
    """Sun, sky and haze of a scene (linear RGB in [0, 1]).

    Attributes:
        sun_direction: unit vector towards the sun, map frame.
        ambient: light reaching surfaces facing away from the sun.
        sky_zenith: sky colour straight up.
        sky_horizon: sky colour at the horizon, also the haze colour.
        haze_distance_m: distance at which haze has hidden 63 % of a surface's colour.
    """

    sun_direction: tuple[float, float, float] = (0.42, 0.30, 0.86)
    ambient: float = 0.42
    sky_zenith: tuple[float, float, float] = (0.30, 0.50, 0.85)
    sky_horizon: tuple[float, float, float] = (0.78, 0.85, 0.92)
    haze_distance_m: float = 450.0


@dataclass(kw_only=True, eq=False)
class EmbeddedScene:
    """One generated scene, ready to render and to collide with.

    Attributes:
        annotations: landmarks, target objects with anchors, road graph.
        collision: swept-sphere collision world over every triangle.
        caster: Embree ray caster over the same triangles.
        face_colour: (T, 3) float32 base colour per triangle in [0, 1].
        face_normal: (T, 3) float32 unit outward normal per triangle.
        face_pattern: (T,) uint8 ``PATTERN_*`` per triangle.
        face_instance: (T,) int32 instance id per triangle (0 for terrain, water, roads).
        face_semantic: (T,) int32 semantic id per triangle (``catalogue.SEMANTIC_IDS``).
        lighting: sun, sky and haze.
        generation_seconds: wall time spent generating the scene.
        lit_channels: (3, T + 1) float32 sunlit colour in [0, 255] of each triangle's
            outward side, one row per channel (the renderer shades channel planes), and a last
            column of zeros that a miss (primitive -1) picks: the sun is fixed, so Lambert
            shading is per face. Solids are closed and sheets (terrain, water,
            roads) face up, so no legal viewpoint sees a back face.
        pattern_or_miss, instance_or_miss, semantic_or_miss: ``face_pattern``,
            ``face_instance`` and ``face_semantic`` with a last 0 that a miss picks, so the
            renderer gathers per pixel without masking misses first.
    """

    annotations: SceneAnnotations
    collision: CollisionWorld
    caster: RayCaster
    face_colour: np.ndarray
    face_normal: np.ndarray
    face_pattern: np.ndarray
    face_instance: np.ndarray
    face_semantic: np.ndarray
    lighting: Lighting
    generation_seconds: float = 0.0
    lit_channels: np.ndarray = field(init=False, repr=False)
    pattern_or_miss: np.ndarray = field(init=False, repr=False)
    instance_or_miss: np.ndarray = field(init=False, repr=False)
    semantic_or_miss: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sun = np.asarray(self.lighting.sun_direction, dtype=np.float32)
        lambert = np.maximum(self.face_normal @ sun, 0.0)
        brightness = self.lighting.ambient + (1.0 - self.lighting.ambient) * lambert
        lit = self.face_colour * brightness[:, None] * np.float32(255.0)
        lit_and_miss = np.concatenate((lit, np.zeros((1, 3))))
        self.lit_channels = np.ascontiguousarray(lit_and_miss.T, dtype=np.float32)
        self.pattern_or_miss = np.append(self.face_pattern, 0).astype(self.face_pattern.dtype)
        self.instance_or_miss = np.append(self.face_instance, 0).astype(np.int32)
        self.semantic_or_miss = np.append(self.face_semantic, 0).astype(np.int32)

    @property
    def name(self) -> str:
        """The scene name, e.g. ``"Mall_0"``."""
        return self.annotations.scene

    @property
    def triangle_count(self) -> int:
        """Number of triangles in the scene."""
        return len(self.face_pattern)

    def sweep_sphere(
        self, start: np.ndarray, end: np.ndarray, radius: float
    ) -> CollisionHit | None:
        """First contact of a sphere moving from ``start`` to ``end`` (see
        ``CollisionWorld.sweep_sphere``)."""
        return self.collision.sweep_sphere(start, end, radius)

    def sphere_is_free(self, center: np.ndarray, radius: float) -> bool:
        """Whether a sphere fits at ``center`` (see ``CollisionWorld.sphere_is_free``)."""
        return self.collision.sphere_is_free(center, radius)
