"""Benchmark: sharded evaluation with 2 workers against 1 worker, and the merge of a
benchmark-sized run's episode records.

1. Merge. ``--records`` synthetic AerialDojo episode records (200,000 by default: about
   AerialDojo-200K) are written into a run directory as a sharded run's workers write them
   (``episodes/<id>/episode.json``, each a 31-position trace). Timed on them:
     baseline: reading and JSON-parsing every record file, with the merge's parser
               (orjson; the least any merge must do);
     value:    ``scale.records.read_records`` and ``merged_result`` (read, rebuild and check
               every trace, score, aggregate under the paper's map-family rule) and writing
               ``metrics.json`` and ``run_status.json``.
   Printed as ``RESULT scale_merge_records_s``, after the value's phases (wall time, and
   the CPU of this process and of the reader processes). The full report on top (plots with the
   radius sweep re-scoring every episode at each radius, Markdown tables, report.html) is
   timed on ``--report-records`` of them and printed as a figure of its own.
2. Episodes per minute. The same suite (``config/eval.yaml``: the colour-seeking baseline;
   the first ``--episodes`` of the whole ``aerialdojo_mini`` suite at ``--size`` pixels)
   runs through ``aerialdojo eval --workers 1`` (one graph in the CLI's process) and then
   ``--workers 2`` (two graphs, each owned by a Ray actor on a local Ray instance), each
   into a fresh run directory;
   episodes per minute of wall time, command start to merged report, Ray start-up included.
   The two merged ``metrics.json`` must be byte-identical; the script stops if they are not.
   ``--episodes-per-graph N`` caps a batch at N episodes instead of 20
   (``scale.run.MAX_EPISODES_PER_GRAPH``, set in the CLI's process), so that a short run
   has the several batches per worker of a long one, and what a batch after the first costs
   shows (a worker keeps its graph from batch to batch: a task manager and an evaluator
   per batch).

Usage:
    tools/run.sh python benchmarks/scale.py [--episodes 16] [--size 128] [--records 200000]
        [--report-records 5000] [--skip-merge] [--skip-eval] [--episodes-per-graph N]

The machine's load average is printed with the figures: on a shared 2-core machine other
processes take cores from the workers. Last line:
``RESULT scale_episodes_per_min_2w value=<2 workers> baseline=<1 worker> ratio=<v/b>``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import yaml

from aerialdojo.documents import write_atomic
from aerialdojo.events import AgentRecord
from aerialdojo.metrics.jsonl import trace_to_record
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.report.markdown import metrics_json_text
from aerialdojo.report.run import STATUS_JSON, write_run
from aerialdojo.scale.records import (
    EPISODES_DIR,
    PARALLEL_MIN_RECORDS,
    RECORD_FILE,
    RECORD_FORMAT,
    merged_result,
    read_records,
    reader_processes,
)

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("urban", "natural", "infrastructure", "disaster")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {os.cpu_count()} cores"


#: What the merge does between the clocks ``bench_merge`` reads.
_MERGE_PHASES = (
    "read (readers chosen, records read, rebuilt, measured)",
    "score and aggregate",
    "metrics.json text",
    "metrics.json written and synced",
    "run_status.json",
)


@dataclass(frozen=True)
class _Clock:
    """Wall time, this process's CPU and its ended children's CPU (a merge's reader
    processes end with ``read_records``)."""

    wall: float
    cpu: float
    children_cpu: float

    @classmethod
    def now(cls) -> _Clock:
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return cls(time.perf_counter(), time.process_time(), children.ru_utime + children.ru_stime)

    def since(self, start: _Clock, name: str) -> str:
        """``name``'s wall time and CPU from ``start`` to this clock."""
        readers = self.children_cpu - start.children_cpu
        cpu = f"{self.cpu - start.cpu:.1f} CPU-s here"
        if readers:
            cpu += f", {readers:.1f} in readers"
        return f"{name} {self.wall - start.wall:.2f} s ({cpu})"


def _synthetic_records(run_dir: Path, count: int) -> list[str]:
    """``count`` episode records over 42 scenes in four families, as workers write them."""
    agents = [
        AgentRecord(agent="uav", policy="colour_seeker", privileged=False, description="").to_dict()
    ]
    ids = []
    for index in range(count):
        scene = f"Scene{index % 42}_{index % 2}"
        steps = 20 + index % 30
        path = [(0.0, 0.0, 5.0)] + [(1.5 * s, 0.1 * (index % 7), 5.0) for s in range(1, steps + 1)]
        episode_id = f"{scene}-base-{index:06d}-sem"
        trace = EpisodeTrace(
            episode_id=episode_id,
            benchmark="aerialdojo",
            scene=scene,
            family=FAMILIES[index % 42 % 4],
            setting="base",
            split="test",
            positions=path,
            stop_called=index % 3 != 0,
            collided=False,
            collision_step=None,
            steps_used=steps + (index % 3 != 0),
            action_budget=90,
            target=(1.5 * steps + index % 5, 0.0, 5.0),
            reference_length_m=1.5 * steps,
            termination="stopped" if index % 3 else "budget_exhausted",
        )
        directory = run_dir / EPISODES_DIR / episode_id
        directory.mkdir(parents=True)
        document = {
            "format": RECORD_FORMAT,
            "episode_id": episode_id,
            "graph": f"g{index // 20:05d}",
            "agents": agents,
            "trace": trace_to_record(trace),
        }
        (directory / RECORD_FILE).write_text(json.dumps(document), encoding="utf-8")
        ids.append(episode_id)
    return ids


