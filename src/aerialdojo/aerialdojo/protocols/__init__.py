"""Benchmark protocols: each benchmark registers once what every layer needs to know of it.

A ``BenchmarkProtocol`` holds a benchmark's metric definitions, scorer, aggregation rule and
report sections (read by scoring, plots and reports), how its episode events fold into a
trace (read by the evaluator and the bag reader), and, where the task manager can run its
episodes, its suite format, referee and agent-visible task. Code looks benchmarks up by the
name an episode record or suite carries instead of comparing names, so a new benchmark is
one module that calls ``register`` (or an entry point in the ``aerialdojo.protocols``
group) and touches nothing else.

The registry sits above what it registers (``docs/architecture.md``, "Layers"): metrics and
events never look a benchmark up; a protocol hands them what varies (its trace builder,
radii, metric specs) and scores a run itself (``BenchmarkProtocol.score_run``). The
built-in protocols are imported on the first lookup, by module name, not with this package,
so that the interfaces of ``protocols.referee`` and ``protocols.task``, which the benchmarks
implement below the registry, load without them.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aerialdojo.documents import SUITE, DocumentError, load_json
from aerialdojo.errors import ConfigError, MetricsError, TaskFileError
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics, aggregate
from aerialdojo.metrics.scores import radius_key

# Offered here too: what any benchmark's episodes and suites offer (defined with the task).
from aerialdojo.protocols.task import EpisodeLike as EpisodeLike
from aerialdojo.protocols.task import SuiteLike as SuiteLike

if TYPE_CHECKING:
    from aerialdojo.events import TraceBuilderFactory
    from aerialdojo.metrics.scores import EpisodeScore, MetricSpec
    from aerialdojo.metrics.trace import EpisodeTrace
    from aerialdojo.protocols.referee import Referee
    from aerialdojo.protocols.task import TaskDescription

#: Modules of the protocols shipped with aerialdojo, imported on the first lookup.
BUILTIN_PROTOCOLS = ("aerialdojo", "agos", "citynav")
#: Entry-point group through which other packages register benchmarks.
ENTRY_POINT_GROUP = "aerialdojo.protocols"
#: Task manager parameters that change every benchmark's numbers: how many refused steps in
#: a row end an episode as the agent's ``invalid_action``, and how long the agents may stay
#: silent before the episode ends as their ``agent_timeout``.
COMMON_SCORING_SETTINGS = ("refusals_allowed", "agent_timeout_s")


@dataclass(frozen=True, kw_only=True)
class EpisodeRules:
    """How the task manager runs a benchmark's episodes.

    Attributes:
        load_suite: load and fully validate a suite file (``TaskFileError`` lists every
            problem).
        validate_suite: every problem of a suite file; empty when it loads.
        referee: the rules of one episode: ``(episode, suite, settings)`` where settings
            are the task manager's parameters.
        describe_task: the agent-visible task: ``(episode, suite, settings)``.
        ground_truth_record: the STARTED record of an episode scored from a task file
            (``evaluate-bag --task-file``), when the record needs nothing the referee
            computes; None otherwise.
        check_settings: every problem of the task manager's settings for this benchmark
            (combinations the parameter table cannot refuse alone); empty when they hold.
        suite_stats: a suite file's statistics as Markdown and CSV (``aerialdojo tasks
            stats``), laid out like the paper's tables; raises ``TaskFileError`` as
            ``load_suite`` does. None: the benchmark has none.
    """

    load_suite: Callable[[Path], SuiteLike]
    validate_suite: Callable[[Path], list[str]]
    # The episode and suite are the benchmark's own types, which only it reads.
    referee: Callable[[Any, Any, Mapping[str, Any]], Referee]
    describe_task: Callable[[Any, Any, Mapping[str, Any]], TaskDescription]
    ground_truth_record: Callable[[Any], dict[str, Any]] | None = None
    check_settings: Callable[[Mapping[str, Any]], list[str]] | None = None
    suite_stats: Callable[[Path], tuple[str, str]] | None = None


def problems_when_loaded(load: Callable[[Path], object]) -> Callable[[Path], list[str]]:
    """A suite validator for a loader that lists every problem it finds in its
    ``TaskFileError``: the problems of loading, none when the file loads."""

    def problems(path: Path) -> list[str]:
        try:
            load(path)
        except TaskFileError as error:
            return list(error.problems)
        return []

    return problems


def _no_sections(_: RunMetrics) -> list[str]:
    return []


@dataclass(frozen=True, kw_only=True)
class BenchmarkProtocol:
    """Everything the stack needs to know about one benchmark.

    Attributes:
        name: the name episodes, records and suites carry, e.g. ``"aerialdojo"``.
        title: the paper's short name, e.g. ``"AerialDojo-200K"`` (``docs/references.md``).
        default_radii: success radii scored unless told otherwise, primary first; empty
            where success is a checker's verdict, not a distance (AGOS).
        aggregation_rule: headline aggregation (``metrics.aggregate.RULES``).
        metric_specs: the metrics at the given radii, in report order.
        score_episode: one episode's values at the given radii.
        trace_builder: folds one episode's events into its trace: called with the STARTED
            record and the start event's position.
        air_ground: traces carry the air-ground record (``EpisodeTrace.agos``).
        radar_chart: reports draw the per-family radar chart (AerialDojo-200K, Figure 5).
        report_sections: Markdown sections the run report adds for this benchmark.
        paper_table: several runs' ``metrics.json`` (condition name -> document) laid out
            like the paper's results table, for ``aerialdojo compare NAME=RUN ...``; None
            where the benchmark has none.
        episodes: how to run its episodes; None where the task manager cannot yet.
        group_keys: the episode conditions (``EpisodeTrace.conditions``) whose value
            combinations the paper reports apart, in its order, e.g. ID/OOD and goal type.
        condition_labels: how reports name condition values, name -> value -> label
            (e.g. ``goal``: ``semantic`` -> ``SemanticOGS``); values not listed print as is.
        condition_titles: how reports name the conditions themselves (e.g.
            ``distribution`` -> ``split family``); names not listed print as is.
        scoring_version: the version of the benchmark's scoring rules: raised whenever a
            rule change moves a number a run reports (the benchmark's protocol document,
            "Scoring versions", says which rule moved which number). Results are
            comparable only at one version (``aerialdojo compare``).
        scoring_settings: the task manager parameters of this benchmark that change its
            numbers (AerialDojo: what the agent observes; AGOS: mode, ablation, budgets);
            recorded with every run (``COMMON_SCORING_SETTINGS`` too) and digested in
            ``metrics.json``.
        headline_by_setting: the paper reports each setting apart (AerialDojo-200K,
            Tables 4-5): the headline is per setting, and no figure pools settings
            (``metrics.aggregate.aggregate``).
        observes_view: ``(view, action)`` -> whether an agent's observation right after
            ``action`` ("" after a reset) holds camera ``view``, for benchmarks whose rigs
            publish some views only after some actions (AGOS: the UGV's ring after
            STOP_OBSERVE). None: every view of a rig after every action.
    """

    name: str
    title: str
    default_radii: tuple[float, ...]
    aggregation_rule: str
    metric_specs: Callable[[tuple[float, ...]], tuple[MetricSpec, ...]]
    score_episode: Callable[[EpisodeTrace, tuple[float, ...]], EpisodeScore]
    trace_builder: TraceBuilderFactory
    air_ground: bool = False
    radar_chart: bool = False
    report_sections: Callable[[RunMetrics], list[str]] = field(default=_no_sections)
    paper_table: Callable[[Mapping[str, Mapping[str, Any]]], str] | None = None
    episodes: EpisodeRules | None = None
    group_keys: tuple[str, ...] = ()
    condition_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    condition_titles: Mapping[str, str] = field(default_factory=dict)
    scoring_version: int = 1
    scoring_settings: tuple[str, ...] = ()
    observes_view: Callable[[str, str], bool] | None = None
    headline_by_setting: bool = False

    def settings_of(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """The parameters of ``parameters`` (the task manager's) that change this
        benchmark's numbers, by name: ``COMMON_SCORING_SETTINGS`` and
        ``scoring_settings``, where given."""
        names = (*COMMON_SCORING_SETTINGS, *self.scoring_settings)
        return {name: parameters[name] for name in names if name in parameters}

    def condition_label(self, name: str, value: str) -> str:
        """How reports print value ``value`` of condition ``name``."""
        return self.condition_labels.get(name, {}).get(value, value)

    @property
    def uses_radii(self) -> bool:
        """Success depends on a radius around the target (so radii can be chosen)."""
        return bool(self.default_radii)

    def radii(self, chosen: Sequence[float] | None = None) -> tuple[float, ...]:
        """The radii to score at: ``chosen``, or the defaults when None; always the empty
        tuple for a benchmark that does not use radii.

        Raises:
            MetricsError: an empty list, a radius that is not finite and > 0, or two
                radii that print the same.
        """
        if not self.uses_radii or chosen is None:
            return self.default_radii
        radii = tuple(float(radius) for radius in chosen)
        bad = [radius for radius in radii if not 0.0 < radius < float("inf")]
        if not radii or bad:
            raise MetricsError(
                f"success radii must be a non-empty list of values > 0, got {chosen}"
            )
        keys = [radius_key("sr", radius) for radius in radii]
        if len(set(keys)) != len(keys):
            raise MetricsError(f"success radii {chosen} repeat a radius (as printed: {keys})")
        return radii

    def check_trace(self, trace: EpisodeTrace) -> None:
        """Raise unless ``trace`` is an episode of this benchmark as the metrics need it.

        Raises:
            MetricsError: another benchmark's episode, or an air-ground record missing
                where the benchmark is air-ground or present where it is not.
        """
        where = f"episode {trace.episode_id!r}"
        if trace.benchmark != self.name:
            raise MetricsError(f"{where}: an episode of {trace.benchmark}, not {self.name}")
        if (trace.agos is not None) != self.air_ground:
            raise MetricsError(
                f"{where}: the agos record is required for air-ground benchmarks and only there"
            )

    def score_run(
        self,
        traces: Iterable[EpisodeTrace],
        radii: Sequence[float] | None = None,
        excluded: Sequence[ExcludedEpisode] = (),
    ) -> RunMetrics:
        """Score every episode of a run of this benchmark and aggregate them: what the
        evaluator, the bag reader, trajectory logs and sharded runs all call.

        Args:
            traces: the run's episodes, in any order.
            radii: success radii in metres; None for the defaults (AerialDojo 3 and 5 m,
                CityNav 20 m); ignored where success is not a distance (AGOS).
            excluded: infrastructure failures, listed in the result and never scored.

        Raises:
            MetricsError: no episodes, an episode ``check_trace`` refuses, a repeated
                episode id or a bad radius.
        """
        traces = list(traces)
        if not traces:
            raise MetricsError("no episodes to score")
        for trace in traces:
            self.check_trace(trace)
        chosen = self.radii(radii)
        return aggregate(
            (self.score_episode(trace, chosen) for trace in traces),
            self.metric_specs(chosen),
            rule=self.aggregation_rule,
            radii=chosen,
            excluded=excluded,
            group_keys=self.group_keys,
            headline_by_setting=self.headline_by_setting,
        )


_registry: dict[str, BenchmarkProtocol] = {}
_loaded = False


def register(spec: BenchmarkProtocol) -> BenchmarkProtocol:
    """Make ``spec`` known under its name; returns it.

    Raises:
        ConfigError: another protocol already has that name.
    """
    known = _registry.get(spec.name)
    if known is not None and known is not spec:
        raise ConfigError(f"benchmark {spec.name!r} is registered twice")
    _registry[spec.name] = spec
    return spec


def _load() -> None:
    global _loaded  # noqa: PLW0603 - the registry fills itself once, on first use
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_PROTOCOLS:
        importlib.import_module(f"{__name__}.{module}")
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry.load()
        if isinstance(loaded, BenchmarkProtocol):
            register(loaded)


def protocol(name: str) -> BenchmarkProtocol:
    """The protocol of benchmark ``name``.

    Raises:
        MetricsError: no benchmark of that name; the message lists the known ones.
    """
    _load()
    found = _registry.get(name)
    if found is None:
        raise MetricsError(f"benchmark {name!r} is not one of {', '.join(sorted(_registry))}")
    return found


def trace_builder(name: str) -> TraceBuilderFactory:
    """How episodes of benchmark ``name`` fold into traces: what assemblers of episode
    events are handed (``events.EpisodeAssembler``).

    Raises:
        MetricsError: no benchmark of that name.
    """
    return protocol(name).trace_builder


def protocol_names() -> list[str]:
    """Every registered benchmark name, sorted."""
    _load()
    return sorted(_registry)


def suite_protocol(path: Path) -> BenchmarkProtocol:
    """The protocol of the benchmark a suite file declares (its top-level ``benchmark``).

    Raises:
        ConfigError: unreadable, not a JSON object, no or an unknown ``benchmark``, or a
            benchmark whose episodes the task manager cannot run.
    """
    from aerialdojo.tasks.records import check_suite_file  # noqa: PLC0415 - heavy, not at import

    check_suite_file(path)  # size and shape before the file is read whole
    try:
        document = load_json(path, SUITE)
    except DocumentError as error:
        raise ConfigError(f"{error} (a suite is a JSON file)") from None
    name = document.get("benchmark") if isinstance(document, dict) else None
    if not isinstance(name, str):
        raise ConfigError(f"{path}: benchmark: missing; a suite names its benchmark")
    try:
        found = protocol(name)
    except MetricsError as error:
        raise ConfigError(f"{path}: benchmark: {error}") from error
    if found.episodes is None:
        raise ConfigError(f"{path}: benchmark: {name} episodes cannot be run yet")
    return found


def load_suite(path: Path) -> tuple[BenchmarkProtocol, SuiteLike]:
    """Load any benchmark's suite file with its own loader.

    Raises:
        ConfigError: as ``suite_protocol``.
        TaskFileError: the suite is invalid; every problem is listed.
    """
    found = suite_protocol(path)
    assert found.episodes is not None  # suite_protocol refuses the others
    return found, found.episodes.load_suite(path)
