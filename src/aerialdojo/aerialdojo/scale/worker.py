"""Worker graphs: batches of episodes run by a node graph (simulator backend included),
kept from batch to batch (``WorkerGraph``), in a DDS domain no other graph on the host
uses; each batch cut into per-episode bags and records. A graph runs in the CLI's process
or in a Ray actor."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.errors import AerialDojoError
from aerialdojo.graph import EVALUATOR_NODE, NodeSpec, run_specs
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.run_contract import RUN_CONFIG
from aerialdojo.run_journal import JOURNAL_FILE
from aerialdojo.runner import (
    NodeProcess,
    claimed_domain,
    remove_dead_segments,
    shm_segments,
    start_graph,
    stop_graph,
    wait_for_graph,
)
from aerialdojo.runtime import DOMAIN_CHECKED_ENV, TASK_MANAGER_NODE, RunSighting
from aerialdojo.scale.records import (
    EPISODE_BAG,
    GRAPHS_DIR,
    EpisodeRecord,
    episode_dir,
    finished_episodes,
    write_record,
)

if TYPE_CHECKING:
    from aerialdojo.nodes.episode_endings import EpisodeEndings

#: Written into a graph's directory when its worker starts: which process and domain.
WORKER_FILE = "worker.json"


@dataclass(frozen=True, kw_only=True)
class GraphJob:
    """A batch of episodes for one worker graph.

    Attributes:
        run_dir: the run directory (shared by every worker).
        graph: a name unique in the run, for a graph started for the batch (its logs:
            ``graphs/<graph>``); a batch on a kept graph runs under that graph's name.
        episode_ids: the episodes, in selection order.
        timeout_s: the batch gives up after this long.
        domain: a ROS domain the run holds for this graph (``scale.run.HeldDomains``);
            None: the graph claims one of its own.
        domain_checked: whether ``domain`` has been looked at for other runs, and listened
            in by each of the run's graphs since: its task manager need not look again.
    """

    run_dir: Path
    graph: str
    episode_ids: tuple[str, ...]
    timeout_s: float
    domain: int | None = None
    domain_checked: bool = False


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """What became of a job's episodes.

    Attributes:
        graph: the job's graph.
        scored: episodes whose record and bag are written.
        excluded: the job's other episodes, with the reason (to rerun).
        domain_shared: another run's task manager was heard in the graph's domain (its
            graph's episodes are all excluded, and the domain is not used again).
    """

    graph: str
    scored: tuple[str, ...]
    excluded: tuple[ExcludedEpisode, ...]
    domain_shared: bool = False

    @classmethod
    def lost(cls, job: GraphJob, reason: str, *, domain_shared: bool = False) -> JobOutcome:
        """Every episode of ``job`` excluded as an infrastructure failure."""
        return cls(
            graph=job.graph,
            scored=(),
            excluded=tuple(
                ExcludedEpisode(episode_id=e, attempt=1, reason=reason) for e in job.episode_ids
            ),
            domain_shared=domain_shared,
        )


@dataclass(frozen=True, kw_only=True)
class EpisodeEnding:
    """An attempt that ended in a worker graph, for the progress display.

    Attributes:
        episode_id: the episode.
        ending: how it ended (``stopped``, ``infrastructure failure``...).
        scored: False for an infrastructure failure.
    """

    episode_id: str
    ending: str
    scored: bool


#: Receives endings as they happen, in the CLI's process.
EndingSink = Callable[[EpisodeEnding], None]


#: The nodes that serve and score one batch: a kept graph starts them again for each batch
#: with its selection (a task manager's journal, an evaluator's bag and report are one
#: batch's). The bridge and the agents stay; the task manager resets them for every attempt,
#: as within a batch.
BATCH_NODES = (TASK_MANAGER_NODE, EVALUATOR_NODE)


class WorkerGraph:
    """A worker's node graph, kept from batch to batch while it is sound: its bridge and
    agents (their processes, imports and scene) serve every batch, and a task manager and
    an evaluator are started for each (``BATCH_NODES``). It lives in one domain under the
    name of its first batch (``graphs/<graph>``: the nodes' logs, the running batch's bag,
    the transcripts), with one listener for its endings and for other runs. A graph whose
    batch did not finish, whose bag was not cut, or where another run was heard is stopped:
    the next batch needs a new graph (``alive``).
    """

    def __init__(self, job: GraphJob, sink: EndingSink) -> None:
        """A graph for ``job`` (its name, domain and whether that was looked at) and the
        batches after it, started by its first ``run``; its endings go to ``sink``."""
        self.name = job.graph
        self.dir = job.run_dir / GRAPHS_DIR / job.graph
        #: The job it was started for: its domain is the graph's.
        self.job = job
        self._sink = sink
        self._stack = contextlib.ExitStack()
        self._listener: EpisodeEndings | None = None
        self._env: dict[str, str] = {}
        self._domain = -1  # taken by the first run
        self._segments_before: set[str] = set()
        #: The bridge's and agents' processes between batches (none: stopped, or not started).
        self._kept: list[NodeProcess] = []

    @property
    def alive(self) -> bool:
        """Whether the next batch can run on it: the last batch finished and was cut, its
        kept nodes still run, and no other run was heard in its domain."""
        return (
            bool(self._kept)
            and all(node.process.poll() is None for node in self._kept)
            and not self._heard()
        )

    def run_kept(self, job: GraphJob) -> tuple[JobOutcome, bool]:
        """``run`` ``job``, and whether the graph is kept for the next batch: it is ``alive``
        and scored an episode (its task manager served) in a domain no other run was heard
        in. Else it is stopped, every node of it, and its domain is to be handed back
        (``HeldDomains.release``, which lets the doubtful ones go)."""
        outcome = self.run(job)
        if self.alive and outcome.scored and not outcome.domain_shared:
            return outcome, True
        self.close()
        return outcome, False

    def run(self, job: GraphJob) -> JobOutcome:
        """Run ``job``'s episodes on this graph (started for its first batch) and write each
        scored episode's bag, then its record; the rest are excluded with the reason (the
        run reruns them). The bridge and agents are left running for the next batch when
        this one finished. A graph in whose domain another run's task manager
        was heard scores nothing: the two runs may have answered each other's requests.

        Raises:
            KeyboardInterrupt: after stopping the graph.
        """
        job = dataclasses.replace(job, graph=self.name)
        specs = _graph_specs(job, self.dir)
        if self._listener is None:
            self._start()
            nodes = start_graph(specs, self.dir, env=self._env)
        else:
            # The last batch's run is over: a task manager that found its journal would
            # resume it. Its successor need not look for other runs: the graph's listener
            # has listened in the domain since the first one served.
            (self.dir / JOURNAL_FILE).unlink(missing_ok=True)
            started = start_graph(
                [spec for spec in specs if spec.name in BATCH_NODES],
                self.dir,
                env={**self._env, DOMAIN_CHECKED_ENV: str(self._domain)},
                append_logs=True,
            )
            by_name = {node.spec.name: node for node in [*self._kept, *started]}
            nodes = [by_name[spec.name] for spec in specs]  # in start order, for stop_graph
        self._kept = []
        kept = [spec.name for spec in specs if spec.name not in BATCH_NODES]
        try:
            ended = wait_for_graph(nodes, job.timeout_s, on_tick=self._stop_if_heard, keep=kept)
        except _AnotherRunHeardError:
            stop_graph(nodes)  # at once: the longer both runs share the domain, the worse
        except KeyboardInterrupt:
            stop_graph(nodes)
            raise
        finally:
            remove_dead_segments(self._segments_before)
        if other_runs := self._heard():
            stop_graph([node for node in nodes if node.process.poll() is None])
            # Not cut, and gone: the end of the run must not salvage it as a dead worker's bag.
            shutil.rmtree(self.dir / "bag", ignore_errors=True)
            heard = "; ".join(sorted({sighting.describe() for sighting in other_runs}))
            reason = (
                f"graph {job.graph}: another run's task manager was in its domain {self._domain}: "
                f"{heard}"
            )
            return JobOutcome.lost(job, reason, domain_shared=True)
        outcome = _collect(job, self.dir, ended.message)
        running = [node for node in nodes if node.process.poll() is None]
        if ended.finished and not (self.dir / "bag").exists():
            self._kept = running
        else:
            stop_graph(running)  # its bag was not cut: the next batch's would not open
        return outcome

    def _start(self) -> None:
        """Take the graph's domain and start listening in it."""
        from aerialdojo.nodes.episode_endings import EpisodeEndings  # noqa: PLC0415 (rclpy)

        domain = self._domain = self._stack.enter_context(_graph_domain(self.job))
        self.dir.mkdir(parents=True, exist_ok=True)
        (self.dir / WORKER_FILE).write_text(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "domain": domain})
        )
        # The listener joins the graph's domain; so does everything this process starts.
        os.environ["ROS_DOMAIN_ID"] = str(domain)
        self._env = {k: v for k, v in os.environ.items() if k != DOMAIN_CHECKED_ENV}
        if self.job.domain_checked:
            self._env[DOMAIN_CHECKED_ENV] = str(domain)
        self._segments_before = shm_segments()
        # A Ray worker runs tasks with SIGINT blocked, and children inherit the mask: the
        # nodes would sit out the runner's SIGINT and its grace period. Unblocked while the
        # graph lives, as in the CLI's process.
        mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        self._stack.callback(signal.pthread_sigmask, signal.SIG_SETMASK, mask)
        self._stack.callback(remove_dead_segments, self._segments_before)
        sink = self._sink
        self._listener = EpisodeEndings(
            lambda e, ending, scored: sink(
                EpisodeEnding(episode_id=e, ending=ending, scored=scored)
            ),
            self.name,
            self.dir.parent,
        )
        self._stack.callback(self._listener.close)

    def _heard(self) -> list[RunSighting]:
        """The other runs' task managers heard in the graph's domain."""
        return list(self._listener.other_runs.heard) if self._listener is not None else []

    def _stop_if_heard(self) -> None:
        if self._heard():
            raise _AnotherRunHeardError

    def close(self) -> None:
        """Stop the kept nodes, stop listening and let the graph's domain go."""
        stop_graph(self._kept)
        self._kept = []
        self._stack.close()


