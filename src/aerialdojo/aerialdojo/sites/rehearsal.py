"""Rehearsal sites: an embedded scene surveyed as a team surveys a real place, so that the
same suite runs on the embedded simulator, on the simulated robot and, rebuilt from a real
survey, on a robot (docs/sites.md, "A rehearsal site").

The "photographs" of a rehearsal site are the scene rendered where a person would stand to
photograph each target, 4:3 like a phone's picture, and stored as JPEG.
"""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
from PIL import Image

from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.sim.embedded.renderer import render_views
from aerialdojo.sim.embedded.world import EmbeddedScene

PHOTO_WIDTH = 640
PHOTO_HEIGHT = 480
#: A phone's main camera, horizontally.
PHOTO_FOV_DEG = 70.0
PHOTO_QUALITY = 90
_EYE_HEIGHT_M = 1.6
_MIN_PHOTO_DISTANCE_M = 3.0
_PHOTOGRAPHER_RADIUS_M = 0.3


def photo_viewpoint(scene: EmbeddedScene, target: TargetObject) -> tuple[Pose, CameraSpec]:
    """Where a person would photograph ``target`` from: standing back from it on the side
    of its anchor, far enough to see it whole (1.5 times its width, at least 3 m), the
    camera at eye height (1.6 m above the object's base), facing and pitched at its
    centre; closer where a wall is in the way, at the anchor if nowhere else is free."""
    centre = np.asarray(target.centroid, dtype=np.float64)
    anchor = target.anchor.position
    away = anchor[:2] - centre[:2]
    if not np.any(away):
        away = -np.array((math.cos(target.anchor.yaw), math.sin(target.anchor.yaw)))
    away /= np.linalg.norm(away)
    width = max(b - a for a, b in zip(target.bbox_min[:2], target.bbox_max[:2], strict=True))
    eye = target.bbox_min[2] + _EYE_HEIGHT_M
    position = anchor
    for distance in np.arange(max(1.5 * width, _MIN_PHOTO_DISTANCE_M), 0.0, -0.5):
        candidate = np.array((*(centre[:2] + distance * away), eye))
        if scene.collision.sphere_is_free(candidate, _PHOTOGRAPHER_RADIUS_M):
            position = candidate
            break
    offset = centre - position
    yaw = math.atan2(offset[1], offset[0])
    pitch = math.degrees(math.atan2(offset[2], math.hypot(offset[0], offset[1])))
    camera = CameraSpec(
        name="photo", width=PHOTO_WIDTH, height=PHOTO_HEIGHT, fov_deg=PHOTO_FOV_DEG, pitch_deg=pitch
    )
    return Pose.from_position(position, yaw), camera


def photograph(scene: EmbeddedScene, target: TargetObject) -> Image.Image:
    """The scene seen from ``photo_viewpoint``, ``PHOTO_WIDTH`` x ``PHOTO_HEIGHT``."""
    pose, camera = photo_viewpoint(scene, target)
    frame = render_views(scene, pose, [camera], with_ground_truth_ids=False)[camera.name]
    return Image.fromarray(frame.rgb, mode="RGB")


def photograph_bytes(scene: EmbeddedScene, target: TargetObject) -> bytes:
    """``photograph`` as the JPEG file a rehearsal site keeps."""
    buffer = io.BytesIO()
    photograph(scene, target).save(buffer, format="JPEG", quality=PHOTO_QUALITY)
    return buffer.getvalue()


def write_photographs(scene: EmbeddedScene, targets: dict[str, str], directory: Path) -> list[Path]:
    """Write ``<site target id>.jpg`` for each (site target id -> scene object id) pair."""
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for target_id, object_id in targets.items():
        path = directory / f"{target_id}.jpg"
        path.write_bytes(photograph_bytes(scene, scene.annotations.object_by_id(object_id)))
        written.append(path)
    return written
