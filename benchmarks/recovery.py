"""How often an interrupted run can be completed: N runs of ``aerialdojo eval`` (three
episodes each), each hit once by a random signal (SIGINT, SIGTERM, SIGKILL, or SIGSTOP held
past the task manager's simulator timeout) sent to a random process (a node, or the CLI
itself) at a random moment of the first episodes. A run counts as recovered when its
``run_status.json`` accounts for every selected episode exactly once (scored, excluded with a
reason, or not started) and, where it is incomplete, ``aerialdojo rerun`` completes it.

    tools/run.sh python benchmarks/recovery.py [--runs 20] [--seed 0]

Baseline: 1.0, every interrupted run recovered (issue 15's aim). Last line:
RESULT recovery_complete_runs value=<fraction> baseline=1.0 ratio=<fraction>.
"""

from __future__ import annotations

import argparse
import json
import os
import random
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


def _interrupted_run(rng: random.Random, config: Path, runs: Path, run_id: str) -> str:
    """Run, interrupt and (where needed) rerun; returns ``recovered`` or why not."""
    cli = subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", "eval", "--config", str(config),
         "--episodes", "3", "--output", str(runs), "--run-id", run_id],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    run_dir = runs / run_id
    target, name = rng.choice(TARGETS), rng.choice(SIGNALS)
    moment_s = rng.uniform(0.0, 5.0)  # within the first episodes
    log = run_dir / "logs" / "task_manager.log"
    deadline = time.monotonic() + 600
    while not (log.exists() and "started (attempt 0)" in log.read_text(errors="replace")):
        if cli.poll() is not None or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    time.sleep(moment_s)
    pid = cli.pid if target == "cli" else _node_pid(run_dir, target)
    if pid is not None and cli.poll() is None:
        try:
            os.kill(pid, getattr(signal, name))
            if name == "SIGSTOP":
                time.sleep(SIM_TIMEOUT_S + 2.0)
                os.kill(pid, signal.SIGCONT)
        except ProcessLookupError:
            pass
    try:
        cli.wait(timeout=900)
    except subprocess.TimeoutExpired:
        os.killpg(cli.pid, signal.SIGKILL)
        return f"{name} to {target} after {moment_s:.1f} s: the run hung"
    time.sleep(2.0)  # a CLI killed outright: its nodes finish the report on their own
    status = _accounted(run_dir)
    what = f"{name} to {target} after {moment_s:.1f} s (exit {cli.returncode})"
    if status is None:
        return f"{what}: the episodes are not all accounted for"
    if status["complete"]:
        return f"{what}: recovered, complete without a rerun"
    rerun = subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", "rerun", str(run_dir)],
        capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    combined = _accounted(runs / f"{run_id}-rerun" / "combined")
    if rerun.returncode != 0 or combined is None or not combined["complete"]:
        return f"{what}: the rerun did not complete it (exit {rerun.returncode})"
    return f"{what}: recovered by a rerun"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    recovered = 0
    with tempfile.TemporaryDirectory() as directory:
        config = _config(Path(directory))
        for index in range(args.runs):
            outcome = _interrupted_run(rng, config, Path(directory) / "runs", f"run{index}")
            recovered += "recovered" in outcome
            print(f"run {index + 1}/{args.runs}: {outcome}", flush=True)
    fraction = recovered / args.runs
    print(f"RESULT recovery_complete_runs value={fraction:.2f} baseline=1.0 ratio={fraction:.2f}")


if __name__ == "__main__":
    main()
