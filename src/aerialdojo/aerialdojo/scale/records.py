"""The run directory of a sharded evaluation, and the merge of its episode records into
one report; ROS-free.

Layout under ``<output_dir>/<run_id>/``:

- ``episodes/<episode_id>/episode.json``: the episode's result record, written last (by a
  rename) once its bag is closed; its presence is what makes the episode finished.
- ``episodes/<episode_id>/bag/``: the episode's own bag (``aerialdojo evaluate-bag`` over all
  of them gives the merged metrics).
- ``graphs/<graph>/``: each worker graph's logs and parameter files.
- ``config.yaml``, and the merged report (``metrics.json``, ``report.md``,
  ``run_status.json``...), rewritten by every invocation.
"""

from __future__ import annotations

import gc
import json
import math
import os
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

import orjson

from aerialdojo.agents.vlm.transcript import IMAGES_DIR, TRANSCRIPTS_DIR
from aerialdojo.collector import cyclic_gc_paused
from aerialdojo.cores import free_cores
from aerialdojo.documents import LINE, RECORD, DocumentError, load_json, parse_json
from aerialdojo.errors import ConfigError, MetricsError
from aerialdojo.events import AgentRecord
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.jsonl import record_to_trace, records_to_traces, trace_to_record
from aerialdojo.metrics.scores import PathFacts
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols.scoring import run_protocol
from aerialdojo.report.markdown import episode_texts
from aerialdojo.report.run import RunResult
from aerialdojo.runtime import NodeRecord

EPISODES_DIR = "episodes"
GRAPHS_DIR = "graphs"
RECORD_FILE = "episode.json"
EPISODE_BAG = "bag"
RECORD_FORMAT = "aerialdojo-episode-record/1"
#: From this many records on, a merge reads them in reader processes where cores are idle
#: (each costs about a second to start: it imports aerialdojo, as long as reading 5,000
#: records takes) and keeps them out of the cyclic collector's passes.
PARALLEL_MIN_RECORDS = 10_000
#: The most records per task of a reader process.
_CHUNK = 2_000
#: Bytes read from a record file per call: a record is about 1 kB.
_READ_SIZE = 65_536


@dataclass(frozen=True, kw_only=True)
class EpisodeRecord:
    """The result of one finished episode, as a worker wrote it.

    Attributes:
        trace: the scored episode (its last attempt).
        agents: who acted for each agent in the graph that ran it.
        graph: the worker graph that ran it (its logs are under ``graphs/<graph>``).
        nodes: what each node of that graph ran on.
    """

    trace: EpisodeTrace
    agents: tuple[AgentRecord, ...]
    graph: str
    nodes: tuple[NodeRecord, ...] = ()
    #: Its entry in the merged ``metrics.json``'s ``episodes`` (``RunMetrics.episode_texts``),
    #: scored where it was read (``read_records``) at the radii ``scored_at``; None: not
    #: scored there. Not part of the record's file.
    episode_text: str | None = field(default=None, compare=False, repr=False)
    scored_at: tuple[float, ...] | None = field(default=None, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": RECORD_FORMAT,
            "episode_id": self.trace.episode_id,
            "graph": self.graph,
            "agents": [agent.to_dict() for agent in self.agents],
            "nodes": [node.to_dict() for node in self.nodes],
            "trace": trace_to_record(self.trace),
        }


def episode_dir(run_dir: Path, episode_id: str) -> Path:
    """Where one episode's record and bag live."""
    return run_dir / EPISODES_DIR / episode_id


def write_record(run_dir: Path, record: EpisodeRecord) -> Path:
    """Write ``record`` atomically (a reader sees the whole file or none), after its bag.

    Returns:
        The record file.
    """
    directory = episode_dir(run_dir, record.trace.episode_id)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / RECORD_FILE
    partial = directory / f".{RECORD_FILE}.{os.getpid()}"
    partial.write_text(json.dumps(record.to_dict(), allow_nan=False), encoding="utf-8")
    partial.replace(path)
    return path


def read_record(path: Path) -> EpisodeRecord:
    """Read one record file.

    Raises:
        ConfigError: unreadable, or not an episode record.
    """
    try:
        document = load_json(path, RECORD)
    except DocumentError as error:
        raise ConfigError(f"{error}: not a readable episode record") from None
    document = _checked(path, document)
    return _record_of(document, record_to_trace(document["trace"]))


