"""Suite generation on the embedded simulator's scenes (``aerialdojo tasks generate``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aerialdojo.errors import ConfigError, UnknownSceneError
from aerialdojo.geometry import Pose
from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.backend import CameraFrame, CameraSpec, aerialdojo_uav_rig
from aerialdojo.sim.embedded.renderer import render_views
from aerialdojo.sim.embedded.scenes import EmbeddedScene, load_scene, scene_names
from aerialdojo.tasks.capsules import CapsuleScreen
from aerialdojo.tasks.episode import REPRESENTATION_SEMANTIC
from aerialdojo.tasks.generate import SceneSource, SceneTasks, assemble_suite, plan_scene
from aerialdojo.tasks.planner import PlannerConfig
from aerialdojo.tasks.recording import ViewRenderer, record_reference
from aerialdojo.tasks.shards import ProgressSink, run_shards
from aerialdojo.tasks.suite import SUITE_FILE, ReferenceImageSpec, load_suite

#: Reference images: one view from the target's anchor, turned and pitched at its centroid.
REFERENCE_CAMERA = "anchor view pitched at the target centroid"
REFERENCE_FOV_DEG = 90.0
RECORDINGS_DIR = "recordings"


def reference_viewpoint(target: TargetObject, size: int) -> tuple[Pose, CameraSpec]:
    """Where the ImageOGS reference image of ``target`` is taken: its anchor, with the
    anchor's yaw (which faces the centroid) and a camera pitched to centre the centroid."""
    anchor = target.anchor
    rise = target.centroid[2] - anchor.z
    run = math.hypot(target.centroid[0] - anchor.x, target.centroid[1] - anchor.y)
    spec = CameraSpec(
        name="reference",
        width=size,
        height=size,
        fov_deg=REFERENCE_FOV_DEG,
        pitch_deg=math.degrees(math.atan2(rise, run)),
    )
    return Pose(anchor.x, anchor.y, anchor.z, anchor.yaw), spec


def reference_view(scene: EmbeddedScene, target: TargetObject, size: int) -> np.ndarray:
    """The ImageOGS reference image of ``target`` (``reference_viewpoint``), ``size`` x
    ``size`` x 3 uint8 RGB."""
    pose, spec = reference_viewpoint(target, size)
    frame = render_views(scene, pose, [spec], with_ground_truth_ids=False)[spec.name]
    return np.ascontiguousarray(frame.rgb)


def reference_camera(image_size: int) -> ReferenceImageSpec:
    """What a suite records about its reference images."""
    return ReferenceImageSpec(
        camera=REFERENCE_CAMERA, width=image_size, height=image_size, fov_deg=REFERENCE_FOV_DEG
    )


def scene_world(scene: EmbeddedScene) -> CapsuleScreen:
    """An embedded scene's exact collision world behind a ``CapsuleScreen``."""
    annotations = scene.annotations
    return CapsuleScreen(
        scene.collision,
        scene.collision.triangles,
        annotations.bounds_min,
        annotations.bounds_max,
    )


def embedded_source(scene: EmbeddedScene, *, image_size: int) -> SceneSource:
    """A generation source over an embedded scene: ``scene_world``, and ``reference_view``
    for the images."""
    return SceneSource(
        annotations=scene.annotations,
        world=scene_world(scene),
        render_reference=lambda target: reference_view(scene, target, image_size),
        reference_camera=reference_camera(image_size),
    )


@dataclass(frozen=True, kw_only=True)
class _SceneJob:
    """One scene's share of ``generate_suite``, picklable for Ray workers."""

    scene: str
    out: Path
    seed: int
    per_scene: int | None
    scene_seed: int
    config: PlannerConfig
    image_size: int
    max_candidates: int | None


def _plan_embedded_scene(job: _SceneJob, progress: ProgressSink) -> SceneTasks:
    scene = load_scene(job.scene, job.scene_seed, agent_radius_m=job.config.collision_radius_m)
    return plan_scene(
        embedded_source(scene, image_size=job.image_size),
        job.out,
        seed=job.seed,
        per_scene=job.per_scene,
        config=job.config,
        max_candidates=job.max_candidates,
        progress=progress,
    )


