"""PNG montages of a scene: the four UAV views from a representative pose and a nadir overview."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from aerialdojo.errors import CameraConfigError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import CameraSpec, aerialdojo_uav_rig
from aerialdojo.sim.embedded.renderer import render_views
from aerialdojo.sim.embedded.scenes import EmbeddedScene, load_scene

_VIEW_ORDER = ("left", "front", "right", "down")
_ALTITUDE_M = 22.0
_STANDOFF_M = 45.0


def representative_pose(scene: EmbeddedScene) -> Pose:
    """A free pose ``_ALTITUDE_M`` (or higher, if that is blocked) above the ground,
    ``_STANDOFF_M`` from the first landmark towards the scene centre, facing the landmark
    (every scene has landmarks)."""
    landmark = np.asarray(scene.annotations.landmarks[0].position)
    towards_centre = -landmark[:2]
    norm = float(np.linalg.norm(towards_centre))
    offset = towards_centre / norm if norm > 1.0 else np.array((0.0, -1.0))
    x, y = landmark[:2] + offset * _STANDOFF_M
    ground = _ground_below(scene, float(x), float(y))
    yaw = math.atan2(-offset[1], -offset[0])
    altitude = ground + _ALTITUDE_M
    while altitude < scene.annotations.bounds_max[2] and not scene.sphere_is_free(
        np.array((x, y, altitude)), 1.0
    ):
        altitude += 2.0
    return Pose(float(x), float(y), altitude, yaw)


def _ground_below(scene: EmbeddedScene, x: float, y: float) -> float:
    top = scene.annotations.bounds_max[2] + 50.0
    primitive, distance, _ = scene.caster.cast(
        np.array([(x, y, top)], dtype=np.float32), np.array([(0.0, 0.0, -1.0)], dtype=np.float32)
    )
    return top - float(distance[0]) if primitive[0] >= 0 else 0.0


def write_montage(scene: str, out: Path, *, seed: int = 0, size: int = 320) -> Path:
    """Render ``scene`` and write a PNG: left, front, right and down UAV views from
    ``representative_pose`` and a nadir overview of the whole scene, each ``size`` pixels.

    Args:
        scene: scene name, e.g. ``"Harbor_1"``.
        out: PNG path to write (parent directories are created).
        seed: scene generation seed.
        size: edge length of each tile in pixels.

    Raises:
        UnknownSceneError: no such scene.
        CameraConfigError: ``size`` is not positive.
    """
    _check_tile_size(size)
    return write_scene_montage(load_scene(scene, seed), out, size=size)


def _check_tile_size(size: int) -> None:
    if size <= 0:
        raise CameraConfigError(f"montage tile size {size} must be positive")


def write_scene_montage(loaded: EmbeddedScene, out: Path, *, size: int = 320) -> Path:
    """``write_montage`` of a scene already loaded (an AGOS town's, for one).

    Raises:
        CameraConfigError: ``size`` is not positive.
    """
    _check_tile_size(size)
    views = render_views(
        loaded,
        representative_pose(loaded),
        aerialdojo_uav_rig(size, size),
        with_ground_truth_ids=False,
    )
    half = loaded.annotations.bounds_max[0]
    overview_height = loaded.annotations.bounds_max[2] + half
    nadir = CameraSpec(name="nadir", width=size, height=size, fov_deg=90.0, pitch_deg=-90.0)
    overview = render_views(
        loaded, Pose(0.0, 0.0, overview_height, math.pi / 2.0), [nadir], with_ground_truth_ids=False
    )["nadir"]
    tiles = [views[name].rgb for name in _VIEW_ORDER] + [overview.rgb]
    image = Image.fromarray(np.concatenate(tiles, axis=1))
    draw = ImageDraw.Draw(image)
    scene = loaded.annotations.scene
    for index, label in enumerate((*_VIEW_ORDER, f"{scene} overview")):
        draw.text((index * size + 6, 4), label, fill=(255, 255, 255))
    out.parent.mkdir(parents=True, exist_ok=True)
    image.save(out)
    return out
