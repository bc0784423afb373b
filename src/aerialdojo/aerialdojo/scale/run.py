"""``aerialdojo eval --workers N``: the run's unfinished episodes in batches, run by workers
(this process for one, else Ray actors on local cores or a cluster), each on a worker graph
kept from batch to batch (``scale.worker``); then the merged report of every finished
episode.

Re-running the same command (same ``--run-id``) skips finished episodes; a batch whose
worker dies keeps the episodes its graph ended, and the rest come back as infrastructure
failures to rerun, never as agent failures.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from aerialdojo.documents import RECORD, DocumentError, load_json
from aerialdojo.errors import ConfigError
from aerialdojo.graph import config_of, default_run_id, run_dir_of
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.run_contract import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_INTERRUPTED, RUN_CONFIG
from aerialdojo.runner import DOMAIN_LOCKS, claimed_domain
from aerialdojo.scale.records import (
    GRAPHS_DIR,
    finished_episodes,
    merge_transcripts,
    merged_result,
    read_records,
)
from aerialdojo.scale.worker import (
    EndingSink,
    GraphJob,
    JobOutcome,
    WorkerGraph,
    await_closed_bags,
    salvage_graphs,
)
from aerialdojo.tasks.shards import ray_session

if TYPE_CHECKING:
    from aerialdojo.graph import NodeSpec
    from aerialdojo.nodes.other_runs import DomainListener

#: The most episodes one worker graph runs: a graph costs seconds to start, and a worker
#: that dies takes its graph down with it.
MAX_EPISODES_PER_GRAPH = 20
#: How the run was sharded, saved so that ``aerialdojo rerun`` resumes it the same way.
SHARDING_FILE = "sharding.json"
_POLL_S = 0.25
#: How long the end of a run waits for the evaluator of a dead worker's graph to close its
#: bag (it stops with the worker; see ``worker.salvage_graphs``).
BAG_CLOSE_GRACE_S = 30.0


@dataclass(frozen=True, kw_only=True)
class WorkerResources:
    """What Ray reserves for each worker graph (``--worker-resources CPU=1,GPU=1``).

    Attributes:
        cpus: CPUs per worker.
        gpus: GPUs per worker (e.g. one per simulator server).
        custom: other Ray resources by name (e.g. ``sim_server=1`` on the hosts that have one).
    """

    cpus: float = 1.0
    gpus: float = 0.0
    custom: dict[str, float] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> WorkerResources:
        """Read ``NAME=AMOUNT,...`` (CPU and GPU, or any Ray custom resource).

        Raises:
            ConfigError: a malformed item or an amount that is not a non-negative number.
        """
        amounts: dict[str, float] = {}
        for item in filter(None, (part.strip() for part in text.split(","))):
            name, equals, amount = item.partition("=")
            try:
                value = float(amount)
            except ValueError:
                value = -1.0
            if not equals or not name.strip() or not math.isfinite(value) or value < 0:
                raise ConfigError(
                    f"--worker-resources: {item!r} is not NAME=AMOUNT with a non-negative amount"
                )
            amounts[name.strip()] = value
        return cls(cpus=amounts.pop("CPU", 1.0), gpus=amounts.pop("GPU", 0.0), custom=amounts)

    def ray_options(self) -> dict[str, Any]:
        """Options of a Ray actor that reserves these."""
        return {"num_cpus": self.cpus, "num_gpus": self.gpus, "resources": dict(self.custom)}

    def to_text(self) -> str:
        """The ``--worker-resources`` text that parses back into these."""
        amounts = {"CPU": self.cpus, "GPU": self.gpus, **self.custom}
        return ",".join(f"{name}={amount:g}" for name, amount in amounts.items())


class HeldDomains:
    """The ROS domains of a run's local worker graphs, claimed at the start and held for the
    whole run, so that a graph after the first in a domain skips its task manager's look for
    other runs (``nodes.domain_guard``, 5 s).

    What the look guards stays guarded, with one gap (below). No other run on the host can
    take a held domain (its lock); the first graph in each domain looks as before; and from
    the claim on, a listener here hears any other run's task manager that announces itself
    in the domain, between graphs too (a run on another host in the same domain id), as does
    each graph's worker while the graph lives (``EpisodeEndings.other_runs``). A domain
    where one was heard is let go, and a graph that heard one scores nothing. So is the
    domain of a graph whose worker died (its nodes may still be stopping in it) or that
    scored nothing (its task manager may have been refused). The graphs after claim and
    look on their own, as workers on other hosts (a Ray cluster) always do. The gap: a run
    that announces itself less than a discovery time before a graph starts shares the
    domain with that graph until the graph hears it and stops (docs/performance.md, change
    20).
    """

    def __init__(
        self, stack: contextlib.ExitStack, count: int, run_dir: Path, locks: Path = DOMAIN_LOCKS
    ) -> None:
        """Claim up to ``count`` domains in ``locks`` (``runner.claimed_domain``) and listen
        in each, until ``stack`` closes; fewer when the host has fewer free: the other graphs
        claim their own, or fail saying why."""
        self._held: dict[int, contextlib.ExitStack] = {}
        self._listeners: dict[int, DomainListener] = {}
        self._free: list[int] = []
        self._looked: set[int] = set()
        if count < 1:
            return
        from aerialdojo.nodes.other_runs import DomainListener  # noqa: PLC0415 (rclpy)

        for _ in range(count):
            held = stack.enter_context(contextlib.ExitStack())
            try:
                domain = held.enter_context(claimed_domain(locks, run_dir))
            except ConfigError:
                break
            self._listeners[domain] = DomainListener(domain, run_dir / GRAPHS_DIR)
            held.callback(self._listeners[domain].close)
            self._held[domain] = held
            self._free.append(domain)

    def assign(self, job: GraphJob) -> GraphJob:
        """``job`` in a free held domain where no other run was heard, if there is one; else
        as it is (its graph claims its own)."""
        while self._free:
            domain = self._free.pop(0)
            if self._listeners[domain].other_runs.heard:
                self._let_go(domain)
                continue
            return dataclasses.replace(job, domain=domain, domain_checked=domain in self._looked)
        return job

    def release(self, job: GraphJob, outcome: JobOutcome | None) -> None:
        """Take back ``job``'s domain after its graph ended with ``outcome`` (None: its worker
        died). Kept, as looked at, for the next graph if the graph scored an episode in it
        (its task manager served, so it had looked or been told it need not) and no other
        run was heard in it; else let go."""
        if job.domain is None:
            return
        if (
            outcome is None
            or outcome.domain_shared
            or not outcome.scored
            or self._listeners[job.domain].other_runs.heard
        ):
            self._let_go(job.domain)
            return
        self._looked.add(job.domain)
        self._free.append(job.domain)

    def _let_go(self, domain: int) -> None:
        del self._listeners[domain]
        self._held.pop(domain).close()


def plan_jobs(
    run_dir: Path, pending: Sequence[str], workers: int, timeout_s: float
) -> list[GraphJob]:
    """Contiguous batches of ``pending``, enough for every worker, none over
    ``MAX_EPISODES_PER_GRAPH``; named uniquely across invocations."""
    size = max(1, min(MAX_EPISODES_PER_GRAPH, math.ceil(len(pending) / workers)))
    stamp = f"{default_run_id()}-{os.getpid()}"  # two invocations never share a name
    return [
        GraphJob(
            run_dir=run_dir,
            graph=f"{stamp}-{start // size:05d}",
            episode_ids=tuple(pending[start : start + size]),
            timeout_s=timeout_s,
        )
        for start in range(0, len(pending), size)
    ]


def run_sharded_command(specs: list[NodeSpec], args: argparse.Namespace) -> int:
    """``aerialdojo eval --workers N [--ray-address ADDR] [--worker-resources ...]`` (the CLI
    has refused what a sharded run cannot take, such as ``--live``).

    Raises:
        ConfigError: bad worker resources.
    """
    return run_sharded(
        specs,
        run_selection(specs),
        workers=args.workers or 1,
        ray_address=args.ray_address,
        resources=WorkerResources.parse(args.worker_resources),
        timeout_s=args.timeout,
    )


def resume_sharded(run_dir: Path, *, dry_run: bool, timeout_s: float) -> int:
    """``aerialdojo rerun`` of a sharded run: its unfinished episodes, sharded as before.

    Raises:
        ConfigError: an unreadable sharding file or config.
    """
    from aerialdojo.graph import run_specs  # noqa: PLC0415

    try:
        sharding = load_json(run_dir / SHARDING_FILE, RECORD)
        workers, address = int(sharding["workers"]), sharding["ray_address"]
        resources = WorkerResources.parse(str(sharding["resources"]))
    except (DocumentError, ValueError, KeyError, TypeError) as error:
        raise ConfigError(f"{run_dir / SHARDING_FILE}: not a readable sharding: {error}") from error
    specs = run_specs(run_dir / RUN_CONFIG, run_id=run_dir.name, output_dir=str(run_dir.parent))
    selection = run_selection(specs)
    missing = [e for e in selection if e not in set(finished_episodes(run_dir, selection))]
    if not missing:
        print(f"{run_dir}: complete, every selected episode was scored; nothing to rerun")
        return 0
    print(f"rerunning {len(missing)} episode(s): {', '.join(missing)}")
    if dry_run:
        return 0
    return run_sharded(
        specs,
        selection,
        workers=workers,
        ray_address=address,
        resources=resources,
        timeout_s=timeout_s,
    )


def run_settings(specs: Sequence[NodeSpec]) -> dict[str, Any]:
    """The protocol settings the run's task manager runs under (what its ``RUN_STARTED``
    records), as every worker graph's does."""
    from aerialdojo.protocols import suite_protocol  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    task_manager = next(spec for spec in specs if spec.name == "task_manager").parameters
    return suite_protocol(resolve_suite(str(task_manager["suite"]))).settings_of(task_manager)


