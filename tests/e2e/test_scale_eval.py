"""Sharded evaluation through the CLI (``aerialdojo eval --workers N``): worker graphs in
their own ROS domains, one bag and record per finished episode, and one merged report
whatever the number of workers; a worker killed mid-run keeps the episodes its graph ended
and loses only the rest of its batch, which the same command then runs, nothing counted
twice."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from aerialdojo.cli import EXIT_INCOMPLETE

pytestmark = [pytest.mark.ros, pytest.mark.e2e]

#: Small and quick: the oracle's three episodes at 96x96 (two batches on two workers).
EPISODES = 3


def _config(repo: Path, directory: Path) -> Path:
    config = yaml.safe_load((repo / "config" / "oracle.yaml").read_text())
    config["sim_bridge"]["ros__parameters"].update(image_width=96, image_height=96)
    config["task_manager"]["ros__parameters"].update(max_episodes=EPISODES)
    path = directory / "oracle.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _command(config: Path, output: Path, workers: int) -> list[str]:
    """The CLI's arguments of a sharded run of ``config`` (the same run id every time)."""
    return [
        "eval", "--config", str(config), "--workers", str(workers), "--output", str(output),
        "--run-id", "sharded",
    ]  # fmt: skip


def _run(*args: object) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "aerialdojo.cli", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def one_worker_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The reference: the suite on one worker graph, in the CLI's process."""
    directory = tmp_path_factory.mktemp("one_worker")
    config = _config(Path(__file__).resolve().parents[2], directory)
    run = _run(*_command(config, directory / "runs", 1))
    assert run.returncode == 0, run.stderr[-3000:]
    return directory / "runs" / "sharded"


def _episode_ids(run_dir: Path) -> list[str]:
    return json.loads((run_dir / "run_status.json").read_text())["selected"]


def test_two_workers_give_the_report_of_one_and_the_episode_bags_give_it_too(
    repo: Path, tmp_path: Path, one_worker_run: Path
) -> None:
    run = _run(*_command(_config(repo, tmp_path), tmp_path / "runs", 2))
    assert run.returncode == 0, run.stderr[-3000:]
    run_dir = tmp_path / "runs" / "sharded"
    for name in ("metrics.json", "report.md", "run_status.json", "episodes.csv"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name
    graphs = sorted((run_dir / "graphs").iterdir())
    assert len(graphs) == 2  # two batches, each its own graph in its own domain
    domains = {json.loads((graph / "worker.json").read_text())["domain"] for graph in graphs}
    assert domains <= set(range(51, 102))
    # Every episode has its own bag, and the bags alone give the merged metrics.
    episodes = _episode_ids(run_dir)
    assert len(episodes) == EPISODES
    bags = [run_dir / "episodes" / episode / "bag" for episode in sorted(episodes)]
    replay = _run("evaluate-bag", *bags, "--out", tmp_path / "replay")
    assert replay.returncode == 0, replay.stderr
    assert (tmp_path / "replay" / "metrics.json").read_bytes() == (
        run_dir / "metrics.json"
    ).read_bytes()
    # One bag alone is a complete one-episode run.
    single = _run("evaluate-bag", bags[0])
    assert "1 episode(s) selected: 1 scored" in single.stdout, single.stdout


def _graph_past_its_first_episode(run_dir: Path) -> tuple[int, str] | None:
    """The worker pid and the ended episode of a graph (of two episodes) past its first."""
    for log in (run_dir / "graphs").glob("*/logs/evaluator.log"):
        ended = re.search(r"\[1/2\] (\S+):", log.read_text(errors="replace"))
        if ended:
            return int(json.loads((log.parents[1] / "worker.json").read_text())["pid"]), (
                ended.group(1)
            )
    return None


def test_a_killed_worker_keeps_the_episodes_its_graph_ended_and_the_same_command_completes_the_run(
    repo: Path, tmp_path: Path, one_worker_run: Path
) -> None:
    command = _command(_config(repo, tmp_path), tmp_path / "runs", 2)
    run_dir = tmp_path / "runs" / "sharded"
    with subprocess.Popen(
        [sys.executable, "-m", "aerialdojo.cli", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as cli:
        deadline = time.monotonic() + 300
        found = None
        while found is None and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
            if (run_dir / "graphs").is_dir():
                found = _graph_past_its_first_episode(run_dir)
        assert found is not None, "no worker graph ended an episode"
        worker, ended = found
        os.kill(worker, signal.SIGKILL)
        _, stderr = cli.communicate(timeout=300)
    status = json.loads((run_dir / "run_status.json").read_text())
    # The episode the graph had ended is kept from the bag its nodes closed as they stopped.
    assert ended in status["scored"], stderr[-3000:]
    recovered = re.search(
        r"recovered \d+ episode\(s\) that graphs of dead workers had ended: (.*)", stderr
    )
    assert recovered and ended in recovered.group(1).split(", "), stderr[-3000:]
    # The rest of its batch (the episode running) is an infrastructure failure to rerun.
    lost = [entry["episode_id"] for entry in status["excluded"]]
    assert len(lost) <= 1 and len(status["scored"]) + len(lost) == EPISODES
    assert all("worker died" in entry["reason"] for entry in status["excluded"])
    assert cli.returncode == (EXIT_INCOMPLETE if lost else 0), stderr[-3000:]
    for episode in lost:  # nothing of it was kept as finished
        assert not (run_dir / "episodes" / episode / "episode.json").exists()

    rerun = _run(*command)
    assert rerun.returncode == 0, rerun.stderr[-3000:]
    assert f"{EPISODES} episode(s) on 2 worker(s), {EPISODES - len(lost)} already finished" in (
        rerun.stderr
    )
    for name in ("metrics.json", "run_status.json"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name
