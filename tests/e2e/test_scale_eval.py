"""Sharded evaluation through the CLI (``aerialdojo eval --workers N``): worker graphs in
their own ROS domains, one bag and record per finished episode, and one merged report
whatever the number of workers; a worker killed mid-run keeps the episodes its graph ended
and loses only the rest of its batch, which the same command then runs, nothing counted
twice. A worker's domain is held for the whole run and looked at for other runs once; another
run heard in it costs only the graph that heard it."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from aerialdojo import cli
from aerialdojo.cli import EXIT_INCOMPLETE
from aerialdojo.graph import run_specs
from aerialdojo.nodes.domain_guard import DISCOVERY_WINDOW_S, WINDOW_ENV
from aerialdojo.runner import start_graph, stop_graph
from aerialdojo.scale import run as scale_run
from aerialdojo.scale.worker import GraphJob, JobOutcome, WorkerGraph

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


#: What a graph's task manager logs when it looked for another run in its domain.
LOOKED = "no other run's task manager in ROS domain"


@pytest.fixture
def cli_here(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[str]], int]]:
    """The CLI in this process, where its batches can be made small (one episode a graph,
    so that a domain sees graph after graph) and the domains' look takes its real 5 s; the
    process's signal handlers and ROS domain are given back after."""
    monkeypatch.setattr(scale_run, "MAX_EPISODES_PER_GRAPH", 1)
    monkeypatch.setenv(WINDOW_ENV, str(DISCOVERY_WINDOW_S))
    monkeypatch.setenv("ROS_DOMAIN_ID", os.environ["ROS_DOMAIN_ID"])  # a worker here sets it
    handlers = {stop: signal.getsignal(stop) for stop in (signal.SIGINT, signal.SIGTERM)}
    yield cli.main
    for stop, handler in handlers.items():
        signal.signal(stop, handler)


def _graphs(run_dir: Path) -> list[tuple[Path, int, bool]]:
    """Each graph of the run in the order its batch was planned: its directory, domain, and
    whether its task manager looked for other runs before serving."""
    return [
        (
            graph,
            int(json.loads((graph / "worker.json").read_text())["domain"]),
            LOOKED in (graph / "logs" / "task_manager.log").read_text(errors="replace"),
        )
        for graph in sorted((run_dir / "graphs").iterdir())
    ]


