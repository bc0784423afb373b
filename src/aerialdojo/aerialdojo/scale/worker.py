"""One worker graph: a batch of episodes run by its own node graph (simulator backend
included) in a DDS domain no other graph on the host uses, then cut into per-episode bags
and records. Runs in the CLI's process or in a Ray worker."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from aerialdojo.agents.vlm.transcript import TRANSCRIPTS_DIR
from aerialdojo.errors import AerialDojoError
from aerialdojo.metrics.aggregate import ExcludedEpisode
from aerialdojo.run_contract import RUN_CONFIG
from aerialdojo.runner import claimed_domain
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
    """

    run_dir: Path
    graph: str
    episode_ids: tuple[str, ...]
    timeout_s: float


@dataclass(frozen=True, kw_only=True)
class JobOutcome:
    """What became of a job's episodes.

    Attributes:
        graph: the job's graph.
        scored: episodes whose record and bag are written.
        excluded: the job's other episodes, with the reason (to rerun).
    """

    graph: str
    scored: tuple[str, ...]
    excluded: tuple[ExcludedEpisode, ...]

    @classmethod
    def lost(cls, job: GraphJob, reason: str) -> JobOutcome:
        """Every episode of ``job`` excluded as an infrastructure failure."""
        return cls(
            graph=job.graph,
            scored=(),
            excluded=tuple(
                ExcludedEpisode(episode_id=e, attempt=1, reason=reason) for e in job.episode_ids
            ),
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
    then its record; the rest are excluded with the reason (the run reruns them).

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
    with claimed_domain() as domain:
        graph_dir.mkdir(parents=True, exist_ok=True)
        (graph_dir / WORKER_FILE).write_text(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "domain": domain})
        )
        # The listener joins the graph's domain; so does everything this process starts.
        os.environ["ROS_DOMAIN_ID"] = str(domain)
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
        )
        nodes = start_graph(specs, graph_dir, env=os.environ)
        try:
            outcome = wait_for_graph(nodes, job.timeout_s)
        except KeyboardInterrupt:
            stop_graph(nodes)
            raise
        finally:
            listener.close()
            remove_dead_segments(segments_before)
            signal.pthread_sigmask(signal.SIG_SETMASK, mask)
    return _collect(job, graph_dir, outcome.message)


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
