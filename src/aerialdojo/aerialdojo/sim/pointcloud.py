"""``PointCloudBackend``: RGB-D from coloured point clouds, such as the SensatUrban scans
CityNav's cities come from (CityNav, section 3.1, "3D Scan Data").

A scene is a PLY file with ``x y z red green blue`` vertex properties (SensatUrban adds a
``class``, which is ignored): ``<pointcloud_dir>/**/<scene>.ply``, e.g.
``ply/train/cambridge_block_2.ply``. The cloud is thinned to one point per voxel (mean
position and colour) and each point is splatted as three small squares, one facing each
axis, so that a ray from any direction meets it; Embree traces the splats. A ray meets a
horizontal square at the point's own height, so nadir depth is exact; a sideways ray meets
a vertical square through the point. Colours are the scan's own, unshaded.

Odometry is global (GNSS, section 3.1). A motion stops short of the first splat on its
path (a collision, which CityNav's referee holds, not ends) and at the edge of the cloud or
200 m above its ground (a geofence).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import trimesh

from aerialdojo.actions import STOP, Action, target_pose
from aerialdojo.errors import ConfigError, InvalidActionError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.backend import (
    BackendOptions,
    CameraFrame,
    CameraSpec,
    LocalBackend,
    MotionOutcome,
    Observation,
    nadir_rig,
)
from aerialdojo.sim.embedded.raycast import RayCaster
from aerialdojo.sim.embedded.renderer import camera_origin, camera_rays, camera_rotation

#: Height above the cloud's ground the UAV may not exceed (CityNav, section 3.1: 200 m).
CEILING_M = 200.0
#: Percentile of the points' heights taken as the ground.
GROUND_PERCENTILE = 2.0
#: Clearance kept from the splats a motion would run into, metres.
CLEARANCE_M = 1.0
#: A splat square's edge, in voxels: a little over one, so neighbours leave no gaps.
SPLAT_SCALE = 1.25
_BACKGROUND = np.array((200, 214, 232), dtype=np.uint8)


def load_point_cloud(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Positions (N, 3 float64) and colours (N, 3 uint8) of a coloured PLY point cloud.

    Raises:
        ConfigError: unreadable, not a point cloud, or without colours.
    """
    try:
        loaded = trimesh.load(path, force=None)
    except (OSError, ValueError) as error:
        raise ConfigError(f"{path}: cannot read the point cloud: {error}") from error
    if not isinstance(loaded, trimesh.PointCloud) or not len(loaded.vertices):
        raise ConfigError(f"{path}: not a point cloud (a PLY of vertices with colours)")
    colours = np.asarray(loaded.colors)
    if colours.shape != (len(loaded.vertices), 4):
        raise ConfigError(f"{path}: the points have no red, green and blue properties")
    return np.asarray(loaded.vertices, dtype=np.float64), colours[:, :3].astype(np.uint8)


