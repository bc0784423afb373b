"""One entry point that scores and aggregates episodes of any benchmark with the same code."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from aerialdojo.errors import MetricsError
from aerialdojo.metrics import aerialdojo, agos, citynav
from aerialdojo.metrics.aggregate import (
    RULE_EPISODE_POOLED,
    RULE_MAP_FAMILY_EQUAL,
    ExcludedEpisode,
    RunMetrics,
    aggregate,
)
from aerialdojo.metrics.scores import EpisodeScore, MetricSpec, radius_key
from aerialdojo.metrics.trace import EpisodeTrace

#: Headline aggregation per benchmark: AerialDojo averages maps then families equally
#: (AerialDojo-200K, section 4.1); AGOS totals pool episodes (AGOS-Bench, Table 4: its GVA, NE and
#: CErr totals are support-weighted); CityNav reports plain episode means (CityNav, section 5.1).
AGGREGATION_RULES = {
    "aerialdojo": RULE_MAP_FAMILY_EQUAL,
    "agos": RULE_EPISODE_POOLED,
    "citynav": RULE_EPISODE_POOLED,
}


def default_radii(benchmark: str) -> tuple[float, ...]:
    """The success radii a benchmark reports unless told otherwise (none for AGOS).

    Raises:
        MetricsError: unknown benchmark.
    """
    if benchmark == "aerialdojo":
        return aerialdojo.DEFAULT_RADII
    if benchmark == "citynav":
        return citynav.DEFAULT_RADII
    if benchmark == "agos":
        return ()
    raise MetricsError(f"unknown benchmark {benchmark!r}")


def _radii_for(benchmark: str, radii: Sequence[float] | None) -> tuple[float, ...]:
    if benchmark == "agos" or radii is None:
        return default_radii(benchmark)
    chosen = tuple(float(radius) for radius in radii)
    bad = [radius for radius in chosen if not 0.0 < radius < math.inf]
    if not chosen or bad:
        raise MetricsError(f"success radii must be a non-empty list of values > 0, got {radii}")
    keys = [radius_key("sr", radius) for radius in chosen]
    if len(set(keys)) != len(keys):
        raise MetricsError(f"success radii {radii} repeat a radius (as printed: {keys})")
    return chosen


def metric_specs(benchmark: str, radii: Sequence[float] | None = None) -> tuple[MetricSpec, ...]:
    """The metrics of ``benchmark`` at ``radii`` (its defaults when None), in report order.

    Raises:
        MetricsError: unknown benchmark or a non-positive radius.
    """
    chosen = _radii_for(benchmark, radii)
    if benchmark == "aerialdojo":
        return aerialdojo.metric_specs(chosen)
    if benchmark == "citynav":
        return citynav.metric_specs(chosen)
    return agos.METRIC_SPECS


def score_trace(trace: EpisodeTrace, radii: Sequence[float] | None = None) -> EpisodeScore:
    """Score one episode with its benchmark's formulas (radii ignored for AGOS).

    Raises:
        MetricsError: a non-positive radius.
    """
    chosen = _radii_for(trace.benchmark, radii)
    if trace.benchmark == "aerialdojo":
        return aerialdojo.score_episode(trace, chosen)
    if trace.benchmark == "citynav":
        return citynav.score_episode(trace, chosen)
    return agos.score_episode(trace)


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
    benchmark = benchmarks[0]
    chosen = _radii_for(benchmark, radii)
    return aggregate(
        (score_trace(trace, chosen) for trace in traces),
        metric_specs(benchmark, chosen),
        rule=AGGREGATION_RULES[benchmark],
        radii=chosen,
        excluded=excluded,
    )
