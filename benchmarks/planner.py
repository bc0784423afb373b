"""Benchmark: task generation against the baseline commit's generator, Hybrid A* against voxel
A*, and loading a large suite.

1. Generation throughput, per core. The baseline is the generator as it was before it was
   made faster: the source of ``--baseline-commit`` is exported with ``git archive`` into a
   temporary directory, and both generators run as child processes of this script, scene
   by scene and one after the other, on the same scenes, seed and candidate pairs. The
   scenes are this tree's: the change that gave every resting piece its seat
   (``SCENE_CHANGE``, 4 December: no two faces coincide) moved surfaces by millimetres, so
   it is applied to the exported baseline too (``git apply`` of that change's diff of the
   embedded scenes, which touches the scenes' geometry only, not the search). Each
   child reports the CPU time (``time.process_time``, all its threads) of setting its
   scenes up (scene generation, collision structures) and of choosing their tasks
   (``choose_scene_tasks``: candidate pairs, early rejections, Hybrid A*, filters). Kept
   navigation tasks per CPU second is per core. Both must keep the same tasks with the same
   references, action for action; the script stops with an error if they do not.
2. Hybrid A* against a plain 26-connected voxel A* on the same candidate pairs and collision
   world (the grid's routes cannot be flown by the discrete actions).
3. Loading and fully validating a 10,000-episode suite.

Usage:
    tools/run.sh python benchmarks/planner.py [--scenes Forest_0,Community_0,Bridge_1]
        [--candidates 40] [--pairs 8] [--seed 0] [--baseline-commit SHA] [--json out.json]

Prints figures, then exactly one line
``RESULT generation_tasks_per_cpu_s value=<this tree> baseline=<baseline> ratio=<v/b>``
(kept navigation tasks per CPU second, scene set-up included).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SOURCE = REPO / "src" / "aerialdojo"
#: The generator before this round's speed-up (issue 18): the last commit with the
#: voxel free-space filter and one heap entry per successor.
BASELINE_COMMIT = "8e67eb990aea4720c352b9143973dbc05dd0ea57"
#: The scenes' seat (``primitives.SEAT_M``), from its parent to its last commit: geometry of
#: the embedded scenes only. Applied to the baseline so that both search the same scenes.
SCENE_CHANGE = (
    "cf0ceed89a6e5a13312304c439d8c1b05bbe3209",
    "379e924c2d2166d69ee2365258cb32d89ff5d44d",
)
SCENE_PATHS = ("src/aerialdojo/aerialdojo/sim/embedded",)


def _generation_worker(source: Path, scenes: list[str], candidates: int, seed: int) -> None:
    """Child process: choose the tasks of ``scenes`` with the aerialdojo found in ``source``
    and print one JSON line with the kept tasks and the CPU seconds of each phase."""
    sys.path.insert(0, str(source))
    import inspect  # noqa: PLC0415

    from aerialdojo.sim.embedded.scenes import load_scene  # noqa: PLC0415
    from aerialdojo.tasks import embedded  # noqa: PLC0415
    from aerialdojo.tasks.generate import choose_scene_tasks  # noqa: PLC0415
    from aerialdojo.tasks.planner import PlannerConfig  # noqa: PLC0415

    config = PlannerConfig()
    # The baseline's embedded_source also took the radius of its voxel filter.
    extra = (
        {"radius_m": config.collision_radius_m}
        if "radius_m" in inspect.signature(embedded.embedded_source).parameters
        else {}
    )
    setup_s = planning_s = wall_s = 0.0
    planned = 0
    kept: list[list[str]] = []
    for name in scenes:
        began, began_wall = time.process_time(), time.perf_counter()
        scene = load_scene(name, 0, agent_radius_m=config.collision_radius_m)
        source_of_scene = embedded.embedded_source(scene, image_size=64, **extra)
        setup_s += time.process_time() - began
        began = time.process_time()
        tasks, tried = choose_scene_tasks(
            source_of_scene, seed=seed, per_scene=None, config=config, max_candidates=candidates
        )
        planning_s += time.process_time() - began
        wall_s += time.perf_counter() - began_wall
        planned += tried
        kept += [
            [
                name,
                task.start_object.object_id,
                task.target_object.object_id,
                repr(task.reference.actions),
                repr(task.reference.poses),
            ]
            for task in tasks
        ]
    print(
        json.dumps(
            {
                "setup_cpu_s": setup_s,
                "planning_cpu_s": planning_s,
                "wall_s": wall_s,
                "planned": planned,
                "kept": kept,
                "module": str(Path(inspect.getfile(embedded)).resolve()),
            }
        )
    )


def _git(arguments: list[str], failure: str, *, cwd: Path = REPO, stdin: bytes = b"") -> bytes:
    """The output of ``git <arguments>`` run in ``cwd``; stops with ``failure`` and git's
    error when it fails (a git checkout of aerialdojo is needed)."""
    try:
        return subprocess.run(
            ["git", *arguments], cwd=cwd, input=stdin, check=True, capture_output=True
        ).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", b"") or b""
        raise SystemExit(f"{failure}: {error} {detail.decode(errors='replace').strip()}") from error


def _export(commit: str, into: Path) -> Path:
    """The package source of ``commit`` (``src/aerialdojo``) under ``into``."""
    archive = _git(
        ["archive", commit, "src/aerialdojo/aerialdojo"],
        f"cannot export baseline commit {commit} with git archive",
    )
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into / "src" / "aerialdojo"


def _apply_scene_change(tree: Path) -> None:
    """Apply ``SCENE_CHANGE`` to the exported source under ``tree``, so that the baseline
    builds this tree's scenes; stop if it does not apply cleanly."""
    failure = (
        f"cannot apply the scenes' change {SCENE_CHANGE[0][:10]}..{SCENE_CHANGE[1][:10]} "
        "to the baseline"
    )
    diff = _git(["diff", *SCENE_CHANGE, "--", *SCENE_PATHS], failure)
    _git(["apply", "--whitespace=nowarn", "-"], failure, cwd=tree, stdin=diff)