def run_selection(specs: Sequence[NodeSpec]) -> list[str]:
    """The episodes the run's task manager selects, in order."""
    from aerialdojo.graph import selected_episodes  # noqa: PLC0415
    from aerialdojo.protocols import load_suite  # noqa: PLC0415
    from aerialdojo.tasks.suite import resolve_suite  # noqa: PLC0415

    task_manager = next(spec for spec in specs if spec.name == "task_manager").parameters
    _, suite = load_suite(resolve_suite(str(task_manager["suite"])))
    return selected_episodes(suite, task_manager)


def run_sharded(
    specs: list[NodeSpec],
    selection: Sequence[str],
    *,
    workers: int,
    ray_address: str | None = None,
    resources: WorkerResources | None = None,
    timeout_s: float = 3600.0,
) -> int:
    """Run the unfinished episodes of ``selection`` on ``workers`` worker graphs at a time,
    then write the merged report; the exit status is ``aerialdojo eval``'s.

    Args:
        specs: the run's node specs (``graph.run_specs``); its evaluator names the run
            directory.
        selection: the run's selected episodes.
        workers: worker graphs at once: 1 runs them in this process; more start a local
            Ray instance with that many CPUs, or use the cluster at ``ray_address``.
        ray_address: a Ray cluster (``auto`` or ``host:port``).
        resources: what each worker reserves on Ray.
        timeout_s: per batch.

    Raises:
        ConfigError: a bad option, or a run directory that holds a run of another config.
    """
    from aerialdojo.eval_progress import console_for_progress  # noqa: PLC0415
    from aerialdojo.report.run import write_run  # noqa: PLC0415
    from aerialdojo.runner import remove_dead_segments, shm_segments  # noqa: PLC0415
    from aerialdojo.scale.progress import RunProgress  # noqa: PLC0415

    if workers < 1:
        raise ConfigError(f"--workers {workers}: must be positive")
    resources = resources or WorkerResources()
    evaluator = next(spec for spec in specs if spec.name == "evaluator").parameters
    run_dir = run_dir_of(specs)
    _prepare_run_dir(run_dir, specs, workers, ray_address, resources)
    console = console_for_progress()
    _salvage(run_dir, selection, console)
    finished = finished_episodes(run_dir, selection)
    done = set(finished)
    pending = [e for e in selection if e not in done]
    jobs = plan_jobs(run_dir, pending, workers, timeout_s)
    excluded: dict[str, ExcludedEpisode] = {}
    dead_graphs: list[str] = []
    interrupted = False
    segments_before = shm_segments()
    with (
        contextlib.ExitStack() as held,
        RunProgress(console, len(selection), len(finished), workers) as progress,
    ):
        # Only this host's graphs can use this host's domain locks.
        local_graphs = min(workers, len(jobs)) if ray_address is None else 0
        domains = HeldDomains(held, local_graphs, run_dir)

        def on_outcome(outcome: JobOutcome, lost_reason: str | None) -> None:
            excluded.update((entry.episode_id, entry) for entry in outcome.excluded)
            if lost_reason is not None:
                progress.job_lost(outcome, lost_reason)
                dead_graphs.append(outcome.graph)

        try:
            if workers == 1 and ray_address is None:
                _run_here(jobs, domains, sink=progress.ending, on_outcome=on_outcome)
            else:
                _run_on_ray(
                    jobs,
                    domains,
                    workers=workers,
                    ray_address=ray_address,
                    resources=resources,
                    sink=progress.ending,
                    on_outcome=on_outcome,
                )
        except KeyboardInterrupt:
            interrupted = True
            console.print("interrupted: the finished episodes are kept; run again to go on")
        finally:
            # A local worker that died could not remove its graph's shared memory.
            remove_dead_segments(segments_before)
    await_closed_bags(run_dir, dead_graphs, BAG_CLOSE_GRACE_S)
    for episode_id in _salvage(run_dir, selection, console):
        excluded.pop(episode_id, None)
    radii = [float(r) for r in evaluator.get("success_radii_m") or []] or None  # type: ignore[union-attr]
    records = read_records(run_dir, selection, radii=radii)
    result = merged_result(
        records, selection, excluded, radii, finished=not interrupted, settings=run_settings(specs)
    )
    suite = str(evaluator.get("suite", ""))
    write_run(
        run_dir,
        result,
        transcripts_dir=merge_transcripts(run_dir, records),
        suite=Path(suite) if suite else None,
        maps_drawn=True,
    )
    print(result.summary_table)
    print(result.accounting)
    print(f"report: {run_dir / 'report.md'}\nepisode bags: {run_dir / 'episodes'}/*/bag")
    if interrupted:
        return EXIT_INTERRUPTED
    if result.metrics is None:
        return EXIT_FAILED
    return 0 if result.complete else EXIT_INCOMPLETE


