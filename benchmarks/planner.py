"""Benchmark: Hybrid A* reference planning against plain voxel A*, and generation throughput.

Hybrid A* over the AerialDojo actions runs against a plain 26-connected voxel A* on the same
candidate pairs and the same collision world, in one run; then task generation throughput.

Both planners see the same queries (the scene's exact swept-sphere world behind a fresh
``FreeSpaceFilter`` each), goal tolerance, length cap and lazy collision checking. The grid
baseline is cheaper per task but its routes cannot be flown by the discrete actions: the
ratio is the price of references an agent can replay.

Usage:
    tools/run.sh python benchmarks/planner.py [--scenes Forest_0,Community_0] [--pairs 12]
        [--generate-pairs 60] [--seed 0] [--json out.json]

Prints figures, then exactly one line
``RESULT hybrid_astar_ms_per_task value=<v> baseline=<grid> ratio=<v/grid>``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from aerialdojo.sim.annotations import TargetObject
from aerialdojo.sim.embedded.scenes import EmbeddedScene, load_scene
from aerialdojo.tasks.candidates import start_pose_for
from aerialdojo.tasks.embedded import embedded_source
from aerialdojo.tasks.freespace import FreeSpaceFilter
from aerialdojo.tasks.generate import choose_scene_tasks
from aerialdojo.tasks.planner import PlannerConfig, plan_actions, plan_grid
from aerialdojo.tasks.settings import MAX_LENGTH_M, MIN_EUCLIDEAN_M
from aerialdojo.tasks.suite import dumps_suite, load_suite, resolve_suite


def _pairs(scene: EmbeddedScene, count: int, seed: int) -> list[tuple[TargetObject, TargetObject]]:
    """``count`` seeded candidate pairs whose anchors are 10-60 m apart (where detours and
    both planners' costs show)."""
    objects = sorted(scene.annotations.objects, key=lambda obj: obj.object_id)
    pairs = list(itertools.permutations(objects, 2))
    random.Random(seed).shuffle(pairs)
    chosen = []
    for start, target in pairs:
        separation = math.dist(start_pose_for(start).position, target.anchor.position)
        if max(10.0, MIN_EUCLIDEAN_M) < separation < min(60.0, MAX_LENGTH_M):
            chosen.append((start, target))
        if len(chosen) == count:
            break
    return chosen


def _world(scene: EmbeddedScene, config: PlannerConfig) -> FreeSpaceFilter:
    """A fresh filtered collision world, so neither planner inherits the other's state."""
    annotations = scene.annotations
    return FreeSpaceFilter(
        scene.collision,
        scene.collision.triangles,
        annotations.bounds_min,
        annotations.bounds_max,
        radius_m=config.collision_radius_m,
    )


def _time_large_load(instances: int) -> tuple[int, float]:
    """Seconds ``load_suite`` (full validation) takes on a suite of at least ``instances``
    episodes: the shipped suite's episodes, renumbered copies of each task."""
    shipped = resolve_suite("aerialdojo_mini")
    document = json.loads(shipped.read_text())
    episodes = document["episodes"]
    copies = -(-instances // len(episodes))
    numbered = []
    for copy in range(copies):
        for episode in episodes:
            scene, setting, number, suffix = episode["episode_id"].split("-")
            renumbered = dict(
                episode, episode_id=f"{scene}-{setting}-{int(number) * copies + copy:04d}-{suffix}"
            )
            numbered.append(renumbered)
    document["episodes"] = numbered
    with tempfile.TemporaryDirectory() as directory:
        large = Path(directory) / "suite"
        shutil.copytree(shipped.parent, large)
        (large / "suite.json").write_text(dumps_suite(document))
        began = time.perf_counter()
        suite = load_suite(large / "suite.json")
        return len(suite.episodes), time.perf_counter() - began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenes", default="Forest_0,Community_0,Bridge_1")
    parser.add_argument("--pairs", type=int, default=8, help="pairs per scene planned by both")
    parser.add_argument(
        "--generate-pairs", type=int, default=40, help="pairs per scene for tasks/s"
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--load-instances", type=int, default=10_000, help="episodes of the suite loaded at scale"
    )
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = parser.parse_args()
    config = PlannerConfig()
    hybrid_s, grid_s, hybrid_expansions, grid_expansions = [], [], [], []
    hybrid_lengths, grid_lengths = [], []
    kept = planned = 0
    generation_s = 0.0
    for name in args.scenes.split(","):
        scene = load_scene(name, 0, agent_radius_m=config.collision_radius_m)
        bounds = (scene.annotations.bounds_min, scene.annotations.bounds_max)
        for start_object, target in _pairs(scene, args.pairs, args.seed):
            start = start_pose_for(start_object)
            goal = target.anchor.position
            hybrid = plan_actions(_world(scene, config), start, goal, config=config, bounds=bounds)
            grid = plan_grid(
                _world(scene, config), start.position, goal, config=config, bounds=bounds
            )
            if not (hybrid.found and grid.found):
                continue  # compare only pairs both solve
            hybrid_s.append(hybrid.stats.seconds)
            grid_s.append(grid.stats.seconds)
            hybrid_expansions.append(hybrid.stats.expansions)
            grid_expansions.append(grid.stats.expansions)
            hybrid_lengths.append(hybrid.length_m)
            grid_lengths.append(grid.length_m)
        source = embedded_source(scene, radius_m=config.collision_radius_m, image_size=64)
        began = time.perf_counter()
        tasks, tried = choose_scene_tasks(
            source,
            seed=args.seed,
            per_scene=None,
            config=config,
            max_candidates=args.generate_pairs,
        )
        generation_s += time.perf_counter() - began
        kept += len(tasks)
        planned += tried
    load_episodes, load_s = _time_large_load(args.load_instances)
    hybrid_ms = 1000.0 * statistics.mean(hybrid_s)
    grid_ms = 1000.0 * statistics.mean(grid_s)
    hybrid_per_task = statistics.mean(hybrid_expansions)
    grid_per_task = statistics.mean(grid_expansions)
    figures: dict[str, float | int | str] = {
        "scenes": args.scenes,
        "pairs_compared": len(hybrid_s),
        "hybrid_ms_per_task": hybrid_ms,
        "grid_ms_per_task": grid_ms,
        "hybrid_expansions_per_task": hybrid_per_task,
        "grid_expansions_per_task": grid_per_task,
        "expansions_ratio_hybrid_over_grid": hybrid_per_task / grid_per_task,
        "hybrid_mean_length_m": statistics.mean(hybrid_lengths),
        "grid_mean_length_m": statistics.mean(grid_lengths),
        "candidates_planned": planned,
        "navigation_tasks_kept": kept,
        "navigation_tasks_per_s": kept / generation_s,
        "task_instances_per_s": 2 * kept / generation_s,
        "candidates_per_s": planned / generation_s,
        "large_suite_episodes": load_episodes,
        "large_suite_load_s": load_s,
    }
    for key, value in figures.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    print(
        f"RESULT hybrid_astar_ms_per_task value={hybrid_ms:.3f} baseline={grid_ms:.3f} "
        f"ratio={hybrid_ms / grid_ms:.3f}"
    )


if __name__ == "__main__":
    main()