def _run_generator(source: Path, scene: str, args: argparse.Namespace) -> dict[str, Any]:
    """Run ``_generation_worker`` on ``source`` and one scene in a fresh interpreter."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--generation-worker",
        str(source),
        "--scenes",
        scene,
        "--candidates",
        str(args.candidates),
        "--seed",
        str(args.seed),
    ]
    completed = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    if not result["module"].startswith(str(source.resolve())):
        raise SystemExit(f"the child imported {result['module']}, not the code in {source}")
    return result


def _generation(args: argparse.Namespace) -> dict[str, float | int | str]:
    runs: dict[str, list[dict[str, Any]]] = {"baseline": [], "current": []}
    with tempfile.TemporaryDirectory() as directory:
        baseline = _export(args.baseline_commit, Path(directory))
        _apply_scene_change(Path(directory))
        sources = {"baseline": baseline, "current": SOURCE}
        # Scene by scene, baseline then current: a shared machine's load drifts, and this
        # way it weighs on both alike.
        for scene in args.scenes.split(","):
            for label, source in sources.items():
                runs[label].append(_run_generator(source, scene, args))
    baseline_kept = [task for run in runs["baseline"] for task in run["kept"]]
    current_kept = [task for run in runs["current"] for task in run["kept"]]
    if current_kept != baseline_kept:
        differing = [
            (a and a[:3], b and b[:3])
            for a, b in itertools.zip_longest(baseline_kept, current_kept)
            if a != b
        ]
        raise SystemExit(
            f"the generators kept different tasks (baseline {len(baseline_kept)}, "
            f"this tree {len(current_kept)}): {differing[:5]}"
        )
    kept = len(current_kept)
    figures: dict[str, float | int | str] = {
        "baseline_commit": args.baseline_commit,
        "baseline_scene_change": "..".join(SCENE_CHANGE),
    }
    for label, scene_runs in runs.items():
        setup = sum(run["setup_cpu_s"] for run in scene_runs)
        planning = sum(run["planning_cpu_s"] for run in scene_runs)
        figures.update(
            {
                f"{label}_setup_cpu_s": setup,
                f"{label}_planning_cpu_s": planning,
                f"{label}_wall_s": sum(run["wall_s"] for run in scene_runs),
                f"{label}_tasks_per_cpu_s": kept / (setup + planning),
                f"{label}_planning_tasks_per_cpu_s": kept / planning,
            }
        )
    figures.update(
        {
            "candidate_pairs_planned": sum(run["planned"] for run in runs["current"]),
            "navigation_tasks_kept": kept,
            "kept_tasks_identical": "yes",
        }
    )
    return figures


def _pairs(scene: Any, count: int, seed: int) -> list[tuple[Any, Any]]:
    """``count`` seeded candidate pairs whose anchors are 10-60 m apart (where detours and
    both planners' costs show)."""
    from aerialdojo.tasks.candidates import start_pose_for  # noqa: PLC0415
    from aerialdojo.tasks.settings import MAX_LENGTH_M, MIN_EUCLIDEAN_M  # noqa: PLC0415

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


def _planners(args: argparse.Namespace) -> dict[str, float | int | str]:
    from aerialdojo.sim.embedded.scenes import load_scene  # noqa: PLC0415
    from aerialdojo.tasks.candidates import start_pose_for  # noqa: PLC0415
    from aerialdojo.tasks.embedded import embedded_source  # noqa: PLC0415
    from aerialdojo.tasks.planner import PlannerConfig, plan_actions, plan_grid  # noqa: PLC0415

    config = PlannerConfig()
    hybrid_s, grid_s, hybrid_expansions, grid_expansions = [], [], [], []
    hybrid_lengths, grid_lengths = [], []
    for name in args.scenes.split(","):
        scene = load_scene(name, 0, agent_radius_m=config.collision_radius_m)
        bounds = (scene.annotations.bounds_min, scene.annotations.bounds_max)
        for start_object, target in _pairs(scene, args.pairs, args.seed):
            start = start_pose_for(start_object)
            goal = target.anchor.position
            # A fresh screened world each, so neither planner inherits the other's state.
            hybrid = plan_actions(
                embedded_source(scene, image_size=64).world,
                start,
                goal,
                config=config,
                bounds=bounds,
            )
            grid = plan_grid(
                embedded_source(scene, image_size=64).world,
                start.position,
                goal,
                config=config,
                bounds=bounds,
            )
            if not (hybrid.found and grid.found):
                continue  # compare only pairs both solve
            hybrid_s.append(hybrid.stats.seconds)
            grid_s.append(grid.stats.seconds)
            hybrid_expansions.append(hybrid.stats.expansions)
            grid_expansions.append(grid.stats.expansions)
            hybrid_lengths.append(hybrid.length_m)
            grid_lengths.append(grid.length_m)
    return {
        "pairs_compared": len(hybrid_s),
        "hybrid_ms_per_task": 1000.0 * statistics.mean(hybrid_s),
        "grid_ms_per_task": 1000.0 * statistics.mean(grid_s),
        "hybrid_expansions_per_task": statistics.mean(hybrid_expansions),
        "grid_expansions_per_task": statistics.mean(grid_expansions),
        "hybrid_mean_length_m": statistics.mean(hybrid_lengths),
        "grid_mean_length_m": statistics.mean(grid_lengths),
    }


def _large_load(instances: int) -> dict[str, float | int | str]:
    """Seconds ``load_suite`` (full validation) takes on a suite of at least ``instances``
    episodes: the shipped suite's episodes, renumbered copies of each task."""
    from aerialdojo.tasks.suite import dumps_suite, load_suite, resolve_suite  # noqa: PLC0415

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
        return {
            "large_suite_episodes": len(suite.episodes),
            "large_suite_load_s": time.perf_counter() - began,
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--scenes", default="Forest_0,Community_0,Bridge_1")
    parser.add_argument(
        "--candidates", type=int, default=40, help="candidate pairs per scene for generation"
    )
    parser.add_argument("--pairs", type=int, default=8, help="pairs per scene planned by both")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--load-instances", type=int, default=10_000, help="episodes of the suite loaded at scale"
    )
    parser.add_argument("--baseline-commit", default=BASELINE_COMMIT)
    parser.add_argument("--json", type=Path, default=None, help="also write the figures here")
    parser.add_argument("--generation-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generation_worker is not None:
        _generation_worker(
            args.generation_worker, args.scenes.split(","), args.candidates, args.seed
        )
        return
    # CPU seconds stretch when the machine is oversubscribed (shared cores and caches): the
    # load says how far to trust a ratio measured in one run.
    figures: dict[str, float | int | str] = {
        "scenes": args.scenes,
        "load_average_1min_at_start": os.getloadavg()[0],
    }
    figures.update(_generation(args))
    figures["load_average_1min_after_generation"] = os.getloadavg()[0]
    sys.path.insert(0, str(SOURCE))  # this tree, not an installed copy
    figures.update(_planners(args))
    figures.update(_large_load(args.load_instances))
    for key, value in figures.items():
        print(f"{key}: {value:.3f}" if isinstance(value, float) else f"{key}: {value}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    value = float(figures["current_tasks_per_cpu_s"])
    baseline = float(figures["baseline_tasks_per_cpu_s"])
    print(
        f"RESULT generation_tasks_per_cpu_s value={value:.4f} baseline={baseline:.4f} "
        f"ratio={value / baseline:.2f}"
    )


if __name__ == "__main__":
    main()