def _parse_record(path: Path | str, data: bytes) -> dict[str, Any]:
    """The document of a sharded run's own worker's record, read in bulk: parsed without
    ``load_json``'s depth scan (the writer bounds it; orjson stops at a depth of its own), a
    damaged one still refused by name. orjson, not ``json``: the same values (its floats
    are correctly rounded, as Python's), in a fifth of the time, which was a fifth of a
    merge's reading; it refuses what the writer never writes (NaN, integers beyond 64 bits)
    as unreadable."""
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise ConfigError(f"{path}: not a readable episode record: {error}") from None
    return _checked(path, document)


def _checked(path: Path | str, document: Any) -> dict[str, Any]:
    if not isinstance(document, dict) or document.get("format") != RECORD_FORMAT:
        raise ConfigError(f"{path}: not an episode record (format {RECORD_FORMAT} expected)")
    return document


def _record_of(
    document: dict[str, Any],
    trace: EpisodeTrace,
    episode_text: str | None = None,
    scored_at: tuple[float, ...] | None = None,
) -> EpisodeRecord:
    return EpisodeRecord(
        trace=trace,
        agents=tuple(AgentRecord(**agent) for agent in document["agents"]),
        graph=str(document["graph"]),
        nodes=tuple(NodeRecord(**node) for node in document.get("nodes", [])),
        episode_text=episode_text,
        scored_at=scored_at,
    )


def finished_episodes(run_dir: Path, selection: Sequence[str]) -> list[str]:
    """The selected episodes whose record exists, in selection order."""
    return [e for e in selection if (episode_dir(run_dir, e) / RECORD_FILE).is_file()]


def read_records(
    run_dir: Path,
    selection: Sequence[str],
    *,
    processes: int | None = None,
    radii: Sequence[float] | None = None,
) -> list[EpisodeRecord]:
    """The records of the finished episodes of ``selection``, in episode id order, each
    trace's path measured (``PathFacts.of``) for the scoring that follows, and each scored
    at ``radii`` for its entry's text in ``metrics.json`` (``EpisodeRecord.episode_text``):
    the text, most of writing that file, is written on every reading core, not after.

    Args:
        run_dir: the run directory.
        selection: the episodes to read.
        radii: the radii ``merged_result`` will score at (None: the benchmark's).
        processes: processes reading, this one among them (1: this one alone); None:
            ``reader_processes()`` for ``PARALLEL_MIN_RECORDS`` or more, else 1. The others
            are spawned, and spawning imports the calling script again: a script that may
            start them guards its top level with ``if __name__ == "__main__"``.

    Raises:
        ConfigError: a damaged record.
    """
    # Opened by string path, without a stat first: for 200,000 records pathlib's joins and
    # the separate existence check cost a third of reading them.
    episodes = os.fspath(run_dir / EPISODES_DIR)
    ordered = sorted(selection)
    large = len(ordered) >= PARALLEL_MIN_RECORDS
    if processes is None:
        processes = reader_processes() if large else 1
    # Every record stays alive; the collector would walk them all.
    with cyclic_gc_paused(keep_out=large):
        if processes <= 1:
            # By chunks here too: a chunk's documents are alive until its traces are built,
            # and all of them at once left the memory that the scoring's values then take
            # scattered (a third slower to aggregate).
            records = [
                record
                for start in range(0, len(ordered), _CHUNK)
                for record in _read_chunk(episodes, ordered[start : start + _CHUNK], radii)
            ]
        else:
            size = max(1, min(_CHUNK, math.ceil(len(ordered) / (processes * 4))))
            chunks = [ordered[start : start + size] for start in range(0, len(ordered), size)]
            records = [
                record
                for part in _read_shared(episodes, chunks, processes, radii)
                for record in part
            ]
    return records


def _read_shared(
    episodes: str,
    chunks: Sequence[Sequence[str]],
    processes: int,
    radii: Sequence[float] | None,
) -> list[list[EpisodeRecord]]:
    """Each of ``chunks`` read (``_read_chunk``) by this process and ``processes - 1``
    readers: this one takes chunks from the front, the readers from the back, until they
    meet. A chunk read here is neither pickled nor unpickled (a third of a chunk's CPU when a
    reader reads it), and neither side waits for the other at the end."""
    # Spawned, not forked: the caller may have threads (a graph's listener, Ray's). A reader
    # runs without the cyclic collector, as this process reads (``read_records``): it pickles
    # each chunk's records and drops them, and the collector's pass over them when a chunk's
    # pause ended was 9 % of its reading, with nothing to free.
    with ProcessPoolExecutor(
        processes - 1, mp_context=get_context("spawn"), initializer=gc.disable
    ) as pool:
        futures = [pool.submit(_read_chunk, episodes, chunk, radii) for chunk in reversed(chunks)]
        futures.reverse()
        try:
            # A chunk no reader has taken yet is cancelled there and read here.
            return [
                _read_chunk(episodes, chunk, radii) if future.cancel() else future.result()
                for chunk, future in zip(chunks, futures, strict=True)
            ]
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise


