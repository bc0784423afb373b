"""How often an interrupted run can be completed: N runs of ``aerialdojo eval`` (three
episodes each), each hit once by a random signal (SIGINT, SIGTERM, SIGKILL, or SIGSTOP held
past the task manager's simulator timeout) sent to a random process (a node, or the CLI
itself) at a random moment of the first episodes. A run counts as recovered when its
``run_status.json`` accounts for every selected episode exactly once (scored, excluded with a
reason, or not started) and, where it is incomplete, ``aerialdojo rerun`` completes it.

What each fault cost: the wall time of the interrupted run and its rerun beyond that of an
undisturbed run of the same episodes, measured first in the same invocation. Issue 29's aim is
that no single fault costs more than ``sim_timeout_s`` plus one episode (the undisturbed run's
longest, from its task manager's log), and each run says whether it held.

    tools/run.sh python benchmarks/recovery.py [--runs 20] [--seed 0] [--targets sim_bridge,cli]
        [--signals SIGKILL,SIGINT]

Baseline: 1.0, every interrupted run recovered (issue 15's aim). The worst fault's cost against
the aim, then, last, the recovered fraction:
RESULT recovery_worst_fault_cost_s value=<s> baseline=<aim s> ratio=<cost/aim>
RESULT recovery_complete_runs value=<fraction> baseline=1.0 ratio=<fraction>.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
TARGETS = ("sim_bridge", "task_manager", "evaluator", "uav_agent", "cli")
SIGNALS = ("SIGINT", "SIGTERM", "SIGKILL", "SIGSTOP")
SIM_TIMEOUT_S = 5.0
#: How long a SIGSTOP holds its process: past the simulator timeout. Part of that fault's cost.
STOP_HELD_S = SIM_TIMEOUT_S + 2.0


def _config(directory: Path) -> Path:
    config = yaml.safe_load((REPO / "config" / "eval.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=64, image_height=64)
    config["task_manager"]["ros__parameters"]["sim_timeout_s"] = SIM_TIMEOUT_S
    path = directory / "eval.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _node_pid(run_dir: Path, node: str) -> int | None:
    params = str(run_dir / "params" / f"{node}.yaml")
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if params in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    return int(entry.name)
            except OSError:
                continue
    return None


def _accounted(run_dir: Path) -> dict | None:
    """The run's status if it accounts for every selected episode exactly once."""
    try:
        status = json.loads((run_dir / "run_status.json").read_text())
    except (OSError, ValueError):
        return None
    ended = [*status["scored"], *(e["episode_id"] for e in status["excluded"])]
    every = sorted(ended + status["not_started"]) == sorted(status["selected"])
    return status if every and status["selected"] else None


