"""RGB-D (and ground-truth id) rendering of an embedded scene by Embree ray casting."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from aerialdojo.errors import CameraConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraFrame, CameraSpec
from aerialdojo.sim.embedded.primitives import yaw_matrix
from aerialdojo.sim.embedded.raycast import run_chunked
from aerialdojo.sim.embedded.world import PATTERN_WATER, PATTERN_WINDOWS, EmbeddedScene

_WINDOW_FLOOR_M = 3.2
_WINDOW_BAY_M = 2.6


@lru_cache(maxsize=32)
def camera_rays(spec: CameraSpec) -> np.ndarray:
    """Ray directions of every pixel in the camera's own frame (x forward, y left, z up),
    row-major from the top-left pixel, scaled so that the forward component is 1.

    With that scaling the ray parameter of a hit *is* its planar depth.
    """
    focal = spec.focal_px
    columns = (spec.width / 2.0 - (np.arange(spec.width) + 0.5)) / focal
    rows = (spec.height / 2.0 - (np.arange(spec.height) + 0.5)) / focal
    left, up = np.meshgrid(columns, rows)
    rays = np.stack((np.ones_like(left), left, up), axis=-1).reshape(-1, 3)
    rays.setflags(write=False)
    return rays


def camera_rotation(pose: Pose, spec: CameraSpec) -> np.ndarray:
    """Rotation from the camera frame to the map frame: body yaw, then the mount's yaw and
    pitch (negative pitch looks down)."""
    pitch = math.radians(-spec.pitch_deg)
    c, s = math.cos(pitch), math.sin(pitch)
    about_left = np.array(((c, 0.0, s), (0.0, 1.0, 0.0), (-s, 0.0, c)))
    return np.asarray(yaw_matrix(pose.yaw + math.radians(spec.yaw_deg)) @ about_left)


def camera_origin(pose: Pose, spec: CameraSpec) -> np.ndarray:
    """The camera's optical centre in the map frame."""
    return np.asarray(pose.position + pose.body_to_world(*spec.offset))


def render_views(
    scene: EmbeddedScene,
    pose: Pose,
    specs: Sequence[CameraSpec],
    *,
    with_ground_truth_ids: bool,
) -> dict[str, CameraFrame]:
    """Render each camera of a rig mounted on a body at ``pose``.

    All views are traced in one batch spread over the cores. RGB is Lambert-shaded base
    colour under the scene's sun with haze and a sky gradient; depth is planar depth along
    the optical axis in metres (+inf where a ray meets nothing).

    Args:
        scene: the scene to render.
        pose: the body's pose in the map frame.
        specs: the cameras, each with a unique name.
        with_ground_truth_ids: also fill instance and semantic id images.

    Raises:
        CameraConfigError: two cameras share a name.
    """
    names = [spec.name for spec in specs]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise CameraConfigError(f"camera names must be unique in a rig; repeated: {duplicates}")
    origins_per_view, directions_per_view = [], []
    for spec in specs:
        directions = camera_rays(spec) @ camera_rotation(pose, spec).T.astype(np.float32)
        directions_per_view.append(directions.astype(np.float32, copy=False))
        origins_per_view.append(
            np.broadcast_to(camera_origin(pose, spec).astype(np.float32), directions.shape)
        )
    directions = np.concatenate(directions_per_view)
    origins = np.concatenate(origins_per_view)
    count = len(directions)
    rgb = np.empty((count, 3), dtype=np.uint8)
    depth = np.empty(count, dtype=np.float32)
    instance = np.empty(count, dtype=np.int32) if with_ground_truth_ids else None
    semantic = np.empty(count, dtype=np.int32) if with_ground_truth_ids else None

    def shade(chunk: slice) -> None:
        primitive, distance = scene.caster.cast(origins[chunk], directions[chunk])
        rgb[chunk], depth[chunk] = _shade(
            scene, origins[chunk], directions[chunk], primitive, distance
        )
        if instance is not None and semantic is not None:
            hit = primitive >= 0
            safe = np.where(hit, primitive, 0)
            instance[chunk] = np.where(hit, scene.face_instance[safe], 0)
            semantic[chunk] = np.where(hit, scene.face_semantic[safe], 0)

    run_chunked(count, shade)
    frames: dict[str, CameraFrame] = {}
    start = 0
    for spec in specs:
        stop = start + spec.width * spec.height
        shape = (spec.height, spec.width)
        frames[spec.name] = CameraFrame(
            spec=spec,
            rgb=rgb[start:stop].reshape(*shape, 3),
            depth=depth[start:stop].reshape(shape),
            instance_ids=None if instance is None else instance[start:stop].reshape(shape),
            semantic_ids=None if semantic is None else semantic[start:stop].reshape(shape),
        )
        start = stop
    return frames


def _shade(
    scene: EmbeddedScene,
    origins: np.ndarray,
    directions: np.ndarray,
    primitive: np.ndarray,
    distance: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Colours (uint8) and planar depths of one chunk of traced rays."""
    light = scene.lighting
    hit = primitive >= 0
    safe = np.where(hit, primitive, 0)
    length = np.sqrt(np.einsum("ij,ij->i", directions, directions))
    normal = scene.face_normal[safe]
    facing = np.einsum("ij,ij->i", normal, directions)
    sun = np.asarray(light.sun_direction, dtype=np.float32)
    # Surfaces are two-sided: light the side the ray sees.
    lambert = np.abs(normal @ sun) * ((normal @ sun) * facing < 0.0)
    brightness = light.ambient + (1.0 - light.ambient) * lambert
    colour = scene.face_colour[safe] * brightness[:, None]
    pattern = scene.face_pattern[safe]
    patterned = np.flatnonzero(hit & (pattern != 0))
    if len(patterned):
        colour[patterned] = _apply_patterns(
            colour[patterned],
            pattern[patterned],
            origins[patterned] + directions[patterned] * distance[patterned, None],
            normal[patterned],
        )
    horizon = np.asarray(light.sky_horizon, dtype=np.float32)
    haze = 1.0 - np.exp(-(distance * length) / light.haze_distance_m)
    colour += (horizon - colour) * haze[:, None]
    elevation = np.clip(directions[:, 2] / length, 0.0, 1.0) ** 0.6
    sky = horizon + (np.asarray(light.sky_zenith, dtype=np.float32) - horizon) * elevation[:, None]
    colour = np.where(hit[:, None], colour, sky)
    return (
        (np.clip(colour, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8),
        np.where(hit, distance, np.float32(np.inf)),
    )


def _apply_patterns(
    colour: np.ndarray, pattern: np.ndarray, points: np.ndarray, normal: np.ndarray
) -> np.ndarray:
    """Procedural detail: window grids on building walls, ripples on water."""
    windows = pattern == PATTERN_WINDOWS
    across = np.where(np.abs(normal[:, 0]) > np.abs(normal[:, 1]), points[:, 1], points[:, 0])
    floor_phase = np.mod(points[:, 2], _WINDOW_FLOOR_M) / _WINDOW_FLOOR_M
    bay_phase = np.mod(across, _WINDOW_BAY_M) / _WINDOW_BAY_M
    glass = (
        windows & (floor_phase > 0.3) & (floor_phase < 0.8) & (bay_phase > 0.2) & (bay_phase < 0.8)
    )
    colour = np.where(glass[:, None], colour * 0.35 + np.float32(0.08), colour)
    ripple = 0.92 + 0.08 * np.sin(points[:, 0] * 1.7 + np.sin(points[:, 1] * 0.9) * 2.0)
    return np.where((pattern == PATTERN_WATER)[:, None], colour * ripple[:, None], colour)