def _run_here(
    jobs: Sequence[GraphJob],
    domains: HeldDomains,
    *,
    sink: EndingSink,
    on_outcome: Callable[[JobOutcome, str | None], None],
) -> None:
    """The jobs one after the other on one worker in this process, on a graph kept from
    batch to batch (``WorkerGraph``) in a domain of ``domains``. A graph that did not finish
    its batch, scored nothing, heard another run in its domain, or lost its bridge or an
    agent after its batch is stopped, every node of it, and its domain given back as after
    its last batch (``HeldDomains.release``, which lets the doubtful ones go); the next batch
    starts a new graph."""
    graph: WorkerGraph | None = None
    try:
        for job in jobs:
            if graph is None:
                graph = WorkerGraph(domains.assign(job), sink)
            outcome, kept = graph.run_kept(job)
            on_outcome(outcome, None)
            if not kept:
                domains.release(graph.job, outcome)
                graph = None
    finally:
        if graph is not None:  # the run's end (its domains are let go with it), or Ctrl-C
            graph.close()


def _salvage(run_dir: Path, selection: Sequence[str], console: Any) -> list[str]:
    """The unfinished episodes of ``selection`` that graphs of dead workers had ended."""
    recovered = salvage_graphs(run_dir, selection)
    if recovered:
        console.print(
            f"recovered {len(recovered)} episode(s) that graphs of dead workers had ended: "
            + ", ".join(recovered)
        )
    return recovered


