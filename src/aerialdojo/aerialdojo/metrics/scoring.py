"""One entry point that scores and aggregates episodes of any benchmark with the same code:
each benchmark's formulas, radii and aggregation rule come from its protocol
(``aerialdojo.protocols``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics, aggregate
from aerialdojo.metrics.scores import EpisodeScore, MetricSpec
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import protocol


def default_radii(benchmark: str) -> tuple[float, ...]:
    """The success radii a benchmark reports unless told otherwise (none for AGOS).

    Raises:
        MetricsError: unknown benchmark.
    """
    return protocol(benchmark).default_radii


def metric_specs(benchmark: str, radii: Sequence[float] | None = None) -> tuple[MetricSpec, ...]:
    """The metrics of ``benchmark`` at ``radii`` (its defaults when None), in report order.

    Raises:
        MetricsError: unknown benchmark or a non-positive radius.
    """
    spec = protocol(benchmark)
    return spec.metric_specs(spec.radii(radii))


def score_trace(trace: EpisodeTrace, radii: Sequence[float] | None = None) -> EpisodeScore:
    """Score one episode with its benchmark's formulas (radii ignored where success is not a
    distance, as in AGOS).

    Raises:
        MetricsError: a non-positive radius.
    """
    spec = protocol(trace.benchmark)
    return spec.score_episode(trace, spec.radii(radii))


def score_run(
    traces: Iterable[EpisodeTrace],
    radii: Sequence[float] | None = None,
    excluded: Sequence[ExcludedEpisode] = (),
) -> RunMetrics:
    """Score every episode of a run and aggregate them: what the evaluator, the bag reader
    and ``score_jsonl`` all call.

    Args:
        traces: the run's episodes, all of one benchmark, in any order.
        radii: success radii in metres; None for the benchmark's defaults (AerialDojo 3 and
            5 m, CityNav 20 m); ignored for AGOS.
        excluded: infrastructure failures, listed in the result and never scored.

    Raises:
        MetricsError: no episodes, mixed benchmarks, a repeated episode id or a bad radius.
    """
    traces = list(traces)
    if not traces:
        raise MetricsError("no episodes to score")
    benchmarks = sorted({trace.benchmark for trace in traces})
    if len(benchmarks) > 1:
        raise MetricsError(f"one run must hold one benchmark, got {', '.join(benchmarks)}")
    spec = protocol(benchmarks[0])
    chosen = spec.radii(radii)
    return aggregate(
        (spec.score_episode(trace, chosen) for trace in traces),
        spec.metric_specs(chosen),
        rule=spec.aggregation_rule,
        radii=chosen,
        excluded=excluded,
        group_keys=spec.group_keys,
    )
