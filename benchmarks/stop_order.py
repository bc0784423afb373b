"""How long stopping a running evaluation graph takes (what ``aerialdojo eval --timeout``
adds after its deadline), in the runner's order against the order it used before.

Both runs start the real graph of ``config/eval.yaml`` (96x96 views, the shipped suite),
wait until an episode is under way, then time ``runner.stop_graph``. This order: agents,
task manager, bridge, then the evaluator (clients before the servers they wait on).
Baseline: the start order (bridge, task manager, agent), then the evaluator, as before
issue 16: the task manager, left waiting on a stopped bridge, ignored SIGINT for the whole
grace period.

    tools/run.sh python benchmarks/stop_order.py [--repeats 3]

Last line: RESULT graph_stop_s value=<median, this order> baseline=<median, start order>
ratio=<v/b>.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from aerialdojo.graph import run_specs
from aerialdojo.runner import NodeProcess, run_domain, start_graph, stop_graph

REPO = Path(__file__).resolve().parents[1]


def _time_stop(run_dir: Path, backwards: bool) -> tuple[float, list[str]]:
    """Seconds ``stop_graph`` takes once an episode is under way, and the nodes it forced."""
    specs = run_specs(
        REPO / "config" / "eval.yaml",
        run_id=run_dir.name,
        output_dir=str(run_dir.parent),
        overrides={"sim_bridge": {"image_width": 96, "image_height": 96}},
    )
    run_dir.mkdir(parents=True)
    nodes = start_graph(specs, run_dir, env=os.environ)
    log = run_dir / "logs" / "task_manager.log"
    deadline = time.monotonic() + 300
    while "episode 2/" not in (log.read_text(errors="replace") if log.exists() else ""):
        if time.monotonic() > deadline:
            stop_graph(nodes)
            sys.exit(f"no episode started within 300 s; see {log}")
        time.sleep(0.2)
    # stop_graph stops in the reverse of the order it is given (the evaluator last): handing
    # it the reversed list gives the start order the runner used before.
    ordered: list[NodeProcess] = nodes if backwards else list(reversed(nodes))
    started = time.monotonic()
    forced = stop_graph(ordered)
    return time.monotonic() - started, forced


def main() -> None:
    """Time both orders, alternating, ``--repeats`` times each; print every trial and the
    RESULT line of the medians (a server is only waited on when SIGINT meets a request in
    flight, so single trials vary)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="trials per order (default 3)")
    repeats = parser.parse_args().repeats
    times: dict[bool, list[float]] = {False: [], True: []}
    with run_domain(os.environ) as domain, tempfile.TemporaryDirectory() as scratch:
        os.environ["ROS_DOMAIN_ID"] = domain
        for trial in range(repeats):
            for backwards, name in ((False, "start order (before)"), (True, "reverse order")):
                run_dir = Path(scratch) / f"{int(backwards)}-{trial}"
                seconds, forced = _time_stop(run_dir, backwards=backwards)
                times[backwards].append(seconds)
                print(f"{name}: {seconds:.1f} s; forced: {', '.join(forced) or '-'}", flush=True)
    value, baseline = statistics.median(times[True]), statistics.median(times[False])
    print(
        f"RESULT graph_stop_s value={value:.2f} baseline={baseline:.2f} "
        f"ratio={value / baseline:.3f}"
    )


if __name__ == "__main__":
    main()