def bench_merge(work: Path, count: int, report_count: int) -> float:
    """Seconds to merge ``count`` records; prints the figures and the RESULT line."""
    run_dir = work / "merge"
    started = time.perf_counter()
    selection = _synthetic_records(run_dir, count)
    print(f"wrote {count} records in {time.perf_counter() - started:.1f} s")

    started = time.perf_counter()
    for episode_id in selection:
        orjson.loads((run_dir / EPISODES_DIR / episode_id / RECORD_FILE).read_bytes())
    baseline = time.perf_counter() - started

    clocks = [_Clock.now()]
    # The choice read_records makes itself (and pays for: it watches the cores), made
    # here so that the figure says how many readers ran.
    readers = reader_processes() if count >= PARALLEL_MIN_RECORDS else 1
    records = read_records(run_dir, selection, processes=readers)
    clocks.append(_Clock.now())
    result = merged_result(records, selection, {}, None, finished=True)
    assert result.metrics is not None and result.complete
    clocks.append(_Clock.now())
    # write_metrics_json in its two steps, timed apart: the text, then the atomic write.
    text = metrics_json_text(result.metrics)
    clocks.append(_Clock.now())
    write_atomic(run_dir / "metrics.json", text)
    clocks.append(_Clock.now())
    (run_dir / STATUS_JSON).write_text(json.dumps(result.status(), indent=2, sort_keys=True))
    clocks.append(_Clock.now())
    value = clocks[-1].wall - clocks[0].wall
    how = f"{readers} processes reading" if readers > 1 else "read in this process"
    print(
        f"merge of {count} records ({how}): {value:.1f} s; reading them alone {baseline:.1f} s "
        f"({_load()})"
    )
    phases = zip(_MERGE_PHASES, itertools.pairwise(clocks), strict=True)
    print("phases: " + "; ".join(end.since(start, name) for name, (start, end) in phases))

    subset = selection[:report_count]
    started = time.perf_counter()
    partial = merged_result(read_records(run_dir, subset), subset, {}, None, finished=True)
    write_run(work / "report", partial, maps_drawn=True)
    report_s = time.perf_counter() - started
    print(f"full merged report of {len(subset)} records (plots, tables, HTML): {report_s:.1f} s")
    print(f"RESULT scale_merge_records_s value={value:.2f} baseline={baseline:.2f} "
          f"ratio={value / baseline:.2f}")  # fmt: skip
    return value


#: The CLI with its batches capped at ``argv[1]`` episodes.
_CLI_WITH_BATCHES_OF = (
    "import sys; import aerialdojo.scale.run as run; "
    "run.MAX_EPISODES_PER_GRAPH = int(sys.argv[1]); "
    "from aerialdojo.cli import main; sys.exit(main(sys.argv[2:]))"
)


def _eval(config: Path, output: Path, workers: int, per_graph: int | None) -> float:
    """Wall seconds of one sharded run, command start to merged report."""
    cli = ["-m", "aerialdojo.cli"]
    if per_graph is not None:
        cli = ["-c", _CLI_WITH_BATCHES_OF, str(per_graph)]
    command = [
        sys.executable, *cli, "eval", "--config", str(config),
        "--workers", str(workers), "--output", str(output), "--run-id", "bench",
    ]  # fmt: skip
    started = time.perf_counter()
    run = subprocess.run(command, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"aerialdojo eval --workers {workers} failed ({run.returncode}):\n{run.stderr}")
    return elapsed


def bench_eval(work: Path, episodes: int, size: int, per_graph: int | None) -> None:
    """Episodes per minute with 1 and 2 workers; prints the figures and the RESULT line."""
    config = yaml.safe_load((REPO / "config" / "eval.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=size, image_height=size)
    # The default selection has 6 episodes; the whole suite has 96.
    config["task_manager"]["ros__parameters"].update(filter="all", max_episodes=episodes)
    path = work / "eval.yaml"
    path.write_text(yaml.safe_dump(config))
    rates = {}
    for workers in (1, 2):
        print(f"{workers} worker(s), before: {_load()}")
        seconds = _eval(path, work / f"runs{workers}", workers, per_graph)
        status = json.loads((work / f"runs{workers}" / "bench" / STATUS_JSON).read_text())
        if len(status["scored"]) != episodes:
            sys.exit(f"{workers} worker(s) scored {len(status['scored'])} of {episodes} episodes")
        rates[workers] = episodes / seconds * 60.0
        print(
            f"{workers} worker(s): {episodes} episodes in {seconds:.1f} s = "
            f"{rates[workers]:.2f} episodes/min; after: {_load()}"
        )
    one, two = (work / f"runs{w}" / "bench" / "metrics.json" for w in (1, 2))
    if one.read_bytes() != two.read_bytes():
        sys.exit(f"the merged metrics differ: {one} {two}")
    print("merged metrics.json of 1 and 2 workers: byte-identical")
    print(
        f"RESULT scale_episodes_per_min_2w value={rates[2]:.2f} baseline={rates[1]:.2f} "
        f"ratio={rates[2] / rates[1]:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--size", type=int, default=128, help="image side, pixels")
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--report-records", type=int, default=5000)
    parser.add_argument("--skip-merge", action="store_true")
    parser.add_argument("--skip-eval", action="store_true")
    parser.add_argument("--episodes-per-graph", type=int, help="cap on a graph's batch")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="aerialdojo-scale-"))
    try:
        if not args.skip_merge:
            bench_merge(work, args.records, args.report_records)
        if not args.skip_eval:
            bench_eval(work, args.episodes, args.size, args.episodes_per_graph)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