def test_a_worker_domain_is_held_for_the_run_and_only_its_first_graph_looks_for_other_runs(
    repo: Path, tmp_path: Path, one_worker_run: Path, cli_here: Callable[[list[str]], int]
) -> None:
    code = cli_here(_command(_config(repo, tmp_path), tmp_path / "runs", 2))
    assert code == 0
    run_dir = tmp_path / "runs" / "sharded"
    for name in ("metrics.json", "run_status.json"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name
    graphs = _graphs(run_dir)
    assert len(graphs) == 2  # one per Ray worker, kept for its next batch
    assert len({domain for _, domain, _ in graphs}) == 2  # one per worker
    # One episode a batch: three batches, of which only each graph's first looked.
    batches = [_batches_looked(graph) for graph, _, _ in graphs]
    assert sorted(batches) == [[True], [True, False]]


@contextlib.contextmanager
def _another_run(config: Path, domain: int, run_dir: Path) -> Iterator[None]:
    """A task manager of another run in ``domain``, announced. It does not look first: as if
    it had started between two graphs of ours, when no task manager of ours was there."""
    specs = [
        spec
        for spec in run_specs(config, run_id=run_dir.name, output_dir=str(run_dir.parent))
        if spec.name == "task_manager"
    ]
    environ = {**os.environ, "ROS_DOMAIN_ID": str(domain), WINDOW_ENV: "0"}
    nodes = start_graph(specs, run_dir, env=environ)
    try:
        announced = run_dir / "logs" / "task_manager.log"
        deadline = time.monotonic() + 120
        while "episodes selected" not in announced.read_text(errors="replace"):
            assert time.monotonic() < deadline, announced.read_text(errors="replace")
            assert nodes[0].process.poll() is None, announced.read_text(errors="replace")
            time.sleep(0.1)
        yield
    finally:
        stop_graph(nodes)


def test_another_run_heard_in_a_held_domain_between_two_batches_costs_the_next_batch_only(
    repo: Path,
    tmp_path: Path,
    one_worker_run: Path,
    cli_here: Callable[[list[str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    config = _config(repo, tmp_path)
    command = _command(config, tmp_path / "runs", 1)
    run_dir = tmp_path / "runs" / "sharded"
    episodes = _episode_ids(one_worker_run)
    other_run = tmp_path / "others" / "other-run"
    run_batch = WorkerGraph.run

    def second_batch_beside_another_run(graph: WorkerGraph, job: GraphJob) -> JobOutcome:
        if job.episode_ids != (episodes[1],) or graph.job.domain is None:
            return run_batch(graph, job)
        with _another_run(config, graph.job.domain, other_run):
            return run_batch(graph, job)

    monkeypatch.setattr(WorkerGraph, "run", second_batch_beside_another_run)
    assert cli_here(command) == EXIT_INCOMPLETE
    status = json.loads((run_dir / "run_status.json").read_text())
    assert sorted(status["scored"]) == sorted([episodes[0], episodes[2]])
    [lost] = status["excluded"]
    assert lost["episode_id"] == episodes[1]
    assert "another run's task manager was in its domain" in lost["reason"]
    assert str(other_run) in lost["reason"]
    (first_dir, _, looked_first), (second_dir, _, looked_second) = _graphs(run_dir)
    # The second batch ran on the first batch's graph, in its domain, without looking; it
    # heard the other run, scored nothing and left nothing to salvage. The third batch's
    # graph claimed a domain of its own and looked.
    assert _batches_looked(first_dir) == [True, False]
    assert looked_first and looked_second
    assert _batches_looked(second_dir) == [True]
    assert not (first_dir / "bag").exists()
    assert not (run_dir / "episodes" / episodes[1] / "episode.json").exists()

    monkeypatch.setattr(WorkerGraph, "run", run_batch)
    assert cli_here(command) == 0
    for name in ("metrics.json", "run_status.json"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name


#: What a kept graph's logs say when a node was started for its next batch.
NEXT_BATCH = "started for the next batch"


def _batches_looked(graph: Path) -> list[bool]:
    """For each batch a graph ran, whether its task manager looked for other runs."""
    log = (graph / "logs" / "task_manager.log").read_text(errors="replace")
    return [LOOKED in batch for batch in log.split(NEXT_BATCH)]


def test_one_worker_runs_batch_after_batch_on_one_graph(
    repo: Path, tmp_path: Path, one_worker_run: Path, cli_here: Callable[[list[str]], int]
) -> None:
    assert cli_here(_command(_config(repo, tmp_path), tmp_path / "runs", 1)) == 0
    run_dir = tmp_path / "runs" / "sharded"
    for name in ("metrics.json", "run_status.json", "episodes.csv"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name
    [(graph, _, _)] = _graphs(run_dir)  # one episode a batch, three batches, one graph
    # Its bridge and agent started once; a task manager and an evaluator for each batch,
    # of which only the first looked for other runs.
    logs = {log.stem: log.read_text(errors="replace") for log in (graph / "logs").glob("*.log")}
    assert logs["evaluator"].count(NEXT_BATCH) == EPISODES - 1
    assert _batches_looked(graph) == [True] + [False] * (EPISODES - 1)
    kept = [name for name in logs if name not in ("task_manager", "evaluator")]
    assert "sim_bridge" in kept and len(kept) >= 2
    for name in kept:
        assert NEXT_BATCH not in logs[name] and "restart" not in logs[name], name


def _children(name: str) -> list[int]:
    """The pids of this process's children that run the node module ``name``."""
    children = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            ppid = int(stat.read_text().rpartition(")")[2].split()[1])
            command = (stat.parent / "cmdline").read_bytes().split(b"\0")
            if ppid == os.getpid() and f"aerialdojo.nodes.{name}".encode() in command:
                children.append(int(stat.parent.name))
    return children


def test_a_graph_whose_bridge_dies_between_batches_is_replaced_for_the_next_batch(
    repo: Path,
    tmp_path: Path,
    one_worker_run: Path,
    cli_here: Callable[[list[str]], int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run_batch = WorkerGraph.run
    batches: list[str] = []

    def bridge_killed_after_the_first_batch(graph: WorkerGraph, job: GraphJob) -> JobOutcome:
        outcome = run_batch(graph, job)
        batches.append(graph.name)
        if len(batches) == 1:
            [bridge] = _children("sim_bridge")
            os.kill(bridge, signal.SIGKILL)
            os.waitid(os.P_PID, bridge, os.WEXITED | os.WNOWAIT)  # dead, left to its Popen
        return outcome

    monkeypatch.setattr(WorkerGraph, "run", bridge_killed_after_the_first_batch)
    assert cli_here(_command(_config(repo, tmp_path), tmp_path / "runs", 1)) == 0
    run_dir = tmp_path / "runs" / "sharded"
    for name in ("metrics.json", "run_status.json", "episodes.csv"):
        assert (run_dir / name).read_bytes() == (one_worker_run / name).read_bytes(), name
    # The first graph ran one batch and lost its bridge. It was stopped, every node of it,
    # and its domain, held and listened in, went to a new graph, which ran the other two
    # batches without looking.
    (first, in_first, _), (second, in_second, _) = _graphs(run_dir)
    assert batches == [first.name, second.name, second.name]
    assert in_first == in_second
    assert _batches_looked(first) == [True]
    assert _batches_looked(second) == [False, False]
