"""Scoring a run whose traces name their benchmark: the registry finds its protocol, whose
formulas, radii and aggregation rule score the run (``BenchmarkProtocol.score_run``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from aerialdojo.errors import MetricsError
from aerialdojo.metrics.aggregate import ExcludedEpisode, RunMetrics
from aerialdojo.metrics.trace import EpisodeTrace
from aerialdojo.protocols import BenchmarkProtocol, protocol


def run_protocol(traces: Sequence[EpisodeTrace]) -> BenchmarkProtocol:
    """The protocol of the one benchmark a run's traces name.

    Raises:
        MetricsError: no episodes, episodes of several benchmarks, or an unknown benchmark.
    """
    if not traces:
        raise MetricsError("no episodes to score")
    benchmarks = sorted({trace.benchmark for trace in traces})
    if len(benchmarks) > 1:
        raise MetricsError(f"one run must hold one benchmark, got {', '.join(benchmarks)}")
    try:
        return protocol(benchmarks[0])
    except MetricsError as error:
        raise MetricsError(f"episode {traces[0].episode_id!r}: {error}") from error


def score_run(
    traces: Iterable[EpisodeTrace],
    radii: Sequence[float] | None = None,
    excluded: Sequence[ExcludedEpisode] = (),
) -> RunMetrics:
    """Score every episode of a run of any benchmark with its protocol, and aggregate them.

    Args:
        traces: the run's episodes, all of one benchmark, in any order.
        radii: success radii in metres; None for the benchmark's defaults.
        excluded: infrastructure failures, listed in the result and never scored.

    Raises:
        MetricsError: as ``run_protocol`` and ``BenchmarkProtocol.score_run``.
    """
    traces = list(traces)
    return run_protocol(traces).score_run(traces, radii, excluded)