def generate_suite(
    scenes: Sequence[str],
    out: Path,
    *,
    seed: int,
    per_scene: int | None,
    name: str | None = None,
    description: str = "",
    scene_seed: int = 0,
    image_size: int = 256,
    max_candidates: int | None = None,
    workers: int = 1,
    ray_address: str | None = None,
    config: PlannerConfig | None = None,
    record_views: bool = False,
    record_size: int = 640,
    progress: ProgressSink | None = None,
) -> Path:
    """Generate a suite on embedded scenes and write it to ``out/suite.json`` (+ ``images/``).

    Scenes are independent shards (``tasks.shards.run_shards``): the suite is the same file
    whatever ``workers`` or the cluster.

    Args:
        scenes: scene names (``sim.embedded.scenes.scene_names()``), at least one.
        out: output directory (on a cluster, a directory every worker writes to).
        seed: suite seed: candidate order, splits.
        per_scene: navigation tasks per scene, shared evenly between the three settings
            (each task gives a SemanticOGS and an ImageOGS episode); None keeps every task.
        name: suite name (default: the directory name).
        description: free text stored in the suite.
        scene_seed: the seed the scenes are generated with (must match evaluation).
        image_size: edge of the square reference images in pixels.
        max_candidates: plan at most this many candidate pairs per scene.
        workers: scenes planned in parallel on a local Ray instance (1: in this process).
        ray_address: plan the scenes on this Ray cluster instead.
        config: planner parameters (its collision radius is also the agent's).
        record_views: also record the four views along every reference
            (``record_suite``, into ``out/recordings``).
        record_size: edge of the recorded square images in pixels.
        progress: receives every scene's progress (pairs planned, tasks kept).

    Returns:
        Path of the written ``suite.json``.

    Raises:
        UnknownSceneError: an unknown scene name.
        ConfigError: no scenes, or non-positive ``workers``, ``image_size`` or ``per_scene``.
        TaskFileError: the result does not validate (a bug; nothing is written).
    """
    if not scenes or workers < 1 or image_size < 1 or (per_scene is not None and per_scene < 1):
        raise ConfigError(
            f"generate_suite: scenes={list(scenes)} must not be empty; workers={workers}, "
            f"image_size={image_size} and per_scene={per_scene} must be positive"
        )
    known = scene_names()
    unknown = [scene for scene in scenes if scene not in known]
    if unknown:
        raise UnknownSceneError(f"unknown scenes {unknown}; known: {', '.join(known)}")
    config = config or PlannerConfig()
    out.mkdir(parents=True, exist_ok=True)
    jobs = [
        _SceneJob(
            scene=scene,
            out=out,
            seed=seed,
            per_scene=per_scene,
            scene_seed=scene_seed,
            config=config,
            image_size=image_size,
            max_candidates=max_candidates,
        )
        for scene in scenes
    ]
    planned = run_shards(
        _plan_embedded_scene, jobs, workers=workers, ray_address=ray_address, progress=progress
    )
    suite = assemble_suite(
        planned,
        out / SUITE_FILE,
        name=name or out.name,
        seed=seed,
        config=config,
        reference_camera=reference_camera(image_size),
        description=description,
    )
    if record_views:
        record_suite(suite.path, size=record_size, scene_seed=scene_seed)
    return suite.path


def _rig_renderer(scene: EmbeddedScene, rig: Sequence[CameraSpec]) -> ViewRenderer:
    def render(pose: Pose) -> Mapping[str, CameraFrame]:
        return render_views(scene, pose, rig, with_ground_truth_ids=False)

    return render


def record_suite(
    suite_path: Path,
    out: Path | None = None,
    *,
    size: int = 640,
    scene_seed: int = 0,
) -> list[Path]:
    """Record the four AerialDojo views (front, left, right, down; RGB-D) along every
    navigation task's reference: one MCAP bag per task, named by its task id.

    Args:
        suite_path: the suite file.
        out: directory of the bags (default: ``recordings`` next to the suite).
        size: edge of the square images in pixels (the seed: 640).
        scene_seed: the seed the suite's scenes were generated with.

    Returns:
        The bag directories, in suite order.

    Raises:
        TaskFileError: the suite does not validate.
        FileExistsError: a bag directory exists already.
    """
    suite = load_suite(suite_path)
    out = out or suite.path.parent / RECORDINGS_DIR
    out.mkdir(parents=True, exist_ok=True)
    rig = aerialdojo_uav_rig(size, size)
    bags = []
    for inventory in suite.scenes:
        scene = load_scene(
            inventory.scene, scene_seed, agent_radius_m=suite.generation.collision_radius_m
        )
        render = _rig_renderer(scene, rig)
        for episode in suite.episodes:
            is_task = episode.goal.representation == REPRESENTATION_SEMANTIC
            if episode.scene == inventory.scene and is_task:
                bags.append(record_reference(episode, render, out / episode.task_id))
    return bags