def _prepare_run_dir(
    run_dir: Path,
    specs: list[NodeSpec],
    workers: int,
    ray_address: str | None,
    resources: WorkerResources,
) -> None:
    """Save the run's config and sharding; refuse a directory holding another config's run
    (its episodes would be merged with this one's)."""
    config = yaml.safe_dump(config_of(specs), sort_keys=False)
    config_file = run_dir / RUN_CONFIG
    if config_file.is_file() and config_file.read_text(encoding="utf-8") != config:
        raise ConfigError(
            f"{run_dir} holds a run of another config ({config_file}); resume it with its "
            "own config or choose another --run-id"
        )
    try:
        run_dir.mkdir(parents=True, exist_ok=True)
        config_file.write_text(config, encoding="utf-8")
        sharding = {
            "workers": workers,
            "ray_address": ray_address,
            "resources": resources.to_text(),
        }
        (run_dir / SHARDING_FILE).write_text(json.dumps(sharding, indent=2) + "\n")
    except OSError as error:
        raise ConfigError(
            f"evaluator.output_dir: cannot create the run directory {run_dir}: "
            f"{error.strerror or error}"
        ) from error


class _GraphActor:
    """A Ray actor that owns one worker's graph (``WorkerGraph``), kept from batch to batch
    as on a worker in the CLI's process (``_run_here``); its endings go through ``queue``."""

    def __init__(self, queue: Any) -> None:
        self._queue = queue
        self._graph: WorkerGraph | None = None

    def run(self, job: GraphJob) -> tuple[JobOutcome, bool]:
        """Run ``job`` on the kept graph, or on a new one started for it (in ``job``'s
        domain); returns its outcome, and whether the graph is kept for the next batch
        (else it was stopped, every node of it, and its domain can be handed on)."""
        if self._graph is None:
            self._graph = WorkerGraph(job, self._queue.put)
        outcome, kept = self._graph.run_kept(job)
        if not kept:
            self._graph = None
        return outcome, kept

    def close(self) -> None:
        """Stop the kept graph."""
        if self._graph is not None:
            self._graph.close()
            self._graph = None


