"""RGB-D (and ground-truth id) rendering of an embedded scene by Embree ray casting."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from aerialdojo.errors import CameraConfigError
from aerialdojo.geometry import Pose, yaw_matrix
from aerialdojo.image_codec import message_array
from aerialdojo.sim.backend import CameraFrame, CameraSpec
from aerialdojo.sim.embedded.raycast import CHUNK_RAYS, run_in_pool
from aerialdojo.sim.embedded.world import PATTERN_WATER, PATTERN_WINDOWS, EmbeddedScene, Lighting

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
    rays = np.stack((np.ones_like(left), left, up), axis=-1).reshape(-1, 3).astype(np.float32)
    rays.setflags(write=False)
    return rays


def camera_rotation(pose: Pose, spec: CameraSpec) -> np.ndarray:
    """Rotation from the camera frame to the map frame."""
    return np.asarray(yaw_matrix(pose.yaw) @ spec.mount_rotation())


def camera_origin(pose: Pose, spec: CameraSpec) -> np.ndarray:
    """The camera's optical centre in the map frame."""
    return np.asarray(pose.position + pose.body_to_world(*spec.offset))


@dataclass(frozen=True)
class _ViewConstants:
    """Per-pixel values of a view that the body's yaw cannot change.

    Attributes:
        rays: (N, 3) directions in a body frame of yaw 0 (forward component 1 in the camera).
        lengths: (N,) their lengths.
        sky: (3, N) uint8 the sky's colour per channel as written into the image (what a
            miss shows).
        haze: (3, 1) the haze colour per channel in [0, 255] plus 0.5 for rounding.
    """

    rays: np.ndarray
    lengths: np.ndarray
    sky: np.ndarray
    haze: np.ndarray


@lru_cache(maxsize=32)
def _view_constants(spec: CameraSpec, lighting: Lighting) -> _ViewConstants:
    # A yaw turns rays about +z, which changes neither their length nor their elevation.
    rays = (camera_rays(spec) @ spec.mount_rotation().T).astype(np.float32)
    lengths = np.linalg.norm(rays, axis=1)
    elevation = np.clip(rays[:, 2] / lengths, 0.0, 1.0) ** 0.6
    horizon = haze_colour(lighting)
    zenith = np.asarray(lighting.sky_zenith, dtype=np.float32) * np.float32(255.0) + 0.5
    sky = horizon + (zenith - horizon) * elevation[:, None]
    # Truncated as the shaded pixels are: a miss blends the sky by a haze factor of 0.
    return _ViewConstants(
        rays,
        lengths.astype(np.float32),
        np.ascontiguousarray(sky.astype(np.float32).astype(np.uint8).T),
        horizon[:, None],
    )


@lru_cache(maxsize=8)
def _yawed_rays(spec: CameraSpec, lighting: Lighting, yaw: float) -> np.ndarray:
    """A view's ray directions in the map frame for a body at ``yaw``: computed once per
    heading (an agent keeps its heading for most steps), read-only."""
    body = _view_constants(spec, lighting).rays
    c, s = np.float32(math.cos(yaw)), np.float32(math.sin(yaw))
    directions = np.empty_like(body)
    directions[:, 0] = c * body[:, 0] - s * body[:, 1]
    directions[:, 1] = s * body[:, 0] + c * body[:, 1]
    directions[:, 2] = body[:, 2]
    directions.setflags(write=False)
    return directions


class _Scratch(threading.local):
    """Per-thread work buffers of the shading, kept between frames: the render threads shade
    every step's chunks into the same memory instead of allocating it again."""

    def __init__(self) -> None:
        self.capacity = 0

    def buffers(self, count: int) -> tuple[np.ndarray, ...]:
        """(3, count) float32 colour and uint8 channel planes, (count,) float32 haze, uint8
        patterns, bool misses and intp primitive indices, each contiguous."""
        if count > self.capacity:
            self.capacity = max(count, CHUNK_RAYS)
            self.colour = np.empty((3, self.capacity), dtype=np.float32)
            self.channels = np.empty((3, self.capacity), dtype=np.uint8)
            self.haze = np.empty(self.capacity, dtype=np.float32)
            self.pattern = np.empty(self.capacity, dtype=np.uint8)
            self.miss = np.empty(self.capacity, dtype=np.bool_)
            self.faces = np.empty(self.capacity, dtype=np.intp)
        return (
            self.colour[:, :count],
            self.channels[:, :count],
            self.haze[:count],
            self.pattern[:count],
            self.miss[:count],
            self.faces[:count],
        )


_SCRATCH = _Scratch()


@dataclass(frozen=True)
class _ShadingTables:
    """Per-primitive values a scene's shading gathers, derived once per scene.

    Attributes:
        lit_less_haze: (3, T + 1) float32 ``EmbeddedScene.lit_channels`` less the haze colour
            (``haze_colour``): the first step of the haze blend, done once per primitive
            instead of once per pixel (the same float32 subtraction, so the same values).
        patterned: some face has a procedural pattern; without one (the natural scenes)
            the shading skips the per-pixel pattern gather.
    """

    lit_less_haze: np.ndarray
    patterned: bool


# Keyed by the scene object itself (scenes compare by identity), dropped with the scene.
_TABLES: weakref.WeakKeyDictionary[EmbeddedScene, _ShadingTables] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def _shading_tables(scene: EmbeddedScene) -> _ShadingTables:
    with _TABLES_LOCK:
        tables = _TABLES.get(scene)
        if tables is None:
            lit_less_haze = scene.lit_channels - haze_colour(scene.lighting)[:, None]
            lit_less_haze.setflags(write=False)
            tables = _TABLES[scene] = _ShadingTables(
                lit_less_haze, bool(np.any(scene.face_pattern))
            )
        return tables


