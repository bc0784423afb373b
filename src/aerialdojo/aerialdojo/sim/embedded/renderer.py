"""RGB-D (and ground-truth id) rendering of an embedded scene by Embree ray casting."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import lru_cache
from itertools import islice

import numpy as np

from aerialdojo.errors import CameraConfigError
from aerialdojo.geometry import Pose, yaw_matrix
from aerialdojo.image_codec import message_array
from aerialdojo.sim.backend import CameraFrame, CameraSpec
from aerialdojo.sim.embedded.raycast import CHUNK_RAYS, WORKERS, submit_to_pool
from aerialdojo.sim.embedded.world import EmbeddedScene, Lighting


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
    """

    rays: np.ndarray
    lengths: np.ndarray
    sky: np.ndarray


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

    def buffers(self, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(count,) float32 haze factors and intp positions of water pixels."""
        if count > self.capacity:
            self.capacity = max(count, CHUNK_RAYS)
            self.haze = np.empty(self.capacity, dtype=np.float32)
            self.patterned = np.empty(self.capacity, dtype=np.intp)
        return self.haze[:count], self.patterned[:count]


_SCRATCH = _Scratch()
# What the shading kernel takes for id images when a frame has none.
_NO_IDS = np.empty(0, dtype=np.int32)


@dataclass(frozen=True)
class _ShadingTables:
    """Per-primitive values a scene's shading gathers, derived once per scene.

    Attributes:
        lit_less_haze: (3, T + 1) float32 ``EmbeddedScene.lit_channels`` less the haze colour
            (``haze_colour``): the first step of the haze blend, done once per primitive
            instead of once per pixel (the same float32 subtraction, so the same values).
        haze_colour: (3,) float32 ``haze_colour``, contiguous for the shading kernel.
    """

    lit_less_haze: np.ndarray
    haze_colour: np.ndarray


# Keyed by the scene object itself (scenes compare by identity), dropped with the scene.
_TABLES: weakref.WeakKeyDictionary[EmbeddedScene, _ShadingTables] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def _shading_tables(scene: EmbeddedScene) -> _ShadingTables:
    with _TABLES_LOCK:
        tables = _TABLES.get(scene)
        if tables is None:
            haze = haze_colour(scene.lighting)
            lit_less_haze = scene.lit_channels - haze[:, None]
            lit_less_haze.setflags(write=False)
            haze.setflags(write=False)
            tables = _TABLES[scene] = _ShadingTables(lit_less_haze, haze)
        return tables


def haze_colour(lighting: Lighting) -> np.ndarray:
    """The horizon (and haze) colour in [0, 255], plus 0.5 for rounding."""
    colour = np.asarray(lighting.sky_horizon, dtype=np.float32) * np.float32(255.0)
    return np.asarray(colour + np.float32(0.5))


def render_views(
    scene: EmbeddedScene, pose: Pose, specs: Sequence[CameraSpec], *, with_ground_truth_ids: bool
) -> dict[str, CameraFrame]:
    """Render each camera of a rig mounted on a body at ``pose`` (``start_rendering``, waited
    for)."""
    return start_rendering(scene, pose, specs, with_ground_truth_ids=with_ground_truth_ids).finish()


@dataclass(frozen=True)
class RenderingViews:
    """A rig's views whose ray chunks are queued on the shared pool (``start_rendering``).

    Attributes:
        frames: each view's frame, by camera name in the rig's order; final once ``finish``
            waited for it.
        chunks: each view's chunks' futures, in the same order.
    """

    frames: dict[str, CameraFrame]
    chunks: tuple[list[Future[None]], ...]

    def finish(
        self, on_view: Callable[[CameraFrame], None] | None = None
    ) -> dict[str, CameraFrame]:
        """Wait for every view in the rig's order; ``on_view``, if given, gets each on the
        calling thread as soon as its pixels are final, while the later views still render
        (the bridge publishes a view an agent waits for meanwhile). Raises what a chunk or
        ``on_view`` raised."""
        for frame, futures in zip(self.frames.values(), self.chunks, strict=True):
            for future in futures:
                future.result()
            if on_view is not None:
                on_view(frame)
        return self.frames


def start_rendering(
    scene: EmbeddedScene, pose: Pose, specs: Sequence[CameraSpec], *, with_ground_truth_ids: bool
) -> RenderingViews:
    """Start rendering each camera of a rig mounted on a body at ``pose``, and return at once.

    The views are traced one after another, each in chunks spread over the cores, so the
    first view is done first. The chunks queue on the shared pool behind any started before:
    a second rig started while the first still renders keeps the cores busy from one to the
    other. Everything a chunk reads is fixed here (the pose, the rays, the scene, which no
    call changes once loaded).

    RGB is the scene's sunlit face colour (Lambert, precomputed per face side) with
    procedural window and water detail, distance haze and a sky gradient; depth is planar
    depth along the optical axis in metres (+inf where a ray meets nothing).

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
    chunks = {spec.name: _view_chunks(spec) for spec in specs}
    jobs = [(spec, pixels) for spec in specs for pixels in chunks[spec.name]]
    # Looked up here, once per view, not by every chunk's thread.
    directions = {spec.name: _yawed_rays(spec, scene.lighting, pose.yaw) for spec in specs}
    origins = {spec.name: camera_origin(pose, spec).astype(np.float32) for spec in specs}
    tables = _shading_tables(scene)
    # Imported on the first frame: numba's import costs a process about 0.3 CPU s, which
    # the modules that only read the camera geometry here need not pay.
    from aerialdojo.sim.embedded.shading_kernel import shade_chunk  # noqa: PLC0415

    def trace(job: tuple[CameraSpec, slice]) -> None:
        spec, pixels = job
        _render_chunk(
            scene,
            frames[spec.name],
            pixels,
            directions[spec.name][pixels],
            origins[spec.name],
            tables=tables,
            shade_chunk=shade_chunk,
        )

    futures = iter(submit_to_pool(trace, jobs))
    # The jobs are in view order: each view's are the next ones.
    return RenderingViews(
        frames, tuple(list(islice(futures, len(chunks[spec.name]))) for spec in specs)
    )


def _view_chunks(spec: CameraSpec) -> list[slice]:
    """A view's pixels in runs for the thread pool: at most ``CHUNK_RAYS`` each, and at least
    one per core, so that every core works on the first view before any starts the next."""
    count = spec.width * spec.height
    size = min(CHUNK_RAYS, -(-count // WORKERS))
    return [slice(start, min(start + size, count)) for start in range(0, count, size)]


def _render_chunk(
    scene: EmbeddedScene,
    frame: CameraFrame,
    pixels: slice,
    directions: np.ndarray,
    origin: np.ndarray,
    *,
    tables: _ShadingTables,
    shade_chunk: Callable[..., int],
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
    haze, patterned = _SCRATCH.buffers(len(primitive))
    np.multiply(depth, constants.lengths[pixels], out=haze)
    haze *= np.float32(-1.0 / light.haze_distance_m)
    np.exp(haze, out=haze)
    rgb = frame.rgb.reshape(-1, 3)[pixels]
    ids = (
        (frame.instance_ids.reshape(-1)[pixels], frame.semantic_ids.reshape(-1)[pixels])
        if frame.instance_ids is not None and frame.semantic_ids is not None
        else (_NO_IDS, _NO_IDS)
    )
    # One compiled pass: colour and id gathers, window grid, haze blend, cast to bytes, sky.
    count = shade_chunk(
        primitive,
        haze,
        tables.lit_less_haze,
        tables.haze_colour,
        constants.sky[:, pixels],
        rgb,
        scene.pattern_or_miss,
        scene.lit_channels,
        scene.face_normal,
        origin,
        directions,
        depth,
        patterned,
        scene.instance_or_miss,
        scene.semantic_or_miss,
        *ids,
    )
    if count:
        _shade_water(
            scene,
            patterned[:count],
            tables=tables,
            rgb=rgb,
            primitive=primitive,
            directions=directions,
            depth=depth,
            origin=origin,
            haze=haze,
        )


def _shade_water(
    scene: EmbeddedScene,
    positions: np.ndarray,
    *,
    tables: _ShadingTables,
    rgb: np.ndarray,
    primitive: np.ndarray,
    directions: np.ndarray,
    depth: np.ndarray,
    origin: np.ndarray,
    haze: np.ndarray,
) -> None:
    """Ripples on water at the hits of a chunk that the shading kernel left (``positions``),
    blended as the kernel blends. In numpy, whose vectorised float32 sin the images were
    made with, on channel planes: per pixel the same float32 operations as the (N, 3) rows
    it replaced."""
    faces = primitive[positions]
    colour = scene.lit_channels[:, faces]
    distance = depth[positions]
    rays = directions[positions]
    x, y = (origin[axis] + rays[:, axis] * distance for axis in range(2))
    colour *= 0.92 + 0.08 * np.sin(x * 1.7 + np.sin(y * 0.9) * 2.0)
    haze_colour = tables.haze_colour[:, None]
    colour -= haze_colour
    colour *= haze[positions]
    colour += haze_colour
    rgb[positions] = colour.T.astype(np.uint8)
