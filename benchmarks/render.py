"""Rendering throughput of the embedded simulator against bare ray casts of the same rays.

Prints two figures, each with a baseline measured in the same run:

* ``render_rays_per_s``: full RGB-D + id rendering (rays cast, shaded, depth and ids written)
  against a bare Embree cast of the same rays on the same scene through the same
  multithreaded path (so the ratio is what shading costs; 1.0 would be free).
* ``render_cpu_rays_per_s``: the same two, by the process's CPU time instead of wall time:
  on a shared machine the wall figure also measures how long each of the two threads waited
  for a core, the CPU figure only the work.
* ``frame_sets_per_s_640x4``: four 640x640 RGB-D views per second against trimesh's Embree
  wrapper (``RayMeshIntersector.intersects_first``) casting the same rays without shading,
  i.e. the obvious way to do it with the packages at hand.

Usage: tools/run.sh python benchmarks/render.py [--scene Forest_0] [--repeats 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src" / "aerialdojo"))

from trimesh import Trimesh
from trimesh.ray.ray_pyembree import RayMeshIntersector

from aerialdojo.sim.backend import aerialdojo_uav_rig
from aerialdojo.sim.embedded.montage import representative_pose
from aerialdojo.sim.embedded.raycast import run_chunked
from aerialdojo.sim.embedded.renderer import (
    camera_origin,
    camera_rays,
    camera_rotation,
    render_views,
)
from aerialdojo.sim.embedded.scenes import load_scene


def interleaved_medians(
    work: dict[str, Callable[[], object]], repeats: int
) -> tuple[dict[str, float], dict[str, float]]:
    """Median wall and CPU (this process's) time of each task, running the tasks in turn
    ``repeats`` times after one warm-up round, so that load from other processes affects all
    of them alike."""
    for task in work.values():
        task()
    wall: dict[str, list[float]] = {name: [] for name in work}
    cpu: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(repeats):
        for name, task in work.items():
            started, started_cpu = time.perf_counter(), time.process_time()
            task()
            wall[name].append(time.perf_counter() - started)
            cpu[name].append(time.process_time() - started_cpu)
    return (
        {name: statistics.median(values) for name, values in wall.items()},
        {name: statistics.median(values) for name, values in cpu.items()},
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scene", default="Forest_0")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()

    scene = load_scene(args.scene)
    pose = representative_pose(scene)
    rig = aerialdojo_uav_rig(640, 640)
    directions = np.concatenate(
        [camera_rays(spec) @ camera_rotation(pose, spec).T for spec in rig]
    ).astype(np.float32)
    origins = np.concatenate(
        [np.tile(camera_origin(pose, spec), (spec.width * spec.height, 1)) for spec in rig]
    ).astype(np.float32)
    rays = len(directions)

    def cast_only(chunk: slice) -> None:
        scene.caster.cast(origins[chunk], directions[chunk])

    vertices = scene.collision.triangles.reshape(-1, 3)
    mesh = Trimesh(vertices, np.arange(len(vertices)).reshape(-1, 3), process=False)
    intersector = RayMeshIntersector(mesh)
    seconds, cpu_seconds = interleaved_medians(
        {
            # The renderer's own path minus everything but the cast: same chunks, same threads.
            "bare": lambda: run_chunked(rays, cast_only),
            "single": lambda: scene.caster.cast(origins, directions),
            "full": lambda: render_views(scene, pose, rig, with_ground_truth_ids=True),
            "rgbd": lambda: render_views(scene, pose, rig, with_ground_truth_ids=False),
            "wrapper": lambda: intersector.intersects_first(origins, directions),
        },
        args.repeats,
    )
    bare, single, full, rgbd, wrapper = (
        seconds[name] for name in ("bare", "single", "full", "rgbd", "wrapper")
    )

    hits = float(np.mean(scene.caster.cast(origins, directions)[0] >= 0))
    print(f"scene {args.scene}: {scene.triangle_count} triangles, {rays} rays, {hits:.0%} hit")
    print(f"embreex direct, all cores : {rays / bare / 1e6:6.2f} Mrays/s")
    print(f"embreex direct, one call  : {rays / single / 1e6:6.2f} Mrays/s")
    print(f"trimesh wrapper           : {rays / wrapper / 1e6:6.2f} Mrays/s (ids only)")
    print(f"render RGB-D              : {1.0 / rgbd:6.2f} sets/s")
    print(f"render RGB-D + ids        : {1.0 / full:6.2f} sets/s")
    value, baseline = rays / full, rays / bare
    ratio = value / baseline
    print(f"RESULT render_rays_per_s value={value:.0f} baseline={baseline:.0f} ratio={ratio:.3f}")
    value, baseline = rays / cpu_seconds["full"], rays / cpu_seconds["bare"]
    print(
        f"RESULT render_cpu_rays_per_s value={value:.0f} baseline={baseline:.0f} "
        f"ratio={value / baseline:.3f}"
    )
    value, baseline = 1.0 / rgbd, 1.0 / wrapper
    print(
        f"RESULT frame_sets_per_s_640x4 value={value:.2f} baseline={baseline:.2f} "
        f"ratio={value / baseline:.2f}"
    )


if __name__ == "__main__":
    main()
