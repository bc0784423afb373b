"""From assembled episode events (or a trajectory log) to a scored run and every file of it,
written in one pass: shared by the evaluator node (live), ``aerialdojo evaluate-bag``
(replay) and ``aerialdojo metrics`` (logs), so all produce the same ``metrics.json``."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aerialdojo.agents.vlm.usage import model_usage, usage_section
from aerialdojo.documents import RECORD, DocumentError, load_json, write_atomic
from aerialdojo.errors import AerialDojoError, ConfigError, MetricsError
from aerialdojo.events import AgentRecord, EpisodeAssembler, SupersededAttempt
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.jsonl import load_trajectory_log, write_trajectory_log
from aerialdojo.metrics.scores import radius_key
from aerialdojo.metrics.trace import TERMINATIONS, EpisodeTrace
from aerialdojo.protocols import BenchmarkProtocol
from aerialdojo.protocols.scoring import (
    ScoringRecord,
    recorded_version,
    run_protocol,
    scoring_record,
)
from aerialdojo.report.html import REPORT_HTML, render_report_html
from aerialdojo.report.maps import (
    FAILURES_PNG,
    MAPS_DIR,
    SceneryLookup,
    map_file,
    suite_scenery,
    write_contact_sheet,
    write_episode_maps,
)
from aerialdojo.report.markdown import (
    render_report_md,
    summary_table,
    write_episodes_csv,
    write_metrics_json,
)
from aerialdojo.report.plots import write_plots
from aerialdojo.run_contract import run_id_problem
from aerialdojo.runtime import NodeRecord, distribution_mismatch, platform_summary
from aerialdojo.step_origin import attempt_name
from aerialdojo.tasks.records import suite_identity
from aerialdojo.tasks.suite import resolve_suite

METRICS_JSON = "metrics.json"
REPORT_MD = "report.md"
EPISODES_CSV = "episodes.csv"
NOTES_FILE = "run_notes.md"
#: What became of every selected episode; written for every run, scored or not
#: (``aerialdojo rerun`` reads it).
STATUS_JSON = "run_status.json"
#: The scored episodes' paths as a trajectory log (``aerialdojo metrics`` reads it back;
#: ``aerialdojo compare`` overlays two runs' paths from it).
TRAJECTORIES_JSONL = "trajectories.jsonl"
#: Disk space the evaluator holds back for the run's records while it records
#: (``documents.SpaceReserve``), removed before they are written.
SPACE_RESERVE_FILE = ".space_reserve"
#: Where bag bytes recorded outside any episode are counted.
BETWEEN_EPISODES = "(between episodes)"


@dataclass(frozen=True)
class RunResult:
    """A run as scored.

    Every selected episode is in exactly one of ``traces`` (scored), ``excluded`` and
    ``not_started``.

    Attributes:
        metrics: the aggregated metrics; None when no episode finished.
        protocol: the protocol of the run's benchmark, which scored it and which every
            file of the report follows; None when nothing was scored.
        finished: the run announced its end (RUN_FINISHED).
        excluded: episodes whose last attempt failed for reasons outside the agent (an
            infrastructure failure, or cut short by the end of the run), with the reason.
        traces: the scored episodes' traces (for the success-radius sweep plot).
        not_started: selected episodes that never started.
        selected: the run's selection; empty when the record does not say (then the
            episodes that started are all there is to account for).
        superseded: earlier attempts a later attempt of the same episode replaced.
        source_notes: what reading the run's record revealed (e.g. a bag never closed).
        agents: who acted for each agent, as the agent nodes announced it.
        nodes: what each node ran on (ROS 2 distribution, Python), as it announced it.
        suites: the suite(s) the run's episodes came from, each its name and the SHA-256
            of its file (``tasks.records.suite_identity``); empty where the record does
            not say (a trajectory log).
        settings: the protocol settings the run ran under (the task manager parameters
            that change the numbers, ``BenchmarkProtocol.settings_of``), each distinct set
            once; empty where the record does not say.
    """

    metrics: RunMetrics | None
    finished: bool
    excluded: tuple[ExcludedEpisode, ...]
    traces: tuple[EpisodeTrace, ...]
    not_started: tuple[str, ...] = ()
    selected: tuple[str, ...] = ()
    superseded: tuple[SupersededAttempt, ...] = ()
    source_notes: tuple[str, ...] = ()
    agents: tuple[AgentRecord, ...] = ()
    nodes: tuple[NodeRecord, ...] = ()
    suites: tuple[dict[str, str], ...] = ()
    settings: tuple[dict[str, Any], ...] = ()
    protocol: BenchmarkProtocol | None = None

    def __post_init__(self) -> None:
        if self.metrics is not None and self.protocol is None:
            raise MetricsError("a scored run carries the protocol that scored it")

    @property
    def complete(self) -> bool:
        """Every selected episode was scored: nothing is left to rerun."""
        return bool(self.traces) and not self.excluded and not self.not_started

    @property
    def endings(self) -> dict[str, int]:
        """How the scored episodes ended, termination -> count (``TERMINATIONS`` order,
        those that occurred): the papers' Stop, collision and budget, and the agent's
        invalid actions and silences, which are scored as its failures."""
        counts = Counter(trace.termination for trace in self.traces)
        return {name: counts[name] for name in TERMINATIONS if counts[name]}

    @property
    def accounting(self) -> str:
        """One line: how many of the selected episodes were scored, excluded, not started,
        and how the scored ones ended."""
        total = len(self.selected) or len(self.traces) + len(self.excluded)
        interventions = sum(entry.intervention for entry in self.excluded)
        also = (
            f", {interventions} excluded as operator/safety interventions" if interventions else ""
        )
        ended = ", ".join(
            f"{name.replace('_', ' ')} {count}" for name, count in self.endings.items()
        )
        return (
            f"{total} episode(s) selected: {len(self.traces)} scored, "
            f"{len(self.excluded) - interventions} excluded as infrastructure failures{also}, "
            f"{len(self.not_started)} not started"
            + (f"; the scored ones ended: {ended}" if ended else "")
        )

    def status(self) -> dict[str, Any]:
        """What ``run_status.json`` holds: the accounting of every selected episode."""
        return {
            "format": "aerialdojo-run-status/1",
            "complete": self.complete,
            "finished": self.finished,
            "selected": list(self.selected),
            "scored": sorted(trace.episode_id for trace in self.traces),
            "endings": self.endings,
            "excluded": [entry.to_dict() for entry in self.excluded],
            "not_started": list(self.not_started),
            "superseded": [
                {"episode_id": s.episode_id, "attempt": s.attempt + 1, "outcome": s.outcome}
                for s in self.superseded
            ],
        }

    @property
    def scoring(self) -> ScoringRecord | None:
        """Under which rules and settings the numbers were computed; None when nothing was
        scored."""
        if self.metrics is None or self.protocol is None:
            return None
        return scoring_record(self.protocol, self.metrics, self.settings)

    @property
    def privileged(self) -> list[AgentRecord]:
        """Agents whose policy read ground truth."""
        return [agent for agent in self.agents if agent.privileged]

    @property
    def warnings(self) -> list[str]:
        """What a reader of the numbers must know about how the run ended."""
        notes = [
            f"PRIVILEGED: the {agent.agent} policy {agent.policy} read ground truth "
            f"({agent.description}); these numbers test the harness, not an agent"
            for agent in self.privileged
        ]
        notes += self.source_notes
        notes += filter(None, [distribution_mismatch(self.nodes)])
        if len(self.suites) > 1:
            names = ", ".join(f"{s['name']} ({s['sha256'][:12]})" for s in self.suites)
            notes.append(f"the run's episodes come from {len(self.suites)} suites: {names}")
        if len(self.settings) > 1:
            notes.append(
                f"the run's parts ran under {len(self.settings)} different protocol settings: "
                "its numbers pool episodes scored under different rules"
            )
        if not self.finished:
            notes.append("the run did not finish: only episodes that ended are scored")
        notes += [
            f"episode {entry.episode_id} is excluded (attempt {entry.attempt}"
            f"{', an operator/safety intervention' if entry.intervention else ''}): {entry.reason}"
            for entry in self.excluded
        ]
        if self.not_started:
            notes.append(f"episodes never started: {', '.join(self.not_started)}")
        notes += [
            f"episode {s.episode_id}: {attempt_name(s.attempt)} ({s.outcome}) was superseded by "
            "a later attempt"
            for s in self.superseded
        ]
        if self.excluded or self.not_started:
            notes.append(f"{self.accounting}; `aerialdojo rerun` runs the missing ones")
        if self.metrics is None:
            notes.append("no episode finished; there is nothing to score")
        return notes

    @property
    def summary_table(self) -> str:
        """The Markdown summary table, or the reason there is none."""
        table = (
            summary_table(self.metrics, self.protocol)
            if self.metrics is not None and self.protocol is not None
            else "(no scored episodes)"
        )
        return "\n".join([table, *(f"WARNING: {note}" for note in self.warnings)])


def score_assembled(
    assembler: EpisodeAssembler, radii: Sequence[float] | None, notes: Sequence[str] = ()
) -> RunResult:
    """Score every finished episode of ``assembler``.

    Args:
        assembler: events of one run, folded.
        radii: success radii in metres; None for the benchmark's defaults.
        notes: warnings about the record the events came from, passed on to the report.
    """
    excluded = tuple(
        ExcludedEpisode(
            episode_id=f.episode_id, attempt=f.attempt + 1, reason=f.reason, cause=f.cause
        )
        for f in assembler.excluded()
    )
    protocol = run_protocol(assembler.traces) if assembler.traces else None
    metrics = protocol.score_run(assembler.traces, radii, excluded) if protocol else None
    not_started = tuple(assembler.not_started())
    if not_started and assembler.run_summary:
        # Why they never started (e.g. an agent that never came) is the task manager's word.
        notes = (*notes, f"the task manager ended the run: {assembler.run_summary}")
    return RunResult(
        metrics=metrics,
        finished=assembler.finished,
        excluded=excluded,
        traces=tuple(assembler.traces),
        not_started=not_started,
        selected=tuple(assembler.selection),
        superseded=tuple(assembler.superseded),
        source_notes=tuple(notes),
        agents=tuple(assembler.agents[name] for name in sorted(assembler.agents)),
        nodes=tuple(assembler.nodes[name] for name in sorted(assembler.nodes)),
        suites=tuple(assembler.suites),
        settings=tuple(assembler.settings),
        protocol=protocol,
    )


def score_trajectory_log(path: Path, radii: Sequence[float] | None = None) -> RunResult:
    """Score a JSON-lines trajectory log (``aerialdojo metrics``) with the evaluator's code.

    Raises:
        TrajectoryLogError: bad lines, all listed.
        MetricsError: nothing to score, mixed benchmarks or a bad radius.
    """
    log = load_trajectory_log(path)
    if not log.traces:
        raise MetricsError(f"{path}: no episode records to score")
    protocol = run_protocol(log.traces)
    metrics = protocol.score_run(log.traces, radii, log.excluded)
    return RunResult(
        metrics=metrics,
        protocol=protocol,
        finished=True,
        excluded=metrics.excluded,
        traces=tuple(log.traces),
        source_notes=(f"scored from the trajectory log {path}",),
    )


def rescoring_lines(result: RunResult, bags: Sequence[Path]) -> list[str]:
    """What ``evaluate-bag`` says of the rules it scored ``bags`` under: the scoring version
    now, and the one each bag's run directory was scored under where it holds a
    ``metrics.json`` (the bag's parent)."""
    scoring = result.scoring
    if scoring is None:
        return []
    lines = [f"scored now under {scoring.text()}"]
    for bag in bags:
        written = bag.resolve().parent / METRICS_JSON
        try:
            document = json.loads(written.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        then = recorded_version(document) if isinstance(document, dict) else None
        if then is None:
            continue
        lines.append(
            f"{written} was scored under version {then}"
            + (
                ""
                if then == scoring.version
                else ": the rules changed since (docs/protocols/, 'Scoring versions'); "
                "its numbers and these differ where a changed rule applies"
            )
        )
    return lines


def headline(result: RunResult, source: Path) -> str:
    """One line naming what was scored: benchmark, episodes, exclusions and radii."""
    run = result.metrics
    if run is None:
        return f"{source}: nothing scored"
    radii = ", ".join(f"{radius:g} m" for radius in run.radii) or "checker verdict"
    return (
        f"{source}: {run.benchmark}, {len(run.episodes)} episode(s) scored, "
        f"{len(run.excluded)} excluded; success radii: {radii}"
    )


def write_run(
    run_dir: Path,
    result: RunResult,
    *,
    bag_bytes: Mapping[str, int] | None = None,
    transcripts_dir: Path | None = None,
    suite: Path | None = None,
    record_suite: bool = True,
    maps_drawn: bool = False,
    bag_digests: Mapping[str, Mapping[str, Any]] | None = None,
) -> None:
    """Write every file of a run into ``run_dir`` in one pass, what matters most first, so
    that a full disk or a crash takes the pictures, never the records: ``run_status.json``
    (always) and, when anything was scored, ``metrics.json``, each written whole or not at
    all; then ``episodes.csv``, ``trajectories.jsonl`` and the run notes (always); last the
    plots, a top-down map per episode, a contact sheet of the failures, ``report.md`` (with
    the benchmark's own sections, the model usage and the recording's) and ``report.html``
    (the same, every picture embedded).

    Args:
        run_dir: created if missing.
        result: the scored run.
        bag_bytes: serialized bytes the bag holds per episode id (``BETWEEN_EPISODES`` for the
            rest), listed in the report; None when no bag was recorded.
        transcripts_dir: the run's model transcripts, whose usage (tokens, latency, cost,
            refused replies, repairs, fallbacks) goes into the report and under
            ``metrics.json``'s ``"run"``; None, missing or empty: no model agent ran.
        suite: the suite the episodes came from, for the maps' reference paths and scene
            overviews, and recorded under ``metrics.json``'s ``"run"`` where the record
            itself names none (a robot's bag) and ``record_suite`` holds; None: maps of
            the paths alone.
        record_suite: record ``suite`` when the events name none. The live evaluator passes
            False: a bag replayed without that suite must give the same ``metrics.json``.
        maps_drawn: the episodes' maps are already in ``run_dir/maps`` (a sharded run's
            workers drew them): the report names the folder rather than every map, and its
            contact sheet shows the first ``CONTACT_SHEET_MAX`` failures, so that a run of
            any size is reported in seconds.
        bag_digests: the bag's files (``bags.integrity.bag_digests``), recorded in
            ``run_status.json`` so that ``evaluate-bag`` can tell a bag changed since.

    Raises:
        ConfigError: an unreadable transcript.
        OSError: a file could not be written (the ones before it are whole).
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    metrics, protocol = result.metrics, result.protocol
    notes = list(result.warnings)
    status = result.status()
    if bag_digests:
        status["bag"] = {name: dict(digest) for name, digest in sorted(bag_digests.items())}
    write_atomic(run_dir / STATUS_JSON, json.dumps(status, indent=2, sort_keys=True) + "\n")
    if metrics is None or protocol is None:
        _write_notes(run_dir, notes, result)
        return
    context: dict[str, Any] = {}
    if result.agents:
        context["agents"] = [agent.to_dict() for agent in result.agents]
    if result.nodes:
        context.update(platform_summary(result.nodes))
    suites = list(result.suites) or (_suite_of(suite, notes) if record_suite else [])
    if suites:
        context["suites"] = suites
    usage = (
        model_usage(transcripts_dir, [trace.episode_id for trace in result.traces])
        if transcripts_dir is not None
        else None
    )
    if usage:
        context["model_usage"] = usage
    scoring = result.scoring
    assert scoring is not None
    write_metrics_json(metrics, run_dir / METRICS_JSON, context, scoring.to_dict())
    write_episodes_csv(metrics, run_dir / EPISODES_CSV)
    write_trajectory_log(run_dir / TRAJECTORIES_JSONL, result.traces, result.excluded)
    scenery = None if maps_drawn else _scenery(suite, notes)
    _write_notes(run_dir, notes, result)
    # The pictures and the report that shows them, last.
    images = write_plots(metrics, protocol, run_dir, result.traces, label=run_dir.name)
    sections = [_accounting_section(result)]
    sections += [_agents_section(result.agents)] if result.agents else []
    sections += [_nodes_section(result.nodes)] if result.nodes else []
    sections += protocol.report_sections(metrics)
    if usage:
        sections.append(usage_section(usage))
    sections.append(
        _drawn_maps_section(run_dir, result)
        if maps_drawn
        else _maps_section(run_dir, result, scenery)
    )
    if bag_bytes:
        sections.append(_bag_section(bag_bytes))
    report = render_report_md(
        metrics,
        protocol,
        images=images,
        sections=sections,
        notices=result.warnings,
        run_name=run_dir.name,
        scoring=_scoring_text(scoring, suites),
    )
    (run_dir / REPORT_MD).write_text(report, encoding="utf-8")
    title = f"Run report: {protocol.title} ({run_dir.name})"
    (run_dir / REPORT_HTML).write_text(render_report_html(report, run_dir, title), encoding="utf-8")


def _write_notes(run_dir: Path, notes: Sequence[str], result: RunResult) -> None:
    shown = list(notes) or [f"the run is complete: {result.accounting}"]
    (run_dir / NOTES_FILE).write_text("".join(f"- {note}\n" for note in shown), encoding="utf-8")


@dataclass(frozen=True)
class RunStatus:
    """What ``run_status.json`` says of a run (``RunResult.status``), as ``aerialdojo rerun``
    reads it.

    Attributes:
        complete: every selected episode was scored.
        selected: the selection; empty where the record named none.
        scored: the scored episodes.
        reruns: the rerun directories (beside the run's) whose bags its accounting takes in.
        document: the whole file.
    """

    complete: bool
    selected: tuple[str, ...]
    scored: frozenset[str]
    reruns: tuple[str, ...]
    document: dict[str, Any]


def read_run_status(path: Path) -> RunStatus:
    """Read a run's ``run_status.json``.

    Raises:
        ConfigError: unreadable, or a field missing or of the wrong type (named).
    """
    try:
        document = load_json(path, RECORD)
    except DocumentError as error:
        raise ConfigError(f"{error}: not a readable run status") from None

    def texts(name: str) -> tuple[str, ...]:
        value = document.get(name, [])
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise ConfigError(f"{path}: {name}: expected a list of episode ids")
        return tuple(value)

    if not isinstance(document, dict):
        raise ConfigError(f"{path}: expected a run status object, got {type(document).__name__}")
    if not isinstance(document.get("complete"), bool):
        raise ConfigError(f"{path}: complete: expected true or false")
    reruns = texts("reruns")
    bad = next((rerun for rerun in reruns if run_id_problem(rerun)), None)
    if bad is not None:
        raise ConfigError(f"{path}: reruns: {bad!r} {run_id_problem(bad)}")
    return RunStatus(
        complete=document["complete"],
        selected=texts("selected"),
        scored=frozenset(texts("scored")),
        reruns=reruns,
        document=document,
    )


def update_run_status(run_dir: Path, result: RunResult, reruns: Sequence[str]) -> None:
    """Make ``run_dir``'s ``run_status.json`` the accounting of the run with its reruns
    (``result``, scored from all their bags), naming the reruns; what it recorded of its own
    bag is kept. A later ``aerialdojo rerun`` then runs only what is still missing, and none
    once the run is complete.

    Raises:
        ConfigError: the run's status is unreadable.
        OSError: it cannot be written (the old one is left whole).
    """
    path = run_dir / STATUS_JSON
    before = read_run_status(path).document
    status = result.status() | {"reruns": list(reruns)}
    if "bag" in before:
        status["bag"] = before["bag"]
    write_atomic(path, json.dumps(status, indent=2, sort_keys=True) + "\n")


def _scoring_text(scoring: ScoringRecord, suites: Sequence[Mapping[str, str]]) -> str:
    """The report's "Scoring" line: version, settings digest and the suite(s)' digests."""
    named = ", ".join(f"{s['name']} (sha256 {s['sha256'][:12]})" for s in suites)
    return f"{scoring.text()}; suite: {named or 'not recorded'}"


def _accounting_section(result: RunResult) -> str:
    rows = "".join(
        f"| {entry.episode_id} | excluded (attempt {entry.attempt}"
        f"{', operator/safety intervention' if entry.intervention else ''}): {entry.reason} |\n"
        for entry in result.excluded
    )
    rows += "".join(f"| {episode_id} | not started |\n" for episode_id in result.not_started)
    table = "| Episode | Outcome |\n| --- | --- |\n" + rows if rows else ""
    return f"## Episodes\n\n{result.accounting}.\n\n{table}"


def _suite_of(suite: Path | None, notes: list[str]) -> list[dict[str, str]]:
    """The identity of the suite file a run was scored against, if one was given."""
    if suite is None:
        return []
    try:
        return [suite_identity(resolve_suite(suite))]
    except AerialDojoError as error:
        notes.append(f"the suite is not recorded: {error}")
        return []


def _scenery(suite: Path | None, notes: list[str]) -> SceneryLookup | None:
    if suite is None:
        return None
    try:
        return suite_scenery(suite)
    except AerialDojoError as error:
        problems = getattr(error, "problems", None) or [str(error)]
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        notes.append(f"maps drawn without reference paths or scenes: {problems[0]}{more}")
        return None


def success_key(run: RunMetrics) -> str:
    """The per-episode value that says whether an episode succeeded: SR at the primary
    radius, or the checker's verdict where success is not a radius (AGOS-Bench)."""
    return radius_key("sr", run.radii[0]) if run.radii else "sr"


def _maps_section(run_dir: Path, result: RunResult, scenery: SceneryLookup | None) -> str:
    metrics = result.metrics
    assert metrics is not None
    scores = {score.episode_id: score for score in metrics.episodes}
    traces = sorted(result.traces, key=lambda trace: trace.episode_id)
    maps = write_episode_maps(run_dir, traces, scores, scenery)
    key = success_key(metrics)
    failed = [
        name
        for trace, name in zip(traces, maps, strict=True)
        if scores[trace.episode_id].values.get(key) != 1.0
    ]
    parts = ["## Trajectory maps", _failures_part(run_dir, failed, key)]
    parts.append(
        "Each episode from above: start (triangle), target (star) and its success radius, "
        "reference path (dashed), executed path coloured by time, the Stop (square) or "
        "collision (cross); for AGOS-Bench the candidate regions and the UGV's route.\n\n"
        + "\n".join(
            f"![map: {trace.episode_id}]({name})" for trace, name in zip(traces, maps, strict=True)
        )
    )
    return "\n\n".join(parts)


#: Failures on the contact sheet of a run whose maps were drawn beforehand.
CONTACT_SHEET_MAX = 48


def _drawn_maps_section(run_dir: Path, result: RunResult) -> str:
    metrics = result.metrics
    assert metrics is not None
    key = success_key(metrics)
    failed = [
        map_file(score.episode_id)
        for score in metrics.episodes
        if score.values.get(key) != 1.0 and (run_dir / map_file(score.episode_id)).is_file()
    ]
    parts = ["## Trajectory maps", _failures_part(run_dir, failed, key, CONTACT_SHEET_MAX)]
    parts.append(
        f"Each episode from above, as its worker drew it: `{MAPS_DIR}/<episode id>.png` "
        "(start, target and its success radius, reference path, executed path, the Stop or "
        "collision)."
    )
    return "\n\n".join(parts)


def _failures_part(run_dir: Path, failed: list[str], key: str, limit: int | None = None) -> str:
    """The contact sheet of the failed episodes' maps (the first ``limit`` of them), or that
    none failed."""
    if not failed:
        return "Every scored episode succeeded."
    shown = failed[:limit]
    write_contact_sheet(run_dir, shown, run_dir / FAILURES_PNG)
    count = (
        f"The {len(failed)}"
        if len(shown) == len(failed)
        else f"The first {len(shown)} of {len(failed)}"
    )
    return (
        f"{count} failed episode(s) at a glance (not successful by {key}):\n\n"
        f"![failures]({FAILURES_PNG})"
    )


def _agents_section(agents: Sequence[AgentRecord]) -> str:
    rows = "".join(
        f"| {agent.agent} | {agent.policy} | {'yes' if agent.privileged else 'no'} | "
        f"{agent.description} |\n"
        for agent in agents
    )
    warning = (
        "\n**Privileged run**: a policy read ground truth. The numbers test the harness, not "
        "an agent.\n"
        if any(agent.privileged for agent in agents)
        else ""
    )
    return (
        "## Agents\n\n| Agent | Policy | Reads ground truth | Description |\n"
        "| --- | --- | --- | --- |\n" + rows + warning
    )


def _nodes_section(nodes: Sequence[NodeRecord]) -> str:
    rows = "".join(f"| {n.node} | {n.ros_distro} | {n.python_version} |\n" for n in nodes)
    return "## Nodes\n\n| Node | ROS 2 | Python |\n| --- | --- | --- |\n" + rows


def _bag_section(bag_bytes: Mapping[str, int]) -> str:
    rows = "".join(
        f"| {episode} | {size / 1e6:.2f} |\n" for episode, size in sorted(bag_bytes.items())
    )
    total = sum(bag_bytes.values()) / 1e6
    return (
        "## Recording\n\n"
        f"The bag (`bag/`) holds {total:.2f} MB of messages.\n\n"
        "| Episode | Bag size (MB) |\n| --- | --- |\n" + rows
    )