def _graph_specs(job: GraphJob, graph_dir: Path) -> list[NodeSpec]:
    """The graph's nodes with ``job``'s selection."""
    specs = run_specs(
        job.run_dir / RUN_CONFIG,
        run_id=job.graph,
        output_dir=str(job.run_dir / GRAPHS_DIR),
        episode_ids=job.episode_ids,
    )
    for spec in specs:
        if "transcript_dir" in spec.parameters:
            # Each graph writes its own model transcripts (two graphs appending to one file
            # could interleave their lines); the merge gathers the scored episodes'.
            spec.parameters["transcript_dir"] = str(graph_dir / TRANSCRIPTS_DIR)
    return specs


class _AnotherRunHeardError(Exception):
    """Ends the wait for a graph: another run's task manager is in its domain."""


@contextlib.contextmanager
def _graph_domain(job: GraphJob) -> Iterator[int]:
    """The domain the run holds for ``job``, or else one claimed for the graph's life."""
    if job.domain is not None:
        yield job.domain
        return
    with claimed_domain() as domain:
        yield domain


def await_closed_bags(run_dir: Path, graphs: Sequence[str], timeout_s: float) -> None:
    """Wait until each of ``graphs`` that began a bag has closed it, for ``timeout_s`` at most
    (an evaluator killed outright never closes its bag)."""
    bags = [run_dir / GRAPHS_DIR / graph / "bag" for graph in graphs]
    open_bags = [bag for bag in bags if bag.is_dir()]
    deadline = time.monotonic() + timeout_s
    while any(not (bag / "metadata.yaml").is_file() for bag in open_bags):
        if time.monotonic() > deadline:
            return
        time.sleep(0.2)


