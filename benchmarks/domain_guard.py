"""How long a starting run takes to find another run's task manager in its ROS domain, against
the window it listens for (``nodes.domain_guard.DISCOVERY_WINDOW_S``): the margin that makes
the refusal reliable on a loaded machine.

A real task manager runs (its own process, on the shipped transport profile, in a domain
claimed for the benchmark); each repeat joins the domain with a fresh participant, as
``aerialdojo eval`` does before it starts any node, and times until the task manager's run is
named. Discovery between processes is what the window must cover, so it is timed under
whatever else the machine runs: note the load.

    tools/run.sh python benchmarks/domain_guard.py [--repeats 5]

Last line: RESULT domain_guard_discovery_s value=<slowest repeat> baseline=<window>
ratio=<v/b> (below 1: every repeat found the run within the window).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import rclpy
from rclpy.context import Context
from rclpy.node import Node

from aerialdojo.graph import run_specs
from aerialdojo.nodes.domain_guard import DISCOVERY_WINDOW_S, other_runs
from aerialdojo.runner import run_domain, start_graph, stop_graph

REPO = Path(__file__).resolve().parents[1]
#: Longer than any discovery should take: a repeat that needs it has failed the window anyway.
PATIENCE_S = 30.0


def _time_to_find(run_dir: Path) -> float:
    """Seconds a fresh participant takes to name the run of ``run_dir``."""
    context = Context()
    rclpy.init(context=context)
    node = Node("domain_guard_benchmark", context=context)
    try:
        started = time.monotonic()
        found = other_runs(node, PATIENCE_S)
        elapsed = time.monotonic() - started
    finally:
        node.destroy_node()
        rclpy.shutdown(context=context)
    if [sighting.run_dir for sighting in found] != [str(run_dir)]:
        sys.exit(f"expected the task manager of {run_dir}, found {found}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    with run_domain({}) as domain, tempfile.TemporaryDirectory() as scratch:
        os.environ["ROS_DOMAIN_ID"] = domain
        run_dir = Path(scratch) / "held"
        specs = [
            spec
            for spec in run_specs(
                REPO / "config" / "eval.yaml",
                run_id=run_dir.name,
                output_dir=scratch,
                overrides={"task_manager": {"auto_run": False}},
            )
            if spec.name == "task_manager"
        ]
        nodes = start_graph(specs, run_dir)
        try:
            # The task manager announces itself after its own check of the domain.
            deadline = time.monotonic() + 120
            while "episodes selected" not in (run_dir / "logs" / "task_manager.log").read_text():
                if time.monotonic() > deadline or nodes[0].process.poll() is not None:
                    sys.exit("the task manager did not start")
                time.sleep(0.1)
            times = [_time_to_find(run_dir) for _ in range(args.repeats)]
        finally:
            stop_graph(nodes)
    print(f"load average at start {load:.2f}, domain {domain}")
    print(
        f"found the other run in {statistics.median(times):.2f} s median, "
        f"{max(times):.2f} s slowest of {len(times)} (window {DISCOVERY_WINDOW_S:g} s)"
    )
    slowest = max(times)
    print(
        f"RESULT domain_guard_discovery_s value={slowest:.3f} baseline={DISCOVERY_WINDOW_S:.3f} "
        f"ratio={slowest / DISCOVERY_WINDOW_S:.3f}"
    )


if __name__ == "__main__":
    main()