def _run_on_ray(
    jobs: Sequence[GraphJob],
    domains: HeldDomains,
    *,
    workers: int,
    ray_address: str | None,
    resources: WorkerResources,
    sink: EndingSink,
    on_outcome: Callable[[JobOutcome, str | None], None],
) -> None:
    """The jobs on ``workers`` Ray actors, where Ray places them, each owning a graph kept
    from batch to batch (``_GraphActor``); a job goes to whichever actor is free, and an
    actor without a graph starts one in a domain of ``domains`` while one is free. A job
    whose actor dies (or that Ray cannot run) comes back with all its episodes excluded;
    a new actor takes the actor's place while batches wait."""
    import ray  # noqa: PLC0415  (only sharded runs pay for importing Ray)
    from ray.util.queue import Queue  # noqa: PLC0415

    with ray_session(workers, ray_address):
        queue = Queue()
        # No restarts or retries by Ray: a lost batch is reported, and the next invocation
        # reruns it; the actor's place goes to a new one.
        actor_class: Any = ray.remote(_GraphActor).options(
            max_restarts=0, max_task_retries=0, **resources.ray_options()
        )
        idle: list[Any] = [actor_class.remote(queue) for _ in range(workers)]
        #: The job each actor's kept graph was started for (its name and domain).
        graph_of: dict[Any, GraphJob] = {}
        running: dict[Any, tuple[Any, GraphJob]] = {}
        try:
            waiting = list(jobs)
            while waiting or running:
                while waiting and idle:
                    actor, job = idle.pop(0), waiting.pop(0)
                    if actor not in graph_of:
                        job = domains.assign(job)
                    running[actor.run.remote(job)] = (actor, job)
                ready, _ = ray.wait(list(running), num_returns=1, timeout=_POLL_S)
                while not queue.empty():
                    sink(queue.get())
                for reference in ready:
                    actor, job = running.pop(reference)
                    graph = graph_of.pop(actor, job)  # the job its graph was started for
                    try:
                        outcome, kept = ray.get(reference)
                    except ray.exceptions.RayError as error:
                        ray.kill(actor)  # a graph in doubt: its nodes stop with it
                        if waiting:
                            idle.append(actor_class.remote(queue))
                        domains.release(graph, None)
                        reason = _lost_reason(error)
                        lost = dataclasses.replace(job, graph=graph.graph)
                        on_outcome(JobOutcome.lost(lost, f"graph {graph.graph}: {reason}"), reason)
                        continue
                    if kept:
                        graph_of[actor] = graph
                    else:
                        domains.release(graph, outcome)
                    idle.append(actor)
                    on_outcome(outcome, None)
            while not queue.empty():
                sink(queue.get())
            ray.get([actor.close.remote() for actor in idle])
        except KeyboardInterrupt:
            for actor in [*idle, *(actor for actor, _ in running.values())]:
                ray.kill(actor)
            raise


def _lost_reason(error: Exception) -> str:
    """Why Ray returned no outcome for a job, in one line."""
    import ray  # noqa: PLC0415

    if isinstance(error, ray.exceptions.RayTaskError):
        lines = str(error.cause if error.cause is not None else error).strip().splitlines()
        return f"its worker failed: {lines[-1] if lines else type(error).__name__}"
    return f"its worker died ({type(error).__name__})"