def salvage_graphs(run_dir: Path, selection: Sequence[str]) -> list[str]:
    """Collect the bags that graphs closed but no worker cut: a worker killed mid-batch takes
    its graph's nodes with it (they stop with their launcher), and the evaluator still closes
    the bag of the episodes that ended. Returns the unfinished episodes of ``selection``
    recovered as finished."""
    closed = sorted((run_dir / GRAPHS_DIR).glob("*/bag/metadata.yaml"))
    if not closed:  # the usual case: no record is looked at
        return []
    done = set(finished_episodes(run_dir, selection))
    pending = tuple(e for e in selection if e not in done)
    recovered: list[str] = []
    for metadata in closed:
        graph_dir = metadata.parents[1]
        job = GraphJob(run_dir=run_dir, graph=graph_dir.name, episode_ids=pending, timeout_s=0.0)
        recovered += _collect(job, graph_dir, "its worker died").scored
    return recovered


def _collect(job: GraphJob, graph_dir: Path, graph_message: str) -> JobOutcome:
    """Cut the graph's bag into per-episode bags, write the records, account for the rest."""
    from aerialdojo.bags.replay import assemble_bags  # noqa: PLC0415
    from aerialdojo.bags.typestore import aerialdojo_typestore  # noqa: PLC0415
    from aerialdojo.report.maps import MAPS_DIR, map_file  # noqa: PLC0415
    from aerialdojo.scale.split import split_bag  # noqa: PLC0415

    bag = graph_dir / "bag"
    if not (bag / "metadata.yaml").is_file():
        return JobOutcome.lost(job, f"graph {job.graph} left no closed bag ({graph_message})")
    try:
        assembler = assemble_bags([bag]).assembler
        traces = [t for t in assembler.traces if t.episode_id in job.episode_ids]
        destinations = {}
        for trace in traces:
            destination = episode_dir(job.run_dir, trace.episode_id) / EPISODE_BAG
            shutil.rmtree(destination, ignore_errors=True)  # a lost attempt's partial bag
            destinations[trace.episode_id] = destination
        split_bag(bag, destinations, aerialdojo_typestore())
    except AerialDojoError as error:
        return JobOutcome.lost(job, f"graph {job.graph}: {error}")
    agents = tuple(assembler.agents[name] for name in sorted(assembler.agents))
    nodes = tuple(assembler.nodes[name] for name in sorted(assembler.nodes))
    for trace in traces:
        # The graph's evaluator drew the episode's map; the merged report links it.
        drawn = graph_dir / map_file(trace.episode_id)
        if drawn.is_file():
            (job.run_dir / MAPS_DIR).mkdir(exist_ok=True)
            drawn.replace(job.run_dir / map_file(trace.episode_id))
        write_record(
            job.run_dir, EpisodeRecord(trace=trace, agents=agents, graph=job.graph, nodes=nodes)
        )
    scored = {trace.episode_id for trace in traces}
    # Episodes the graph never started stay out: the run lists them as not started.
    lost = tuple(
        ExcludedEpisode(episode_id=f.episode_id, attempt=f.attempt + 1, reason=f.reason)
        for f in assembler.excluded()
        if f.episode_id in job.episode_ids and f.episode_id not in scored
    )
    shutil.rmtree(bag)  # every scored episode is in its own bag now
    return JobOutcome(graph=job.graph, scored=tuple(sorted(scored)), excluded=lost)