def reader_processes() -> int:
    """The processes reading a large merge's records, this one among them: one per core this
    process may run on that is mostly free now (``cores.free_cores``: idle half the time
    or more over a fifth of a second, watched up to a second while one looks busy), at least
    one (this one alone). A reader pickles what it reads and this process unpickles it, about
    a third more CPU for its share: it pays only on cores nobody else is using (a
    200,000-record merge read by two readers at load 7-10 on two cores took 166 s, read here
    112 s). Not the 1-minute load average: it still counted the caller's own work that had
    just ended (a benchmark writing the records), so on an idle 2-core machine the second
    core stayed idle."""
    return max(1, free_cores())


def _read_chunk(
    episodes: str, episode_ids: Sequence[str], radii: Sequence[float] | None
) -> list[EpisodeRecord]:
    """The finished records of ``episode_ids`` under ``episodes``, their paths measured and
    their entries' texts written at ``radii`` (``_episode_texts``); in a reader process or
    this one. The chunk's positions are converted and its paths measured together
    (``records_to_traces``, ``PathFacts.measure``), so every file is read first: of two
    damaged records, one unreadable is named before one that breaks a trace's rule.

    Raises:
        ConfigError: a damaged record.
        MetricsError: a record that breaks a rule of ``EpisodeTrace``.
    """
    with cyclic_gc_paused():
        documents = [
            document
            for episode_id in episode_ids
            if (path := os.path.join(episodes, episode_id, RECORD_FILE))
            and (document := _read_finished(path)) is not None
        ]
        traces = records_to_traces([document["trace"] for document in documents])
        PathFacts.measure(traces)
        scored = _episode_texts(traces, radii)
        if scored is None:
            return list(map(_record_of, documents, traces))
        texts, scored_at = scored
        return [
            _record_of(document, trace, text, scored_at)
            for document, trace, text in zip(documents, traces, texts, strict=True)
        ]


def _episode_texts(
    traces: Sequence[EpisodeTrace], radii: Sequence[float] | None
) -> tuple[list[str], tuple[float, ...]] | None:
    """Each of ``traces`` scored by its benchmark's protocol at ``radii`` (None: the
    protocol's), as ``BenchmarkProtocol.score_run`` scores it, and its entry's text in
    ``metrics.json``; with the radii scored at. None for no traces, or where the scoring or
    the text refuses them (traces of several benchmarks, a bad radius, a non-finite value):
    ``merged_result`` and ``metrics_json_text`` raise what they did, where they did."""
    if not traces:
        return None
    try:
        protocol = run_protocol(traces)
        chosen = protocol.radii(radii)
        for trace in traces:
            protocol.check_trace(trace)
        texts = episode_texts([protocol.score_episode(trace, chosen) for trace in traces])
    except (MetricsError, ValueError):
        return None
    return texts, chosen


def _read_finished(path: str) -> dict[str, Any] | None:
    """The record document at ``path``; None when the episode has not finished.

    Raises:
        ConfigError: a damaged record.
    """
    # By descriptor, not a file object: its buffered reader was half of reading a record
    # of 1 kB (200,000 in a merge).
    try:
        descriptor = os.open(path, os.O_RDONLY)
        try:
            parts = []
            while part := os.read(descriptor, _READ_SIZE):
                parts.append(part)
        finally:
            os.close(descriptor)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None  # not finished (``finished_episodes``)
    except OSError as error:
        raise ConfigError(f"{path}: not a readable episode record: {error}") from error
    return _parse_record(path, b"".join(parts))


