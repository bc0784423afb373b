"""Ground-truth visibility in a town: what the benchmark checker and the evaluator judge
(AGOS-Bench, appendix A.2: oracle-visible aerial observations, six-view support, line of sight)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraSpec
from aerialdojo.sim.embedded.renderer import camera_origin, camera_rotation
from aerialdojo.sim.embedded.world import EmbeddedScene


def sample_points(target: TargetObject) -> np.ndarray:
    """(9, 3) points of a target's box: the top centre, the centre, and the centres of its
    four sides at two heights (seeing any of them unobstructed means seeing the target)."""
    low, high = np.asarray(target.bbox_min), np.asarray(target.bbox_max)
    centre = (low + high) / 2.0
    half = (high - low) / 2.0 * 0.9
    points = [(centre[0], centre[1], high[2] - 0.05), tuple(centre)]
    for height in (low[2] + 0.3 * (high[2] - low[2]), low[2] + 0.7 * (high[2] - low[2])):
        for dx, dy in ((half[0], 0.0), (-half[0], 0.0), (0.0, half[1]), (0.0, -half[1])):
            points.append((centre[0] + dx, centre[1] + dy, height))
    return np.asarray(points, dtype=np.float64)


def in_frustum(
    points: np.ndarray, pose: Pose, spec: CameraSpec, max_range_m: float
) -> tuple[np.ndarray, np.ndarray]:
    """The camera's origin, and which of ``points`` lie in its frustum: at least 0.1 m ahead,
    within ``max_range_m`` (occlusion is the caller's)."""
    origin = camera_origin(pose, spec)
    local = (points - origin) @ camera_rotation(pose, spec)  # rows: (fwd, left, up)
    half_width = math.tan(math.radians(spec.fov_deg) / 2.0)
    half_height = half_width * spec.height / spec.width
    forward = local[:, 0]
    inside = (
        (forward > 0.1)
        & (np.abs(local[:, 1]) <= half_width * forward)
        & (np.abs(local[:, 2]) <= half_height * forward)
        & (np.linalg.norm(points - origin, axis=1) <= max_range_m)
    )
    return origin, inside


class TownOracle:
    """Answers visibility questions by ray casting against the town's own geometry.

    Args:
        scene: the loaded town scene.
    """

    def __init__(self, scene: EmbeddedScene) -> None:
        self._scene = scene

    def unobstructed(self, eye: Sequence[float] | np.ndarray, target: TargetObject) -> np.ndarray:
        """Which of ``sample_points(target)`` the first surface seen from ``eye`` belongs to."""
        points = sample_points(target)
        origin = np.asarray(eye, dtype=np.float64)
        directions = points - origin
        hits = self._scene.caster.cast(
            np.broadcast_to(origin, directions.shape).astype(np.float32),
            directions.astype(np.float32),
        )
        hit = hits.primitive >= 0
        instance = np.where(hit, self._scene.face_instance[np.where(hit, hits.primitive, 0)], 0)
        # Rays are scaled to reach their point at t = 1; the target's own surface may be hit
        # just before the sample point, anything else in between hides it.
        return np.asarray(hit & (instance == target.instance_id) & (hits.distance <= 1.0 + 1e-3))

    def line_of_sight(self, eye: Sequence[float] | np.ndarray, target: TargetObject) -> bool:
        """Whether some part of ``target`` is seen unobstructed from ``eye``."""
        return bool(self.unobstructed(eye, target).any())

    def visible_in_views(
        self,
        pose: Pose,
        cameras: Sequence[CameraSpec],
        target: TargetObject,
        max_range_m: float = math.inf,
    ) -> bool:
        """Whether ``target`` appears in any of ``cameras`` mounted on a body at ``pose``:
        some sample point inside a view's frustum, unobstructed, within ``max_range_m``."""
        points = sample_points(target)
        for spec in cameras:
            origin, inside = in_frustum(points, pose, spec, max_range_m)
            if np.any(inside & self.unobstructed(origin, target)):
                return True
        return False