def haze_colour(lighting: Lighting) -> np.ndarray:
    """The horizon (and haze) colour in [0, 255], plus 0.5 for rounding."""
    colour = np.asarray(lighting.sky_horizon, dtype=np.float32) * np.float32(255.0)
    return np.asarray(colour + np.float32(0.5))


def render_views(
    scene: EmbeddedScene,
    pose: Pose,
    specs: Sequence[CameraSpec],
    *,
    with_ground_truth_ids: bool,
) -> dict[str, CameraFrame]:
    """Render each camera of a rig mounted on a body at ``pose``.

    All views are traced in chunks spread over the cores. RGB is the scene's sunlit face
    colour (Lambert, precomputed per face side) with procedural window and water detail,
    distance haze and a sky gradient; depth is planar depth along the optical axis in metres
    (+inf where a ray meets nothing).

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
    frames = {
        spec.name: CameraFrame(
            spec=spec,
            # In buffers an image message takes as they are: no copy between here and DDS.
            rgb=message_array((spec.height, spec.width, 3), np.uint8),
            depth=message_array((spec.height, spec.width), np.float32),
            instance_ids=np.empty((spec.height, spec.width), dtype=np.int32)
            if with_ground_truth_ids
            else None,
            semantic_ids=np.empty((spec.height, spec.width), dtype=np.int32)
            if with_ground_truth_ids
            else None,
        )
        for spec in specs
    }
    jobs = [
        (spec, slice(start, min(start + CHUNK_RAYS, spec.width * spec.height)))
        for spec in specs
        for start in range(0, spec.width * spec.height, CHUNK_RAYS)
    ]
    # Looked up here, once per view, not by every chunk's thread.
    directions = {spec.name: _yawed_rays(spec, scene.lighting, pose.yaw) for spec in specs}
    origins = {spec.name: camera_origin(pose, spec).astype(np.float32) for spec in specs}
    tables = _shading_tables(scene)

    def trace(job: tuple[CameraSpec, slice]) -> None:
        spec, pixels = job
        _render_chunk(
            scene,
            tables,
            frames[spec.name],
            pixels,
            directions[spec.name][pixels],
            origins[spec.name],
        )

    run_in_pool(trace, jobs)
    return frames


def _render_chunk(
    scene: EmbeddedScene,
    tables: _ShadingTables,
    frame: CameraFrame,
    pixels: slice,
    directions: np.ndarray,
    origin: np.ndarray,
) -> None:
    """Trace and shade one run of pixels of one view into ``frame``, casting ``directions``
    (those pixels' rays in the map frame) from ``origin``."""
    light = scene.lighting
    constants = _view_constants(frame.spec, light)
    depth = frame.depth.reshape(-1)[pixels]
    # Embree writes each hit's distance into the depth image itself and leaves a miss's
    # starting value: infinity is a miss's depth, and its haze factor exp(-inf) is 0.
    depth.fill(np.inf)
    primitive = scene.caster.cast(
        np.broadcast_to(origin, directions.shape), directions, distances=depth
    ).primitive
    colour, channels, haze, pattern, miss, faces = _SCRATCH.buffers(len(primitive))
    # np.take converts int32 indices to intp on every call: converted once for all gathers.
    np.copyto(faces, primitive)
    # Shaded as three channel planes, so that every numpy pass runs along the pixels (on
    # interleaved RGB a per-channel operand makes numpy loop over rows of three). Gathered
    # straight by primitive: the tables' last entry (index -1, which mode "wrap" takes as
    # it is) is a miss's.
    for channel in range(3):
        np.take(tables.lit_less_haze[channel], faces, out=colour[channel], mode="wrap")
    if tables.patterned:
        np.take(scene.pattern_or_miss, faces, out=pattern, mode="wrap")
        patterned = np.flatnonzero(pattern)
        if len(patterned):
            hit = faces[patterned]
            colour[:, patterned] = _apply_patterns(
                scene.lit_channels[:, hit].T,
                pattern[patterned],
                origin + directions[patterned] * depth[patterned, None],
                scene.face_normal[hit],
            ).T
            colour[:, patterned] -= constants.haze
    np.multiply(depth, constants.lengths[pixels], out=haze)
    haze *= np.float32(-1.0 / light.haze_distance_m)
    np.exp(haze, out=haze)
    # Every pixel blends from the haze colour in place; a miss's haze factor is 0, so its
    # pixel is then the haze colour, and the sky's is written over it. Truncated to bytes
    # (astype's cast) in contiguous planes, where numpy's cast is vectorised, and then
    # interleaved into the frame: a cast straight into the frame's strided channels is slower.
    colour *= haze
    colour += constants.haze
    np.copyto(channels, colour, casting="unsafe")
    np.less(primitive, 0, out=miss)
    rgb = frame.rgb.reshape(-1, 3)[pixels]
    for channel in range(3):
        # Masked per channel: a mask broadcast over the three planes, or fancy indexing by
        # the misses' positions, is several times slower in numpy.
        np.copyto(channels[channel], constants.sky[channel, pixels], where=miss)
        np.copyto(rgb[:, channel], channels[channel])
    if frame.instance_ids is not None and frame.semantic_ids is not None:
        for table, image in (
            (scene.instance_or_miss, frame.instance_ids),
            (scene.semantic_or_miss, frame.semantic_ids),
        ):
            np.take(table, faces, out=image.reshape(-1)[pixels], mode="wrap")


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
    colour = np.where(glass[:, None], colour * 0.35 + np.float32(20.0), colour)
    ripple = 0.92 + 0.08 * np.sin(points[:, 0] * 1.7 + np.sin(points[:, 1] * 0.9) * 2.0)
    return np.asarray(
        np.where((pattern == PATTERN_WATER)[:, None], colour * ripple[:, None], colour)
    )