def _eval(config: Path, runs: Path, run_id: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--episodes", "3", "--output", str(runs), "--run-id", run_id],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip


#: A task manager log line's wall time (ROS's default format: ``[INFO] [<seconds>] ...``).
_LOG_TIME = re.compile(r"^\[\w+\] \[(\d+\.\d+)\]")


def _longest_episode_s(run_dir: Path) -> float:
    """The longest episode of a run, from one episode's start to the next (or the run's
    end) in its task manager's log."""
    times = [
        float(match.group(1))
        for line in (run_dir / "logs" / "task_manager.log").read_text(errors="replace").splitlines()
        if ("started (attempt" in line or "run finished" in line)
        and (match := _LOG_TIME.match(line))
    ]
    if len(times) < 2:
        raise SystemExit(f"the undisturbed run {run_dir} logged no whole episode")
    return max(later - earlier for earlier, later in itertools.pairwise(times))


def _undisturbed_run(config: Path, runs: Path) -> tuple[float, float]:
    """The wall time of an undisturbed run of the episodes, and its longest episode."""
    began = time.monotonic()
    cli = _eval(config, runs, "undisturbed")
    if cli.wait(timeout=900) != 0 or _accounted(runs / "undisturbed") is None:
        raise SystemExit(f"the undisturbed run failed (exit {cli.returncode})")
    return time.monotonic() - began, _longest_episode_s(runs / "undisturbed")


def _interrupted_run(
    rng: random.Random,
    config: Path,
    runs: Path,
    run_id: str,
    *,
    targets: list[str],
    signals: list[str],
) -> tuple[str, float]:
    """Run, interrupt and (where needed) rerun; returns ``recovered`` or why not, and the
    wall time it all took."""
    began = time.monotonic()
    cli = _eval(config, runs, run_id)
    run_dir = runs / run_id
    target, name = rng.choice(targets), rng.choice(signals)
    moment_s = rng.uniform(0.0, 5.0)  # within the first episodes
    log = run_dir / "logs" / "task_manager.log"
    deadline = time.monotonic() + 600
    while not (log.exists() and "started (attempt 1)" in log.read_text(errors="replace")):
        if cli.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    time.sleep(moment_s)
    pid = cli.pid if target == "cli" else _node_pid(run_dir, target)
    if pid is not None and cli.poll() is None:
        try:
            os.kill(pid, getattr(signal, name))
            if name == "SIGSTOP":
                time.sleep(STOP_HELD_S)
                os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    try:
        cli.wait(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(cli.pid, signal.SIGKILL)
        return f"{name} to {target} after {moment_s:.1f} s: the run hung", math.inf
    took_s = time.monotonic() - began
    time.sleep(2.0)  # a CLI killed outright: its nodes finish the report on their own
    status = _accounted(run_dir)
    held = f", held {STOP_HELD_S:g} s" if name == "SIGSTOP" else ""
    what = f"{name} to {target} after {moment_s:.1f} s{held} (exit {cli.returncode})"
    if status is None:
        return f"{what}: the episodes are not all accounted for", math.inf
    if status["complete"]:
        return f"{what}: recovered, complete without a rerun", took_s
    rerun_began = time.monotonic()
    rerun = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "rerun", str(run_dir)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    combined = _accounted(runs / f"{run_id}-rerun" / "combined")
    if rerun.returncode != 0 or combined is None or not combined["complete"]:
        return f"{what}: the rerun did not complete it (exit {rerun.returncode})", math.inf
    return f"{what}: recovered by a rerun", took_s + time.monotonic() - rerun_began


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--targets",
        default=",".join(TARGETS),
        help=f"the processes a fault may hit, comma-separated (default: {','.join(TARGETS)})",
    )
    parser.add_argument(
        "--signals",
        default=",".join(SIGNALS),
        help=f"the signals a fault may be, comma-separated (default: {','.join(SIGNALS)})",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the runs (their logs show where a fault's cost went) in this new directory",
    )
    args = parser.parse_args()
    targets, signals = args.targets.split(","), args.signals.split(",")
    if unknown := set(targets) - set(TARGETS):
        parser.error(f"--targets: no process {sorted(unknown)}; choose from {TARGETS}")
    if unknown := set(signals) - set(SIGNALS):
        parser.error(f"--signals: no signal {sorted(unknown)}; choose from {SIGNALS}")
    rng = random.Random(args.seed)
    recovered = 0
    costs: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        directory = Path(scratch)
        if args.keep is not None:
            args.keep.mkdir()  # a new one: nothing is written into a directory it did not make
            directory = args.keep
        config = _config(directory)
        runs = directory / "runs"
        undisturbed_s, episode_s = _undisturbed_run(config, runs)
        aim_s = SIM_TIMEOUT_S + episode_s
        print(
            f"undisturbed run: {undisturbed_s:.1f} s, longest episode {episode_s:.1f} s; "
            f"aim: a fault costs at most {aim_s:.1f} s (sim_timeout_s {SIM_TIMEOUT_S:g} s "
            "plus one episode)",
            flush=True,
        )
        for index in range(args.runs):
            outcome, took_s = _interrupted_run(
                rng, config, runs, f"run{index}", targets=targets, signals=signals
            )
            recovered += "recovered" in outcome
            cost_s = took_s - undisturbed_s
            costs.append(cost_s)
            verdict = "within the aim" if cost_s <= aim_s else "OVER THE AIM"
            print(
                f"run {index + 1}/{args.runs}: {outcome}; the fault cost {cost_s:.1f} s, {verdict}",
                flush=True,
            )
    fraction = recovered / args.runs
    held = sum(cost <= aim_s for cost in costs)
    print(f"the aim held in {held} of {args.runs} runs")
    worst = max(costs)
    print(
        f"RESULT recovery_worst_fault_cost_s value={worst:.1f} baseline={aim_s:.1f} "
        f"ratio={worst / aim_s:.2f}"
    )
    print(f"RESULT recovery_complete_runs value={fraction:.2f} baseline=1.0 ratio={fraction:.2f}")


if __name__ == "__main__":
    main()