def thin(points: np.ndarray, colours: np.ndarray, voxel_m: float) -> tuple[np.ndarray, np.ndarray]:
    """One point per occupied voxel: the mean position and colour of its points."""
    keys = np.floor(points / voxel_m).astype(np.int64)
    _, inverse, counts = np.unique(keys, axis=0, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    means = np.stack([np.bincount(inverse, points[:, k]) for k in range(3)], axis=1)
    tints = np.stack([np.bincount(inverse, colours[:, k].astype(np.float64)) for k in range(3)], 1)
    return means / counts[:, None], np.round(tints / counts[:, None]).astype(np.uint8)


def splats(points: np.ndarray, size: float) -> tuple[np.ndarray, np.ndarray]:
    """Vertices (12 N, 3) and triangles (6 N, 3) of three axis-facing squares per point;
    triangle ``t`` belongs to point ``t // 6``."""
    half = size / 2.0
    corners = np.array(((-1, -1), (1, -1), (1, 1), (-1, 1)), dtype=np.float64) * half
    squares = []
    for normal in range(3):
        u, v = [axis for axis in range(3) if axis != normal]
        offsets = np.zeros((4, 3))
        offsets[:, u], offsets[:, v] = corners[:, 0], corners[:, 1]
        squares.append(offsets)
    offsets = np.concatenate(squares)  # (12, 3): square k's corners are rows 4k .. 4k + 3
    vertices = (points[:, None, :] + offsets[None, :, :]).reshape(-1, 3)
    quad = np.array(((0, 1, 2), (0, 2, 3)))
    local = np.concatenate([quad + 4 * k for k in range(3)])  # (6, 3)
    faces = (np.arange(len(points))[:, None, None] * 12 + local[None]).reshape(-1, 3)
    return vertices, faces


@dataclass(frozen=True)
class PointCloudScene:
    """A loaded, splatted point cloud.

    Attributes:
        name: the scene (the PLY's stem).
        caster: Embree over the splats.
        colours: (N, 3) uint8 colour of each thinned point.
        bounds_min: lowest corner of the cloud.
        bounds_max: highest corner of the cloud.
        ground_z: the ground height (a low percentile of the points' heights).
    """

    name: str
    caster: RayCaster
    colours: np.ndarray
    bounds_min: np.ndarray
    bounds_max: np.ndarray
    ground_z: float


def build_scene(
    name: str, points: np.ndarray, colours: np.ndarray, voxel_m: float
) -> PointCloudScene:
    """Thin, splat and index a cloud."""
    centres, tints = thin(points, colours, voxel_m)
    vertices, faces = splats(centres, voxel_m * SPLAT_SCALE)
    return PointCloudScene(
        name=name,
        caster=RayCaster(vertices, faces),
        colours=tints,
        bounds_min=points.min(axis=0),
        bounds_max=points.max(axis=0),
        ground_z=float(np.percentile(points[:, 2], GROUND_PERCENTILE)),
    )


def render_view(scene: PointCloudScene, pose: Pose, spec: CameraSpec) -> CameraFrame:
    """RGB and planar depth (+inf where no splat was hit) of one camera."""
    rays = camera_rays(spec) @ camera_rotation(pose, spec).T.astype(np.float32)
    directions = np.ascontiguousarray(rays, dtype=np.float32)
    origin = camera_origin(pose, spec).astype(np.float32)
    hits = scene.caster.cast(np.broadcast_to(origin, directions.shape).copy(), directions)
    hit = hits.primitive >= 0
    colour = np.where(
        hit[:, None], scene.colours[np.where(hit, hits.primitive // 6, 0)], _BACKGROUND
    )
    depth = np.where(hit, hits.distance, np.float32(np.inf)).astype(np.float32)
    return CameraFrame(
        spec=spec,
        rgb=colour.reshape(spec.height, spec.width, 3).astype(np.uint8),
        depth=depth.reshape(spec.height, spec.width),
    )


class PointCloudBackend(LocalBackend):
    """Flies agents through coloured point clouds.

    Args:
        directory: searched recursively for ``<scene>.ply``.
        voxel_m: edge of the voxels the clouds are thinned to.
        rigs: camera rig per agent (``camera_rigs``).
        seconds_per_action: simulated time one action takes.

    Raises:
        ConfigError: no directory, or a non-positive voxel or action duration.
    """

    global_localization = True

    @classmethod
    def camera_rigs(
        cls, agents: Sequence[str], width: int, height: int, fov_deg: float
    ) -> dict[str, list[CameraSpec]]:
        """The nadir view for every agent (its 90 deg field of view is the benchmark's)."""
        return {agent: nadir_rig(width, height) for agent in agents}

    @classmethod
    def from_options(cls, options: BackendOptions) -> PointCloudBackend:
        return cls(
            directory=str(options.parameters.get("pointcloud_dir", "")),
            voxel_m=float(options.parameters.get("pointcloud_voxel_m", 0.5)),
            rigs=options.rigs(cls),
            seconds_per_action=options.seconds_per_action,
        )

    def __init__(
        self,
        *,
        directory: str | Path,
        voxel_m: float = 0.5,
        rigs: Mapping[str, Sequence[CameraSpec]],
        seconds_per_action: float = 1.0,
    ) -> None:
        super().__init__(rigs=rigs, seconds_per_action=seconds_per_action)
        if not str(directory) or not Path(directory).is_dir():
            raise ConfigError(
                f"sim_bridge.pointcloud_dir: {str(directory)!r} is not a directory of .ply files"
            )
        if voxel_m <= 0.0:
            raise ConfigError(f"sim_bridge.pointcloud_voxel_m: {voxel_m} must be positive")
        self.directory = Path(directory)
        self.voxel_m = voxel_m
        self._cache: dict[str, PointCloudScene] = {}
        self._scene: PointCloudScene | None = None

    def _files(self) -> dict[str, Path]:
        return {path.stem: path for path in sorted(self.directory.rglob("*.ply"))}

    def scenes(self) -> list[str]:
        return sorted(self._files())

    @property
    def scene(self) -> PointCloudScene:
        """The loaded scene.

        Raises:
            InvalidActionError: ``reset`` has not loaded one yet.
        """
        if self._scene is None:
            raise InvalidActionError("no point cloud loaded: call reset(scene, poses) first")
        return self._scene

    def reset(self, scene: str, poses: dict[str, Pose]) -> None:
        """Load ``<scene>.ply`` (cached) and place the agents; the clock restarts at 0.

        Raises:
            UnknownSceneError: no such file under the directory.
            ConfigError: an unreadable cloud or an agent without a rig.
        """
        self._check_rigged(poses)
        if scene not in self._cache:
            path = self._files().get(scene)
            if path is None:
                raise UnknownSceneError(
                    f"no {scene}.ply under {self.directory}; clouds: {', '.join(self.scenes())}"
                )
            points, colours = load_point_cloud(path)
            self._cache[scene] = build_scene(scene, points, colours, self.voxel_m)
        self._scene = self._cache[scene]
        self._place(poses)

    def execute(self, agent: str, action: Action, argument: str = "") -> MotionOutcome:
        """Move ``agent``: stopped short of a splat (collision) or at the cloud's edge or
        ceiling (geofence)."""
        pose = self.pose(agent)
        outcome = MotionOutcome(pose=pose)
        if action.name != STOP:
            goal = target_pose(pose, action)
            outcome = self._motion(pose, goal)
        self._moved(agent, outcome.pose)
        return outcome

    def _motion(self, pose: Pose, goal: Pose) -> MotionOutcome:
        scene = self.scene
        start, end = pose.position, goal.position
        low = np.array((*scene.bounds_min[:2], scene.ground_z + CLEARANCE_M))
        high = np.array((*scene.bounds_max[:2], scene.ground_z + CEILING_M))
        clipped = np.clip(end, low, high)
        geofenced = bool(np.any(clipped != end))
        travel = clipped - start
        length = float(np.linalg.norm(travel))
        if length > 0.0:
            direction = (travel / length).astype(np.float32)
            hits = scene.caster.cast(start[None].astype(np.float32), direction[None])
            if hits.primitive[0] >= 0 and hits.distance[0] < length + CLEARANCE_M:
                reach = max(float(hits.distance[0]) - CLEARANCE_M, 0.0)
                stop = start + travel / length * reach
                return MotionOutcome(
                    pose=Pose.from_position(stop, goal.yaw),
                    collided=True,
                    collision_object=f"{scene.name} point cloud",
                )
        return MotionOutcome(pose=Pose.from_position(clipped, goal.yaw), geofenced=geofenced)

    def observe(self, agent: str, with_ground_truth_ids: bool = False) -> Observation:
        pose = self.pose(agent)
        frames = {spec.name: render_view(self.scene, pose, spec) for spec in self.cameras(agent)}
        return Observation(sim_time_s=self.sim_time_s, pose=pose, frames=frames)

    def close(self) -> None:
        """Drop every cached cloud."""
        self._cache.clear()
        self._scene = None
        super().close()
