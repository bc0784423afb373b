"""One worker graph: a batch of episodes run by its own node graph (simulator backend
included) in a DDS domain no other graph on the host uses, then cut into per-episode bags
and records. Runs in the CLI's process or in a Ray worker."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.errors import AerialDojoError
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.run_contract import RUN_CONFIG
from aerialdojo.runner import claimed_domain
from aerialdojo.runtime import DOMAIN_CHECKED_ENV
from aerialdojo.scale.records import (
    EPISODE_BAG,
    GRAPHS_DIR,
    EpisodeRecord,
    episode_dir,
    finished_episodes,
    write_record,
)

#: Written into a graph's directory when its worker starts: which process and domain.
WORKER_FILE = "worker.json"


@dataclass(frozen=True, kw_only=True)
class GraphJob:
    """A batch of episodes for one worker graph.

    Attributes:
        run_dir: the run directory (shared by every worker).
        graph: the graph's name, unique in the run (its logs: ``graphs/<graph>``).
        episode_ids: the episodes, in selection order.
        timeout_s: the graph gives up after this long.
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


def run_job(job: GraphJob, sink: EndingSink) -> JobOutcome:
    """Run ``job``'s episodes in a graph of their own and write each scored episode's bag,
    then its record; the rest are excluded with the reason (the run reruns them). A graph
    whose domain another run's task manager was heard in while it lived scores nothing:
    the two runs may have answered each other's requests.

    Raises:
        KeyboardInterrupt: after stopping the graph.
    """
    from aerialdojo.graph import run_specs  # noqa: PLC0415
    from aerialdojo.nodes.episode_endings import EpisodeEndings  # noqa: PLC0415
    from aerialdojo.runner import (  # noqa: PLC0415
        remove_dead_segments,
        shm_segments,
        start_graph,
        stop_graph,
        wait_for_graph,
    )

    graph_dir = job.run_dir / GRAPHS_DIR / job.graph
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
    with _graph_domain(job) as domain:
        graph_dir.mkdir(parents=True, exist_ok=True)
        (graph_dir / WORKER_FILE).write_text(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "domain": domain})
        )
        # The listener joins the graph's domain; so does everything this process starts.
        os.environ["ROS_DOMAIN_ID"] = str(domain)
        graph_env = {k: v for k, v in os.environ.items() if k != DOMAIN_CHECKED_ENV}
        if job.domain_checked:
            graph_env[DOMAIN_CHECKED_ENV] = str(domain)
        segments_before = shm_segments()
        # A Ray worker runs tasks with SIGINT blocked, and children inherit the mask: the
        # nodes would sit out the runner's SIGINT and its grace period. Unblocked while the
        # graph lives, as in the CLI's process.
        mask = signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
        listener = EpisodeEndings(
            lambda e, ending, scored: sink(
                EpisodeEnding(episode_id=e, ending=ending, scored=scored)
            ),
            graph_dir.name,
            graph_dir.parent,
        )

        def stop_if_another_run() -> None:
            if listener.other_runs.heard:
                raise _AnotherRunHeardError

        nodes = start_graph(specs, graph_dir, env=graph_env)
        try:
            message = wait_for_graph(nodes, job.timeout_s, on_tick=stop_if_another_run).message
        except _AnotherRunHeardError:
            stop_graph(nodes)  # at once: the longer both runs share the domain, the worse
        except KeyboardInterrupt:
            stop_graph(nodes)
            raise
        finally:
            other_runs = listener.other_runs.heard
            listener.close()
            remove_dead_segments(segments_before)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    if other_runs:
        # Not cut, and gone: the end of the run must not salvage it as a dead worker's bag.
        shutil.rmtree(graph_dir / "bag", ignore_errors=True)
        heard = "; ".join(sorted({sighting.describe() for sighting in other_runs}))
        reason = (
            f"graph {job.graph}: another run's task manager was in its domain {domain}: {heard}"
        )
        return JobOutcome.lost(job, reason, domain_shared=True)
    return _collect(job, graph_dir, message)


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