def merged_result(
    records: Sequence[EpisodeRecord],
    selection: Sequence[str],
    excluded: Mapping[str, ExcludedEpisode],
    radii: Sequence[float] | None,
    *,
    finished: bool,
    settings: Mapping[str, Any] | None = None,
) -> RunResult:
    """The run as one: every selected episode scored (its record), excluded (``excluded``,
    what this invocation lost) or not started; independent of which worker ran what and in
    which order.

    Args:
        records: the run's records (``read_records``), in episode id order.
        selection: the run's selected episodes, in order.
        excluded: episodes this invocation lost to infrastructure failures, by id.
        radii: success radii; None for the benchmark's.
        finished: the invocation ran to its end (not interrupted).
        settings: the protocol settings every worker graph's task manager ran under
            (``BenchmarkProtocol.settings_of``); None: not known.

    Raises:
        MetricsError: records of mixed benchmarks.
    """
    scored = {record.trace.episode_id for record in records}
    lost = tuple(excluded[e] for e in sorted(excluded) if e not in scored)
    accounted = scored | {entry.episode_id for entry in lost}
    agents: dict[str, AgentRecord] = {}
    nodes: dict[str, NodeRecord] = {}
    for record in records:
        agents.update((agent.agent, agent) for agent in record.agents)
        nodes.update((node.node, node) for node in record.nodes)
    traces = tuple(record.trace for record in records)
    protocol = run_protocol(traces) if traces else None
    # A score per record, all alive until aggregated and written.
    with cyclic_gc_paused(keep_out=len(traces) >= PARALLEL_MIN_RECORDS):
        metrics = protocol.score_run(traces, radii, lost) if protocol else None
    if metrics is not None:
        metrics = _with_episode_texts(metrics, records)
    return RunResult(
        metrics=metrics,
        protocol=protocol,
        finished=finished,
        excluded=lost,
        traces=traces,
        not_started=tuple(e for e in selection if e not in accounted),
        selected=tuple(selection),
        agents=tuple(agents[name] for name in sorted(agents)),
        nodes=tuple(nodes[name] for name in sorted(nodes)),
        settings=(dict(settings),) if settings is not None else (),
    )


def _with_episode_texts(metrics: RunMetrics, records: Sequence[EpisodeRecord]) -> RunMetrics:
    """``metrics`` with its episodes' texts as the records' readers wrote them, where every
    record holds its episode's (scored at ``metrics``' radii, one record per episode in
    ``metrics.episodes``' order); else as it is (written from the scores)."""
    texts: list[str] = []
    for record in records:
        if record.episode_text is None or record.scored_at != metrics.radii:
            return metrics
        texts.append(record.episode_text)
    if [record.trace.episode_id for record in records] != [
        score.episode_id for score in metrics.episodes
    ]:
        return metrics
    return replace(metrics, episode_texts=texts)


def merge_transcripts(run_dir: Path, records: Sequence[EpisodeRecord]) -> Path | None:
    """Gather the model transcripts of the episodes of ``records`` from the worker graphs
    (each writes its own, ``graphs/<graph>/transcripts``) into ``run_dir/transcripts``: per
    agent, the first session line, then each episode's lines from the graph whose record it
    is, in episode id order; images by content hash, once.

    Returns:
        The merged directory; None when no graph wrote a transcript (no model agent).

    Raises:
        ConfigError: an unreadable transcript line.
    """
    sources = sorted((run_dir / GRAPHS_DIR).glob(f"*/{TRANSCRIPTS_DIR}"))
    if not sources:
        return None
    graph_of = {record.trace.episode_id: record.graph for record in records}
    merged = run_dir / TRANSCRIPTS_DIR
    sessions: dict[str, str] = {}
    episodes: dict[str, dict[str, list[str]]] = {}
    for source in sources:
        graph = source.parent.name
        for path in sorted(source.glob("*.jsonl")):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                try:
                    record = parse_json(line, LINE, f"{path}:{number}")
                except DocumentError as error:
                    raise ConfigError(f"{error}: not a transcript record") from None
                if not isinstance(record, dict):
                    raise ConfigError(f"{path}:{number}: not a transcript record")
                if record.get("type") == "session":
                    sessions.setdefault(path.stem, line)
                elif graph_of.get(str(record.get("episode_id"))) == graph:
                    of_agent = episodes.setdefault(path.stem, {})
                    of_agent.setdefault(str(record["episode_id"]), []).append(line)
        images = source / IMAGES_DIR
        if images.is_dir():
            (merged / IMAGES_DIR).mkdir(parents=True, exist_ok=True)
            for image in images.iterdir():
                if not (merged / IMAGES_DIR / image.name).exists():
                    shutil.copyfile(image, merged / IMAGES_DIR / image.name)
    merged.mkdir(exist_ok=True)
    for agent in sorted(set(sessions) | set(episodes)):
        lines = [sessions[agent]] if agent in sessions else []
        by_episode = episodes.get(agent, {})
        lines += [line for episode in sorted(by_episode) for line in by_episode[episode]]
        (merged / f"{agent}.jsonl").write_text("".join(f"{line}\n" for line in lines))
    return merged
